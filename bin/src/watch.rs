//! Following the repository: `sno watch`, and the same follower inside the
//! daemon behind `sno serve`.
//!
//! The watcher actor (`sno_actors::watcher`) says when HEAD leaves the
//! indexed commit; a [`Follower`] indexes each such change, one run at a
//! time, as `sno init` would. Changes that arrive during a run are folded
//! into the next one: only where HEAD is then matters.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use ractor::{Actor, ActorRef};
use sno_actors::config::{IndexConfig, WatchConfig};
use sno_actors::watcher::{IndexedHead, RepoChanged, Watcher, WatcherArgs, WatcherMsg};
use sno_journal::model::CommitId;

use crate::cli::InitArgs;
use crate::commands::{index_repository, Indexed};
use crate::repo::RepoPaths;

/// A running watcher and the task that indexes what it reports.
pub struct Follower {
    watcher: ActorRef<WatcherMsg>,
    task: tokio::task::JoinHandle<()>,
}

impl Follower {
    /// Starts following `paths`' repository: `on_change` runs on a blocking
    /// thread for each change, never two at once.
    pub async fn start(
        paths: &RepoPaths,
        config: &WatchConfig,
        indexed: IndexedHead,
        on_change: impl Fn(RepoChanged) + Send + Sync + 'static,
    ) -> anyhow::Result<Follower> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let args = WatcherArgs {
            root: paths.root.clone(),
            debounce: config.debounce(),
            poll: config.poll(),
            indexed,
            changes: tx,
        };
        let (watcher, _) = Actor::spawn(None, Watcher, args)
            .await
            .map_err(|e| anyhow::anyhow!("starting the watcher: {e}"))?;
        let on_change = Arc::new(on_change);
        let task = tokio::spawn(async move {
            while let Some(mut change) = rx.recv().await {
                while let Ok(later) = rx.try_recv() {
                    change = later;
                }
                let run = on_change.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || run(change)).await {
                    tracing::error!(error = %e, "an index run of the watcher failed");
                }
            }
        });
        Ok(Follower { watcher, task })
    }

    /// Stops watching and waits for a run in progress to finish.
    pub async fn stop(self) {
        // The watcher's end drops the channel's sender: the task ends after
        // the run it may be in.
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
    let start = if paths.db().exists() {
        let journal = crate::commands::open_existing(&paths)?;
        let head = journal.head()?.map(|h| h.commit);
        drop(journal);
        head
    } else {
        None
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
        let follower = Follower::start(&paths, &config.watch, indexed, move |change| {
            let result = index_repository(&run_paths, &follow_args(&run_paths), !json);
            report_run(&run_paths, &change, result, &known, json);
        })
        .await?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        crate::out::errln!("sno: stopping (a run in progress finishes first)");
        follower.stop().await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Prints what one run of `sno watch` did, and remembers the indexed commit.
fn report_run(
    paths: &RepoPaths,
    change: &RepoChanged,
    result: anyhow::Result<Indexed>,
    known: &Mutex<Option<CommitId>>,
    json: bool,
) {
    match result {
        Ok(done) => {
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
            let contract = crate::failure::contract_of(&e);
            let head = change.head.commit.map(|c| c.short()).unwrap_or_default();
            if json {
                let line = serde_json::json!({"event": "error", "head": head, "error": contract});
                crate::out::outln!("{line}");
            } else {
                crate::out::errln!(
                    "sno: could not index {head}: error[{}]: {}",
                    contract.code,
                    contract.message
                );
                crate::out::errln!(
                    "  hint: {} (retried while HEAD stays there)",
                    contract.llm_hint
                );
            }
        }
    }
}
