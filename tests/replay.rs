//! The journal's central invariant: replaying it to any journaled commit gives
//! exactly the state a fresh index of that commit gives.

mod support;

use support::*;

/// Builds a history of 34 commits over Python, JavaScript, Go and Rust files
/// with adds, edits (including edits that change what calls resolve to),
/// renames, moves between directories and deletes.
fn generated_history(repo: &Repo) -> Vec<String> {
    let mut commits = Vec::new();
    seed_polyglot(repo);
    // Side-effect imports of plugins that appear later: when one appears,
    // only the set of paths changes, and this unchanged file's import must
    // resolve.
    repo.write(
        "web/boot.js",
        (1..=5)
            .map(|n| format!("import './plugin_{n}.js';\n"))
            .collect::<String>(),
    );
    // `common` is defined in two files and, every other time, in util.py,
    // which consumer.py imports it from: its count never falls below two,
    // yet the consumer's call moves between util.py and unresolved.
    repo.write("app/common_a.py", "def common():\n    return 'a'\n");
    repo.write("app/common_b.py", "def common():\n    return 'b'\n");
    repo.write(
        "app/consumer.py",
        "from app.util import common\n\n\ndef consume():\n    return common()\n",
    );
    commits.push(repo.commit("seed"));
    for i in 0..33u32 {
        match i % 6 {
            0 => {
                // Add a module that calls into existing code, and calls a
                // name nobody defines yet (unresolved until the next step).
                repo.write(
                    &format!("app/feature_{i}.py"),
                    format!(
                        "from app.util import read_text\n\n\ndef feature_{i}(p):\n    \"\"\"Feature {i}.\"\"\"\n    return read_text(p) + helper_{i}() + later_{}()\n\n\ndef helper_{i}():\n    return '{i}'\n",
                        i + 1
                    ),
                );
            }
            1 => {
                // Define the missing name elsewhere: the unchanged caller's
                // edge must now resolve.
                repo.write(
                    "app/util.py",
                    format!(
                        "def read_text(path):\n    \"\"\"Return the file's text ({i}).\"\"\"\n    with open(path) as f:\n        return f.read()\n\n\ndef later_{i}():\n    return 'now'\n{}",
                        if (i / 6) % 2 == 0 { "\n\ndef common():\n    return 'util'\n" } else { "" }
                    ),
                );
            }
            2 => {
                // Rename a file (git sees delete + add); add a page importing
                // and calling a module that does not exist yet.
                let from = format!("app/feature_{}.py", i - 2);
                if repo.path().join(&from).exists() {
                    repo.git(&["mv", &from, &format!("app/renamed_{i}.py")]);
                }
                repo.write(
                    &format!("web/page_{i}.js"),
                    format!("import {{ getUser }} from './api.js';\nimport {{ futureFn{i} }} from './future_{i}.js';\nimport './side_{i}.js';\nexport function page{i}() {{ return getUser({i}) + futureFn{i}(); }}\n"),
                );
            }
            3 => {
                // A second definition makes a uniquely resolved call ambiguous;
                // the missing module appears; Go and Rust bodies change.
                repo.write(
                    "app/dup.py",
                    format!("def later_{}():\n    return 'dup'\n", i - 2),
                );
                // A side-effect import target appears: only the set of paths changed.
                repo.write(
                    &format!("web/side_{}.js", i - 1),
                    "console.log('loaded');\n",
                );
                repo.write(
                    &format!("web/future_{}.js", i - 1),
                    format!("export function futureFn{}() {{ return 1; }}\n", i - 1),
                );
                repo.write(
                    "server/server.go",
                    format!("package server\n\nimport \"fmt\"\n\n// Server answers requests.\ntype Server struct {{\n\tName string\n}}\n\n// Run starts the server.\nfunc (s *Server) Run() error {{\n\tfmt.Println(s.Name, {i})\n\treturn s.stop()\n}}\n\nfunc (s *Server) stop() error {{ return nil }}\n\nfunc Extra{i}() int {{ return {i} }}\n"),
                );
                repo.write("core/src/parse.rs", format!("/// Checks a value.\npub fn check(v: i32) -> i32 {{\n    v + {i}\n}}\n\npub fn more_{i}() {{}}\n"));
            }
            4 => {
                // Delete files: callers of what they defined lose their targets.
                for victim in [
                    format!("web/page_{}.js", i - 2),
                    format!("app/renamed_{}.py", i - 2),
                    "app/dup.py".to_string(),
                    format!("web/future_{}.js", i - 2),
                ] {
                    if repo.path().join(&victim).exists() {
                        repo.remove(&victim);
                    }
                }
            }
            _ => {
                // Break a file's syntax, then a binary and a non-code file.
                repo.write(
                    "app/broken.py",
                    format!("def ok_{i}():\n    return 1\n\ndef broken(:\n    pass\n"),
                );
                repo.write(
                    &format!("assets/blob_{i}.py"),
                    [0u8, 159, 146, 150, i as u8],
                );
                repo.write("NOTES.txt", format!("note {i}\n"));
                repo.write(
                    &format!("web/plugin_{}.js", i / 6 + 1),
                    "console.log('plugin');\n",
                );
            }
        }
        commits.push(repo.commit(&format!("step {i}")));
    }
    commits
}

