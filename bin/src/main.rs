//! `sno`: a local, Git-aware code memory for AI coding agents.
//!
//! This crate is a front end, thin on purpose: it parses arguments, asks
//! the engine (`sno-engine`) — its own, or the daemon's over the socket —
//! and renders the typed answers. The MCP server and the daemon are front
//! ends over the same engine. Everything it prints as JSON is a
//! `sno-protocol` type.

mod cli;
mod commands;
mod mcp_config;
mod out;
mod progress;
mod render;
mod watch;

use std::process::ExitCode;

use clap::Parser;

// mimalloc for Rust and (below) for tree-sitter: parsing and extraction
// allocate millions of small nodes, and glibc's malloc spent about a sixth
// of `sno init`'s CPU on them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    sno_engine::use_mimalloc();
    let cli = cli::Cli::parse();
    init_logging(cli.verbose, serve_log(&cli.command));
    // A panic inside an actor is caught and handled by its supervisor; say it
    // in one log line instead of a backtrace over the user's terminal.
    std::panic::set_hook(Box::new(|info| {
        // `sno grep ... | head` closes stdout early: that is the reader's
        // choice, not an error (std's println! panics on EPIPE).
        if info.to_string().contains("failed printing to stdout") {
            std::process::exit(0);
        }
        // redb asserts its pages' invariants: its panic means a damaged
        // file, which the error that follows says (the panic is for -vv).
        if info.location().is_some_and(|l| l.file().contains("redb")) {
            render::STORAGE_PANICKED.store(true, std::sync::atomic::Ordering::Relaxed);
            tracing::debug!("panic: {info}");
            return;
        }
        tracing::error!("panic: {info}");
    }));
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(2);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let c =
                sno_protocol::ErrorCode::Internal.with(format!("starting the async runtime: {e}"));
            return render::error(&c, cli.command.wants_json());
        }
    };
    let json = cli.command.wants_json();
    // A panic on this thread (the command's own, not an actor's) still
    // ends in an error with a code and a hint, not a bare exit 101.
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(commands::run(cli.command))
    }))
    .unwrap_or_else(|_| {
        let c = sno_protocol::ErrorCode::Internal.with("sno stopped on an internal error");
        render::error(&c, json)
    });
    // A relay's stdin reader may still be blocked in a read: do not wait.
    runtime.shutdown_background();
    code
}

/// Under `sno serve`, logs also go to `.sno/logs/serve.log`: the client
/// that started the server often hides its stderr.
fn serve_log(cmd: &cli::Command) -> Option<std::fs::File> {
    let (cli::Command::Serve { path } | cli::Command::Daemon { path }) = cmd else {
        return None;
    };
    let paths = sno_engine::RepoPaths::discover(path).ok()?;
    let dir = paths.sno_dir.join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("serve.log"))
        .ok()
}

fn init_logging(verbose: u8, file: Option<std::fs::File>) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SNO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // stdout is reserved for results (and for the protocol under `sno serve`).
    match file {
        Some(f) => {
            use tracing_subscriber::fmt::writer::MakeWriterExt;
            let filter = tracing_subscriber::EnvFilter::try_from_env("SNO_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                .with_writer(
                    std::io::stderr
                        .with_max_level(tracing::Level::WARN)
                        .and(std::sync::Mutex::new(f)),
                )
                .try_init();
        }
        None => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .try_init();
        }
    }
}
