//! `sno serve` and the daemon behind it.
//!
//! One process per repository owns the database (redb allows one): the sno
//! daemon (`sno daemon`, started by the first `sno serve` and detached from
//! it), with one long-lived engine. Every `sno serve` is a relay: it copies
//! its stdio to the daemon's socket, `.sno/sno.sock`, line by line
//! ([`crate::relay`]), so each client has its own MCP session with the
//! process that holds the database, and keeps it when that process dies.
//! CLI commands that find the database held send typed requests over the
//! same socket ([`crate::client`]).
//!
//! The daemon keeps its state, search indexes and model loaded between
//! clients, follows HEAD, and exits after `[serve] idle_exit_secs` (default
//! 300) with no client. stdout carries protocol only; logs go to stderr
//! (warnings) and `.sno/logs/serve.log`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use sno_engine::{Engine, RepoPaths};
use sno_protocol::rpc::{Command, Reply, Request};
use sno_protocol::{ErrorCode, ErrorContract};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

/// How long a relay waits for the daemon to take connections, and the
/// daemon for a database another sno process (an `sno init`) holds.
const WAIT_FOR_DATABASE: Duration = Duration::from_secs(60);

/// How long a new daemon waits for its first client before exiting.
const STARTUP_GRACE: Duration = Duration::from_secs(10);

/// How long a terminated daemon gives its connections before it exits.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// The socket the daemon listens on.
pub fn socket_path(paths: &RepoPaths) -> PathBuf {
    paths.sno_dir.join("sno.sock")
}

fn contract(e: sno_engine::Error) -> ErrorContract {
    *e.0
}

/// `sno serve`: relays stdio to the repository's daemon, starting it first
/// when none runs.
pub async fn serve(path: PathBuf) -> Result<ExitCode, ErrorContract> {
    let paths = RepoPaths::discover(&path).map_err(contract)?;
    if !paths.db().exists() {
        return Err(ErrorCode::NotIndexed.with(format!(
            "nothing is indexed yet (no database at {})",
            paths.db().display()
        )));
    }
    let stream = connect(&paths).await?;
    relay(&paths, stream).await
}

