//! Freeing large values off the path of the work that made them.

/// How many items (files, deltas) make a value worth a thread to free.
const LARGE: usize = 256;

/// Drops `value`, which holds `items` files or deltas: on a short-lived
/// thread when it is large, here otherwise.
///
/// A first index holds every symbol of the repository several times over
/// (state, deltas, event); freeing those one allocation at a time took about
/// a tenth of a second on 450k lines, all of it on the writer's path before
/// the command could answer. A small update's values free faster than a
/// thread starts. If no thread can be started, the value is dropped here.
pub fn drop_large<T: Send + 'static>(value: T, items: usize) {
    if items < LARGE {
        return drop(value);
    }
    // Dropped by the closure, or with it if the thread could not start.
    let _ = std::thread::Builder::new()
        .name("sno-teardown".into())
        .spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::{drop_large, LARGE};
    use std::sync::mpsc;

    struct Tell(mpsc::Sender<std::thread::ThreadId>);
    impl Drop for Tell {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    #[test]
    fn a_large_value_is_dropped_on_another_thread_a_small_one_here() {
        let (tx, rx) = mpsc::channel();
        drop_large(Tell(tx.clone()), LARGE);
        let on = rx.recv().expect("the value is dropped");
        assert_ne!(on, std::thread::current().id());
        drop_large(Tell(tx), LARGE - 1);
        let on = rx.recv().expect("the value is dropped");
        assert_eq!(on, std::thread::current().id());
    }
}
