//! The watcher: follows the repository's git state and says when the commit
//! HEAD points to is not the indexed one. It sends facts and never writes:
//! whoever receives a [`RepoChanged`] decides to index (the daemon and
//! `sno watch` run the indexer on it).
//!
//! sno indexes commits, not the work tree, so what matters is where HEAD
//! points: a commit, a checkout, a reset, a rebase, a pull. Two ways notice
//! it. File events (notify) on the files git rewrites when HEAD or a ref
//! moves (`HEAD`, `packed-refs`, `refs/`), debounced so that a rebase's burst
//! of ref updates is one change. And a slow poll through gix, for file
//! systems where events never arrive (network mounts, a full inotify watch
//! table), which also retries a change the receiver could not index yet.
//!
//! The pure parts ([`classify`], [`Debounce`], [`Follow`]) are apart from the
//! actor so they are tested without a runtime.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use sno_journal::model::CommitId;
use tokio::sync::mpsc::UnboundedSender;

use sno_index::git::{GitError, GitRepo};

/// Where HEAD points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitHead {
    /// `None` in a repository with no commit yet.
    pub commit: Option<CommitId>,
    /// `None` when HEAD is detached.
    pub branch: Option<String>,
}

/// HEAD of the repository containing `root`, read through gix.
pub fn observe(root: &Path) -> Result<GitHead, GitError> {
    let repo = GitRepo::open(root)?;
    let commit = match repo.head() {
        Ok(c) => Some(c),
        Err(GitError::Empty) => None,
        Err(e) => return Err(e),
    };
    Ok(GitHead {
        commit,
        branch: repo.branch()?,
    })
}

/// HEAD moved away from the indexed commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoChanged {
    /// Where HEAD points now.
    pub head: GitHead,
    /// The indexed commit it differs from (`None`: nothing indexed yet).
    pub indexed: Option<CommitId>,
}

/// What a changed path says about the repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// A file git rewrites when HEAD or a ref moves.
    GitState,
    /// Anything else: objects, the index, logs, locks, the work tree, `.sno/`.
    Other,
}

/// Sorts a path reported by a file event. `git_dir` is the repository's git
/// directory (a worktree's own one for a linked worktree) and `common_dir`
/// the one holding the shared refs; both as the events report them
/// (canonical).
pub fn classify(path: &Path, git_dir: &Path, common_dir: &Path) -> PathKind {
    for dir in [git_dir, common_dir] {
        if let Ok(rel) = path.strip_prefix(dir) {
            let mut parts = rel.components();
            let first = parts.next().map(|c| c.as_os_str().to_string_lossy());
            // `HEAD.lock` and `refs/heads/main.lock` are written first and
            // renamed over the real file: the rename's event names the file.
            match first.as_deref() {
                Some("HEAD") | Some("packed-refs") if parts.next().is_none() => {
                    return PathKind::GitState
                }
                Some("refs") if path.extension().is_none_or(|e| e != "lock") => {
                    return PathKind::GitState
                }
                _ => {}
            }
        }
    }
    PathKind::Other
}

