//! Moving the indexed state forward by one commit: apply the new file records,
//! re-resolve every file whose edges may have changed, and compute the deltas
//! the journal records. Pure: no git, no actors, no storage.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use sno_journal::delta::{self, diff, State};
use sno_journal::event::FileDelta;
use sno_journal::model::{EdgeKind, EdgeTarget, FileRecord, SymbolId, SymbolKind};
use sno_journal::packed::PackedRecord;

use crate::resolve::{names_used, PathIndex, Resolver, SymbolIndex};

/// The indexes resolution needs, kept in step with a [`State`] by [`advance`]:
/// built once per run, then updated per changed file, so the cost of a commit
/// follows the size of the commit rather than of the repository.
#[derive(Debug, Default)]
pub struct RepoIndex {
    paths: PathIndex,
    symbols: SymbolIndex,
    /// Who uses what: needed only to find the files a later commit affects,
    /// so a run that indexes a single commit from scratch never builds it.
    refs: Option<RefIndex>,
}

/// Which files use a name or import anything. A file's path is one
/// shared string however many names it uses: on 8.4M lines there are
/// millions of (name, file) pairs, and a copy of the path each took most
/// of a commit's peak memory.
#[derive(Debug, Default)]
struct RefIndex {
    /// name -> files whose references use it.
    users: FxHashMap<String, BTreeSet<Arc<str>>>,
    /// Files with at least one import.
    importers: BTreeSet<Arc<str>>,
}

impl RepoIndex {
    /// Indexes a whole state.
    pub fn new(state: &State) -> RepoIndex {
        RepoIndex {
            paths: PathIndex::new(state.keys()),
            symbols: SymbolIndex::new(state),
            refs: None,
        }
    }

    /// An index of the repository's paths and of no file's symbols yet,
    /// for [`advance_with`] over records read on demand: it reads the
    /// symbols resolution asks for from the [`Views`], and gives the
    /// deltas an index of the whole state gives.
    pub fn partial<'p>(paths: impl Iterator<Item = &'p String>) -> RepoIndex {
        RepoIndex {
            paths: PathIndex::new(paths),
            symbols: SymbolIndex::partial(),
            refs: None,
        }
    }

    /// Builds what a later commit's [`advance`] needs of `state` now
    /// rather than in it.
    pub fn prepare(&mut self, state: &State) {
        self.refs(state);
    }

    /// The reference index, built from `state` the first time it is needed.
    fn refs(&mut self, state: &State) -> &mut RefIndex {
        self.refs.get_or_insert_with(|| {
            let mut refs = RefIndex::default();
            for rec in state.values() {
                refs.add(rec);
            }
            refs
        })
    }
}

/// What an advance over records read on demand ([`advance_with`]) asks of
/// the views it moves from (the previous state, as stored): each answer
/// reads only what it names.
pub trait Views {
    /// The records of those of `paths` the views have.
    fn records(&mut self, paths: &[&str]) -> State;
    /// The records of every file defining a symbol under one of `keys`
    /// ([`sno_journal::store::name_key`]).
    fn defining(&mut self, keys: &[String]) -> State;
    /// The paths of the files whose resolution depends on `name`
    /// ([`names_used`]).
    fn users(&mut self, name: &str) -> BTreeSet<String>;
    /// The paths of the files with an import.
    fn importers(&mut self) -> BTreeSet<String>;
}

/// The views an advance reads on demand, if it does.
type Lazy<'v> = Option<&'v mut dyn Views>;

/// Loads into `state` the records of `paths` it lacks; returns the paths
/// loaded.
fn ensure<'p>(
    state: &mut State,
    views: &mut Lazy<'_>,
    paths: impl IntoIterator<Item = &'p str>,
) -> Vec<String> {
    let Some(views) = views else {
        return Vec::new();
    };
    let missing: Vec<&str> = paths
        .into_iter()
        .filter(|p| !state.contains_key(*p))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let got = views.records(&missing);
    let loaded: Vec<String> = got.keys().cloned().collect();
    state.extend(got);
    loaded
}

