//! What extraction yields for one file: raw, unresolved facts.
//!
//! Indices (`parent`, `caller`, `symbol`) point into [`FileFacts::symbols`].
//! Resolution of names to symbols and files happens later, in the indexer,
//! where the whole repository is known.

use sno_journal::model::{Diagnostic, Language, Span, SymbolKind};

/// A symbol as found in one file, before it gets its [`sno_journal::model::SymbolId`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedSymbol {
    pub name: String,
    pub kind: SymbolKind,
    /// Index of the enclosing symbol in [`FileFacts::symbols`] (always smaller
    /// than this symbol's own index).
    pub parent: Option<usize>,
    /// The name with its containers, joined by `.`: `Config.load`.
    pub qualified_name: String,
    pub span: Span,
    /// The declaration's first line (or header up to the body), trimmed, at
    /// most 200 characters.
    pub signature: String,
    /// Doc comment or docstring without comment markers; empty if none.
    pub doc: String,
    /// xxh3-64 of the symbol's source bytes.
    pub content_hash: u64,
}

/// The receiver of a call made on an expression that is not a name or a
/// chain of names.
pub const EXPRESSION_RECEIVER: &str = "(expr)";

/// An import, include, use or require.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The module as written: `os.path`, `./util`, `fmt`, `crate::a::b`,
    /// `java.util.List`, `stdio.h`, `json`. Relative Python imports keep their
    /// dots (`..pkg.mod`).
    pub module: String,
    /// Names imported from the module (`from a import b, c` gives `[b, c]`;
    /// `use a::{b, c}` gives `[b, c]`); empty when the whole module is imported.
    pub names: Vec<String>,
    /// The local alias of the module (`import numpy as np` gives `np`; Go's
    /// package name override).
    pub alias: Option<String>,
    /// Whether the module is written as a local path (`#include "x.h"`,
    /// `require_relative`, `./x` in JS) rather than a package/system name.
    pub is_relative: bool,
    pub line: u32,
}

/// A call site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// Innermost enclosing symbol (function, method, class...), `None` at top level.
    pub caller: Option<usize>,
    /// The called name, last segment only: `load` for `Config.load(...)`.
    pub callee: String,
    /// What it was called on, as written, if anything: `self`, `this`, `os.path`,
    /// `Config`, `fmt`; [`EXPRESSION_RECEIVER`] when it is an expression
    /// rather than a name (`items[0].run()`, `make().run()`), so such a call
    /// is never mistaken for a bare `run()`.
    pub receiver: Option<String>,
    pub line: u32,
    pub column: u32,
}

/// A base class, implemented interface or trait, or embedded struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inheritance {
    /// Index of the inheriting symbol.
    pub symbol: usize,
    /// The base's name, last segment only (`Base` for `pkg.Base`, generic
    /// arguments dropped).
    pub base: String,
    pub line: u32,
}

/// Everything extraction found in one file. Extraction never fails: a file with
/// syntax errors gives the symbols tree-sitter recovered plus diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFacts {
    pub language: Language,
    /// In source order (pre-order: a parent comes before its children).
    pub symbols: Vec<ExtractedSymbol>,
    pub imports: Vec<Import>,
    pub calls: Vec<CallSite>,
    pub inherits: Vec<Inheritance>,
    pub diagnostics: Vec<Diagnostic>,
}