/// Waits for a burst of events to go quiet, but not forever: a stream of
/// events that never pauses is acted on after `max_wait`.
#[derive(Clone, Debug)]
pub struct Debounce {
    quiet: Duration,
    max_wait: Duration,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Debounce {
    /// Due `quiet` after the last event, or `max_wait` after the first.
    pub fn new(quiet: Duration, max_wait: Duration) -> Debounce {
        Debounce {
            quiet,
            max_wait,
            first: None,
            last: None,
        }
    }

    /// An event happened at `now`.
    pub fn event(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// Whether events are waiting and the wait is over; if so, forgets them.
    pub fn take_due(&mut self, now: Instant) -> bool {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return false;
        };
        let due =
            now.duration_since(last) >= self.quiet || now.duration_since(first) >= self.max_wait;
        if due {
            self.first = None;
            self.last = None;
        }
        due
    }

    /// How long until [`Debounce::take_due`] can say yes; `None` with no event.
    pub fn next_due(&self, now: Instant) -> Option<Duration> {
        let (first, last) = (self.first?, self.last?);
        let at = (last + self.quiet).min(first + self.max_wait);
        Some(at.saturating_duration_since(now))
    }
}

/// Decides when a change is reported. HEAD that leaves the indexed commit
/// is reported once; the same HEAD again only after a wait that doubles with
/// each report, from `retry` up to [`MAX_RETRY`] (the receiver may be
/// indexing it still, or failing to: another process holding the database,
/// a broken repository). An index moved away from a HEAD that has not moved
/// since the two were last equal (an `sno init --rev X`) is left alone.
#[derive(Clone, Debug)]
pub struct Follow {
    retry: Duration,
    synced: Option<CommitId>,
    sent: Option<Sent>,
    /// The commit of the last change reported: an index moved there was
    /// moved by the follower's run, not by a user.
    asked: Option<CommitId>,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    commit: Option<CommitId>,
    at: Instant,
    wait: Duration,
}

/// The longest wait before a change that is not indexed is reported again.
pub const MAX_RETRY: Duration = Duration::from_secs(300);

impl Follow {
    /// Reports the same change again no sooner than `retry`.
    pub fn new(retry: Duration) -> Follow {
        Follow {
            retry,
            synced: None,
            sent: None,
            asked: None,
        }
    }

    /// Starts as if the index had been in step with HEAD at `head`: a
    /// watcher started after a rollback leaves it alone until HEAD moves.
    pub fn settled_at(mut self, head: Option<CommitId>) -> Follow {
        self.synced = head;
        self
    }

    /// The change to report, if any, given HEAD and the indexed commit.
    pub fn check(
        &mut self,
        head: &GitHead,
        indexed: Option<CommitId>,
        now: Instant,
    ) -> Option<RepoChanged> {
        // An empty repository has nothing to index; a branch switch to the
        // same commit changes no fact.
        if head.commit.is_none() || head.commit == indexed {
            self.synced = head.commit;
            self.sent = None;
            return None;
        }
        // HEAD stayed where the index was in step with it, and the index
        // moved away: left alone when a user moved it (`init --rev`, a
        // rollback), followed when the follower's own run for an earlier
        // HEAD did (HEAD went back while that run was indexing).
        if self.synced.is_some() && self.synced == head.commit && indexed != self.asked {
            return None;
        }
        let wait = match self.sent {
            Some(s) if s.commit == head.commit => {
                if now.duration_since(s.at) < s.wait {
                    return None;
                }
                (s.wait * 2).min(MAX_RETRY)
            }
            _ => self.retry,
        };
        self.sent = Some(Sent {
            commit: head.commit,
            at: now,
            wait,
        });
        self.asked = head.commit;
        Some(RepoChanged {
            head: head.clone(),
            indexed,
        })
    }
}

/// Whether a file event can mean a ref moved: not a mere read (inotify
/// reports every open, and reading HEAD is what the watcher itself does).
pub fn is_write(kind: &notify::EventKind) -> bool {
    !matches!(kind, notify::EventKind::Access(_))
}

/// The indexed commit, read when the watcher checks (the journal's head).
pub type IndexedHead = std::sync::Arc<dyn Fn() -> Option<CommitId> + Send + Sync>;

/// Arguments of the watcher.
pub struct WatcherArgs {
    /// Any directory of the repository.
    pub root: PathBuf,
    /// Quiet time after the last event before HEAD is read.
    pub debounce: Duration,
    /// How often HEAD is read without any event (and a failed change retried).
    pub poll: Duration,
    /// The indexed commit.
    pub indexed: IndexedHead,
    /// Where git's HEAD was when the index was last deliberately put where
    /// it is (a rollback): while HEAD stays there, nothing is reported.
    pub settled_at: Option<CommitId>,
    /// Where changes go.
    pub changes: UnboundedSender<RepoChanged>,
}

/// Messages of the watcher.
pub enum WatcherMsg {
    /// File events from notify: the paths they name.
    Paths(Vec<PathBuf>),
    /// Read HEAD now (the poll, and the end of a debounce wait).
    Check,
}

/// The watcher actor.
pub struct Watcher;

/// The watcher's state.
pub struct WatcherState {
    args: WatcherArgs,
    git_dir: PathBuf,
    common_dir: PathBuf,
    debounce: Debounce,
    follow: Follow,
    /// HEAD could not be read at the last look (said once per streak).
    unreadable: bool,
    // Kept alive: dropping it stops the events.
    _events: Option<notify::RecommendedWatcher>,
}

/// Where git keeps HEAD and where it keeps the shared refs, canonical (as
/// file events name them).
fn git_dirs(root: &Path) -> Result<(PathBuf, PathBuf), GitError> {
    let repo = GitRepo::open(root)?;
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    Ok((canon(repo.git_dir()), canon(repo.common_dir())))
}

fn start_events(
    me: &ActorRef<WatcherMsg>,
    git_dir: &Path,
    common_dir: &Path,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::{RecursiveMode, Watcher as _};
    let me = me.clone();
    let mut w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
        // Events were dropped (a full queue): HEAD may have moved unseen.
        Ok(event) if event.need_rescan() => {
            let _ = me.cast(WatcherMsg::Check);
        }
        Ok(event) if is_write(&event.kind) => {
            let _ = me.cast(WatcherMsg::Paths(event.paths));
        }
        Ok(_) => {}
        Err(e) => tracing::debug!(error = %e, "file event error"),
    })?;
    // Not the whole git directory: objects are written by the thousand.
    w.watch(git_dir, RecursiveMode::NonRecursive)?;
    let mut extra = vec![(common_dir.join("refs"), RecursiveMode::Recursive)];
    if common_dir != git_dir {
        extra.push((common_dir.to_path_buf(), RecursiveMode::NonRecursive));
    }
    // Past HEAD's own directory, a failure (say, the inotify watch limit)
    // leaves those refs to the poll rather than losing every event.
    for (dir, mode) in extra {
        if dir.is_dir() {
            if let Err(e) = w.watch(&dir, mode) {
                tracing::warn!(dir = %dir.display(), error = %e, "no file events here; the poll covers it");
            }
        }
    }
    Ok(w)
}