/// Drops from a state read on demand the records `loaded` for a check that
/// left them as they are.
fn evict(state: &mut State, loaded: Vec<String>, keep: impl Fn(&str) -> bool) {
    for p in loaded {
        if !keep(&p) {
            state.remove(&p);
        }
    }
}

impl RefIndex {
    fn add(&mut self, rec: &FileRecord) {
        let path: Arc<str> = rec.path.as_str().into();
        for name in names_used(rec) {
            match self.users.get_mut(name) {
                Some(users) => {
                    users.insert(path.clone());
                }
                None => {
                    self.users
                        .insert(name.to_string(), BTreeSet::from([path.clone()]));
                }
            }
        }
        if !rec.refs.imports.is_empty() {
            self.importers.insert(path);
        }
    }

    fn remove(&mut self, rec: &FileRecord) {
        for name in names_used(rec) {
            if let Some(users) = self.users.get_mut(name) {
                users.remove(rec.path.as_str());
                if users.is_empty() {
                    self.users.remove(name);
                }
            }
        }
        self.importers.remove(rec.path.as_str());
    }
}

/// Maps `f` over `items` on all cores, keeping the order of `items`.
/// Files differ in cost by orders of magnitude (a generated C table beside
/// a three-line module): rayon's work stealing keeps both cores busy to
/// the end, where halves left one idle.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}

/// Callable and type definitions of a name: what repository-unique
/// resolution counts.
fn name_counts(symbols: &SymbolIndex, name: &str) -> NameCounts {
    (
        symbols.count(name, SymbolKind::is_callable),
        symbols.count(name, SymbolKind::is_type),
    )
}

/// Callable and type definition counts of a name, per language family.
type NameCounts = (Vec<(u8, usize)>, Vec<(u8, usize)>);

/// Whether uniqueness can change in any language family.
fn any_family_may_change(before: &[(u8, usize)], after: &[(u8, usize)]) -> bool {
    let get = |v: &[(u8, usize)], f: u8| v.iter().find(|(x, _)| *x == f).map_or(0, |(_, n)| *n);
    before
        .iter()
        .chain(after)
        .any(|(f, _)| uniqueness_may_change(get(before, *f), get(after, *f)))
}

/// Whether "the only definition of this name" can differ between two counts:
/// when the count passes through one, or stays at one (the one definition may
/// have been replaced).
fn uniqueness_may_change(before: usize, after: usize) -> bool {
    (before != after && before.min(after) <= 1) || (before == 1 && after == 1)
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// Whether a file's current import edges point at any of `paths` (or their
/// package directories).
fn imports_any(rec: &FileRecord, paths: &BTreeSet<String>) -> bool {
    rec.edges.iter().any(|e| {
        e.kind == EdgeKind::Imports
            && match &e.to {
                EdgeTarget::File(f) => paths.contains(f),
                EdgeTarget::Module(d) => paths
                    .iter()
                    .any(|p| p.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("") == d),
                _ => false,
            }
    })
}

/// Whether the state is used again after an [`advance`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StateAfter {
    /// It is: the state must equal the new commit's.
    Kept,
    /// It is not (the run's last commit): the records of added files are
    /// moved into the deltas instead of copied, and leave the state.
    Dropped,
}

/// Applies `updates` (path -> new record, `None` = gone) to `state`, resolves
/// edges, and returns the deltas from the old state to the new one, by path.
///
/// New records arrive without edges; every edge in the result comes from
/// resolution against the whole new state, so an incremental advance and a
/// fresh index of the same commit agree (the replay invariant).
pub fn advance(
    state: &mut State,
    index: &mut RepoIndex,
    updates: BTreeMap<String, Option<FileRecord>>,
    after: StateAfter,
) -> Vec<FileDelta> {
    advance_with(state, index, updates, after, None)
}

