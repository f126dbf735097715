//! `sno status` as data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The indexed state the report describes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AsOf {
    pub commit: String,
    pub branch: Option<String>,
    /// Journal position of the event that produced this state.
    pub seq: u64,
}

/// Counts for one language.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LanguageCounts {
    pub files: u64,
    pub lines: u64,
    pub symbols: u64,
    pub edges: u64,
    pub files_with_errors: u64,
}

/// Resolved and unresolved edges of one kind.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct EdgeCounts {
    pub resolved: u64,
    pub unresolved: u64,
    /// Of the resolved ones, those found by a name alone (labelled
    /// heuristic in answers).
    #[serde(default)]
    pub heuristic: u64,
}

/// Secret values found inside indexed files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SecretCounts {
    /// Whether values are masked (`[index] mask_secrets`).
    pub masking: bool,
    /// Values masked in everything sno stores, serves and embeds.
    pub masked: u64,
    /// Files holding at least one.
    pub files: u64,
}

/// Files by how they fared.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileCounts {
    pub total: u64,
    pub parsed: u64,
    pub parsed_with_errors: u64,
    pub failed: u64,
    /// Skip reason -> count.
    pub skipped: BTreeMap<String, u64>,
}

/// A file the parser failed on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Failure {
    pub path: String,
    pub reason: String,
}

/// A commit of the history that could not be indexed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedCommit {
    pub commit: String,
    pub reason: String,
}

/// What the last indexing run did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LastRun {
    pub outcome: String,
    pub commits_indexed: u32,
    pub files_parsed: u64,
    pub seconds: f64,
    pub excluded_secrets: u64,
    pub skipped_ignored: u64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StatusReport {
    pub repository: String,
    /// `None` before anything was indexed.
    pub as_of: Option<AsOf>,
    pub journal_events: u64,
    pub commits_indexed: u64,
    pub files: FileCounts,
    pub languages: BTreeMap<String, LanguageCounts>,
    pub symbols_total: u64,
    pub symbols_by_kind: BTreeMap<String, u64>,
    pub edges_total: u64,
    pub edges_by_kind: BTreeMap<String, EdgeCounts>,
    pub diagnostics_total: u64,
    /// Secret values inside files, masked in answers.
    #[serde(default)]
    pub secrets: SecretCounts,
    pub failures: Vec<Failure>,
    /// Commits of the history whose objects could not be read: indexing
    /// went on without them.
    #[serde(default)]
    pub skipped_commits: Vec<SkippedCommit>,
    pub last_run: Option<LastRun>,
    /// Digest of the views: equal digests mean equal indexed states.
    pub views_digest: String,
    /// Git's HEAD, when it is not the indexed commit: answers are of the
    /// indexed commit until it is indexed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_head: Option<String>,
    /// The index is where `sno rollback` left it (and stays there while
    /// git's HEAD does).
    #[serde(default)]
    pub rolled_back: bool,
}

impl StatusReport {
    /// A line saying that git's HEAD is elsewhere, and what that means.
    pub fn git_head_note(&self) -> Option<String> {
        let head = self.git_head.as_deref()?;
        let head = &head[..12.min(head.len())];
        Some(if self.rolled_back {
            format!("git HEAD    {head}: the index stays rolled back until HEAD moves")
        } else {
            format!("git HEAD    {head}, not indexed yet: answers are of the commit above until `sno init` (or a running `sno watch` or `sno serve`) indexes it")
        })
    }

    /// The skipped files' counts, as `, skipped: 2 binary, 1 too_large`.
    pub fn skipped_summary(&self) -> String {
        if self.files.skipped.is_empty() {
            return String::new();
        }
        let counts: Vec<String> = self
            .files
            .skipped
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        format!(", skipped: {}", counts.join(", "))
    }
}

/// One thing `sno doctor` found wrong.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Problem {
    /// Stable code, e.g. `SNO-J-CHAIN`.
    pub code: String,
    pub message: String,
    /// What to do about it.
    pub repair: String,
}

/// What verification found.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VerifyReport {
    pub events: u64,
    pub files_in_views: u64,
    pub views_digest: u64,
    pub problems: Vec<Problem>,
}

/// `sno doctor`, `verify`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DoctorAnswer {
    pub ok: bool,
    pub repaired: bool,
    pub report: VerifyReport,
    pub skipped_commits: Vec<SkippedCommit>,
}

