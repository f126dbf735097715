//! Memory events are bounded: oversized titles, rationales, analyses and
//! file lists are refused with a contract error before anything is written,
//! lists come in pages, and long texts are shown cut.

mod support;

use serde_json::json;
use support::*;

fn indexed() -> Repo {
    let repo = Repo::new();
    repo.write("app.py", "def f():\n    return 1\n");
    repo.commit("first");
    repo.sno_json(&["init", "--json"]);
    repo
}

#[test]
fn oversized_memory_is_refused_and_lists_are_paged() {
    let repo = indexed();
    let mut s = Server::init(&repo, "2025-06-18").0;
    let before = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    for (tool, args) in [
        (
            "log_decision",
            json!({"title": "x".repeat(10 << 20), "rationale": "r"}),
        ),
        (
            "log_decision",
            json!({"title": "t", "rationale": "r".repeat(17 * 1024)}),
        ),
        (
            "log_decision",
            json!({"title": "t", "rationale": "r", "files": vec!["app.py"; 201]}),
        ),
        (
            "create_checkpoint",
            json!({"name": "n".repeat(5000), "summary": "s"}),
        ),
    ] {
        let r = s.call(tool, args);
        let b = body(&r);
        assert_eq!(b["error"]["code"], "SNO-TOO-LARGE", "{tool}: {b}");
        assert!(b["error"]["llm_hint"]
            .as_str()
            .unwrap()
            .contains("Nothing was written"));
    }
    let after = repo.sno_json(&["journal", "log", "--json", "--tail", "1000"]);
    assert_eq!(before, after, "nothing was journaled");

    for i in 0..7 {
        let r = s.call(
            "log_decision",
            json!({"title": format!("decision {i}"), "rationale": "why", "files": ["app.py"]}),
        );
        assert_ne!(r["result"]["isError"], true, "{r}");
    }
    let titles = |v: &serde_json::Value| -> Vec<String> {
        v["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["title"].as_str().unwrap().to_string())
            .collect()
    };
    let p1 = body(&s.call("list_decisions", json!({"limit": 3})));
    assert_eq!(
        titles(&p1),
        ["decision 4", "decision 5", "decision 6"],
        "{p1}"
    );
    assert_eq!(p1["page"]["total"], 7);
    assert_eq!(p1["page"]["next_offset"], 3);
    let p2 = body(&s.call("list_decisions", json!({"limit": 3, "offset": 3})));
    assert_eq!(titles(&p2), ["decision 1", "decision 2", "decision 3"]);
    let p3 = body(&s.call("list_decisions", json!({"limit": 3, "offset": 6})));
    assert_eq!(titles(&p3), ["decision 0"]);
    assert_eq!(p3["page"]["next_offset"], json!(null));
    let a = body(&s.call("get_approved_memory", json!({"file": "app.py", "limit": 2})));
    assert_eq!(titles(&a), ["decision 5", "decision 6"], "{a}");
    let p = body(&s.call("get_pending_memory", json!({})));
    assert_eq!(p["page"]["total"], 0, "{p}");
    s.finish();
}

#[test]
fn journal_log_says_what_it_leaves_out_and_cuts_long_texts() {
    let repo = Repo::new();
    repo.write("a.py", "A = 1\n");
    repo.commit(&format!("huge subject {}", "y".repeat(20_000)));
    for i in 0..3 {
        repo.write("a.py", format!("A = {i}\n"));
        repo.commit(&format!("edit {i}"));
    }
    repo.sno_json(&["init", "--json"]);
    let out = repo.sno(&["journal", "log", "--tail", "2"]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("showing the last 2 of"),
        "{}",
        stderr(&out)
    );
    let out = repo.sno(&["journal", "log"]);
    let text = stdout(&out);
    let long = text.lines().find(|l| l.contains("huge subject")).unwrap();
    assert!(long.len() < 400, "{}", long.len());
    assert!(long.contains("more bytes not shown"), "{long}");

    // `--tail 0` would show nothing and call the trail empty: refused.
    for cmd in [
        &["journal", "log", "--tail", "0"][..],
        &["audit", "--tail", "0"],
    ] {
        let out = repo.sno(cmd);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {}", stdout(&out));
        assert!(stderr(&out).contains("--tail"), "{}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}
