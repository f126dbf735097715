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
}
