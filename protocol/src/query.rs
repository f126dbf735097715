//! Answers to code-intelligence queries (`sno symbol`, `outline`, `refs`,
//! `grep`, `changes`). Every answer names the state it reflects.

use serde::{Deserialize, Serialize};

/// The state an answer was computed from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AsOfCommit {
    pub commit: String,
    pub branch: Option<String>,
}

/// How a symbol matched a name.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The name or qualified name, exactly.
    Exact,
    /// The name or qualified name, ignoring case.
    CaseInsensitive,
    /// The name starts with the query.
    Prefix,
    /// Close in spelling.
    Fuzzy,
}

/// A symbol, located.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SymbolInfo {
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: String,
}

/// A symbol found by name.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SymbolMatch {
    #[serde(flatten)]
    pub symbol: SymbolInfo,
    pub match_kind: MatchKind,
}

/// One node of a file outline.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct OutlineNode {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
    pub children: Vec<OutlineNode>,
}

/// One reference to or from a symbol.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Reference {
    /// `calls`, `inherits`, `imports`, `overrides` (a method of a derived
    /// type with the referred method's name).
    pub kind: String,
    /// Where the reference is written.
    pub path: String,
    pub line: u32,
    /// The symbol the reference is written in (`None`: top-level code).
    pub from: Option<String>,
    /// The symbol referred to, qualified; for unresolved names, the name.
    pub to: String,
    /// Hops from the queried symbol (1 = direct).
    pub depth: u32,
    /// True when the graph cannot be sure: the target was found by a name
    /// alone, not by the language's scoping rules.
    pub heuristic: bool,
    /// Why it is heuristic, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A text hit with its enclosing symbol.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct GrepHit {
    pub path: String,
    pub line: u32,
    pub text: String,
    /// Qualified name of the innermost symbol around the line.
    pub symbol: Option<String>,
}

/// A symbol-level difference between two indexed commits.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SymbolChange {
    /// `added`, `removed` or `changed` (same identity, different body or signature).
    pub change: String,
    #[serde(flatten)]
    pub symbol: SymbolInfo,
}

/// `sno symbol`, `search_symbols`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SymbolsAnswer {
    /// The name asked for.
    pub query: String,
    pub as_of: AsOfCommit,
    pub results: Vec<SymbolMatch>,
}

/// `sno outline`, `file_outline`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct OutlineAnswer {
    pub as_of: AsOfCommit,
    pub file: String,
    pub outline: Vec<OutlineNode>,
    /// Why the file has no outline when it was not parsed (binary, over
    /// the size limit, no grammar, the parser failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_parsed: Option<String>,
    /// Whether the file differs on disk from the indexed commit's (the
    /// outline is the committed file's); `None` for a past state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_in_work_tree: Option<bool>,
}

impl OutlineAnswer {
    /// The file's line above its outline, saying why it has none when it
    /// was not parsed, and when the file on disk is not the one outlined.
    pub fn title(&self) -> String {
        let mut title = self.file.clone();
        if let Some(why) = &self.not_parsed {
            title.push_str(&format!("  (not parsed: {why}; read the file itself)"));
        }
        if self.edited_in_work_tree == Some(true) {
            title.push_str("  (changed on disk since the indexed commit: this is the committed file's outline)");
        }
        title
    }
}

/// `sno show`, `get_symbol`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ShowAnswer {
    pub as_of: AsOfCommit,
    pub symbol: SymbolInfo,
    /// The symbol's source at the state answered from (secrets masked).
    pub source: String,
    /// Whether the symbol's file differs in the work tree from the indexed
    /// commit (the source above is the committed one); absent for answers
    /// about another commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_in_work_tree: Option<bool>,
}

/// `sno refs` (with `--callers`, `--callees`), `references`, `callers`,
/// `callees`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RefsAnswer {
    pub as_of: AsOfCommit,
    /// The symbol the name picked.
    pub symbol: SymbolInfo,
    pub results: Vec<Reference>,
    /// Results past the limit asked for, not listed (`references`,
    /// `callers` and `callees` over MCP list 200 unless told otherwise: a
    /// common method's 500 references would fill an agent's context).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RefsAnswer {
    /// The first `limit` results, the rest counted in `more`.
    pub fn limited(mut self, limit: usize) -> RefsAnswer {
        if self.results.len() > limit {
            self.more += self.results.len() - limit;
            self.results.truncate(limit);
        }
        self
    }
}

