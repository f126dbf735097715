//! The indexer: the only writer. For each commit to index it asks git what
//! changed, admits and reads files, has the parser pool parse them, resolves
//! edges and commits one redb transaction with the event and the views.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::stream::{FuturesUnordered, StreamExt};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use rustc_hash::FxHashMap;
use sno_journal::audit::{AuditEntry, AuditRecord, IndexRun};
use sno_journal::delta::State;
use sno_journal::event::{BranchMoved, CommitIndexed, Event};
use sno_journal::model::{BlobId, CommitId, FileRecord, FileState, Seq, SkipReason};
use sno_journal::{Flush, Journal, JournalError};
use tokio::sync::mpsc::UnboundedSender;

use crate::audit::AuditMsg;
use crate::config::IndexConfig;
use crate::parser::{KeptVersions, ParseJob, ParseOutcome, PoolMsg, Versions};
use crate::supervisor::SupervisorMsg;
use crate::writer::WriterMsg;
use sno_index::admission::{self, ContentVerdict, IgnoreRules, PathVerdict, SecretFilter};
use sno_index::advance::{advance, advance_with, FirstIndex, RepoIndex, StateAfter};
use sno_index::git::{GitError, GitRepo, PathChange};
use sno_index::record::{count_lines, parsed_record, skip_state, skipped_record};

/// What to index.
#[derive(Clone, Debug)]
pub struct IndexRequest {
    /// A commit-ish; `None` means HEAD.
    pub target: Option<String>,
    /// First-parent commits before the target to journal; `None` means all.
    pub history: Option<usize>,
    /// Largest file to parse, in bytes, instead of the configuration's.
    pub max_file_size: Option<u64>,
}

pub use sno_protocol::status::Progress;

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunDone {
    pub run: IndexRun,
    pub up_to_date: bool,
    pub branch: Option<String>,
    pub shallow: bool,
    /// Files parsed from the tree of their previous version (history only).
    pub files_reparsed: u64,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{0}")]
    Engine(#[from] crate::error::Error),
    #[error("configuration: {0}")]
    Config(String),
    #[error("actor system: {0}")]
    Actor(String),
    #[error("the index moved while a commit was indexed over it")]
    HeadMoved,
}

impl From<IndexError> for crate::error::Error {
    fn from(e: IndexError) -> Self {
        use sno_protocol::ErrorCode;
        match e {
            IndexError::Git(g) => g.into(),
            IndexError::Journal(j) => j.into(),
            IndexError::Engine(e) => e,
            IndexError::Config(m) => ErrorCode::Config
                .with(format!("configuration: {m}"))
                .hinted("Fix the pattern or value in .sno/config.toml.")
                .into(),
            IndexError::HeadMoved => ErrorCode::Internal
                .with("the index moved while a commit was indexed over it")
                .hinted("Run the command again; nothing partial was stored.")
                .into(),
            IndexError::Actor(m) => ErrorCode::Internal
                .with(format!("actor system failure: {m}"))
                .hinted(
                    "Run the command again; nothing partial was stored. Report it if it repeats.",
                )
                .into(),
        }
    }
}

/// Messages of the indexer: everything that moves the views, one at a time.
pub enum IndexerMsg {
    /// Index a commit and its history.
    Run(
        IndexRequest,
        Option<UnboundedSender<Progress>>,
        RpcReplyPort<Result<RunDone, crate::error::Error>>,
    ),
    /// Move the views back to a journaled commit's state (and where git's
    /// HEAD was).
    Rollback(
        CommitId,
        Option<CommitId>,
        RpcReplyPort<Result<sno_journal::rollback::Rollback, crate::error::Error>>,
    ),
    /// Rebuild the views from the journal.
    Repair(RpcReplyPort<Result<(), crate::error::Error>>),
    /// Load the indexed state and resolution's indexes ahead of the first
    /// run of a long-lived engine (when small enough to keep), so the
    /// first commit it follows costs what later ones do.
    Warm,
}

/// Arguments of the indexer.
pub struct IndexerArgs {
    pub root: PathBuf,
    pub journal: Arc<Journal>,
    pub config: IndexConfig,
    /// Test hook: a pause after each journaled commit.
    pub commit_delay_ms: u64,
    /// Test hook: commits indexed over records read on demand whatever
    /// the repository's size.
    pub lazy_commits: bool,
    pub supervisor: ActorRef<SupervisorMsg>,
}

/// The indexer actor.
pub struct Indexer;

/// The indexer's state: its arguments, and what the last run left.
pub struct IndexerState {
    args: IndexerArgs,
    kept: Option<Kept>,
}

/// The state a run ended with and resolution's indexes of it, kept for the
/// next run of a long-lived engine: reading the whole views back and
/// indexing them again cost more than indexing a small commit. Valid while
/// the journal's head is still the event that produced it (a journal
/// position is never reused); kept only for states of at most
/// [`KEEP_SYMBOLS`] symbols, so a large repository's daemon does not hold
/// it between runs.
struct Kept {
    seq: Seq,
    state: State,
    index: RepoIndex,
}

/// The largest state (in symbols) kept between runs: about 2M lines of
/// code, a few hundred MB held.
const KEEP_SYMBOLS: usize = 300_000;

/// Past this many files a state is not loaded ahead of a run to be kept
/// (the symbols are counted only once it is read).
pub(crate) const KEEP_FILES: u64 = 12_000;

/// Whether the views are too large to keep between runs, judged without
/// reading a record: more files than [`KEEP_FILES`], or more rows in the
/// names table than [`KEEP_SYMBOLS`] (a file's names are at most its
/// symbols). Views this large are not loaded to index one commit: its
/// records are read on demand over an index made from the views a batch
/// at a time (on 9.3M lines the whole state cost a daemon 3 GB); a state
/// that may be kept is loaded, so that the next commit finds it. Files
/// alone missed a repository of few, large files: 11.7k files of 4.3M
/// lines (generated bindings of thousands of symbols a file) had its 796k
/// symbols read whole for a one-file commit, a daemon's 250 MB growing to
/// 1.2 GB over it.
pub(crate) fn too_large_to_keep(journal: &Journal) -> Result<bool, JournalError> {
    Ok(too_large(journal.files_len()?, journal.name_rows_len()?))
}

/// [`too_large_to_keep`] for views of `files` files and `name_rows` rows
/// of the names table.
fn too_large(files: u64, name_rows: u64) -> bool {
    files > KEEP_FILES || name_rows > KEEP_SYMBOLS as u64
}

/// The index a commit over records read on demand starts from: the views'
/// paths, and no symbol until resolution asks for it
/// ([`RepoIndex::partial`]); with each path's blob as a record of nothing
/// else, for the run's first listing to be reconciled with.
fn partial_index(journal: &Journal, seq: Seq) -> Result<(RepoIndex, State), IndexError> {
    let blobs = journal.blobs_at_head(seq)?.ok_or(IndexError::HeadMoved)?;
    let index = RepoIndex::partial(blobs.iter().map(|(p, _)| p));
    let blobs = blobs
        .into_iter()
        .map(|(path, blob)| {
            let rec = FileRecord {
                path: path.clone(),
                blob,
                language: None,
                size: 0,
                lines: 0,
                state: sno_journal::model::FileState::Parsed,
                diagnostics: Vec::new(),
                symbols: Vec::new(),
                edges: Vec::new(),
                refs: Default::default(),
                masked_secrets: 0,
            };
            (path, rec)
        })
        .collect();
    Ok((index, blobs))
}

/// The views a commit over records read on demand reads, at the head
/// `seq`. A read that fails, or finds the head moved, is kept in `failed`
/// and answered with nothing: the caller then writes no delta.
struct ViewsAt<'j> {
    journal: &'j Journal,
    seq: Seq,
    failed: Option<IndexError>,
}

