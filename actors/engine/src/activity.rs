//! Whether an engine is answering. Preparation that no answer waits for
//! (the state a daemon's first followed commit advances from, the
//! embedder's counts) starts in a quiet moment rather than beside the
//! first questions. On 600k lines it takes 360-440 ms of a core and fresh
//! memory; run at the daemon's start, it made the first `search` answer
//! 93-286 ms against 52-65 ms after this change, and the next five 15-39
//! ms against 6-20 (`serve-bench`'s driver, alternated). An agent pauses
//! between questions (its model thinks), so the moment comes at once; a
//! client asking back to back gets it after [`LONGEST_WAIT`], and a commit
//! followed before then loads the state itself, as it did before the
//! preparation existed (600k lines: visible in 413-421 ms against 227).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long no answer must have been asked for before preparation starts.
pub const QUIET: Duration = Duration::from_millis(250);

/// Preparation starts after this long even when answers never pause: a
/// commit followed before it would do the work itself, at the cost it had
/// before the preparation existed.
pub const LONGEST_WAIT: Duration = Duration::from_secs(2);

/// How often a waiter looks again.
const POLL: Duration = Duration::from_millis(50);

/// Answers in flight and when the last one ended.
#[derive(Debug)]
pub struct Activity {
    epoch: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `epoch` to the end of the last answer; 0 before
    /// any (the engine's start counts as one: a daemon's first question
    /// comes right after it starts).
    last_end_ms: AtomicU64,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity {
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_end_ms: AtomicU64::new(0),
        }
    }
}

/// An answer being made; it ends when dropped.
#[must_use]
pub struct Answering<'a>(&'a Activity);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let now = self.0.epoch.elapsed().as_millis() as u64;
        self.0.last_end_ms.fetch_max(now, Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Release);
    }
}

impl Activity {
    /// Marks an answer in flight until the value is dropped.
    pub fn answering(&self) -> Answering<'_> {
        self.in_flight.fetch_add(1, Ordering::Acquire);
        Answering(self)
    }

    /// Whether no answer is in flight and none ended within `quiet`.
    pub fn is_quiet(&self, quiet: Duration) -> bool {
        let now = self.epoch.elapsed().as_millis() as u64;
        quiet_at(
            self.in_flight.load(Ordering::Acquire),
            self.last_end_ms.load(Ordering::Relaxed),
            now,
            quiet,
        )
    }

    /// Waits until [`Activity::is_quiet`] with [`QUIET`], or `longest`.
    pub async fn until_quiet(&self, longest: Duration) {
        let start = Instant::now();
        while !self.is_quiet(QUIET) && start.elapsed() < longest {
            tokio::time::sleep(POLL).await;
        }
    }
}

/// The rule of [`Activity::is_quiet`], on plain numbers: no answer in
/// flight, and the last one (or the start, at 0) ended `quiet` or more
/// before `now_ms`.
fn quiet_at(in_flight: usize, last_end_ms: u64, now_ms: u64, quiet: Duration) -> bool {
    in_flight == 0 && now_ms.saturating_sub(last_end_ms) >= quiet.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_means_nothing_in_flight_and_nothing_just_ended() {
        let q = Duration::from_millis(250);
        assert!(!quiet_at(0, 0, 5, q), "just started");
        assert!(quiet_at(0, 0, 300, q), "no answer since the start");
        assert!(!quiet_at(1, 0, 5_000, q), "one in flight");
        assert!(!quiet_at(0, 1_000, 1_100, q), "one ended 100 ms ago");
        assert!(quiet_at(0, 1_000, 1_250, q));
    }

    #[test]
    fn an_answer_is_in_flight_until_dropped_and_then_recent() {
        let a = Activity::default();
        assert!(!a.is_quiet(Duration::from_secs(3600)), "just started");
        assert!(a.is_quiet(Duration::ZERO));
        let answering = a.answering();
        assert!(!a.is_quiet(Duration::ZERO));
        drop(answering);
        assert!(a.is_quiet(Duration::ZERO));
        assert!(!a.is_quiet(Duration::from_secs(3600)));
    }

    #[tokio::test]
    async fn a_waiter_goes_on_when_answers_pause_or_after_the_longest_wait() {
        let a = Activity::default();
        let start = Instant::now();
        a.until_quiet(Duration::from_secs(60)).await;
        assert!(start.elapsed() >= QUIET, "not at the start");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "quiet after the start"
        );
        let _busy = a.answering();
        let start = Instant::now();
        a.until_quiet(Duration::from_millis(120)).await;
        assert!(
            start.elapsed() >= Duration::from_millis(120),
            "waited while busy"
        );
    }
}