/// A connection to the repository's daemon, started first when none runs.
async fn connect(paths: &RepoPaths) -> Result<UnixStream, ErrorContract> {
    let sock = socket_path(paths);
    let started = Instant::now();
    let mut daemon: Option<std::process::Child> = None;
    loop {
        if let Ok(stream) = UnixStream::connect(&sock).await {
            tracing::info!(pid = std::process::id(), "relaying to the sno daemon");
            return Ok(stream);
        }
        match daemon.as_mut() {
            None => daemon = Some(spawn_daemon(paths)?),
            Some(child) => {
                if let Ok(Some(status)) = child.try_wait() {
                    if !status.success() {
                        return Err(daemon_failed(paths, &status.to_string()));
                    }
                    // It found another daemon serving (which then left):
                    // start one again.
                    daemon = None;
                }
            }
        }
        if started.elapsed() > WAIT_FOR_DATABASE {
            return Err(daemon_failed(paths, "it did not open its socket in time"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn daemon_failed(paths: &RepoPaths, why: &str) -> ErrorContract {
    ErrorCode::ServeDaemon
        .with(format!(
            "the sno daemon for {} did not start: {why}",
            paths.root.display()
        ))
        .hinted(format!(
            "Read {} for the reason; `sno doctor` checks the database.",
            paths.sno_dir.join("logs/serve.log").display()
        ))
}

fn spawn_daemon(paths: &RepoPaths) -> Result<std::process::Child, ErrorContract> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| daemon_failed(paths, &e.to_string()))?;
    tracing::info!("starting the sno daemon");
    std::process::Command::new(exe)
        .arg("daemon")
        .arg(&paths.root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Its own process group: a Ctrl-C meant for the client's terminal
        // does not take down the daemon other clients use.
        .process_group(0)
        .spawn()
        .map_err(|e| daemon_failed(paths, &e.to_string()))
}

/// Copies the client's lines to the daemon and the daemon's to the
/// client ([`crate::relay`]). A daemon that dies under the client (its
/// socket left behind) is replaced when the client next asks, and the
/// session opened on the new one; one that left on purpose (terminated,
/// its database made again: it removed its socket) ends the relay with
/// `SNO-SERVE-LOST`. Either way, each unanswered request gets an error.
async fn relay(paths: &RepoPaths, first: UnixStream) -> Result<ExitCode, ErrorContract> {
    use crate::relay::{FromClient, Session};
    let mut stdin = ClientLines::default();
    let mut stdout = tokio::io::stdout();
    let mut session = Session::default();
    let mut stream = first;
    // After a loss: the session to open again, and the client's message
    // that asked for a new daemon.
    let mut reopening = false;
    let mut next: Option<String> = None;
    loop {
        let (from_daemon, mut to_daemon) = stream.into_split();
        let mut from_daemon = BufReader::new(from_daemon).lines();
        // A client that sends `initialize` again opens the session itself.
        let initializes = next.as_deref() == session.reopen().map(|(i, _, _)| i);
        if reopening && !initializes {
            let reopened = reopen(&session, &mut from_daemon, &mut to_daemon);
            if tokio::time::timeout(WAIT_FOR_DATABASE, reopened)
                .await
                .is_err()
            {
                return Err(daemon_failed(
                    paths,
                    "it did not answer the session's initialize",
                ));
            }
        }
        if let Some(line) = next.take() {
            let _ = to_daemon.write_all(format!("{line}\n").as_bytes()).await;
        }
        loop {
            tokio::select! {
                line = stdin.next() => match line {
                    Some(line) => match session.from_client(&line) {
                        FromClient::Skip => {}
                        FromClient::Answer(answer) => write_line(&mut stdout, &answer).await,
                        // A write to a daemon that is gone shows as its
                        // end, read next.
                        FromClient::Forward => {
                            let _ = to_daemon.write_all(format!("{line}\n").as_bytes()).await;
                        }
                    },
                    // The client closed stdin: the daemon finishes the
                    // answers in flight and closes the session.
                    _ => {
                        let _ = to_daemon.shutdown().await;
                        while let Ok(Some(line)) = from_daemon.next_line().await {
                            write_line(&mut stdout, &line).await;
                        }
                        return Ok(ExitCode::SUCCESS);
                    }
                },
                line = from_daemon.next_line() => match line {
                    Ok(Some(line)) => {
                        session.from_daemon(&line);
                        write_line(&mut stdout, &line).await;
                    }
                    _ => break,
                },
            }
        }
        for answer in session.lost() {
            write_line(&mut stdout, &answer).await;
        }
        if !socket_path(paths).exists() {
            return Err(ErrorCode::ServeLost
                .with("the sno daemon left while serving this client (terminated, or its database was made again)")
                .hinted("Start the MCP server again (your client's restart or reconnect); it starts a new daemon."));
        }
        tracing::warn!("the sno daemon died; the client's next message starts another");
        let line = loop {
            match stdin.next().await {
                Some(line) => match session.from_client(&line) {
                    FromClient::Forward => break line,
                    FromClient::Answer(answer) => write_line(&mut stdout, &answer).await,
                    FromClient::Skip => {}
                },
                _ => return Ok(ExitCode::SUCCESS),
            }
        };
        next = Some(line);
        stream = connect(paths).await?;
        reopening = true;
    }
}

/// The client's lines. Bytes that are not UTF-8 become replacement
/// characters (a line that is then no JSON is answered with a parse
/// error) rather than ending the session.
#[derive(Default)]
struct ClientLines {
    buf: Vec<u8>,
    stdin: Option<BufReader<tokio::io::Stdin>>,
}

impl ClientLines {
    /// The next line without its newline; `None` at the end of input.
    /// Cancel safe: a line read in part stays in the buffer for the next
    /// call.
    async fn next(&mut self) -> Option<String> {
        let stdin = self
            .stdin
            .get_or_insert_with(|| BufReader::new(tokio::io::stdin()));
        let n = stdin.read_until(b'\n', &mut self.buf).await.ok()?;
        if n == 0 && self.buf.is_empty() {
            return None;
        }
        let line = String::from_utf8_lossy(&self.buf)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        self.buf.clear();
        Some(line)
    }
}

/// Opens the client's session on a new daemon: its `initialize` again
/// (the answer is the relay's), then its `initialized`.
async fn reopen(
    session: &crate::relay::Session,
    from_daemon: &mut tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    to_daemon: &mut tokio::net::unix::OwnedWriteHalf,
) {
    let Some((initialize, _, initialized)) = session.reopen() else {
        return;
    };
    let _ = to_daemon
        .write_all(format!("{initialize}\n").as_bytes())
        .await;
    while let Ok(Some(line)) = from_daemon.next_line().await {
        if session.answers_initialize(&line) {
            break;
        }
    }
    if let Some(note) = initialized {
        let _ = to_daemon.write_all(format!("{note}\n").as_bytes()).await;
    }
}

async fn write_line(stdout: &mut tokio::io::Stdout, line: &str) {
    let _ = stdout.write_all(format!("{line}\n").as_bytes()).await;
    let _ = stdout.flush().await;
}

/// `sno daemon`: owns the database and serves MCP sessions and forwarded
/// CLI commands on the socket until idle.
pub async fn run(path: PathBuf) -> Result<ExitCode, ErrorContract> {
    let paths = RepoPaths::discover(&path).map_err(contract)?;
    // Before the database opens: it needs nothing from the repository.
    sno_engine::warm_packing(paths.cache_dir());
    let sock = socket_path(&paths);
    let started = Instant::now();
    let journal = loop {
        match sno_journal::Journal::open_existing(&paths.db()) {
            Ok(j) => break Arc::new(j),
            Err(sno_journal::JournalError::Locked { .. }) => {
                if UnixStream::connect(&sock).await.is_ok() {
                    tracing::info!("another sno daemon serves this repository");
                    return Ok(ExitCode::SUCCESS);
                }
                if started.elapsed() > WAIT_FOR_DATABASE {
                    return Err(ErrorCode::Locked
                        .with("the sno database stayed held by another sno process"));
                }
                // An `sno init` (or a daemon on its way out) holds it.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(contract(e.into())),
        }
    };
    tracing::info!(pid = std::process::id(), "sno daemon owns the database");
    sno_engine::purge_soon_after_answers();
    // A broken config file is reported by `sno init` and `sno status`; the
    // daemon keeps serving with defaults rather than refusing to start.
    let config = sno_engine::config::IndexConfig::load(&paths.config()).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "ignoring an invalid .sno/config.toml");
        Default::default()
    });
    let engine =
        Arc::new(Engine::with_journal(paths.clone(), config, journal, None).map_err(contract)?);
    serve_daemon(engine).await.map_err(contract)?;
    Ok(ExitCode::SUCCESS)
}

/// How long the daemon stays with no client: `SNO_SERVE_IDLE_SECS`, then
/// `[serve] idle_exit_secs`, then 300 s.
fn idle_limit(engine: &Engine) -> Duration {
    let secs = std::env::var("SNO_SERVE_IDLE_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .or(engine.config().serve.idle_exit_secs)
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

async fn serve_daemon(engine: Arc<Engine>) -> sno_engine::Result<()> {
    let paths = engine.paths().clone();
    let sock = socket_path(&paths);
    let mut listener = bind(&sock)?;
    // The head's search indexes and the model, before the first question.
    prepare_head_aside(engine.clone(), "search index ready");
    let idle = idle_limit(&engine);
    let activity = Arc::new(Activity {
        active: AtomicUsize::new(0),
        last: std::sync::Mutex::new(Instant::now()),
    });
    let follower = follow(&engine, &activity).await;
    // The database this daemon opened, by identity: one deleted and made
    // again (`rm -rf .sno` and a new `sno init`) between two looks is
    // another database, which this daemon must neither serve nor lock.
    let opened = database_identity(&paths.db());
    let mut served_any = false;
    let mut ticks: u64 = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let terminated = loop {
        tokio::select! {
            r = listener.accept() => {
                if let Ok((stream, _)) = r {
                    served_any = true;
                    accept(&engine, &activity, stream);
                }
            }
            _ = tick.tick() => {
                ticks += 1;
                // Once a second: a repository deleted under the daemon has
                // nobody left to serve (its database is gone with it).
                if ticks.is_multiple_of(50) {
                    let now = database_identity(&paths.db());
                    if now.is_none() {
                        tracing::info!(repository = %paths.root.display(), "the repository is gone: the sno daemon exits");
                        break true;
                    }
                    if now != opened {
                        tracing::info!(repository = %paths.root.display(), "the database was made again by another process: the sno daemon exits");
                        break true;
                    }
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
                if !drain(&engine, &activity, &listener).await {
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
            engine.stop().await;
            std::process::exit(0);
        }
    }
    engine.stop().await;
    Ok(())
}

/// The file's identity (device and inode), `None` when it is missing.
fn database_identity(db: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(db).ok().map(|m| (m.dev(), m.ino()))
}

/// Makes the indexed head's search parts on a thread of their own, and
/// logs `ready` when they are.
fn prepare_head_aside(engine: Arc<Engine>, ready: &'static str) {
    std::thread::spawn(move || {
        let _purge = sno_engine::PurgeAtOnce::start();
        let t = Instant::now();
        match engine.read().prepare_head() {
            Ok(_) => tracing::info!(ms = t.elapsed().as_millis() as u64, "{ready}"),
            Err(e) => tracing::warn!(error = %e, "could not prepare the search index"),
        }
    });
}

/// The daemon follows HEAD (unless `[watch] enabled = false`): each commit
/// HEAD moves to is indexed while agents are served, and their next answer
/// is about it. A run counts as activity: the daemon does not leave in the
/// middle of one (it would hold the database with its socket gone).
async fn follow(
    engine: &Arc<Engine>,
    activity: &Arc<Activity>,
) -> Option<sno_engine::follow::Follower> {
    let activity = activity.clone();
    let ahead = Arc::downgrade(engine);
    let hooks = sno_engine::follow::FollowHooks {
        // A run purges freed memory at once: its peak is the daemon's.
        started: Arc::new(move || {
            Box::new((activity.busy(), sno_engine::PurgeAtOnce::start())) as Box<dyn Send>
        }),
        indexed: Arc::new(move |change, done| match done {
            Ok(s) => {
                tracing::info!(
                    head = ?change.head.commit.map(|c| c.short()),
                    commits_indexed = s.commits_indexed,
                    files_parsed = s.files_parsed,
                    "indexed where HEAD moved"
                );
                // The new head's search parts (its lexical index and
                // vectors, advanced from the previous head's), made now
                // rather than by the next `search`, which would wait for
                // them: a commit is searchable as soon as it is indexed.
                // A search arriving meanwhile waits for this one's work
                // rather than repeating it.
                if let Some(engine) = ahead.upgrade() {
                    prepare_head_aside(engine, "the new head's search index is ready");
                }
            }
            Err(e) => tracing::warn!(
                error = %e,
                "could not index where HEAD moved; trying again while it stays, less often each time"
            ),
        }),
    };
    match engine.follow(hooks).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(error = %e, "not following the repository");
            None
        }
    }
}

/// Serves the connections already queued on a listener whose socket file is
/// gone; whether there were any.
async fn drain(engine: &Arc<Engine>, activity: &Arc<Activity>, listener: &UnixListener) -> bool {
    let mut any = false;
    while let Ok(Ok((stream, _))) =
        tokio::time::timeout(Duration::from_millis(10), listener.accept()).await
    {
        any = true;
        accept(engine, activity, stream);
    }
    any
}

fn accept(engine: &Arc<Engine>, activity: &Arc<Activity>, stream: UnixStream) {
    let engine = engine.clone();
    let busy = activity.busy();
    tokio::spawn(async move {
        let _busy = busy;
        if let Err(e) = connection(engine, stream).await {
            tracing::warn!(error = %e, "a connection ended with an error");
        }
    });
}

/// Binds the socket; a leftover from a server that died is removed (we hold
/// the database, so no live server can be behind it).
fn bind(sock: &Path) -> sno_engine::Result<UnixListener> {
    let _ = std::fs::remove_file(sock);
    Ok(UnixListener::bind(sock)?)
}

/// One connection on the socket: a relayed MCP client or a CLI command,
/// told apart by the first line.
async fn connection(engine: Arc<Engine>, stream: UnixStream) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut first = Vec::new();
    read.read_until(b'\n', &mut first).await?;
    if first.is_empty() {
        return Ok(());
    }
    if let Ok(request) = serde_json::from_slice::<Request>(&first) {
        // Progress lines go out while the command runs; the caller renders
        // them as its own.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let indexes = matches!(request.sno_request, Command::Index { .. });
        let since = sno_journal::model::Seq(engine.journal().len().unwrap_or(0));
        let run = engine.execute_with_progress(request.sno_request, request.env, Some(tx));
        tokio::pin!(run);
        let reply = loop {
            tokio::select! {
                answer = &mut run => break answer,
                Some(p) = rx.recv() => send_line(&mut write, &Reply::Progress(p)).await?,
            }
        };
        while let Ok(p) = rx.try_recv() {
            send_line(&mut write, &Reply::Progress(p)).await?;
        }
        if indexes && reply.is_ok() {
            engine.draft_after_index(since).await;
        }
        let reply = match reply {
            Ok(a) => Reply::Ok(a),
            Err(e) => Reply::Err(*e.0),
        };
        send_line(&mut write, &reply).await?;
        return write.shutdown().await;
    }
    let replay = std::io::Cursor::new(first).chain(read);
    session(engine, replay, write).await
}

async fn send_line<W: AsyncWrite + Unpin>(write: &mut W, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(reply)?;
    line.push(b'\n');
    write.write_all(&line).await
}

/// One MCP session over a byte stream, with its own session actor.
async fn session<R, W>(engine: Arc<Engine>, read: R, write: W) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server = crate::mcp::SnoServer::new(engine)
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let session = server.session_handle();
    let running = match server.serve((read, write)).await {
        Ok(r) => r,
        Err(e) => {
            // No initialize (the client left or spoke no MCP): the session
            // actor must not outlive the connection.
            session.close().await;
            return Err(std::io::Error::other(e.to_string()));
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
