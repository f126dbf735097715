//! Work ahead of need (a daemon loading what its first run advances
//! from) on a thread at the lowest scheduling priority, so the answers
//! given beside it do not wait for it.
#![allow(unsafe_code)] // setpriority on the thread's own id

/// Runs `f` on a thread of its own at the lowest scheduling priority
/// (nice 19 on Linux): work ahead of need yields to the answers beside it.
///
/// Called from an actor, the runtime's worker it runs on hands its other
/// tasks on first (`block_in_place`): two workers waiting on two such
/// loads held a daemon's first answer for 0.4 s.
pub(crate) fn background<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| on_a_low_thread(f))
        }
        _ => on_a_low_thread(f),
    }
}

fn on_a_low_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                #[cfg(target_os = "linux")]
                // SAFETY: setpriority on this thread's own id, with a
                // valid nice value; failure only leaves the priority as it
                // was.
                unsafe {
                    let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                    libc::setpriority(libc::PRIO_PROCESS, tid, 19);
                }
                f()
            })
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_work_runs_at_the_lowest_priority_and_its_result_comes_back() {
        // SAFETY: reading the calling thread's own priority.
        let own = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let before = own();
        let (value, nice) = super::background(|| {
            // SAFETY: reading this thread's own priority.
            let nice = unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            };
            (6 * 7, nice)
        });
        assert_eq!(value, 42);
        if cfg!(target_os = "linux") {
            assert_eq!(nice, 19);
        }
        // The caller's own priority is untouched (whatever it was).
        assert_eq!(own(), before);
    }
}
