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

/// A ranked item of a package that is in it: its source is in the
/// markdown, or, in the JSON form, in `source`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextItem {
    pub rank: usize,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    /// The fused score, 3 significant digits.
    pub score: f32,
    pub signals: SignalScores,
    /// The source (JSON form); cut to fit when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A ranked item that did not fit in the budget: where to find it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct OmittedItem {
    pub rank: usize,
    pub qualified_name: String,
    pub path: String,
    pub line: u32,
}

/// A file ranked by the symbols found in it (`files` answers).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileItem {
    pub rank: usize,
    pub path: String,
    /// 3 significant digits.
    pub score: f32,
    /// Its best symbols, as `name:line`, best first.
    pub symbols: Vec<String>,
}

/// How the answer is given.
#[derive(
    Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AnswerFormat {
    /// The compact markdown package an agent reads.
    #[default]
    Markdown,
    /// The structured form.
    Json,
}

/// What the answer ranks.
#[derive(
    Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Grouping {
    /// Symbols, with their source.
    #[default]
    Symbols,
    /// Files, by the symbols found in them.
    Files,
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
    /// The answer is about a commit asked for (`at`), not the indexed head:
    /// `as_of` is that commit, and being behind HEAD is what was asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub past: bool,
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
}

/// A whole answer, within its `max_tokens` in the form it was asked in.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextPackage {
    pub query: String,
    pub header: TrustHeader,
    /// The ranked symbols that are in the answer, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ContextItem>,
    /// The ranked files (`files` answers), best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileItem>,
    /// Ranked items that did not fit, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<OmittedItem>,
    /// How many more ranked items did not fit than `omitted` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
    /// The markdown an agent reads (the markdown form only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub package: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
