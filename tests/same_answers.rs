//! The CLI and MCP are two front ends over one engine: the same question
//! gets the same answer from `sno <command> --json` and from the tool.

mod support;

use serde_json::{json, Value};
use support::*;

fn fixture() -> (Repo, String) {
    let repo = Repo::new();
    seed_polyglot(&repo);
    let first = repo.commit("seed");
    repo.write(
        "app/util.py",
        "def read_text(path):\n    \"\"\"Return the file's text.\"\"\"\n    with open(path) as f:\n        return f.read()\n\n\ndef write_text(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n",
    );
    repo.commit("Add write_text");
    repo.sno_json(&["init", "--json"]);
    (repo, first)
}

#[test]
fn cli_json_and_mcp_tools_answer_alike() {
    let (repo, first) = fixture();
    let range = format!("{first}..");
    // (CLI arguments, tool, tool arguments)
    let cases: Vec<(Vec<&str>, &str, Value)> = vec![
        (
            vec!["symbol", "Config.load"],
            "search_symbols",
            json!({"name": "Config.load"}),
        ),
        (
            vec!["symbol", "read"],
            "search_symbols",
            json!({"name": "read"}),
        ),
        (
            vec!["show", "Config.get"],
            "get_symbol",
            json!({"name": "Config.get"}),
        ),
        (
            vec!["outline", "app/config.py"],
            "file_outline",
            json!({"file": "app/config.py"}),
        ),
        (
            vec!["refs", "read_text", "--callers"],
            "callers",
            json!({"name": "read_text"}),
        ),
        (
            vec!["refs", "Config.load", "--callees"],
            "callees",
            json!({"name": "Config.load"}),
        ),
        (
            vec!["refs", "Config"],
            "references",
            json!({"name": "Config"}),
        ),
        (
            vec!["grep", "def "],
            "search_text",
            json!({"pattern": "def "}),
        ),
        (vec!["changes", &range], "changes", json!({"from": first})),
        (
            vec!["map", "--max-tokens", "800", "--per-file", "3"],
            "repo_map",
            json!({"max_tokens": 800, "per_file": 3, "format": "json"}),
        ),
        (
            vec!["search", "load the configuration file", "--lexical-only"],
            "search",
            json!({"query": "load the configuration file", "lexical_only": true, "format": "json"}),
        ),
    ];
    let mut server = Server::init(&repo, "2025-06-18").0;
    for (args, tool, targs) in cases {
        let mut cli_args = args.clone();
        cli_args.push("--json");
        let cli = repo.sno_json(&cli_args);
        let mcp = body(&server.call(tool, targs.clone()));
        assert_eq!(
            cli,
            mcp,
            "`sno {}` and {tool} {targs} disagree",
            args.join(" ")
        );
        assert!(
            !cli.is_null() && cli.as_object().is_some_and(|o| !o.is_empty()),
            "{cli}"
        );
    }
    // Errors too: the same contract.
    let cli = repo.sno(&["show", "nothing_here", "--json"]);
    let mcp = body(&server.call("get_symbol", json!({"name": "nothing_here"})));
    assert!(
        stderr(&cli).contains(mcp["error"]["code"].as_str().unwrap()),
        "{mcp}"
    );
    server.finish();
}
