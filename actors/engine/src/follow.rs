//! Following HEAD: the watcher actor says when HEAD leaves the indexed
//! commit, and a follower runs `on_change` for each such change, one at a
//! time, as `sno init` would index it. Changes that arrive during a run are
//! folded into the next: only where HEAD is then matters. The daemon's
//! follower runs under its engine's supervisor.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ractor::{Actor, ActorCell, ActorRef};
use sno_journal::model::CommitId;

use crate::config::WatchConfig;
use crate::error::{Error, Result};
use crate::repo::RepoPaths;
use crate::watcher::{IndexedHead, RepoChanged, Watcher, WatcherArgs, WatcherMsg};

/// What a follower does with a change.
pub type OnChange =
    Arc<dyn Fn(RepoChanged) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// A running watcher and the task that acts on what it reports.
pub struct Follower {
    watcher: ActorRef<WatcherMsg>,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Follower {
    /// Starts following `paths`' repository (under `parent`, a supervisor,
    /// when there is one).
    pub async fn start(
        paths: &RepoPaths,
        config: &WatchConfig,
        indexed: IndexedHead,
        settled_at: Option<CommitId>,
        on_change: OnChange,
        parent: Option<ActorCell>,
    ) -> Result<Follower> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let args = WatcherArgs {
            root: paths.root.clone(),
            debounce: config.debounce(),
            poll: config.poll(),
            indexed: indexed.clone(),
            settled_at,
            changes: tx,
        };
        let (watcher, _) = match parent {
            Some(p) => Actor::spawn_linked(None, Watcher, args, p).await,
            None => Actor::spawn(None, Watcher, args).await,
        }
        .map_err(|e| Error::internal(format!("starting the watcher: {e}")))?;
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                let mut change = tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    c = rx.recv() => match c {
                        Some(c) => c,
                        None => break,
                    },
                };
                // Only where HEAD is now matters.
                while let Ok(later) = rx.try_recv() {
                    change = later;
                }
                if *stopped.borrow() {
                    break;
                }
                // Reported again while the last run was still indexing it.
                if indexed() == change.head.commit {
                    continue;
                }
                on_change(change).await;
            }
        });
        Ok(Follower {
            watcher,
            stop,
            task,
        })
    }

    /// Stops watching and waits for a run in progress to finish; no other
    /// run starts.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        self.watcher.stop(None);
        let _ = self.task.await;
    }
}

/// The waits (ms) before a run refused for a held writer lock is tried
/// again within the same change: 3.1 s in all, after which the watcher's
/// retries (its poll, then longer) take over.
const LOCKED_RETRIES: [u64; 5] = [100, 200, 400, 800, 1600];

/// What a front end hears of the runs an engine's follower makes.
#[derive(Clone)]
pub struct FollowHooks {
    /// Called as a run starts; what it returns is held until the run ends
    /// (the daemon's "busy" mark).
    pub started: Arc<dyn Fn() -> Box<dyn Send> + Send + Sync>,
    /// Each run's outcome.
    pub indexed: RunOutcome,
}

/// A hook told each run's outcome.
pub type RunOutcome =
    Arc<dyn Fn(&RepoChanged, &Result<sno_protocol::status::IndexSummary>) + Send + Sync>;

impl crate::Engine {
    /// Follows HEAD in this engine (the daemon): each change is indexed,
    /// then the agent may draft the lessons the run proposed. `None` with
    /// `[watch] enabled = false`.
    pub async fn follow(self: &Arc<Self>, hooks: FollowHooks) -> Result<Option<Follower>> {
        if !self.config.watch.enabled {
            tracing::info!("[watch] enabled = false: the index does not follow HEAD");
            return Ok(None);
        }
        let journal = self.journal.clone();
        let indexed: IndexedHead =
            Arc::new(move || journal.head().ok().flatten().map(|h| h.commit));
        let engine = Arc::downgrade(self);
        let on_change: OnChange = Arc::new(move |change: RepoChanged| {
            let engine = engine.clone();
            let hooks = hooks.clone();
            Box::pin(async move {
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                let _running = (hooks.started)();
                let since = engine
                    .journal
                    .len()
                    .map(sno_journal::model::Seq)
                    .unwrap_or(sno_journal::model::Seq(0));
                let mut done = engine
                    .index(&crate::writes::IndexOptions::default(), None)
                    .await;
                // Another process holding the writer lock (a command, an
                // `sno init`) usually lets go within a second: tried again
                // soon, not at the watcher's next poll (5 s, then longer).
                for wait in LOCKED_RETRIES {
                    if !done
                        .as_ref()
                        .is_err_and(|e| e.is(sno_protocol::error::ErrorCode::Locked))
                    {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                    done = engine
                        .index(&crate::writes::IndexOptions::default(), None)
                        .await;
                }
                if done.is_ok() {
                    engine.draft_after_index(since).await;
                }
                (hooks.indexed)(&change, &done);
            })
        });
        // The state the first followed commit advances from, and the
        // embedder's counts, loaded in the background once searches pause
        // (`activity`), at the lowest priority (`background`), so answers
        // given meanwhile do not wait.
        if let Ok(sup) = self.supervisor().await {
            let sup = sup.clone();
            let activity = self.activity.clone();
            tokio::spawn(async move {
                activity.until_quiet(crate::activity::LONGEST_WAIT).await;
                use crate::supervisor::SupervisorMsg;
                if let Ok(indexer) = ractor::call!(sup, SupervisorMsg::Indexer) {
                    let _ = indexer.cast(crate::indexer::IndexerMsg::Warm);
                }
                if let Ok(embedder) = ractor::call!(sup, SupervisorMsg::Embedder) {
                    let _ = embedder.cast(crate::embedder::EmbedderMsg::Warm {
                        max_files: crate::indexer::KEEP_FILES,
                    });
                }
            });
        }
        // A rollback stays while HEAD stays where it was.
        let settled_at = self.journal.rolled_back_at().ok().flatten().flatten();
        let parent = self.supervisor().await?.get_cell();
        Follower::start(
            &self.paths,
            &self.config.watch,
            indexed,
            settled_at,
            on_change,
            Some(parent),
        )
        .await
        .map(Some)
    }
}
