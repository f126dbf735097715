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
            masked_secrets: self.masked_secrets,
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
            masked_secrets: meta.masked_secrets,
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
            && self.masked_secrets == other.masked_secrets
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
        (None, Some(new)) => Some(added(new.clone())),
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

/// The delta that adds `rec` to a state without it: `diff(path, None,
/// Some(&rec))`, made by moving the record's parts instead of copying them.
pub fn added(rec: FileRecord) -> FileDelta {
    FileDelta {
        path: rec.path,
        change: FileChange::Added(FileMeta {
            blob: rec.blob,
            language: rec.language,
            size: rec.size,
            lines: rec.lines,
            state: rec.state,
            diagnostics: rec.diagnostics,
            refs: rec.refs,
            masked_secrets: rec.masked_secrets,
        }),
        symbols_removed: Vec::new(),
        symbols_added: rec.symbols,
        edges_removed: Vec::new(),
        edges_added: rec.edges,
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

/// The encoded view of a file `delta` adds to a state that lacks it, the
/// bytes of `encode_view(&apply(None, delta))`, made without copying the
/// delta's symbols and edges. `None` if `delta` is not such an addition or
/// its parts are not in canonical order, which [`apply`] would restore.
///
/// A first index adds every file of the repository, so this spares it a
/// second copy of everything it stores.
pub(crate) fn encode_added_view(delta: &FileDelta) -> Option<Vec<u8>> {
    let FileChange::Added(meta) = &delta.change else {
        return None;
    };
    let sorted = delta.symbols_removed.is_empty()
        && delta.edges_removed.is_empty()
        && delta
            .symbols_added
            .windows(2)
            .all(|w| symbol_order(&w[0]) < symbol_order(&w[1]))
        && delta.edges_added.windows(2).all(|w| w[0] < w[1])
        && meta.diagnostics.windows(2).all(|w| w[0] <= w[1]);
    sorted.then(|| {
        let view = crate::stored::current::FileViewRef::Parts(crate::stored::current::ViewParts {
            path: &delta.path,
            meta,
            symbols: &delta.symbols_added,
            edges: &delta.edges_added,
        });
        bincode::serde::encode_to_vec(view, crate::stored::config())
            .expect("encoding plain structs into a Vec cannot fail")
    })
}

/// [`FileRecord::canonicalize`]'s order of symbols.
fn symbol_order(s: &Symbol) -> (u32, u32, SymbolId) {
    (s.span.start_byte, s.span.end_byte, s.id)
}

/// An in-memory indexed state: every file's record, by path.
pub type State = BTreeMap<String, FileRecord>;

/// The deltas that take `old` to `new`, one per file that differs, in path
/// order.
pub fn diff_states(old: &State, new: &State) -> Vec<FileDelta> {
    let paths: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    paths
        .into_iter()
        .filter_map(|p| diff(p, old.get(p), new.get(p)))
        .collect()
}

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
    let mut d = Digest::default();
    for rec in state.values() {
        d.add(rec);
    }
    d.finish()
}

/// [`digest`] of records given one at a time, in path order: a state's
/// digest without the state held.
#[derive(Default)]
pub struct Digest(xxhash_rust::xxh3::Xxh3);

impl Digest {
    /// Adds the next record (in path order).
    pub fn add(&mut self, rec: &FileRecord) {
        self.0.update(&crate::stored::encode_view(rec));
    }

    /// The digest of the records added.
    pub fn finish(&self) -> u64 {
        self.0.digest()
    }
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
            masked_secrets: 0,
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
            certainty: Certainty::Exact,
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
    fn an_added_view_encodes_like_the_applied_record() {
        let a = sym("a.py", "a", 1, 1);
        let b = sym("a.py", "b", 3, 2);
        let mut new = rec(
            "a.py",
            2,
            vec![b.clone(), a.clone()],
            vec![call(&a, "y"), call(&b, "x")],
        );
        new.state = FileState::ParsedWithErrors;
        new.diagnostics = vec![Diagnostic {
            line: 4,
            column: 1,
            message: "syntax error".into(),
        }];
        new.refs.calls.push(RawCall {
            caller: Some(a.id),
            callee: "y".into(),
            receiver: Some("self".into()),
            line: 2,
        });
        new.canonicalize();
        let add = diff("a.py", None, Some(&new)).unwrap();
        let applied = crate::stored::encode_view(&apply(None, &add).unwrap().unwrap());
        assert_eq!(encode_added_view(&add), Some(applied));

        // Out of canonical order, or not an addition: left to `apply`.
        let mut unsorted = add.clone();
        unsorted.symbols_added.reverse();
        assert_eq!(encode_added_view(&unsorted), None);
        let modified = diff("a.py", Some(&rec("a.py", 1, vec![a], vec![])), Some(&new)).unwrap();
        assert_eq!(encode_added_view(&modified), None);
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
