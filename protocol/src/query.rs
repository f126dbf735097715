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
    /// `calls`, `inherits`, `imports`.
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
