//! What every session of one server shares: the journal, the audit actor,
//! settings, and caches of indexed states and search indexes.
//!
//! Caches are keyed by what they reflect (the journal position of the head,
//! or a commit for `at`), so a new indexed commit is picked up by the next
//! call without any invalidation message.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use ractor::{Actor, ActorRef};
use sno_engine::audit::{Audit, AuditMsg};
use sno_journal::audit::{AuditEntry, AuditRecord};
use sno_journal::delta::State;
use sno_journal::model::Seq;
use sno_journal::Journal;
use sno_protocol::query::AsOfCommit;
use sno_protocol::{ErrorContract, Fixability};
use sno_query::graph::Graph;
use sno_query::search::{HistoryFacts, Retriever};
use sno_query::semantic::Embedder;

use super::head_cache::HeadCache;
use crate::repo::RepoPaths;

/// An indexed state an answer comes from.
pub struct Snapshot {
    /// `head@<seq>` or the commit's hex.
    pub key: String,
    pub state: State,
    pub as_of: AsOfCommit,
    /// The journal position of the event that made this state.
    pub seq: Seq,
}

/// What a search index is built over.
pub struct SearchOwner {
    pub snapshot: Arc<Snapshot>,
    embedder: Option<Arc<Embedder>>,
    pub history: HistoryFacts,
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

pub use sno_engine::config::ServeConfig;

/// Shared by every session of the server.
pub struct Core {
    pub paths: RepoPaths,
    pub journal: Arc<Journal>,
    pub audit: ActorRef<AuditMsg>,
    pub config: ServeConfig,
    /// The rule for every path an agent names and every work-tree read.
    pub work_tree: sno_index::confine::WorkTree,
    /// Mask secret values in what is served (`[index] mask_secrets`).
    pub mask_secrets: bool,
    model_spec: String,
    embedder: OnceLock<Option<Arc<Embedder>>>,
    /// Why semantic search is off, when it is.
    semantic_off: OnceLock<String>,
    snapshots: Mutex<Vec<Arc<Snapshot>>>,
    searchers: Mutex<Vec<Arc<Searcher>>>,
    graphs: Mutex<Vec<Arc<GraphCell>>>,
    /// The status answer, by (snapshot key, journal length).
    status: Mutex<Option<(String, u64, Arc<serde_json::Value>)>>,
    /// One git handle for reads, and file contents already read from it:
    /// inflating blobs per call is what made text search slow.
    git: Mutex<Option<sno_index::git::GitRepo>>,
    blobs: Mutex<BlobCache>,
    /// Memory folded from the journal, by the journal length it reflects:
    /// every search reads the approved lessons' files.
    memory: Mutex<Option<(u64, Arc<sno_journal::memory::Memory>)>>,
}

/// File texts as served (secrets masked) by blob id, dropped wholesale past
/// a byte budget.
#[derive(Default)]
struct BlobCache {
    map: std::collections::HashMap<sno_journal::model::BlobId, sno_query::served::Served>,
    bytes: usize,
}

const BLOB_CACHE_BYTES: usize = 256 << 20;

self_cell::self_cell!(
    /// A snapshot's call graph, built once per snapshot.
    pub struct GraphCell {
        owner: Arc<Snapshot>,
        #[covariant]
        dependent: Graph,
    }
);

/// Parts of a search index read ahead of the state they index.
#[derive(Default)]
struct Prefetch {
    history: Option<HistoryFacts>,
    lexical: Option<sno_query::lexical::LexicalIndex>,
    vectors: Option<Vec<Vec<f32>>>,
}

/// Snapshots and searchers kept: the head and a couple of `at` states.
const KEEP: usize = 3;

impl Core {
    /// Starts the audit actor and reads the configuration.
    pub async fn start(paths: RepoPaths, journal: Arc<Journal>) -> anyhow::Result<Arc<Core>> {
        let (audit, _) = Actor::spawn(None, Audit, journal.clone()).await?;
        // A broken config file is reported by `sno init` and `sno status`;
        // the server keeps serving with defaults rather than refusing to start.
        let index_config =
            sno_engine::config::IndexConfig::load(&paths.config()).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "ignoring an invalid .sno/config.toml");
                Default::default()
            });
        let config = index_config.serve.clone();
        let model_spec = crate::search::model_spec(None, &index_config);
        let work_tree = paths.work_tree_with(&index_config)?;
        Ok(Arc::new(Core {
            paths,
            journal,
            audit,
            config,
            work_tree,
            mask_secrets: index_config.mask_secrets,
            model_spec,
            embedder: OnceLock::new(),
            semantic_off: OnceLock::new(),
            snapshots: Mutex::new(Vec::new()),
            searchers: Mutex::new(Vec::new()),
            graphs: Mutex::new(Vec::new()),
            status: Mutex::new(None),
            git: Mutex::new(None),
            blobs: Mutex::new(BlobCache::default()),
            memory: Mutex::new(None),
        }))
    }

    /// Builds the head's search index in the background, so the first
    /// `search` finds it ready (or half-built, and waits for the rest).
    pub fn warm_up(self: &Arc<Core>) {
        // The model loads on its own thread while the state and the lexical
        // index load on another (and the token counter on a third, started
        // by the daemon before the database opened).
        let core = self.clone();
        std::thread::spawn(move || {
            let t = std::time::Instant::now();
            core.embedder();
            tracing::debug!(ms = t.elapsed().as_millis() as u64, "model loaded");
        });
        let core = self.clone();
        std::thread::spawn(move || {
            let t = std::time::Instant::now();
            match core.prepare_head() {
                Ok(_) => tracing::info!(ms = t.elapsed().as_millis() as u64, "search index ready"),
                Err(e) => tracing::warn!(error = %e, "could not prepare the search index"),
            }
        });
    }

    /// Flushes the audit actor and stops it.
    pub async fn stop(&self) {
        let _ = ractor::call!(self.audit, AuditMsg::Flush);
        self.audit.stop(None);
    }

    /// Records an audit entry (asynchronously).
    pub fn audit(&self, entry: AuditEntry) {
        let _ = self.audit.cast(AuditMsg::Record(AuditRecord {
            time_ms: now_ms(),
            entry,
        }));
    }

    /// The state at the indexed head, or at `at`; `true` when it was cached.
    pub fn snapshot(&self, at: Option<&str>) -> anyhow::Result<(Arc<Snapshot>, bool)> {
        let key = match at {
            None => {
                let head = self.journal.head()?.ok_or_else(not_indexed)?;
                format!("head@{}", head.seq.0)
            }
            Some(at) => {
                crate::commands::resolve_journaled(&self.paths, &self.journal, at)?.to_hex()
            }
        };
        // One builder at a time: two sessions asking for the same new state
        // wait for one load instead of doing it twice.
        let mut cache = self.snapshots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache.iter().find(|s| s.key == key) {
            return Ok((s.clone(), true));
        }
        let t = std::time::Instant::now();
        let snap = Arc::new(match at {
            None => {
                let (head, state) = self.journal.head_and_state()?.ok_or_else(not_indexed)?;
                Snapshot {
                    key: format!("head@{}", head.seq.0),
                    state,
                    as_of: AsOfCommit {
                        commit: head.commit.to_hex(),
                        branch: head.branch,
                    },
                    seq: head.seq,
                }
            }
            Some(_) => {
                let commit = sno_journal::model::CommitId::from_hex(&key)
                    .ok_or_else(|| anyhow::anyhow!("bad commit key"))?;
                let seq = self.journal.seq_of_commit(&commit)?.unwrap_or(Seq(0));
                Snapshot {
                    key: key.clone(),
                    state: sno_journal::replay::replay_to_commit(&self.journal, &commit)?,
                    as_of: AsOfCommit {
                        commit: key,
                        branch: None,
                    },
                    seq,
                }
            }
        });
        tracing::debug!(key = %snap.key, ms = t.elapsed().as_millis() as u64, "state loaded");
        // A head snapshot replaces the older head: it is never asked for again.
        if snap.key.starts_with("head@") {
            cache.retain(|s| !s.key.starts_with("head@"));
        }
        cache.insert(0, snap.clone());
        cache.truncate(KEEP);
        Ok((snap, false))
    }

    /// The embedding model, loaded once; `None` (with the reason kept) when
    /// it cannot be loaded.
    pub fn embedder(&self) -> Option<Arc<Embedder>> {
        self.embedder
            .get_or_init(|| match Embedder::load(&self.model_spec) {
                Ok(e) => Some(Arc::new(e)),
                Err(e) => {
                    tracing::warn!(error = %e, "semantic search is off");
                    let _ = self.semantic_off.set(e.to_string());
                    None
                }
            })
            .clone()
    }

    /// Why semantic search is off, if it is.
    pub fn semantic_off(&self) -> Option<String> {
        self.semantic_off.get().cloned()
    }

    /// The search indexes of a snapshot.
    pub fn searcher(&self, snap: &Arc<Snapshot>) -> anyhow::Result<Arc<Searcher>> {
        self.searcher_with(snap, Prefetch::default())
    }

    /// Loads the head state and builds its search indexes, reading what a
    /// previous server stored (lexical index, vectors) while the state loads.
    fn prepare_head(&self) -> anyhow::Result<Arc<Searcher>> {
        let head = self.journal.head()?.ok_or_else(not_indexed)?;
        let cache = HeadCache::for_head(&self.paths.sno_dir, &head);
        let model = sno_query::semantic::source_name(&self.model_spec);
        let (snap, prefetch) = std::thread::scope(|scope| {
            let snap = scope.spawn(|| self.snapshot(None));
            let history = scope.spawn(|| HistoryFacts::from_journal(&self.journal, head.seq).ok());
            let lexical = sno_query::lexical::LexicalIndex::open(&cache.lexical_dir());
            let vectors = cache.read_vectors(&model, None);
            let history = history.join().ok().flatten();
            let snap = snap
                .join()
                .map_err(|_| anyhow::anyhow!("state loading panicked"));
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

    fn searcher_with(&self, snap: &Arc<Snapshot>, pre: Prefetch) -> anyhow::Result<Arc<Searcher>> {
        let mut cache = self.searchers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache
            .iter()
            .find(|s| s.borrow_owner().snapshot.key == snap.key)
        {
            return Ok(s.clone());
        }
        let t = std::time::Instant::now();
        let head_cache = self
            .journal
            .head()?
            .filter(|h| snap.key == format!("head@{}", h.seq.0))
            .map(|h| HeadCache::for_head(&self.paths.sno_dir, &h));
        let Prefetch {
            history,
            lexical,
            vectors,
        } = pre;
        let (embedder, history, lexical) = std::thread::scope(|scope| {
            let model = scope.spawn(|| self.embedder());
            let history = scope.spawn(|| match history {
                Some(h) => Ok(h),
                None => HistoryFacts::from_journal(&self.journal, snap.seq),
            });
            let lexical = match (lexical, &head_cache) {
                (Some(l), _) => Ok(l),
                (None, Some(c)) => {
                    sno_query::lexical::LexicalIndex::open_or_build(&c.lexical_dir(), &snap.state)
                }
                (None, None) => sno_query::lexical::LexicalIndex::build(&snap.state),
            };
            (
                model.join().unwrap_or(None),
                history
                    .join()
                    .map_err(|_| anyhow::anyhow!("history thread panicked")),
                lexical,
            )
        });
        let history = history??;
        let lexical = lexical.map_err(|e| anyhow::anyhow!("{e}"))?;
        let t_parts = t.elapsed();
        let journal = &self.journal;
        let owner = SearchOwner {
            snapshot: snap.clone(),
            embedder,
            history,
        };
        let searcher = Searcher::try_new(owner, |o| {
            let state = &o.snapshot.state;
            let docs = sno_query::lexical::documents(state);
            let vectors = o.embedder.as_deref().map(|e| {
                let stored = vectors.or_else(|| {
                    head_cache
                        .as_ref()
                        .and_then(|c| c.read_vectors(&e.source, Some(docs.len())))
                });
                if let Some(v) = stored.filter(|v| v.len() == docs.len()) {
                    return v;
                }
                let same_model =
                    journal.vectors_model().ok().flatten().as_deref() == Some(e.source.as_str());
                let (v, fresh) = sno_query::search::doc_vectors(&docs, e, |h| {
                    if same_model {
                        journal.vectors(h).unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                });
                tracing::debug!(same_model, embedded_now = fresh.len(), "vectors gathered");
                if let Some(c) = &head_cache {
                    if let Err(err) = c.write_vectors(&e.source, &v) {
                        tracing::warn!(error = %err, "could not store the vectors cache");
                    }
                }
                v
            });
            Retriever::with_lexical(state, o.embedder.as_deref(), vectors, lexical)
                .map_err(|e| anyhow::anyhow!("{e}"))
        })?;
        tracing::debug!(
            parts_ms = t_parts.as_millis() as u64,
            total_ms = t.elapsed().as_millis() as u64,
            "search indexes ready"
        );
        let searcher = Arc::new(searcher);
        if snap.key.starts_with("head@") {
            cache.retain(|s| !s.borrow_owner().snapshot.key.starts_with("head@"));
        }
        cache.insert(0, searcher.clone());
        cache.truncate(KEEP);
        Ok(searcher)
    }

    /// The call graph of a snapshot.
    pub fn graph(&self, snap: &Arc<Snapshot>) -> Arc<GraphCell> {
        let mut cache = self.graphs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = cache.iter().find(|g| Arc::ptr_eq(g.borrow_owner(), snap)) {
            return g.clone();
        }
        let g = Arc::new(GraphCell::new(snap.clone(), |s| Graph::new(&s.state)));
        // Like the snapshots: an older head's graph is never asked for again.
        if snap.key.starts_with("head@") {
            cache.retain(|g| !g.borrow_owner().key.starts_with("head@"));
        }
        cache.insert(0, g.clone());
        cache.truncate(KEEP);
        g
    }

    /// A cached answer for (snapshot, journal length), or `make`'s.
    pub fn status_cached(
        &self,
        snap: &Snapshot,
        journal_len: u64,
        make: impl FnOnce() -> anyhow::Result<serde_json::Value>,
    ) -> anyhow::Result<Arc<serde_json::Value>> {
        let mut cache = self.status.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, len, v)) = cache.as_ref() {
            if *key == snap.key && *len == journal_len {
                return Ok(v.clone());
            }
        }
        let v = Arc::new(make()?);
        *cache = Some((snap.key.clone(), journal_len, v.clone()));
        Ok(v)
    }

    /// Runs `f` with the shared git handle (opened on first use).
    pub fn with_git<T>(&self, f: impl FnOnce(&sno_index::git::GitRepo) -> T) -> anyhow::Result<T> {
        let mut git = self.git.lock().unwrap_or_else(|e| e.into_inner());
        if git.is_none() {
            *git = Some(sno_index::git::GitRepo::open(&self.paths.root)?);
        }
        Ok(f(git.as_ref().expect("opened above")))
    }

    /// A file's text at the indexed commit, as served (secret values
    /// masked); `None` when git cannot give it (logged: the repository lost
    /// an object the index names).
    pub fn blob(&self, id: sno_journal::model::BlobId) -> Option<sno_query::served::Served> {
        if let Some(b) = self
            .blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .get(&id)
        {
            return Some(b.clone());
        }
        let served = match self.with_git(|g| g.blob(id)) {
            Ok(Ok(b)) => sno_query::served::Served::new(&b, self.mask_secrets),
            Ok(Err(e)) => {
                tracing::warn!(blob = %id.to_hex(), error = %e, "git could not read a blob");
                return None;
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not open the repository");
                return None;
            }
        };
        let mut cache = self.blobs.lock().unwrap_or_else(|e| e.into_inner());
        if cache.bytes + served.len() > BLOB_CACHE_BYTES {
            cache.map.clear();
            cache.bytes = 0;
        }
        cache.bytes += served.len();
        cache.map.insert(id, served.clone());
        Some(served)
    }

    /// The repository's HEAD now, when it is not the commit answers reflect.
    pub fn head_differs(&self, as_of: &AsOfCommit) -> Option<String> {
        self.with_git(|g| g.head().ok().map(|c| c.to_hex()))
            .ok()
            .flatten()
            .filter(|h| *h != as_of.commit)
    }

    /// Checkpoints, decisions and lessons, folded once per journal length.
    pub fn memory(&self) -> anyhow::Result<Arc<sno_journal::memory::Memory>> {
        let len = self.journal.len()?;
        let mut cache = self.memory.lock().unwrap_or_else(|e| e.into_inner());
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

fn not_indexed() -> ErrorContract {
    ErrorContract::new(
        "SNO-NOT-INDEXED",
        "nothing is indexed yet",
        "Ask the user to run `sno init` in the repository first.",
        Fixability::Easy,
    )
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
