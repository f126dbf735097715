//! Integrity checks: the event chain, and the views against a replay.

use serde::Serialize;

use crate::delta::digest;
use crate::event::{record_hash, Envelope};
use crate::model::Seq;
use crate::replay::replay_all;
use crate::store::Journal;

/// One thing found wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Stable code, e.g. `SNO-J-CHAIN`.
    pub code: &'static str,
    pub message: String,
    /// What to do about it.
    pub repair: &'static str,
}

/// What verification found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub events: u64,
    pub files_in_views: u64,
    pub views_digest: u64,
    pub problems: Vec<Problem>,
}

const REBUILD_VIEWS: &str = "run `sno doctor --repair` to rebuild the views from the journal";
const REINDEX: &str =
    "move .sno/ aside and run `sno init` to index again; the old journal is kept for inspection";

/// Checks the chain of records and that the views equal a replay of the journal.
pub fn verify(journal: &Journal) -> Report {
    let mut report = Report::default();
    let mut prev: Option<(Seq, u64)> = None;
    let walked = journal.for_each_raw(Seq(0), None, |seq, bytes| {
        report.events += 1;
        let expected_seq = prev.map(|(s, _)| s.0 + 1).unwrap_or(0);
        if seq.0 != expected_seq {
            report.problems.push(Problem {
                code: "SNO-J-GAP",
                message: format!("event {expected_seq} is missing (next stored is {seq})"),
                repair: REINDEX,
            });
        }
        match Envelope::decode(bytes) {
            Ok(env) => {
                let expected_hash = prev.map(|(_, h)| h).unwrap_or(0);
                if env.prev_hash != expected_hash {
                    report.problems.push(Problem {
                        code: "SNO-J-CHAIN",
                        message: format!("event {seq} does not chain to the event before it: an event was changed"),
                        repair: REINDEX,
                    });
                }
            }
            Err(e) => report.problems.push(Problem {
                code: "SNO-J-DECODE",
                message: format!("event {seq} does not decode: {e}"),
                repair: REINDEX,
            }),
        }
        prev = Some((seq, record_hash(bytes)));
        Ok(())
    });
    if let Err(e) = walked {
        report.problems.push(Problem {
            code: "SNO-J-READ",
            message: e.to_string(),
            repair: REINDEX,
        });
        return report;
    }
    if !report.problems.is_empty() {
        return report;
    }
    let replayed = match replay_all(journal) {
        Ok(r) => r,
        Err(e) => {
            report.problems.push(Problem {
                code: "SNO-J-REPLAY",
                message: e.to_string(),
                repair: REINDEX,
            });
            return report;
        }
    };
    match journal.load_state() {
        Ok(views) => {
            report.files_in_views = views.len() as u64;
            report.views_digest = digest(&views);
            if report.views_digest != digest(&replayed.0) {
                let differing = views
                    .keys()
                    .chain(replayed.0.keys())
                    .filter(|p| views.get(*p) != replayed.0.get(*p))
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>();
                report.problems.push(Problem {
                    code: "SNO-J-VIEWS",
                    message: format!(
                        "the views differ from a replay of the journal (e.g. {})",
                        differing.join(", ")
                    ),
                    repair: REBUILD_VIEWS,
                });
            }
        }
        Err(e) => report.problems.push(Problem {
            code: "SNO-J-VIEWS",
            message: e.to_string(),
            repair: REBUILD_VIEWS,
        }),
    }
    match journal.derived_rows() {
        Ok(rows) if rows != crate::store::expected_derived_rows(&replayed.0) => {
            report.problems.push(Problem {
                code: "SNO-J-NAMES",
                message: "the names or referrers table differs from a replay of the journal".into(),
                repair: REBUILD_VIEWS,
            })
        }
        Ok(_) => {}
        Err(e) => report.problems.push(Problem {
            code: "SNO-J-NAMES",
            message: e.to_string(),
            repair: REBUILD_VIEWS,
        }),
    }
    match journal.head() {
        Ok(head) if head != replayed.1 => report.problems.push(Problem {
            code: "SNO-J-HEAD",
            message: "the recorded head is not the last indexed commit of the journal".into(),
            repair: REBUILD_VIEWS,
        }),
        Ok(_) => {}
        Err(e) => report.problems.push(Problem {
            code: "SNO-J-HEAD",
            message: e.to_string(),
            repair: REBUILD_VIEWS,
        }),
    }
    report
}

