//! Tree-sitter extraction for sno: symbols, imports, calls, inheritance and
//! syntax diagnostics of one source file, in one pass over its syntax tree.
//!
//! [`extract`] never fails: a file that does not parse cleanly yields what
//! tree-sitter recovered plus diagnostics.
//!
//! Conventions shared by all languages: a glob import (`from m import *`,
//! `use m::*`, `import a.b.*`, `export * from`) has the single name `*`; a
//! renamed import of one name is its own [`Import`] whose `alias` is the local
//! name; [`Inheritance::base`] and [`CallSite::callee`] are last segments
//! without generic arguments. Each language module documents its own rules.

pub mod allocator;
pub mod facts;
mod lang;
pub mod line_diff;
pub mod literal_runs;
mod locals;
mod parser_view;
pub mod reparse;
mod source_text;
mod walker;

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use facts::*;
use sno_journal::model::{Diagnostic, Language};

/// The tree-sitter grammar for a sno language. TypeScript uses
/// `LANGUAGE_TYPESCRIPT` and TSX `LANGUAGE_TSX`; the JavaScript grammar covers
/// JSX. PHP uses `LANGUAGE_PHP`, which reads the HTML around `<?php` too.
pub fn grammar(lang: Language) -> tree_sitter::Language {
    match lang {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::C => tree_sitter_c::LANGUAGE.into(),
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Language::Swift => tree_sitter_swift::LANGUAGE.into(),
        Language::Scala => tree_sitter_scala::LANGUAGE.into(),
        generic => match lang::generic_grammar(generic) {
            Some(g) => g,
            // Every language past the deep tier has a spec (a test checks).
            None => unreachable!("{generic:?} has no grammar"),
        },
    }
}

thread_local! {
    /// One parser per language and thread: creating a parser and setting its
    /// language costs more than parsing a small file.
    static PARSERS: RefCell<[Option<tree_sitter::Parser>; Language::ALL.len()]> =
        const { RefCell::new([const { None }; Language::ALL.len()]) };
}

/// Parses `source` without extracting anything (the benchmark's "parse
/// floor"), leaving out the long literal tables extraction does not need
/// ([`literal_runs`]). Reuses a thread-local parser per language. `None`
/// only if tree-sitter refuses the grammar, which the pinned grammars do not.
pub fn parse(lang: Language, source: &[u8]) -> Option<tree_sitter::Tree> {
    parse_ranges(lang, source, None, &literal_runs::tables(lang, source))
}

/// [`parse`] over every byte, literal tables included: what a plain
/// tree-sitter parse costs, for comparison.
pub fn parse_full(lang: Language, source: &[u8]) -> Option<tree_sitter::Tree> {
    parse_ranges(lang, source, None, &[])
}

/// Parses `source` leaving out what `tables` allows.
pub(crate) fn parse_ranges(
    lang: Language,
    source: &[u8],
    old: Option<&tree_sitter::Tree>,
    tables: &[literal_runs::Table],
) -> Option<tree_sitter::Tree> {
    // The cached parsers live on: nothing of theirs may come from a scratch
    // heap, even if a scope is open on this thread.
    let _default_heap = allocator::Scratch::suspend();
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = &mut parsers[lang as usize];
        if slot.is_none() {
            *slot = Some(new_parser(lang)?);
        }
        parse_in(
            slot.as_mut()?,
            &parser_view::parser_view(lang, source),
            old,
            tables,
        )
    })
}

fn new_parser(lang: Language) -> Option<tree_sitter::Parser> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar(lang)).ok()?;
    Some(parser)
}

/// Parses `source` with `parser`, leaving out what `tables` allows.
fn parse_in(
    parser: &mut tree_sitter::Parser,
    source: &[u8],
    old: Option<&tree_sitter::Tree>,
    tables: &[literal_runs::Table],
) -> Option<tree_sitter::Tree> {
    if tables.is_empty() {
        return parser.parse(source, old);
    }
    // Ranges that tree-sitter refuses (it checks their order) only cost the
    // saving: the file is parsed whole.
    let limited = parser
        .set_included_ranges(&included_ranges(source, tables))
        .is_ok();
    let tree = parser.parse(source, old);
    if !limited {
        return tree;
    }
    // Back to the whole document for the parser's next file.
    let _ = parser.set_included_ranges(&[]);
    match tree {
        // A syntax error in or at a table could be recovered from
        // differently without the table's elements: such a file is parsed
        // whole.
        Some(t) if literal_runs::error_touches(&t, tables) => parser.parse(source, old),
        t => t,
    }
}