impl Actor for Watcher {
    type Msg = WatcherMsg;
    type State = WatcherState;
    type Arguments = WatcherArgs;

    async fn pre_start(
        &self,
        me: ActorRef<WatcherMsg>,
        args: WatcherArgs,
    ) -> Result<WatcherState, ActorProcessingErr> {
        let (git_dir, common_dir) = git_dirs(&args.root)?;
        let events = match start_events(&me, &git_dir, &common_dir) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(error = %e, poll_secs = args.poll.as_secs_f64(),
                    "no file events for the git directory; following it by polling");
                None
            }
        };
        me.send_interval(args.poll, || WatcherMsg::Check);
        // The first look: HEAD may have moved while nothing watched.
        me.cast(WatcherMsg::Check)?;
        Ok(WatcherState {
            debounce: Debounce::new(args.debounce, args.debounce * 10),
            follow: Follow::new(args.poll).settled_at(args.settled_at),
            unreadable: false,
            args,
            git_dir,
            common_dir,
            _events: events,
        })
    }

    async fn handle(
        &self,
        me: ActorRef<WatcherMsg>,
        msg: WatcherMsg,
        st: &mut WatcherState,
    ) -> Result<(), ActorProcessingErr> {
        let now = Instant::now();
        match msg {
            WatcherMsg::Paths(paths) => {
                if paths
                    .iter()
                    .any(|p| classify(p, &st.git_dir, &st.common_dir) == PathKind::GitState)
                {
                    // One timer per burst: it fires at the first possible
                    // due time and re-arms itself while the burst goes on.
                    let armed = st.debounce.next_due(now).is_some();
                    st.debounce.event(now);
                    if !armed {
                        if let Some(wait) = st.debounce.next_due(now) {
                            me.send_after(wait, || WatcherMsg::Check);
                        }
                    }
                }
            }
            WatcherMsg::Check => {
                // In a burst that is not over: wait for it (the timer is
                // armed again for when it can be).
                if let Some(wait) = st.debounce.next_due(now) {
                    if !st.debounce.take_due(now) {
                        me.send_after(wait, || WatcherMsg::Check);
                        return Ok(());
                    }
                }
                let root = st.args.root.clone();
                let head = match tokio::task::spawn_blocking(move || observe(&root)).await {
                    Ok(Ok(h)) => {
                        st.unreadable = false;
                        h
                    }
                    Ok(Err(e)) => {
                        if !std::mem::replace(&mut st.unreadable, true) {
                            tracing::warn!(error = %e, "could not read HEAD; trying again at each poll");
                        }
                        return Ok(());
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "reading HEAD failed; trying again at the next poll");
                        return Ok(());
                    }
                };
                let indexed = (st.args.indexed)();
                if let Some(change) = st.follow.check(&head, indexed, now) {
                    tracing::info!(head = ?change.head.commit.map(|c| c.to_hex()),
                        branch = ?change.head.branch, "HEAD moved from the indexed commit");
                    if st.args.changes.send(change).is_err() {
                        // Nobody listens any more.
                        me.stop(None);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(b: u8) -> CommitId {
        CommitId([b; 20])
    }

    #[test]
    fn ref_files_are_git_state_and_the_rest_is_not() {
        let git = Path::new("/r/.git");
        let wt = Path::new("/r/.git/worktrees/w");
        for p in [
            "/r/.git/HEAD",
            "/r/.git/packed-refs",
            "/r/.git/refs/heads/main",
            "/r/.git/refs/heads/feat/x",
            "/r/.git/worktrees/w/HEAD",
        ] {
            assert_eq!(classify(Path::new(p), wt, git), PathKind::GitState, "{p}");
        }
        for p in [
            "/r/.git/objects/ab/cdef",
            "/r/.git/index",
            "/r/.git/HEAD.lock",
            "/r/.git/refs/heads/main.lock",
            "/r/.git/logs/HEAD",
            "/r/src/main.rs",
            "/r/.sno/sno.redb",
            "/r/.git/HEAD/x",
        ] {
            assert_eq!(classify(Path::new(p), wt, git), PathKind::Other, "{p}");
        }
    }

    #[test]
    fn a_burst_is_due_once_after_it_goes_quiet_or_after_the_longest_wait() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut d = Debounce::new(ms(100), ms(1000));
        assert!(!d.take_due(t0));
        assert_eq!(d.next_due(t0), None);
        d.event(t0);
        d.event(t0 + ms(50));
        assert_eq!(d.next_due(t0 + ms(50)), Some(ms(100)));
        assert!(!d.take_due(t0 + ms(120)));
        assert!(d.take_due(t0 + ms(150)));
        assert!(!d.take_due(t0 + ms(400)), "a burst is due once");
        // Events every 50 ms never go quiet: due at the longest wait.
        let mut d = Debounce::new(ms(100), ms(1000));
        let mut due_at = None;
        for i in 0..40u64 {
            let now = t0 + ms(50 * i);
            d.event(now);
            if d.take_due(now) {
                due_at = Some(50 * i);
                break;
            }
        }
        assert_eq!(due_at, Some(1000));
    }

    #[test]
    fn a_change_is_reported_once_then_again_after_a_doubling_wait() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut f = Follow::new(s(5));
        let at = |c: Option<CommitId>| GitHead {
            commit: c,
            branch: Some("main".into()),
        };
        assert_eq!(f.check(&at(Some(commit(1))), Some(commit(1)), t0), None);
        assert_eq!(f.check(&at(None), None, t0), None, "nothing to index");
        let c = f.check(&at(Some(commit(2))), Some(commit(1)), t0).unwrap();
        assert_eq!(c.head.commit, Some(commit(2)));
        assert_eq!(c.indexed, Some(commit(1)));
        assert_eq!(
            f.check(&at(Some(commit(2))), Some(commit(1)), t0 + s(1)),
            None
        );
        // Still not indexed: reported again after 5 s, then after 10 s more.
        assert!(f
            .check(&at(Some(commit(2))), Some(commit(1)), t0 + s(5))
            .is_some());
        assert_eq!(
            f.check(&at(Some(commit(2))), Some(commit(1)), t0 + s(14)),
            None
        );
        assert!(f
            .check(&at(Some(commit(2))), Some(commit(1)), t0 + s(15))
            .is_some());
        // The wait stops growing at MAX_RETRY.
        let mut t = t0 + s(15);
        let mut last = t;
        for _ in 0..20 {
            t += MAX_RETRY;
            if f.check(&at(Some(commit(2))), Some(commit(1)), t).is_some() {
                assert!(t - last <= MAX_RETRY);
                last = t;
            }
        }
        assert_eq!(last, t, "reported at every MAX_RETRY at the end");
        // HEAD moves on before the first change is indexed: reported at once.
        assert!(f
            .check(&at(Some(commit(3))), Some(commit(1)), t + s(1))
            .is_some());
        // Indexed: quiet, and a later return to commit 2 is news again.
        assert_eq!(
            f.check(&at(Some(commit(3))), Some(commit(3)), t + s(2)),
            None
        );
        assert!(f
            .check(&at(Some(commit(2))), Some(commit(3)), t + s(2))
            .is_some());
    }

    #[test]
    fn an_index_moved_away_from_a_head_that_stayed_is_left_alone() {
        let t0 = Instant::now();
        let mut f = Follow::new(Duration::from_secs(5));
        let head = GitHead {
            commit: Some(commit(9)),
            branch: Some("main".into()),
        };
        assert_eq!(f.check(&head, Some(commit(9)), t0), None);
        // `sno init --rev <older>`: the user's choice, while HEAD stays.
        for secs in [1, 60, 3600] {
            let later = t0 + Duration::from_secs(secs);
            assert_eq!(f.check(&head, Some(commit(4)), later), None);
        }
        // HEAD moves: followed again.
        let moved = GitHead {
            commit: Some(commit(10)),
            ..head
        };
        assert!(f
            .check(&moved, Some(commit(4)), t0 + Duration::from_secs(3601))
            .is_some());
        // A watcher that starts on a differing index follows HEAD at once,
        let mut fresh = Follow::new(Duration::from_secs(5));
        let head = GitHead {
            commit: Some(commit(9)),
            branch: None,
        };
        assert!(fresh.check(&head, Some(commit(4)), t0).is_some());
        // unless a rollback put it there with HEAD where it still is.
        let mut after_rollback = Follow::new(Duration::from_secs(5)).settled_at(Some(commit(9)));
        assert_eq!(after_rollback.check(&head, Some(commit(4)), t0), None);
        let moved = GitHead {
            commit: Some(commit(10)),
            branch: None,
        };
        assert!(after_rollback.check(&moved, Some(commit(4)), t0).is_some());
    }

    #[test]
    fn head_going_back_while_its_move_is_indexed_is_followed() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut f = Follow::new(s(5));
        let at = |c: u8| GitHead {
            commit: Some(commit(c)),
            branch: None,
        };
        // In step at 9; HEAD moves to 4: reported, and a run indexes it.
        assert_eq!(f.check(&at(9), Some(commit(9)), t0), None);
        assert!(f.check(&at(4), Some(commit(9)), t0).is_some());
        // HEAD back at 9 before that run journaled 4: in step, it seems.
        assert_eq!(f.check(&at(9), Some(commit(9)), t0 + s(1)), None);
        // The run ends at 4, which HEAD left: reported, not left alone.
        let again = f.check(&at(9), Some(commit(4)), t0 + s(2));
        assert_eq!(again.map(|c| c.head.commit), Some(Some(commit(9))));
        // Once 9 is indexed again, a user's `init --rev` is still theirs.
        assert_eq!(f.check(&at(9), Some(commit(9)), t0 + s(3)), None);
        assert_eq!(f.check(&at(9), Some(commit(2)), t0 + s(4)), None);
    }

    #[test]
    fn reads_are_not_writes() {
        use notify::event::{AccessKind, CreateKind, ModifyKind, RemoveKind, RenameMode};
        use notify::EventKind;
        assert!(!is_write(&EventKind::Access(AccessKind::Any)));
        for kind in [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Remove(RemoveKind::File),
            EventKind::Any,
        ] {
            assert!(is_write(&kind), "{kind:?}");
        }
    }
}
