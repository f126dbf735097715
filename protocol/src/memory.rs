//! Agent memory as agents and people see it: checkpoints, decisions and
//! lessons, each bound to the branch and commit it was made on.

use serde::{Deserialize, Serialize};

/// Where a memory was made.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Binding {
    pub branch: Option<String>,
    pub commit: Option<String>,
    /// The MCP session (a ULID) or `cli`.
    pub session: String,
}

/// A saved checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Checkpoint {
    pub seq: u64,
    pub written_ms: u64,
    pub id: String,
    pub bound: Binding,
    pub name: String,
    pub summary: String,
    pub files: Vec<String>,
    pub tokens_used: Option<u64>,
}

/// A logged decision.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Decision {
    pub seq: u64,
    pub written_ms: u64,
    pub id: String,
    pub bound: Binding,
    pub title: String,
    pub rationale: String,
    pub files: Vec<String>,
}

/// An agent's analysis of a lesson.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Analysis {
    pub lesson: String,
    pub bound: Binding,
    pub analysis: String,
    pub rule: String,
}

/// A human's verdict on a lesson.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Review {
    pub lesson: String,
    pub approved: bool,
    pub reviewer: String,
    pub note: String,
}

/// A lesson drawn from a revert, with its analyses and review.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Lesson {
    pub seq: u64,
    pub written_ms: u64,
    pub id: String,
    /// `commit` is the revert commit.
    pub bound: Binding,
    pub reverted: Option<String>,
    pub summary: String,
    pub files: Vec<String>,
    /// `proposed`, `analysed`, `approved` or `rejected`.
    pub status: String,
    /// Newest last.
    pub analyses: Vec<Analysis>,
    pub review: Option<Review>,
}

/// A lesson as a rule to follow (approved lessons in answers).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LessonRule {
    pub id: String,
    pub rule: Option<String>,
    pub summary: String,
    pub files: Vec<String>,
    pub bound: Binding,
    pub review: Option<Review>,
}

/// Where a page of a list is.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Page {
    pub total: usize,
    pub offset: usize,
    pub returned: usize,
    /// The `offset` of the next page, `None` on the last.
    pub next_offset: Option<usize>,
}

/// `list_decisions`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DecisionsAnswer {
    pub decisions: Vec<Decision>,
    pub page: Page,
}

/// `get_approved_memory`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ApprovedMemory {
    pub lessons: Vec<LessonRule>,
    pub decisions: Vec<Decision>,
    pub page: Page,
}

/// `get_pending_memory`, `sno lessons list`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LessonsAnswer {
    pub lessons: Vec<Lesson>,
    pub page: Page,
}

/// `create_checkpoint`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CheckpointCreated {
    pub checkpoint: Checkpoint,
    pub seq: u64,
}

/// `restore_checkpoint`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CheckpointRestored {
    pub checkpoint: Checkpoint,
    pub decisions_since: Vec<Decision>,
    pub head: Option<crate::query::AsOfCommit>,
    /// Whether the indexed commit moved since the checkpoint.
    pub head_moved: bool,
}

/// `log_decision`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DecisionLogged {
    pub decision: Decision,
    pub seq: u64,
}

/// `submit_lesson_analysis`, `sno lessons approve|reject|draft`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LessonUpdated {
    pub lesson: Option<Lesson>,
    pub seq: u64,
}

/// `signal_low_context`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextAdvice {
    pub used_share: f64,
    pub threshold: f64,
    pub recommend_checkpoint: bool,
    pub advice: String,
}

/// One lesson analysis the LLM provider drafted.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Draft {
    pub id: String,
    pub analysis: String,
    pub rule: String,
    pub model: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub latency_ms: u64,
}

/// `sno lessons draft`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DraftsAnswer {
    pub drafted: Vec<Draft>,
}
