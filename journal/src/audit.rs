//! Audit records: what each run did. Kept beside the journal, not in it: they
//! describe work, not repository state, and are never replayed.

use serde::{Deserialize, Serialize};

use crate::model::CommitId;

/// One audit entry.
#[derive(Clone, PartialEq, Serialize, Deserialize, Debug)]
pub struct AuditRecord {
    /// Milliseconds since the epoch.
    pub time_ms: u64,
    pub entry: AuditEntry,
}

/// What an audit entry records.
#[derive(Clone, PartialEq, Serialize, Deserialize, Debug)]
pub enum AuditEntry {
    IndexRun(IndexRun),
    ToolCall(ToolCall),
    Retrieval(Retrieval),
    /// Last: bincode tags variants by position.
    LlmCall(LlmCall),
}

/// One call to an LLM provider (the agent's work).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct LlmCall {
    /// What it was for, e.g. `lesson lsn_…`.
    pub purpose: String,
    pub model: String,
    pub endpoint: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub latency_ms: u64,
    /// The error code, `None` when a usable answer came.
    pub error: Option<String>,
}

/// One MCP tool call.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct ToolCall {
    /// The session (a ULID).
    pub session: String,
    pub tool: String,
    /// xxh3-64 of the arguments' JSON, hex: equal calls have equal digests,
    /// and no argument text is kept.
    pub args_digest: String,
    pub result_bytes: u64,
    pub latency_us: u64,
    /// The error code, `None` when the call succeeded.
    pub error: Option<String>,
}

/// One retrieval (a search answered).
#[derive(Clone, PartialEq, Serialize, Deserialize, Debug)]
pub struct Retrieval {
    pub session: String,
    pub query: String,
    pub hits: u32,
    /// The fused score of the best hit (0 with no hit).
    pub top_score: f32,
    pub latency_us: u64,
}

/// The outcome of one indexing run.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug, Default)]
pub struct IndexRun {
    pub pid: u32,
    pub started_ms: u64,
    pub finished_ms: u64,
    /// The commit the run brought the index to.
    pub target: Option<CommitId>,
    pub commits_indexed: u32,
    pub files_parsed: u64,
    /// Files the parser failed on, with the reason.
    pub failures: Vec<(String, String)>,
    pub skipped_binary: u64,
    pub skipped_too_large: u64,
    pub skipped_unsupported: u64,
    pub skipped_ignored: u64,
    /// Files never admitted because they hold secrets by their nature. Their
    /// paths are not recorded.
    pub excluded_secrets: u64,
    /// `completed`, or the error that stopped the run.
    pub outcome: String,
}