impl ViewsAt<'_> {
    fn or_fail<T: Default>(&mut self, got: Result<Option<T>, sno_journal::JournalError>) -> T {
        match got {
            Ok(Some(t)) => t,
            Ok(None) => {
                self.failed.get_or_insert(IndexError::HeadMoved);
                T::default()
            }
            Err(e) => {
                self.failed.get_or_insert(IndexError::from(e));
                T::default()
            }
        }
    }
}

impl sno_index::advance::Views for ViewsAt<'_> {
    fn records(&mut self, paths: &[&str]) -> State {
        let got = self.journal.files_at_head(self.seq, paths);
        self.or_fail(got)
    }

    fn defining(&mut self, keys: &[String]) -> State {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let got = self
            .journal
            .files_naming_at_head(self.seq, &keys, usize::MAX);
        self.or_fail(got)
    }

    fn users(&mut self, name: &str) -> std::collections::BTreeSet<String> {
        let got = self
            .journal
            .referrer_paths_at_head(self.seq, &[sno_journal::store::name_used(name)]);
        self.or_fail(got)
    }

    fn importers(&mut self) -> std::collections::BTreeSet<String> {
        let got = self
            .journal
            .referrer_paths_at_head(self.seq, &[sno_journal::store::IMPORTER.to_vec()]);
        self.or_fail(got)
    }
}

/// Whether `state` holds at most [`KEEP_SYMBOLS`] symbols.
fn small_enough_to_keep(state: &State) -> bool {
    state.values().map(|r| r.symbols.len()).sum::<usize>() <= KEEP_SYMBOLS
}

/// The views' state and its resolution indexes, if there is a head and
/// the state is small enough to keep ([`KEEP_SYMBOLS`]).
fn warm(journal: &Journal) -> Option<Kept> {
    let t = std::time::Instant::now();
    let head = journal.head().ok()??;
    // A state whose counts alone say it is too large is not read at all.
    if too_large_to_keep(journal).ok()? {
        return None;
    }
    let state = journal.load_state().ok()?;
    if !small_enough_to_keep(&state) {
        return None;
    }
    let mut index = RepoIndex::new(&state);
    index.prepare(&state);
    tracing::debug!(
        files = state.len(),
        ms = t.elapsed().as_millis() as u64,
        "state kept ahead of the first run"
    );
    Some(Kept {
        seq: head.seq,
        state,
        index,
    })
}

impl Actor for Indexer {
    type Msg = IndexerMsg;
    type State = IndexerState;
    type Arguments = IndexerArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<IndexerMsg>,
        args: IndexerArgs,
    ) -> Result<IndexerState, ActorProcessingErr> {
        Ok(IndexerState { args, kept: None })
    }

    async fn handle(
        &self,
        _me: ActorRef<IndexerMsg>,
        msg: IndexerMsg,
        state: &mut IndexerState,
    ) -> Result<(), ActorProcessingErr> {
        let st = &state.args;
        let writer = ractor::call!(st.supervisor, SupervisorMsg::Writer)?;
        let (req, progress, reply) = match msg {
            IndexerMsg::Run(req, progress, reply) => (req, progress, reply),
            IndexerMsg::Rollback(to, git_head, reply) => {
                state.kept = None;
                let r = ractor::call!(writer, crate::writer::WriterMsg::Rollback, to, git_head)?;
                let _ = reply.send(r);
                return Ok(());
            }
            IndexerMsg::Warm => {
                if state.kept.is_none() {
                    let journal = st.journal.clone();
                    state.kept = crate::background::background(move || warm(&journal));
                }
                return Ok(());
            }
            IndexerMsg::Repair(reply) => {
                state.kept = None;
                let r = ractor::call!(writer, crate::writer::WriterMsg::Repair)?;
                let _ = reply.send(r);
                return Ok(());
            }
        };
        let pool = ractor::call!(st.supervisor, SupervisorMsg::Pool)?;
        let audit = ractor::call!(st.supervisor, SupervisorMsg::Audit)?;
        let mut run = IndexRun {
            pid: std::process::id(),
            started_ms: now_ms(),
            ..IndexRun::default()
        };
        let runner = Run {
            st,
            pool: &pool,
            writer: &writer,
            progress: progress.as_ref(),
            reparsed: AtomicU64::new(0),
            max_file_size: req.max_file_size.unwrap_or(st.config.max_file_size),
        };
        let result = runner.execute(&req, &mut run, &mut state.kept).await;
        let files_reparsed = runner.reparsed.load(Ordering::Relaxed);
        run.finished_ms = now_ms();
        run.outcome = match &result {
            Ok(_) => "completed".into(),
            Err(e) => e.to_string(),
        };
        let _ = audit.cast(AuditMsg::Record(AuditRecord {
            time_ms: now_ms(),
            entry: AuditEntry::IndexRun(run.clone()),
        }));
        let _ = ractor::call!(audit, AuditMsg::Flush);
        let _ = reply.send(
            result
                .map(|(up_to_date, branch, shallow)| RunDone {
                    run,
                    up_to_date,
                    branch,
                    shallow,
                    files_reparsed,
                })
                .map_err(crate::error::Error::from),
        );
        Ok(())
    }
}