/// [`advance`] over a state that holds only some of the records, `views`
/// reading the others when a step needs them, with an index that holds
/// only the files resolution asks for ([`RepoIndex::partial`]): what a
/// commit costs a repository too large to hold. Which files a change
/// affects is read from the views' tables, the names a resolution looks up
/// are completed from the files defining them until it looks up none it
/// lacks, and records read only to be checked are dropped again; the
/// deltas are those of the whole state.
pub fn advance_with(
    state: &mut State,
    index: &mut RepoIndex,
    updates: BTreeMap<String, Option<FileRecord>>,
    after: StateAfter,
    mut views: Lazy<'_>,
) -> Vec<FileDelta> {
    let lazy = views.is_some();
    debug_assert_eq!(lazy, index.symbols.is_partial());
    ensure(state, &mut views, updates.keys().map(String::as_str));
    if let Some(v) = views.as_deref_mut() {
        // Every definition of a name the commit adds or removes is held
        // before it moves: counts and uniqueness are the whole state's.
        let keys: BTreeSet<String> = updates
            .iter()
            .flat_map(|(path, new)| state.get(path).into_iter().chain(new.iter()))
            .flat_map(|r| &r.symbols)
            .map(|s| sno_journal::store::name_key(&s.name).to_string())
            .collect();
        let keys: Vec<String> = keys.into_iter().collect();
        let defining = v.defining(&keys);
        index.symbols.add_complete(&keys, &defining);
        // The commit's files come from the commit from now on.
        for path in updates.keys() {
            index.symbols.hold(path);
        }
    }
    let mut before: BTreeMap<String, Option<FileRecord>> = BTreeMap::new();
    // Names whose definitions appeared or vanished, and the files where.
    let mut affected_names: FxHashMap<String, BTreeSet<String>> = FxHashMap::default();
    let mut paths_changed = false;
    let mut counts_before: FxHashMap<String, NameCounts> = FxHashMap::default();
    // Names of members (methods) that appeared or vanished: `x.name()` and
    // `self.name()` anywhere may now find another one.
    let mut members_moved: FxHashSet<String> = FxHashSet::default();
    let initial = state.is_empty() && !lazy;
    // A first index resolves every file, so it needs no reference index;
    // every later commit does, and keeps it in step below (over records
    // read on demand, the views' tables stand for it).
    if !initial && !lazy {
        index.refs(state);
    }
    for (path, new) in updates {
        let old = state.remove(&path);
        // A first index resolves every file anyway: which names appeared
        // matters only to later commits.
        if !initial {
            let old_ids: FxHashSet<SymbolId> = old
                .iter()
                .flat_map(|r| r.symbols.iter().map(|s| s.id))
                .collect();
            let new_ids: FxHashSet<SymbolId> = new
                .iter()
                .flat_map(|r| r.symbols.iter().map(|s| s.id))
                .collect();
            let vanished = old
                .iter()
                .flat_map(|r| &r.symbols)
                .filter(|s| !new_ids.contains(&s.id));
            let appeared = new
                .iter()
                .flat_map(|r| &r.symbols)
                .filter(|s| !old_ids.contains(&s.id));
            // A type whose bases changed changes what `self.x()` finds in
            // it and in its subtypes: like a name that moved.
            let bases = |r: &Option<FileRecord>| -> BTreeSet<(SymbolId, String)> {
                r.iter()
                    .flat_map(|r| &r.refs.inherits)
                    .map(|i| (i.symbol, i.base.clone()))
                    .collect()
            };
            let (bases_old, bases_new) = (bases(&old), bases(&new));
            let rebased: FxHashSet<SymbolId> = bases_old
                .symmetric_difference(&bases_new)
                .map(|(id, _)| *id)
                .collect();
            let rebased = old
                .iter()
                .chain(new.iter())
                .flat_map(|r| &r.symbols)
                .filter(|s| rebased.contains(&s.id));
            for s in vanished.chain(appeared) {
                if s.parent.is_some() {
                    members_moved.insert(s.name.clone());
                }
                affected_names
                    .entry(s.name.clone())
                    .or_default()
                    .insert(path.clone());
                // Counts before this commit, for names this commit touches.
                counts_before
                    .entry(s.name.clone())
                    .or_insert_with(|| name_counts(&index.symbols, &s.name));
            }
            for s in rebased {
                affected_names
                    .entry(s.name.clone())
                    .or_default()
                    .insert(path.clone());
            }
        }
        if let Some(old) = &old {
            index.symbols.remove(old);
            if let Some(refs) = &mut index.refs {
                refs.remove(old);
            }
        }
        match (&old, &new) {
            (None, Some(_)) => {
                index.paths.add(&path);
                paths_changed = true;
            }
            (Some(_), None) => {
                index.paths.remove(&path);
                paths_changed = true;
            }
            _ => {}
        }
        if let Some(mut rec) = new {
            rec.edges.clear();
            index.symbols.add(&rec);
            if let Some(refs) = &mut index.refs {
                refs.add(&rec);
            }
            state.insert(path.clone(), rec);
        }
        before.insert(path, old);
    }

    let mut to_resolve: BTreeSet<String> = before
        .keys()
        .filter(|p| state.contains_key(*p))
        .cloned()
        .collect();
    // Without a reference index this is a first index: every file is in
    // `to_resolve` already.
    let refs = index.refs.as_ref();
    for (name, defined_in) in &affected_names {
        // The views' users, but for the commit's own files: those still
        // there are resolved anyway, and the others are gone.
        let users: Vec<String> = match (refs, views.as_deref_mut()) {
            (Some(refs), _) => refs
                .users
                .get(name)
                .into_iter()
                .flatten()
                .map(|u| u.to_string())
                .collect(),
            (None, Some(v)) => v
                .users(name)
                .into_iter()
                .filter(|u| !before.contains_key(u))
                .collect(),
            (None, None) => continue,
        };
        // A repository-unique name can only start or stop being unique when
        // its count passes through one; otherwise only files that import one
        // of the changed files can see the change.
        let (cb, tb) = counts_before.get(name).cloned().unwrap_or_default();
        let (ca, ta) = name_counts(&index.symbols, name);
        if any_family_may_change(&cb, &ca)
            || any_family_may_change(&tb, &ta)
            || members_moved.contains(name)
        {
            to_resolve.extend(users);
            continue;
        }
        // Otherwise only files that can see the changed files: those that
        // import them, and those of the same package (Go, Java).
        let dirs: BTreeSet<&str> = defined_in.iter().map(|p| dir_of(p)).collect();
        let loaded = ensure(
            state,
            &mut views,
            users
                .iter()
                .map(String::as_str)
                .filter(|u| !to_resolve.contains(*u) && !dirs.contains(dir_of(u))),
        );
        for user in &users {
            let user: &str = user;
            if !to_resolve.contains(user)
                && (dirs.contains(dir_of(user)) || imports_any(&state[user], defined_in))
            {
                to_resolve.insert(user.to_string());
            }
        }
        evict(state, loaded, |p| {
            to_resolve.contains(p) || before.contains_key(p)
        });
    }
    let importers: Option<Vec<String>> = match (paths_changed, refs, views.as_deref_mut()) {
        (false, _, _) => None,
        (true, Some(refs), _) => Some(refs.importers.iter().map(|p| p.to_string()).collect()),
        (true, None, Some(v)) => Some(
            v.importers()
                .into_iter()
                .filter(|p| !before.contains_key(p))
                .collect(),
        ),
        (true, None, None) => None,
    };
    if let Some(importers) = importers {
        let resolver = Resolver::new(&index.paths, &index.symbols);
        // A new or vanished path can only change import targets; files whose
        // imports still resolve the same keep their edges. Read on demand,
        // a block of importers at a time.
        let importers: Vec<&str> = importers
            .iter()
            .map(String::as_str)
            .filter(|p| !to_resolve.contains(*p))
            .collect();
        for block in importers.chunks(512) {
            let loaded = ensure(state, &mut views, block.iter().copied());
            for path in block {
                let rec = &state[*path];
                let current = rec.edges.iter().filter(|e| e.kind == EdgeKind::Imports);
                if !current.eq(resolver.import_edges(rec).iter()) {
                    to_resolve.insert(path.to_string());
                }
            }
            evict(state, loaded, |p| {
                to_resolve.contains(p) || before.contains_key(p)
            });
        }
    }
    ensure(state, &mut views, to_resolve.iter().map(String::as_str));
    // A partial index holds every file it resolves: their own types'
    // bases and members are looked up in it.
    for path in &to_resolve {
        index.symbols.add_held(&state[path.as_str()]);
    }

    // Resolution is pure, so files resolve on all cores. Over a partial
    // index it is run again with the names it lacked until it lacks none:
    // then every name it looked up was whole, and so are its edges.
    let to_resolve: Vec<&String> = to_resolve.iter().collect();
    let resolved = loop {
        let resolver = Resolver::new(&index.paths, &index.symbols);
        let resolved = par_map(&to_resolve, |p| resolver.edges_for(&state[*p]));
        let missed = index.symbols.take_missed();
        match views.as_deref_mut() {
            Some(v) if !missed.is_empty() => {
                let defining = v.defining(&missed);
                index.symbols.add_complete(&missed, &defining);
            }
            _ => break resolved,
        }
    };
    for (path, edges) in to_resolve.into_iter().zip(resolved) {
        let rec = state
            .get_mut(path.as_str())
            .expect("resolved paths are in the state");
        if !before.contains_key(path.as_str()) {
            if rec.edges == edges {
                continue;
            }
            before.insert(path.clone(), Some(rec.clone()));
        }
        rec.edges = edges;
    }

    // A first index copies every symbol into its deltas: worth both cores,
    // and not worth doing at all when the state is dropped next (files it
    // adds are then moved into their deltas).
    let before: Vec<(String, Option<FileRecord>)> = before.into_iter().collect();
    let moves = |old: &Option<FileRecord>| after == StateAfter::Dropped && old.is_none();
    let diffs = par_map(&before, |(path, old)| {
        (!moves(old))
            .then(|| diff(path, old.as_ref(), state.get(path)))
            .flatten()
    });
    before
        .into_iter()
        .zip(diffs)
        .filter_map(|((path, old), d)| match moves(&old) {
            true => state.remove(&path).map(delta::added),
            false => d,
        })
        .collect()
}

