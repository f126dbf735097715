//! `sno serve`: the MCP server on stdio.
//!
//! One process per repository owns the database (redb allows one) and the
//! writer: the sno daemon (`sno daemon`, started by the first `sno serve`
//! and detached from it). Every `sno serve` is a relay: it connects to the
//! daemon's socket, `.sno/sno.sock`, and copies its stdio there byte for
//! byte, so each client has its own MCP session with the one process that
//! holds the database. CLI commands that find the database held send
//! themselves over the same socket and the daemon runs them ([`forward`]).
//!
//! The daemon keeps its state, search indexes and model loaded between
//! clients, and exits after `[serve] idle_exit_secs` (default 300) with no
//! client. stdout carries protocol only; logs go to stderr (warnings) and
//! `.sno/logs/serve.log`.

pub mod args;
pub mod core;
pub mod forward;
pub mod head_cache;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use sno_journal::JournalError;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, BufReader};
use tokio::net::{UnixListener, UnixStream};

use self::core::Core;
use crate::repo::RepoPaths;

/// How long a relay waits for the daemon to take connections, and the
/// daemon for a database another sno process (an `sno init`) holds.
const WAIT_FOR_DATABASE: Duration = Duration::from_secs(60);

/// How long a new daemon waits for its first client before exiting.
const STARTUP_GRACE: Duration = Duration::from_secs(10);

/// The socket the daemon listens on.
pub fn socket_path(paths: &RepoPaths) -> PathBuf {
    paths.sno_dir.join("sno.sock")
}

/// `sno serve`: relays stdio to the repository's daemon, starting it first
/// when none runs.
pub fn serve(path: PathBuf) -> anyhow::Result<std::process::ExitCode> {
    let paths = RepoPaths::discover(&path)?;
    if !paths.db().exists() {
        return Err(JournalError::Missing(paths.db().display().to_string()).into());
    }
    let sock = socket_path(&paths);
    let started = Instant::now();
    let mut daemon: Option<std::process::Child> = None;
    loop {
        if let Ok(stream) = std::os::unix::net::UnixStream::connect(&sock) {
            tracing::info!(pid = std::process::id(), "relaying to the sno daemon");
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let code = runtime.block_on(relay(stream));
            // The stdin reader may still be blocked in a read: do not wait.
            runtime.shutdown_background();
            return code;
        }
        match daemon.as_mut() {
            None => daemon = Some(spawn_daemon(&paths)?),
            Some(child) => {
                if let Some(status) = child.try_wait()? {
                    if !status.success() {
                        return Err(daemon_failed(&paths, &status.to_string()).into());
                    }
                    // It found another daemon serving (which then left):
                    // start one again.
                    daemon = None;
                }
            }
        }
        if started.elapsed() > WAIT_FOR_DATABASE {
            return Err(daemon_failed(&paths, "it did not open its socket in time").into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn daemon_failed(paths: &RepoPaths, why: &str) -> sno_protocol::ErrorContract {
    sno_protocol::ErrorContract::new(
        "SNO-SERVE-DAEMON",
        format!(
            "the sno daemon for {} did not start: {why}",
            paths.root.display()
        ),
        format!(
            "Read {} for the reason; `sno doctor` checks the database.",
            paths.sno_dir.join("logs/serve.log").display()
        ),
        sno_protocol::Fixability::Medium,
    )
}

fn spawn_daemon(paths: &RepoPaths) -> anyhow::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    tracing::info!("starting the sno daemon");
    Ok(std::process::Command::new(exe)
        .arg("daemon")
        .arg(&paths.root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Its own process group: a Ctrl-C meant for the client's terminal
        // does not take down the daemon other clients use.
        .process_group(0)
        .spawn()?)
}

/// Whether an error is "another process has the database".
pub fn is_locked(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<JournalError>(),
            Some(JournalError::Locked { .. })
        )
    })
}

async fn relay(stream: std::os::unix::net::UnixStream) -> anyhow::Result<std::process::ExitCode> {
    use tokio::io::AsyncWriteExt;
    stream.set_nonblocking(true)?;
    let (mut from_daemon, mut to_daemon) = UnixStream::from_std(stream)?.into_split();
    // Client to daemon; when the client closes stdin, tell the daemon (it
    // then finishes the answers in flight and closes the session).
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut to_daemon).await;
        let _ = to_daemon.shutdown().await;
    });
    // Daemon to client; the relay ends when the daemon's side does, also
    // when the daemon went away with the client still there.
    let mut stdout = tokio::io::stdout();
    let _ = tokio::io::copy(&mut from_daemon, &mut stdout).await;
    let _ = stdout.flush().await;
    Ok(std::process::ExitCode::SUCCESS)
}

