//! The read model: indexed states, their search indexes and call graphs,
//! file texts as served, memory, and the embedding model, each cached by
//! what it reflects (the journal position of the head, a commit for `at`,
//! the journal length for memory), so a newly indexed commit is picked up by
//! the next answer with no invalidation message. Readers work from redb read
//! transactions: consistent snapshots beside the one writer.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use sno_index::git::GitRepo;
use sno_journal::delta::State;
use sno_journal::memory::Memory;
use sno_journal::model::{BlobId, CommitId, Seq};
use sno_journal::{IndexedHead, Journal};
use sno_protocol::query::AsOfCommit;
use sno_protocol::ErrorCode;
use sno_query::file_index::FileIndex;
use sno_query::graph::Graph;
use sno_query::head_cache::HeadCache;
use sno_query::lexical::LexicalError;
use sno_query::search::{HistoryFacts, Records, Retriever, StoredRecords};
use sno_query::semantic::Embedder;
use sno_query::served::Served;

use crate::error::Result;
use crate::repo::RepoPaths;

/// An indexed state an answer comes from.
pub struct Snapshot {
    /// `head@<seq>` or the commit's hex.
    pub key: String,
    pub state: State,
    pub as_of: AsOfCommit,
    /// The journal position of the event that made this state.
    pub seq: Seq,
    /// Whether this is the indexed head (the only state compared with the
    /// work tree).
    pub is_head: bool,
    /// Roughly what the state holds in memory, for the cache budget.
    pub bytes: usize,
}

/// Roughly the heap a state holds: its records' strings and the fixed size
/// of their symbols and edges. An estimate for the cache budget, not an
/// account.
pub fn state_bytes(state: &State) -> usize {
    state
        .iter()
        .map(|(path, rec)| path.len() + record_bytes(rec))
        .sum()
}

/// Roughly the heap one record holds (see [`state_bytes`]).
fn record_bytes(rec: &sno_journal::model::FileRecord) -> usize {
    let symbols: usize = rec
        .symbols
        .iter()
        .map(|s| {
            std::mem::size_of_val(s)
                + s.name.len()
                + s.qualified_name.len()
                + s.signature.len()
                + s.doc.len()
        })
        .sum();
    let edges: usize = rec
        .edges
        .iter()
        .map(|e| std::mem::size_of_val(e) + e.name.len())
        .sum();
    rec.path.len() + std::mem::size_of_val(rec) + symbols + edges
}

/// Which cached states to keep, most recently used first in `entries`
/// (key, bytes, is_head): the head first, then the others, while they fit
/// in `budget` beside each other, and at most [`KEEP`] in all. A head past
/// the budget is not held: search reads its stored parts and point queries
/// its tables, and what needs the whole state loads it again.
pub fn states_to_keep<'k>(entries: &[(&'k str, usize, bool)], budget: usize) -> Vec<&'k str> {
    let mut keep = Vec::new();
    let mut used = 0usize;
    for head in [true, false] {
        for &(key, bytes, _) in entries.iter().filter(|e| e.2 == head) {
            if keep.len() < KEEP && used.saturating_add(bytes) <= budget {
                used += bytes;
                keep.push(key);
            }
        }
    }
    keep
}

/// What a search index is built over.
pub struct SearchOwner {
    /// The state searched, when it is in memory. A head searched from its
    /// stored parts has none: its answers read their files from the views.
    pub snapshot: Option<Arc<Snapshot>>,
    /// `head@<seq>` or the commit's hex, as [`Snapshot::key`].
    pub key: String,
    pub as_of: AsOfCommit,
    /// Whether this is the indexed head (the only state compared with the
    /// work tree).
    pub is_head: bool,
    embedder: Option<Arc<Embedder>>,
    pub history: HistoryFacts,
    records: HeadRecords,
    /// Whole files as BM25 documents, for files answers: opened (or made)
    /// on the first one ([`ReadModel::file_index`]).
    files: std::sync::OnceLock<Option<Arc<FileIndex>>>,
    /// The state's commit and journal position: where its parts live.
    seq: Seq,
}

/// The records of the head whose stored parts a searcher was made from,
/// kept once read (they never change for that head) within
/// [`RECORD_CACHE_BYTES`]. Read without their graph (no edges, no
/// references: [`Journal::files_without_graph_at_head`]): answers quote a
/// file's symbols and text, and the graph was most of a fresh question's
/// decoding.
struct HeadRecords {
    journal: Arc<Journal>,
    seq: Seq,
    read: Mutex<RecordCache>,
}

/// Decoded records kept by a head's searcher: the files answers quote
/// again and again (a large file's record takes a millisecond to decode).
#[derive(Default)]
struct RecordCache {
    map: std::collections::HashMap<String, Arc<sno_journal::model::FileRecord>>,
    bytes: usize,
}

const RECORD_CACHE_BYTES: usize = 48 << 20;

impl HeadRecords {
    fn new(journal: Arc<Journal>, seq: Seq) -> HeadRecords {
        HeadRecords {
            journal,
            seq,
            read: Mutex::new(RecordCache::default()),
        }
    }
}

impl StoredRecords for HeadRecords {
    fn read(
        &self,
        paths: &[&str],
    ) -> Option<std::collections::HashMap<String, Arc<sno_journal::model::FileRecord>>> {
        let mut out = std::collections::HashMap::with_capacity(paths.len());
        let mut missing = Vec::new();
        {
            let cache = locked(&self.read);
            for p in paths {
                match cache.map.get(*p) {
                    Some(r) => {
                        out.insert(p.to_string(), r.clone());
                    }
                    None => missing.push(*p),
                }
            }
        }
        if missing.is_empty() {
            return Some(out);
        }
        let state = self
            .journal
            .files_without_graph_at_head(self.seq, &missing)
            .map_err(|e| tracing::warn!(error = %e, "could not read the head's files"))
            .ok()
            .flatten()?;
        let mut cache = locked(&self.read);
        for (path, rec) in state {
            let bytes = record_bytes(&rec);
            let rec = Arc::new(rec);
            if cache.bytes + bytes > RECORD_CACHE_BYTES {
                // Dropped wholesale: what answers quote next is read again.
                cache.map.clear();
                cache.bytes = 0;
            }
            cache.bytes += bytes;
            cache.map.insert(path.clone(), rec.clone());
            out.insert(path, rec);
        }
        Some(out)
    }
}

self_cell::self_cell!(
    /// A snapshot's search indexes (lexical, semantic, graph neighbours),
    /// built once and kept while the snapshot is current.
    pub struct Searcher {
        owner: SearchOwner,
        #[covariant]
        dependent: Retriever,
    }
);

self_cell::self_cell!(
    /// A snapshot's call graph, built once per snapshot.
    pub struct GraphCell {
        owner: Arc<Snapshot>,
        #[covariant]
        dependent: Graph,
    }
);

/// File texts as served by blob id, dropped wholesale past a byte budget.
#[derive(Default)]
struct BlobCache {
    map: std::collections::HashMap<BlobId, Served>,
    bytes: usize,
}

const BLOB_CACHE_BYTES: usize = 256 << 20;

/// Parts of a search index read ahead of the state they index.
#[derive(Default)]
struct Prefetch {
    history: Option<HistoryFacts>,
    lexical: Option<sno_query::lexical::LexicalIndex>,
    vectors: Option<sno_query::semantic::Vectors>,
}

