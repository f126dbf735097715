//! sno's actor system and the logic it drives: reading git, admitting files,
//! parsing, resolving edges and writing the journal.
//!
//! Pure logic lives in its own modules (`admission`, `record`, `resolve`,
//! `indexing`) so it is testable without a runtime; the actors (`parser`,
//! `indexer`, `audit`, `supervisor`) only move messages and call it.
pub mod admission;
pub mod agent;
pub mod audit;
pub mod config;
pub mod confine;
pub mod embedder;
pub mod git;
pub mod indexer;
pub mod indexing;
pub mod parser;
pub mod record;
pub mod resolve;
pub mod session;
pub mod supervisor;
pub mod watcher;
