//! `[serve] memory_mb`: what the daemon holds beyond the indexed head is
//! bounded. Past states (`at`) are dropped least recently used first past
//! the budget, and reloaded from the journal when asked for again, with
//! the same answers.

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
    // A budget of nothing: only the head's state is ever held.
    repo.write(".sno/config.toml", "[serve]\nmemory_mb = 0\n");

    let mut server = Server::start_with(&repo, &[("SNO_LOG", "sno_engine=debug")]);
    server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
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
}
