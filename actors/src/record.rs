//! Turning extraction facts into stored records: stable symbol ids and
//! references expressed in ids instead of per-file indices.

use std::collections::HashMap;

use sno_extract::FileFacts;
use sno_journal::model::{
    BlobId, FileRecord, FileRefs, FileState, RawCall, RawImport, RawInherit, SkipReason, Symbol,
    SymbolId,
};

/// A record for a parsed file. Edges are left empty: resolution fills them.
pub fn parsed_record(
    path: &str,
    blob: BlobId,
    size: u64,
    source: &[u8],
    facts: FileFacts,
) -> FileRecord {
    let mut ordinals: HashMap<(&str, u8), u32> = HashMap::new();
    let mut ids = Vec::with_capacity(facts.symbols.len());
    for s in &facts.symbols {
        let n = ordinals
            .entry((s.qualified_name.as_str(), s.kind as u8))
            .or_insert(0);
        ids.push(SymbolId::derive(path, &s.qualified_name, s.kind, *n));
        *n += 1;
    }
    let symbols: Vec<Symbol> = facts
        .symbols
        .iter()
        .zip(&ids)
        .map(|(s, &id)| Symbol {
            id,
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind,
            parent: s.parent.and_then(|p| ids.get(p).copied()),
            span: s.span,
            signature: s.signature.clone(),
            doc: s.doc.clone(),
            content_hash: s.content_hash,
        })
        .collect();
    let refs = FileRefs {
        imports: facts
            .imports
            .into_iter()
            .map(|i| RawImport {
                module: i.module,
                names: i.names,
                alias: i.alias,
                is_relative: i.is_relative,
                line: i.line,
            })
            .collect(),
        calls: facts
            .calls
            .into_iter()
            .map(|c| RawCall {
                caller: c.caller.and_then(|i| ids.get(i).copied()),
                callee: c.callee,
                receiver: c.receiver,
                line: c.line,
            })
            .collect(),
        inherits: facts
            .inherits
            .into_iter()
            .filter_map(|h| {
                Some(RawInherit {
                    symbol: *ids.get(h.symbol)?,
                    base: h.base,
                    line: h.line,
                })
            })
            .collect(),
    };
    let state = if facts.diagnostics.is_empty() {
        FileState::Parsed
    } else {
        FileState::ParsedWithErrors
    };
    let mut rec = FileRecord {
        path: path.to_string(),
        blob,
        language: Some(facts.language),
        size,
        lines: count_lines(source),
        state,
        diagnostics: facts.diagnostics,
        masked_secrets: 0,
        symbols,
        edges: Vec::new(),
        refs,
    };
    rec.canonicalize();
    rec
}

/// A record for a file that is tracked but not parsed.
pub fn skipped_record(
    path: &str,
    blob: BlobId,
    size: u64,
    lines: u32,
    state: FileState,
) -> FileRecord {
    FileRecord {
        path: path.to_string(),
        blob,
        language: sno_journal::model::Language::from_path(path),
        size,
        lines,
        state,
        diagnostics: Vec::new(),
        masked_secrets: 0,
        symbols: Vec::new(),
        edges: Vec::new(),
        refs: FileRefs::default(),
    }
}

/// A record for a skip reason.
pub fn skip_state(reason: SkipReason) -> FileState {
    FileState::Skipped(reason)
}

/// Lines as editors count them: a final line without newline still counts.
pub fn count_lines(source: &[u8]) -> u32 {
    let n = source.iter().filter(|&&b| b == b'\n').count();
    let tail = usize::from(!source.is_empty() && !source.ends_with(b"\n"));
    (n + tail) as u32
}
