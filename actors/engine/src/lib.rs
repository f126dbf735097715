//! sno's engine: one repository's journal, read model and supervised actor
//! tree, and the typed operations every front end (the CLI, the MCP server,
//! the daemon) calls and only renders.
//!
//! Actors only move messages; the work they do lives in the plumbing
//! crates (`sno-index`, `sno-query`, `sno-agent`, `sno-journal`).

mod activity;
pub mod agent;
pub mod audit;
mod background;
pub mod client_config;
pub mod config;
pub mod embedder;
mod engine;
pub mod error;
pub mod follow;
pub mod history;
pub mod indexer;
pub mod lookup;
mod masking;
pub mod memory;
pub mod model;
pub mod parser;
pub mod read;
pub mod repo;
pub mod rpc;
pub mod search;
pub mod session;
mod state_dir;
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
pub use sno_journal::memory::limits;
pub use sno_journal::model::{CommitId, Seq};

/// Installs mimalloc's per-thread scratch heaps for the parsers (the
/// binary's global allocator must be mimalloc), and turns transparent huge
/// pages off for the process
/// ([`sno_extract::allocator::transparent_huge_pages_off`]).
pub fn use_mimalloc() {
    sno_extract::allocator::use_mimalloc();
    sno_extract::allocator::transparent_huge_pages_off();
}

/// A long-lived server's setting: memory an answer freed goes back to the
/// OS soon after it ([`sno_extract::allocator::purge_soon_after_answers`]).
pub fn purge_soon_after_answers() {
    sno_extract::allocator::purge_soon_after_answers();
}

pub use sno_extract::allocator::PurgeAtOnce;

/// Loads the token counter's tables (from the copy in `cache_dir` after
/// the first time) and compiles the secret rules, on a thread of their own
/// ([`sno_query::pack::warm`]): the longest loads before a first answer,
/// and they need nothing from the repository.
pub fn warm_packing(cache_dir: std::path::PathBuf) {
    sno_query::cl100k::cache_table_in(cache_dir);
    // The same once-only start a search makes, so the daemon's first
    // search does not start a second warm-up beside this one.
    sno_query::pack::warm_in_background();
}

/// Whether a model spec (a directory or a Hugging Face id) is on this
/// machine, and the name a server started elsewhere should be given.
pub fn model_offline(spec: &str) -> (String, bool) {
    let name = sno_query::semantic::source_name(spec);
    let here = sno_query::semantic::available_offline(&name);
    (name, here)
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