/// `sno replay --to`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReplayAnswer {
    pub commit: String,
    pub seq: u64,
    pub files: u64,
    pub symbols: u64,
    pub edges: u64,
    pub views_digest: String,
    pub languages: BTreeMap<String, LanguageCounts>,
}

/// `sno rollback --to`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RollbackAnswer {
    /// `false` when the index was already there.
    pub rolled_back: bool,
    pub from: Option<String>,
    pub to: String,
    pub branch: Option<String>,
    /// The journal position of the `RolledBack` event.
    pub seq: Option<u64>,
    pub files_changed: usize,
}

/// One event of `sno journal log`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct JournalEntry {
    pub seq: u64,
    pub kind: String,
    pub written_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The event's text (a commit's summary, a decision's title, ...), cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_deltas: Option<usize>,
}

/// `sno journal log`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct JournalLog {
    /// Events in the journal.
    pub total: u64,
    /// The last ones, oldest first.
    pub entries: Vec<JournalEntry>,
}

/// Progress of an index run, for the user (a CLI renders it on stderr; a
/// daemon running a forwarded `sno init` sends it on the socket).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Progress {
    /// The plan: how many commits will be indexed.
    Planned {
        commits: usize,
        /// The indexed commit the run continues from.
        resumed_from: Option<String>,
    },
    /// One commit is journaled.
    CommitDone {
        index: usize,
        total: usize,
        commit: String,
        files_parsed: usize,
        deltas: usize,
    },
    /// Files of a first index parsed so far (sent every few hundred).
    FilesParsed { done: usize, total: usize },
    /// Files whose symbols are embedded so far, by a refresh that reads
    /// every file (sent a batch of files at a time).
    FilesEmbedded { done: usize, total: usize },
    /// The indexed head's search index (lexical index, vectors, document
    /// map) is being made, for a state of `files` files (a large one: a
    /// small head's is made by its first search): after it, the first
    /// search answers at once.
    SearchIndex { files: u64 },
}

/// What an index run (`sno init`, a followed commit) did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IndexSummary {
    pub repository: String,
    pub up_to_date: bool,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub shallow: bool,
    pub commits_indexed: u32,
    pub files_parsed: u64,
    pub files_reparsed: u64,
    pub failures: Vec<Failure>,
    /// File versions seen over the run's commits, not the files of the
    /// indexed state (which `status` counts).
    pub skipped_scope: String,
    pub skipped: SkipCounts,
    pub excluded_secrets: u64,
    pub journal_events: u64,
    pub semantic: Option<SemanticSummary>,
    pub seconds: f64,
    /// Set when history was asked of a journal that already existed and
    /// starts at this commit, which has parents: the journal is
    /// append-only, so older commits were not added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_starts_at: Option<String>,
}

impl IndexSummary {
    /// Why `--history` added nothing older, when it could not.
    pub fn history_note(&self) -> Option<String> {
        let start = self.history_starts_at.as_deref()?;
        Some(format!(
            "the journal starts at {} and is append-only, so --history adds no older commits to it; to journal them, move .sno/ aside and run `sno init --history all` (its lessons, decisions and checkpoints stay in the old one)",
            &start[..12.min(start.len())]
        ))
    }
}

/// Files skipped by an index run, by why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkipCounts {
    pub binary: u64,
    pub too_large: u64,
    pub unsupported_language: u64,
    pub ignored: u64,
}

/// What the embedding refresh after an index run did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SemanticSummary {
    pub enabled: bool,
    pub off_reason: Option<String>,
    pub symbols: usize,
    pub embedded: usize,
    pub reused: usize,
}

/// One line of `sno watch --json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WatchEvent {
    /// A run indexed where HEAD moved.
    Indexed(IndexSummary),
    /// A run failed (said once while the failure lasts).
    Error {
        commit: Option<String>,
        branch: Option<String>,
        error: crate::ErrorContract,
    },
    /// Not a failure: the daemon of `sno serve` holds the database and
    /// follows HEAD itself; the watch resumes when it leaves.
    Paused {
        commit: Option<String>,
        reason: String,
    },
}

/// Why `sno watch` pauses while a `sno serve` daemon runs.
pub const WATCH_PAUSED: &str = "the sno daemon started by `sno serve` holds the database and follows the repository itself; sno watch resumes when it leaves";
