//! The layout of format versions 1 to 3, frozen: what every journal written
//! before format 4 holds. Only the types whose layout changed in format 4
//! are defined here (edges had no certainty, files no count of masked
//! secrets, and so the deltas and events holding them); the rest are read
//! through [`current`](super::current)'s definitions, which they still match.
//!
//! Upcasting fills what format 4 added with what an older build meant: every
//! resolved edge was labelled exact, and nothing was masked.

use serde::{Deserialize, Serialize};

use super::current::{
    symbols, BranchMovedDef, CheckpointCreatedDef, DecisionLoggedDef, EdgeTargetDef, FileRefsDef,
    FileStateDef, LessonAnalysisSubmittedDef, LessonProposedDef, LessonReviewedDef,
};
use crate::event as domain;
use crate::memory::{
    CheckpointCreated, DecisionLogged, LessonAnalysisSubmitted, LessonProposed, LessonReviewed,
};
use crate::model::{
    BlobId, Certainty, CommitId, Diagnostic, EdgeKind, EdgeTarget, FileRefs, FileState, Language,
    Symbol, SymbolId,
};

#[derive(Serialize, Deserialize)]
pub(crate) struct Envelope {
    pub version: u16,
    pub prev_hash: u64,
    pub written_ms: u64,
    pub event: Event,
}

#[derive(Serialize, Deserialize)]
pub(crate) enum Event {
    CommitIndexed(CommitIndexed),
    BranchMoved(#[serde(with = "BranchMovedDef")] domain::BranchMoved),
    CheckpointCreated(#[serde(with = "CheckpointCreatedDef")] CheckpointCreated),
    DecisionLogged(#[serde(with = "DecisionLoggedDef")] DecisionLogged),
    LessonProposed(#[serde(with = "LessonProposedDef")] LessonProposed),
    LessonAnalysisSubmitted(#[serde(with = "LessonAnalysisSubmittedDef")] LessonAnalysisSubmitted),
    LessonReviewed(#[serde(with = "LessonReviewedDef")] LessonReviewed),
    RolledBack(RolledBack),
}

#[derive(Serialize, Deserialize)]
pub(crate) struct CommitIndexed {
    pub commit: CommitId,
    pub parents: Vec<CommitId>,
    pub branch: Option<String>,
    pub summary: String,
    pub time: i64,
    pub base: Option<CommitId>,
    pub deltas: Vec<FileDelta>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct RolledBack {
    pub from: Option<CommitId>,
    pub to: CommitId,
    pub branch: Option<String>,
    pub git_head: Option<CommitId>,
    pub deltas: Vec<FileDelta>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FileDelta {
    pub path: String,
    pub change: FileChange,
    pub symbols_removed: Vec<SymbolId>,
    #[serde(with = "symbols")]
    pub symbols_added: Vec<Symbol>,
    pub edges_removed: Vec<Edge>,
    pub edges_added: Vec<Edge>,
}

#[derive(Serialize, Deserialize)]
pub(crate) enum FileChange {
    Added(FileMeta),
    Modified(FileMeta),
    Deleted,
    Reresolved,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FileMeta {
    pub blob: BlobId,
    pub language: Option<Language>,
    pub size: u64,
    pub lines: u32,
    #[serde(with = "FileStateDef")]
    pub state: FileState,
    #[serde(with = "super::current::diagnostics")]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(with = "FileRefsDef")]
    pub refs: FileRefs,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Edge {
    pub kind: EdgeKind,
    pub from: Option<SymbolId>,
    #[serde(with = "EdgeTargetDef")]
    pub to: EdgeTarget,
    pub name: String,
    pub line: u32,
}

impl From<Envelope> for domain::Envelope {
    fn from(e: Envelope) -> Self {
        domain::Envelope {
            version: e.version,
            prev_hash: e.prev_hash,
            written_ms: e.written_ms,
            event: e.event.into(),
        }
    }
}

impl From<Event> for domain::Event {
    fn from(e: Event) -> Self {
        match e {
            Event::CommitIndexed(c) => domain::Event::CommitIndexed(domain::CommitIndexed {
                commit: c.commit,
                parents: c.parents,
                branch: c.branch,
                summary: c.summary,
                time: c.time,
                base: c.base,
                deltas: c.deltas.into_iter().map(Into::into).collect(),
            }),
            Event::BranchMoved(b) => domain::Event::BranchMoved(b),
            Event::CheckpointCreated(c) => domain::Event::CheckpointCreated(c),
            Event::DecisionLogged(d) => domain::Event::DecisionLogged(d),
            Event::LessonProposed(l) => domain::Event::LessonProposed(l),
            Event::LessonAnalysisSubmitted(a) => domain::Event::LessonAnalysisSubmitted(a),
            Event::LessonReviewed(r) => domain::Event::LessonReviewed(r),
            Event::RolledBack(r) => domain::Event::RolledBack(domain::RolledBack {
                from: r.from,
                to: r.to,
                branch: r.branch,
                git_head: r.git_head,
                deltas: r.deltas.into_iter().map(Into::into).collect(),
            }),
        }
    }
}

impl From<FileDelta> for domain::FileDelta {
    fn from(d: FileDelta) -> Self {
        domain::FileDelta {
            path: d.path,
            change: match d.change {
                FileChange::Added(m) => domain::FileChange::Added(m.into()),
                FileChange::Modified(m) => domain::FileChange::Modified(m.into()),
                FileChange::Deleted => domain::FileChange::Deleted,
                FileChange::Reresolved => domain::FileChange::Reresolved,
            },
            symbols_removed: d.symbols_removed,
            symbols_added: d.symbols_added,
            edges_removed: d.edges_removed.into_iter().map(Into::into).collect(),
            edges_added: d.edges_added.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<FileMeta> for domain::FileMeta {
    fn from(m: FileMeta) -> Self {
        domain::FileMeta {
            blob: m.blob,
            language: m.language,
            size: m.size,
            lines: m.lines,
            state: m.state,
            diagnostics: m.diagnostics,
            refs: m.refs,
            masked_secrets: 0,
        }
    }
}

impl From<Edge> for crate::model::Edge {
    fn from(e: Edge) -> Self {
        crate::model::Edge {
            kind: e.kind,
            from: e.from,
            to: e.to,
            name: e.name,
            line: e.line,
            // What an older build's resolution claimed of every edge.
            certainty: Certainty::Exact,
        }
    }
}
