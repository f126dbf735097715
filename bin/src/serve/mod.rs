//! `sno serve`: the MCP server on stdio.
//!
//! One process per repository owns the database (redb allows one) and the
//! writer. It serves its own stdio and listens on `.sno/sno.sock`; every
//! other `sno serve` on the repository finds the database locked, connects to
//! the socket and relays its stdio there byte for byte, so each client still
//! has its own MCP session. CLI commands that find the database locked send
//! themselves over the same socket and the owner runs them ([`forward`]).
//! The owner stays up until its own client and every relayed one are gone.
//!
//! stdout carries protocol only; logs go to stderr and `.sno/logs/`.

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

/// How long a server waits for a database another sno process holds (an
/// `sno init` running) before it gives up.
const WAIT_FOR_DATABASE: Duration = Duration::from_secs(60);

/// The socket the owning server listens on.
pub fn socket_path(paths: &RepoPaths) -> PathBuf {
    paths.sno_dir.join("sno.sock")
}

/// Serves MCP on stdio until the client goes away.
pub fn serve(path: PathBuf) -> anyhow::Result<std::process::ExitCode> {
    let paths = RepoPaths::discover(&path)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let started = Instant::now();
    loop {
        match crate::commands::open_existing(&paths) {
            Ok(journal) => {
                tracing::info!(pid = std::process::id(), "serving as the database owner");
                return runtime.block_on(owner(paths, journal));
            }
            Err(e) if is_locked(&e) => {
                if let Ok(stream) = std::os::unix::net::UnixStream::connect(socket_path(&paths)) {
                    tracing::info!("the database is owned by another sno serve; relaying to it");
                    return runtime.block_on(relay(stream));
                }
                if started.elapsed() > WAIT_FOR_DATABASE {
                    return Err(e);
                }
                // Another sno (an `init`) holds the database without serving
                // it; it will let go when done.
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(e),
        }
    }
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
    stream.set_nonblocking(true)?;
    let mut sock = UnixStream::from_std(stream)?;
    let mut stdio = tokio::io::join(tokio::io::stdin(), tokio::io::stdout());
    // Ends when the client closes stdin (the owner then ends the session) or
    // the owner goes away.
    let _ = tokio::io::copy_bidirectional(&mut stdio, &mut sock).await;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Connections other than our own stdio, to know when the owner may exit.
static RELAYED: AtomicUsize = AtomicUsize::new(0);

async fn owner(
    paths: RepoPaths,
    journal: Arc<sno_journal::Journal>,
) -> anyhow::Result<std::process::ExitCode> {
    let sock = socket_path(&paths);
    let core = Core::start(paths, journal).await?;
    let listener = bind(&sock)?;
    let accept = {
        let core = core.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let core = core.clone();
                RELAYED.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Err(e) = connection(core, stream).await {
                        tracing::warn!(error = %e, "a relayed connection ended with an error");
                    }
                    RELAYED.fetch_sub(1, Ordering::SeqCst);
                });
            }
        })
    };
    core.warm_up();
    if let Err(e) = session(core.clone(), tokio::io::stdin(), tokio::io::stdout()).await {
        tracing::warn!(error = %e, "the stdio session ended with an error");
    }
    // Our client is gone; stop taking new connections (a new server will own
    // the database once we exit), then wait for the relayed sessions.
    let _ = std::fs::remove_file(&sock);
    accept.abort();
    while RELAYED.load(Ordering::SeqCst) > 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    core.stop().await;
    Ok(std::process::ExitCode::SUCCESS)
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
    let running = server.serve((read, write)).await?;
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
