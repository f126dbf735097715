//! The redb store: the `events` table and the views that move with it.
//!
//! Every write is one redb write transaction: an event and the view changes it
//! implies commit together or not at all, which is what makes kill -9 safe.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::audit::{AuditEntry, AuditRecord};
use crate::delta::{self, State};
use crate::error::JournalError;
use crate::event::{
    decode_value, encode_value, CommitIndexed, Envelope, Event, RolledBack, FORMAT_VERSION,
};
use crate::lock::holder_pid;
use crate::memory::Memory;
use crate::model::{BlobId, CommitId, FileRecord, Seq};
use crate::record_parts::{self, RecordRows, EVENT_PARTS};
use crate::session::SessionRecord;
use crate::stored;

pub(crate) const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
pub(crate) use crate::view_rows::FILES;
use crate::view_rows::{FileRowsMut, FileRowsRead, FILE_PIECES};
pub(crate) const COMMITS: TableDefinition<&[u8], u64> = TableDefinition::new("commits");
pub(crate) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// Derived with the views, in the same transactions: (a symbol name's last
/// `.`-segment, the number of a path) for every symbol of the current
/// views, so a lookup by name reads only the files that define it (see
/// [`name_key`]).
pub(crate) const NAMES: TableDefinition<(&str, u32), ()> = TableDefinition::new("names_by_id");
/// Derived like [`NAMES`]: (what is referred to, the number of the path of
/// a file that refers to it), for every edge into a symbol (`S` + the id,
/// big-endian) and every unresolved call (`N` + the name called), so the
/// callers of a symbol are found by reading only the files that may call
/// it; and for every name a file's resolution depends on (`U` + the name,
/// [`crate::model::FileRefs::names_used`]) and every file with an import
/// (`I`), so a commit re-resolves the files it can affect without reading
/// the others.
pub(crate) const REFERRERS: TableDefinition<(&[u8], u32), ()> =
    TableDefinition::new("referrers_by_id");
/// A number for each path the views hold, which [`NAMES`] and
/// [`REFERRERS`] file it under: a path in each of their rows took most of
/// their 150 MB on 8.4M lines. A number is freed with its file's row.
pub(crate) const PATH_IDS: TableDefinition<&str, u32> = TableDefinition::new("path_ids");
/// The path of each number of [`PATH_IDS`].
pub(crate) const PATHS: TableDefinition<u32, &str> = TableDefinition::new("paths");
/// The derived tables of views layouts 5-7, keyed by path: dropped when
/// the views are rebuilt.
const NAMES_BY_PATH: TableDefinition<(&str, &str), ()> = TableDefinition::new("names");
const REFERRERS_BY_PATH: TableDefinition<(&[u8], &str), ()> = TableDefinition::new("referrers");
const AUDIT: TableDefinition<u64, &[u8]> = TableDefinition::new("audit");
/// Derived: embedding vectors by the hash of the text embedded.
const VECTORS: TableDefinition<u64, &[u8]> = TableDefinition::new("vectors");

/// Index of memory events: the sequence numbers of checkpoints, decisions
/// and lesson events, so memory is read without decoding every commit.
const MEMORY: TableDefinition<u64, ()> = TableDefinition::new("memory");
/// Commits of the history that could not be indexed: commit -> reason
/// (an index of `CommitSkipped` events, written with them).
const SKIPPED: TableDefinition<&[u8], &str> = TableDefinition::new("skipped");
/// MCP sessions by id (not replayed state, like audit).
const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");

const META_VECTORS_MODEL: &str = "vectors_model";
/// The journal length the stored vectors were brought up to.
const META_VECTORS_UPTO: &str = "vectors_upto";
/// Embedded symbols per file as of a journal position (the embedder's
/// counts, kept so a new process need not decode every view to count).
const META_EMBEDDED_COUNTS: &str = "embedded_counts";

/// A journal position and each file's count of embedded symbols as of it.
pub type EmbeddedCounts = (Seq, Vec<(String, usize)>);

pub(crate) const META_HEAD: &str = "head";
/// Set while the head is a rollback's: where git's HEAD was then.
const META_ROLLED_BACK_AT: &str = "rolled_back_at";
const META_LAST_INDEX_RUN: &str = "last_index_run";
/// The layout version of the `files` view rows ([`stored::VIEWS_VERSION`]).
const META_VIEWS_VERSION: &str = "views_version";

/// The state the views reflect: the last indexed commit.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct IndexedHead {
    pub commit: CommitId,
    pub branch: Option<String>,
    /// The journal position of the event that produced this state.
    pub seq: Seq,
}