/// A first index of one commit, streamed: each parsed file's record is
/// packed ([`PackedRecord`]) as it arrives and its symbols indexed, then
/// [`FirstIndex::into_deltas`] resolves and hands out the deltas a block
/// of files at a time. What is held between parsing and writing is the
/// packed records and the symbol index, not every record: on 9.3M lines,
/// records took about 1.5 GB, and their resolved edges 1 GB more.
///
/// The deltas are those [`advance`] makes from an empty state with the same
/// records: the symbol index keeps its entries in (path, position) order
/// whatever order files are added in, and paths are indexed in order.
#[derive(Debug, Default)]
pub struct FirstIndex {
    packed: BTreeMap<String, PackedRecord>,
    symbols: SymbolIndex,
    packed_bytes: usize,
}

impl FirstIndex {
    /// Files resolved and handed out together (both cores share a block).
    const BLOCK: usize = 512;

    /// Packed bytes of a block at most, past its first file: a block is
    /// unpacked and resolved whole, and 512 generated files (a crate of
    /// Windows bindings) held hundreds of MB at once.
    const BLOCK_BYTES: usize = if cfg!(test) { 1 << 12 } else { 4 << 20 };

    /// Adds a file's record. A commit's listing names each path once.
    pub fn add(&mut self, mut rec: FileRecord) {
        rec.edges.clear();
        self.symbols.add_unordered(&rec);
        let packed = PackedRecord::pack(&rec);
        self.packed_bytes += packed.len();
        let before = self.packed.insert(rec.path.clone(), packed);
        debug_assert!(before.is_none(), "{} added twice", rec.path);
    }

