//! `sno watch`: follows the repository, indexing each commit HEAD moves to.
//! The database stays closed between runs (each run opens an engine and lets
//! it go), so the other commands work beside a watch; the watcher lives for
//! the whole watch.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use sno_engine::follow::{Follower, OnChange};
use sno_engine::watcher::{IndexedHead, RepoChanged};
use sno_engine::writes::IndexOptions;
use sno_engine::{CommitId, Seq};
use sno_engine::{Engine, Open, RepoPaths};
use sno_protocol::status::{IndexSummary, WatchEvent};
use sno_protocol::{ErrorCode, ErrorContract};

use crate::out::errln;

/// How long a run waits for a database another process has open for a
/// moment (an `sno status`) before it reports the lock.
const READER_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// `sno watch`.
pub async fn watch(path: &Path, json: bool) -> Result<ExitCode, ErrorContract> {
    let paths = RepoPaths::discover(path).map_err(|e| *e.0)?;
    if std::os::unix::net::UnixStream::connect(sno_serve::daemon::socket_path(&paths)).is_ok() {
        return Err(ErrorCode::WatchServed.with(format!(
            "the sno daemon serving {} holds its database and follows the repository itself",
            paths.root.display()
        )).hinted("Nothing to do while `sno serve` runs: its daemon indexes each commit HEAD moves to \
             (unless `[watch] enabled = false` in .sno/config.toml). `sno status` shows what is indexed."));
    }
    let config = sno_engine::config::IndexConfig::load(&paths.config())
        .map_err(|e| *sno_engine::Error::from(e).0)?;
    // The last indexed commit is kept here, as the database is closed.
    let (start, settled_at) = paths.indexed_head().map_err(|e| *e.0)?;
    let known: Arc<Mutex<Option<CommitId>>> = Arc::new(Mutex::new(start));
    let indexed: IndexedHead = {
        let known = known.clone();
        Arc::new(move || *known.lock().unwrap_or_else(|e| e.into_inner()))
    };
    errln!(
        "sno: watching {} (indexed: {}); Ctrl-C stops",
        paths.root.display(),
        start
            .map(|c| c.short())
            .unwrap_or_else(|| "nothing yet".into())
    );
    let failing: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let run_paths = paths.clone();
    let on_change: OnChange = Arc::new(move |change: RepoChanged| {
        let paths = run_paths.clone();
        let known = known.clone();
        let failing = failing.clone();
        Box::pin(async move {
            let result = index_beside_readers(&paths, !json).await;
            report_run(&paths, &change, result, &known, &failing, json);
        })
    });
    let follower = Follower::start(&paths, &config.watch, indexed, settled_at, on_change, None)
        .await
        .map_err(|e| *e.0)?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| ErrorCode::Internal.with(e.to_string()))?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    errln!("sno: stopping after the run in progress (Ctrl-C again stops at once)");
    tokio::select! {
        _ = follower.stop() => {}
        // An interrupted index run is safe: the next one redoes it.
        _ = tokio::signal::ctrl_c() => std::process::exit(130),
        _ = term.recv() => std::process::exit(143),
    }
    Ok(ExitCode::SUCCESS)
}

/// An index run, in an engine of its own (closed after it, lessons drafted
/// first), that waits out short holders of the database.
async fn index_beside_readers(
    paths: &RepoPaths,
    progress: bool,
) -> sno_engine::Result<IndexSummary> {
    let started = std::time::Instant::now();
    loop {
        let engine = match Engine::open(&paths.root, Open::OrCreate, None) {
            Ok(e) => e,
            Err(e) if e.is(ErrorCode::Locked) && started.elapsed() < READER_GRACE => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let since = engine.journal().len().map(Seq).unwrap_or(Seq(0));
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let renderer = progress.then(|| tokio::spawn(crate::progress::render(rx)));
        let done = engine.index(&IndexOptions::default(), Some(tx)).await;
        if let Some(r) = renderer {
            let _ = r.await;
        }
        if done.is_ok() {
            engine.draft_after_index(since).await;
        }
        engine.stop().await;
        return done;
    }
}

/// Prints what one run did, and remembers the indexed commit. A failure is
/// said once while it lasts (the watcher retries, waiting longer each
/// time), not at every retry.
fn report_run(
    paths: &RepoPaths,
    change: &RepoChanged,
    result: sno_engine::Result<IndexSummary>,
    known: &Mutex<Option<CommitId>>,
    failing: &Mutex<Option<String>>,
    json: bool,
) {
    match result {
        Ok(summary) => {
            *failing.lock().unwrap_or_else(|e| e.into_inner()) = None;
            *known.lock().unwrap_or_else(|e| e.into_inner()) =
                summary.commit.as_deref().and_then(CommitId::from_hex);
            if json {
                crate::out::outln!(
                    "{}",
                    serde_json::to_string(&WatchEvent::Indexed(summary)).unwrap_or_default()
                );
            } else {
                crate::render::answer(&sno_protocol::rpc::Answer::Index(Box::new(summary)), false);
            }
        }
        Err(e) => {
            let served = e.is(ErrorCode::Locked)
                && std::os::unix::net::UnixStream::connect(sno_serve::daemon::socket_path(paths))
                    .is_ok();
            let contract = match served {
                true => ErrorCode::WatchServed.with(sno_protocol::status::WATCH_PAUSED),
                false => *e.0,
            };
            let said = format!("{}: {}", contract.code, contract.message);
            let mut failing = failing.lock().unwrap_or_else(|e| e.into_inner());
            if failing.as_deref() == Some(said.as_str()) {
                tracing::info!(error = %said, "still failing");
                return;
            }
            *failing = Some(said);
            let commit = change.head.commit.map(|c| c.to_hex());
            if served && !json {
                errln!("sno: paused: {}", contract.message);
            } else if served {
                let line = WatchEvent::Paused {
                    commit,
                    reason: contract.message,
                };
                crate::out::outln!("{}", serde_json::to_string(&line).unwrap_or_default());
            } else if json {
                let line = WatchEvent::Error {
                    commit,
                    branch: change.head.branch.clone(),
                    error: contract,
                };
                crate::out::outln!("{}", serde_json::to_string(&line).unwrap_or_default());
            } else {
                let short = change.head.commit.map(|c| c.short()).unwrap_or_default();
                errln!(
                    "sno: could not index {short}: error[{}]: {}",
                    contract.code,
                    contract.message
                );
                errln!(
                    "  hint: {} (sno watch tries again while HEAD stays there, less often each time)",
                    contract.llm_hint
                );
            }
        }
    }
}
