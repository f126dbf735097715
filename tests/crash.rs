//! Crash safety and the writer lock, with the real binary: kill -9 at several
//! points of `sno init`, then doctor passes and a rerun reaches the same state
//! as an uninterrupted run. A parser worker that panics costs one file only.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use support::*;

fn history_repo(commits: usize) -> Repo {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    for i in 0..commits {
        repo.write(
            &format!("pkg/m{i}.py"),
            format!("from app.util import read_text\n\ndef f{i}(p):\n    return read_text(p)\n"),
        );
        if i % 3 == 2 {
            repo.remove(&format!("pkg/m{}.py", i - 1));
        }
        repo.commit(&format!("c{i}"));
    }
    repo
}

/// Starts `sno init --history all` slowed down so a test can interrupt it, and
/// kills it with SIGKILL once `after` commits have been reported journaled
/// (`0` means as soon as the plan is printed).
fn kill_during_init(repo: &Repo, after: usize) {
    let mut child = sno_command()
        .args(["init", "--history", "all"])
        .current_dir(repo.path())
        .env("SNO_TEST_COMMIT_DELAY_MS", "150")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = 0;
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if line.contains("indexing") && after == 0 {
            break;
        }
        if line.contains("sno: indexed ") {
            seen += 1;
            if seen >= after {
                break;
            }
        }
    }
    // SIGKILL: no destructors, no flush, nothing graceful.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was interrupted");
}

#[test]
fn kill_9_at_several_points_then_rerun_equals_an_uninterrupted_run() {
    let reference = history_repo(12);
    reference.sno_json(&["init", "--json", "--history", "all"]);
    let want = reference.status();

    for after in [0usize, 1, 5, 11] {
        let repo = history_repo(12);
        kill_during_init(&repo, after);
        let doc = repo.sno(&["doctor", "--json"]);
        // Killed before the database existed is the one case with nothing to check.
        if repo.db().exists() {
            let v: serde_json::Value = serde_json::from_slice(&doc.stdout).unwrap_or_default();
            assert_eq!(
                v["ok"],
                true,
                "doctor after kill at {after}: {} {}",
                stdout(&doc),
                stderr(&doc)
            );
        }
        let again = repo.sno_json(&["init", "--json", "--history", "all"]);
        assert!(again["commits_indexed"].as_u64().unwrap() <= 13);
        let got = repo.status();
        for key in [
            "views_digest",
            "commits_indexed",
            "symbols_total",
            "edges_total",
            "files",
        ] {
            assert_eq!(got[key], want[key], "kill after {after}: {key} differs");
        }
        assert_eq!(got["as_of"]["commit"], want["as_of"]["commit"]);
        assert_eq!(repo.sno_json(&["doctor", "--json"])["ok"], true);
    }
}

#[test]
fn second_init_while_one_runs_names_the_lock_holder() {
    let repo = history_repo(6);
    let mut first = sno_command()
        .args(["init", "--history", "all"])
        .current_dir(repo.path())
        .env("SNO_TEST_COMMIT_DELAY_MS", "300")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(first.stderr.take().unwrap()).lines();
    // Wait until the first run is writing.
    for line in lines.by_ref() {
        if line.unwrap().contains("sno: indexed ") {
            break;
        }
    }
    let second = repo.sno(&["init"]);
    assert_error_code(&second, "SNO-LOCKED");
    assert!(
        stderr(&second).contains(&format!("locked by pid {}", first.id())),
        "{}",
        stderr(&second)
    );
    // Readers get the same clear answer while the writer holds the database.
    assert_error_code(&repo.sno(&["status"]), "SNO-LOCKED");
    for _ in lines {}
    assert!(first.wait().unwrap().success());
    assert_eq!(repo.sno_json(&["doctor", "--json"])["ok"], true);
}

#[test]
fn a_parser_worker_panic_fails_one_file_and_the_index_completes() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    let o = sno_in(
        repo.path(),
        &["init", "--json"],
        &[("SNO_TEST_PANIC_ON", "app/util.py")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files_parsed"], 7, "every other file parsed: {v}");
    assert_eq!(v["failures"][0]["path"], "app/util.py");
    assert!(
        v["failures"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("panicked"),
        "{v}"
    );
    let s = repo.status();
    assert_eq!(s["files"]["failed"], 1);
    assert_eq!(s["failures"][0]["path"], "app/util.py");
    assert_eq!(
        s["languages"]["python"]["files"], 3,
        "the failed file is still listed"
    );
    // The pool kept working after the restart: files parsed after the panic have symbols.
    assert!(s["languages"]["rust"]["symbols"].as_u64().unwrap() >= 3);
}

#[test]
fn commands_end_without_a_panic_on_stderr() {
    // Dropping the runtime while the supervisor still stopped its children
    // made ractor report "task N was cancelled" as a panic at the end of
    // about half of all `sno init` runs (exit 0, but a panic on stderr).
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    for round in 0..6 {
        std::fs::remove_dir_all(repo.path().join(".sno")).ok();
        for args in [&["init", "--json"][..], &["status", "--json"][..]] {
            let o = repo.sno(args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            assert!(
                !stderr(&o).contains("panic"),
                "round {round}, {args:?}: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_run_killed_after_its_branch_move_journals_the_move_once() {
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    return 1\n");
    repo.commit("one");
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("b.py", "def b():\n    return 2\n");
    repo.commit("two");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("c.py", "def c():\n    return 3\n");
    repo.commit("three");
    repo.sno_json(&["init", "--json"]);
    repo.git(&["checkout", "-q", "other"]);
    // Killed once the move is journaled and its commit is not.
    let mut child = sno_command()
        .args(["init"])
        .current_dir(repo.path())
        .env("SNO_TEST_COMMIT_DELAY_MS", "3000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr_of = child.stderr.take().unwrap();
    for line in BufReader::new(stderr_of).lines() {
        if line.unwrap().contains("indexing") {
            break;
        }
    }
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    let kinds = |r: &Repo| -> Vec<String> {
        r.sno_json(&["journal", "log", "--json", "--tail", "1000"])
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&repo).last().map(String::as_str), Some("BranchMoved"));
    let rerun = repo.sno_json(&["init", "--json"]);
    assert_eq!(rerun["commit"], repo.head());
    let journal = kinds(&repo);
    assert_eq!(
        journal.iter().filter(|k| *k == "BranchMoved").count(),
        1,
        "{journal:?}"
    );
    let sym = repo.sno_json(&["symbol", "b", "--json"]);
    assert_eq!(sym["results"][0]["path"], "b.py", "{sym}");
    let doctor = repo.sno_json(&["doctor", "--json"]);
    assert_eq!(doctor["ok"], true, "{doctor}");
}