    /// Files added.
    pub fn len(&self) -> usize {
        self.packed.len()
    }

    /// Whether no file was added.
    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Bytes of the packed records.
    pub fn packed_bytes(&self) -> usize {
        self.packed_bytes
    }

    /// How many deltas there are, and the deltas in path order, each
    /// file's edges resolved against every file's symbols as it comes.
    pub fn into_deltas(self) -> (usize, impl Iterator<Item = FileDelta> + Send) {
        let len = self.packed.len();
        let paths = PathIndex::new(self.packed.keys());
        let mut symbols = self.symbols;
        symbols.put_in_order();
        let mut files = self.packed.into_iter().peekable();
        let mut ready = std::collections::VecDeque::new();
        let deltas = std::iter::from_fn(move || {
            if ready.is_empty() {
                let mut block: Vec<(String, PackedRecord)> = Vec::new();
                let mut bytes = 0;
                while let Some((_, next)) = files.peek() {
                    if block.len() == Self::BLOCK
                        || (!block.is_empty() && bytes + next.len() > Self::BLOCK_BYTES)
                    {
                        break;
                    }
                    bytes += next.len();
                    block.extend(files.next());
                }
                let resolver = Resolver::new(&paths, &symbols);
                ready.extend(par_map(&block, |(_, packed)| {
                    let mut rec = packed
                        .unpack()
                        .expect("a record packed by this run unpacks");
                    rec.edges = resolver.edges_for(&rec);
                    delta::added(rec)
                }));
            }
            ready.pop_front()
        });
        (len, deltas)
    }
}

