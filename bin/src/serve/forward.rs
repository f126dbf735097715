//! CLI commands beside a running server.
//!
//! A server owns the database, so a CLI command that finds it locked sends
//! its arguments (and working directory) over `.sno/sno.sock`; the server
//! runs the command in its own process, against the database it holds, and
//! sends back stdout, stderr and the exit code. The user sees the same output
//! as if the command had run locally.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use super::core::Core;
use crate::cli::Cli;
use crate::repo::RepoPaths;

/// What a CLI sends.
#[derive(Serialize, Deserialize)]
pub struct Request {
    /// The command line, program name first.
    pub sno_cli: Vec<String>,
    /// The directory relative paths are relative to.
    pub cwd: PathBuf,
    /// The caller's values of the few variables a command needs from its
    /// environment rather than the daemon's: the LLM provider's API key
    /// (`[agent] api_key_env`).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The variables carry an API key: their names only.
        let env: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Request")
            .field("sno_cli", &self.sno_cli)
            .field("cwd", &self.cwd)
            .field("env", &env)
            .finish()
    }
}

thread_local! {
    /// The forwarded caller's variables, while the daemon runs its command.
    static CALLER_ENV: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A variable of the environment the command was run from: the caller's
/// when the daemon runs it for a CLI, else this process's.
pub fn env_var(name: &str) -> Option<String> {
    CALLER_ENV
        .with(|e| {
            e.borrow()
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
        .or_else(|| std::env::var(name).ok())
}

/// The caller's variables a forwarded `sno lessons draft` needs.
fn caller_env(paths: &RepoPaths) -> Vec<(String, String)> {
    let Ok(config) = sno_engine::config::IndexConfig::load(&paths.config()) else {
        return Vec::new();
    };
    config
        .agent
        .api_key_env
        .into_iter()
        .filter_map(|var| std::env::var(&var).ok().map(|v| (var, v)))
        .collect()
}

/// What the server sends back.
#[derive(Serialize, Deserialize, Debug)]
pub struct Reply {
    pub code: u8,
    pub stdout: String,
    pub stderr: String,
}

/// The request on a socket's first line, if it is one (else it is MCP).
pub fn parse_request(line: &[u8]) -> Option<Request> {
    serde_json::from_slice(line).ok()
}

/// How long a command waits for a database another process holds before it
/// reports the lock.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// When `result` failed because another process holds the database: runs
/// the same command line through the sno daemon when one serves the
/// repository, or again here once the holder (a daemon on its way out, an
/// `sno init`) lets go. `None` leaves the error to be reported.
pub fn retry_if_locked(result: &anyhow::Result<ExitCode>) -> Option<ExitCode> {
    let Err(e) = result else { return None };
    if !super::is_locked(e) {
        return None;
    }
    let argv: Vec<String> = std::env::args().collect();
    let mut cli = Cli::try_parse_from(&argv).ok()?;
    if cli.command.runs_in_its_own_process() {
        return None;
    }
    let paths = RepoPaths::discover(&cli.command.repo_path()).ok()?;
    let started = std::time::Instant::now();
    while started.elapsed() < WAIT {
        // The daemon first: it may itself be running an `sno init` (and so
        // hold the writer lock), and still answers other commands.
        if let Ok(stream) = std::os::unix::net::UnixStream::connect(super::socket_path(&paths)) {
            tracing::info!("the sno daemon holds the database; running the command there");
            let request = Request {
                sno_cli: argv,
                cwd: std::env::current_dir().ok()?,
                env: if matches!(
                    cli.command,
                    crate::cli::Command::Lessons {
                        command: crate::cli::LessonsCommand::Draft { .. }
                    }
                ) {
                    caller_env(&paths)
                } else {
                    Vec::new()
                },
            };
            return Some(match exchange(stream, &request) {
                Ok(reply) => {
                    crate::out::out!("{}", reply.stdout);
                    crate::out::write(crate::out::Stream::Err, format_args!("{}", reply.stderr));
                    ExitCode::from(reply.code)
                }
                Err(e) => crate::finish(Err(lost_reply(&paths, e)), cli.command.wants_json()),
            });
        }
        // An `sno init` of its own holds the writer lock while it indexes:
        // say so now (its pid is in the error) rather than wait for it.
        if sno_journal::lock::WriterLock::is_held(&paths.sno_dir) {
            return None;
        }
        if sno_journal::Journal::open_existing(&paths.db()).is_ok() {
            // Free again (the probe is closed): the command never got past
            // opening the database, so running it again is safe.
            let cli = Cli::try_parse_from(&argv).ok()?;
            let json = cli.command.wants_json();
            let again = crate::commands::run(cli.command);
            return Some(crate::finish(again, json));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// The daemon took the command but gave no answer (it was killed or
/// crashed): whether the command ran is unknown, so say that.
fn lost_reply(paths: &RepoPaths, e: anyhow::Error) -> anyhow::Error {
    sno_protocol::ErrorContract::new(
        "SNO-SERVE-LOST",
        format!("the sno daemon took the command but did not answer: {e}"),
        format!(
            "Run the command again; if it changed the index, `sno status` shows whether it \
             took effect. {} may say why the daemon stopped.",
            paths.sno_dir.join("logs/serve.log").display()
        ),
        sno_protocol::Fixability::Easy,
    )
    .into()
}

fn exchange(
    mut stream: std::os::unix::net::UnixStream,
    request: &Request,
) -> anyhow::Result<Reply> {
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut reader = std::io::BufReader::new(stream);
    let mut answer = Vec::new();
    reader.read_until(b'\n', &mut answer)?;
    Ok(serde_json::from_slice(&answer)?)
}

/// Runs a forwarded command in this (the owning) process and answers.
pub async fn answer(
    _core: &Arc<Core>,
    request: Request,
    mut write: tokio::net::unix::OwnedWriteHalf,
) -> anyhow::Result<()> {
    // Commands start their own runtimes and block: give them a thread.
    let reply = tokio::task::spawn_blocking(move || run(request)).await?;
    let mut line = serde_json::to_vec(&reply)?;
    line.push(b'\n');
    write.write_all(&line).await?;
    write.shutdown().await?;
    Ok(())
}

fn run(request: Request) -> Reply {
    let thread = std::thread::spawn(move || {
        CALLER_ENV.with(|e| *e.borrow_mut() = request.env.clone());
        let (code, out, err) = crate::out::capture(|| {
            match Cli::try_parse_from(&request.sno_cli) {
                Ok(cli) if cli.command.runs_in_its_own_process() => {
                    // A server inside the daemon would take over its stdio.
                    crate::out::errln!(
                        "error[SNO-BAD-ARGS]: the sno daemon does not run `serve`, `daemon` or `watch` for a client"
                    );
                    ExitCode::from(2)
                }
                Ok(mut cli) => {
                    cli.command.rebase(&request.cwd);
                    let json = cli.command.wants_json();
                    let result = crate::commands::run(cli.command);
                    crate::finish(result, json)
                }
                Err(e) => {
                    crate::out::errln!("{e}");
                    ExitCode::from(2)
                }
            }
        });
        // ExitCode is opaque: compare against the codes commands use.
        let code = [0u8, 1, 2]
            .into_iter()
            .find(|c| ExitCode::from(*c) == code)
            .unwrap_or(1);
        Reply {
            code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        }
    });
    thread.join().unwrap_or_else(|_| Reply {
        code: 1,
        stdout: String::new(),
        stderr: "error[SNO-INTERNAL]: the server failed running the command\n".into(),
    })
}
