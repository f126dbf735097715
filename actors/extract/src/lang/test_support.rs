//! Helpers that keep the per-language tests short and their failures readable.

use sno_journal::model::{Language, SymbolKind};

use crate::facts::{ExtractedSymbol, FileFacts};

/// Extracts `src` and asserts it parsed without diagnostics.
pub(crate) fn extract_clean(lang: Language, src: &str) -> FileFacts {
    let facts = crate::extract(lang, src.as_bytes());
    assert!(
        facts.diagnostics.is_empty(),
        "unexpected diagnostics: {:?}",
        facts.diagnostics
    );
    facts
}

/// The symbol with this qualified name (exactly one must exist).
pub(crate) fn sym<'a>(facts: &'a FileFacts, qualified: &str) -> &'a ExtractedSymbol {
    let found: Vec<_> = facts
        .symbols
        .iter()
        .filter(|s| s.qualified_name == qualified)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "want one `{qualified}` in {:#?}",
        outline(facts)
    );
    found[0]
}

/// `(qualified name, kind)` of every symbol, in order.
pub(crate) fn outline(facts: &FileFacts) -> Vec<(String, SymbolKind)> {
    facts
        .symbols
        .iter()
        .map(|s| (s.qualified_name.clone(), s.kind))
        .collect()
}

/// The qualified name of the symbol at `index`, or `-` for none.
pub(crate) fn qname(facts: &FileFacts, index: Option<usize>) -> String {
    index.map_or_else(
        || "-".to_string(),
        |i| facts.symbols[i].qualified_name.clone(),
    )
}

/// The parent's qualified name of a symbol.
pub(crate) fn parent_of(facts: &FileFacts, qualified: &str) -> String {
    qname(facts, sym(facts, qualified).parent)
}

/// `(start line, end line)` of a symbol.
pub(crate) fn lines(facts: &FileFacts, qualified: &str) -> (u32, u32) {
    let s = sym(facts, qualified);
    (s.span.start_line, s.span.end_line)
}

/// Every call as `caller -> receiver.callee @line` (receiver omitted when none).
pub(crate) fn calls(facts: &FileFacts) -> Vec<String> {
    facts
        .calls
        .iter()
        .map(|c| {
            let recv = c
                .receiver
                .as_deref()
                .map(|r| format!("{r}."))
                .unwrap_or_default();
            format!(
                "{} -> {recv}{} @{}",
                qname(facts, c.caller),
                c.callee,
                c.line
            )
        })
        .collect()
}

/// Every inheritance as `symbol : base @line`.
pub(crate) fn inherits(facts: &FileFacts) -> Vec<String> {
    facts
        .inherits
        .iter()
        .map(|i| {
            format!(
                "{} : {} @{}",
                facts.symbols[i.symbol].qualified_name, i.base, i.line
            )
        })
        .collect()
}

/// Every import as `module [names] as alias (rel) @line`.
pub(crate) fn imports(facts: &FileFacts) -> Vec<String> {
    facts
        .imports
        .iter()
        .map(|i| {
            let mut s = i.module.clone();
            if !i.names.is_empty() {
                s.push_str(&format!(" [{}]", i.names.join(", ")));
            }
            if let Some(a) = &i.alias {
                s.push_str(&format!(" as {a}"));
            }
            if i.is_relative {
                s.push_str(" (rel)");
            }
            s.push_str(&format!(" @{}", i.line));
            s
        })
        .collect()
}

/// Asserts the source text of a symbol's span starts and ends as expected
/// and its hash is the hash of exactly that text.
pub(crate) fn assert_span_text(src: &str, s: &ExtractedSymbol, starts: &str, ends: &str) {
    let text = &src[s.span.start_byte as usize..s.span.end_byte as usize];
    assert!(
        text.starts_with(starts),
        "`{}` starts with {text:?}",
        s.qualified_name
    );
    assert!(
        text.ends_with(ends),
        "`{}` ends with {text:?}",
        s.qualified_name
    );
    assert_eq!(s.content_hash, xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
}

/// The symbol with this qualified name and kind (exactly one must exist):
/// a Rust impl block and its type share a qualified name.
pub(crate) fn sym_of<'a>(
    facts: &'a FileFacts,
    qualified: &str,
    kind: SymbolKind,
) -> &'a ExtractedSymbol {
    let found: Vec<_> = facts
        .symbols
        .iter()
        .filter(|s| s.qualified_name == qualified && s.kind == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "want one {kind:?} `{qualified}` in {:#?}",
        outline(facts)
    );
    found[0]
}