/// A repository's journal and views.
pub struct Journal {
    pub(crate) db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("path", &self.path).finish()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Journal {
    /// Opens the database at `path`, creating it (and its tables) if missing,
    /// for a writer that reads little of what it writes (`sno init`, `sno
    /// watch`): its page cache is [`WRITER_PAGE_CACHE`].
    pub fn open_or_create(path: &Path) -> Result<Journal, JournalError> {
        Self::open_with_cache(path, WRITER_PAGE_CACHE)
    }

    fn open_with_cache(path: &Path, cache: usize) -> Result<Journal, JournalError> {
        if let Some(dir) = path.parent() {
            crate::lock::create_private_dir(dir)?;
        }
        let db = Database::builder()
            .set_cache_size(cache)
            .create(path)
            .map_err(|e| map_db_error(path, e))?;
        let j = Journal {
            db,
            path: path.to_path_buf(),
        };
        j.create_tables()?;
        j.migrate_views()?;
        j.drop_views_without_head()?;
        Ok(j)
    }

    /// Views written in another layout than this build's are rebuilt from
    /// the journal (they are derived; the journal is never touched). A new
    /// database just records the layout.
    fn migrate_views(&self) -> Result<(), JournalError> {
        let current = stored::VIEWS_VERSION.to_le_bytes();
        let (version, has_views) = {
            let r = self.db.begin_read()?;
            let v = r
                .open_table(META)?
                .get(META_VIEWS_VERSION)?
                .map(|v| v.value().to_vec());
            (
                v,
                !r.open_table(FILES)?.is_empty()? || !r.open_table(EVENTS)?.is_empty()?,
            )
        };
        if version.as_deref() == Some(current.as_slice()) {
            return Ok(());
        }
        if has_views {
            let (state, head) = crate::replay::replay_all(self)?;
            self.replace_views(&state, head.as_ref())?;
        }
        let tx = self.db.begin_write()?;
        tx.open_table(META)?
            .insert(META_VIEWS_VERSION, current.as_slice())?;
        tx.commit()?;
        Ok(())
    }

    /// Opens an existing database; a missing file is an error, not a new
    /// database. Its readers (queries, the daemon) get a page cache of
    /// [`READER_PAGE_CACHE`].
    pub fn open_existing(path: &Path) -> Result<Journal, JournalError> {
        if !path.exists() {
            return Err(JournalError::Missing(path.display().to_string()));
        }
        // An empty file is no database: opening it would make a new, empty
        // one in its place and answer from nothing.
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(JournalError::Corrupt {
                path: path.display().to_string(),
                detail: "the file is empty".into(),
            });
        }
        Self::open_with_cache(path, READER_PAGE_CACHE)
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn create_tables(&self) -> Result<(), JournalError> {
        let tx = self.db.begin_write()?;
        {
            tx.open_table(EVENTS)?;
            tx.open_table(EVENT_PARTS)?;
            tx.open_table(FILES)?;
            tx.open_table(FILE_PIECES)?;
            tx.open_table(NAMES)?;
            tx.open_table(REFERRERS)?;
            tx.open_table(PATH_IDS)?;
            tx.open_table(PATHS)?;
            tx.open_table(COMMITS)?;
            tx.open_table(META)?;
            tx.open_table(AUDIT)?;
            tx.open_table(VECTORS)?;
            tx.open_table(MEMORY)?;
            tx.open_table(SESSIONS)?;
            tx.open_table(SKIPPED)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Number of events in the journal.
    pub fn len(&self) -> Result<u64, JournalError> {
        let r = self.db.begin_read()?;
        Ok(r.open_table(EVENTS)?.len()?)
    }

    /// Number of distinct commits indexed.
    pub fn commits_indexed(&self) -> Result<u64, JournalError> {
        let r = self.db.begin_read()?;
        Ok(r.open_table(COMMITS)?.len()?)
    }

    /// Whether the journal holds no event.
    pub fn is_empty(&self) -> Result<bool, JournalError> {
        Ok(self.len()? == 0)
    }

    /// The state the views reflect, `None` before the first indexed commit.
    pub fn head(&self) -> Result<Option<IndexedHead>, JournalError> {
        read_head(&self.db.begin_read()?)
    }

    /// When the index is where a rollback left it: `Some(git_head)`, the
    /// commit git's HEAD pointed to then (itself optional). `None` when the
    /// head was set by indexing.
    pub fn rolled_back_at(&self) -> Result<Option<Option<CommitId>>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(META)?;
        t.get(META_ROLLED_BACK_AT)?
            .map(|v| decode_view(v.value()))
            .transpose()
    }

    /// The journal position of the event that indexed `commit`, if any.
    pub fn seq_of_commit(&self, commit: &CommitId) -> Result<Option<Seq>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(COMMITS)?;
        Ok(t.get(commit.0.as_slice())?.map(|v| Seq(v.value())))
    }

    /// Every file record of the current views.
    pub fn load_state(&self) -> Result<State, JournalError> {
        let r = self.db.begin_read()?;
        read_state(&r)
    }

    /// The head and the views it names, read in one transaction: a commit
    /// indexed between two separate reads would otherwise give a state
    /// labelled with the head before it.
    pub fn head_and_state(&self) -> Result<Option<(IndexedHead, State)>, JournalError> {
        let r = self.db.begin_read()?;
        match read_head(&r)? {
            None => Ok(None),
            Some(h) => Ok(Some((h, read_state(&r)?))),
        }
    }

    /// The indexed head and the records of the files that define a symbol
    /// whose name ends in `key`'s last `.`-segment (see [`name_key`]), and
    /// of the file `also`, read in one transaction: every symbol a name
    /// lookup can match exactly, without reading the rest of the views.
    pub fn head_and_files_naming(
        &self,
        key: &str,
        also: Option<&str>,
    ) -> Result<Option<(IndexedHead, State)>, JournalError> {
        let r = self.db.begin_read()?;
        let Some(head) = read_head(&r)? else {
            return Ok(None);
        };
        let files = FileRowsRead::read(&r)?;
        let mut state = State::new();
        for path in named_paths(&r.open_table(NAMES)?, &r.open_table(PATHS)?, name_key(key))? {
            add_file(&files, &path, &mut state)?;
        }
        if let Some(path) = also {
            add_file(&files, path, &mut state)?;
        }
        Ok(Some((head, state)))
    }

    /// The indexed head and every distinct name the names table keys
    /// ([`name_key`]), in order, read in one transaction: what a name
    /// lookup's inexact tiers choose from without reading any record.
    pub fn head_and_name_keys(&self) -> Result<Option<(IndexedHead, Vec<String>)>, JournalError> {
        let r = self.db.begin_read()?;
        let Some(head) = read_head(&r)? else {
            return Ok(None);
        };
        let mut keys: Vec<String> = Vec::new();
        for row in r.open_table(NAMES)?.iter()? {
            let (k, _) = row?;
            let (name, _) = k.value();
            if keys.last().map(String::as_str) != Some(name) {
                keys.push(name.to_string());
            }
        }
        Ok(Some((head, keys)))
    }

    /// The records of the files defining a symbol under any of `keys`
    /// (names as [`name_key`] keys them), read in one transaction if the
    /// head is still `seq`; `None` when it moved or more than `max_files`
    /// files would be read.
    pub fn files_naming_at_head(
        &self,
        seq: Seq,
        keys: &[&str],
        max_files: usize,
    ) -> Result<Option<State>, JournalError> {
        let Some(r) = self.reader_at_head(seq)? else {
            return Ok(None);
        };
        let names = r.open_table(NAMES)?;
        let numbered = r.open_table(PATHS)?;
        let mut paths = BTreeSet::new();
        for key in keys {
            paths.extend(named_paths(&names, &numbered, key)?);
            if paths.len() > max_files {
                return Ok(None);
            }
        }
        let files = FileRowsRead::read(&r)?;
        let mut state = State::new();
        for path in &paths {
            add_file(&files, path, &mut state)?;
        }
        Ok(Some(state))
    }

    /// The indexed head and one file's record, read in one transaction.
    pub fn head_and_file(&self, path: &str) -> Result<Option<(IndexedHead, State)>, JournalError> {
        let r = self.db.begin_read()?;
        let Some(head) = read_head(&r)? else {
            return Ok(None);
        };
        let mut state = State::new();
        add_file(&FileRowsRead::read(&r)?, path, &mut state)?;
        Ok(Some((head, state)))
    }

    /// The rows of the names and referrers tables, in order (checks).
    pub fn derived_rows(&self) -> Result<DerivedRows, JournalError> {
        let r = self.db.begin_read()?;
        let mut out = DerivedRows::default();
        let paths = r.open_table(PATHS)?;
        // A number with no path is shown as its number: a check then
        // names the row.
        let path = |id: u32| -> Result<String, JournalError> {
            Ok(match paths.get(id)? {
                Some(p) => p.value().to_string(),
                None => format!("#{id}"),
            })
        };
        for row in r.open_table(NAMES)?.iter()? {
            let (k, _) = row?;
            let (a, b) = k.value();
            out.names.push((a.to_string(), path(b)?));
        }
        for row in r.open_table(REFERRERS)?.iter()? {
            let (k, _) = row?;
            let (a, b) = k.value();
            out.referrers.push((a.to_vec(), path(b)?));
        }
        // In order by path, as the views imply them.
        out.names.sort();
        out.referrers.sort();
        let ids = r.open_table(PATH_IDS)?;
        for row in ids.iter()? {
            let (p, id) = row?;
            let p = p.value();
            match paths.get(id.value())? {
                Some(q) if q.value() == p => out.paths.push(p.to_string()),
                _ => out.paths.push(format!("{p} (#{} unmatched)", id.value())),
            }
        }
        for row in paths.iter()? {
            let (id, p) = row?;
            if ids.get(p.value())?.map(|i| i.value()) != Some(id.value()) {
                out.paths
                    .push(format!("#{} {} (unmatched)", id.value(), p.value()));
            }
        }
        Ok(out)
    }

    /// Adds to `state` the records of the files the referrers table lists
    /// under `key` ([`symbol_referred`], [`name_referred`]) that it lacks,
    /// if the head is still `seq`; `false` when it moved (the caller then
    /// reads the whole state instead).
    pub fn add_referrers(
        &self,
        key: &[u8],
        seq: Seq,
        state: &mut State,
    ) -> Result<bool, JournalError> {
        let r = self.db.begin_read()?;
        if read_head(&r)?.map(|h| h.seq) != Some(seq) {
            return Ok(false);
        }
        let files = FileRowsRead::read(&r)?;
        let paths = r.open_table(PATHS)?;
        for path in referrer_paths(&r.open_table(REFERRERS)?, &paths, key)? {
            add_file(&files, &path, state)?;
        }
        Ok(true)
    }

    /// The records of `paths` (those the views have), read in one
    /// transaction if the head is still `seq`; `None` when it moved.
    pub fn files_at_head(&self, seq: Seq, paths: &[&str]) -> Result<Option<State>, JournalError> {
        self.records_at_head(seq, paths, FileRowsRead::get)
    }

    /// As [`Journal::files_at_head`], each record without its graph: its
    /// `edges` and `refs` are left empty. They are most of a record's
    /// decoding, and what an answer quotes of a file is its symbols and text.
    pub fn files_without_graph_at_head(
        &self,
        seq: Seq,
        paths: &[&str],
    ) -> Result<Option<State>, JournalError> {
        self.records_at_head(seq, paths, FileRowsRead::get_without_graph)
    }

    /// The records of `paths`, each read by `get`, if the head is still
    /// `seq`.
    fn records_at_head(
        &self,
        seq: Seq,
        paths: &[&str],
        get: impl Fn(&FileRowsRead, &str) -> Result<Option<FileRecord>, JournalError>,
    ) -> Result<Option<State>, JournalError> {
        let Some(r) = self.reader_at_head(seq)? else {
            return Ok(None);
        };
        let files = FileRowsRead::read(&r)?;
        let mut state = State::new();
        for path in paths {
            if !state.contains_key(*path) {
                if let Some(rec) = get(&files, path)? {
                    state.insert(path.to_string(), rec);
                }
            }
        }
        Ok(Some(state))
    }

    /// A read transaction, if the head it sees is still `seq`.
    fn reader_at_head(&self, seq: Seq) -> Result<Option<redb::ReadTransaction>, JournalError> {
        let r = self.db.begin_read()?;
        Ok((read_head(&r)?.map(|h| h.seq) == Some(seq)).then_some(r))
    }

    /// Every path of the views and its blob id, in path order, if the
    /// head is still `seq` (`None` when it moved): no record is decoded.
    pub fn blobs_at_head(&self, seq: Seq) -> Result<Option<Vec<(String, BlobId)>>, JournalError> {
        let Some(r) = self.reader_at_head(seq)? else {
            return Ok(None);
        };
        Ok(Some(FileRowsRead::read(&r)?.blobs()?))
    }

    /// The paths the referrers table files under any of `keys`
    /// ([`name_used`], [`IMPORTER`], [`symbol_referred`],
    /// [`name_referred`]), if the head is still `seq` (`None` when it
    /// moved): no record is read.
    pub fn referrer_paths_at_head(
        &self,
        seq: Seq,
        keys: &[Vec<u8>],
    ) -> Result<Option<BTreeSet<String>>, JournalError> {
        let Some(r) = self.reader_at_head(seq)? else {
            return Ok(None);
        };
        let referrers = r.open_table(REFERRERS)?;
        let paths = r.open_table(PATHS)?;
        let mut out = BTreeSet::new();
        for key in keys {
            out.extend(referrer_paths(&referrers, &paths, key)?);
        }
        Ok(Some(out))
    }

    /// Every record of the views in path order, `batch` files at a time,
    /// from one read transaction (commits written meanwhile are not seen),
    /// if the head is still `seq`: `false` when it moved. Only a batch is
    /// held at a time; `each` returning `false` stops the reading.
    pub fn files_in_batches(
        &self,
        seq: Seq,
        batch: usize,
        mut each: impl FnMut(State) -> bool,
    ) -> Result<bool, JournalError> {
        let r = self.db.begin_read()?;
        if read_head(&r)?.map(|h| h.seq) != Some(seq) {
            return Ok(false);
        }
        let files = FileRowsRead::read(&r)?;
        let mut rows: Vec<(String, Vec<u8>)> = Vec::new();
        let mut stopped = false;
        let mut failed = None;
        files.for_each_row(|path, row| {
            rows.push((path.to_string(), row.into_owned()));
            if rows.len() >= batch.max(1) {
                match decode_rows(std::mem::take(&mut rows)) {
                    Ok(state) => stopped = !each(state),
                    Err(e) => failed = Some(e),
                }
            }
            !stopped && failed.is_none()
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if !stopped && !rows.is_empty() {
            each(decode_rows(rows)?);
        }
        Ok(true)
    }

    /// How many files the current views hold (no record is read).
    pub fn files_len(&self) -> Result<u64, JournalError> {
        let r = self.db.begin_read()?;
        FileRowsRead::read(&r)?.len()
    }

    /// How many rows the names table holds, one for each name a file of
    /// the current views defines (no record is read): at most the views'
    /// symbols, so a lower bound on them that costs nothing to read.
    pub fn name_rows_len(&self) -> Result<u64, JournalError> {
        let r = self.db.begin_read()?;
        Ok(r.open_table(NAMES)?.len()?)
    }

    /// One file's record in the current views.
    pub fn file(&self, path: &str) -> Result<Option<FileRecord>, JournalError> {
        let r = self.db.begin_read()?;
        FileRowsRead::read(&r)?.get(path)
    }

    /// Appends a `CommitIndexed` event and moves the views by its deltas, in
    /// one transaction. A delta that does not fit the views aborts the whole
    /// transaction: nothing is written.
    pub fn append_commit(&self, ev: CommitIndexed) -> Result<Seq, JournalError> {
        self.append_commit_with(ev, Vec::new(), Flush::Durable)
    }

    /// [`Journal::append_commit`], followed in the same transaction by memory
    /// events the commit gave rise to (a revert's lesson), durable now or
    /// with the next durable write (see [`Flush`]).
    pub fn append_commit_with(
        &self,
        ev: CommitIndexed,
        memory: Vec<Event>,
        flush: Flush,
    ) -> Result<Seq, JournalError> {
        self.append_moving_views(Event::CommitIndexed(ev), memory, flush)
    }

    /// Appends a `RolledBack` event and moves the views to its target state
    /// in one transaction; the head becomes `rb.to`.
    pub fn append_rollback(&self, rb: RolledBack) -> Result<Seq, JournalError> {
        self.append_moving_views(Event::RolledBack(rb), Vec::new(), Flush::Durable)
    }

    /// An event that moves the views (a commit's or a rollback's deltas) and
    /// the head, with its memory events, in one transaction.
    fn append_moving_views(
        &self,
        event: Event,
        memory: Vec<Event>,
        flush: Flush,
    ) -> Result<Seq, JournalError> {
        if matches!(event, Event::CommitIndexed(_))
            && event.deltas().len() >= BATCHED_FROM
            && self.head()?.is_none()
        {
            return self.append_first_index(event, memory, flush);
        }
        let (commit, branch) = event
            .indexed_commit()
            .map(|(c, b)| (c, b.map(str::to_string)))
            .expect("only events that move the views come here");
        let rolled_back_at = match &event {
            Event::RolledBack(r) => Some(r.git_head),
            _ => None,
        };
        let mut tx = self.db.begin_write()?;
        if flush == Flush::Deferred {
            // Refused only for multi-process databases, which this is not;
            // the commit is then simply durable.
            let _ = tx.set_durability(redb::Durability::None);
        }
        let seq;
        {
            let mut files = FileRowsMut::write(&tx)?;
            let mut olds = Vec::with_capacity(event.deltas().len());
            for d in event.deltas() {
                olds.push(files.get(d.path.as_str())?);
            }
            let (next, prev_hash) =
                next_event_position(&tx.open_table(EVENTS)?, &tx.open_table(EVENT_PARTS)?)?;
            let env = envelope(prev_hash, event);
            let env_deltas = env.event.deltas().len();
            // Each new view is made and inserted at once (beside the
            // record's encoding). A first index encodes the views of the
            // files it adds straight from the deltas, without first
            // copying them into records.
            let (record, views) = encode_beside(&env, |deltas| {
                let mut derived = DerivedMut::write(&tx)?;
                for (old, d) in olds.into_iter().zip(deltas) {
                    put_view(&mut files, &mut derived, old, d)?;
                }
                Ok::<(), JournalError>(())
            });
            views?;
            drop(files);
            seq = Seq(next);
            let head = IndexedHead {
                commit,
                branch,
                seq,
            };
            seal(
                &tx,
                RecordRows::Whole(&record),
                &head,
                rolled_back_at,
                memory,
            )?;
            crate::teardown::drop_large(env, env_deltas);
        }
        tx.commit()?;
        Ok(seq)
    }

    /// A first index of many files, written as
    /// [`Journal::append_first_index_streamed`] writes one: its views in
    /// transactions of [`VIEW_BATCH`] files while its record is encoded,
    /// then the record's parts, then the head and its memory events. A
    /// write transaction holds what it changed in memory until it commits:
    /// in one, a first index of millions of lines held every view page at
    /// once (about 2 GB on 9.3M lines). Views with no head are no state:
    /// until the last transaction commits, readers see no index, and a
    /// database opened after a crash between them drops such views
    /// ([`Journal::open_or_create`]).
    fn append_first_index(
        &self,
        event: Event,
        memory: Vec<Event>,
        flush: Flush,
    ) -> Result<Seq, JournalError> {
        let Event::CommitIndexed(mut commit) = event else {
            unreachable!("only a commit is a first index")
        };
        let deltas = std::mem::take(&mut commit.deltas);
        self.append_first_index_streamed(commit, deltas.len(), deltas.into_iter(), memory, flush)
    }

    /// A first index whose deltas are made while they are written:
    /// `deltas` yields `len` of them (the files of `commit`, whose own
    /// `deltas` are left empty), and each is written to the views, in
    /// transactions of [`VIEW_BATCH`] files, and handed to a second core
    /// that encodes it into the record, then dropped. A repository's
    /// deltas are never held together: the record's bytes and a bounded
    /// queue are. The record's parts go in transactions of their own, and
    /// the head and `memory` in a last
    /// transaction. The record holds the event [`Journal::append_commit_with`]
    /// would write for the same deltas, always as a zstd frame (from 1,024
    /// deltas on, the very same bytes). On a journal that has a head
    /// already, the deltas are gathered and appended as a commit.
    pub fn append_first_index_streamed(
        &self,
        commit: CommitIndexed,
        len: usize,
        deltas: impl Iterator<Item = crate::event::FileDelta> + Send,
        memory: Vec<Event>,
        flush: Flush,
    ) -> Result<Seq, JournalError> {
        if self.head()?.is_some() {
            let ev = CommitIndexed {
                deltas: deltas.collect(),
                ..commit
            };
            return self.append_commit_with(ev, memory, flush);
        }
        self.drop_views_without_head()?;
        let (next, prev_hash) = {
            let tx = self.db.begin_write()?;
            let at = next_event_position(&tx.open_table(EVENTS)?, &tx.open_table(EVENT_PARTS)?)?;
            tx.abort()?;
            at
        };
        // Deltas the encoder has not taken yet: enough to keep it busy.
        let (tx_deltas, rx_deltas) = std::sync::mpsc::sync_channel(256);
        // The record's parts as it makes them. Not bounded: it never
        // waits on the views, which take them after each delta, so
        // neither side can wait on the other.
        let (tx_parts, rx_parts) = std::sync::mpsc::channel();
        let mut ahead = record_parts::PartsAhead::new(next);
        let (len_or_error, written) = std::thread::scope(|scope| {
            let encoder = scope.spawn(|| {
                let streamed = stored::current::StreamedCommitRecord {
                    version: FORMAT_VERSION,
                    prev_hash,
                    written_ms: now_ms(),
                    commit: &commit,
                    len,
                    deltas: std::cell::RefCell::new(rx_deltas.into_iter()),
                };
                let sink = record_parts::PartSink::new(tx_parts);
                crate::event::framed_record_into(sink, |frame| {
                    bincode::serde::encode_into_std_write(&streamed, frame, stored::config())
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })?
                .close()
                .map_err(|e| e.to_string())
            });
            // Each delta and its view row are made beside the writer (the
            // deltas' resolution takes both cores a block at a time), so
            // the writer only stores rows. When the writer stops, the
            // queue closes and so does this.
            let (tx_views, rx_views) = std::sync::mpsc::sync_channel(32);
            scope.spawn(move || {
                for d in deltas {
                    let view = NewView::of(None, &d).map(|v| (d, v));
                    if tx_views.send(view).is_err() {
                        return;
                    }
                }
            });
            let written = (|| {
                let mut derived = DerivedInOrder::default();
                let mut views = rx_views.into_iter().peekable();
                while views.peek().is_some() {
                    let mut tx = self.db.begin_write()?;
                    let _ = tx.set_durability(redb::Durability::None);
                    {
                        let mut files = FileRowsMut::write(&tx)?;
                        let mut numbers = DerivedMut::write(&tx)?;
                        let mut parts = tx.open_table(EVENT_PARTS)?;
                        for made in views.by_ref().take(VIEW_BATCH) {
                            let (d, mut view) = made?;
                            let keys = std::mem::take(&mut view.keys);
                            let no_keys = Derived::default();
                            let id =
                                write_view(&mut files, &mut numbers, &d.path, &no_keys, &view)?;
                            derived.add(id, keys);
                            if tx_deltas.send(d).is_err() {
                                // The encoder stopped: its error says why.
                                return Ok(());
                            }
                            ahead.drain(&mut parts, &rx_parts)?;
                        }
                    }
                    tx.commit()?;
                }
                // The encoder's sequence ends here; the rest of the record
                // comes as it finishes.
                drop(tx_deltas);
                derived.write(&self.db)?;
                loop {
                    let mut tx = self.db.begin_write()?;
                    let _ = tx.set_durability(redb::Durability::None);
                    let done = ahead.wait(
                        &mut tx.open_table(EVENT_PARTS)?,
                        &rx_parts,
                        record_parts::PARTS_PER_TRANSACTION,
                    )?;
                    tx.commit()?;
                    if done {
                        return Ok::<(), JournalError>(());
                    }
                }
            })();
            // Whether or not all came, nothing more is taken.
            drop(rx_parts);
            (encoder.join().expect("encoding does not panic"), written)
        });
        written?;
        let len = len_or_error.map_err(|e| {
            JournalError::Storage(format!("a first index's record could not be made: {e}"))
        })?;
        let rows = ahead.finish(len);
        let mut tx = self.db.begin_write()?;
        if flush == Flush::Deferred {
            let _ = tx.set_durability(redb::Durability::None);
        }
        let head = IndexedHead {
            commit: commit.commit,
            branch: commit.branch.clone(),
            seq: Seq(next),
        };
        seal(&tx, rows, &head, None, memory)?;
        tx.commit()?;
        Ok(head.seq)
    }

    /// Views with no head are what a first index wrote before it failed or
    /// was killed: no state. They are dropped.
    fn drop_views_without_head(&self) -> Result<(), JournalError> {
        let (views, parts_from) = {
            let r = self.db.begin_read()?;
            if read_head(&r)?.is_some() {
                return Ok(());
            }
            // And the parts of a record whose event row never came.
            let events = r.open_table(EVENTS)?;
            let next = events.last()?.map_or(0, |(k, _)| k.value() + 1);
            let parts = r.open_table(EVENT_PARTS)?;
            let orphan_parts = parts.range((next, 0)..)?.next().is_some();
            (
                !r.open_table(FILES)?.is_empty()?,
                orphan_parts.then_some(next),
            )
        };
        if views {
            self.replace_views(&State::default(), None)?;
        }
        if let Some(next) = parts_from {
            let tx = self.db.begin_write()?;
            record_parts::drop_from(&mut tx.open_table(EVENT_PARTS)?, next)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Makes every deferred commit durable (an empty durable transaction).
    pub fn flush(&self) -> Result<(), JournalError> {
        self.db.begin_write()?.commit()?;
        Ok(())
    }

    /// Appends a memory event (checkpoint, decision, lesson analysis or
    /// review). An analysis or review of a lesson the journal does not hold
    /// is refused and nothing is written.
    pub fn append_memory(&self, ev: Event) -> Result<Seq, JournalError> {
        assert!(ev.is_memory(), "append_memory takes memory events");
        if let Some(o) = crate::memory::oversized(&ev) {
            return Err(JournalError::TooLarge {
                field: o.field,
                size: o.size,
                limit: o.limit,
            });
        }
        let tx = self.db.begin_write()?;
        let seq;
        {
            let lesson = match &ev {
                Event::LessonAnalysisSubmitted(a) => Some(&a.lesson),
                Event::LessonReviewed(r) => Some(&r.lesson),
                _ => None,
            };
            if let Some(id) = lesson {
                let memory = read_memory(
                    &tx.open_table(EVENTS)?,
                    &tx.open_table(EVENT_PARTS)?,
                    &tx.open_table(MEMORY)?,
                )?;
                if memory.lesson(id).is_none() {
                    return Err(JournalError::UnknownMemory {
                        id: id.0.clone(),
                        known: memory
                            .lessons
                            .iter()
                            .map(|l| l.proposed.id.0.clone())
                            .collect(),
                    });
                }
            }
            seq = append_event(&tx, ev)?;
            tx.open_table(MEMORY)?.insert(seq.0, ())?;
        }
        tx.commit()?;
        Ok(seq)
    }

    /// Checkpoints, decisions and lessons, folded from their events.
    pub fn memory(&self) -> Result<Memory, JournalError> {
        let r = self.db.begin_read()?;
        read_memory(
            &r.open_table(EVENTS)?,
            &r.open_table(EVENT_PARTS)?,
            &r.open_table(MEMORY)?,
        )
    }

    /// Stores (or replaces) a session record.
    pub fn put_session(&self, s: &SessionRecord) -> Result<(), JournalError> {
        let tx = self.db.begin_write()?;
        tx.open_table(SESSIONS)?
            .insert(s.id.as_str(), encode_value(s).as_slice())?;
        tx.commit()?;
        Ok(())
    }

    /// A session by id.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(SESSIONS)?;
        t.get(id)?.map(|v| decode_view(v.value())).transpose()
    }

    /// Ids of every stored session, oldest first (ULIDs sort by time).
    pub fn session_ids(&self) -> Result<Vec<String>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(SESSIONS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            out.push(row?.0.value().to_string());
        }
        Ok(out)
    }

    /// Appends an event that does not move the views.
    pub fn append(&self, ev: Event) -> Result<Seq, JournalError> {
        assert!(
            ev.deltas().is_empty(),
            "events with deltas go through append_commit"
        );
        let tx = self.db.begin_write()?;
        if let Event::CommitSkipped(s) = &ev {
            tx.open_table(SKIPPED)?
                .insert(s.commit.0.as_slice(), s.reason.as_str())?;
        }
        let seq = append_event(&tx, ev)?;
        tx.commit()?;
        Ok(seq)
    }

    /// Commits of the history that could not be indexed, with why.
    pub fn skipped_commits(&self) -> Result<Vec<(CommitId, String)>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(SKIPPED)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            if let Ok(id) = <[u8; 20]>::try_from(k.value()) {
                out.push((CommitId(id), v.value().to_string()));
            }
        }
        Ok(out)
    }

    /// Reads events with `from <= seq < to`, in order, as stored.
    pub fn events(&self, from: Seq, to: Option<Seq>) -> Result<Vec<(Seq, Envelope)>, JournalError> {
        self.decoded(from, to, Envelope::decode)
    }

    /// [`Journal::events`] with the deltas of commits and rollbacks cut to
    /// their outlines (path and change, see [`Envelope::decode_outline`]):
    /// a first index of millions of symbols is read a delta at a time.
    pub fn event_outlines(
        &self,
        from: Seq,
        to: Option<Seq>,
    ) -> Result<Vec<(Seq, Envelope)>, JournalError> {
        self.decoded(from, to, Envelope::decode_outline)
    }

    /// The records with `from <= seq < to`, each decoded by `decode`.
    fn decoded(
        &self,
        from: Seq,
        to: Option<Seq>,
        decode: impl Fn(&[u8]) -> Result<Envelope, crate::event::DecodeError>,
    ) -> Result<Vec<(Seq, Envelope)>, JournalError> {
        let mut out = Vec::new();
        self.for_each_raw(from, to, |seq, bytes| {
            let env =
                decode(bytes).map_err(|source| JournalError::Decode { seq: seq.0, source })?;
            out.push((seq, env));
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Journal::events`] with each commit's deltas of `path` whole and
    /// its others left out, other events' deltas as outlines (see
    /// [`Envelope::decode_keeping`]): one file's history, never a whole
    /// first index decoded.
    pub fn events_keeping(
        &self,
        from: Seq,
        to: Option<Seq>,
        path: &str,
    ) -> Result<Vec<(Seq, Envelope)>, JournalError> {
        self.decoded(from, to, |bytes| Envelope::decode_keeping(bytes, path))
    }

    /// Visits raw stored records with `from <= seq < to`, in order.
    pub fn for_each_raw(
        &self,
        from: Seq,
        to: Option<Seq>,
        mut f: impl FnMut(Seq, &[u8]) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(EVENTS)?;
        let parts = r.open_table(EVENT_PARTS)?;
        let range = match to {
            Some(to) => t.range(from.0..to.0)?,
            None => t.range(from.0..)?,
        };
        for row in range {
            let (k, v) = row?;
            let seq = k.value();
            f(Seq(seq), &record_parts::record(&parts, seq, v.value())?)?;
        }
        Ok(())
    }

    /// Replaces all views with `state` at `head`: the repair path, used only
    /// with a state replayed from the journal itself.
    pub fn replace_views(
        &self,
        state: &State,
        head: Option<&IndexedHead>,
    ) -> Result<(), JournalError> {
        let tx = self.db.begin_write()?;
        {
            tx.delete_table(FILES)?;
            tx.delete_table(FILE_PIECES)?;
            tx.delete_table(NAMES)?;
            tx.delete_table(REFERRERS)?;
            tx.delete_table(PATH_IDS)?;
            tx.delete_table(PATHS)?;
            tx.delete_table(NAMES_BY_PATH)?;
            tx.delete_table(REFERRERS_BY_PATH)?;
            let mut files = FileRowsMut::write(&tx)?;
            let mut derived = DerivedMut::write(&tx)?;
            for (path, rec) in state {
                let keys = Derived::of(&rec.symbols, &rec.edges, &rec.refs);
                let new = NewView {
                    row: Some((rec.blob, stored::encode_view_row(rec))),
                    keys,
                };
                write_view(&mut files, &mut derived, path, &Derived::default(), &new)?;
            }
            let mut meta = tx.open_table(META)?;
            match head {
                Some(h) => {
                    meta.insert(META_HEAD, encode_value(h).as_slice())?;
                }
                None => {
                    meta.remove(META_HEAD)?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Records an audit entry (a separate table: audit is not replayed state).
    pub fn record_audit(&self, rec: &AuditRecord) -> Result<u64, JournalError> {
        self.record_audit_batch(std::slice::from_ref(rec))
    }

    /// Records audit entries in one transaction; returns the last one's id.
    pub fn record_audit_batch(&self, recs: &[AuditRecord]) -> Result<u64, JournalError> {
        let tx = self.db.begin_write()?;
        let mut id = 0;
        {
            let mut t = tx.open_table(AUDIT)?;
            let first = t.last()?.map(|(k, _)| k.value() + 1).unwrap_or(0);
            for (next, rec) in (first..).zip(recs) {
                id = next;
                let bytes = encode_value(rec);
                t.insert(id, bytes.as_slice())?;
                // Status shows the last indexing run among any number of
                // tool calls: keep it where it is found in one read.
                if matches!(rec.entry, AuditEntry::IndexRun(_)) {
                    tx.open_table(META)?
                        .insert(META_LAST_INDEX_RUN, bytes.as_slice())?;
                }
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// The model the stored vectors were made with.
    pub fn vectors_model(&self) -> Result<Option<String>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(META)?;
        Ok(t.get(META_VECTORS_MODEL)?
            .map(|v| String::from_utf8_lossy(v.value()).into_owned()))
    }

    /// The journal length the stored vectors cover: every symbol of the
    /// state after those events has its vector (see [`Journal::put_vectors`]).
    pub fn vectors_upto(&self) -> Result<Option<Seq>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(META)?;
        Ok(t.get(META_VECTORS_UPTO)?.and_then(|v| {
            let b: [u8; 8] = v.value().try_into().ok()?;
            Some(Seq(u64::from_le_bytes(b)))
        }))
    }

    /// The per-file counts of embedded symbols [`Journal::put_vector_rows`]
    /// kept last, with the position they are of; `None` when there are
    /// none or they do not read back.
    pub fn embedded_counts(&self) -> Result<Option<EmbeddedCounts>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(META)?;
        let Some(v) = t.get(META_EMBEDDED_COUNTS)? else {
            return Ok(None);
        };
        let bytes = v.value();
        let Some((at, rest)) = bytes.split_first_chunk::<8>() else {
            return Ok(None);
        };
        let mut fields = rest.split(|b| *b == 0);
        let mut out = Vec::new();
        while let (Some(path), Some(n)) = (fields.next(), fields.next()) {
            let (Ok(path), Some(n)) = (
                std::str::from_utf8(path),
                std::str::from_utf8(n).ok().and_then(|n| n.parse().ok()),
            ) else {
                return Ok(None);
            };
            out.push((path.to_string(), n));
        }
        Ok(Some((Seq(u64::from_le_bytes(*at)), out)))
    }

    /// Stored vectors for text hashes (`None` where there is none).
    pub fn vectors(&self, hashes: &[u64]) -> Result<Vec<Option<Vec<f32>>>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(VECTORS)?;
        let mut out = Vec::with_capacity(hashes.len());
        for h in hashes {
            out.push(t.get(*h)?.map(|v| crate::int8::from_bytes(v.value())));
        }
        Ok(out)
    }

    /// Stores vectors made with `model`, as signed bytes
    /// ([`crate::int8`]). Vectors of another model are
    /// dropped first: they are derived data and would not be comparable.
    /// `covers`: the journal length up to which every symbol now has its
    /// vector, when the caller checked them all.
    pub fn put_vectors(
        &self,
        model: &str,
        vectors: &[(u64, Vec<f32>)],
        covers: Option<Seq>,
    ) -> Result<(), JournalError> {
        let mut rows = crate::int8::VectorRows::default();
        for (h, v) in vectors {
            rows.push(*h, v);
        }
        self.put_vector_rows(model, &rows, covers, None)
    }

    /// [`Journal::put_vectors`] of vectors already in their stored form.
    /// With `covers`, `counts` (how many symbols of each file are embedded
    /// there) are kept beside it, in the same transaction: the next process
    /// takes them instead of counting every view again.
    pub fn put_vector_rows(
        &self,
        model: &str,
        rows: &crate::int8::VectorRows,
        covers: Option<Seq>,
        counts: Option<&[(&str, usize)]>,
    ) -> Result<(), JournalError> {
        // In key order: into an empty table (a first embedding, a new
        // model) through a cursor at its end, which packs redb's leaves
        // full. Keyed by hashes in text order, they were left about half
        // full: 75 MB of 221 on 8.4M lines.
        let mut sorted: Vec<(u64, &[u8])> = rows.rows().collect();
        sorted.sort_unstable_by_key(|r| r.0);
        sorted.dedup_by_key(|r| r.0);
        // A transaction per run of rows: redb holds a transaction's pages
        // in memory until it commits, and one of every vector took 900 MB
        // more on 8.4M lines. The runs before the last are not made durable
        // on their own (the last one's commit makes them so), and the
        // position the vectors cover is written with the last: a crash in
        // between leaves vectors stored by the hash of their text, which
        // the next embedding takes, and no claim that they cover anything.
        let runs: Vec<&[(u64, &[u8])]> = if sorted.is_empty() {
            vec![&[]]
        } else {
            sorted.chunks(VECTOR_ROWS_PER_TRANSACTION).collect()
        };
        let last = runs.len() - 1;
        for (i, run) in runs.into_iter().enumerate() {
            let mut tx = self.db.begin_write()?;
            if i < last {
                tx.set_durability(redb::Durability::None)
                    .map_err(|e| JournalError::Storage(e.to_string()))?;
            }
            {
                let mut meta = tx.open_table(META)?;
                if i == 0 {
                    let same = meta
                        .get(META_VECTORS_MODEL)?
                        .is_some_and(|v| v.value() == model.as_bytes());
                    if !same {
                        tx.delete_table(VECTORS)?;
                        meta.insert(META_VECTORS_MODEL, model.as_bytes())?;
                        meta.remove(META_VECTORS_UPTO)?;
                        meta.remove(META_EMBEDDED_COUNTS)?;
                    }
                }
                if let (Some(seq), true) = (covers, i == last) {
                    meta.insert(META_VECTORS_UPTO, seq.0.to_le_bytes().as_slice())?;
                    // Counts of another position would only be ignored.
                    match counts {
                        Some(counts) => {
                            meta.insert(META_EMBEDDED_COUNTS, counts_bytes(seq, counts).as_slice())?
                        }
                        None => meta.remove(META_EMBEDDED_COUNTS)?,
                    };
                }
                let mut t = tx.open_table(VECTORS)?;
                // Past every key stored (an empty table, or the runs before
                // this one): appended at the end.
                let after_all = match (t.last()?, run.first()) {
                    (None, _) => true,
                    (Some((k, _)), Some((first, _))) => k.value() < *first,
                    (Some(_), None) => false,
                };
                if after_all {
                    let mut end = t.upper_bound_mut(Bound::<u64>::Unbounded)?;
                    for (h, bytes) in run {
                        end.insert_before(*h, *bytes)?;
                    }
                    end.close()?;
                } else {
                    for (h, bytes) in run {
                        t.insert(*h, *bytes)?;
                    }
                }
            }
            tx.commit()?;
        }
        Ok(())
    }

    /// The last indexing run's audit record.
    pub fn last_index_run(&self) -> Result<Option<AuditRecord>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(META)?;
        t.get(META_LAST_INDEX_RUN)?
            .map(|v| decode_view(v.value()))
            .transpose()
    }

    /// The last `n` audit entries, oldest first.
    pub fn audit_tail(&self, n: usize) -> Result<Vec<AuditRecord>, JournalError> {
        let r = self.db.begin_read()?;
        let t = r.open_table(AUDIT)?;
        let mut out = Vec::new();
        for row in t.iter()?.rev().take(n) {
            let (k, v) = row?;
            out.push(
                decode_value(v.value()).map_err(|source| JournalError::Decode {
                    seq: k.value(),
                    source,
                })?,
            );
        }
        out.reverse();
        Ok(out)
    }
}

fn read_memory(
    events: &impl ReadableTable<u64, &'static [u8]>,
    parts: &impl ReadableTable<(u64, u32), &'static [u8]>,
    index: &impl ReadableTable<u64, ()>,
) -> Result<Memory, JournalError> {
    let mut stored = Vec::new();
    for row in index.iter()? {
        let seq = row?.0.value();
        if let Some(v) = events.get(seq)? {
            let env = Envelope::decode(&record_parts::record(parts, seq, v.value())?)
                .map_err(|source| JournalError::Decode { seq, source })?;
            stored.push((Seq(seq), env));
        }
    }
    Ok(Memory::fold(
        stored.iter().map(|(s, e)| (*s, e.written_ms, &e.event)),
    ))
}

/// Decodes a `files` view row.
/// Decodes a view row (not an event: it has no sequence number).
fn decode_view<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, JournalError> {
    decode_value(bytes).map_err(|source| JournalError::Decode {
        seq: u64::MAX,
        source,
    })
}

/// When a commit reaches the disk.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flush {
    /// Synced before the call returns.
    Durable,
    /// Visible to this process at once, synced with the next durable write
    /// ([`Journal::flush`] or a durable commit). A crash before that ends the
    /// journal at the last durable commit, intact; a rerun indexes the rest
    /// again. Indexing history syncs once a second instead of once a commit.
    Deferred,
}

/// The sequence number of the next record and the hash it chains to.
/// Ends the transaction of an event that moves the views: its record as
/// event `head.seq`, the commit's position, the head (and where a rollback
/// left git's HEAD), then the memory events the commit gave rise to.
fn seal(
    tx: &redb::WriteTransaction,
    record: RecordRows<'_>,
    head: &IndexedHead,
    rolled_back_at: Option<Option<CommitId>>,
    memory: Vec<Event>,
) -> Result<(), JournalError> {
    record_parts::put_rows(
        &mut tx.open_table(EVENTS)?,
        &mut tx.open_table(EVENT_PARTS)?,
        head.seq.0,
        record,
    )?;
    tx.open_table(COMMITS)?
        .insert(head.commit.0.as_slice(), head.seq.0)?;
    let mut meta = tx.open_table(META)?;
    meta.insert(META_HEAD, encode_value(head).as_slice())?;
    match rolled_back_at {
        Some(at) => meta.insert(META_ROLLED_BACK_AT, encode_value(&at).as_slice())?,
        None => meta.remove(META_ROLLED_BACK_AT)?,
    };
    drop(meta);
    for m in memory {
        assert!(m.is_memory(), "only memory events follow a commit");
        let mseq = append_event(tx, m)?;
        tx.open_table(MEMORY)?.insert(mseq.0, ())?;
    }
    Ok(())
}

/// `env`'s record, made on a second core while `write` moves the views by
/// its deltas, so no more than one view's bytes are held beside it.
fn encode_beside<T>(
    env: &Envelope,
    write: impl FnOnce(&[crate::event::FileDelta]) -> T,
) -> (Vec<u8>, T) {
    std::thread::scope(|scope| {
        let record = scope.spawn(|| env.encode());
        let written = write(env.event.deltas());
        (record.join().expect("encoding does not panic"), written)
    })
}

/// A record of `event`, written now, after the record hashed `prev_hash`.
fn envelope(prev_hash: u64, event: Event) -> Envelope {
    Envelope {
        version: FORMAT_VERSION,
        prev_hash,
        written_ms: now_ms(),
        event,
    }
}

fn next_event_position(
    events: &redb::Table<u64, &[u8]>,
    parts: &redb::Table<(u64, u32), &[u8]>,
) -> Result<(u64, u64), JournalError> {
    Ok(match events.last()? {
        Some((k, v)) => {
            let seq = k.value();
            (seq + 1, record_parts::record_hash(parts, seq, v.value())?)
        }
        None => (0, 0),
    })
}

fn append_event(tx: &redb::WriteTransaction, event: Event) -> Result<Seq, JournalError> {
    let mut events = tx.open_table(EVENTS)?;
    let mut parts = tx.open_table(EVENT_PARTS)?;
    let (seq, prev_hash) = next_event_position(&events, &parts)?;
    let env = envelope(prev_hash, event);
    record_parts::put(&mut events, &mut parts, seq, &env.encode())?;
    Ok(Seq(seq))
}

fn map_db_error(path: &Path, e: redb::DatabaseError) -> JournalError {
    match e {
        redb::DatabaseError::DatabaseAlreadyOpen => {
            let lock = path.with_file_name("lock");
            // The lock file names the last writer. When that is this very
            // process (it took the writer lock, then found the database open
            // elsewhere), the one holding the database is not known.
            let pid = holder_pid(&lock);
            let pid = if pid == std::process::id().to_string() {
                "unknown".to_string()
            } else {
                pid
            };
            JournalError::Locked { pid }
        }
        // redb reports a file that is not a database as invalid data.
        redb::DatabaseError::Storage(redb::StorageError::Io(io))
            if io.kind() != std::io::ErrorKind::InvalidData =>
        {
            JournalError::Io(io)
        }
        other => JournalError::Corrupt {
            path: path.display().to_string(),
            detail: other.to_string(),
        },
    }
}

#[cfg(test)]
impl Journal {
    /// Writes tables directly, as another build of sno would have.
    pub(crate) fn write_raw(&self, f: impl FnOnce(&redb::WriteTransaction)) {
        let tx = self.db.begin_write().unwrap();
        f(&tx);
        tx.commit().unwrap();
    }

    /// Removes a names-table row behind the journal's back (tests of
    /// `verify`).
    pub(crate) fn tamper_remove_name_row(&self, name: &str, path: &str) {
        let tx = self.db.begin_write().unwrap();
        let id = tx
            .open_table(PATH_IDS)
            .unwrap()
            .get(path)
            .unwrap()
            .unwrap()
            .value();
        assert!(tx
            .open_table(NAMES)
            .unwrap()
            .remove((name, id))
            .unwrap()
            .is_some());
        tx.commit().unwrap();
    }

    /// Rows of the parts of records stored in parts (tests).
    pub(crate) fn event_parts(&self) -> u64 {
        let r = self.db.begin_read().unwrap();
        r.open_table(EVENT_PARTS).unwrap().len().unwrap()
    }

    /// Removes a view row behind the journal's back (tests of `verify`).
    pub(crate) fn tamper_remove_file_row(&self, path: &str) {
        let tx = self.db.begin_write().unwrap();
        FileRowsMut::write(&tx).unwrap().remove(path).unwrap();
        tx.commit().unwrap();
    }

    /// Rewrites a stored event in place (tests of the chain check).
    pub(crate) fn tamper_rewrite_event(&self, seq: u64, ev: CommitIndexed) {
        let tx = self.db.begin_write().unwrap();
        {
            let mut t = tx.open_table(EVENTS).unwrap();
            let old = Envelope::decode(t.get(seq).unwrap().unwrap().value()).unwrap();
            let env = Envelope {
                event: Event::CommitIndexed(ev),
                ..old
            };
            t.insert(seq, env.encode().as_slice()).unwrap();
        }
        tx.commit().unwrap();
    }
}

#[cfg(test)]
mod keys_of_files_tests {
    use super::KeysOfFiles;

    /// Keys come in file order, shared and in no order of their own; the
    /// rows come by key (bytewise, as redb orders them), then file.
    #[test]
    fn rows_come_by_key_then_file_each_once() {
        let mut k = KeysOfFiles::<str>::default();
        let files: [(u32, &[&str]); 4] = [
            (0, &["parse", "Zeta", "load"]),
            (1, &["load", "éclair"]),
            (2, &["alpha", "parse"]),
            (3, &["load"]),
        ];
        let mut expected = Vec::new();
        for (file, keys) in files {
            for key in keys {
                k.add((*key).into(), file);
                expected.push((key.to_string(), file));
            }
        }
        expected.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
        let rows = k.into_rows();
        let got: Vec<(String, u32)> = rows.iter().map(|(k, f)| (k.to_string(), f)).collect();
        assert_eq!(got, expected);
        assert_eq!(got[0], ("Zeta".to_string(), 0));
        assert_eq!(got.last().unwrap(), &("éclair".to_string(), 1));
        assert_eq!(rows.keys.len(), 5, "each distinct key held once");
    }
}

#[cfg(test)]
mod vector_tests {
    use super::*;

    #[test]
    fn vectors_round_trip_and_a_new_model_drops_the_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        assert_eq!(j.vectors_model().unwrap(), None);
        j.put_vectors(
            "m1",
            &[(1, vec![0.5, -1.0]), (2, vec![2.0, 0.0])],
            Some(Seq(4)),
        )
        .unwrap();
        let got = j.vectors(&[2, 3, 1]).unwrap();
        assert_eq!(got[..2], [Some(vec![2.0, 0.0]), None]);
        let third = got[2].as_ref().expect("stored");
        assert!(
            (third[0] - 0.5).abs() < 1.0 / 254.0 && third[1] == -1.0,
            "{third:?}"
        );
        assert_eq!(j.vectors_upto().unwrap(), Some(Seq(4)));
        j.put_vectors("m1", &[(3, vec![1.0, 1.0])], None).unwrap();
        assert_eq!(j.vectors_upto().unwrap(), Some(Seq(4)), "kept");
        assert!(
            j.vectors(&[1]).unwrap()[0].is_some(),
            "same model keeps what it has"
        );
        j.put_vectors("m2", &[(3, vec![9.0, 9.0])], None).unwrap();
        assert_eq!(
            j.vectors_upto().unwrap(),
            None,
            "another model covers nothing yet"
        );
        assert_eq!(j.vectors_model().unwrap().as_deref(), Some("m2"));
        assert_eq!(
            j.vectors(&[1, 3]).unwrap(),
            vec![None, Some(vec![9.0, 9.0])]
        );
    }

    #[test]
    fn vectors_written_in_several_transactions_all_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        // Odd hashes first, as a model's first embedding, in more rows than
        // one transaction takes; then even ones between them, with a new
        // position, under the same model.
        let n = VECTOR_ROWS_PER_TRANSACTION as u64 * 2 + 5;
        let vector = |h: u64| vec![(h % 7) as f32 + 1.0, -((h % 3) as f32) - 1.0];
        let mut rows = crate::int8::VectorRows::default();
        for h in (0..n).rev().map(|k| 2 * k + 1) {
            rows.push(h, &vector(h));
        }
        j.put_vector_rows("m1", &rows, Some(Seq(4)), Some(&[("a.py", 1)]))
            .unwrap();
        assert_eq!(j.vectors_upto().unwrap(), Some(Seq(4)));
        assert_eq!(j.embedded_counts().unwrap().map(|c| c.0), Some(Seq(4)));
        let mut evens = crate::int8::VectorRows::default();
        for h in (0..n).map(|k| 2 * k) {
            evens.push(h, &vector(h));
        }
        j.put_vector_rows("m1", &evens, Some(Seq(9)), None).unwrap();
        assert_eq!(j.vectors_upto().unwrap(), Some(Seq(9)));
        let all: Vec<u64> = (0..2 * n).collect();
        let got = j.vectors(&all).unwrap();
        for (h, v) in all.iter().zip(&got) {
            let v = v.as_ref().unwrap_or_else(|| panic!("vector {h} missing"));
            let want = vector(*h);
            let scale = want[0].abs().max(want[1].abs()) / 127.0;
            assert!(
                v.iter().zip(&want).all(|(a, b)| (a - b).abs() <= scale),
                "vector {h}: {v:?} for {want:?}"
            );
        }
        assert_eq!(j.vectors(&[2 * n]).unwrap(), vec![None]);
        // A new model's runs drop every vector of the old one.
        let mut one = crate::int8::VectorRows::default();
        one.push(3, &[1.0, 0.0]);
        j.put_vector_rows("m2", &one, Some(Seq(10)), None).unwrap();
        assert_eq!(j.vectors(&[1, 2, 3]).unwrap()[..2], [None, None]);
    }

    #[test]
    fn embedded_counts_come_back_as_kept_and_go_with_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        assert_eq!(j.embedded_counts().unwrap(), None);
        let mut rows = crate::int8::VectorRows::default();
        rows.push(1, &[0.5, -1.0]);
        let counts = [("src/a b.py", 3usize), ("src/é.rs", 0), ("x", 12)];
        j.put_vector_rows("m1", &rows, Some(Seq(4)), Some(&counts))
            .unwrap();
        let (at, got) = j.embedded_counts().unwrap().expect("kept");
        assert_eq!(at, Seq(4));
        let want: Vec<(String, usize)> = counts.iter().map(|(p, n)| (p.to_string(), *n)).collect();
        assert_eq!(got, want);
        j.put_vector_rows("m1", &rows, Some(Seq(5)), Some(&[]))
            .unwrap();
        assert_eq!(j.embedded_counts().unwrap(), Some((Seq(5), Vec::new())));
        // Vectors brought to a position without counts keep none of an
        // older one's.
        j.put_vector_rows("m1", &rows, Some(Seq(6)), None).unwrap();
        assert_eq!(j.embedded_counts().unwrap(), None);
        j.put_vector_rows("m1", &rows, Some(Seq(7)), Some(&counts[..1]))
            .unwrap();
        assert_eq!(j.embedded_counts().unwrap().unwrap().1.len(), 1);
        // Counts of another model's vectors say nothing of the new one's.
        j.put_vectors("m2", &[(3, vec![9.0, 9.0])], None).unwrap();
        assert_eq!(j.embedded_counts().unwrap(), None);
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::memory::{Binding, DecisionLogged, LessonAnalysisSubmitted, MemoryId};

    #[test]
    fn memory_events_are_indexed_and_an_analysis_of_an_unknown_lesson_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let d = DecisionLogged {
            id: MemoryId::generate("dec"),
            bound: Binding::default(),
            title: "Use redb".into(),
            rationale: "one file".into(),
            files: vec!["a.rs".into()],
        };
        j.append_memory(Event::DecisionLogged(d.clone())).unwrap();
        let before = j.len().unwrap();
        let err = j
            .append_memory(Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
                lesson: MemoryId("lsn_nope".into()),
                bound: Binding::default(),
                analysis: "x".into(),
                rule: "y".into(),
            }))
            .unwrap_err();
        assert!(matches!(err, JournalError::UnknownMemory { ref id, .. } if id == "lsn_nope"));
        assert_eq!(j.len().unwrap(), before, "a refused event is not written");
        let m = j.memory().unwrap();
        assert_eq!(m.decisions.len(), 1);
        assert_eq!(m.decisions[0].logged, d);
        assert_eq!(m.touching("a.rs").0.len(), 1);
    }
}

/// The key a name is filed under in the names table: its last `.`-segment.
/// A symbol's qualified name ends with its name, so every query a symbol
/// matches exactly (its name, its qualified name, a `.`-suffix of it) has
/// the same key as the symbol.
pub fn name_key(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// The key under which the referrers table files edges into `id`.
pub fn symbol_referred(id: crate::model::SymbolId) -> Vec<u8> {
    let mut k = Vec::with_capacity(9);
    k.push(b'S');
    k.extend_from_slice(&id.0.to_be_bytes());
    k
}

/// The key under which the referrers table files the files whose
/// resolution depends on `name` ([`crate::model::FileRefs::names_used`]).
pub fn name_used(name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 1);
    k.push(b'U');
    k.extend_from_slice(name.as_bytes());
    k
}

/// The key under which the referrers table files every file with an import.
pub const IMPORTER: &[u8] = b"I";

/// The key under which the referrers table files unresolved calls of `name`.
pub fn name_referred(name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 1);
    k.push(b'N');
    k.extend_from_slice(name.as_bytes());
    k
}

/// What redb may hold of the file in memory (pages read, and pages written
/// and not yet flushed) for a writer (`sno init`, `sno watch`): a first
/// index of millions of lines filled redb's default of 1 GiB on top of
/// everything it held (9.3M lines: 3.50 GB peak with it, 3.08 GB with 128
/// MiB). A first index writes its pages once and reads few back, and the
/// cache filled while the symbol index was still held: on 8.3M lines the
/// peak was 1,111-1,269 MB with 32 MiB (one run of eight 1,779) against
/// 1,306-1,479 with 128, in the same time; 41 commits of history over 600k
/// lines took 3.2-3.3 s with either.
const WRITER_PAGE_CACHE: usize = 32 << 20;

/// Vectors written per transaction by [`Journal::put_vector_rows`]: about
/// 17 MB of rows with 256 dimensions.
const VECTOR_ROWS_PER_TRANSACTION: usize = 1 << 16;

/// redb's page cache for readers (queries, the daemon). Answers read file
/// records from it: warm search on 600k lines took 4.7-5.4 ms at the
/// median with 128 MiB, 3.8-4.4 ms with redb's default of 1 GiB and
/// 3.3-3.5 ms with this, which also keeps a daemon's RSS off the default's
/// gigabyte.
const READER_PAGE_CACHE: usize = 256 << 20;

/// A commit of this many file deltas or more, on a journal with no head,
/// is written as a first index ([`Journal::append_first_index`]).
const BATCHED_FROM: usize = 4096;

/// Files whose views one transaction of a first index writes.
const VIEW_BATCH: usize = 2048;

/// Moves one file's view (and its rows in the derived tables) from `old`
/// by `d`.
pub(crate) fn put_view(
    files: &mut FileRowsMut<'_>,
    derived: &mut DerivedMut<'_>,
    old: Option<FileRecord>,
    d: &crate::event::FileDelta,
) -> Result<(), JournalError> {
    let old_keys = old
        .as_ref()
        .map(|o| Derived::of(&o.symbols, &o.edges, &o.refs))
        .unwrap_or_default();
    let new = NewView::of(old, d)?;
    write_view(files, derived, &d.path, &old_keys, &new).map(|_| ())
}

/// The derived tables of a write transaction.
pub(crate) struct DerivedMut<'t> {
    names: redb::Table<'t, (&'static str, u32), ()>,
    referrers: redb::Table<'t, (&'static [u8], u32), ()>,
    path_ids: redb::Table<'t, &'static str, u32>,
    paths: redb::Table<'t, u32, &'static str>,
}

impl<'t> DerivedMut<'t> {
    /// The derived tables `tx` writes.
    pub(crate) fn write(tx: &'t redb::WriteTransaction) -> Result<DerivedMut<'t>, JournalError> {
        Ok(DerivedMut {
            names: tx.open_table(NAMES)?,
            referrers: tx.open_table(REFERRERS)?,
            path_ids: tx.open_table(PATH_IDS)?,
            paths: tx.open_table(PATHS)?,
        })
    }

    /// `path`'s number, given it if it has none: one past the highest.
    fn number(&mut self, path: &str) -> Result<u32, JournalError> {
        if let Some(id) = self.path_ids.get(path)? {
            return Ok(id.value());
        }
        let id = match self.paths.last()? {
            Some((k, _)) => k.value().checked_add(1).ok_or_else(|| {
                JournalError::Storage("more path numbers than a u32 holds".into())
            })?,
            None => 0,
        };
        self.path_ids.insert(path, id)?;
        self.paths.insert(id, path)?;
        Ok(id)
    }

    /// Frees `path`'s number `id`: its file left the views.
    fn free(&mut self, path: &str, id: u32) -> Result<(), JournalError> {
        self.path_ids.remove(path)?;
        self.paths.remove(id)?;
        Ok(())
    }
}

/// A file's row of the views after a delta, and what it puts in the
/// derived tables: made apart from the write, so a first index makes the
/// next files' rows while the writer stores the last ones.
pub(crate) struct NewView {
    /// The file's blob id and row; `None` when it is gone.
    row: Option<(BlobId, Vec<u8>)>,
    keys: Derived,
}

impl NewView {
    /// `d` applied to the file's row `old`.
    pub(crate) fn of(
        old: Option<FileRecord>,
        d: &crate::event::FileDelta,
    ) -> Result<NewView, JournalError> {
        let added = old.is_none().then(|| delta::encode_added_view(d)).flatten();
        Ok(match (added, &d.change) {
            (Some(bytes), crate::event::FileChange::Added(meta)) => NewView {
                row: Some((meta.blob, stored::view_row(&bytes))),
                keys: Derived::of(&d.symbols_added, &d.edges_added, &meta.refs),
            },
            _ => match delta::apply(old, d)? {
                Some(new) => NewView {
                    row: Some((new.blob, stored::encode_view_row(&new))),
                    keys: Derived::of(&new.symbols, &new.edges, &new.refs),
                },
                None => NewView {
                    row: None,
                    keys: Derived::default(),
                },
            },
        })
    }
}

/// Stores `new` as `path`'s row, and moves the derived tables from
/// `old_keys` to its keys; returns the path's number.
fn write_view(
    files: &mut FileRowsMut<'_>,
    derived: &mut DerivedMut<'_>,
    path: &str,
    old_keys: &Derived,
    new: &NewView,
) -> Result<u32, JournalError> {
    let id = derived.number(path)?;
    let new_keys = &new.keys;
    for k in old_keys.names.difference(&new_keys.names) {
        derived.names.remove((k.as_str(), id))?;
    }
    for k in new_keys.names.difference(&old_keys.names) {
        derived.names.insert((k.as_str(), id), ())?;
    }
    for k in old_keys.referred.difference(&new_keys.referred) {
        derived.referrers.remove((k.as_slice(), id))?;
    }
    for k in new_keys.referred.difference(&old_keys.referred) {
        derived.referrers.insert((k.as_slice(), id), ())?;
    }
    match &new.row {
        Some((blob, bytes)) => files.put(path, *blob, bytes)?,
        None => {
            files.remove(path)?;
            derived.free(path, id)?;
        }
    }
    Ok(id)
}

/// What one file puts in the derived tables.
#[derive(Default)]
struct Derived {
    names: BTreeSet<String>,
    referred: BTreeSet<Vec<u8>>,
}

impl Derived {
    fn of(
        symbols: &[crate::model::Symbol],
        edges: &[crate::model::Edge],
        refs: &crate::model::FileRefs,
    ) -> Derived {
        use crate::model::{EdgeKind, EdgeTarget};
        let used = refs.names_used().into_iter().map(name_used);
        let importer = (!refs.imports.is_empty()).then(|| IMPORTER.to_vec());
        Derived {
            names: symbols
                .iter()
                .map(|s| name_key(&s.name).to_string())
                .collect(),
            referred: edges
                .iter()
                .filter_map(|e| match &e.to {
                    EdgeTarget::Symbol(t) if e.kind != EdgeKind::Contains => {
                        Some(symbol_referred(*t))
                    }
                    EdgeTarget::Unresolved(_) if e.kind == EdgeKind::Calls => {
                        Some(name_referred(&e.name))
                    }
                    _ => None,
                })
                .chain(used)
                .chain(importer)
                .collect(),
        }
    }
}

/// The derived tables' rows of a first index, gathered while its views
/// are written and stored after them in key order, through a cursor at the
/// end of each (empty) table: redb then packs its leaves full. Inserted
/// file by file, in file order, the keys fell all over both tables and
/// left their leaves about half full (80 MB of 260 on 8.4M lines).
#[derive(Default)]
struct DerivedInOrder {
    /// Files added.
    files: usize,
    names: KeysOfFiles<str>,
    referred: KeysOfFiles<[u8]>,
}

/// Rows of the derived tables one transaction of [`DerivedInOrder`]
/// appends: redb holds a transaction's pages in memory until it commits.
pub(crate) const DERIVED_BATCH: usize = if cfg!(test) { 1 << 12 } else { 1 << 18 };

impl DerivedInOrder {
    /// `keys`, the derived keys of the file numbered `id`.
    fn add(&mut self, id: u32, keys: Derived) {
        self.files += 1;
        for name in keys.names {
            self.names.add(name.into_boxed_str(), id);
        }
        for referred in keys.referred {
            self.referred.add(referred.into_boxed_slice(), id);
        }
    }

    /// Appends every row, in key order, to the empty derived tables.
    fn write(self, db: &Database) -> Result<(), JournalError> {
        let DerivedInOrder {
            files,
            names,
            referred,
        } = self;
        let names = names.into_rows();
        append_in_batches(db, NAMES, names.iter(), |&(name, file)| (name, file))?;
        crate::teardown::drop_large(names, files);
        let referred = referred.into_rows();
        append_in_batches(db, REFERRERS, referred.iter(), |&(key, file)| (key, file))?;
        // Hundreds of thousands of keys: freed off the writer's path.
        crate::teardown::drop_large(referred, files);
        Ok(())
    }
}

/// Keys and the numbers of the files that have them, held compactly: each
/// distinct key once, and a (key, file) pair as one number. On 8.4M lines
/// a map from each key to its files' list took 190 MB more at the peak of
/// `sno init`.
struct KeysOfFiles<K: ?Sized> {
    ids: std::collections::HashMap<Box<K>, u32>,
    /// The key's number in the high half, the file's in the low one.
    pairs: Vec<u64>,
}

impl<K: ?Sized> Default for KeysOfFiles<K> {
    fn default() -> Self {
        KeysOfFiles {
            ids: Default::default(),
            pairs: Vec::new(),
        }
    }
}

impl<K: ?Sized + Ord + std::hash::Hash> KeysOfFiles<K> {
    /// Notes that file `file` has `key`.
    fn add(&mut self, key: Box<K>, file: u32) {
        let next = self.ids.len() as u32;
        let id = *self.ids.entry(key).or_insert(next);
        self.pairs.push(u64::from(id) << 32 | u64::from(file));
    }

    /// Every (key, file) pair, by key, then file.
    fn into_rows(self) -> KeyRows<K> {
        let KeysOfFiles { ids, mut pairs } = self;
        let mut keys: Vec<(Box<K>, u32)> = ids.into_iter().collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0u32; keys.len()];
        for (r, (_, id)) in keys.iter().enumerate() {
            rank[*id as usize] = r as u32;
        }
        for p in &mut pairs {
            *p = u64::from(rank[(*p >> 32) as usize]) << 32 | (*p & u64::from(u32::MAX));
        }
        pairs.sort_unstable();
        KeyRows {
            keys: keys.into_iter().map(|(k, _)| k).collect(),
            pairs,
        }
    }
}

/// The rows of [`KeysOfFiles::into_rows`]: keys in order, and (key's
/// rank, file) pairs in order.
struct KeyRows<K: ?Sized> {
    keys: Vec<Box<K>>,
    pairs: Vec<u64>,
}

impl<K: ?Sized> KeyRows<K> {
    fn iter(&self) -> impl Iterator<Item = (&K, u32)> + '_ {
        self.pairs
            .iter()
            .map(|p| (&*self.keys[(p >> 32) as usize], *p as u32))
    }
}

/// Appends `rows`, which come in key order after every key `table` holds,
/// [`DERIVED_BATCH`] to a transaction.
fn append_in_batches<R, K: redb::Key + 'static>(
    db: &Database,
    table: TableDefinition<K, ()>,
    rows: impl Iterator<Item = R>,
    key: impl for<'r> Fn(&'r R) -> K::SelfType<'r>,
) -> Result<(), JournalError> {
    let mut rows = rows.peekable();
    while rows.peek().is_some() {
        let mut tx = db.begin_write()?;
        let _ = tx.set_durability(redb::Durability::None);
        {
            let mut t = tx.open_table(table)?;
            let mut end = t.upper_bound_mut(Bound::<K::SelfType<'_>>::Unbounded)?;
            for row in rows.by_ref().take(DERIVED_BATCH) {
                end.insert_before(key(&row), ())?;
            }
            end.close()?;
        }
        tx.commit()?;
    }
    Ok(())
}

/// The rows of the names and referrers tables the views `state` imply, in
/// order, as [`Journal::derived_rows`] reads them.
pub fn expected_derived_rows(state: &State) -> DerivedRows {
    let mut rows = DerivedRows::default();
    for (path, rec) in state {
        let d = Derived::of(&rec.symbols, &rec.edges, &rec.refs);
        rows.names
            .extend(d.names.into_iter().map(|k| (k, path.clone())));
        rows.referrers
            .extend(d.referred.into_iter().map(|k| (k, path.clone())));
    }
    rows.names.sort();
    rows.referrers.sort();
    rows.paths = state.keys().cloned().collect();
    rows
}

/// The rows of the tables derived with the views.
#[derive(Default, PartialEq, Eq, Debug)]
pub struct DerivedRows {
    pub names: Vec<(String, String)>,
    pub referrers: Vec<(Vec<u8>, String)>,
    /// The numbered paths ([`PATH_IDS`]), in order: a path whose number's
    /// own path ([`PATHS`]) differs, or a number whose path has none, is
    /// shown marked.
    pub paths: Vec<String>,
}

/// The indexed head, as `r` sees it.
fn read_head(r: &redb::ReadTransaction) -> Result<Option<IndexedHead>, JournalError> {
    r.open_table(META)?
        .get(META_HEAD)?
        .map(|v| decode_view(v.value()))
        .transpose()
}

/// Adds `path`'s record to `state`, unless it is there or not in the views.
/// The paths of the files the names table lists under `key`, in order.
fn named_paths(
    names: &redb::ReadOnlyTable<(&str, u32), ()>,
    paths: &redb::ReadOnlyTable<u32, &str>,
    key: &str,
) -> Result<Vec<String>, JournalError> {
    let mut out = Vec::new();
    for row in names.range((key, 0)..=(key, u32::MAX))? {
        out.push(path_numbered(paths, row?.0.value().1)?);
    }
    out.sort();
    Ok(out)
}

/// The paths of the files the referrers table lists under `key`, in order.
fn referrer_paths(
    referrers: &redb::ReadOnlyTable<(&[u8], u32), ()>,
    paths: &redb::ReadOnlyTable<u32, &str>,
    key: &[u8],
) -> Result<Vec<String>, JournalError> {
    let mut out = Vec::new();
    for row in referrers.range((key, 0)..=(key, u32::MAX))? {
        out.push(path_numbered(paths, row?.0.value().1)?);
    }
    out.sort();
    Ok(out)
}

/// The path numbered `id` ([`PATH_IDS`]).
fn path_numbered(paths: &redb::ReadOnlyTable<u32, &str>, id: u32) -> Result<String, JournalError> {
    match paths.get(id)? {
        Some(p) => Ok(p.value().to_string()),
        None => Err(JournalError::Storage(format!(
            "a derived row names path number {id}, which no path has (`sno doctor --repair` rebuilds the views)"
        ))),
    }
}

fn add_file(files: &FileRowsRead, path: &str, state: &mut State) -> Result<(), JournalError> {
    if !state.contains_key(path) {
        if let Some(rec) = files.get(path)? {
            state.insert(path.to_string(), rec);
        }
    }
    Ok(())
}

fn read_state(r: &redb::ReadTransaction) -> Result<State, JournalError> {
    let mut state = State::new();
    FileRowsRead::read(r)?.for_each(|path, rec| {
        state.insert(path, rec);
        true
    })?;
    Ok(state)
}

#[cfg(test)]
mod open_tests {
    use super::*;

    #[test]
    fn a_database_held_elsewhere_names_the_writer_but_never_the_asker() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sno.redb");
        let held = Journal::open_or_create(&db).unwrap();
        // Another process's pid in the lock file: that one is named.
        std::fs::write(dir.path().join("lock"), "4242").unwrap();
        match Journal::open_existing(&db) {
            Err(JournalError::Locked { pid }) => assert_eq!(pid, "4242"),
            other => panic!("expected Locked, got {other:?}"),
        }
        // This process took the writer lock and then found the database
        // open elsewhere: naming itself would send the user looking at the
        // wrong process.
        let _lock = crate::lock::WriterLock::acquire(dir.path()).unwrap();
        match Journal::open_existing(&db) {
            Err(JournalError::Locked { pid }) => assert_eq!(pid, "unknown"),
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(held);
    }

    /// Batches of the views, decoded on every core, are the views: in
    /// path order, each at most the batch's size, a long row in pieces
    /// among them; a reader that stops gets no more; a moved head reads
    /// nothing.
    #[test]
    fn the_views_read_in_batches_are_the_state_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        // Names that do not compress: the row is longer than a page.
        let long: Vec<String> = crate::test_support::scattered_names("g", 2000);
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let mut recs: Vec<FileRecord> = (0..150u8)
            .map(|i| crate::test_support::record(&format!("src/m{i:03}.py"), i, &["load", "save"]))
            .collect();
        recs.push(crate::test_support::record("src/m075_big.py", 200, &long));
        for r in &mut recs {
            r.canonicalize();
        }
        let deltas = recs
            .iter()
            .map(|r| crate::delta::diff(&r.path, None, Some(r)).unwrap())
            .collect();
        let seq = j
            .append_commit(crate::test_support::commit(1, deltas))
            .unwrap();
        let state = j.load_state().unwrap();
        assert_eq!(state.len(), 151);
        {
            let r = j.db.begin_read().unwrap();
            let pieces = r.open_table(FILE_PIECES).unwrap();
            assert!(pieces.len().unwrap() > 1, "the long row is in pieces");
        }
        let mut read = State::new();
        let mut sizes = Vec::new();
        let mut last: Option<String> = None;
        assert!(j
            .files_in_batches(seq, 64, |batch| {
                sizes.push(batch.len());
                for (path, rec) in batch {
                    assert!(last.as_ref().is_none_or(|l| *l < path), "path order");
                    last = Some(path.clone());
                    read.insert(path, rec);
                }
                true
            })
            .unwrap());
        assert_eq!(sizes, vec![64, 64, 23]);
        assert!(read == state, "every record, decoded as a whole read does");
        let mut batches = 0;
        assert!(j
            .files_in_batches(seq, 64, |_| {
                batches += 1;
                false
            })
            .unwrap());
        assert_eq!(batches, 1, "a reader that stops gets no more");
        assert!(!j.files_in_batches(Seq(seq.0 + 1), 64, |_| true).unwrap());
    }

    /// The derived tables file paths by number: a file's number goes with
    /// its row (a deleted file's is freed and given again), the rows read
    /// back as paths equal those the views imply, and a lookup by name or
    /// referrer gives paths.
    #[test]
    fn derived_rows_number_their_paths_and_free_a_deleted_files_number() {
        use crate::test_support::{commit, record};
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let recs: Vec<FileRecord> = ["a.py", "b.py", "c.py"]
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut r = record(p, i as u8 + 1, &["load", &format!("only_{i}")]);
                r.canonicalize();
                r
            })
            .collect();
        let deltas = recs
            .iter()
            .map(|r| crate::delta::diff(&r.path, None, Some(r)).unwrap())
            .collect();
        j.append_commit(commit(1, deltas)).unwrap();
        // One row for each name a file defines: `load` in three files, an
        // `only_i` in each.
        assert_eq!(j.name_rows_len().unwrap(), 6);
        let numbers = |j: &Journal| -> Vec<(String, u32)> {
            let r = j.db.begin_read().unwrap();
            let t = r.open_table(PATH_IDS).unwrap();
            t.iter()
                .unwrap()
                .map(|row| {
                    let (p, id) = row.unwrap();
                    (p.value().to_string(), id.value())
                })
                .collect()
        };
        assert_eq!(
            numbers(&j),
            [("a.py".into(), 0), ("b.py".into(), 1), ("c.py".into(), 2)]
        );
        // c.py goes (its number is the highest: freed, then given to d.py).
        let mut d = record("d.py", 9, &["load"]);
        d.canonicalize();
        let deltas = vec![
            crate::delta::diff("c.py", Some(&recs[2]), None).unwrap(),
            crate::delta::diff("d.py", None, Some(&d)).unwrap(),
        ];
        j.append_commit(commit(2, deltas)).unwrap();
        // c.py's two rows go, d.py's one comes.
        assert_eq!(j.name_rows_len().unwrap(), 5);
        assert_eq!(
            numbers(&j),
            [("a.py".into(), 0), ("b.py".into(), 1), ("d.py".into(), 2)]
        );
        let state = j.load_state().unwrap();
        assert_eq!(j.derived_rows().unwrap(), expected_derived_rows(&state));
        let head = j.head().unwrap().unwrap();
        let named = j
            .files_naming_at_head(head.seq, &["load"], usize::MAX)
            .unwrap()
            .unwrap();
        assert_eq!(named.keys().collect::<Vec<_>>(), ["a.py", "b.py", "d.py"]);
        assert!(j
            .files_naming_at_head(head.seq, &["only_2"], usize::MAX)
            .unwrap()
            .unwrap()
            .is_empty());
        assert!(crate::verify::verify(&j).problems.is_empty());
    }

    /// Views of layout 6 (each row a bare lz4 block, however long) are
    /// rebuilt in today's layout when the database is opened: the rows
    /// read back, long ones in pieces, and the journal verifies.
    #[test]
    fn views_of_the_layout_before_pieces_are_rebuilt_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        let names: Vec<String> = crate::test_support::scattered_names("g", 2000);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut recs = vec![
            crate::test_support::record("src/big.py", 1, &names),
            crate::test_support::record("src/small.py", 2, &["load"]),
        ];
        for r in &mut recs {
            r.canonicalize();
        }
        let state: State = recs.iter().map(|r| (r.path.clone(), r.clone())).collect();
        {
            let j = Journal::open_or_create(&path).unwrap();
            let deltas = recs
                .iter()
                .map(|r| crate::delta::diff(&r.path, None, Some(r)).unwrap())
                .collect();
            j.append_commit(crate::test_support::commit(1, deltas))
                .unwrap();
            // What a build of layout 6 left: bare rows, no pieces.
            let tx = j.db.begin_write().unwrap();
            {
                tx.delete_table(FILES).unwrap();
                tx.delete_table(FILE_PIECES).unwrap();
                let mut files = tx.open_table(FILES).unwrap();
                for r in &recs {
                    let row = stored::encode_view_row(r);
                    files.insert(r.path.as_str(), row.as_slice()).unwrap();
                }
                tx.open_table(META)
                    .unwrap()
                    .insert(META_VIEWS_VERSION, 6u16.to_le_bytes().as_slice())
                    .unwrap();
            }
            tx.commit().unwrap();
            assert!(j.load_state().is_err(), "bare rows are not today's layout");
        }
        let j = Journal::open_or_create(&path).unwrap();
        assert!(j.load_state().unwrap() == state);
        assert!(j.file("src/big.py").unwrap() == Some(recs[0].clone()));
        let r = j.db.begin_read().unwrap();
        assert!(r.open_table(FILE_PIECES).unwrap().len().unwrap() > 1);
        drop(r);
        let report = crate::verify::verify(&j);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }
}

/// Counts of embedded symbols as stored: the position, then each path, a
/// NUL, the count, a NUL (a path holds no NUL).
fn counts_bytes(at: Seq, counts: &[(&str, usize)]) -> Vec<u8> {
    let mut bytes = at.0.to_le_bytes().to_vec();
    for (path, n) in counts {
        bytes.extend_from_slice(path.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(n.to_string().as_bytes());
        bytes.push(0);
    }
    bytes
}

/// The records of encoded view rows, decoded on every core: decoding is
/// most of a whole read of the views (2 s of one core for 18.8k files on
/// 8.4M lines, which a commit's resolution index and the embedder's
/// counts each paid).
fn decode_rows(rows: Vec<(String, Vec<u8>)>) -> Result<State, JournalError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(rows.len().div_ceil(32))
        .max(1);
    let chunk = rows.len().div_ceil(workers).max(1);
    let decode = |part: &[(String, Vec<u8>)]| -> Result<Vec<FileRecord>, JournalError> {
        part.iter()
            .map(|(_, row)| crate::view_rows::decode_row(row))
            .collect()
    };
    let decoded: Vec<Result<Vec<FileRecord>, JournalError>> = std::thread::scope(|scope| {
        let mut parts = rows.chunks(chunk);
        let first = parts.next();
        let others: Vec<_> = parts
            .map(|part| scope.spawn(move || decode(part)))
            .collect();
        let mut out = vec![first.map_or(Ok(Vec::new()), decode)];
        out.extend(others.into_iter().map(|worker| {
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }));
        out
    });
    let mut state = State::new();
    let mut paths = rows.into_iter().map(|(path, _)| path);
    for records in decoded {
        for rec in records? {
            if let Some(path) = paths.next() {
                state.insert(path, rec);
            }
        }
    }
    Ok(state)
}
