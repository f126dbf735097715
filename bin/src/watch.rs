//! Following the repository: `sno watch`, and the same follower inside the
//! daemon behind `sno serve`.
//!
//! The watcher actor (`sno_engine::watcher`) says when HEAD leaves the
//! indexed commit; a [`Follower`] indexes each such change, one run at a
//! time, as `sno init` would. Changes that arrive during a run are folded
//! into the next one: only where HEAD is then matters.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use ractor::{Actor, ActorRef};
use sno_engine::config::{IndexConfig, WatchConfig};
use sno_engine::watcher::{IndexedHead, RepoChanged, Watcher, WatcherArgs, WatcherMsg};
use sno_journal::model::CommitId;

use crate::cli::InitArgs;
use crate::commands::{index_repository, Indexed};
use crate::repo::RepoPaths;

/// A running watcher and the task that indexes what it reports.
pub struct Follower {
    watcher: ActorRef<WatcherMsg>,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Follower {
    /// Starts following `paths`' repository: `on_change` runs on a blocking
    /// thread for each change, never two at once.
    pub async fn start(
        paths: &RepoPaths,
        config: &WatchConfig,
        indexed: IndexedHead,
        settled_at: Option<CommitId>,
        on_change: impl Fn(RepoChanged) + Send + Sync + 'static,
    ) -> anyhow::Result<Follower> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let args = WatcherArgs {
            root: paths.root.clone(),
            debounce: config.debounce(),
            poll: config.poll(),
            indexed: indexed.clone(),
            settled_at,
            changes: tx,
        };
        let (watcher, _) = Actor::spawn(None, Watcher, args)
            .await
            .map_err(|e| anyhow::anyhow!("starting the watcher: {e}"))?;
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let on_change = Arc::new(on_change);
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
                let run = on_change.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || run(change)).await {
                    tracing::error!(error = %e, "an index run of the watcher failed");
                }
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

/// The arguments of an index run that follows HEAD: `sno init`'s defaults.
pub fn follow_args(paths: &RepoPaths) -> InitArgs {
    InitArgs {
        path: paths.root.clone(),
        history: None,
        rev: None,
        max_file_size: None,
        workers: None,
        model: None,
        json: false,
    }
}

/// `sno watch`.
pub fn watch(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    if std::os::unix::net::UnixStream::connect(crate::serve::socket_path(&paths)).is_ok() {
        return Err(sno_protocol::ErrorContract::new(
            "SNO-WATCH-SERVED",
            format!(
                "the sno daemon serving {} holds its database and follows the repository itself",
                paths.root.display()
            ),
            "Nothing to do while `sno serve` runs: its daemon indexes each commit HEAD moves to \
             (unless `[watch] enabled = false` in .sno/config.toml). `sno status` shows what is indexed.",
            sno_protocol::Fixability::Easy,
        )
        .into());
    }
    let config = IndexConfig::load(&paths.config())?;
    // The database stays closed between runs, so `sno status` and the other
    // commands work beside a watch; the last indexed commit is kept here.
    let (start, settled_at) = if paths.db().exists() {
        let journal = crate::commands::open_existing(&paths)?;
        let head = journal.head()?.map(|h| h.commit);
        let settled = journal.rolled_back_at()?.flatten();
        drop(journal);
        (head, settled)
    } else {
        (None, None)
    };
    let known: Arc<Mutex<Option<CommitId>>> = Arc::new(Mutex::new(start));
    let indexed: IndexedHead = {
        let known = known.clone();
        Arc::new(move || *known.lock().unwrap_or_else(|e| e.into_inner()))
    };
    crate::out::errln!(
        "sno: watching {} (indexed: {}); Ctrl-C stops",
        paths.root.display(),
        start
            .map(|c| c.short())
            .unwrap_or_else(|| "nothing yet".into())
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let run_paths = paths.clone();
        let failing = Mutex::new(None);
        let follower = Follower::start(&paths, &config.watch, indexed, settled_at, move |change| {
            let result = index_beside_readers(&run_paths, !json);
            let since = result.as_ref().ok().map(|done| done.events_before);
            // Reported (and the database let go) before any drafting.
            report_run(&run_paths, &change, result, &known, &failing, json);
            if let Some(since) = since {
                crate::drafting::draft_after_index(&run_paths, since);
            }
        })
        .await?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        crate::out::errln!("sno: stopping after the run in progress (Ctrl-C again stops at once)");
        tokio::select! {
            _ = follower.stop() => {}
            // An interrupted index run is safe: the next one redoes it.
            _ = tokio::signal::ctrl_c() => std::process::exit(130),
            _ = term.recv() => std::process::exit(143),
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// How long a run waits for a database another process has open for a
/// moment (an `sno status`) before it reports the lock.
const READER_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// An index run that waits out short holders of the database.
fn index_beside_readers(paths: &RepoPaths, progress: bool) -> anyhow::Result<Indexed> {
    let started = std::time::Instant::now();
    loop {
        match index_repository(paths, &follow_args(paths), progress) {
            Err(e) if crate::serve::is_locked(&e) && started.elapsed() < READER_GRACE => {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// Prints what one run of `sno watch` did, and remembers the indexed commit.
/// A failure is said once while it lasts (the watcher retries, waiting
/// longer each time), not at every retry.
fn report_run(
    paths: &RepoPaths,
    change: &RepoChanged,
    result: anyhow::Result<Indexed>,
    known: &Mutex<Option<CommitId>>,
    failing: &Mutex<Option<String>>,
    json: bool,
) {
    match result {
        Ok(done) => {
            *failing.lock().unwrap_or_else(|e| e.into_inner()) = None;
            let head = done.journal.head().ok().flatten().map(|h| h.commit);
            *known.lock().unwrap_or_else(|e| e.into_inner()) = head;
            let printed = if json {
                crate::commands::init_json(
                    paths,
                    &done.journal,
                    &done.summary,
                    done.embedded.as_ref(),
                )
                .map(|mut v| {
                    v["event"] = "indexed".into();
                    crate::out::outln!("{v}");
                })
            } else {
                crate::commands::report_init(
                    paths,
                    &done.journal,
                    &done.summary,
                    done.embedded.as_ref(),
                    false,
                )
            };
            if let Err(e) = printed {
                tracing::warn!(error = %e, "could not report an index run");
            }
        }
        Err(e) => {
            let served = crate::serve::is_locked(&e)
                && std::os::unix::net::UnixStream::connect(crate::serve::socket_path(paths))
                    .is_ok();
            let contract = if served {
                sno_protocol::ErrorContract::new(
                    "SNO-WATCH-SERVED",
                    "the sno daemon started by `sno serve` now holds the database and follows the repository itself",
                    "Nothing to do: sno watch resumes when the daemon leaves.",
                    sno_protocol::Fixability::Trivial,
                )
            } else {
                crate::failure::contract_of(&e)
            };
            let said = format!("{}: {}", contract.code, contract.message);
            let mut failing = failing.lock().unwrap_or_else(|e| e.into_inner());
            if failing.as_deref() == Some(said.as_str()) {
                tracing::info!(error = %said, "still failing");
                return;
            }
            *failing = Some(said);
            let commit = change.head.commit.map(|c| c.to_hex());
            if json {
                let line = serde_json::json!({
                    "event": "error",
                    "commit": commit,
                    "branch": change.head.branch,
                    "error": contract,
                });
                crate::out::outln!("{line}");
            } else {
                let short = change.head.commit.map(|c| c.short()).unwrap_or_default();
                crate::out::errln!(
                    "sno: could not index {short}: error[{}]: {}",
                    contract.code,
                    contract.message
                );
                crate::out::errln!(
                    "  hint: {} (sno watch tries again while HEAD stays there, less often each time)",
                    contract.llm_hint
                );
            }
        }
    }
}