/// Snapshots and searchers kept at most: the head and a couple of `at`
/// states, within the memory budget.
const KEEP: usize = 3;

/// Caches of everything answers are made from.
pub struct ReadModel {
    paths: RepoPaths,
    journal: Arc<Journal>,
    model: Arc<crate::model::ModelCell>,
    mask_secrets: bool,
    snapshots: Mutex<Vec<Arc<Snapshot>>>,
    searchers: Mutex<Vec<Arc<Searcher>>>,
    graphs: Mutex<Vec<Arc<GraphCell>>>,
    /// One git handle for reads.
    git: Mutex<Option<GitRepo>>,
    blobs: Mutex<BlobCache>,
    /// Memory folded from the journal, by the journal length it reflects.
    memory: Mutex<Option<(u64, Arc<Memory>)>>,
    /// The status report, by (snapshot key, journal length).
    status: Mutex<Option<(String, u64, sno_protocol::status::StatusReport)>>,
    /// Bytes past states and file texts may hold (`[serve] memory_mb`).
    budget: usize,
    /// One head searcher opened or advanced at a time (advancing moves the
    /// previous head's lexical index).
    advancing: Mutex<()>,
    /// The names table's distinct names at a head (by its journal
    /// position): what a missed name lookup chooses from, read once a head.
    name_keys: Mutex<Option<(Seq, Arc<Vec<String>>)>>,
    /// A head with no parts to start from gets them streamed from its
    /// views (`false` only for tests comparing with a loaded state's).
    stream_first_parts: bool,
    /// A first embedding asked of the head's streamed parts, and what it
    /// did ([`ReadModel::prepare_head_embedding`]).
    first_embedding: Mutex<FirstEmbedding>,
}

/// The vectors a head's streamed parts made rather than found stored: the
/// document and text hash of each, in document order. Their codes are
/// the parts' own, read back when they are stored: holding them twice
/// while tantivy indexed took 200 MB more on 8.3M lines.
#[derive(Default)]
struct NewVectors {
    docs: Vec<(u32, u64)>,
}

impl NewVectors {
    /// Notes the vectors `fresh` made for `run`'s texts.
    fn note(
        &mut self,
        run: &sno_query::head_build::TextRun,
        fresh: &[sno_query::search::StoredVector],
    ) {
        let made: rustc_hash::FxHashSet<u64> = fresh.iter().map(|(h, _)| *h).collect();
        for (k, text) in run.texts.iter().enumerate() {
            if text.is_empty() {
                continue;
            }
            let h = sno_query::search::text_hash(text);
            if made.contains(&h) {
                self.docs.push(((run.first + k) as u32, h));
            }
        }
    }

    /// Their stored form, from `vectors`' codes (a zero vector, which
    /// `vectors` leaves out, as zero codes).
    fn rows(&self, vectors: &sno_query::semantic::Vectors) -> sno_journal::int8::VectorRows {
        let mut rows = sno_journal::int8::VectorRows::default();
        let zero = vec![0i8; vectors.dim()];
        let mut have = vectors.iter().peekable();
        for &(doc, h) in &self.docs {
            while have.next_if(|(d, _, _)| *d < doc as usize).is_some() {}
            match have.peek() {
                Some((d, codes, scale)) if *d == doc as usize => rows.push_codes(h, *scale, codes),
                _ => rows.push_codes(h, 0.0, &zero),
            }
        }
        rows
    }
}

/// The head's first embedding, made while its parts are streamed from its
/// views: they read every file's text anyway.
#[derive(Default)]
struct FirstEmbedding {
    asked: bool,
    /// Where the files embedded are reported, as the embedder reports
    /// them.
    progress: Option<tokio::sync::mpsc::UnboundedSender<crate::indexer::Progress>>,
    done: Option<crate::embedder::EmbedSummary>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ReadModel {
    /// A read model over `journal`; nothing is loaded yet.
    pub fn new(
        paths: RepoPaths,
        journal: Arc<Journal>,
        model: Arc<crate::model::ModelCell>,
        mask_secrets: bool,
        budget: usize,
    ) -> ReadModel {
        ReadModel {
            paths,
            journal,
            model,
            mask_secrets,
            snapshots: Mutex::new(Vec::new()),
            searchers: Mutex::new(Vec::new()),
            graphs: Mutex::new(Vec::new()),
            git: Mutex::new(None),
            blobs: Mutex::new(BlobCache::default()),
            memory: Mutex::new(None),
            status: Mutex::new(None),
            budget,
            advancing: Mutex::new(()),
            name_keys: Mutex::new(None),
            stream_first_parts: true,
            first_embedding: Mutex::new(FirstEmbedding::default()),
        }
    }

    /// Whether a head with no parts to start from gets them streamed from
    /// its views (the default) or made from its loaded state.
    pub fn streaming_first_parts(mut self, on: bool) -> ReadModel {
        self.stream_first_parts = on;
        self
    }

    /// The head and the names table's distinct names, remembered for the
    /// head (a name lookup that misses reads them, and an agent polling
    /// for a name misses again and again).
    pub fn name_keys(&self) -> Result<Option<(IndexedHead, Arc<Vec<String>>)>> {
        let Some(head) = self.journal.head()? else {
            return Ok(None);
        };
        if let Some((seq, keys)) = locked(&self.name_keys).as_ref() {
            if *seq == head.seq {
                return Ok(Some((head, keys.clone())));
            }
        }
        let Some((head, keys)) = self.journal.head_and_name_keys()? else {
            return Ok(None);
        };
        let keys = Arc::new(keys);
        *locked(&self.name_keys) = Some((head.seq, keys.clone()));
        Ok(Some((head, keys)))
    }

    /// Drops what the budget cannot hold: past states (with their search
    /// indexes and call graphs), least recently used first. One cache
    /// locked at a time.
    fn evict(&self) {
        let keep: Vec<String> = {
            let snaps = locked(&self.snapshots);
            let entries: Vec<(&str, usize, bool)> = snaps
                .iter()
                .map(|s| (s.key.as_str(), s.bytes, s.is_head))
                .collect();
            states_to_keep(&entries, self.budget)
                .into_iter()
                .map(str::to_string)
                .collect()
        };
        let kept = |key: &str| keep.iter().any(|k| k == key);
        let mut dropped = Vec::new();
        locked(&self.snapshots).retain(|s| {
            let k = kept(&s.key);
            if !k {
                dropped.push(s.key.clone());
            }
            k
        });
        // A searcher without a state holds little: it stays until a newer
        // head's replaces it.
        locked(&self.searchers).retain(|s| {
            let o = s.borrow_owner();
            o.snapshot.is_none() || kept(&o.key)
        });
        locked(&self.graphs).retain(|g| kept(&g.borrow_owner().key));
        if !dropped.is_empty() {
            tracing::debug!(
                ?dropped,
                budget_mb = self.budget >> 20,
                "past states evicted"
            );
        }
    }

    /// The journal answers are read from.
    pub fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }

    /// Whether served text has its secrets masked.
    pub fn mask_secrets(&self) -> bool {
        self.mask_secrets
    }

