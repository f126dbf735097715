//! Computing and applying file deltas: the pure heart of replay.
//!
//! `apply(old, diff(old, new)) == new` for canonical records; both the store
//! (when it moves the views) and replay use [`apply`], so the views and a
//! replayed state cannot drift apart by construction.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::event::{FileChange, FileDelta, FileMeta};
use crate::model::{Edge, FileRecord, Symbol, SymbolId};

impl FileRecord {
    /// The record's metadata part.
    pub fn meta(&self) -> FileMeta {
        FileMeta {
            blob: self.blob,
            language: self.language,
            size: self.size,
            lines: self.lines,
            state: self.state.clone(),
            diagnostics: self.diagnostics.clone(),
            refs: self.refs.clone(),
        }
    }

    fn from_meta(path: &str, meta: &FileMeta) -> FileRecord {
        FileRecord {
            path: path.to_string(),
            blob: meta.blob,
            language: meta.language,
            size: meta.size,
            lines: meta.lines,
            state: meta.state.clone(),
            diagnostics: meta.diagnostics.clone(),
            symbols: Vec::new(),
            edges: Vec::new(),
            refs: meta.refs.clone(),
        }
    }

    fn meta_eq(&self, other: &FileRecord) -> bool {
        self.blob == other.blob
            && self.language == other.language
            && self.size == other.size
            && self.lines == other.lines
            && self.state == other.state
            && self.diagnostics == other.diagnostics
            && self.refs == other.refs
    }
}

/// The delta that turns `old` into `new` (both canonical), or `None` if they are
/// equal. `path` names the file in both.
pub fn diff(path: &str, old: Option<&FileRecord>, new: Option<&FileRecord>) -> Option<FileDelta> {
    match (old, new) {
        (None, None) => None,
        (Some(old), None) => Some(FileDelta {
            path: path.to_string(),
            change: FileChange::Deleted,
            symbols_removed: old.symbols.iter().map(|s| s.id).collect(),
            symbols_added: Vec::new(),
            edges_removed: old.edges.clone(),
            edges_added: Vec::new(),
        }),
        (None, Some(new)) => Some(FileDelta {
            path: path.to_string(),
            change: FileChange::Added(new.meta()),
            symbols_removed: Vec::new(),
            symbols_added: new.symbols.clone(),
            edges_removed: Vec::new(),
            edges_added: new.edges.clone(),
        }),
        (Some(old), Some(new)) => {
            if old == new {
                return None;
            }
            let old_by_id: HashMap<SymbolId, &Symbol> =
                old.symbols.iter().map(|s| (s.id, s)).collect();
            let new_by_id: HashMap<SymbolId, &Symbol> =
                new.symbols.iter().map(|s| (s.id, s)).collect();
            let symbols_removed = old
                .symbols
                .iter()
                .filter(|s| new_by_id.get(&s.id) != Some(s))
                .map(|s| s.id)
                .collect();
            let symbols_added = new
                .symbols
                .iter()
                .filter(|s| old_by_id.get(&s.id) != Some(s))
                .cloned()
                .collect();
            let old_edges: BTreeSet<&Edge> = old.edges.iter().collect();
            let new_edges: BTreeSet<&Edge> = new.edges.iter().collect();
            let edges_removed = old
                .edges
                .iter()
                .filter(|e| !new_edges.contains(e))
                .cloned()
                .collect();
            let edges_added = new
                .edges
                .iter()
                .filter(|e| !old_edges.contains(e))
                .cloned()
                .collect();
            let change = if old.meta_eq(new) {
                FileChange::Reresolved
            } else {
                FileChange::Modified(new.meta())
            };
            Some(FileDelta {
                path: path.to_string(),
                change,
                symbols_removed,
                symbols_added,
                edges_removed,
                edges_added,
            })
        }
    }
}

/// Errors applying a delta to a state it does not fit.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApplyError {
    #[error("delta for {0} modifies a file the state does not have")]
    MissingFile(String),
    #[error("delta for {0} adds a file the state already has")]
    FileExists(String),
}

/// Applies a delta to a file's record. Returns the new record (`None` when the
/// file is deleted).
pub fn apply(old: Option<FileRecord>, delta: &FileDelta) -> Result<Option<FileRecord>, ApplyError> {
    let mut rec = match (&delta.change, old) {
        (FileChange::Deleted, Some(_)) => return Ok(None),
        (FileChange::Deleted, None) => return Err(ApplyError::MissingFile(delta.path.clone())),
        (FileChange::Added(meta), None) => FileRecord::from_meta(&delta.path, meta),
        (FileChange::Added(_), Some(_)) => return Err(ApplyError::FileExists(delta.path.clone())),
        (FileChange::Modified(meta), Some(old)) => {
            let mut rec = FileRecord::from_meta(&delta.path, meta);
            rec.symbols = old.symbols;
            rec.edges = old.edges;
            rec
        }
        (FileChange::Reresolved, Some(old)) => old,
        (FileChange::Modified(_) | FileChange::Reresolved, None) => {
            return Err(ApplyError::MissingFile(delta.path.clone()))
        }
    };
    if !delta.symbols_removed.is_empty() {
        let removed: BTreeSet<SymbolId> = delta.symbols_removed.iter().copied().collect();
        rec.symbols.retain(|s| !removed.contains(&s.id));
    }
    rec.symbols.extend(delta.symbols_added.iter().cloned());
    if !delta.edges_removed.is_empty() {
        let removed: BTreeSet<&Edge> = delta.edges_removed.iter().collect();
        rec.edges.retain(|e| !removed.contains(e));
    }
    rec.edges.extend(delta.edges_added.iter().cloned());
    rec.canonicalize();
    Ok(Some(rec))
}

