//! CLI commands beside a running daemon: the daemon owns the database, so a
//! command that finds it held sends itself over `.sno/sno.sock` as a typed
//! request, and renders the typed answer that comes back.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use sno_engine::RepoPaths;
use sno_protocol::rpc::{Answer, Command, Reply, Request};
use sno_protocol::status::Progress;
use sno_protocol::{ErrorCode, ErrorContract};
use tokio::sync::mpsc::UnboundedSender;

/// How long a command waits for a database another process holds before it
/// reports the lock.
const WAIT: Duration = Duration::from_secs(10);

/// How long the writer lock must stay held before a command reports it: an
/// index run holds it for seconds, a probe for an instant.
const HELD_FOR: Duration = Duration::from_millis(750);

/// What became of a command that found the database held.
#[allow(clippy::large_enum_variant)] // made once per command
pub enum Forwarded {
    /// The daemon ran it.
    Answered(Result<Answer, ErrorContract>),
    /// Nobody holds the database any more: run it here.
    Free,
    /// Another process (an `sno init`) holds it: report the lock.
    Held,
}

/// Sends `cmd` to the repository's daemon, or waits for the database to be
/// free, for up to ten seconds.
/// An index run's progress lines go to `progress`.
pub fn forward(
    paths: &RepoPaths,
    cmd: &Command,
    env: Vec<(String, String)>,
    progress: &UnboundedSender<Progress>,
) -> Forwarded {
    let started = Instant::now();
    let mut held_since: Option<Instant> = None;
    while started.elapsed() < WAIT {
        // The daemon first: it may itself be running an `sno init` (and so
        // hold the writer lock), and still answers other commands.
        if let Ok(stream) =
            std::os::unix::net::UnixStream::connect(crate::daemon::socket_path(paths))
        {
            tracing::info!("the sno daemon holds the database; running the command there");
            let request = Request {
                sno_request: cmd.clone(),
                env,
            };
            return Forwarded::Answered(match exchange(stream, &request, progress) {
                Ok(a) => a,
                Err(e) => Err(lost_reply(paths, &e)),
            });
        }
        // An `sno init` of its own holds the writer lock while it indexes:
        // say so soon (its pid is in the error) rather than wait for it.
        // Soon, not at once: other commands probe the lock for an instant
        // (a dozen readers started together saw each other's probes as a
        // writer and failed).
        if paths.writer_lock_held() {
            let since = *held_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= HELD_FOR {
                return Forwarded::Held;
            }
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        held_since = None;
        if paths.database_free() {
            // Free again (the probe is closed): the command never got past
            // opening the database, so running it again is safe.
            return Forwarded::Free;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Forwarded::Held
}

/// The daemon took the command but gave no answer (it was killed or
/// crashed): whether the command ran is unknown, so say that.
fn lost_reply(paths: &RepoPaths, e: &std::io::Error) -> ErrorContract {
    ErrorCode::ServeLost
        .with(format!(
            "the sno daemon took the command but did not answer: {e}"
        ))
        .hinted(format!(
            "Run the command again; if it changed the index, `sno status` shows whether it \
             took effect. {} may say why the daemon stopped.",
            paths.sno_dir.join("logs/serve.log").display()
        ))
}

/// Sends the request and reads reply lines until the answer.
fn exchange(
    mut stream: std::os::unix::net::UnixStream,
    request: &Request,
    progress: &UnboundedSender<Progress>,
) -> std::io::Result<Result<Answer, ErrorContract>> {
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut reader = std::io::BufReader::new(stream);
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let reply: Reply = serde_json::from_slice(&line)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        match reply {
            Reply::Progress(p) => {
                let _ = progress.send(p);
            }
            Reply::Ok(a) => return Ok(Ok(a)),
            Reply::Err(e) => return Ok(Err(e)),
        }
    }
}
