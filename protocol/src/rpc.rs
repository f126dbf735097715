//! What a CLI command sends the daemon that holds the database, and what
//! comes back: typed requests and answers, one JSON object per line on
//! `.sno/sno.sock`. The CLI renders the answer as it renders one it computed
//! itself, so a command reads the same whichever process ran it.

use serde::{Deserialize, Serialize};

use crate::audit::AuditRecord;
use crate::context::ContextPackage;
use crate::memory::{DraftsAnswer, LessonUpdated, LessonsAnswer};
use crate::query::{
    ChangesAnswer, GrepAnswer, MapAnswer, OutlineAnswer, RefsAnswer, RefsKind, ShowAnswer,
    SymbolsAnswer,
};
use crate::status::{
    DoctorAnswer, IndexSummary, JournalLog, Progress, ReplayAnswer, RollbackAnswer, StatusReport,
};
use crate::ErrorContract;

/// The first line of a connection that carries a CLI command (an MCP
/// client's first line is JSON-RPC, which has no `sno_request`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    pub sno_request: Command,
    /// The caller's values of the variables a command needs from its own
    /// environment rather than the daemon's (the LLM provider's API key).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

/// A command the daemon runs for a CLI. Paths are absolute or relative to
/// the repository root (the CLI resolves them from its own directory).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    Index {
        rev: Option<String>,
        /// `None`: the configured history; `Some(None)`: all of it.
        history: Option<Option<usize>>,
        max_file_size: Option<u64>,
        workers: Option<usize>,
    },
    Status,
    Doctor {
        repair: bool,
    },
    Replay {
        to: String,
    },
    Rollback {
        to: String,
    },
    JournalLog {
        tail: usize,
        cut_to: usize,
    },
    Audit {
        tail: usize,
    },
    Search {
        query: String,
        max_tokens: usize,
        limit: usize,
        scope: Option<String>,
        lexical_only: bool,
        at: Option<String>,
        #[serde(default)]
        format: crate::context::AnswerFormat,
        #[serde(default)]
        group: crate::context::Grouping,
    },
    Map {
        max_tokens: usize,
        per_file: usize,
        files: usize,
        at: Option<String>,
        #[serde(default)]
        format: crate::context::AnswerFormat,
    },
    Symbols {
        name: String,
        limit: usize,
        at: Option<String>,
    },
    Outline {
        file: String,
        at: Option<String>,
    },
    Show {
        name: String,
        at: Option<String>,
    },
    Refs {
        name: String,
        kind: RefsKind,
        depth: u32,
        at: Option<String>,
    },
    Grep {
        pattern: String,
        limit: usize,
        at: Option<String>,
    },
    Changes {
        from: String,
        to: Option<String>,
    },
    Lessons,
    ReviewLesson {
        id: String,
        approved: bool,
        reviewer: String,
        note: String,
    },
    DraftLessons {
        id: Option<String>,
    },
}

/// What a command answered.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "answer", content = "value", rename_all = "snake_case")]
pub enum Answer {
    Index(Box<IndexSummary>),
    Status(Box<StatusReport>),
    Doctor(DoctorAnswer),
    Replay(ReplayAnswer),
    Rollback(RollbackAnswer),
    JournalLog(JournalLog),
    Audit(Vec<AuditRecord>),
    Search(Box<ContextPackage>),
    Map(MapAnswer),
    Symbols(SymbolsAnswer),
    Outline(OutlineAnswer),
    Show(ShowAnswer),
    Refs(RefsAnswer),
    Grep(GrepAnswer),
    Changes(ChangesAnswer),
    Lessons(LessonsAnswer),
    Lesson(LessonUpdated),
    Drafts(DraftsAnswer),
}

/// The daemon's reply: any number of `progress` lines (an index run's), then
/// one `ok` or `err` line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Progress(Progress),
    Ok(Answer),
    Err(ErrorContract),
}
