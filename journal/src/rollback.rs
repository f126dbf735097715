//! Rollback: the index goes back to the state of an earlier journaled
//! commit, without reparsing, by appending one event. Nothing before it is
//! rewritten: the `RolledBack` event carries the deltas from the state before
//! it to the target state, so replaying the journal passes through every
//! state the index was ever in, the rollback included.

use crate::delta::{diff_states, digest};
use crate::event::RolledBack;
use crate::model::{CommitId, Seq};
use crate::replay::{replay_observing, ReplayError};
use crate::store::Journal;

/// What a rollback did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rollback {
    /// The index was already at that commit: nothing was written.
    AlreadyThere,
    /// The event was appended.
    Done {
        /// The event's position.
        seq: Seq,
        /// The commit the index was at.
        from: Option<CommitId>,
        /// Files whose view changed.
        files_changed: usize,
    },
}

/// Moves the index to the state it had when `to` was indexed; `git_head`
/// is where git's HEAD is now (see [`RolledBack::git_head`]). The caller
/// holds the writer lock: the state read here must still be the head's
/// when the event is appended.
///
/// The deltas are computed from a replay of the journal, not from the
/// views, and views that disagree with the replay are refused: a rollback
/// made on drifted views would write deltas the journal cannot replay.
pub fn rollback_to(
    journal: &Journal,
    to: &CommitId,
    git_head: Option<CommitId>,
) -> Result<Rollback, ReplayError> {
    let Some((head, views)) = journal.head_and_state()? else {
        return Err(ReplayError::UnknownCommit(to.to_hex()));
    };
    if head.commit == *to {
        return Ok(Rollback::AlreadyThere);
    }
    let seq = journal
        .seq_of_commit(to)?
        .ok_or_else(|| ReplayError::UnknownCommit(to.to_hex()))?;
    // One pass: the target state on the way, the current one at the end.
    let mut target = None;
    let (current, _) = replay_observing(journal, Seq(journal.len()? - 1), |at, state, head| {
        if at == seq {
            target = Some((state.clone(), head.and_then(|h| h.branch.clone())));
        }
    })?;
    if digest(&current) != digest(&views) {
        return Err(ReplayError::ViewsDrifted);
    }
    drop(views);
    let (target, target_branch) = target.ok_or_else(|| ReplayError::UnknownCommit(to.to_hex()))?;
    let deltas = diff_states(&current, &target);
    let files_changed = deltas.len();
    let from = Some(head.commit);
    let seq = journal.append_rollback(RolledBack {
        from,
        to: *to,
        branch: target_branch,
        git_head,
        deltas,
    })?;
    Ok(Rollback::Done {
        seq,
        from,
        files_changed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::digest;
    use crate::event::{FileChange, FileDelta};
    use crate::model::*;
    use crate::replay::{replay_all, replay_to_commit};
    use crate::test_support::{add, commit};

    #[test]
    fn a_rollback_is_one_more_event_and_replays_like_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        j.append_commit(commit(1, vec![add("a.py", 1)])).unwrap();
        j.append_commit(commit(2, vec![add("b.py", 2)])).unwrap();
        let deleted = FileDelta {
            change: FileChange::Deleted,
            ..add("a.py", 1)
        };
        j.append_commit(commit(3, vec![add("c.py", 3), deleted]))
            .unwrap();
        let at1 = replay_to_commit(&j, &CommitId([1; 20])).unwrap();
        let before: Vec<_> = j.events(Seq(0), None).unwrap();

        let done = rollback_to(&j, &CommitId([1; 20]), Some(CommitId([3; 20]))).unwrap();
        let Rollback::Done {
            seq,
            from,
            files_changed,
        } = done
        else {
            panic!("{done:?}")
        };
        assert_eq!(seq, Seq(3));
        assert_eq!(from, Some(CommitId([3; 20])));
        assert_eq!(files_changed, 3, "a.py back, b.py and c.py gone");
        // The views, the head and a replay of the whole journal all agree.
        assert_eq!(digest(&j.load_state().unwrap()), digest(&at1));
        let head = j.head().unwrap().unwrap();
        assert_eq!((head.commit, head.seq), (CommitId([1; 20]), Seq(3)));
        assert_eq!(head.branch.as_deref(), Some("b1"));
        let (replayed, replay_head) = replay_all(&j).unwrap();
        assert_eq!(replayed, at1);
        assert_eq!(replay_head, Some(head));
        assert!(crate::verify::verify(&j).problems.is_empty());
        // Nothing before it changed, and the later states still replay.
        let after = j.events(Seq(0), None).unwrap();
        assert_eq!(&after[..3], &before[..]);
        assert_eq!(
            replay_to_commit(&j, &CommitId([3; 20])).unwrap().len(),
            2,
            "b.py and c.py at commit 3"
        );
        // Again: nothing to do. Unknown: an error, nothing written.
        assert_eq!(
            rollback_to(&j, &CommitId([1; 20]), None).unwrap(),
            Rollback::AlreadyThere
        );
        assert!(matches!(
            rollback_to(&j, &CommitId([9; 20]), None),
            Err(ReplayError::UnknownCommit(_))
        ));
        assert_eq!(j.len().unwrap(), 4);
        assert_eq!(j.rolled_back_at().unwrap(), Some(Some(CommitId([3; 20]))));
        // Forward again to a later state.
        rollback_to(&j, &CommitId([3; 20]), None).unwrap();
        assert_eq!(
            digest(&j.load_state().unwrap()),
            digest(&replay_to_commit(&j, &CommitId([3; 20])).unwrap())
        );
        assert!(crate::verify::verify(&j).problems.is_empty());
        // The history of the state is 1, 2, 3 again, as when 3 was indexed.
        let events = j.events(Seq(0), None).unwrap();
        let history = |upto: usize| -> Vec<u8> {
            crate::replay::lineage(&events[..upto])
                .into_iter()
                .filter_map(|i| events[i].1.event.indexed_commit().map(|(c, _)| c.0[0]))
                .collect()
        };
        assert_eq!(history(events.len()), [1, 2, 3]);
        // Just after the rollback to 1, it was 1 alone.
        assert_eq!(history(4), [1], "2 and 3 were left behind");
        // Views that drifted from the journal are not rolled back.
        j.tamper_remove_file_row("b.py");
        assert!(matches!(
            rollback_to(&j, &CommitId([1; 20]), None),
            Err(ReplayError::ViewsDrifted)
        ));
        assert_eq!(j.len().unwrap(), 5, "nothing written");
    }
}
