//! sno's engine: one repository's journal, read model and supervised actor
//! tree, and the typed operations every front end (the CLI, the MCP server,
//! the daemon) calls and only renders.
//!
//! Actors only move messages; the work they do lives in the plumbing
//! crates (`sno-index`, `sno-query`, `sno-agent`, `sno-journal`).

pub mod agent;
pub mod audit;
pub mod config;
pub mod embedder;
mod engine;
pub mod error;
pub mod follow;
pub mod history;
pub mod indexer;
pub mod lookup;
pub mod memory;
pub mod model;
pub mod parser;
pub mod read;
pub mod repo;
pub mod rpc;
pub mod search;
pub mod session;
pub mod status;
pub mod supervisor;
pub mod syntax;
pub mod test_hooks;
pub mod watcher;
pub mod writer;
pub mod writes;

pub use engine::{model_spec, Engine, Open, DEFAULT_MODEL};
pub use error::{Error, Result};
pub use repo::RepoPaths;

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