#[cfg(test)]
mod tests {
    use super::{advance, advance_with, FirstIndex, RepoIndex, StateAfter, Views};
    use crate::resolve::names_used;
    use sno_journal::delta::State;
    use sno_journal::model::{FileRecord, RawCall, RawImport};
    use sno_journal::test_support::record;
    use std::collections::BTreeSet;

    /// Files that call each other's functions by bare name, through
    /// imports, and by names defined twice (a guess), in several dirs.
    fn repository() -> Vec<FileRecord> {
        let mut out = Vec::new();
        for i in 0..1200u32 {
            let path = format!("pkg{}/m{i}.py", i % 7);
            let own = [
                format!("f{i}"),
                format!("shared{}", i % 3),
                "helper".to_string(),
            ];
            let own: Vec<&str> = own.iter().map(String::as_str).collect();
            let mut r = record(&path, (i % 250) as u8, &own);
            let caller = Some(r.symbols[0].id);
            for callee in [
                format!("f{}", (i * 7 + 1) % 1200),
                "helper".into(),
                format!("shared{}", (i + 1) % 3),
            ] {
                r.refs.calls.push(RawCall {
                    caller,
                    callee,
                    receiver: None,
                    line: 3,
                });
            }
            r.refs.imports.push(RawImport {
                module: format!("pkg{}.m{}", (i + 1) % 7, (i + 1) % 1200),
                names: vec![format!("f{}", (i + 1) % 1200)],
                alias: None,
                is_relative: false,
                line: 1,
            });
            r.canonicalize();
            out.push(r);
        }
        out
    }

    /// Streamed, in any order of arrival, a first index gives the deltas
    /// an advance from the empty state gives: same records, same edges.
    #[test]
    fn a_streamed_first_index_gives_the_deltas_of_an_advance_from_nothing() {
        let recs = repository();
        let mut state = State::default();
        let mut index = RepoIndex::new(&state);
        let updates = recs
            .iter()
            .map(|r| (r.path.clone(), Some(r.clone())))
            .collect();
        let expected = advance(&mut state, &mut index, updates, StateAfter::Dropped);
        assert!(
            expected.iter().any(|d| !d.edges_added.is_empty()),
            "the fixture resolves some calls"
        );
        let mut first = FirstIndex::default();
        // Arrival order is the parsers' finishing order: not the paths'.
        for r in recs.iter().rev().step_by(2).chain(recs.iter().step_by(2)) {
            first.add(r.clone());
        }
        assert_eq!(first.len(), recs.len());
        let (len, deltas) = first.into_deltas();
        let got: Vec<_> = deltas.collect();
        assert_eq!(len, got.len());
        assert!(got == expected);
    }