    /// The commit `at` names (a commit-ish git resolves, or a prefix of a
    /// journaled commit git no longer has), which must have been indexed.
    pub fn journaled(&self, at: &str) -> Result<CommitId> {
        let commit = match CommitId::from_hex(at) {
            Some(id) => id,
            None => match self.with_git(|g| g.resolve(at))? {
                Ok(id) => id,
                Err(e) => {
                    // As git reads an abbreviated id: four digits at least,
                    // and one commit only.
                    let lower = at.to_ascii_lowercase();
                    let mut found: Vec<CommitId> = Vec::new();
                    if lower.len() >= 4 && lower.bytes().all(|b| b.is_ascii_hexdigit()) {
                        for (_, env) in self.journal.event_outlines(Seq(0), None)? {
                            if let sno_journal::event::Event::CommitIndexed(c) = &env.event {
                                if c.commit.to_hex().starts_with(&lower)
                                    && !found.contains(&c.commit)
                                {
                                    found.push(c.commit);
                                }
                            }
                        }
                    }
                    match found.as_slice() {
                        [] => return Err(e.into()),
                        [one] => *one,
                        many => return Err(ambiguous_commit(at, many)),
                    }
                }
            },
        };
        if self.journal.seq_of_commit(&commit)?.is_none() {
            return Err(sno_journal::replay::ReplayError::UnknownCommit(commit.to_hex()).into());
        }
        Ok(commit)
    }

    /// The state at the indexed head, or at `at`; `true` when it was cached.
    pub fn snapshot(&self, at: Option<&str>) -> Result<(Arc<Snapshot>, bool)> {
        let head = self.journal.head()?.ok_or_else(not_indexed)?;
        let key = match at {
            None => format!("head@{}", head.seq.0),
            Some(at) => {
                let c = self.journaled(at)?;
                if c == head.commit {
                    format!("head@{}", head.seq.0)
                } else {
                    c.to_hex()
                }
            }
        };
        // One builder at a time: two sessions asking for the same new state
        // wait for one load instead of doing it twice.
        let mut cache = locked(&self.snapshots);
        if let Some(i) = cache.iter().position(|s| s.key == key) {
            // Most recently used first: what the budget keeps longest.
            let s = cache.remove(i);
            cache.insert(0, s.clone());
            return Ok((s, true));
        }
        let t = std::time::Instant::now();
        let snap = Arc::new(if key.starts_with("head@") {
            let (head, state) = self.journal.head_and_state()?.ok_or_else(not_indexed)?;
            Snapshot {
                key: format!("head@{}", head.seq.0),
                bytes: state_bytes(&state),
                state,
                as_of: AsOfCommit {
                    commit: head.commit.to_hex(),
                    branch: head.branch,
                },
                seq: head.seq,
                is_head: true,
            }
        } else {
            let commit =
                CommitId::from_hex(&key).ok_or_else(|| Error::internal("bad commit key"))?;
            let seq = self.journal.seq_of_commit(&commit)?.unwrap_or(Seq(0));
            let state = sno_journal::replay::replay_to_commit(&self.journal, &commit)?;
            Snapshot {
                key: key.clone(),
                bytes: state_bytes(&state),
                state,
                as_of: AsOfCommit {
                    commit: key,
                    branch: None,
                },
                seq,
                is_head: false,
            }
        });
        tracing::debug!(key = %snap.key, ms = t.elapsed().as_millis() as u64, "state loaded");
        // A head snapshot replaces the older head: it is never asked for again.
        if snap.is_head {
            cache.retain(|s| !s.is_head);
        }
        cache.insert(0, snap.clone());
        drop(cache);
        self.evict();
        Ok((snap, false))
    }

