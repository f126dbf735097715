//! Freeing large values off the path of the work that made them.

/// Drops `value` on a short-lived thread.
///
/// A first index holds every symbol of the repository several times over
/// (state, deltas, event); freeing those one allocation at a time took about
/// a tenth of a second on 450k lines, all of it on the writer's path before
/// the command could answer. Callers use it for values that size; a thread
/// costs more than freeing a small one. If no thread can be started, the
/// value is dropped on this one.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    // Dropped by the closure, or with it if the thread could not start.
    let _ = std::thread::Builder::new()
        .name("sno-teardown".into())
        .spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::drop_in_background;
    use std::sync::mpsc;

    struct Tell(mpsc::Sender<std::thread::ThreadId>);
    impl Drop for Tell {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    #[test]
    fn the_value_is_dropped_on_another_thread() {
        let (tx, rx) = mpsc::channel();
        drop_in_background(Tell(tx));
        let on = rx.recv().expect("the value is dropped");
        assert_ne!(on, std::thread::current().id());
    }
}
