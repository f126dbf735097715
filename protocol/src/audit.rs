//! `sno audit`: what sno did, as records.

use serde::{Deserialize, Serialize};

/// One audit record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AuditRecord {
    /// Milliseconds since the epoch.
    pub time_ms: u64,
    pub entry: AuditEntry,
}

/// What an audit record records.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum AuditEntry {
    IndexRun(IndexRun),
    ToolCall(ToolCall),
    Retrieval(Retrieval),
    LlmCall(LlmCall),
}

/// One indexing run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct IndexRun {
    pub pid: u32,
    pub started_ms: u64,
    pub finished_ms: u64,
    pub target: Option<String>,
    pub commits_indexed: u32,
    pub files_parsed: u64,
    /// (path, reason) of each file the parser failed on.
    pub failures: Vec<(String, String)>,
    pub skipped_binary: u64,
    pub skipped_too_large: u64,
    pub skipped_unsupported: u64,
    pub skipped_ignored: u64,
    pub excluded_secrets: u64,
    pub outcome: String,
}

/// One MCP tool call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ToolCall {
    pub session: String,
    pub tool: String,
    pub args_digest: String,
    pub result_bytes: u64,
    pub latency_us: u64,
    pub error: Option<String>,
}

/// One search answered.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Retrieval {
    pub session: String,
    pub query: String,
    pub hits: u32,
    pub top_score: f32,
    pub latency_us: u64,
}

/// One call to the LLM provider.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LlmCall {
    pub purpose: String,
    pub model: String,
    pub endpoint: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub latency_ms: u64,
    pub error: Option<String>,
}
