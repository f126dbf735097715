//! Replay: rebuild the indexed state at any journaled point from events alone,
//! without reparsing a single file.

use crate::delta::{apply_all, State};
use crate::error::JournalError;
use crate::model::{CommitId, Seq};
use crate::store::{IndexedHead, Journal};

/// Errors of replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("commit {0} was never indexed")]
    UnknownCommit(String),
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The state after applying every event up to and including `to`.
pub fn replay_to_seq(
    journal: &Journal,
    to: Seq,
) -> Result<(State, Option<IndexedHead>), JournalError> {
    let mut state = State::new();
    let mut head = None;
    for (seq, env) in journal.events(Seq(0), Some(Seq(to.0 + 1)))? {
        apply_all(&mut state, env.event.deltas())?;
        if let Some((commit, branch)) = env.event.indexed_commit() {
            head = Some(IndexedHead {
                commit,
                branch: branch.map(str::to_string),
                seq,
            });
        }
    }
    Ok((state, head))
}

/// The state as it was when `commit` was indexed.
pub fn replay_to_commit(journal: &Journal, commit: &CommitId) -> Result<State, ReplayError> {
    let seq = journal
        .seq_of_commit(commit)?
        .ok_or_else(|| ReplayError::UnknownCommit(commit.to_hex()))?;
    Ok(replay_to_seq(journal, seq)?.0)
}

/// The state after every event: what the views must equal.
pub fn replay_all(journal: &Journal) -> Result<(State, Option<IndexedHead>), JournalError> {
    let len = journal.len()?;
    if len == 0 {
        return Ok((State::new(), None));
    }
    replay_to_seq(journal, Seq(len - 1))
}