    /// Whether the indexed head's state is in memory (answers about it need
    /// no load). Never waits: while a state is being loaded (the daemon
    /// warms the head at start) the answer is `false`, so a point query
    /// goes to the tables instead of waiting for the load.
    pub fn head_is_loaded(&self) -> bool {
        let Ok(Some(head)) = self.journal.head() else {
            return false;
        };
        let cache = match self.snapshots.try_lock() {
            Ok(cache) => cache,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        cache.iter().any(|s| s.is_head && s.seq == head.seq)
    }

    /// A status report cached by the state and journal length it reflects
    /// (`status` walks every file), or `make`'s.
    pub fn status_cached(
        &self,
        snap: &Snapshot,
        journal_len: u64,
        make: impl FnOnce() -> Result<sno_protocol::status::StatusReport>,
    ) -> Result<sno_protocol::status::StatusReport> {
        self.status_cached_by(&snap.key, journal_len, make)
    }

    /// [`ReadModel::status_cached`] by the key of the state it counts.
    pub fn status_cached_by(
        &self,
        state_key: &str,
        journal_len: u64,
        make: impl FnOnce() -> Result<sno_protocol::status::StatusReport>,
    ) -> Result<sno_protocol::status::StatusReport> {
        let mut cache = locked(&self.status);
        if let Some((key, len, r)) = cache.as_ref() {
            if key == state_key && *len == journal_len {
                return Ok(r.clone());
            }
        }
        let r = make()?;
        *cache = Some((state_key.to_string(), journal_len, r.clone()));
        Ok(r)
    }

    /// The embedding model, loaded once per engine; `None` when it cannot
    /// be loaded ([`ReadModel::semantic_off`] says why).
    pub fn embedder(&self) -> Option<Arc<Embedder>> {
        self.model.get().ok()
    }

    /// Why semantic search is off, if it is.
    pub fn semantic_off(&self) -> Option<String> {
        self.model.off_reason()
    }

    /// The search indexes of a snapshot.
    pub fn searcher(&self, snap: &Arc<Snapshot>) -> Result<Arc<Searcher>> {
        self.searcher_with(snap, Prefetch::default())
    }

    /// The searcher of the indexed head, or of `at`. The head is searched
    /// from its stored parts when they are complete (no state is loaded);
    /// otherwise, or when `whole` asks for the state in memory (file
    /// answers rank whole files), from its state.
    pub fn searcher_for(&self, at: Option<&str>, whole: bool) -> Result<Arc<Searcher>> {
        let head = self.journal.head()?.ok_or_else(not_indexed)?;
        let at_head = match at {
            None => true,
            Some(at) => self.journaled(at)? == head.commit,
        };
        if at_head && !whole {
            if let Some(s) = self.kept_head_searcher(&head) {
                return Ok(s);
            }
            if let Some(s) = self.head_searcher(&head)? {
                return Ok(s);
            }
        }
        let (snap, _) = self.snapshot(at)?;
        self.searcher(&snap)
    }

    /// Whether the indexed head's search parts are stored (`sno init`
    /// says it makes them only when they are not).
    pub fn head_parts_stored(&self) -> Result<bool> {
        let head = self.journal.head()?.ok_or_else(not_indexed)?;
        Ok(HeadCache::for_head(&self.paths.sno_dir, &head).has_parts())
    }

    /// The searcher of `head` this model keeps, if it made one.
    fn kept_head_searcher(&self, head: &IndexedHead) -> Option<Arc<Searcher>> {
        let key = format!("head@{}", head.seq.0);
        locked(&self.searchers)
            .iter()
            .find(|s| s.borrow_owner().key == key)
            .cloned()
    }

    /// A searcher of `head` from its stored parts, or, for a new head,
    /// from the previous head's advanced by the files the commits since
    /// touched: only those files' records are read, never the whole
    /// state. `None` when there is nothing to start from, or a rollback or
    /// branch move lies between (the state is then loaded).
    fn head_searcher(&self, head: &IndexedHead) -> Result<Option<Arc<Searcher>>> {
        // One at a time: a second caller finds what the first made (kept,
        // not opened again: on 8.4M lines a second opening took 0.5 s and
        // 400 MB more while the first was held).
        let _one = locked(&self.advancing);
        if let Some(s) = self.kept_head_searcher(head) {
            return Ok(Some(s));
        }
        if let Some(s) = self.stored_searcher(head)? {
            return Ok(Some(s));
        }
        // A previous head's searcher serves no query from now on (queries
        // of the head wait for this one): it goes before the new head's
        // parts are made, not after. A query still holding it keeps it.
        locked(&self.searchers).retain(|s| {
            let o = s.borrow_owner();
            !o.is_head || o.snapshot.as_ref().is_some_and(|snap| snap.seq == head.seq)
        });
        let cache = HeadCache::for_head(&self.paths.sno_dir, head);
        let previous = cache.previous_head();
        let had_previous = previous.is_some();
        if let Some(s) = self.advanced_head(head, &cache, previous)? {
            return Ok(Some(s));
        }
        // Nothing to start from; or, on a repository too large to keep,
        // nothing the previous head's parts could be advanced by (a
        // rollback, a branch move, another model): streamed from the views.
        // A smaller one is made from its state, which reuses what the
        // previous parts hold of it.
        let large = || -> Result<bool> { Ok(crate::indexer::too_large_to_keep(&self.journal)?) };
        if self.stream_first_parts && (!had_previous || large()?) {
            return self.first_head_parts(head, &cache);
        }
        Ok(None)
    }

    /// `head`'s parts advanced from the previous head's (`previous`) by the
    /// files the commits since touched; `None` when they cannot be.
    fn advanced_head(
        &self,
        head: &IndexedHead,
        cache: &HeadCache,
        previous: Option<(HeadCache, Seq)>,
    ) -> Result<Option<Arc<Searcher>>> {
        let t = std::time::Instant::now();
        let Some((prev, prev_seq)) = previous else {
            return Ok(None);
        };
        if prev_seq >= head.seq {
            return Ok(None);
        }
        let mut touched = std::collections::BTreeSet::new();
        for (_, env) in self
            .journal
            .event_outlines(Seq(prev_seq.0 + 1), Some(Seq(head.seq.0 + 1)))?
        {
            use sno_journal::event::Event;
            match env.event {
                Event::CommitIndexed(c) => touched.extend(c.deltas.into_iter().map(|d| d.path)),
                Event::RolledBack(_) | Event::BranchMoved(_) => return Ok(None),
                _ => {}
            }
        }
        let Some(old) = prev.read_doc_map() else {
            return Ok(None);
        };
        let embedder = self.embedder();
        // Which documents have a vector, not the vectors: those are read
        // from the previous file as the new one is written.
        let previous = match &embedder {
            Some(e) => {
                let (Some(layout), Some(ids)) = (
                    prev.read_layout(&e.source),
                    prev.read_vector_ids(&e.source, old.len()),
                ) else {
                    return Ok(None);
                };
                // A path git would quote is stored as "-": its file cannot
                // be told apart, so the state decides.
                if layout.iter().any(|f| f.path == "-") {
                    return Ok(None);
                }
                Some((ids, layout))
            }
            None => None,
        };
        let t_read = t.elapsed();
        let paths: Vec<&str> = touched.iter().map(String::as_str).collect();
        let Some(changed) = self.journal.files_at_head(head.seq, &paths)? else {
            return Ok(None);
        };
        let source = |rec: &sno_journal::model::FileRecord| self.blob(rec.blob);
        let sections = sno_query::chunks::of_state(&changed, &source);
        let map = old.advanced(&changed, &touched, &sections);
        let mut files_carried = 0;
        if let (Some(e), Some((ids, layout))) = (&embedder, &previous) {
            use sno_query::search::{FileAt, SectionAt};
            let mut files: Vec<(&str, FileAt)> = layout
                .iter()
                .filter(|f| !touched.contains(&f.path))
                .map(|f| {
                    (
                        f.path.as_str(),
                        FileAt::Unchanged {
                            marker: &f.marker,
                            count: f.count,
                        },
                    )
                })
                .chain(changed.iter().map(|(p, r)| (p.as_str(), FileAt::Record(r))))
                .collect();
            files.sort_by(|a, b| a.0.cmp(b.0));
            // Sections: a touched file's are new, in the order they were
            // cut; the others' are the old map's, in its order.
            let mut fresh = sections.iter();
            let mut kept = (old.symbols()..old.len())
                .filter(|d| old.section(*d).is_some_and(|c| !touched.contains(&c.path)));
            let at: Vec<SectionAt> = (map.symbols()..map.len())
                .filter_map(|d| {
                    let c = map.section(d)?;
                    Some(if touched.contains(&c.path) {
                        SectionAt::New(fresh.next()?.embedded_text())
                    } else {
                        SectionAt::Carried(kept.next()?)
                    })
                })
                .collect();
            let plan = sno_query::search::carried_plan(
                files.into_iter(),
                Some((ids.as_slice(), layout.as_slice())),
                &source,
                at,
                |texts| self.gather_vectors(e, texts),
            );
            if plan.count != map.len() {
                return Ok(None);
            }
            files_carried = plan.files_carried;
            if let Err(err) = cache.write_carried(&e.source, &prev, &plan) {
                tracing::warn!(error = %err, "could not store the vectors cache");
                return Ok(None);
            }
        }
        let t_vectors = t.elapsed();
        if let Err(err) = cache.write_doc_map(&map) {
            tracing::warn!(error = %err, "could not store the document map");
            return Ok(None);
        }
        self.history(Some(cache), head.seq)?;
        let t_history = t.elapsed();
        // The whole-file index, when the previous head had one made: its
        // touched files' documents replaced (else it is made on the next
        // files answer).
        if prev.files_dir().is_dir()
            && FileIndex::advanced(
                &cache.files_dir(),
                &prev.files_dir(),
                &changed,
                &touched,
                &source,
            )
            .is_none()
        {
            tracing::debug!("the file index was not advanced");
        }
        // Last, since it moves the previous head's index.
        if sno_query::lexical::LexicalIndex::advanced(
            &cache.lexical_dir(),
            &prev.lexical_dir(),
            &changed,
            &touched,
            &sections,
            &source,
        )
        .is_none()
        {
            return Ok(None);
        }
        tracing::debug!(
            touched = touched.len(),
            carried_files = files_carried,
            ms = t.elapsed().as_millis() as u64,
            read_ms = t_read.as_millis() as u64,
            vectors_ms = (t_vectors - t_read).as_millis() as u64,
            map_history_ms = (t_history - t_vectors).as_millis() as u64,
            lexical_ms = (t.elapsed() - t_history).as_millis() as u64,
            "head's parts advanced from the previous head's"
        );
        // The previous head's parts and the new ones made from them go
        // before the new head's are opened: on millions of lines each is
        // hundreds of MB.
        drop((old, map, previous, sections, changed));
        let searcher = self.stored_searcher(head)?;
        if searcher.is_some() {
            cache.remove_others();
        }
        Ok(searcher)
    }

    /// The parts of `head`, which has none to start from, made from its
    /// views a batch of files at a time: the state is never held whole,
    /// each file's text is read once, and the texts are embedded on a
    /// thread of their own beside the lexical index's. `None` when the head
    /// moved meanwhile (the caller then loads a state).
    fn first_head_parts(
        &self,
        head: &IndexedHead,
        cache: &HeadCache,
    ) -> Result<Option<Arc<Searcher>>> {
        use sno_query::head_build::{PartsBuild, TextRun, VectorsBuild};
        let t = std::time::Instant::now();
        let embedder = self.embedder();
        // Every file's text is read once: through a handle of its own with
        // no object cache, and not kept in the blob cache, which would
        // hold the last hundreds of MB read long after (a daemon that made
        // the parts of 8.4M lines held 600 MB more than one that opened
        // them).
        let git = GitRepo::open(&self.paths.root).map(GitRepo::without_object_cache);
        let source = |rec: &sno_journal::model::FileRecord| match &git {
            Ok(g) => self.blob_from(g, rec.blob),
            Err(_) => self.blob(rec.blob),
        };
        let mut build =
            PartsBuild::new(&cache.lexical_dir(), embedder.is_some()).map_err(Error::internal)?;
        let mut failed = None;
        // A first embedding asked of these parts: the new vectors are kept
        // to store, with each file's count of embedded symbols, covering
        // the journal as it is now.
        let (first_embedding, progress) = {
            let asked = locked(&self.first_embedding);
            (embedder.is_some() && asked.asked, asked.progress.clone())
        };
        let covers = Seq(self.journal.len()?);
        let total = match (&progress, first_embedding) {
            (Some(_), true) => self.journal.files_len()? as usize,
            _ => 0,
        };
        let mut files_done = 0;
        let mut per_file: rustc_hash::FxHashMap<String, usize> = Default::default();
        let (read, parts, made, stopped, history) = std::thread::scope(|scope| {
            // The history facts (stored in the cache) are made beside the
            // files: on a first index they decode its whole record.
            let history = scope.spawn(|| self.history(Some(cache), head.seq));
            // Two runs in flight at most: the reader stays a little ahead.
            let (tx, rx) = std::sync::mpsc::sync_channel::<TextRun>(2);
            let worker = embedder.as_ref().map(|e| {
                scope.spawn(move || {
                    let mut made = VectorsBuild::default();
                    let mut new = NewVectors::default();
                    for run in rx {
                        let (v, fresh) = self.gather_vectors(e, &run.texts);
                        made.add(run.first, &v);
                        if first_embedding && !fresh.is_empty() {
                            new.note(&run, &fresh);
                        }
                    }
                    (made, new)
                })
            });
            let mut stopped = false;
            let read = self.journal.files_in_batches(head.seq, 256, |batch| {
                for (path, rec) in &batch {
                    if first_embedding {
                        per_file.insert(path.clone(), crate::embedder::embedded_in(rec));
                        files_done += 1;
                    }
                    match build.add(path, rec, &source) {
                        Ok(Some(run)) if worker.is_some() => {
                            if tx.send(run).is_err() {
                                stopped = true;
                                return false;
                            }
                        }
                        Ok(_) => {}
                        Err(e) => {
                            failed = Some(e);
                            return false;
                        }
                    }
                }
                if let (Some(p), true) = (&progress, first_embedding) {
                    let _ = p.send(crate::indexer::Progress::FilesEmbedded {
                        done: files_done,
                        total,
                    });
                }
                true
            });
            // Only a build that read every file is finished: one left
            // unfinished leaves nothing under the index's name.
            let complete = matches!(read, Ok(true)) && failed.is_none() && !stopped;
            let parts = complete.then(|| {
                if let (Some(run), true) = (build.pending(), worker.is_some()) {
                    let _ = tx.send(run);
                }
                let documents = build.documents();
                let mut parts = build.finish();
                if let Ok(p) = &mut parts {
                    let texts = std::mem::take(&mut p.section_texts.texts);
                    if worker.is_some() && !texts.is_empty() {
                        let first = p.section_texts.first;
                        let _ = tx.send(TextRun { first, texts });
                    }
                }
                (documents, parts)
            });
            drop(tx);
            let made = worker.map(|w| w.join().ok());
            let history = history.join();
            (read, parts, made, stopped, history)
        });
        // Not needed to finish the parts: a searcher of them makes the
        // history facts again, and reports their error, if these failed.
        match history {
            Ok(Err(e)) => tracing::warn!(error = %e, "the history facts could not be made"),
            Err(_) => tracing::warn!("the history facts' thread panicked"),
            Ok(Ok(_)) => {}
        }
        if let Some(e) = failed {
            return Err(Error::internal(e));
        }
        if stopped {
            return Err(Error::internal("the embedding thread stopped"));
        }
        let (Some((documents, parts)), true) = (parts, read?) else {
            // The head moved while its files were read.
            return Ok(None);
        };
        let (made, new) = made.map(Option::unzip).unzip();
        let new = new.flatten();
        let vectors = made.map(|m| {
            m.and_then(|made| made.finish(documents))
                .ok_or_else(|| Error::internal("the vectors could not be made"))
        });
        let parts = parts.map_err(Error::internal)?;
        let t_parts = t.elapsed();
        let mut first_rows = None;
        if let (Some(e), Some(vectors)) = (&embedder, vectors) {
            let vectors = vectors?;
            if let Err(err) = cache.write_vectors(&e.source, &vectors, &parts.layout) {
                tracing::warn!(error = %err, "could not store the vectors cache");
                return Ok(None);
            }
            if let (true, Some(new)) = (first_embedding, new) {
                // The sections' vectors are stored too (by their text, as
                // any), but the summary counts symbols, as the embedder's.
                let sections_from = parts.section_texts.first as u32;
                let embedded = new.docs.iter().filter(|(d, _)| *d < sections_from).count();
                first_rows = Some((e.source.clone(), new.rows(&vectors), embedded));
            }
        }
        if let Err(err) = cache.write_doc_map(&parts.map) {
            tracing::warn!(error = %err, "could not store the document map");
            return Ok(None);
        }
        // The parts and their vectors are stored: they go before the new
        // vectors are written, which holds them again in redb's
        // transaction (the three at once peaked at 1.63 GB on 8.3M lines).
        drop(parts);
        if let Some((source, rows, embedded)) = first_rows {
            let counts = crate::embedder::counts_to_keep(&per_file);
            self.journal
                .put_vector_rows(&source, &rows, Some(covers), Some(&counts))?;
            let symbols = per_file.values().sum::<usize>();
            tracing::debug!(
                symbols,
                embedded,
                stored = rows.len(),
                "the head's first embedding made with its parts"
            );
            locked(&self.first_embedding).done = Some(crate::embedder::EmbedSummary {
                off_reason: None,
                symbols,
                embedded,
                reused: symbols.saturating_sub(embedded),
            });
        }
        tracing::debug!(
            ms = t.elapsed().as_millis() as u64,
            parts_ms = t_parts.as_millis() as u64,
            "head's parts streamed from its views"
        );
        let searcher = self.stored_searcher(head)?;
        if searcher.is_some() {
            cache.remove_others();
        }
        Ok(searcher)
    }

    /// A searcher of `head` from what its cache stores (document map,
    /// lexical index, vectors for the model, history), without its state;
    /// `None` when a part is missing or stale.
    fn stored_searcher(&self, head: &IndexedHead) -> Result<Option<Arc<Searcher>>> {
        let t = std::time::Instant::now();
        let cache = HeadCache::for_head(&self.paths.sno_dir, head);
        // No parts stored: nothing to read, and the history facts are not
        // made here for nothing (on a first index they decode its whole
        // record, seconds on millions of lines, which the parts' making
        // does beside the files instead).
        if !cache.lexical_dir().is_dir() {
            return Ok(None);
        }
        let model = sno_query::semantic::source_name(self.model.spec());
        let (map, lexical, vectors, embedder, history) = std::thread::scope(|scope| {
            let map = scope.spawn(|| cache.read_doc_map());
            let vectors = scope.spawn(|| cache.read_vectors_to_search(&model, None));
            let history = scope.spawn(|| self.history(Some(&cache), head.seq));
            let embedder = self.embedder();
            let lexical = sno_query::lexical::LexicalIndex::open(&cache.lexical_dir());
            (
                map.join().ok().flatten(),
                lexical,
                vectors.join().ok().flatten(),
                embedder,
                history.join(),
            )
        });
        let (Some(map), Some(lexical)) = (map, lexical) else {
            return Ok(None);
        };
        let vectors = match (&embedder, vectors) {
            (None, _) => None,
            (Some(e), Some(v)) if e.source == model && v.count() == map.len() => Some(v),
            (Some(_), _) => return Ok(None),
        };
        let history = history.map_err(|_| Error::internal("history thread panicked"))??;
        let owner = SearchOwner {
            snapshot: None,
            key: format!("head@{}", head.seq.0),
            as_of: AsOfCommit {
                commit: head.commit.to_hex(),
                branch: head.branch.clone(),
            },
            is_head: true,
            embedder,
            history,
            records: HeadRecords::new(self.journal.clone(), head.seq),
            files: std::sync::OnceLock::new(),
            seq: head.seq,
        };
        let searcher = Arc::new(Searcher::new(owner, |o| {
            Retriever::stored(
                map,
                Records::Stored(&o.records),
                o.embedder.as_deref(),
                vectors,
                lexical,
            )
        }));
        tracing::debug!(
            ms = t.elapsed().as_millis() as u64,
            docs = searcher.borrow_dependent().len(),
            "head searched from its stored parts"
        );
        let mut cache = locked(&self.searchers);
        cache.retain(|s| !s.borrow_owner().is_head);
        cache.insert(0, searcher.clone());
        Ok(Some(searcher))
    }

    /// [`ReadModel::prepare_head`], with the head's first embedding made
    /// by its parts and stored in the journal, as the embedder would: what
    /// it did, or `None` when the parts were not streamed from the views
    /// (the embedder then has to make it).
    pub fn prepare_head_embedding(
        &self,
        progress: Option<tokio::sync::mpsc::UnboundedSender<crate::indexer::Progress>>,
    ) -> Result<Option<crate::embedder::EmbedSummary>> {
        *locked(&self.first_embedding) = FirstEmbedding {
            asked: true,
            progress,
            done: None,
        };
        let made = self.prepare_head();
        let done = std::mem::take(&mut *locked(&self.first_embedding)).done;
        made.map(|_| done)
    }

    /// Loads the head state and builds its search indexes, reading what a
    /// previous process stored (lexical index, vectors) while the state
    /// loads: what a server does before its first question.
    pub fn prepare_head(&self) -> Result<Arc<Searcher>> {
        let head = self.journal.head()?.ok_or_else(not_indexed)?;
        if let Some(s) = self.head_searcher(&head)? {
            return Ok(s);
        }
        let cache = HeadCache::for_head(&self.paths.sno_dir, &head);
        let model = sno_query::semantic::source_name(self.model.spec());
        let (snap, prefetch) = std::thread::scope(|scope| {
            let snap = scope.spawn(|| self.snapshot(None));
            let history = scope.spawn(|| self.history(Some(&cache), head.seq).ok());
            let lexical = sno_query::lexical::LexicalIndex::open(&cache.lexical_dir());
            let vectors = cache.read_vectors_to_search(&model, None);
            let history = history.join().ok().flatten();
            let snap = snap
                .join()
                .map_err(|_| Error::internal("state loading panicked"));
            (
                snap,
                Prefetch {
                    history,
                    lexical,
                    vectors,
                },
            )
        });
        let (snap, _) = snap??;
        // Another commit may have been indexed meanwhile: use the prefetched
        // parts only for the state they were made for.
        let prefetch = if snap.seq == head.seq {
            prefetch
        } else {
            Prefetch::default()
        };
        self.searcher_with(&snap, prefetch)
    }

    fn searcher_with(&self, snap: &Arc<Snapshot>, pre: Prefetch) -> Result<Arc<Searcher>> {
        let mut cache = locked(&self.searchers);
        if let Some(s) = cache.iter().find(|s| {
            let o = s.borrow_owner();
            o.key == snap.key && o.snapshot.is_some()
        }) {
            return Ok(s.clone());
        }
        let t = std::time::Instant::now();
        let head_cache = self
            .journal
            .head()?
            .filter(|h| snap.is_head && snap.seq == h.seq)
            .map(|h| HeadCache::for_head(&self.paths.sno_dir, &h));
        // A past state's parts are kept on disk too, by commit: the next
        // question about it, from this process or another, opens them.
        let past_cache = if snap.is_head {
            None
        } else {
            CommitId::from_hex(&snap.key)
                .map(|c| HeadCache::for_past(&self.paths.sno_dir, &c, snap.seq))
        };
        let disk = head_cache.as_ref().or(past_cache.as_ref());
        if let Some(p) = &past_cache {
            tracing::debug!(stored = p.exists(), "a past state's parts");
        }
        let Prefetch {
            history,
            lexical,
            vectors,
        } = pre;
        // Sections of docs and config files, cut from the state's files.
        let chunks = sno_query::chunks::of_state(&snap.state, &|rec| self.blob(rec.blob));
        tracing::debug!(
            ms = t.elapsed().as_millis() as u64,
            chunks = chunks.len(),
            "chunks cut"
        );
        let (embedder, history, lexical) = std::thread::scope(|scope| {
            let model = scope.spawn(|| self.embedder());
            let history = scope.spawn(|| match history {
                Some(h) => Ok(h),
                None => self.history(disk, snap.seq),
            });
            let lexical = match (lexical, disk) {
                (Some(l), _) => Ok(l),
                (None, Some(c)) => sno_query::lexical::LexicalIndex::open_or_update(
                    &c.lexical_dir(),
                    // Only a head's index is carried on from another's.
                    head_cache
                        .as_ref()
                        .and_then(HeadCache::previous_lexical)
                        .as_deref(),
                    &snap.state,
                    &chunks,
                    &|rec| self.blob(rec.blob),
                ),
                (None, None) => {
                    sno_query::lexical::LexicalIndex::build(&snap.state, &chunks, &|rec| {
                        self.blob(rec.blob)
                    })
                }
            };
            (
                model.join().unwrap_or(None),
                history
                    .join()
                    .map_err(|_| Error::internal("history thread panicked")),
                lexical,
            )
        });
        let history = history??;
        let lexical = lexical.map_err(Error::internal)?;
        let t_parts = t.elapsed();
        tracing::debug!(
            ms = t_parts.as_millis() as u64,
            "model, history and lexical index ready"
        );
        let journal = &self.journal;
        let owner = SearchOwner {
            snapshot: Some(snap.clone()),
            key: snap.key.clone(),
            as_of: snap.as_of.clone(),
            is_head: snap.is_head,
            embedder,
            history,
            records: HeadRecords::new(self.journal.clone(), snap.seq),
            files: std::sync::OnceLock::new(),
            seq: snap.seq,
        };
        let searcher = Searcher::try_new(owner, |o| {
            let Some(snapshot) = &o.snapshot else {
                return Err(Error::internal("a searcher without its state"));
            };
            let state = &snapshot.state;
            // Symbols, then the sections of docs and config files.
            let n = sno_query::lexical::documents(state).len() + chunks.len();
            let vectors = o.embedder.as_deref().map(|e| {
                let stored = vectors
                    .or_else(|| disk.and_then(|c| c.read_vectors_to_search(&e.source, Some(n))));
                if let Some(v) = stored.filter(|v| v.count() == n) {
                    return v;
                }
                let same_model =
                    journal.vectors_model().ok().flatten().as_deref() == Some(e.source.as_str());
                // A new head starts from the previous head's vectors: only
                // its changed files' texts are read and looked up.
                let tv = std::time::Instant::now();
                let previous = head_cache
                    .as_ref()
                    .and_then(|c| c.previous_vectors(&e.source));
                let read_ms = tv.elapsed().as_millis() as u64;
                let made = sno_query::search::carried_vectors(
                    state,
                    previous.as_ref().map(|(v, l)| (v, l.as_slice())),
                    &|rec| self.blob(rec.blob),
                    chunks
                        .iter()
                        .map(sno_query::chunks::Chunk::embedded_text)
                        .collect(),
                    |texts| self.gather_vectors(e, texts),
                );
                let gather_ms = tv.elapsed().as_millis() as u64 - read_ms;
                if let Some(c) = disk {
                    if let Err(err) = c.write_vectors(&e.source, &made.vectors, &made.layout) {
                        tracing::warn!(error = %err, "could not store the vectors cache");
                    }
                }
                tracing::debug!(
                    same_model,
                    carried_files = made.files_carried,
                    embedded_now = made.new.len(),
                    read_ms,
                    gather_ms,
                    total_ms = tv.elapsed().as_millis() as u64,
                    "vectors gathered"
                );
                made.vectors
            });
            let r =
                Retriever::with_lexical(state, &chunks, o.embedder.as_deref(), vectors, lexical);
            // What the next process needs to search this head without
            // loading its state.
            if let Some(c) = &head_cache {
                if let Err(err) = c.write_doc_map(r.map()) {
                    tracing::warn!(error = %err, "could not store the document map");
                }
            }
            Ok(r)
        })?;
        tracing::debug!(
            parts_ms = t_parts.as_millis() as u64,
            total_ms = t.elapsed().as_millis() as u64,
            "search indexes ready"
        );
        if let Some(c) = &head_cache {
            c.remove_others();
        }
        if let Some(p) = &past_cache {
            p.mark_used();
            HeadCache::evict_past(
                &self.paths.sno_dir,
                p,
                sno_query::head_cache::PAST_CACHE_BYTES,
            );
        }
        let searcher = Arc::new(searcher);
        if snap.is_head {
            cache.retain(|s| !s.borrow_owner().is_head);
        }
        cache.insert(0, searcher.clone());
        drop(cache);
        self.evict();
        Ok(searcher)
    }

    /// The whole-file index of the state `searcher` searches: opened from
    /// its cache directory, or made there the first time (from the state
    /// when it is in memory, else from the views a batch at a time: a
    /// files answer never loads the whole state). `None`, logged, when it
    /// cannot be made; the answer then ranks files by their symbols alone.
    pub fn file_index(&self, searcher: &Searcher) -> Option<Arc<FileIndex>> {
        let owner = searcher.borrow_owner();
        owner
            .files
            .get_or_init(|| match self.make_file_index(owner) {
                Ok(ix) => Some(Arc::new(ix)),
                Err(e) => {
                    tracing::warn!(error = %e, "no file index: files ranked by their symbols");
                    None
                }
            })
            .clone()
    }

    fn make_file_index(&self, owner: &SearchOwner) -> Result<FileIndex> {
        let t = std::time::Instant::now();
        let commit = CommitId::from_hex(&owner.as_of.commit)
            .ok_or_else(|| Error::internal("a searched state without its commit"))?;
        let cache = if owner.is_head {
            HeadCache::for_head(
                &self.paths.sno_dir,
                &IndexedHead {
                    commit,
                    branch: owner.as_of.branch.clone(),
                    seq: owner.seq,
                },
            )
        } else {
            HeadCache::for_past(&self.paths.sno_dir, &commit, owner.seq)
        };
        let dir = cache.files_dir();
        if let Some(ix) = FileIndex::open(&dir) {
            return Ok(ix);
        }
        let source = |rec: &sno_journal::model::FileRecord| self.blob(rec.blob);
        let made = match &owner.snapshot {
            Some(snap) => FileIndex::build_from_state(&dir, &snap.state, &source),
            None => FileIndex::build_in(&dir, &source, |add| {
                let read = self.journal.files_in_batches(owner.seq, 512, |batch| {
                    batch.values().for_each(&mut *add);
                    true
                });
                match read {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(LexicalError::new(
                        "the head moved while its files were read",
                    )),
                    Err(e) => Err(LexicalError::new(e.to_string())),
                }
            }),
        }
        .map_err(Error::internal)?;
        tracing::debug!(
            files = made.len(),
            ms = t.elapsed().as_millis() as u64,
            "file index made"
        );
        Ok(made)
    }

    /// Vectors for `texts`: those the journal stored for the same text by
    /// the same model, the others embedded now.
    fn gather_vectors(
        &self,
        e: &Embedder,
        texts: &[String],
    ) -> (
        sno_query::semantic::Vectors,
        Vec<sno_query::search::StoredVector>,
    ) {
        let same_model =
            self.journal.vectors_model().ok().flatten().as_deref() == Some(e.source.as_str());
        sno_query::search::doc_vectors(texts, e, |h| {
            if same_model {
                self.journal.vectors(h).unwrap_or_default()
            } else {
                Vec::new()
            }
        })
    }

    /// The history facts of the state at `seq`: the head's cache holds
    /// them once made.
    pub fn history_facts(&self, seq: Seq) -> Result<HistoryFacts> {
        let cache = self
            .journal
            .head()?
            .filter(|h| h.seq == seq)
            .map(|h| HeadCache::for_head(&self.paths.sno_dir, &h));
        Ok(self.history(cache.as_ref(), seq)?)
    }

    /// The history facts of the state at `seq`, from the head's cache when
    /// it has them. Reading them from the journal decodes every commit's
    /// deltas (a first index's hold the whole repository), so they are
    /// stored there once made.
    fn history(
        &self,
        cache: Option<&HeadCache>,
        seq: Seq,
    ) -> std::result::Result<HistoryFacts, sno_journal::JournalError> {
        if let Some(h) = cache.and_then(HeadCache::read_history) {
            return Ok(h);
        }
        // The previous head's facts and the commits since, when they
        // follow it: a new commit costs its own events, not the journal's.
        let carried = match cache.and_then(HeadCache::previous_history) {
            Some((commit, at, facts)) if at < seq => {
                facts.extended(&self.journal, commit, at, seq)?
            }
            _ => None,
        };
        let h = match carried {
            Some(h) => h,
            None => HistoryFacts::from_journal(&self.journal, seq)?,
        };
        if let Some(Err(err)) = cache.map(|c| c.write_history(&h)) {
            tracing::warn!(error = %err, "could not store the history cache");
        }
        Ok(h)
    }

    /// The call graph of a snapshot.
    pub fn graph(&self, snap: &Arc<Snapshot>) -> Arc<GraphCell> {
        let mut cache = locked(&self.graphs);
        if let Some(g) = cache.iter().find(|g| Arc::ptr_eq(g.borrow_owner(), snap)) {
            return g.clone();
        }
        let g = Arc::new(GraphCell::new(snap.clone(), |s| Graph::new(&s.state)));
        // Like the snapshots: an older head's graph is never asked for again.
        if snap.is_head {
            cache.retain(|g| !g.borrow_owner().is_head);
        }
        cache.insert(0, g.clone());
        drop(cache);
        self.evict();
        g
    }

    /// Runs `f` with the shared git handle (opened on first use).
    pub fn with_git<T>(&self, f: impl FnOnce(&GitRepo) -> T) -> Result<T> {
        let mut git = locked(&self.git);
        if git.is_none() {
            *git = Some(GitRepo::open(&self.paths.root)?);
        }
        Ok(f(git.as_ref().expect("opened above")))
    }

    /// A file's text at the indexed commit, as served (secret values
    /// masked); `None` when git cannot give it (logged: the repository lost
    /// an object the index names).
    pub fn blob(&self, id: BlobId) -> Option<Served> {
        if let Some(b) = locked(&self.blobs).map.get(&id) {
            return Some(b.clone());
        }
        let served = match self.with_git(|g| self.blob_from(g, id)) {
            Ok(served) => served?,
            Err(e) => {
                tracing::warn!(error = %e, "could not open the repository");
                return None;
            }
        };
        let mut cache = locked(&self.blobs);
        if cache.bytes + served.len() > BLOB_CACHE_BYTES.min(self.budget / 4) {
            cache.map.clear();
            cache.bytes = 0;
        }
        cache.bytes += served.len();
        cache.map.insert(id, served.clone());
        Some(served)
    }

    /// A blob read through `git`, as served, without the blob cache.
    fn blob_from(&self, git: &GitRepo, id: BlobId) -> Option<Served> {
        match git.blob(id) {
            Ok(b) => Some(Served::new(&b, self.mask_secrets)),
            Err(e) => {
                tracing::warn!(blob = %id.to_hex(), error = %e, "git could not read a blob");
                None
            }
        }
    }

    /// The repository's HEAD now, when it is not the commit answers reflect.
    pub fn head_differs(&self, as_of: &AsOfCommit) -> Option<String> {
        self.with_git(|g| g.head().ok().map(|c| c.to_hex()))
            .ok()
            .flatten()
            .filter(|h| *h != as_of.commit)
    }

    /// Checkpoints, decisions and lessons, folded once per journal length.
    pub fn memory(&self) -> Result<Arc<Memory>> {
        let len = self.journal.len()?;
        let mut cache = locked(&self.memory);
        if let Some((at, m)) = cache.as_ref() {
            if *at == len {
                return Ok(m.clone());
            }
        }
        let m = Arc::new(self.journal.memory()?);
        *cache = Some((len, m.clone()));
        Ok(m)
    }

    /// Files approved lessons touch (the memory signal of search).
    pub fn lesson_paths(&self) -> HashSet<String> {
        match self.memory() {
            Ok(m) => m.approved_lesson_files(),
            Err(e) => {
                // Search still answers, without the memory signal.
                tracing::warn!(error = %e, "could not read lessons");
                HashSet::new()
            }
        }
    }
}

use crate::error::Error;

/// The error for a journal with nothing indexed yet.
pub fn not_indexed() -> Error {
    ErrorCode::NotIndexed.with("nothing is indexed yet").into()
}

/// The error for an abbreviated id that begins several journaled commits.
fn ambiguous_commit(at: &str, many: &[CommitId]) -> Error {
    ErrorCode::UnknownRev
        .with(format!(
            "`{at}` is ambiguous: {} journaled commits begin with it",
            many.len()
        ))
        .hinted("Give more digits of the commit's id (did_you_mean lists the candidates), or a branch, tag or HEAD~N.")
        .suggesting(many.iter().map(|c| c.to_hex()[..12].to_string()).collect())
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_kept_head_first_then_most_recent_first_within_the_budget() {
        let mb = 1 << 20;
        // Most recently used first.
        let entries = [
            ("c3", 300 * mb, false),
            ("head@9", 3000 * mb, true),
            ("c2", 150 * mb, false),
            ("c1", 100 * mb, false),
        ];
        // A head past the budget is not held; c3 fits, c2 does not beside
        // it, c1 does.
        assert_eq!(states_to_keep(&entries, 420 * mb), ["c3", "c1"]);
        assert!(states_to_keep(&entries, 0).is_empty());
        // The head comes first when it fits.
        assert_eq!(
            states_to_keep(&entries, 3350 * mb),
            ["head@9", "c3"],
            "c2 does not fit beside them"
        );
        // Never more than KEEP.
        assert_eq!(states_to_keep(&entries, usize::MAX), ["head@9", "c3", "c2"]);
    }

    #[test]
    fn a_state_is_estimated_by_what_its_records_hold() {
        let names: Vec<String> = (0..1000).map(|i| format!("f{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let rec = |n: usize| sno_journal::test_support::record("a.py", 1, &names[..n]);
        let small = State::from([("a.py".to_string(), rec(10))]);
        let big = State::from([("a.py".to_string(), rec(1000))]);
        assert!(state_bytes(&big) > 50 * state_bytes(&small));
        assert!(state_bytes(&big) > 1000 * std::mem::size_of::<sno_journal::model::Symbol>());
    }

    #[test]
    fn a_caller_that_waited_for_the_heads_parts_gets_the_searcher_made_not_another() {
        use sno_journal::test_support::{add, commit};
        let dir = tempfile::tempdir().unwrap();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(git.success());
        let paths = RepoPaths::discover(dir.path()).unwrap();
        let journal = Arc::new(Journal::open_or_create(&paths.db()).unwrap());
        journal
            .append_commit(commit(1, vec![add("a.py", 1), add("b.py", 2)]))
            .unwrap();
        let read = ReadModel::new(
            paths,
            journal.clone(),
            crate::model::ModelCell::new(String::new()),
            false,
            usize::MAX,
        )
        .streaming_first_parts(true);
        let head = journal.head().unwrap().unwrap();
        // The second caller is one that waited on the first's lock: it
        // finds the searcher the first made and kept.
        let made = read.head_searcher(&head).unwrap().expect("parts made");
        let again = read.head_searcher(&head).unwrap().expect("parts found");
        assert!(
            Arc::ptr_eq(&made, &again),
            "the head's parts were opened twice"
        );
        assert!(Arc::ptr_eq(&made, &read.searcher_for(None, false).unwrap()));
    }
}
