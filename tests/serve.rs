//! `sno serve` through a real MCP client: the official Python SDK
//! (`pip install mcp`; `.ci/run` installs it). Every tool is called at least
//! once on a repository built here, and the answers are checked.

mod support;

use serde_json::{json, Value};
use support::*;

fn python_has_mcp() -> bool {
    let has = std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    // CI installs the SDK, so there a missing SDK is a failure, not a skip.
    assert!(
        has || std::env::var("CI").is_err(),
        "the MCP Python SDK is missing in CI"
    );
    if !has {
        eprintln!("python3 has no `mcp` package (pip install mcp): skipped");
    }
    has
}

/// Runs one client session making `calls`; returns the client's report and
/// the results by label.
fn session(
    repo: &Repo,
    calls: &[(&str, &str, Value)],
) -> (Value, std::collections::HashMap<String, Value>) {
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp/client.py");
    let wire: Vec<Value> = calls.iter().map(|(_, t, a)| json!([t, a])).collect();
    let o = std::process::Command::new("python3")
        .args([
            client,
            sno_bin().to_str().unwrap(),
            repo.path().to_str().unwrap(),
            &serde_json::to_string(&wire).unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = v["calls"].as_array().unwrap().clone();
    assert_eq!(results.len(), calls.len());
    let by_label = calls
        .iter()
        .zip(results)
        .map(|((label, _, _), r)| (label.to_string(), r))
        .collect();
    (v, by_label)
}

fn ok<'a>(r: &'a std::collections::HashMap<String, Value>, label: &str) -> &'a Value {
    let v = &r[label];
    assert_eq!(v["is_error"], false, "{label} failed: {v}");
    &v["body"]
}