/// Runs blocking work (git reads, resolution, the journal write) from the
/// indexer's task without holding up the runtime's other tasks.
///
/// The parse workers are tasks on the same runtime. A worker thread that
/// blocks keeps the task in its LIFO slot, which other threads cannot steal:
/// measured on a first index, one core sat idle for the first 150 ms while
/// the blobs were read. `block_in_place` hands the thread's queue to another
/// thread first. A current-thread runtime cannot do that; there the work
/// simply runs.
fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// How often a run of many commits syncs the journal to disk.
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// Commits journaled but not yet synced ([`Flush::Deferred`]): synced when
/// the run ends, also by an error or a panic, so only a crash can lose them.
struct Deferred<'a> {
    writer: &'a ActorRef<WriterMsg>,
    pending: bool,
    since: std::time::Instant,
}

impl<'a> Deferred<'a> {
    fn new(writer: &'a ActorRef<WriterMsg>) -> Self {
        Deferred {
            writer,
            pending: false,
            since: std::time::Instant::now(),
        }
    }

    fn committed(&mut self, flush: Flush) {
        match flush {
            Flush::Durable => {
                self.pending = false;
                self.since = std::time::Instant::now();
            }
            Flush::Deferred => self.pending = true,
        }
    }
}

impl Drop for Deferred<'_> {
    fn drop(&mut self) {
        // The writer takes messages in order: this flush follows the run's
        // last commit.
        if self.pending {
            let _ = self.writer.cast(WriterMsg::Flush);
        }
    }
}

/// How far back a run looks along HEAD's first-parent line for a
/// journaled commit, at the least (more when more history is asked).
const SINCE_WALK: usize = 10_000;

/// What a run on top of an indexed head journals.
struct AfterHead {
    /// HEAD's line does not continue from the indexed head.
    moved: bool,
    /// The commits to index, oldest first.
    todo: Vec<CommitId>,
}

