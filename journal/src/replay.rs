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
    #[error("the views disagree with the journal")]
    ViewsDrifted,
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The state after applying every event up to and including `to`.
pub fn replay_to_seq(
    journal: &Journal,
    to: Seq,
) -> Result<(State, Option<IndexedHead>), JournalError> {
    replay_observing(journal, to, |_, _, _| {})
}

/// [`replay_to_seq`], showing `seen` the state and head after each event:
/// one pass for a caller that needs a state on the way as well.
pub(crate) fn replay_observing(
    journal: &Journal,
    to: Seq,
    mut seen: impl FnMut(Seq, &State, Option<&IndexedHead>),
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
        seen(seq, &state, head.as_ref());
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

/// The commits in the history of the state after `events` (in journal
/// order): each `CommitIndexed` event, except those a rollback or a branch
/// move back to an earlier commit left behind. Going back to commit C
/// resumes from C's history as it was when C was indexed (also forward, by
/// a rollback to a later commit), and the index of C that follows a branch
/// move to it (a diff from the commit left) is not counted again. Returns
/// positions in `events`.
pub fn lineage(events: &[(Seq, crate::event::Envelope)]) -> Vec<usize> {
    use crate::event::Event;
    use std::collections::HashMap;
    // A tree of indexed commits: (event position, parent node).
    let mut nodes: Vec<(usize, Option<usize>)> = Vec::new();
    let mut latest: HashMap<CommitId, usize> = HashMap::new();
    let mut current: Option<usize> = None;
    // A branch move takes effect with the index of its commit that follows
    // it: a run that stopped in between moved nothing.
    let mut moving_to: Option<CommitId> = None;
    for (i, (_, env)) in events.iter().enumerate() {
        match &env.event {
            Event::CommitIndexed(c) => {
                if moving_to.take() == Some(c.commit) {
                    if let Some(&n) = latest.get(&c.commit) {
                        current = Some(n);
                        continue;
                    }
                }
                // Under its first parent when that was indexed (a checkout
                // of another branch's commit), else after the current one.
                let parent = c
                    .parents
                    .first()
                    .and_then(|p| latest.get(p).copied())
                    .or(current);
                nodes.push((i, parent));
                current = Some(nodes.len() - 1);
                latest.insert(c.commit, nodes.len() - 1);
            }
            Event::RolledBack(r) => {
                moving_to = None;
                if let Some(&n) = latest.get(&r.to) {
                    current = Some(n);
                }
            }
            Event::BranchMoved(b) => moving_to = Some(b.to),
            _ => {}
        }
    }
    let mut out = Vec::new();
    while let Some(n) = current {
        out.push(nodes[n].0);
        current = nodes[n].1;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{BranchMoved, CommitIndexed, Envelope, Event, RolledBack};

    fn at(events: Vec<Event>) -> Vec<(Seq, Envelope)> {
        events
            .into_iter()
            .enumerate()
            .map(|(i, event)| {
                let env = Envelope {
                    version: crate::event::FORMAT_VERSION,
                    prev_hash: 0,
                    written_ms: 0,
                    event,
                };
                (Seq(i as u64), env)
            })
            .collect()
    }

    fn ci(n: u8) -> Event {
        Event::CommitIndexed(CommitIndexed {
            commit: CommitId([n; 20]),
            parents: vec![],
            branch: None,
            summary: String::new(),
            time: 0,
            base: None,
            deltas: vec![],
        })
    }

    fn history(events: &[(Seq, Envelope)]) -> Vec<u8> {
        lineage(events)
            .into_iter()
            .filter_map(|i| events[i].1.event.indexed_commit().map(|(c, _)| c.0[0]))
            .collect()
    }

    #[test]
    fn a_reset_or_a_rollback_leaves_commits_behind() {
        // A reset to 1 (journaled as a branch move and an index of 1 from
        // 3), then a new commit 4: the history is 1, 4.
        let moved = Event::BranchMoved(BranchMoved {
            branch: None,
            from: Some(CommitId([3; 20])),
            to: CommitId([1; 20]),
        });
        let e = at(vec![ci(1), ci(2), ci(3), moved, ci(1), ci(4)]);
        assert_eq!(history(&e), [1, 4]);
        assert_eq!(history(&e[..3]), [1, 2, 3]);
        // A checkout of a commit never indexed before: it follows on.
        let other = Event::BranchMoved(BranchMoved {
            branch: None,
            from: Some(CommitId([2; 20])),
            to: CommitId([7; 20]),
        });
        assert_eq!(
            history(&at(vec![ci(1), ci(2), other.clone(), ci(7)])),
            [1, 2, 7]
        );
        // One whose first parent was indexed goes under it: main's later
        // commits are not in a feature branch's history.
        let mut feature = ci(7);
        if let Event::CommitIndexed(c) = &mut feature {
            c.parents = vec![CommitId([1; 20])];
        }
        assert_eq!(history(&at(vec![ci(1), ci(2), other, feature])), [1, 7]);
        // Rolled back to 2 and forward again to 3.
        let back = |to: u8| {
            Event::RolledBack(RolledBack {
                from: None,
                to: CommitId([to; 20]),
                branch: None,
                git_head: None,
                deltas: vec![],
            })
        };
        let e = at(vec![ci(1), ci(2), ci(3), back(2), ci(5)]);
        assert_eq!(history(&e), [1, 2, 5]);
        let e = at(vec![ci(1), ci(2), ci(3), back(1), back(3)]);
        assert_eq!(history(&e), [1, 2, 3]);
        // A branch move whose run stopped before indexing moved nothing.
        let to = |to: u8| {
            Event::BranchMoved(BranchMoved {
                branch: None,
                from: None,
                to: CommitId([to; 20]),
            })
        };
        let e = at(vec![ci(1), ci(2), ci(3), to(1), ci(4)]);
        assert_eq!(history(&e), [1, 2, 3, 4]);
        // Nor does it linger past a rollback: a later forward index of the
        // same commit counts.
        let e = at(vec![ci(1), ci(3), to(2), back(1), ci(2), ci(4)]);
        assert_eq!(history(&e), [1, 2, 4]);
    }
}
