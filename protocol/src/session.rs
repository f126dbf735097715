//! MCP sessions as agents see them.

use serde::{Deserialize, Serialize};

/// `session_info`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub client: String,
    pub started_ms: u64,
    pub last_ms: u64,
    pub calls: u64,
    pub errors: u64,
    pub cache_hits: u64,
    /// Context tokens last reported in use, and the capacity.
    pub context: Option<(u64, u64)>,
    /// Whether it is the asking connection's session.
    pub current: bool,
    pub server_pid: u32,
}

/// One call of a session's transcript.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Call {
    pub time_ms: u64,
    pub tool: String,
    pub args_digest: String,
    pub args_preview: String,
    pub error: Option<String>,
    pub result_bytes: u64,
    pub latency_us: u64,
    pub cache_hit: bool,
}

/// `session_history`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionHistory {
    pub id: String,
    /// Oldest first.
    pub calls: Vec<Call>,
}