    /// The views of a state, answering as the stored views do, and
    /// counting what is asked of them.
    struct Over<'a> {
        views: &'a State,
        /// Paths whose records were read to be checked or resolved.
        read: BTreeSet<String>,
        /// Keys whose defining files were read.
        defined: BTreeSet<String>,
    }

    impl Views for Over<'_> {
        fn records(&mut self, paths: &[&str]) -> State {
            self.read.extend(paths.iter().map(|p| p.to_string()));
            paths
                .iter()
                .filter_map(|p| self.views.get(*p).map(|r| (p.to_string(), r.clone())))
                .collect()
        }

        fn defining(&mut self, keys: &[String]) -> State {
            self.defined.extend(keys.iter().cloned());
            self.views
                .iter()
                .filter(|(_, r)| {
                    r.symbols.iter().any(|s| {
                        keys.iter()
                            .any(|k| k == sno_journal::store::name_key(&s.name))
                    })
                })
                .map(|(p, r)| (p.clone(), r.clone()))
                .collect()
        }

        fn users(&mut self, name: &str) -> BTreeSet<String> {
            self.views
                .iter()
                .filter(|(_, r)| names_used(r).contains(name))
                .map(|(p, _)| p.clone())
                .collect()
        }

        fn importers(&mut self) -> BTreeSet<String> {
            self.views
                .iter()
                .filter(|(_, r)| !r.refs.imports.is_empty())
                .map(|(p, _)| p.clone())
                .collect()
        }
    }

    /// A commit advanced over records read on demand, with an index that
    /// holds only what resolution asks for, gives the deltas of the same
    /// advance over the whole state; one that adds or removes no file reads
    /// only some of the records to check or resolve (one that does checks
    /// every importer, a block at a time).
    #[test]
    fn an_advance_over_records_read_on_demand_equals_one_over_the_whole_state() {
        let recs = repository();
        let mut views = State::default();
        let mut index = RepoIndex::new(&views);
        let all = recs
            .iter()
            .map(|r| (r.path.clone(), Some(r.clone())))
            .collect();
        advance(&mut views, &mut index, all, StateAfter::Kept);
        let edit = |path: &str, names: &[&str]| {
            let mut r = record(path, 251, names);
            r.canonicalize();
            (path.to_string(), Some(r))
        };
        // Two files edited, one losing the only definition of a name
        // others call.
        let edits: std::collections::BTreeMap<_, _> = [
            edit("pkg0/m0.py", &["g0", "shared0", "helper"]),
            edit("pkg1/m8.py", &["f8", "shared2", "helper", "added"]),
        ]
        .into();
        // And one added that defines a name used elsewhere, one deleted.
        let mut paths_move = edits.clone();
        paths_move.extend([edit("pkg9/new.py", &["shared1"])]);
        paths_move.insert("pkg3/m3.py".to_string(), None);

        for (updates, reads_some) in [(edits, true), (paths_move, false)] {
            let mut whole = views.clone();
            let mut whole_index = RepoIndex::new(&whole);
            whole_index.prepare(&whole);
            let expected = advance(
                &mut whole,
                &mut whole_index,
                updates.clone(),
                StateAfter::Dropped,
            );
            assert!(
                expected.len() > updates.len(),
                "other files are re-resolved"
            );

            let updates_keys: Vec<String> = updates.keys().cloned().collect();
            let updates_new: Vec<FileRecord> = updates.values().flatten().cloned().collect();
            let mut index = RepoIndex::partial(views.keys());
            let mut over = Over {
                views: &views,
                read: BTreeSet::new(),
                defined: BTreeSet::new(),
            };
            let mut partial = State::default();
            let got = advance_with(
                &mut partial,
                &mut index,
                updates,
                StateAfter::Dropped,
                Some(&mut over),
            );
            // Beside the names the commit moves, those the files it
            // re-resolves look up were read whole, as they missed.
            let moved: BTreeSet<String> = updates_keys
                .iter()
                .filter_map(|p| views.get(p))
                .chain(updates_new.iter())
                .flat_map(|r| r.symbols.iter().map(|s| s.name.clone()))
                .collect();
            assert!(
                over.defined.difference(&moved).next().is_some(),
                "{:?}",
                over.defined
            );
            let read = over.read;
            assert!(
                got == expected,
                "{} deltas against {}",
                got.len(),
                expected.len()
            );
            if reads_some {
                assert!(
                    read.len() < views.len() / 2,
                    "read {} of {}",
                    read.len(),
                    views.len()
                );
            }
        }
    }
}