/// Parses `source` as [`parse`] does and hands the tree to `f`. The tree
/// lives only for the call: where tree-sitter allocates from mimalloc
/// ([`allocator::use_mimalloc`]), it is built in scratch memory that is
/// dropped whole afterwards instead of freed node by node.
///
/// Crate-private because it is only sound for closures that keep nothing of
/// the tree (a `Tree::clone` would outlive the scratch memory): [`extract`]
/// and [`parse_once`] are its public faces.
pub(crate) fn with_tree<R>(
    lang: Language,
    source: &[u8],
    f: impl FnOnce(Option<&tree_sitter::Tree>) -> R,
) -> R {
    let tables = literal_runs::tables(lang, source);
    // Declared first so it is dropped last, also when `f` panics.
    let Some(_scratch) = allocator::Scratch::start() else {
        return f(parse_ranges(lang, source, None, &tables).as_ref());
    };
    // A parser of the scope's own: the thread's cached parsers keep pools of
    // freed nodes, which must not end up holding scratch memory.
    let Some(mut parser) = new_parser(lang) else {
        return f(None);
    };
    let tree = parse_in(
        &mut parser,
        &parser_view::parser_view(lang, source),
        None,
        &tables,
    );
    let out = f(tree.as_ref());
    // The tree goes with the scratch memory. The parser is deleted: that
    // frees its external scanner's state, which grammars allocate with the
    // C library's malloc, outside the scratch heap.
    std::mem::forget(tree);
    drop(parser);
    out
}

/// Parses `source` as [`extract`] does (tables left out, the tree in scratch
/// memory) and drops the tree: whether tree-sitter produced one. The parse
/// floor benchmark's measure of parsing as sno parses.
pub fn parse_once(lang: Language, source: &[u8]) -> bool {
    with_tree(lang, source, |tree| tree.is_some())
}

/// The complement of `elided` in `source`, with tree-sitter's row and
/// (byte) column of each boundary.
fn included_ranges(source: &[u8], tables: &[literal_runs::Table]) -> Vec<tree_sitter::Range> {
    let mut ranges = Vec::with_capacity(tables.len() + 1);
    let mut at = 0;
    let mut point = tree_sitter::Point { row: 0, column: 0 };
    // Moves `point` from byte `at` to byte `to` and returns it.
    fn point_at(
        source: &[u8],
        to: usize,
        at: &mut usize,
        point: &mut tree_sitter::Point,
    ) -> tree_sitter::Point {
        *point = line_diff::advance(*point, &source[*at..to]);
        *at = to;
        *point
    }
    let (mut start, mut start_point) = (0, point);
    for r in tables.iter().map(|t| &t.left_out) {
        let end_point = point_at(source, r.start, &mut at, &mut point);
        ranges.push(tree_sitter::Range {
            start_byte: start,
            end_byte: r.start,
            start_point,
            end_point,
        });
        start_point = point_at(source, r.end, &mut at, &mut point);
        start = r.end;
    }
    let end_point = point_at(source, source.len(), &mut at, &mut point);
    ranges.push(tree_sitter::Range {
        start_byte: start,
        end_byte: source.len(),
        start_point,
        end_point,
    });
    ranges
}

/// Parses and extracts the facts of one file. Never fails and never panics:
/// syntax errors become diagnostics beside the recovered symbols.
pub fn extract(lang: Language, source: &[u8]) -> FileFacts {
    with_tree(lang, source, |tree| match tree {
        Some(tree) => extract_tree(lang, tree, source),
        None => failed(lang, "parser failed"),
    })
}

/// [`extract`] from a parse of every byte, literal tables included: what the
/// facts would be without [`literal_runs`], for checking that leaving the
/// tables out changes none.
pub fn extract_whole(lang: Language, source: &[u8]) -> FileFacts {
    match parse_full(lang, source) {
        Some(tree) => extract_tree(lang, &tree, source),
        None => failed(lang, "parser failed"),
    }
}

/// The facts of a parsed file.
pub(crate) fn extract_tree(lang: Language, tree: &tree_sitter::Tree, source: &[u8]) -> FileFacts {
    // The extractors are written not to panic; this is the last line of
    // defence so one odd file cannot take down an indexing worker.
    catch_unwind(AssertUnwindSafe(|| lang::extract_tree(lang, tree, source)))
        .unwrap_or_else(|_| failed(lang, INTERNAL_ERROR))
}

/// The diagnostic message of a file whose extraction panicked.
const INTERNAL_ERROR: &str = "internal extractor error";

fn failed(lang: Language, message: &str) -> FileFacts {
    FileFacts {
        language: lang,
        symbols: Vec::new(),
        imports: Vec::new(),
        calls: Vec::new(),
        inherits: Vec::new(),
        diagnostics: vec![Diagnostic {
            line: 1,
            column: 1,
            message: message.to_string(),
        }],
    }
}

#[cfg(test)]
mod robustness_tests;

#[cfg(test)]
mod speed_tests;
