//! Context packages: what `sno search` answers, with the trust envelope that
//! says how far to believe it.

use serde::{Deserialize, Serialize};

use crate::query::AsOfCommit;

/// Each retrieval signal's contribution to an item's score.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SignalScores {
    pub lexical: f32,
    pub semantic: f32,
    pub structural: f32,
    pub history: f32,
    pub memory: f32,
}

/// A ranked item of a package.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextItem {
    pub rank: usize,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub score: f32,
    pub signals: SignalScores,
    /// `whole`, `truncated` or `omitted` (no room in the budget).
    pub packed: String,
}

/// How complete the package is.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Completeness {
    /// `full`, `budget_limited` or `truncated`.
    pub status: String,
    pub included: usize,
    pub omitted: usize,
    pub truncated: usize,
    pub tokens: usize,
    pub max_tokens: usize,
}

/// Parse state of the files the package draws on.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ParseState {
    pub files: usize,
    pub clean: usize,
    /// Files with syntax errors (their symbols are what tree-sitter recovered).
    pub with_errors: Vec<String>,
}

/// The trust envelope.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrustHeader {
    pub as_of: AsOfCommit,
    /// The repository's HEAD when it differs from the indexed commit.
    pub head_differs: Option<String>,
    /// Files of the package whose work-tree bytes differ from the indexed
    /// commit's (edited, deleted, or changed by later commits): their source
    /// and lines here are the committed ones. `None` (null) when not checked:
    /// for answers about a commit other than the indexed head.
    #[serde(default)]
    pub edited_in_work_tree: Option<Vec<String>>,
    /// `hybrid` or `lexical+structural`.
    pub match_type: String,
    /// Why semantic search is off, when it is.
    pub semantic_off_reason: Option<String>,
    pub completeness: Completeness,
    pub parse_state: ParseState,
    /// Path prefix the search was limited to.
    pub scope: Option<String>,
    /// `path:line` of every included item.
    pub anchors: Vec<String>,
}

/// A whole answer.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextPackage {
    pub query: String,
    pub header: TrustHeader,
    pub items: Vec<ContextItem>,
    /// The markdown an agent reads: header, then the included sources.
    pub package: String,
}