/// Rebuilds the views from the journal (the journal is never touched).
pub fn repair_views(journal: &Journal) -> Result<(), crate::JournalError> {
    let (state, head) = replay_all(journal)?;
    journal.replace_views(&state, head.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use crate::test_support::{add, commit};

    #[test]
    fn healthy_journal_verifies_and_tampered_views_are_found_and_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        j.append_commit(commit(1, vec![add("a.py", 1), add("b.py", 2)]))
            .unwrap();
        j.append_commit(commit(2, vec![add("c.py", 3)])).unwrap();
        let r = verify(&j);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.events, 2);
        assert_eq!(r.files_in_views, 3);

        j.tamper_remove_file_row("b.py");
        let r = verify(&j);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!(r.problems[0].code, "SNO-J-VIEWS");
        assert!(r.problems[0].message.contains("b.py"));

        repair_views(&j).unwrap();
        let r = verify(&j);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.files_in_views, 3);
    }

    #[test]
    fn a_names_table_out_of_step_with_the_views_is_found_and_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let mut d = add("a.py", 1);
        d.symbols_added.push(Symbol {
            id: SymbolId(7),
            name: "load".into(),
            qualified_name: "Config.load".into(),
            kind: SymbolKind::Method,
            parent: None,
            span: Span::default(),
            signature: "def load(self)".into(),
            doc: String::new(),
            content_hash: 0,
        });
        j.append_commit(commit(1, vec![d])).unwrap();
        assert!(verify(&j).problems.is_empty());
        let (_, files) = j
            .head_and_files_naming("Config.load", None)
            .unwrap()
            .unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["a.py"]);

        j.tamper_remove_name_row("load", "a.py");
        let r = verify(&j);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!(r.problems[0].code, "SNO-J-NAMES");
        let (_, files) = j.head_and_files_naming("load", None).unwrap().unwrap();
        assert!(files.is_empty());

        repair_views(&j).unwrap();
        assert!(verify(&j).problems.is_empty());
        let (_, files) = j.head_and_files_naming("load", None).unwrap().unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["a.py"]);
    }

    #[test]
    fn a_changed_event_breaks_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        j.append_commit(commit(1, vec![add("a.py", 1)])).unwrap();
        j.append_commit(commit(2, vec![add("b.py", 2)])).unwrap();
        j.append_commit(commit(3, vec![add("c.py", 3)])).unwrap();
        j.tamper_rewrite_event(1, commit(9, vec![add("b.py", 2)]));
        let r = verify(&j);
        assert!(
            r.problems.iter().any(|p| p.code == "SNO-J-CHAIN"),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn a_misfitting_delta_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        j.append_commit(commit(1, vec![add("a.py", 1)])).unwrap();
        let err = j
            .append_commit(commit(2, vec![add("z.py", 5), add("a.py", 1)]))
            .unwrap_err();
        assert!(err.to_string().contains("already has"), "{err}");
        assert_eq!(j.len().unwrap(), 1, "the event was not appended");
        assert!(j.file("z.py").unwrap().is_none(), "no view moved");
    }

    #[test]
    /// Deferred commits are seen by this process at once, and are there
    /// and verify after a reopen. Whether `flush` itself syncs cannot be
    /// seen here (redb also syncs on a clean close); that a crash before the
    /// sync leaves the last durable state is checked with the real binary
    /// (`tests/crash.rs` kills history runs).
    fn deferred_commits_are_visible_at_once_and_survive_a_reopen() {
        use crate::store::Flush;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        {
            let j = Journal::open_or_create(&path).unwrap();
            j.append_commit(commit(1, vec![add("a.py", 1)])).unwrap();
            for n in 2..5 {
                j.append_commit_with(
                    commit(n, vec![add(&format!("f{n}.py"), n)]),
                    vec![],
                    Flush::Deferred,
                )
                .unwrap();
            }
            // Readers in this process see them before they are synced.
            assert_eq!(j.len().unwrap(), 4);
            assert!(j.file("f4.py").unwrap().is_some());
            j.flush().unwrap();
        }
        let j = Journal::open_or_create(&path).unwrap();
        assert_eq!(j.len().unwrap(), 4, "synced commits survive a reopen");
        assert_eq!(j.head().unwrap().unwrap().commit, CommitId([4; 20]));
        let r = verify(&j);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }
}
