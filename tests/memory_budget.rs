//! `[serve] memory_mb`: the states the daemon holds are bounded. The
//! head's comes first; past states (`at`) are dropped least recently used
//! first past the budget, and reloaded from the journal when asked for
//! again, with the same answers. A head past the budget is searched from
//! its stored parts.

mod support;

use serde_json::json;
use support::*;

#[test]
fn past_states_past_the_budget_are_dropped_and_answer_alike_when_asked_again() {
    let repo = Repo::new();
    let mut commits = Vec::new();
    for (i, name) in ["settle_invoice", "refund_order", "archive_ledger"]
        .iter()
        .enumerate()
    {
        repo.write(
            "billing/ops.py",
            format!("def {name}(x):\n    \"\"\"Step {i} of billing.\"\"\"\n    return x\n"),
        );
        commits.push((repo.commit(&format!("step {i}")), *name));
    }
    repo.write("billing/ops.py", "def close_books(x):\n    return x\n");
    repo.commit("head");
    repo.sno_json(&["init", "--json"]);
    // A budget of nothing: no state is held.
    repo.write(".sno/config.toml", "[serve]\nmemory_mb = 0\n");

    let mut server = Server::start_with(&repo, &[("SNO_LOG", "sno_engine=debug")]);
    server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    // The head's state is not held either: once its search parts are
    // stored, the head is searched from them, with the same answers.
    let head_items: Vec<String> = (0..2)
        .map(|_| {
            let r = server.call(
                "search",
                json!({"query": "close books", "format": "json", "max_tokens": 800}),
            );
            let v: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
            assert_eq!(v["items"][0]["qualified_name"], "close_books", "{v}");
            v["items"].to_string()
        })
        .collect();
    assert_eq!(head_items[0], head_items[1]);
    let mut first: Vec<String> = Vec::new();
    for round in 0..2 {
        for (k, (commit, name)) in commits.iter().enumerate() {
            let r = server.call(
                "search",
                json!({"query": name, "at": commit, "format": "json", "max_tokens": 800}),
            );
            let v: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
            assert_eq!(v["header"]["as_of"]["commit"], *commit, "{v}");
            assert_eq!(v["items"][0]["qualified_name"], *name, "{v}");
            // Reloaded, the state answers as it did.
            let items = v["items"].to_string();
            if round == 0 {
                first.push(items);
            } else {
                assert_eq!(items, first[k], "{commit}");
            }
        }
    }
    server.finish();
    let log = std::fs::read_to_string(repo.path().join(".sno/logs/serve.log")).unwrap();
    assert!(log.contains("past states evicted"), "{log}");
    assert!(log.contains("head searched from its stored parts"), "{log}");
}