/// `sno daemon`: owns the database and serves MCP sessions and forwarded
/// CLI commands on the socket until idle.
pub fn daemon(path: PathBuf) -> anyhow::Result<std::process::ExitCode> {
    let paths = RepoPaths::discover(&path)?;
    // The token counter's tables are the longest load before a first
    // answer and need nothing from the repository: start them before the
    // database opens (from the copy in `.sno/cache/` after the first time).
    sno_query::cl100k::cache_table_in(paths.cache_dir());
    std::thread::spawn(|| {
        let t = Instant::now();
        sno_query::pack::warm();
        tracing::debug!(ms = t.elapsed().as_millis() as u64, "token counter loaded");
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let sock = socket_path(&paths);
    let started = Instant::now();
    let journal = loop {
        match crate::commands::open_existing(&paths) {
            Ok(j) => break j,
            Err(e) if is_locked(&e) => {
                if std::os::unix::net::UnixStream::connect(&sock).is_ok() {
                    tracing::info!("another sno daemon serves this repository");
                    return Ok(std::process::ExitCode::SUCCESS);
                }
                if started.elapsed() > WAIT_FOR_DATABASE {
                    return Err(e);
                }
                // An `sno init` (or a daemon on its way out) holds it.
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    };
    tracing::info!(pid = std::process::id(), "sno daemon owns the database");
    runtime.block_on(run_daemon(paths, journal))?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// How long the daemon stays with no client: `SNO_SERVE_IDLE_SECS`, then
/// `[serve] idle_exit_secs`, then 300 s.
fn idle_limit(core: &Core) -> Duration {
    let secs = std::env::var("SNO_SERVE_IDLE_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .or(core.config.idle_exit_secs)
        .unwrap_or(300);
    Duration::from_secs(secs)
}

struct Activity {
    active: AtomicUsize,
    last: std::sync::Mutex<Instant>,
}

/// Work in progress (a connection, an index run): the daemon does not leave
/// while one lives, and the idle time counts from the last one's end, also
/// when it ends by a panic.
struct Busy(Arc<Activity>);

impl Activity {
    fn busy(self: &Arc<Self>) -> Busy {
        self.active.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn run_daemon(paths: RepoPaths, journal: Arc<sno_journal::Journal>) -> anyhow::Result<()> {
    let sock = socket_path(&paths);
    let core = Core::start(paths.clone(), journal.clone()).await?;
    let mut listener = bind(&sock)?;
    core.warm_up();
    let idle = idle_limit(&core);
    let activity = Arc::new(Activity {
        active: AtomicUsize::new(0),
        last: std::sync::Mutex::new(Instant::now()),
    });
    let follower = follow(&paths, &journal, &activity).await;
    let mut served_any = false;
    let mut ticks: u64 = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let terminated = loop {
        tokio::select! {
            r = listener.accept() => {
                if let Ok((stream, _)) = r {
                    served_any = true;
                    accept(&core, &activity, stream);
                }
            }
            _ = tick.tick() => {
                ticks += 1;
                // Once a second: a repository deleted under the daemon has
                // nobody left to serve (its database is gone with it).
                if ticks.is_multiple_of(50) && !paths.db().exists() {
                    tracing::info!(repository = %paths.root.display(), "the repository is gone: the sno daemon exits");
                    break true;
                }
                if activity.active.load(Ordering::SeqCst) > 0 {
                    continue;
                }
                let quiet = activity.last.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
                let limit = if served_any { idle } else { idle.max(STARTUP_GRACE) };
                if quiet < limit {
                    continue;
                }
                // No new client finds us once the socket is gone; one that
                // connected just before is served, and then the daemon
                // stays: a daemon serving with no socket would leave the
                // next client waiting for a database it holds.
                let _ = std::fs::remove_file(&sock);
                if !drain(&core, &activity, &listener).await {
                    tracing::info!(idle_secs = idle.as_secs(), "no client: the sno daemon exits");
                    break false;
                }
                tracing::info!("a client came as the daemon was leaving: it stays");
                listener = bind(&sock)?;
            }
            _ = term.recv() => {
                tracing::info!("terminated: the sno daemon exits");
                let _ = std::fs::remove_file(&sock);
                break true;
            }
        }
    };
    // Let the calls in flight finish; a terminated daemon does not wait for
    // its clients to leave (they may stay for hours), only briefly.
    let deadline = Instant::now() + TERMINATE_GRACE;
    while activity.active.load(Ordering::SeqCst) > 0 && (!terminated || Instant::now() < deadline) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if let Some(f) = follower {
        // An index run in progress finishes: its last commit is made
        // durable rather than left for the next run to redo. Terminated, the
        // daemon waits only briefly; an interrupted run is safe to redo.
        if !terminated {
            f.stop().await;
        } else if tokio::time::timeout(TERMINATE_GRACE, f.stop())
            .await
            .is_err()
        {
            tracing::info!("terminated during an index run: the next run redoes it");
            core.stop().await;
            std::process::exit(0);
        }
    }
    core.stop().await;
    Ok(())
}

/// The daemon follows HEAD (unless `[watch] enabled = false`): each commit
/// HEAD moves to is indexed while agents are served, and their next answer
/// is about it.
///
/// A run counts as activity: the daemon does not leave in the middle of one
/// (it would hold the database with its socket gone).
async fn follow(
    paths: &RepoPaths,
    journal: &Arc<sno_journal::Journal>,
    activity: &Arc<Activity>,
) -> Option<crate::watch::Follower> {
    let config = match sno_engine::config::IndexConfig::load(&paths.config()) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "invalid .sno/config.toml: following HEAD with the default [watch] settings");
            Default::default()
        }
    };
    if !config.watch.enabled {
        tracing::info!("[watch] enabled = false: the index does not follow HEAD");
        return None;
    }
    let head_of = journal.clone();
    let indexed: sno_engine::watcher::IndexedHead =
        Arc::new(move || head_of.head().ok().flatten().map(|h| h.commit));
    let run_paths = paths.clone();
    let activity = activity.clone();
    let on_change = move |change: sno_engine::watcher::RepoChanged| {
        let _busy = activity.busy();
        let args = crate::watch::follow_args(&run_paths);
        match crate::commands::index_repository(&run_paths, &args, false) {
            Ok(done) => {
                tracing::info!(
                    head = ?change.head.commit.map(|c| c.short()),
                    commits_indexed = done.summary.run.commits_indexed,
                    files_parsed = done.summary.run.files_parsed,
                    "indexed where HEAD moved"
                );
                crate::drafting::draft_after_index(&run_paths, done.events_before);
            }
            Err(e) => tracing::warn!(
                error = format!("{e:#}"),
                "could not index where HEAD moved; trying again while it stays, less often each time"
            ),
        }
    };
    // A rollback stays while HEAD stays where it was.
    let settled_at = journal.rolled_back_at().ok().flatten().flatten();
    match crate::watch::Follower::start(paths, &config.watch, indexed, settled_at, on_change).await
    {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::warn!(error = %e, "not following the repository");
            None
        }
    }
}

/// How long a terminated daemon gives its connections before it exits.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Serves the connections already queued on a listener whose socket file is
/// gone; whether there were any.
async fn drain(core: &Arc<Core>, activity: &Arc<Activity>, listener: &UnixListener) -> bool {
    let mut any = false;
    while let Ok(Ok((stream, _))) =
        tokio::time::timeout(Duration::from_millis(10), listener.accept()).await
    {
        any = true;
        accept(core, activity, stream);
    }
    any
}

fn accept(core: &Arc<Core>, activity: &Arc<Activity>, stream: UnixStream) {
    let core = core.clone();
    let busy = activity.busy();
    tokio::spawn(async move {
        let _busy = busy;
        if let Err(e) = connection(core, stream).await {
            tracing::warn!(error = %e, "a connection ended with an error");
        }
    });
}

/// Binds the socket; a leftover from a server that died is removed (we hold
/// the database, so no live server can be behind it).
fn bind(sock: &Path) -> anyhow::Result<UnixListener> {
    let _ = std::fs::remove_file(sock);
    Ok(UnixListener::bind(sock)?)
}

/// One connection on the socket: a relayed MCP client or a forwarded CLI
/// command, told apart by the first line.
async fn connection(core: Arc<Core>, stream: UnixStream) -> anyhow::Result<()> {
    let (read, write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut first = Vec::new();
    read.read_until(b'\n', &mut first).await?;
    if first.is_empty() {
        return Ok(());
    }
    if let Some(request) = forward::parse_request(&first) {
        return forward::answer(&core, request, write).await;
    }
    let replay = std::io::Cursor::new(first).chain(read);
    session(core, replay, write).await
}

/// One MCP session over a byte stream, with its own Session actor.
async fn session<R, W>(core: Arc<Core>, read: R, write: W) -> anyhow::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server = tools::SnoServer::new(core).await?;
    let session = server.session_handle();
    let running = match server.serve((read, write)).await {
        Ok(r) => r,
        Err(e) => {
            // No initialize (the client left or spoke no MCP): the session
            // actor must not outlive the connection.
            session.close().await;
            return Err(e.into());
        }
    };
    if let Some(info) = running.peer().peer_info() {
        session.client(format!(
            "{} {}",
            info.client_info.name, info.client_info.version
        ));
    }
    let _ = running.waiting().await;
    session.close().await;
    Ok(())
}
