//! `sno mcp config`: the block for each client, merged into config files
//! without losing what is there, and a command line that really serves.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{json, Value};
use support::*;

const CLIENTS: [&str; 6] = [
    "claude-desktop",
    "claude-code",
    "cursor",
    "codex",
    "zed",
    "cline",
];

/// (command, args) of the `sno` entry in a printed or written block.
fn launch_of(client: &str, text: &str) -> (String, Vec<String>) {
    let entry: Value = if client == "codex" {
        let t: toml::Value = toml::from_str(text).unwrap();
        serde_json::to_value(&t["mcp_servers"]["sno"]).unwrap()
    } else {
        let v: Value = serde_json::from_str(text).unwrap();
        let key = if client == "zed" {
            "context_servers"
        } else {
            "mcpServers"
        };
        v[key]["sno"].clone()
    };
    let args = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    (entry["command"].as_str().unwrap().to_string(), args)
}

#[test]
fn every_client_gets_a_block_whose_command_serves_the_repository() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let root = repo.path().canonicalize().unwrap();
    for client in CLIENTS {
        let o = repo.sno(&["mcp", "config", "--client", client]);
        assert!(o.status.success(), "{client}: {}", stderr(&o));
        let (command, args) = launch_of(client, &stdout(&o));
        assert_eq!(args, ["serve", root.to_str().unwrap()], "{client}");
        assert!(
            std::path::Path::new(&command).is_absolute(),
            "{client}: {command}"
        );
        // What the client would run answers an MCP initialize.
        let mut child = std::process::Command::new(&command)
            .args(&args)
            .env("SNO_OFFLINE", "1")
            .env("HF_HOME", "/nonexistent/sno-tests-hf-home")
            .env("SNO_SERVE_IDLE_SECS", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}})
        )
        .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let r: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(r["result"]["serverInfo"]["name"], "sno", "{client}: {r}");
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn write_merges_into_existing_config_files_and_refuses_what_it_cannot_merge() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    let dir = tempfile::tempdir().unwrap();

    // JSON: other servers and settings are kept; writing twice changes nothing.
    let desktop = dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &desktop,
        r#"{"globalShortcut": "Ctrl+Space", "mcpServers": {"files": {"command": "npx", "args": ["x"]}}}"#,
    )
    .unwrap();
    let f = desktop.to_str().unwrap();
    for _ in 0..2 {
        let o = repo.sno(&[
            "mcp",
            "config",
            "--client",
            "claude-desktop",
            "--write",
            "--file",
            f,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&desktop).unwrap()).unwrap();
    assert_eq!(v["globalShortcut"], "Ctrl+Space");
    assert_eq!(v["mcpServers"]["files"]["command"], "npx");
    assert_eq!(v["mcpServers"]["sno"]["args"][0], "serve");
    assert_eq!(v["mcpServers"].as_object().unwrap().len(), 2);

    // TOML (Codex), in its default place under HOME: comments survive.
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(
        home.join(".codex/config.toml"),
        "# my settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
    )
    .unwrap();
    let o = sno_in(
        repo.path(),
        &["mcp", "config", "--client", "codex", "--write"],
        &[("HOME", home.to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert!(text.starts_with("# my settings\nmodel = \"o3\""), "{text}");
    let (command, args) = launch_of("codex", &text);
    assert_eq!(args[0], "serve");
    assert!(command.ends_with("sno"));
    assert!(text.contains("[mcp_servers.docs]"));

    // Servers written as an inline table get sno's entry inline: written,
    // not only reported so.
    let inline = dir.path().join("inline.toml");
    std::fs::write(
        &inline,
        "mcp_servers = { docs = { command = \"docs-mcp\" } }\n",
    )
    .unwrap();
    let o = repo.sno(&[
        "mcp",
        "config",
        "--client",
        "codex",
        "--write",
        "--file",
        inline.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&inline).unwrap();
    let (command, args) = launch_of("codex", &text);
    assert_eq!(args[0], "serve", "{text}");
    assert!(command.ends_with("sno"));
    assert!(text.contains("docs-mcp"), "{text}");

    // Claude Code's project file lands in the repository.
    let o = repo.sno(&["mcp", "config", "--client", "claude-code", "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(v["mcpServers"]["sno"]["type"], "stdio");

    // JSON with comments (Zed allows them) is refused and left untouched.
    let zed = dir.path().join("settings.json");
    let original = "// Zed settings\n{\n  \"theme\": \"One Dark\",\n}\n";
    std::fs::write(&zed, original).unwrap();
    let o = repo.sno(&[
        "mcp",
        "config",
        "--client",
        "zed",
        "--write",
        "--file",
        zed.to_str().unwrap(),
    ]);
    assert_error_code(&o, "SNO-CONFIG-UNMERGEABLE");
    assert_eq!(std::fs::read_to_string(&zed).unwrap(), original);

    // A byte-order mark (Notepad writes one) is read past and kept.
    let bom = dir.path().join("bom.json");
    std::fs::write(
        &bom,
        "\u{feff}{\"mcpServers\": {\"files\": {\"command\": \"npx\"}}}",
    )
    .unwrap();
    let o = repo.sno(&[
        "mcp",
        "config",
        "--client",
        "cursor",
        "--write",
        "--file",
        bom.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&bom).unwrap();
    let json = text.strip_prefix('\u{feff}').expect("the mark is kept");
    let v: Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["mcpServers"]["files"]["command"], "npx");
    assert_eq!(v["mcpServers"]["sno"]["args"][0], "serve");
}

/// The `env` table of the `sno` entry, if any.
fn env_of(client: &str, text: &str) -> Value {
    if client == "codex" {
        let t: toml::Value = toml::from_str(text).unwrap();
        serde_json::to_value(&t["mcp_servers"]["sno"]).unwrap()["env"].clone()
    } else {
        let v: Value = serde_json::from_str(text).unwrap();
        let key = if client == "zed" {
            "context_servers"
        } else {
            "mcpServers"
        };
        v[key]["sno"]["env"].clone()
    }
}

#[test]
fn the_block_carries_the_model_or_says_search_would_have_none() {
    let repo = Repo::new();
    repo.write("a.py", "def f():\n    pass\n");
    repo.commit("seed");
    let model = tempfile::tempdir().unwrap();
    std::fs::write(model.path().join("model.safetensors"), b"").unwrap();
    let model_dir = model.path().canonicalize().unwrap().display().to_string();
    for client in CLIENTS {
        let o = sno_in(
            repo.path(),
            &["mcp", "config", "--client", client],
            &[("SNO_MODEL", &model_dir)],
        );
        assert!(o.status.success(), "{client}: {}", stderr(&o));
        assert_eq!(
            env_of(client, &stdout(&o))["SNO_MODEL"],
            model_dir.as_str(),
            "{client}"
        );
    }
    // No model anywhere, none in the cache: the user is told, once.
    let mut c = sno_command();
    c.env_remove("SNO_MODEL")
        .args(["mcp", "config", "--client", "cursor"])
        .current_dir(repo.path());
    let o = c.output().unwrap();
    assert!(o.status.success());
    assert!(stderr(&o).contains("lexical search"), "{}", stderr(&o));
    assert!(env_of("cursor", &stdout(&o)).is_null(), "{}", stdout(&o));
}
