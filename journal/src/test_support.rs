//! Small journals for unit tests: files added by deltas, commits holding
//! them, and file records.

use crate::event::{CommitIndexed, FileChange, FileDelta, FileMeta};
use crate::model::{
    BlobId, CommitId, FileRecord, FileRefs, FileState, Language, Span, Symbol, SymbolId, SymbolKind,
};

/// A delta adding `path` with blob `[b; 20]` and nothing in it.
pub fn add(path: &str, b: u8) -> FileDelta {
    FileDelta {
        path: path.into(),
        change: FileChange::Added(FileMeta {
            blob: BlobId([b; 20]),
            language: Some(Language::Python),
            size: 1,
            lines: 1,
            state: FileState::Parsed,
            diagnostics: vec![],
            refs: FileRefs::default(),
            masked_secrets: 0,
        }),
        symbols_removed: vec![],
        symbols_added: vec![],
        edges_removed: vec![],
        edges_added: vec![],
    }
}

/// A parsed Python file `path` with blob `[b; 20]` defining the functions
/// `names` (signature `def name()`), no edges.
pub fn record(path: &str, b: u8, names: &[&str]) -> FileRecord {
    FileRecord {
        path: path.into(),
        blob: BlobId([b; 20]),
        language: Some(Language::Python),
        size: 0,
        lines: 0,
        state: FileState::Parsed,
        diagnostics: vec![],
        symbols: names
            .iter()
            .map(|n| Symbol {
                id: SymbolId::derive(path, n, SymbolKind::Function, 0),
                name: n.to_string(),
                qualified_name: n.to_string(),
                kind: SymbolKind::Function,
                parent: None,
                span: Span::default(),
                signature: format!("def {n}()"),
                doc: String::new(),
                content_hash: 0,
            })
            .collect(),
        edges: vec![],
        refs: FileRefs::default(),
        masked_secrets: 0,
    }
}

/// Commit `[n; 20]` on branch `b{n}`, with `deltas`.
pub fn commit(n: u8, deltas: Vec<FileDelta>) -> CommitIndexed {
    CommitIndexed {
        commit: CommitId([n; 20]),
        parents: vec![],
        branch: Some(format!("b{n}")),
        summary: format!("c{n}"),
        time: 0,
        base: None,
        deltas,
    }
}

/// `n` names that share no run of characters a compressor could use
/// (`prefix` and a scattered 64-bit hex number each): records of them are
/// as long stored as they are decoded.
pub fn scattered_names(prefix: &str, n: u64) -> Vec<String> {
    (0..n)
        .map(|i| format!("{prefix}{:016x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect()
}