#[test]
fn replay_at_every_commit_equals_a_fresh_index_of_it() {
    let repo = Repo::new();
    let commits = generated_history(&repo);
    assert!(commits.len() >= 30);
    let out = repo.sno_json(&["init", "--json", "--history", "all"]);
    assert_eq!(
        out["commits_indexed"].as_u64().unwrap() as usize,
        commits.len()
    );
    // Edited files were parsed from their previous trees, so what follows
    // checks that path against fresh parses too.
    assert!(
        out["files_reparsed"].as_u64().unwrap() >= 10,
        "reparsed: {}",
        out["files_reparsed"]
    );

    // A second clone of the same repository, indexed from scratch at each commit.
    let (_fresh, clone) = clone_of(&repo);

    let mut distinct = std::collections::BTreeSet::new();
    for c in &commits {
        let replayed = repo.sno_json(&["replay", "--json", "--to", c]);
        let (_, s) = fresh_index(&clone, c, None);
        assert_eq!(
            replayed["views_digest"], s["views_digest"],
            "replay to {c} differs from a fresh index: replayed {replayed} vs fresh files={} symbols={} edges={}",
            s["files"]["total"], s["symbols_total"], s["edges_total"]
        );
        assert_eq!(replayed["symbols"], s["symbols_total"]);
        assert_eq!(replayed["edges"], s["edges_total"]);
        distinct.insert(replayed["views_digest"].as_str().unwrap().to_string());
    }
    // The history really moves the state: nearly every commit is a new state.
    assert!(
        distinct.len() >= commits.len() - 2,
        "{} distinct states",
        distinct.len()
    );

    // Replay reads only: the views still describe HEAD.
    let s = repo.status();
    assert_eq!(s["as_of"]["commit"], commits.last().unwrap().as_str());
    assert_eq!(repo.sno_json(&["doctor", "--json"])["ok"], true);
}

