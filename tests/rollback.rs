//! `sno rollback`: the index goes back to an indexed commit's state without
//! reparsing, by one more journal event, and comes forward again.

mod support;

use serde_json::Value;
use support::*;

fn digest(repo: &Repo) -> String {
    repo.status()["views_digest"]
        .as_str()
        .unwrap_or_else(|| panic!("no digest"))
        .to_string()
}

fn kinds(repo: &Repo) -> Vec<String> {
    let log = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    log.as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn rolling_back_and_forward_again() {
    let repo = Repo::new();
    repo.write(
        "app.py",
        "def main():\n    return helper()\n\ndef helper():\n    return 1\n",
    );
    let c1 = repo.commit("one");
    repo.write(
        "util.py",
        "from app import helper\n\ndef twice():\n    return helper() * 2\n",
    );
    let c2 = repo.commit("two");
    repo.write("app.py", "def main():\n    return 0\n");
    repo.remove("util.py");
    repo.write("extra.py", "def extra():\n    pass\n");
    let c3 = repo.commit("three");
    repo.sno_json(&["init", "--json"]);
    let at3 = digest(&repo);
    let replayed2: Value = repo.sno_json(&["replay", "--to", &c2, "--json"]);
    let events_before = kinds(&repo);
    let log_before = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);

    let r = repo.sno_json(&["rollback", "--to", "HEAD~1", "--json"]);
    assert_eq!(r["rolled_back"], true, "{r}");
    assert_eq!(r["from"], c3);
    assert_eq!(r["to"], c2);
    assert_eq!(r["files_changed"], 3, "app.py, util.py, extra.py: {r}");

    // The index answers from commit two: util.py is back, extra.py gone.
    let status = repo.status();
    assert_eq!(status["as_of"]["commit"], c2);
    assert_eq!(status["views_digest"], replayed2["views_digest"]);
    let found = repo.sno_json(&["symbol", "twice", "--json"]);
    assert!(found.to_string().contains("util.py"), "{found}");
    let gone = repo.sno(&["symbol", "extra", "--json"]);
    assert!(!gone.status.success(), "extra() is not in commit two");
    let doctor = repo.sno(&["doctor"]);
    assert!(doctor.status.success(), "{}", stderr(&doctor));

    // One event more; nothing before it rewritten.
    let mut expected = events_before.clone();
    expected.push("RolledBack".into());
    assert_eq!(kinds(&repo), expected);
    let log_after = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    assert_eq!(
        log_after.as_array().unwrap()[..events_before.len()],
        log_before.as_array().unwrap()[..]
    );
    let verify = repo.sno(&["journal", "verify"]);
    assert!(verify.status.success(), "{}", stderr(&verify));

    // Again: nothing to do, nothing written.
    let again = repo.sno_json(&["rollback", "--to", &c2, "--json"]);
    assert_eq!(again["rolled_back"], false);
    assert_eq!(kinds(&repo).len(), expected.len());

    // Further back, then forward: `sno init` indexes up to HEAD again and
    // reaches the state it had.
    let r = repo.sno_json(&["rollback", "--to", &c1[..10], "--json"]);
    assert_eq!(r["to"], c1);
    assert_eq!(repo.status()["as_of"]["commit"], c1);
    let forward = repo.sno_json(&["init", "--json"]);
    assert_eq!(forward["commit"], c3, "{forward}");
    assert_eq!(digest(&repo), at3);
    let verify = repo.sno(&["doctor"]);
    assert!(verify.status.success(), "{}", stderr(&verify));
    // The past stays reachable after all of it.
    let replayed = repo.sno_json(&["replay", "--to", &c2, "--json"]);
    assert_eq!(replayed["views_digest"], replayed2["views_digest"]);
}

#[test]
fn rolling_back_to_a_commit_never_indexed_is_an_error_and_writes_nothing() {
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    pass\n");
    repo.commit("one");
    repo.write("b.py", "def b():\n    pass\n");
    repo.commit("two");
    repo.sno_json(&["init", "--json", "--history", "0"]);
    let log_before = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    let digest_before = digest(&repo);

    // HEAD~1 exists in git but was never indexed (history 0).
    let o = repo.sno(&["rollback", "--to", "HEAD~1"]);
    assert_error_code(&o, "SNO-NOT-JOURNALED");
    let o = repo.sno(&["rollback", "--to", "no-such-branch"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
    // Every event (with its time) and every view as they were.
    let log_after = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    assert_eq!(log_after, log_before);
    assert_eq!(digest(&repo), digest_before);

    // Not indexed at all.
    let fresh = Repo::new();
    fresh.write("a.py", "x = 1\n");
    fresh.commit("one");
    let o = fresh.sno(&["rollback", "--to", "HEAD"]);
    assert_error_code(&o, "SNO-NOT-INDEXED");
}

#[test]
fn a_server_started_after_a_rollback_leaves_it_until_head_moves() {
    use std::time::{Duration, Instant};
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    pass\n");
    let c1 = repo.commit("one");
    repo.write("b.py", "def b():\n    pass\n");
    repo.commit("two");
    repo.sno_json(&["init", "--json"]);
    repo.sno_json(&["rollback", "--to", &c1, "--json"]);
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        "[watch]\npoll_secs = 0.2\n",
    )
    .unwrap();
    let mut server = serve_in_background(&repo, &[]);
    // Several polls later, the rollback stands (status runs in the daemon).
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(repo.status()["as_of"]["commit"], c1);
    // HEAD moves: followed again.
    repo.write("c.py", "def c():\n    pass\n");
    let c3 = repo.commit("three");
    let t = Instant::now();
    while repo.status()["as_of"]["commit"] != c3 {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "the daemon did not follow HEAD"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn a_garbage_collected_commit_is_not_served_with_holes() {
    let repo = Repo::new();
    repo.write("keep.py", "def keep():\n    return 1\n");
    repo.commit("keep");
    repo.write(
        "gone.py",
        "class Gone:\n    def run(self):\n        return 'vanishing'\n",
    );
    let gone = repo.commit("gone");
    repo.sno_json(&["init", "--json"]);
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    repo.sno_json(&["init", "--json"]);
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    let before = repo.status();
    // grep of that state would miss gone.py's lines without a word.
    let o = repo.sno(&["grep", "return", "--at", &gone]);
    assert_error_code(&o, "SNO-GIT");
    assert!(stderr(&o).contains("gone.py"), "{}", stderr(&o));
    // An index git cannot serve the files of is refused.
    let o = repo.sno(&["rollback", "--to", &gone]);
    assert_error_code(&o, "SNO-GIT");
    let after = repo.status();
    assert_eq!(after["journal_events"], before["journal_events"]);
    assert_eq!(after["as_of"], before["as_of"]);
    // A search of it says the source is unavailable instead of an empty quote.
    let package = stdout(&repo.sno(&["search", "Gone run", "--at", &gone, "--lexical-only"]));
    assert!(package.contains("Gone"), "{package}");
    assert!(package.contains("source unavailable"), "{package}");
    // The journal still answers what it holds alone.
    let o = repo.sno_json(&["outline", "gone.py", "--at", &gone, "--json"]);
    assert_eq!(o["outline"][0]["name"], "Gone", "{o}");
}
