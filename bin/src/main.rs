//! `sno`: a local, Git-aware code memory for AI coding agents.
//!
//! This crate is thin on purpose: it parses arguments, opens the repository
//! and its journal, starts the actor system when there is work for it, and
//! prints. Everything it prints as JSON is a `sno-protocol` type.

mod cli;
mod commands;
mod drafting;
mod failure;
mod mcp_config;
mod memory_cmd;
mod out;
mod progress;
mod queries;
mod repo;
mod report;
mod search;
mod serve;
mod watch;

use std::process::ExitCode;

use clap::Parser;

// mimalloc for Rust and (below) for tree-sitter: parsing and extraction
// allocate millions of small nodes, and glibc's malloc spent about a sixth
// of `sno init`'s CPU on them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    sno_extract::allocator::use_mimalloc();
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
        tracing::error!("panic: {info}");
    }));
    let json = cli.command.wants_json();
    let result = commands::run(cli.command);
    // The database is held by a running `sno serve`: that process runs the
    // command for us (it owns the database and the writer).
    if let Some(forwarded) = serve::forward::retry_if_locked(&result) {
        return forwarded;
    }
    finish(result, json)
}

/// Prints an error in the contract (and as JSON with --json); the exit code.
fn finish(result: anyhow::Result<ExitCode>, json: bool) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            let contract = failure::contract_of(&err);
            if json {
                out::outln!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({ "error": contract }))
                        .unwrap_or_default()
                );
            }
            out::errln!("error[{}]: {}", contract.code, contract.message);
            out::errln!("  hint: {}", contract.llm_hint);
            if !contract.did_you_mean.is_empty() {
                out::errln!("  did you mean: {}", contract.did_you_mean.join(", "));
            }
            ExitCode::from(1)
        }
    }
}

/// Under `sno serve`, logs also go to `.sno/logs/serve.log`: the client
/// that started the server often hides its stderr.
fn serve_log(cmd: &cli::Command) -> Option<std::fs::File> {
    let (cli::Command::Serve { path } | cli::Command::Daemon { path }) = cmd else {
        return None;
    };
    let paths = repo::RepoPaths::discover(path).ok()?;
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
