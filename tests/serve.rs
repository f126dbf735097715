//! `sno serve` through a real MCP client: the official Python SDK
//! (`pip install mcp`; `.ci/run` installs it).

mod support;

use support::*;

fn python_has_mcp() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_real_mcp_client_lists_and_calls_the_tools() {
    if !python_has_mcp() {
        // CI installs the SDK, so there this is a failure, not a skip.
        assert!(
            std::env::var("CI").is_err(),
            "the MCP Python SDK is missing in CI"
        );
        eprintln!("python3 has no `mcp` package (pip install mcp): skipped");
        return;
    }
    let repo = Repo::new();
    seed_polyglot(&repo);
    let head = repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp/client.py");
    let o = std::process::Command::new("python3")
        .args([
            client,
            sno_bin().to_str().unwrap(),
            repo.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();

    assert_eq!(v["server"], "sno");
    for tool in [
        "status",
        "search",
        "search_symbols",
        "file_outline",
        "references",
        "callers",
        "callees",
        "search_text",
        "repo_map",
    ] {
        assert!(
            v["tools"][tool].is_object(),
            "tool {tool} listed with a schema: {}",
            v["tools"]
        );
    }
    assert_eq!(
        v["tools"]["search"]["required"],
        serde_json::json!(["query"])
    );

    assert_eq!(v["status"]["is_error"], false);
    assert_eq!(v["status"]["body"]["as_of"]["commit"], head);
    assert_eq!(v["search"]["is_error"], false);
    let items = v["search"]["body"]["items"].as_array().unwrap();
    assert!(
        items.iter().any(|i| i["qualified_name"] == "Config.load"),
        "{}",
        v["search"]
    );
    assert!(
        v["search"]["body"]["header"]["completeness"]["tokens"]
            .as_u64()
            .unwrap()
            <= 800
    );
    assert_eq!(v["search_symbols"]["body"][0]["path"], "app/config.py");
    assert_eq!(v["file_outline"]["body"][0]["name"], "Config");

    let callers: Vec<(&str, u64)> = v["callers"]["body"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["heuristic"] == false)
        .map(|r| {
            (
                r["from"].as_str().unwrap_or(""),
                r["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        callers.contains(&("Config.load", 1)) && callers.contains(&("main", 2)),
        "{callers:?}"
    );
    assert!(v["callees"]["body"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["to"] == "read_text"));
    assert!(v["references"]["body"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["path"] == "app/config.py"));
    assert_eq!(
        v["search_text"]["body"]["results"][0]["symbol"], "Config.get",
        "{}",
        v["search_text"]
    );
    assert_eq!(v["repo_map"]["body"].as_array().unwrap().len(), 3);

    // The error contract, through the protocol.
    assert_eq!(v["unknown_symbol"]["is_error"], true);
    let e = &v["unknown_symbol"]["body"]["error"];
    assert_eq!(e["code"], "SNO-UNKNOWN-SYMBOL");
    assert!(
        e["did_you_mean"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "Config.load"),
        "{e}"
    );
    assert_eq!(v["escape"]["body"]["error"]["code"], "SNO-PATH-OUTSIDE");
    assert!(
        v["unknown_tool"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("tool"),
        "{}",
        v["unknown_tool"]
    );
}