/// Which references to list.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RefsKind {
    /// Everything that refers to the symbol.
    References,
    /// Who calls it, transitively up to a depth.
    Callers,
    /// What it calls, transitively up to a depth.
    Callees,
}

/// `sno grep`, `search_text`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct GrepAnswer {
    pub as_of: AsOfCommit,
    pub results: Vec<GrepHit>,
    /// Whether the limit cut the search short.
    pub truncated: bool,
    pub limit: usize,
}

/// `sno changes`, `changes`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ChangesAnswer {
    pub from: AsOfCommit,
    /// The indexed state compared with, or the work tree.
    pub to: ChangesTo,
    pub changes: Vec<SymbolChange>,
}

/// The newer side of a comparison: an indexed commit, or the string
/// `"worktree"` for uncommitted edits.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ChangesTo {
    Commit(AsOfCommit),
    WorkTree(WorkTree),
}

/// Serialized as the string `"worktree"`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WorkTree {
    Worktree,
}

/// A file of the repository map.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MapFile {
    pub path: String,
    pub score: f64,
    pub symbols: Vec<MapSymbol>,
}

/// A symbol of the repository map.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MapSymbol {
    pub qualified_name: String,
    pub kind: String,
    pub line: u32,
    pub signature: String,
    pub rank: f64,
}

/// `sno map`, `repo_map`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MapAnswer {
    pub as_of: AsOfCommit,
    pub files: Vec<MapFile>,
    /// Files left out for the budget.
    pub omitted_files: usize,
    /// Tokens of the answer as given (cl100k_base): the map text, or the
    /// whole JSON form.
    pub tokens: usize,
    pub max_tokens: usize,
    /// The map as text (the markdown answer; absent from the JSON one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub map: String,
}

/// One journaled commit that touched a file or symbol.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HistoryEntry {
    pub seq: u64,
    pub commit: String,
    pub summary: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    /// `file added`, `file modified`, `file deleted`, `symbol added`,
    /// `symbol changed`, `symbol removed`.
    pub change: String,
}

/// `history`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HistoryAnswer {
    pub as_of: AsOfCommit,
    pub file: String,
    /// The symbol asked about, qualified.
    pub symbol: Option<String>,
    /// Oldest first.
    pub commits: Vec<HistoryEntry>,
}

/// A file that changed together with another.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CoChange {
    pub path: String,
    /// Share of the file's commits that also changed this one.
    pub share: f32,
    pub commits: usize,
}

/// `co_changed`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CoChangedAnswer {
    pub as_of: AsOfCommit,
    pub file: String,
    pub commits_touching_file: usize,
    pub co_changed: Vec<CoChange>,
    pub note: String,
}

/// A sibling symbol (same container) of the symbol being edited.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Sibling {
    pub name: String,
    pub kind: String,
    pub line: u32,
}

/// `context_for_edit`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EditContext {
    pub as_of: AsOfCommit,
    pub file: String,
    pub line: u32,
    /// The innermost symbol around the line.
    pub enclosing: Option<SymbolInfo>,
    pub callers: Vec<Reference>,
    pub callees: Vec<Reference>,
    pub siblings: Vec<Sibling>,
    pub decisions: Vec<crate::memory::Decision>,
    pub lessons: Vec<crate::memory::LessonRule>,
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the file changed on disk since the indexed commit (its lines
    /// above are the committed ones); `None` for answers about another
    /// commit than the indexed head.
    pub edited_in_work_tree: Option<bool>,
}

/// A syntax problem.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// `validate_syntax`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SyntaxAnswer {
    /// The file checked, when a file was.
    pub file: Option<String>,
    pub language: String,
    /// No diagnostics: it parses.
    pub ok: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// Symbols found.
    pub symbols: usize,
}
