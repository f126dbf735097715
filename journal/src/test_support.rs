//! Small journals for unit tests: files added by deltas, commits holding them.

use crate::event::{CommitIndexed, FileChange, FileDelta, FileMeta};
use crate::model::{BlobId, CommitId, FileRefs, FileState, Language};

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