/// An in-memory indexed state: every file's record, by path.
pub type State = BTreeMap<String, FileRecord>;

/// Applies a sequence of deltas to an in-memory state.
pub fn apply_all(state: &mut State, deltas: &[FileDelta]) -> Result<(), ApplyError> {
    for d in deltas {
        let old = state.remove(&d.path);
        if let Some(new) = apply(old, d)? {
            state.insert(d.path.clone(), new);
        }
    }
    Ok(())
}

/// A digest of a whole state: equal states give equal digests. Used by
/// `sno status` and `sno doctor` to compare views with a replay cheaply.
pub fn digest(state: &State) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for rec in state.values() {
        h.update(&crate::event::encode_value(rec));
    }
    h.digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    fn sym(path: &str, name: &str, line: u32, hash: u64) -> Symbol {
        Symbol {
            id: SymbolId::derive(path, name, SymbolKind::Function, 0),
            name: name.into(),
            qualified_name: name.into(),
            kind: SymbolKind::Function,
            parent: None,
            span: Span {
                start_line: line,
                end_line: line + 1,
                start_byte: line * 10,
                end_byte: line * 10 + 5,
                ..Default::default()
            },
            signature: format!("def {name}()"),
            doc: String::new(),
            content_hash: hash,
        }
    }

    fn rec(path: &str, blob: u8, syms: Vec<Symbol>, edges: Vec<Edge>) -> FileRecord {
        let mut r = FileRecord {
            path: path.into(),
            blob: BlobId([blob; 20]),
            language: Some(Language::Python),
            size: 10,
            lines: 3,
            state: FileState::Parsed,
            diagnostics: vec![],
            symbols: syms,
            edges,
            refs: FileRefs::default(),
        };
        r.canonicalize();
        r
    }

    fn call(from: &Symbol, to: &str) -> Edge {
        Edge {
            kind: EdgeKind::Calls,
            from: Some(from.id),
            to: EdgeTarget::Unresolved(to.into()),
            name: to.into(),
            line: 1,
        }
    }

    #[test]
    fn diff_then_apply_round_trips_every_kind_of_change() {
        let a = sym("a.py", "a", 1, 1);
        let b = sym("a.py", "b", 3, 2);
        let b2 = sym("a.py", "b", 3, 99);
        let c = sym("a.py", "c", 5, 3);
        let old = rec("a.py", 1, vec![a.clone(), b.clone()], vec![call(&a, "x")]);
        let new = rec(
            "a.py",
            2,
            vec![a.clone(), b2.clone(), c.clone()],
            vec![call(&a, "y"), call(&c, "x")],
        );
        let d = diff("a.py", Some(&old), Some(&new)).unwrap();
        assert_eq!(d.symbols_removed, vec![b.id]);
        assert_eq!(d.symbols_added.len(), 2);
        assert!(matches!(d.change, FileChange::Modified(_)));
        assert_eq!(apply(Some(old.clone()), &d).unwrap().unwrap(), new);

        let del = diff("a.py", Some(&new), None).unwrap();
        assert_eq!(apply(Some(new.clone()), &del).unwrap(), None);
        let add = diff("a.py", None, Some(&new)).unwrap();
        assert_eq!(apply(None, &add).unwrap().unwrap(), new);
        assert!(diff("a.py", Some(&new), Some(&new)).is_none());
    }

    #[test]
    fn edge_only_change_is_reresolved() {
        let a = sym("a.py", "a", 1, 1);
        let old = rec("a.py", 1, vec![a.clone()], vec![call(&a, "x")]);
        let mut e = call(&a, "x");
        e.to = EdgeTarget::Symbol(SymbolId(7));
        let new = rec("a.py", 1, vec![a.clone()], vec![e]);
        let d = diff("a.py", Some(&old), Some(&new)).unwrap();
        assert_eq!(d.change, FileChange::Reresolved);
        assert_eq!(apply(Some(old), &d).unwrap().unwrap(), new);
    }

    #[test]
    fn misfitting_deltas_are_refused() {
        let a = sym("a.py", "a", 1, 1);
        let r = rec("a.py", 1, vec![a], vec![]);
        let add = diff("a.py", None, Some(&r)).unwrap();
        assert_eq!(
            apply(Some(r.clone()), &add),
            Err(ApplyError::FileExists("a.py".into()))
        );
        let del = diff("a.py", Some(&r), None).unwrap();
        assert_eq!(
            apply(None, &del),
            Err(ApplyError::MissingFile("a.py".into()))
        );
    }
}