fn err<'a>(r: &'a std::collections::HashMap<String, Value>, label: &str, code: &str) -> &'a Value {
    let v = &r[label];
    assert_eq!(v["is_error"], true, "{label} should fail: {v}");
    let e = &v["body"]["error"];
    assert_eq!(e["code"], code, "{label}: {v}");
    for field in ["message", "llm_hint", "fixability"] {
        assert!(e[field].is_string(), "{label}: contract field {field}: {e}");
    }
    e
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|x| x[key].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_real_mcp_client_calls_every_tool() {
    if !python_has_mcp() {
        return;
    }
    let repo = Repo::new();
    seed_polyglot(&repo);
    let seed = repo.commit("seed");
    let config = std::fs::read_to_string(repo.path().join("app/config.py")).unwrap();
    repo.write(
        "app/config.py",
        format!("{config}\n    def cache(self):\n        return dict(self.values)\n"),
    );
    repo.write("app/main.py", "from app.config import Config\n\n\ndef main():\n    cfg = Config.load(\"settings.json\")\n    print(cfg.cache())\n");
    let cached = repo.commit("Add a cache");
    repo.git(&["revert", "--no-edit", "HEAD"]);
    let head = repo.head();
    let lesson = format!("lsn_{}", &head[..12]);
    repo.sno_json(&["init", "--json"]);
    // An uncommitted edit, for changes against the work tree.
    repo.write(
        "app/util.py",
        "def read_text(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef write_text(path, text):\n    pass\n",
    );

    let calls: Vec<(&str, &str, Value)> = vec![
        ("status", "status", json!({})),
        ("verify", "verify", json!({})),
        (
            "search",
            "search",
            json!({"query": "read a config file", "max_tokens": 800, "format": "json"}),
        ),
        (
            "search_at",
            "search",
            json!({"query": "cache the values", "at": cached, "format": "json"}),
        ),
        ("symbols", "search_symbols", json!({"name": "Config.load"})),
        (
            "symbols_miss",
            "search_symbols",
            json!({"name": "Config.lod"}),
        ),
        ("get_symbol", "get_symbol", json!({"name": "Config.get"})),
        (
            "get_symbol_at",
            "get_symbol",
            json!({"name": "Config.cache", "at": cached}),
        ),
        ("outline", "file_outline", json!({"file": "app/config.py"})),
        (
            "escape",
            "file_outline",
            json!({"file": "../../etc/passwd"}),
        ),
        ("references", "references", json!({"name": "read_text"})),
        (
            "callers",
            "callers",
            json!({"name": "read_text", "depth": 2}),
        ),
        ("callees", "callees", json!({"name": "Config.load"})),
        (
            "search_text",
            "search_text",
            json!({"pattern": "values\\.get\\("}),
        ),
        (
            "bad_regex",
            "search_text",
            json!({"pattern": "values\\.get\\("}),
        ),
        (
            "repo_map",
            "repo_map",
            json!({"files": 3, "format": "json"}),
        ),
        (
            "edit",
            "context_for_edit",
            json!({"file": "app/config.py", "line": 18}),
        ),
        ("changes", "changes", json!({"from": cached})),
        ("worktree", "changes", json!({"to": "worktree"})),
        ("history_file", "history", json!({"file": "app/config.py"})),
        ("history_symbol", "history", json!({"symbol": "Config.get"})),
        ("co_changed", "co_changed", json!({"file": "app/config.py"})),
        (
            "checkpoint",
            "create_checkpoint",
            json!({"name": "cache work", "summary": "cache reverted; retry with invalidation", "files": ["app/config.py"], "tokens_used": 1200}),
        ),
        (
            "decision",
            "log_decision",
            json!({"title": "No caching in Config", "rationale": "values change at runtime", "files": ["app/config.py"]}),
        ),
        (
            "decisions",
            "list_decisions",
            json!({"file": "app/config.py"}),
        ),
        ("pending", "get_pending_memory", json!({})),
        (
            "analysis_miss",
            "submit_lesson_analysis",
            json!({"lesson_id": format!("{lesson}x"), "analysis": "a", "rule": "r"}),
        ),
        (
            "analysis",
            "submit_lesson_analysis",
            json!({"lesson_id": lesson, "analysis": "The cache went stale when values changed.", "rule": "Do not cache Config values without invalidation."}),
        ),
        ("approved_before", "get_approved_memory", json!({})),
        (
            "low",
            "signal_low_context",
            json!({"tokens_used": 90000, "capacity": 100000}),
        ),
        (
            "plenty",
            "signal_low_context",
            json!({"tokens_used": 10, "capacity": 100000}),
        ),
        (
            "syntax_bad",
            "validate_syntax",
            json!({"code": "def f(:\n    pass\n", "language": "python"}),
        ),
        (
            "syntax_file",
            "validate_syntax",
            json!({"file": "app/util.py"}),
        ),
        (
            "syntax_lang",
            "validate_syntax",
            json!({"code": "x", "language": "pyhton"}),
        ),
        (
            "restore_miss",
            "restore_checkpoint",
            json!({"id": "ckpt_nope"}),
        ),
        ("unknown_tool", "serch", json!({"query": "x"})),
        ("misspelled_arg", "search", json!({"quer": "x"})),
        ("wrong_type", "search", json!({"query": 5})),
        ("history", "session_history", json!({"limit": 100})),
        ("info", "session_info", json!({})),
    ];
    // Make the regex call actually bad (kept in the list above for order).
    let calls: Vec<(&str, &str, Value)> = calls
        .into_iter()
        .map(|(l, t, a)| {
            if l == "bad_regex" {
                (l, t, json!({"pattern": "values(("}))
            } else {
                (l, t, a)
            }
        })
        .collect();
    let (v, r) = session(&repo, &calls);

    // Protocol and tools/list.
    assert_eq!(v["server"], "sno");
    let tools = v["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 26, "{:?}", tools.keys());
    for (name, t) in tools {
        assert!(t["schema"]["type"] == "object", "{name} has a schema");
        assert!(
            t["description"].as_str().unwrap().len() > 40,
            "{name} is described for a model"
        );
    }
    assert_eq!(tools["search"]["schema"]["required"], json!(["query"]));
    for read_tool in [
        "search",
        "search_symbols",
        "get_symbol",
        "file_outline",
        "references",
        "callers",
        "callees",
        "search_text",
        "repo_map",
        "context_for_edit",
    ] {
        assert!(
            tools[read_tool]["schema"]["properties"]["at"].is_object(),
            "{read_tool} takes `at`"
        );
    }
    let called: std::collections::HashSet<&str> = calls.iter().map(|c| c.1).collect();
    for name in tools.keys() {
        assert!(
            called.contains(name.as_str()),
            "{name} is called by this test"
        );
    }

    // State.
    assert_eq!(ok(&r, "status")["as_of"]["commit"], head);
    assert_eq!(ok(&r, "verify")["ok"], true);

    // Retrieval.
    let search = ok(&r, "search");
    assert!(
        names(&search["items"], "qualified_name").contains(&"Config.load".to_string()),
        "{search}"
    );
    assert!(search["header"]["completeness"]["tokens"].as_u64().unwrap() <= 800);
    let at = ok(&r, "search_at");
    assert_eq!(at["header"]["as_of"]["commit"], cached);
    assert!(
        names(&at["items"], "qualified_name").contains(&"Config.cache".to_string()),
        "{at}"
    );
    assert_eq!(ok(&r, "symbols")["results"][0]["path"], "app/config.py");
    let miss = err(&r, "symbols_miss", "SNO-UNKNOWN-SYMBOL");
    assert!(
        names(
            &json!(miss["did_you_mean"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| json!({"n": n}))
                .collect::<Vec<_>>()),
            "n"
        )
        .contains(&"Config.load".to_string()),
        "{miss}"
    );
    assert!(ok(&r, "get_symbol")["source"]
        .as_str()
        .unwrap()
        .contains("self.values.get(key)"));
    assert_eq!(ok(&r, "get_symbol_at")["as_of"]["commit"], cached);
    err(&r, "bad_regex", "SNO-BAD-REGEX");
    assert_eq!(ok(&r, "outline")["outline"][0]["name"], "Config");
    err(&r, "escape", "SNO-PATH-OUTSIDE");
    assert!(ok(&r, "references")["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["path"] == "app/config.py"));
    let callers: Vec<(String, u64)> = ok(&r, "callers")["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["heuristic"] == false)
        .map(|x| {
            (
                x["from"].as_str().unwrap_or("").to_string(),
                x["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        callers.contains(&("Config.load".into(), 1)) && callers.contains(&("main".into(), 2)),
        "{callers:?}"
    );
    assert!(names(&ok(&r, "callees")["results"], "to").contains(&"read_text".to_string()));
    assert_eq!(ok(&r, "search_text")["results"][0]["symbol"], "Config.get");
    assert_eq!(ok(&r, "repo_map")["files"].as_array().unwrap().len(), 3);

    let edit = ok(&r, "edit");
    assert_eq!(edit["enclosing"]["qualified_name"], "Config.get", "{edit}");
    assert!(
        names(&edit["siblings"], "name").contains(&"Config.load".to_string()),
        "{edit}"
    );
    let changes = ok(&r, "changes");
    assert!(
        changes["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["change"] == "removed" && c["qualified_name"] == "Config.cache"),
        "{changes}"
    );
    let wt = ok(&r, "worktree");
    assert_eq!(wt["to"], "worktree");
    assert!(
        wt["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["change"] == "added" && c["name"] == "write_text"),
        "{wt}"
    );
    let hist: Vec<String> = names(&ok(&r, "history_file")["commits"], "summary");
    assert_eq!(
        hist,
        ["seed", "Add a cache", "Revert \"Add a cache\""],
        "{hist:?}"
    );
    let hs = ok(&r, "history_symbol");
    assert_eq!(hs["commits"][0]["commit"], seed);
    assert_eq!(hs["commits"][0]["change"], "symbol added");
    let co = ok(&r, "co_changed");
    assert_eq!(co["co_changed"][0]["path"], "app/main.py", "{co}");

    // Memory, written to the journal.
    let checkpoint = ok(&r, "checkpoint")["checkpoint"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(checkpoint.starts_with("ckpt_"));
    assert_eq!(ok(&r, "checkpoint")["checkpoint"]["bound"]["commit"], head);
    assert_eq!(
        ok(&r, "decisions")["decisions"][0]["title"],
        "No caching in Config"
    );
    let pending = ok(&r, "pending");
    assert_eq!(pending["lessons"][0]["id"], lesson, "{pending}");
    assert_eq!(pending["lessons"][0]["reverted"], cached);
    assert_eq!(
        pending["lessons"][0]["files"],
        json!(["app/config.py", "app/main.py"])
    );
    let miss = err(&r, "analysis_miss", "SNO-UNKNOWN-MEMORY");
    assert_eq!(miss["did_you_mean"], json!([lesson]));
    assert_eq!(ok(&r, "analysis")["lesson"]["status"], "analysed");
    let before = ok(&r, "approved_before");
    assert_eq!(before["lessons"], json!([]), "not approved by a human yet");
    assert_eq!(before["decisions"].as_array().unwrap().len(), 1);
    assert_eq!(ok(&r, "low")["recommend_checkpoint"], true);
    assert_eq!(ok(&r, "plenty")["recommend_checkpoint"], false);

    // Syntax.
    let bad = ok(&r, "syntax_bad");
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["diagnostics"][0]["line"], 1);
    assert_eq!(ok(&r, "syntax_file")["ok"], true);
    let lang = err(&r, "syntax_lang", "SNO-UNSUPPORTED-LANGUAGE");
    assert_eq!(lang["did_you_mean"][0], "python");

    // Error contract on bad calls.
    assert_eq!(
        err(&r, "restore_miss", "SNO-UNKNOWN-MEMORY")["did_you_mean"],
        json!([checkpoint])
    );
    let unknown = r["unknown_tool"]["rpc_error"].as_str().unwrap();
    assert!(unknown.contains("serch"), "{unknown}");
    assert_eq!(
        err(&r, "misspelled_arg", "SNO-BAD-ARGS")["did_you_mean"],
        json!(["query"])
    );
    err(&r, "wrong_type", "SNO-BAD-ARGS");

    // The session saw all of it.
    let transcript = ok(&r, "history");
    let tools_called = names(&transcript["calls"], "tool");
    assert_eq!(tools_called.first().map(String::as_str), Some("status"));
    assert_eq!(
        tools_called.len(),
        calls.len() - 2,
        "every call before this one"
    );
    let info = ok(&r, "info");
    let session_id = info["id"].as_str().unwrap().to_string();
    assert_eq!(info["calls"].as_u64().unwrap(), calls.len() as u64 - 1);
    assert!(info["errors"].as_u64().unwrap() >= 9, "{info}");
    assert!(info["cache_hits"].as_u64().unwrap() >= 10, "{info}");

    // A human approves the lesson; a new server (a restart) sees it, restores
    // the checkpoint and finds the first session by id.
    let o = repo.sno(&["lessons", "approve", &lesson, "--note", "agreed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, r2) = session(
        &repo,
        &[
            ("restore", "restore_checkpoint", json!({"id": checkpoint})),
            (
                "approved",
                "get_approved_memory",
                json!({"file": "app/config.py"}),
            ),
            (
                "edit",
                "context_for_edit",
                json!({"file": "app/config.py", "line": 18}),
            ),
            (
                "old_session",
                "session_info",
                json!({"session_id": session_id}),
            ),
            (
                "old_history",
                "session_history",
                json!({"session_id": session_id, "limit": 3}),
            ),
            (
                "bad_session",
                "session_info",
                json!({"session_id": "01NOSUCHSESSION"}),
            ),
        ],
    );
    let restore = ok(&r2, "restore");
    assert_eq!(
        restore["checkpoint"]["summary"],
        "cache reverted; retry with invalidation"
    );
    assert_eq!(
        restore["decisions_since"][0]["title"],
        "No caching in Config"
    );
    assert_eq!(restore["head_moved"], false);
    let approved = ok(&r2, "approved");
    assert_eq!(
        approved["lessons"][0]["rule"],
        "Do not cache Config values without invalidation."
    );
    let edit = ok(&r2, "edit");
    assert_eq!(edit["lessons"][0]["id"], lesson);
    assert_eq!(edit["decisions"][0]["title"], "No caching in Config");
    let old = ok(&r2, "old_session");
    assert_eq!(old["calls"].as_u64().unwrap(), calls.len() as u64);
    assert_eq!(old["current"], false);
    assert_eq!(
        old["client"].as_str().unwrap().split(' ').next(),
        Some("mcp")
    );
    assert_eq!(
        names(&ok(&r2, "old_history")["calls"], "tool"),
        ["wrong_type", "history", "info"].map(|l| calls
            .iter()
            .find(|c| c.0 == l)
            .unwrap()
            .1
            .to_string())
    );
    err(&r2, "bad_session", "SNO-UNKNOWN-SESSION");

    // The audit has every call and every retrieval.
    let audit = repo.sno_json(&["audit", "--json", "--tail", "1000"]);
    let entries = audit.as_array().unwrap();
    let tool_calls: Vec<&Value> = entries
        .iter()
        .filter_map(|e| e["entry"].get("ToolCall"))
        .collect();
    assert_eq!(tool_calls.len(), calls.len() + 6);
    assert!(tool_calls
        .iter()
        .any(|c| c["tool"] == "serch" && c["error"] == "SNO-UNKNOWN-TOOL"));
    assert!(tool_calls
        .iter()
        .all(|c| c["args_digest"].as_str().unwrap().len() == 16));
    let retrievals: Vec<&Value> = entries
        .iter()
        .filter_map(|e| e["entry"].get("Retrieval"))
        .collect();
    assert!(
        retrievals.iter().any(|q| q["query"] == "read a config file"
            && q["hits"].as_u64().unwrap() > 0
            && q["top_score"].as_f64().unwrap() > 0.0),
        "{retrievals:?}"
    );
    // Memory is in the journal, and the journal still verifies.
    let log = repo.sno_json(&["journal", "log", "--json"]);
    let kinds: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for k in [
        "LessonProposed",
        "CheckpointCreated",
        "DecisionLogged",
        "LessonAnalysisSubmitted",
        "LessonReviewed",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "{}", stdout(&o));
}

/// `history` and `co_changed` on a server that has not loaded its head
/// read only the file's record, or those of the files defining the name,
/// and answer as a server whose head is loaded (by `search_text`) does.
#[test]
fn history_answers_from_the_files_it_names_as_from_the_whole_state() {
    if !python_has_mcp() {
        return;
    }
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    let config = std::fs::read_to_string(repo.path().join("app/config.py")).unwrap();
    repo.write(
        "app/config.py",
        format!("{config}\n    def cache(self):\n        return dict(self.values)\n"),
    );
    repo.write(
        "app/main.py",
        "from app.config import Config\n\n\ndef main():\n    return Config.load(\"s.json\").cache()\n",
    );
    repo.commit("Add a cache");
    repo.sno_json(&["init", "--json"]);
    let asked = [
        ("file", "history", json!({"file": "app/config.py"})),
        ("symbol", "history", json!({"symbol": "Config.cache"})),
        ("gone", "history", json!({"file": "app/nowhere.py"})),
        ("co", "co_changed", json!({"file": "app/main.py"})),
        ("co_gone", "co_changed", json!({"file": "app/nowhere.py"})),
    ];
    let (_, point) = session(&repo, &asked);
    let mut loaded_first = vec![("loaded", "search_text", json!({"pattern": "def "}))];
    loaded_first.extend(asked.iter().cloned());
    let (_, whole) = session(&repo, &loaded_first);
    for (label, _, _) in &asked {
        assert_eq!(point[*label], whole[*label], "{label}");
    }
    assert_eq!(ok(&point, "symbol")["commits"][0]["change"], "symbol added");
    assert_eq!(ok(&point, "co")["co_changed"][0]["path"], "app/config.py");
    err(&point, "gone", "SNO-UNKNOWN-FILE");
}
