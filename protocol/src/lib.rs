//! The shapes sno shows to people and agents: the error contract and reports.
//! Types and (de)serialization only; no other crate invents a JSON shape.

pub mod audit;
pub mod client_config;
pub mod context;
pub mod error;
pub mod memory;
pub mod query;
pub mod rpc;
pub mod session;
pub mod status;
pub mod terminal;
pub mod tools;

pub use error::{ErrorCode, ErrorContract, Fixability};

/// The one JSON encoding of answers that leave the process: compact, as
/// the MCP server sends them, so the size a budget is checked against is
/// the size sent.
pub fn to_wire<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
