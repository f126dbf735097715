//! Point queries (issue 17): `sno symbol` answers an exact name from the
//! names table, which moves with the views in the same transactions. After a
//! history of edits, renames and deletions the table equals the one a
//! replay of the journal implies (`sno doctor` checks it), and the answers
//! equal those from the whole state.

mod support;

use serde_json::Value;
use support::*;

/// (path, qualified name) of each result of `sno symbol NAME --json`.
fn found(repo: &Repo, args: &[&str]) -> Vec<(String, String, String)> {
    let v = repo.sno_json(args);
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r: &Value| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["qualified_name"].as_str().unwrap().to_string(),
                r["match_kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// `sno doctor` finds nothing wrong: the views, and the names and referrers
/// tables, equal a replay of the journal.
fn assert_doctor_clean(repo: &Repo) {
    let d = repo.sno_json(&["doctor", "--json"]);
    assert_eq!(d["report"]["problems"], serde_json::json!([]), "{d}");
    assert_eq!(d["ok"], true, "{d}");
}

#[test]
fn the_names_table_follows_edits_renames_and_deletions() {
    let repo = Repo::new();
    repo.write(
        "pkg/a.py",
        "def alpha():\n    pass\n\n\nclass Beta:\n    def gamma(self):\n        pass\n",
    );
    repo.write("pkg/b.py", "def alpha():\n    return 2\n");
    repo.write("lib/util.lua", "local function alpha() return 1 end\n");
    let c1 = repo.commit("one");
    repo.git(&["mv", "pkg/b.py", "pkg/c.py"]);
    repo.write(
        "pkg/a.py",
        "def delta():\n    pass\n\n\nclass Beta:\n    def gamma(self):\n        pass\n",
    );
    let c2 = repo.commit("rename b, alpha becomes delta in a");
    repo.remove("pkg/c.py");
    repo.write("lib/util.lua", "local function omega() return 1 end\n");
    repo.commit("delete c, rename a Lua function");
    repo.sno_json(&["init", "--json"]);

    // The table equals a replay's.
    assert_doctor_clean(&repo);

    // Exact names come from the table, as the whole state would give them.
    assert_eq!(
        found(&repo, &["symbol", "delta", "--json"]),
        [("pkg/a.py".into(), "delta".into(), "exact".into())]
    );
    assert_eq!(
        found(&repo, &["symbol", "Beta.gamma", "--json"]),
        [("pkg/a.py".into(), "Beta.gamma".into(), "exact".into())]
    );
    assert_eq!(
        found(&repo, &["symbol", "omega", "--json"]),
        [("lib/util.lua".into(), "omega".into(), "exact".into())]
    );
    // A name that is gone is not found (the other tiers find nothing near).
    assert_error_code(
        &repo.sno(&["symbol", "alpha", "--json"]),
        "SNO-UNKNOWN-SYMBOL",
    );
    // Past states still answer from the journal.
    let at2 = found(&repo, &["symbol", "alpha", "--at", &c2, "--json"]);
    assert_eq!(
        at2,
        [
            ("lib/util.lua".into(), "alpha".into(), "exact".into()),
            ("pkg/c.py".into(), "alpha".into(), "exact".into())
        ]
    );
    let at1 = found(&repo, &["symbol", "alpha", "--at", &c1, "--json"]);
    assert_eq!(at1.len(), 3, "{at1:?}");

    // A fresh index of the head gives the same table (doctor again) and the
    // same answers.
    std::fs::remove_dir_all(repo.path().join(".sno")).unwrap();
    repo.sno_json(&["init", "--history", "0", "--json"]);
    assert_doctor_clean(&repo);
    assert_eq!(
        found(&repo, &["symbol", "delta", "--json"]),
        [("pkg/a.py".into(), "delta".into(), "exact".into())]
    );
}

/// Every symbol of a small project, asked for by name and by `path:line`:
/// `outline`, `show`, `refs`, `refs --callers --depth 2` and `symbol` answer
/// from the derived tables exactly what the whole state answers (`--at` the
/// head commit reads the whole state).
#[test]
fn point_answers_equal_whole_state_answers() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.write(
        "app/more.py",
        "from app.config import Config\n\n\ndef build():\n    return Config({})\n\n\ndef twice():\n    build()\n    return build()\n\n\ndef load():\n    return twice()\n",
    );
    repo.commit("polyglot");
    repo.sno_json(&["init", "--json"]);
    let head = repo.head();
    let files = repo.git(&["ls-files"]);
    let mut asked = 0;
    for file in files.lines() {
        let point = repo.sno(&["outline", file, "--json"]);
        let whole = repo.sno(&["outline", file, "--at", &head, "--json"]);
        assert_eq!(stdout(&point), stdout(&whole), "outline {file}");
        let Ok(outline) = serde_json::from_str::<Value>(&stdout(&point)) else {
            continue;
        };
        let mut stack: Vec<Value> = outline["outline"].as_array().cloned().unwrap_or_default();
        while let Some(node) = stack.pop() {
            stack.extend(node["children"].as_array().cloned().unwrap_or_default());
            let name = node["name"].as_str().unwrap().to_string();
            let at_line = format!("{file}:{}", node["line"]);
            for query in [name.as_str(), at_line.as_str()] {
                for args in [
                    vec!["show", query],
                    vec!["symbol", query],
                    vec!["refs", query],
                    vec!["refs", query, "--callers", "--depth", "2"],
                ] {
                    let mut p = args.clone();
                    p.push("--json");
                    let mut w = args.clone();
                    w.extend(["--at", head.as_str(), "--json"]);
                    let (a, b) = (repo.sno(&p), repo.sno(&w));
                    assert_eq!(stdout(&a), stdout(&b), "{args:?}");
                    assert_eq!(a.status.code(), b.status.code(), "{args:?}");
                    asked += 1;
                }
            }
        }
    }
    assert!(asked > 100, "only {asked} questions");

    // The point path reads no whole state, and finds the callers.
    for args in [
        vec!["refs", "build", "--callers", "--depth", "2", "--json"],
        vec!["symbol", "build", "--json"],
        vec!["show", "twice", "--json"],
        vec!["outline", "app/more.py", "--json"],
    ] {
        let o = sno_in(repo.path(), &args, &[("SNO_LOG", "sno_engine=debug")]);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("state loaded"),
            "{args:?}: {}",
            stderr(&o)
        );
        let w = sno_in(
            repo.path(),
            &[&args[..args.len() - 1], &["--at", &head, "--json"]].concat(),
            &[("SNO_LOG", "sno_engine=debug")],
        );
        assert!(
            stderr(&w).contains("state loaded"),
            "{args:?}: {}",
            stderr(&w)
        );
    }
    // `status` counts the views a batch at a time, and says what a replay
    // of the whole state says.
    let o = sno_in(
        repo.path(),
        &["status", "--json"],
        &[("SNO_LOG", "sno_engine=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("state loaded"), "{}", stderr(&o));
    let counted: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let replayed = repo.sno_json(&["replay", "--json", "--to", &head]);
    assert_eq!(counted["views_digest"], replayed["views_digest"]);
    assert_eq!(counted["symbols_total"], replayed["symbols"]);
    assert_eq!(counted["edges_total"], replayed["edges"]);

    // An ambiguous name is refused from the tables alone, as from the whole
    // state.
    repo.write("app/other.py", "def build():\n    return 1\n");
    repo.commit("a second build");
    repo.sno_json(&["init", "--json"]);
    let head = repo.head();
    for args in [vec!["show", "build"], vec!["refs", "build", "--callers"]] {
        let p = sno_in(
            repo.path(),
            &[&args[..], &["--json"]].concat(),
            &[("SNO_LOG", "sno_engine=debug")],
        );
        let w = sno_in(
            repo.path(),
            &[&args[..], &["--at", &head, "--json"]].concat(),
            &[],
        );
        assert_error_code(&p, "SNO-AMBIGUOUS-SYMBOL");
        assert_eq!(stdout(&p), stdout(&w), "{args:?}");
        assert!(
            !stderr(&p).contains("state loaded"),
            "{args:?}: {}",
            stderr(&p)
        );
    }
    let callers = repo.sno_json(&[
        "refs",
        "app/more.py:4",
        "--callers",
        "--depth",
        "2",
        "--json",
    ]);
    let from: Vec<&str> = callers["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["from"].as_str())
        .collect();
    assert!(
        from.contains(&"twice") && from.contains(&"load"),
        "{callers}"
    );
}