/// The commits to index on top of the indexed `head` for HEAD at `tip`:
/// every commit after `head` when `tip` continues its first-parent line,
/// however many (a pull of 500 commits, the rerun of an interrupted
/// `--history all`); else a branch move, and the commits after the newest
/// journaled commit of `tip`'s line (a rebase's rewritten commits), at
/// most `history` and `tip`, or `tip` alone when the line holds none.
fn plan_after_head(
    repo: &GitRepo,
    journal: &Journal,
    head: CommitId,
    tip: CommitId,
    history: Option<usize>,
) -> Result<AfterHead, IndexError> {
    let limit = history
        .map_or(usize::MAX, |n| n.saturating_add(1))
        .max(SINCE_WALK);
    let mut failed = None;
    let (since, found) = repo.first_parent_chain_since(tip, limit, |c| {
        *c == head
            || match journal.seq_of_commit(c) {
                Ok(seq) => seq.is_some(),
                Err(e) => {
                    failed.get_or_insert(e);
                    true
                }
            }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    if found == Some(head) {
        return Ok(AfterHead {
            moved: false,
            todo: since,
        });
    }
    let todo = match found {
        Some(_) if !since.is_empty() => {
            let keep = history.map_or(since.len(), |n| n.saturating_add(1));
            since[since.len().saturating_sub(keep)..].to_vec()
        }
        _ => vec![tip],
    };
    Ok(AfterHead { moved: true, todo })
}

/// Whether the journal's newest event is `ev`.
fn last_event_is(journal: &Journal, ev: &Event) -> Result<bool, IndexError> {
    let Some(last) = journal.len()?.checked_sub(1) else {
        return Ok(false);
    };
    let events = journal.event_outlines(
        sno_journal::model::Seq(last),
        Some(sno_journal::model::Seq(last + 1)),
    )?;
    Ok(events.first().is_some_and(|(_, env)| &env.event == ev))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

struct Run<'a> {
    st: &'a IndexerArgs,
    pool: &'a ActorRef<PoolMsg>,
    writer: &'a ActorRef<WriterMsg>,
    progress: Option<&'a UnboundedSender<Progress>>,
    reparsed: AtomicU64,
    max_file_size: u64,
}

impl Run<'_> {
    /// Appends an event that does not move the views, through the writer.
    async fn append(&self, ev: Event) -> Result<sno_journal::model::Seq, IndexError> {
        Ok(ractor::call!(self.writer, WriterMsg::Append, ev)
            .map_err(|e| IndexError::Actor(e.to_string()))??)
    }
}

/// A file that needs parsing, with what is already known of it.
struct Pending {
    path: String,
    blob: BlobId,
    size: u64,
}

impl Run<'_> {
    async fn execute(
        &self,
        req: &IndexRequest,
        run: &mut IndexRun,
        kept: &mut Option<Kept>,
    ) -> Result<(bool, Option<String>, bool), IndexError> {
        let cfg = &self.st.config;
        let journal = &self.st.journal;
        let secrets = SecretFilter::new(&cfg.secret_patterns).map_err(IndexError::Config)?;
        let mut repo = GitRepo::open(&self.st.root)?;
        let tip = match &req.target {
            Some(t) => repo.resolve(t)?,
            None => repo.head()?,
        };
        let branch = repo.branch()?;
        let shallow = repo.is_shallow();
        run.target = Some(tip);
        let head = journal.head()?;
        // The state is read once the run's commits are known: one commit
        // on top of a head too large to keep is indexed over records read
        // on demand instead.
        let (mut state, kept_index, mut loaded) = match kept.take() {
            Some(k) if head.as_ref().map(|h| h.seq) == Some(k.seq) && !self.st.lazy_commits => {
                tracing::debug!(files = k.state.len(), "the last run's state, kept");
                (k.state, Some(k.index), true)
            }
            _ => (State::new(), None, false),
        };
        let mut moved = false;
        let todo: Vec<CommitId> = match &head {
            Some(h) => {
                let mut plan = plan_after_head(&repo, journal, h.commit, tip, req.history)?;
                // Several commits read the whole state: a head too large
                // to hold moves by its tip alone, over records read on
                // demand.
                if plan.moved
                    && plan.todo.len() > 1
                    && (self.st.lazy_commits || too_large_to_keep(journal)?)
                {
                    plan.todo = vec![tip];
                }
                moved = plan.moved;
                if plan.moved {
                    // A run killed after the move was journaled left it
                    // there: the rerun does not journal it twice.
                    let moved = BranchMoved {
                        branch: branch.clone(),
                        from: Some(h.commit),
                        to: tip,
                    };
                    if !last_event_is(journal, &Event::BranchMoved(moved.clone()))? {
                        self.append(Event::BranchMoved(moved)).await?;
                    }
                }
                plan.todo
            }
            None => repo.first_parent_chain(tip, req.history)?,
        };
        if let Some(p) = self.progress {
            let _ = p.send(Progress::Planned {
                commits: todo.len(),
                resumed_from: head.as_ref().map(|h| h.commit.to_hex()),
            });
        }
        if moved && self.st.commit_delay_ms > 0 {
            // Tests kill a run here: a move journaled, its commit not yet.
            tokio::time::sleep(Duration::from_millis(self.st.commit_delay_ms)).await;
        }
        if todo.is_empty() {
            if let (Some(h), Some(index)) = (&head, kept_index) {
                *kept = Some(Kept {
                    seq: h.seq,
                    state,
                    index,
                });
            }
            return Ok((true, branch, shallow));
        }
        if head.is_none() && todo.len() == 1 {
            let mut ctx = PrepareCtx {
                todo,
                secrets,
                ignores: None,
                reuse: None,
                skipped: Vec::new(),
            };
            drop(state);
            self.first_index_streamed(&mut repo, &mut ctx, &branch, run)
                .await?;
            return Ok((false, branch, shallow));
        }
        let prev_tree = match &head {
            Some(h) => repo.commit(h.commit).ok().map(|c| c.tree),
            None => None,
        };
        let mut base = head.as_ref().map(|h| h.commit);
        // Records read on demand: one commit on a head of many files.
        let mut lazy = match (&head, loaded) {
            (Some(h), false) if todo.len() == 1 => {
                (self.st.lazy_commits || too_large_to_keep(journal)?).then_some(h.seq)
            }
            _ => None,
        };
        if lazy.is_none() && !loaded {
            state = journal.load_state()?;
            loaded = true;
        }
        let mut blobs = State::new();
        let mut index = match (kept_index, lazy) {
            (Some(index), _) => index,
            (None, Some(seq)) => {
                let (index, b) = off_the_runtime(|| partial_index(journal, seq))?;
                blobs = b;
                index
            }
            (None, None) => RepoIndex::new(&state),
        };
        // A first index is not kept: it is the largest run, and the next
        // is usually in another process; nor is a state read on demand.
        let keep = head.is_some() && loaded && small_enough_to_keep(&state);
        let mut last_seq = None;
        let mut files_held = state.len();
        // Deferred commits are synced if the run stops early, however it stops.
        let mut deferred = Deferred::new(self.writer);
        let total = todo.len();
        // Two-stage pipeline: while commit k is resolved and written, the files
        // of commit k+1 are already being read and parsed.
        let reuse = if todo.len() > 1 {
            // A damaged old commit only costs the reuse of parsed versions.
            off_the_runtime(|| Reuse::plan(&repo, &todo, cfg.reparse_budget_bytes)).unwrap_or_else(
                |e| {
                    tracing::warn!(error = %e, "not reusing parsed versions");
                    None
                },
            )
        } else {
            None
        };
        let mut ctx = PrepareCtx {
            todo: todo.clone(),
            secrets,
            ignores: None,
            reuse,
            skipped: Vec::new(),
        };
        // The tree of the last commit journaled: what the next is diffed from.
        let mut last_tree = prev_tree;
        let mut next = off_the_runtime(|| {
            // Records read on demand: a full listing is reconciled with
            // the views' blobs.
            let listed = if loaded { &state } else { &blobs };
            self.prepare_skipping(&mut repo, &mut ctx, 0, last_tree, Some(listed), run)
        })?;
        while let Some((i, prepared)) = next.take() {
            let commit = todo[i];
            let t0 = std::time::Instant::now();
            let cur = match prepared {
                Prepared::Ready(p) => p,
                // Its .gitignore changed: judge it against the state it follows.
                Prepared::NeedsFull(info) => {
                    debug_assert_eq!(info.id, commit);
                    if !loaded {
                        // Its index is the views' already: only the
                        // records are read.
                        state = journal.load_state()?;
                        loaded = true;
                        lazy = None;
                    }
                    match off_the_runtime(|| {
                        self.prepare(&mut repo, &mut ctx, i, None, Some(&state), run)
                    }) {
                        Ok(Prepared::Ready(p)) => p,
                        Ok(Prepared::NeedsFull(_)) => {
                            unreachable!("a full listing never needs another")
                        }
                        Err(IndexError::Git(e)) if i + 1 < todo.len() => {
                            self.skip_commit(&mut ctx, commit, &e);
                            next = off_the_runtime(|| {
                                self.prepare_skipping(
                                    &mut repo,
                                    &mut ctx,
                                    i + 1,
                                    last_tree,
                                    Some(&state),
                                    run,
                                )
                            })?;
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            if i + 1 < todo.len() {
                next = off_the_runtime(|| {
                    self.prepare_skipping(
                        &mut repo,
                        &mut ctx,
                        i + 1,
                        Some(cur.info.tree),
                        None,
                        run,
                    )
                })?;
            }
            let info = cur.info.clone();
            if let Some(seq) = lazy {
                let leaving: Vec<&str> = cur.leaving.iter().map(String::as_str).collect();
                state.extend(
                    journal
                        .files_at_head(seq, &leaving)?
                        .ok_or(IndexError::HeadMoved)?,
                );
            }
            let (updates, parsed, reparsed) = cur.finish(&state, run).await;
            self.reparsed.fetch_add(reparsed as u64, Ordering::Relaxed);
            let t_parsed = t0.elapsed();
            let after = if i + 1 < todo.len() || keep {
                StateAfter::Kept
            } else {
                StateAfter::Dropped
            };
            let deltas = match lazy {
                None => off_the_runtime(|| advance(&mut state, &mut index, updates, after)),
                Some(seq) => {
                    let mut views = ViewsAt {
                        journal,
                        seq,
                        failed: None,
                    };
                    let deltas = off_the_runtime(|| {
                        advance_with(&mut state, &mut index, updates, after, Some(&mut views))
                    });
                    // A record that could not be read makes every delta
                    // doubtful: nothing is written.
                    if let Some(e) = views.failed {
                        return Err(e);
                    }
                    tracing::debug!(
                        records_held = state.len(),
                        "commit indexed over records read on demand"
                    );
                    deltas
                }
            };
            let t_advanced = t0.elapsed();
            let n_deltas = deltas.len();
            files_held = state.len() + n_deltas;
            let lesson = info
                .reverts
                .filter(|_| !lesson_known(journal, &info.id))
                .map(|reverted| lesson_of_revert(&info, base, &branch, reverted, &deltas));
            // Syncing every commit of a history cost more than indexing a
            // patch's few files: commits are synced once a second, and the
            // run's last one at once.
            let flush = if i + 1 == todo.len() || deferred.since.elapsed() >= SYNC_EVERY {
                Flush::Durable
            } else {
                Flush::Deferred
            };
            self.journal_skipped(&mut ctx).await?;
            let ev = commit_event(&info, &branch, base, deltas);
            let seq = ractor::call!(
                self.writer,
                WriterMsg::Commit,
                ev,
                lesson.into_iter().collect(),
                flush
            )
            .map_err(|e| IndexError::Actor(e.to_string()))??;
            last_seq = Some(seq);
            deferred.committed(flush);
            run.commits_indexed += 1;
            tracing::info!(
                commit = %commit.short(),
                parsed,
                reparsed,
                deltas = n_deltas,
                read_parse_ms = t_parsed.as_millis() as u64,
                resolve_ms = (t_advanced - t_parsed).as_millis() as u64,
                write_ms = (t0.elapsed() - t_advanced).as_millis() as u64,
                "commit journaled"
            );
            if let Some(p) = self.progress {
                let _ = p.send(Progress::CommitDone {
                    index: i + 1,
                    total,
                    commit: commit.to_hex(),
                    files_parsed: parsed,
                    deltas: n_deltas,
                });
            }
            if self.st.commit_delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.st.commit_delay_ms)).await;
            }
            base = Some(commit);
            last_tree = Some(info.tree);
        }
        if let Some(r) = &ctx.reuse {
            tracing::debug!(kept_bytes = r.kept.bytes(), "versions kept at the end");
        }
        if let (true, Some(seq)) = (keep, last_seq) {
            *kept = Some(Kept { seq, state, index });
            return Ok((false, branch, shallow));
        }
        // What is left is freed off the writer's path if large (judged by
        // the files the run held: the last advance moved added ones out).
        sno_journal::teardown::drop_large((state, index, ctx), files_held);
        Ok((false, branch, shallow))
    }

    /// [`Run::prepare`] from the run's `at`-th commit on: a commit of the
    /// history whose objects cannot be read is journaled as skipped, with
    /// why, and the next one is prepared from the same tree instead. The
    /// run's last commit (the target) cannot be skipped: its error stands.
    fn prepare_skipping(
        &self,
        repo: &mut GitRepo,
        ctx: &mut PrepareCtx,
        mut at: usize,
        prev: Option<gix::ObjectId>,
        state: Option<&State>,
        run: &mut IndexRun,
    ) -> Result<Option<(usize, Prepared)>, IndexError> {
        loop {
            match self.prepare(repo, ctx, at, prev, state, run) {
                Ok(p) => return Ok(Some((at, p))),
                Err(IndexError::Git(e)) if at + 1 < ctx.todo.len() => {
                    let commit = ctx.todo[at];
                    self.skip_commit(ctx, commit, &e);
                    at += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Journals that `commit` could not be indexed.
    fn skip_commit(&self, ctx: &mut PrepareCtx, commit: CommitId, e: &GitError) {
        tracing::warn!(commit = %commit.short(), error = %e, "skipping a commit whose objects cannot be read");
        ctx.skipped.push(sno_journal::event::CommitSkipped {
            commit,
            reason: e.to_string(),
        });
    }

    /// Journals the commits skipped so far.
    async fn journal_skipped(&self, ctx: &mut PrepareCtx) -> Result<(), IndexError> {
        for s in std::mem::take(&mut ctx.skipped) {
            self.append(Event::CommitSkipped(s)).await?;
        }
        Ok(())
    }

    /// Works out what changed in the run's `at`-th commit and starts parsing
    /// it.
    ///
    /// With `prev` and no `.gitignore` change, the changes are a tree diff and
    /// need no state (so this can run ahead of the writer). Otherwise the
    /// whole tree is listed and reconciled against `state`; without a state at
    /// hand, that case is handed back as [`Prepared::NeedsFull`].
    fn prepare(
        &self,
        repo: &mut GitRepo,
        ctx: &mut PrepareCtx,
        at: usize,
        prev: Option<gix::ObjectId>,
        state: Option<&State>,
        run: &mut IndexRun,
    ) -> Result<Prepared, IndexError> {
        let info = repo.commit(ctx.todo[at])?;
        let Some(changes) = Self::changes_of(repo, ctx, &info, prev, state)? else {
            return Ok(Prepared::NeedsFull(info));
        };
        let mut p = PreparedCommit {
            info,
            leaving: Vec::new(),
            skipped: BTreeMap::new(),
            inflight: FuturesUnordered::new(),
        };
        for change in changes {
            match self.admit(repo, ctx, at, change, run)? {
                Admitted::Leaving(path) => p.leaving.push(path),
                Admitted::Skipped(rec) => {
                    p.skipped.insert(rec.path.clone(), rec);
                }
                Admitted::Parse(pending, job) => p.inflight.push(self.parse(pending, job)?),
            }
        }
        Ok(Prepared::Ready(p))
    }

    /// What changed in `info` since the tree `prev`: a tree diff, or, with
    /// no `prev` or a `.gitignore` changed, the whole listing reconciled
    /// against `state` (`None` when that is needed and no state is at
    /// hand).
    fn changes_of(
        repo: &mut GitRepo,
        ctx: &mut PrepareCtx,
        info: &sno_index::git::CommitInfo,
        prev: Option<gix::ObjectId>,
        state: Option<&State>,
    ) -> Result<Option<Vec<PathChange>>, IndexError> {
        let diffed = match (prev, &ctx.ignores) {
            (Some(prev), Some(_)) => Some(repo.diff_trees(prev, info.tree)?),
            _ => None,
        };
        let full = match &diffed {
            Some(changes) => changes.iter().any(|c| admission::is_gitignore(&c.path)),
            None => true,
        };
        if !full {
            return Ok(Some(diffed.unwrap_or_default()));
        }
        let Some(state) = state else {
            return Ok(None);
        };
        let listing = repo.list_tree(info.tree)?;
        let mut gi = Vec::new();
        for f in listing.iter().filter(|f| admission::is_gitignore(&f.path)) {
            gi.push((f.path.clone(), repo.blob(f.blob)?));
        }
        let rules = IgnoreRules::new(&gi);
        let admitted = |p: &str| {
            matches!(
                admission::judge_path(p, &ctx.secrets, &rules),
                PathVerdict::Admit(_)
            )
        };
        let changes = reconcile(
            state,
            listing.into_iter().map(|f| (f.path, f.blob)).collect(),
            admitted,
        );
        ctx.ignores = Some(rules);
        Ok(Some(changes))
    }

    /// Judges one changed path of the `at`-th commit: it leaves the index,
    /// is recorded without parsing, or is read and becomes a parse job.
    fn admit(
        &self,
        repo: &mut GitRepo,
        ctx: &PrepareCtx,
        at: usize,
        change: PathChange,
        run: &mut IndexRun,
    ) -> Result<Admitted, IndexError> {
        let Some(blob) = change.blob else {
            return Ok(Admitted::Leaving(change.path));
        };
        let rules = ctx
            .ignores
            .as_ref()
            .expect("rules are built by the first full listing");
        let language = match admission::judge_path(&change.path, &ctx.secrets, rules) {
            PathVerdict::Secret => {
                run.excluded_secrets += 1;
                return Ok(Admitted::Leaving(change.path));
            }
            PathVerdict::Ignored => {
                run.skipped_ignored += 1;
                return Ok(Admitted::Leaving(change.path));
            }
            PathVerdict::Admit(l) => l,
        };
        // Files of other languages are judged by their size alone,
        // without inflating them. A source file is read at once: asking
        // its size first opened each loose object twice, a fifth of the
        // time reading took; the price is that a source file over the
        // size limit is inflated once before it is skipped. Each file
        // goes to the parsers as soon as it is read: ordering the work
        // (largest first) would need every size before the first parse,
        // and measured no faster.
        let Some(language) = language else {
            // Its size only tells a file too large from one without a
            // grammar: neither is read. A partial clone's history lacks
            // exactly such files' objects (`--filter=blob:limit=...`
            // leaves out large assets), which cost the whole commit when
            // their size was required.
            let size = match repo.blob_size(blob) {
                Ok(size) => size,
                Err(GitError::MissingObject(_)) => 0,
                Err(e) => return Err(e.into()),
            };
            let reason = if size > self.max_file_size {
                SkipReason::TooLarge
            } else {
                SkipReason::UnsupportedLanguage
            };
            return Ok(Admitted::Skipped(skipped(
                change.path,
                blob,
                size,
                0,
                reason,
                run,
            )));
        };
        // The size git has: what the work tree is compared with.
        let (bytes, size) = repo.blob_and_size(blob)?;
        Ok(
            match admission::judge_content(Some(language), size, self.max_file_size, Some(&bytes)) {
                ContentVerdict::Parse(l) => {
                    let pending = Pending {
                        path: change.path.clone(),
                        blob,
                        size,
                    };
                    let versions = ctx.reuse.as_ref().map(|r| r.versions(&change.path, at));
                    let job = ParseJob {
                        path: change.path,
                        language: l,
                        bytes,
                        versions,
                        mask_secrets: self.st.config.mask_secrets,
                    };
                    Admitted::Parse(pending, job)
                }
                ContentVerdict::Skip(r) => {
                    // A file over the limit is not counted into.
                    let lines = match r {
                        SkipReason::TooLarge => 0,
                        _ => count_lines(&bytes),
                    };
                    Admitted::Skipped(skipped(change.path, blob, size, lines, r, run))
                }
            },
        )
    }

    /// Hands a job to the parser pool: its outcome, when it comes.
    fn parse(&self, pending: Pending, job: ParseJob) -> Result<ParseFuture, IndexError> {
        let (tx, rx) = ractor::concurrency::oneshot();
        self.pool
            .cast(PoolMsg::Parse(job, tx.into()))
            .map_err(|e| IndexError::Actor(format!("parser pool: {e}")))?;
        Ok(Box::pin(async move { (pending, rx.await.ok()) }))
    }

    /// A first index of one commit (`sno init --history 0`, or a first
    /// run whose history is one commit), in memory bounded by the work
    /// rather than the repository: files are read only while the parsers
    /// keep up (at most [`IN_FLIGHT_BYTES`] of them waiting), each record
    /// is packed as it comes back, and the deltas are resolved and written
    /// a block at a time ([`FirstIndex`],
    /// [`Journal::append_first_index_streamed`]). It journals what the
    /// general path would: the replay tests hold it to that.
    async fn first_index_streamed(
        &self,
        repo: &mut GitRepo,
        ctx: &mut PrepareCtx,
        branch: &Option<String>,
        run: &mut IndexRun,
    ) -> Result<(), IndexError> {
        let t0 = std::time::Instant::now();
        let commit = ctx.todo[0];
        let info = repo.commit(commit)?;
        let changes =
            off_the_runtime(|| Self::changes_of(repo, ctx, &info, None, Some(&State::default())))?
                .expect("a full listing against a state at hand");
        let total = changes.len();
        let report = |done: usize| {
            if let Some(p) = self.progress {
                let _ = p.send(Progress::FilesParsed { done, total });
            }
        };
        let mut changes = changes.into_iter();
        let mut first = FirstIndex::default();
        let mut inflight: FuturesUnordered<ParseFuture> = FuturesUnordered::new();
        let (mut waiting, mut parsed) = (0u64, 0usize);
        loop {
            off_the_runtime(|| {
                while waiting < IN_FLIGHT_BYTES && inflight.len() < IN_FLIGHT_FILES {
                    let Some(change) = changes.next() else {
                        break;
                    };
                    match self.admit(repo, ctx, 0, change, run)? {
                        // The state is empty: nothing leaves it.
                        Admitted::Leaving(_) => {}
                        Admitted::Skipped(rec) => first.add(rec),
                        Admitted::Parse(pending, job) => {
                            waiting += pending.size;
                            inflight.push(self.parse(pending, job)?);
                        }
                    }
                }
                Ok::<(), IndexError>(())
            })?;
            let Some((p, outcome)) = inflight.next().await else {
                break;
            };
            waiting -= p.size;
            let (rec, was_parsed, _) = record_of(p, outcome, run);
            parsed += usize::from(was_parsed);
            first.add(rec);
            if first.len() % PROGRESS_EVERY == 0 {
                report(first.len());
            }
        }
        if first.len() % PROGRESS_EVERY != 0 {
            report(first.len());
        }
        run.files_parsed += parsed as u64;
        let t_parsed = t0.elapsed();
        let (files, packed_bytes) = (first.len(), first.packed_bytes());
        let lesson = info
            .reverts
            .map(|reverted| lesson_of_revert(&info, None, branch, reverted, &[]));
        let ev = commit_event(&info, branch, None, Vec::new());
        ractor::call!(
            self.writer,
            WriterMsg::FirstIndex,
            ev,
            first,
            lesson.into_iter().collect(),
            Flush::Durable
        )
        .map_err(|e| IndexError::Actor(e.to_string()))??;
        run.commits_indexed += 1;
        tracing::info!(
            commit = %commit.short(),
            parsed,
            deltas = files,
            packed_mb = packed_bytes >> 20,
            read_parse_ms = t_parsed.as_millis() as u64,
            resolve_write_ms = (t0.elapsed() - t_parsed).as_millis() as u64,
            "first index journaled"
        );
        if let Some(p) = self.progress {
            let _ = p.send(Progress::CommitDone {
                index: 1,
                total: 1,
                commit: commit.to_hex(),
                files_parsed: parsed,
                deltas: files,
            });
        }
        Ok(())
    }
}

/// Parse jobs' bytes a streamed first index lets wait for the parsers:
/// enough to keep them busy, bounded whatever the repository's size.
const IN_FLIGHT_BYTES: u64 = 32 << 20;

/// Files parsed between two progress reports of a first index.
const PROGRESS_EVERY: usize = 256;

/// Parse jobs a streamed first index lets wait, however small.
const IN_FLIGHT_FILES: usize = 256;

/// What becomes of one changed path.
enum Admitted {
    /// It leaves the index if the state has it (deleted, secret, ignored).
    Leaving(String),
    /// It is tracked but not parsed.
    Skipped(FileRecord),
    /// It is parsed.
    Parse(Pending, ParseJob),
}

/// The event journaling `info` on top of `base` with `deltas`.
fn commit_event(
    info: &sno_index::git::CommitInfo,
    branch: &Option<String>,
    base: Option<CommitId>,
    deltas: Vec<sno_journal::event::FileDelta>,
) -> Box<CommitIndexed> {
    Box::new(CommitIndexed {
        commit: info.id,
        parents: info.parents.clone(),
        branch: branch.clone(),
        summary: info.summary.clone(),
        time: info.time,
        base,
        deltas,
    })
}

/// Records a tracked file that is not parsed, and counts why.
fn skipped(
    path: String,
    blob: BlobId,
    size: u64,
    lines: u32,
    reason: SkipReason,
    run: &mut IndexRun,
) -> FileRecord {
    match reason {
        SkipReason::Binary => run.skipped_binary += 1,
        SkipReason::TooLarge => run.skipped_too_large += 1,
        SkipReason::UnsupportedLanguage => run.skipped_unsupported += 1,
    }
    let lines = if reason == SkipReason::Binary {
        0
    } else {
        lines
    };
    skipped_record(&path, blob, size, lines, skip_state(reason))
}

/// The record a parse came back with (or a failed one, counted), and
/// whether it was parsed, and parsed from a previous version.
fn record_of(
    p: Pending,
    outcome: Option<ParseOutcome>,
    run: &mut IndexRun,
) -> (FileRecord, bool, bool) {
    match outcome {
        Some(ParseOutcome::Parsed {
            facts,
            bytes,
            reparsed,
            masked_secrets,
        }) => (
            parsed_record(&p.path, p.blob, p.size, &bytes, *facts, masked_secrets),
            true,
            reparsed,
        ),
        Some(ParseOutcome::Failed { reason }) => {
            run.failures.push((p.path.clone(), reason.clone()));
            (
                skipped_record(&p.path, p.blob, p.size, 0, FileState::Failed(reason)),
                false,
                false,
            )
        }
        None => {
            let reason = "parser pool went away before answering".to_string();
            run.failures.push((p.path.clone(), reason.clone()));
            (
                skipped_record(&p.path, p.blob, p.size, 0, FileState::Failed(reason)),
                false,
                false,
            )
        }
    }
}

/// What [`Run::prepare`] keeps between commits.
struct PrepareCtx {
    /// The commits of the run, oldest first.
    todo: Vec<CommitId>,
    secrets: SecretFilter,
    /// The `.gitignore` rules of the last fully listed commit.
    ignores: Option<IgnoreRules>,
    /// With more than one commit to index: which versions to keep for
    /// reparsing, and where.
    reuse: Option<Reuse>,
    /// Commits skipped and not yet journaled.
    skipped: Vec<sno_journal::event::CommitSkipped>,
}

/// Reparsing files from their previous version within one run: a file's
/// tree is kept only if a later commit of the run changes that file again.
struct Reuse {
    kept: Arc<KeptVersions>,
    /// For each path, the last commit (index into the run) that gives it a
    /// new blob.
    last_change: FxHashMap<String, usize>,
}

impl Reuse {
    /// Diffs the run's commits up front (tree diffs are cheap beside
    /// parsing) to learn which files change again. `None` with no budget.
    fn plan(repo: &GitRepo, todo: &[CommitId], budget: usize) -> Result<Option<Reuse>, GitError> {
        if budget == 0 {
            return Ok(None);
        }
        let mut last_change = FxHashMap::default();
        let mut prev = repo.commit(todo[0])?.tree;
        for (i, &c) in todo.iter().enumerate().skip(1) {
            let tree = repo.commit(c)?.tree;
            for change in repo.diff_trees(prev, tree)? {
                if change.blob.is_some() {
                    last_change.insert(change.path, i);
                }
            }
            prev = tree;
        }
        Ok(Some(Reuse {
            kept: Arc::new(KeptVersions::new(budget)),
            last_change,
        }))
    }

    /// What a job for `path` in the `at`-th commit needs to know.
    fn versions(&self, path: &str, at: usize) -> Versions {
        Versions {
            kept: Arc::clone(&self.kept),
            keep: self.last_change.get(path).is_some_and(|&last| last > at),
        }
    }
}

type ParseFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = (Pending, Option<ParseOutcome>)> + Send>>;

/// A commit whose changes are known and whose files are being parsed.
struct PreparedCommit {
    info: sno_index::git::CommitInfo,
    /// Paths that leave the index if the state has them (deleted, secret, ignored).
    leaving: Vec<String>,
    /// Records of files tracked but not parsed.
    skipped: BTreeMap<String, FileRecord>,
    inflight: FuturesUnordered<ParseFuture>,
}

enum Prepared {
    Ready(PreparedCommit),
    NeedsFull(sno_index::git::CommitInfo),
}

impl PreparedCommit {
    /// Waits for the parses and returns the new records (`None` = the path
    /// leaves the index) and how many files were parsed.
    async fn finish(
        mut self,
        state: &State,
        run: &mut IndexRun,
    ) -> (BTreeMap<String, Option<FileRecord>>, usize, usize) {
        let mut updates: BTreeMap<String, Option<FileRecord>> = BTreeMap::new();
        for path in self.leaving {
            if state.contains_key(&path) {
                updates.insert(path, None);
            }
        }
        for (path, rec) in self.skipped {
            updates.insert(path, Some(rec));
        }
        let (mut parsed, mut reparsed) = (0, 0);
        while let Some((p, outcome)) = self.inflight.next().await {
            let path = p.path.clone();
            let (rec, was_parsed, from_previous) = record_of(p, outcome, run);
            parsed += usize::from(was_parsed);
            reparsed += usize::from(from_previous);
            updates.insert(path, Some(rec));
        }
        run.files_parsed += parsed as u64;
        (updates, parsed, reparsed)
    }
}

/// Compares a full listing with the state: paths whose blob differs or that are
/// new, state paths that are gone, and state paths no longer admitted (a new
/// `.gitignore` or secret pattern), which the caller then removes.
fn reconcile(
    state: &State,
    listing: BTreeMap<String, BlobId>,
    admitted: impl Fn(&str) -> bool,
) -> Vec<PathChange> {
    let mut out: Vec<PathChange> = state
        .keys()
        .filter(|p| !listing.contains_key(*p))
        .map(|p| PathChange {
            path: p.clone(),
            blob: None,
        })
        .collect();
    for (path, blob) in listing {
        if state.get(&path).map(|r| r.blob) != Some(blob) || !admitted(&path) {
            out.push(PathChange {
                path,
                blob: Some(blob),
            });
        }
    }
    out
}

/// Whether the journal holds the lesson of revert commit `id` already: a
/// branch switched back, a reset or a rebase indexes a commit again, and
/// its lesson (with its review) is one lesson, proposed once.
fn lesson_known(journal: &Journal, id: &CommitId) -> bool {
    journal.memory().is_ok_and(|m| {
        m.lesson(&sno_journal::memory::MemoryId::for_revert(id))
            .is_some()
    })
}

/// The lesson a revert commit proposes: the files it changed (none when it
/// is the first commit indexed, whose deltas are the whole tree).
fn lesson_of_revert(
    info: &sno_index::git::CommitInfo,
    base: Option<CommitId>,
    branch: &Option<String>,
    reverted: Option<CommitId>,
    deltas: &[sno_journal::event::FileDelta],
) -> Event {
    use sno_journal::event::FileChange;
    use sno_journal::memory::{Binding, LessonProposed, MemoryId};
    let files = if base.is_some() {
        deltas
            .iter()
            .filter(|d| !matches!(d.change, FileChange::Reresolved))
            .map(|d| d.path.clone())
            .collect()
    } else {
        Vec::new()
    };
    Event::LessonProposed(LessonProposed {
        id: MemoryId::for_revert(&info.id),
        bound: Binding {
            branch: branch.clone(),
            commit: Some(info.id),
            session: "indexer".into(),
        },
        reverted,
        summary: info.summary.clone(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Views are judged too large by their files or by their names: a
    /// repository of few files holding many symbols (generated bindings)
    /// is read on demand too, not whole.
    #[test]
    fn few_files_of_many_names_are_too_large_to_keep() {
        assert!(!too_large(KEEP_FILES, KEEP_SYMBOLS as u64));
        assert!(too_large(KEEP_FILES + 1, 0));
        assert!(too_large(11_703, 796_000));
        assert!(!too_large(11_703, 200_000));
    }
}