#[test]
fn reparsing_can_be_turned_off_and_changes_nothing_stored() {
    let repo = Repo::new();
    generated_history(&repo);
    let with = repo.sno_json(&["init", "--json", "--history", "all"]);
    assert!(with["files_reparsed"].as_u64().unwrap() > 0);
    let digest_with = repo.status()["views_digest"].clone();

    std::fs::remove_dir_all(repo.path().join(".sno")).unwrap();
    repo.write(".sno/config.toml", "[index]\nreparse_cache_mb = 0\n");
    let without = repo.sno_json(&["init", "--json", "--history", "all"]);
    assert_eq!(without["files_reparsed"], 0);
    assert_eq!(without["files_parsed"], with["files_parsed"]);
    assert_eq!(repo.status()["views_digest"], digest_with);
    assert!(digest_with.as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn replay_to_an_unjournaled_commit_is_a_clear_error() {
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    pass\n");
    let first = repo.commit("one");
    repo.write("b.py", "def b():\n    pass\n");
    repo.commit("two");
    repo.sno_json(&["init", "--json", "--history", "0"]);
    let o = repo.sno(&["replay", "--to", &first]);
    assert_error_code(&o, "SNO-NOT-JOURNALED");
    // More history asked of an existing index adds nothing older, and the
    // hint says what does.
    repo.sno_json(&["init", "--json", "--history", "all"]);
    let o = repo.sno(&["replay", "--to", &first]);
    assert_error_code(&o, "SNO-NOT-JOURNALED");
    assert!(stderr(&o).contains("move `.sno` aside"), "{}", stderr(&o));
    std::fs::rename(repo.path().join(".sno"), repo.path().join("old-sno")).unwrap();
    repo.sno_json(&["init", "--json", "--history", "all"]);
    let o = repo.sno(&["replay", "--to", &first]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A daemon indexes commit after commit from what its last run left (the
/// indexer keeps the state and resolution's indexes, the embedder its
/// counts, while the journal's head is the event that made them): what it
/// builds equals a fresh index of each commit, and its semantic index
/// counts what a fresh one counts.
#[test]
fn a_daemon_indexing_commit_after_commit_equals_a_fresh_index_of_each() {
    let repo = Repo::new();
    let commits = generated_history(&repo);
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let config = format!(
        "[watch]\nenabled = false\n\n[search]\nmodel = {:?}\n",
        model.path().to_str().unwrap()
    );
    repo.write(".sno/config.toml", &config);
    let first = repo.sno_json(&["init", "--json", "--history", "0", "--rev", &commits[0]]);
    assert_eq!(first["semantic"]["enabled"], true, "{first}");

    let (_fresh, clone) = clone_of(&repo);

    let mut server = serve_in_background(&repo, &[]);
    let mut checked = 0;
    for (i, c) in commits.iter().enumerate().skip(1) {
        let run = repo.sno_json(&["init", "--json", "--history", "0", "--rev", c]);
        assert_eq!(run["commit"], c.as_str(), "{run}");
        if i % 4 != 0 && i + 1 != commits.len() {
            continue;
        }
        let (fresh_run, s) = fresh_index(&clone, c, Some(&config));
        let ours = repo.status();
        assert_eq!(
            ours["views_digest"], s["views_digest"],
            "the daemon's index of {c} differs from a fresh one"
        );
        assert_eq!(
            run["semantic"]["symbols"], fresh_run["semantic"]["symbols"],
            "{run}\n{fresh_run}"
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");

    // Every run after the first was the daemon's: one process ran them.
    let audit = repo.sno_json(&["audit", "--json"]);
    let pids: std::collections::BTreeSet<u64> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["entry"].get("IndexRun"))
        .skip(1)
        .map(|r| r["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 1, "{pids:?}");
    drop(server.stdin.take());
    let _ = server.wait();
}

/// A daemon that starts on an index loads its state ahead of the first
/// commit it follows and advances from it: what it builds as HEAD moves on
/// equals a fresh index of each commit.
#[test]
fn a_following_daemon_advances_from_the_state_it_loaded_at_start() {
    let repo = Repo::new();
    let commits = generated_history(&repo);
    let last = commits.len() - 1;
    // Cloned while every commit is on the branch.
    let (_fresh, clone) = clone_of(&repo);
    let base = &commits[last - 4];
    repo.git(&["reset", "-q", "--hard", base]);
    let out = repo.sno_json(&["init", "--json", "--history", "0"]);
    assert_eq!(out["commit"], base.as_str(), "{out}");

    let mut server = serve_in_background(&repo, &[]);
    // Time for the daemon to load the state in the background before HEAD
    // moves, so the first run advances from it.
    std::thread::sleep(std::time::Duration::from_secs(3));
    for c in &commits[last - 3..] {
        repo.git(&["reset", "-q", "--hard", c]);
        let t = std::time::Instant::now();
        while repo.status()["as_of"]["commit"] != c.as_str() {
            assert!(
                t.elapsed() < std::time::Duration::from_secs(90),
                "the daemon did not follow to {c}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let (_, s) = fresh_index(&clone, c, None);
        assert_eq!(
            repo.status()["views_digest"],
            s["views_digest"],
            "the following daemon's index of {c} differs from a fresh one"
        );
    }
    // No run failed and was retried on a fresh load.
    let audit = repo.sno_json(&["audit", "--json"]);
    let runs: Vec<&serde_json::Value> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["entry"].get("IndexRun"))
        .collect();
    assert!(runs.len() >= 5, "{audit}");
    assert!(runs.iter().all(|r| r["outcome"] == "completed"), "{runs:?}");
    drop(server.stdin.take());
    let _ = server.wait();
}

/// A clone of `repo` (every commit it has now) in a temporary directory.
fn clone_of(repo: &Repo) -> (tempfile::TempDir, std::path::PathBuf) {
    let fresh = tempfile::tempdir().unwrap();
    let clone = fresh.path().join("clone");
    let st = std::process::Command::new("git")
        .args([
            "clone",
            "-q",
            "--no-checkout",
            repo.path().to_str().unwrap(),
            clone.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    (fresh, clone)
}

/// A fresh index of commit `c` in `clone` (with `config`, if any): the
/// run's summary and the status after it.
fn fresh_index(
    clone: &std::path::Path,
    c: &str,
    config: Option<&str>,
) -> (serde_json::Value, serde_json::Value) {
    let _ = std::fs::remove_dir_all(clone.join(".sno"));
    if let Some(config) = config {
        std::fs::create_dir_all(clone.join(".sno")).unwrap();
        std::fs::write(clone.join(".sno/config.toml"), config).unwrap();
    }
    let o = sno_in(
        clone,
        &["init", "--json", "--history", "0", "--rev", c],
        &[],
    );
    assert!(o.status.success(), "fresh index of {c}: {}", stderr(&o));
    let run = serde_json::from_slice(&o.stdout).unwrap();
    let s = sno_in(clone, &["status", "--json"], &[]);
    (run, serde_json::from_slice(&s.stdout).unwrap())
}

/// A commit on top of a head of many files is indexed over records read on
/// demand, never the whole state (the test hook asks for it on a small
/// repository): what it journals equals a fresh index of each commit,
/// through edits, additions, renames and deletions.
#[test]
fn commits_indexed_over_records_read_on_demand_equal_a_fresh_index_of_each() {
    let repo = Repo::new();
    let commits = generated_history(&repo);
    repo.sno_json(&["init", "--json", "--history", "0", "--rev", &commits[0]]);
    let (_fresh, clone) = clone_of(&repo);
    let mut checked = 0;
    for (i, c) in commits.iter().enumerate().skip(1) {
        let o = sno_in(
            repo.path(),
            &["init", "--json", "--history", "0", "--rev", c],
            &[
                ("SNO_TEST_LAZY_COMMITS", "1"),
                ("SNO_LOG", "sno_engine::indexer=debug"),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("commit indexed over records read on demand"),
            "{}",
            stderr(&o)
        );
        if i % 3 != 0 && i + 1 != commits.len() {
            continue;
        }
        let (_, s) = fresh_index(&clone, c, None);
        assert_eq!(
            repo.status()["views_digest"],
            s["views_digest"],
            "the index of {c} over records read on demand differs from a fresh one"
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");
    assert_eq!(repo.sno_json(&["doctor", "--json"])["ok"], true);
}

#[test]
fn an_abbreviated_id_two_journaled_commits_begin_with_is_refused() {
    // Fixed dates and identity make the ids fixed: x420 and y429 on two
    // branches off `root` share their first four digits.
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    return 1\n");
    repo.commit("root");
    repo.git(&["checkout", "-q", "-b", "x"]);
    let x = repo.commit("x420");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["checkout", "-q", "-b", "y"]);
    let y = repo.commit("y429");
    assert_eq!(x[..4], y[..4], "the fixture's ids share four digits");
    repo.git(&["checkout", "-q", "x"]);
    repo.sno_json(&["init", "--json"]);
    repo.git(&["checkout", "-q", "y"]);
    repo.sno_json(&["init", "--json"]);
    let before = repo.status();
    let prefix = &x[..4];
    for args in [
        &["replay", "--to", prefix][..],
        &["rollback", "--to", prefix],
        &["grep", "def", "--at", prefix],
    ] {
        let o = repo.sno(args);
        assert_error_code(&o, "SNO-UNKNOWN-REV");
        assert!(stderr(&o).contains("ambiguous"), "{args:?}: {}", stderr(&o));
    }
    let o = repo.sno(&["replay", "--to", prefix, "--json"]);
    let err: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let candidates = err["error"]["did_you_mean"].to_string();
    assert!(
        candidates.contains(&x[..12]) && candidates.contains(&y[..12]),
        "{candidates}"
    );
    let after = repo.status();
    assert_eq!(
        after["journal_events"], before["journal_events"],
        "nothing rolled back"
    );
    assert_eq!(after["as_of"]["commit"], y.as_str());
    // Fewer than four digits name nothing; more name one commit.
    assert_error_code(&repo.sno(&["replay", "--to", &x[..3]]), "SNO-UNKNOWN-REV");
    let one = repo.sno_json(&["replay", "--to", &x[..8], "--json"]);
    assert_eq!(one["commit"], x.as_str(), "{one}");
}
