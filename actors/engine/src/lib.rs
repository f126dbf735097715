//! sno's engine: the supervised actor tree and the operations the front
//! ends (the CLI, the MCP server, the daemon) call.
//!
//! Actors only move messages; the work they do lives in the plumbing
//! crates (`sno-index`, `sno-query`, `sno-agent`, `sno-journal`).
pub mod audit;
pub mod config;
pub mod embedder;
pub mod indexer;
pub mod parser;
pub mod session;
pub mod supervisor;
pub mod watcher;
