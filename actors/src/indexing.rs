//! Moving the indexed state forward by one commit: apply the new file records,
//! re-resolve every file whose edges may have changed, and compute the deltas
//! the journal records. Pure: no git, no actors, no storage.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use sno_journal::delta::{diff, State};
use sno_journal::event::FileDelta;
use sno_journal::model::{Edge, FileRecord, SymbolId};

use crate::resolve::{PathIndex, Resolver};

/// Applies `updates` (path -> new record, `None` = gone) to `state`, resolves
/// edges, and returns the deltas from the old state to the new one, by path.
///
/// New records arrive without edges; every edge in the result comes from
/// resolution against the whole new state, so an incremental advance and a
/// fresh index of the same commit agree.
pub fn advance(
    state: &mut State,
    paths: &mut PathIndex,
    updates: BTreeMap<String, Option<FileRecord>>,
) -> Vec<FileDelta> {
    let mut before: BTreeMap<String, Option<FileRecord>> = BTreeMap::new();
    let mut affected_names: HashSet<String> = HashSet::new();
    let mut paths_changed = false;
    for (path, new) in updates {
        let old = state.remove(&path);
        let old_ids: HashSet<SymbolId> = old
            .iter()
            .flat_map(|r| r.symbols.iter().map(|s| s.id))
            .collect();
        let new_ids: HashSet<SymbolId> = new
            .iter()
            .flat_map(|r| r.symbols.iter().map(|s| s.id))
            .collect();
        for s in old
            .iter()
            .flat_map(|r| &r.symbols)
            .filter(|s| !new_ids.contains(&s.id))
        {
            affected_names.insert(s.name.clone());
        }
        for s in new
            .iter()
            .flat_map(|r| &r.symbols)
            .filter(|s| !old_ids.contains(&s.id))
        {
            affected_names.insert(s.name.clone());
        }
        paths_changed |= old.is_none() != new.is_none();
        if let Some(mut rec) = new {
            rec.edges.clear();
            state.insert(path.clone(), rec);
        }
        before.insert(path, old);
    }
    if paths_changed {
        *paths = PathIndex::new(state.keys());
    }

    let mut to_resolve: BTreeSet<String> = before
        .keys()
        .filter(|p| state.contains_key(*p))
        .cloned()
        .collect();
    if paths_changed || !affected_names.is_empty() {
        for (path, rec) in state.iter() {
            if to_resolve.contains(path) {
                continue;
            }
            let depends = (paths_changed && !rec.refs.imports.is_empty())
                || rec
                    .refs
                    .calls
                    .iter()
                    .any(|c| affected_names.contains(&c.callee))
                || rec
                    .refs
                    .inherits
                    .iter()
                    .any(|i| affected_names.contains(&i.base))
                || rec
                    .refs
                    .imports
                    .iter()
                    .any(|i| i.names.iter().any(|n| affected_names.contains(n)));
            if depends {
                to_resolve.insert(path.clone());
            }
        }
    }

    let resolved: Vec<(String, Vec<Edge>)> = {
        let resolver = Resolver::new(state, paths);
        to_resolve
            .iter()
            .map(|p| (p.clone(), resolver.edges_for(&state[p])))
            .collect()
    };
    for (path, edges) in resolved {
        let rec = state
            .get_mut(&path)
            .expect("resolved paths are in the state");
        if !before.contains_key(&path) {
            if rec.edges == edges {
                continue;
            }
            before.insert(path.clone(), Some(rec.clone()));
        }
        rec.edges = edges;
    }

    before
        .iter()
        .filter_map(|(path, old)| diff(path, old.as_ref(), state.get(path)))
        .collect()
}
