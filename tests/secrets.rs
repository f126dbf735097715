//! Secret values inside ordinary source files are masked in everything sno
//! stores, serves and embeds: a seeded corpus, every read tool of the MCP
//! server and every read command of the CLI, zero leaks; search still finds
//! the code around them; `status` counts them; a switch turns it off.

mod support;

use serde_json::{json, Value};
use support::*;

/// (distinctive part of the secret, rule that masks it)
const SECRETS: &[(&str, &str)] = &[
    ("AKIAQ3EGUIDEXAMPL3ZZ", "aws-key"),
    ("ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ", "github-token"),
    ("Zk8pQ2vL9xW", "url-password"),
    ("MIIEowIBAAKCAQEAs3cr3tK3yMat3r1alXYZ", "private-key"),
    ("xoxb-2048-9921-Zq8LmN3pR7sT", "slack-token"),
    ("q9T4mZ2xL7pR1vB8", "assigned-secret"),
    // `$`, `%` and `*` are a password's characters too, not a template's.
    ("Xk8mP2vL$9qR4aZ7b", "assigned-secret"),
    // Bare values with more text after them on their line.
    ("Wq7rT2mK9vB4nX6zL", "assigned-secret"),
    ("Hn3vR8kP2wQ6mZ9xT", "assigned-secret"),
    ("3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e", "bearer-token"),
];

fn seeded() -> Repo {
    let repo = Repo::new();
    repo.write(
        "app/settings.py",
        r#"AWS_ACCESS_KEY_ID = "AKIAQ3EGUIDEXAMPL3ZZ"
GITHUB_TOKEN = "ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ"
DATABASE_URL = "postgres://admin:Zk8pQ2vL9xW@db.internal:5432/app"
DB_PASSWORD = "Xk8mP2vL$9qR4aZ7b"
PRIVATE_KEY = """-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAs3cr3tK3yMat3r1alXYZ
c2VjcmV0IGtleSBtYXRlcmlhbCBoZXJl
-----END RSA PRIVATE KEY-----"""


def load_settings(env):
    """Read the service settings: database address and the GitHub token."""
    return {"db": DATABASE_URL, "token": GITHUB_TOKEN, "key": PRIVATE_KEY}


def connect_database():
    """Open a connection to the configured database."""
    return load_settings({})["db"]
"#,
    );
    repo.write(
        "app/client.go",
        "package app\n\nconst apiSecret = \"q9T4mZ2xL7pR1vB8\"\n\n// Sign adds the shared secret to a request.\nfunc Sign(req string) string { return req + apiSecret }\n",
    );
    repo.write(
        "config/slack.yaml",
        "notify:\n  channel: builds\n  slack_token: xoxb-2048-9921-Zq8LmN3pR7sT\n",
    );
    repo.write(
        "deploy/release.sh",
        "#!/bin/sh\nexport DB_PASSWORD=Hn3vR8kP2wQ6mZ9xT; migrate\nmysql -u root --password=Wq7rT2mK9vB4nX6zL app < schema.sql\ncurl -H 'Authorization: Bearer 3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e' https://api.internal/deploy\n",
    );
    repo.commit("settings with secrets in them");
    repo
}

fn assert_no_leak(what: &str, text: &str) {
    for (s, _) in SECRETS {
        assert!(!text.contains(s), "{what} leaked {s}:\n{text}");
    }
}

fn body(r: &Value) -> Value {
    support::body(r)
}

#[test]
fn no_read_tool_serves_a_secret_and_search_still_finds_the_code() {
    let repo = seeded();
    let out = repo.sno(&["init", "--history", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Nothing stored holds them: the database, the caches.
    for entry in walk(&repo.path().join(".sno")) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert_no_leak(&format!("stored file {}", entry.display()), &text);
    }

    let status = repo.status();
    assert_eq!(status["secrets"]["masking"], true, "{status}");
    assert_eq!(
        status["secrets"]["masked"], 9,
        "parsed files' values: {status}"
    );
    assert_eq!(status["secrets"]["files"], 3, "{status}");

    let mut s = Server::init(&repo, "2025-06-18").0;
    let mut calls: Vec<(&str, Value)> = vec![
        ("search_symbols", json!({"name": "GITHUB"})),
        ("search_symbols", json!({"name": "apiSecret"})),
        ("file_outline", json!({"file": "app/settings.py"})),
        ("file_outline", json!({"file": "app/client.go"})),
        (
            "context_for_edit",
            json!({"file": "app/settings.py", "line": 2}),
        ),
        ("repo_map", json!({})),
        ("changes", json!({"to": "worktree"})),
        ("status", json!({})),
    ];
    for name in [
        "GITHUB_TOKEN",
        "PRIVATE_KEY",
        "DATABASE_URL",
        "AWS_ACCESS_KEY_ID",
        "load_settings",
        "apiSecret",
        "app/settings.py:4",
    ] {
        calls.push(("get_symbol", json!({"name": name})));
    }
    for pattern in [
        "ghp_",
        "AKIA",
        "xox",
        "BEGIN",
        "postgres",
        "Zk8",
        ".*",
        "[A-Za-z0-9]{16}",
    ] {
        calls.push(("search_text", json!({"pattern": pattern, "limit": 1000})));
    }
    for q in [
        "github token",
        "database url password",
        "private key",
        "slack token",
        "aws access key",
        "api secret",
        "load settings",
    ] {
        calls.push(("search", json!({"query": q, "max_tokens": 4000})));
    }
    for (tool, args) in &calls {
        let r = s.call(tool, args.clone());
        assert_ne!(r["result"]["isError"], true, "{tool} {args}: {r}");
        assert_no_leak(&format!("{tool} {args}"), &r.to_string());
    }
    // Search finds the code around a secret and shows where it was masked.
    let r = s.call(
        "search",
        json!({"query": "github token", "max_tokens": 4000, "format": "json"}),
    );
    let pkg = body(&r);
    let names: Vec<&str> = pkg["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["qualified_name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"GITHUB_TOKEN"), "{names:?}");
    let source = pkg["items"][names.iter().position(|n| *n == "GITHUB_TOKEN").unwrap()]["source"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(source.contains("«redacted:github-token»"), "{source}");
    assert!(!source.contains("ghp_"), "{source}");
    // The markdown an agent reads by default, too.
    let md = text(&s.call(
        "search",
        json!({"query": "github token", "max_tokens": 4000}),
    ));
    assert!(
        md.contains("«redacted:github-token»") && !md.contains("ghp_"),
        "{md}"
    );
    // A pattern search cannot probe a secret: it runs over masked text.
    let r = s.call("search_text", json!({"pattern": "ghp_R8"}));
    assert_eq!(body(&r)["results"], json!([]), "{r}");
    let r = s.call("search_text", json!({"pattern": "redacted:slack-token"}));
    assert_eq!(body(&r)["results"][0]["path"], "config/slack.yaml", "{r}");
    // A syntax check's diagnostics quote the source: masked too.
    let broken = "def f(:\n    TOKEN = 'ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ' +\n";
    let r = s.call(
        "validate_syntax",
        json!({"code": broken, "language": "python"}),
    );
    assert_eq!(body(&r)["ok"], false, "{r}");
    assert_no_leak("validate_syntax", &r.to_string());
    // Masking keeps the lines where they are.
    let r = s.call("get_symbol", json!({"name": "PRIVATE_KEY"}));
    let src = body(&r)["source"].as_str().unwrap().to_string();
    assert_eq!(src.lines().count(), 4, "{src}");
    assert!(src.contains("-----END RSA PRIVATE KEY-----"), "{src}");
    // An uncommitted edit adding a secret: the work-tree diff masks it too.
    repo.write(
        "app/settings.py",
        format!(
            "{}\nSTRIPE_KEY = \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"\n",
            std::fs::read_to_string(repo.path().join("app/settings.py")).unwrap()
        ),
    );
    let r = s.call("changes", json!({"to": "worktree"}));
    assert!(!r.to_string().contains("4eC39HqLyjWDarjtT1zdp7dc"), "{r}");
    assert!(r.to_string().contains("STRIPE_KEY"), "{r}");
    s.finish();

    // The command line.
    let commands: Vec<Vec<&str>> = vec![
        vec!["search", "github token"],
        vec!["search", "database url", "--json"],
        vec!["show", "GITHUB_TOKEN"],
        vec!["show", "PRIVATE_KEY", "--json"],
        vec!["show", "apiSecret"],
        vec!["outline", "app/settings.py"],
        vec!["outline", "app/client.go", "--json"],
        vec!["symbol", "GITHUB"],
        vec!["symbol", "DATABASE_URL", "--json"],
        vec!["grep", "."],
        vec!["grep", "ghp_|AKIA|xox|Zk8", "--json"],
        vec!["map"],
        vec!["refs", "load_settings", "--callers"],
        vec!["status"],
    ];
    for args in &commands {
        let out = repo.sno(args);
        assert!(out.status.success(), "sno {args:?}: {}", stderr(&out));
        assert_no_leak(
            &format!("sno {args:?}"),
            &format!("{}{}", stdout(&out), stderr(&out)),
        );
    }
    let out = repo.sno(&["grep", "ghp_R8"]);
    assert_eq!(stdout(&out), "", "grep finds nothing it may not show");
}

#[test]
fn masking_can_be_switched_off_for_a_repository() {
    let repo = seeded();
    repo.write(".sno/config.toml", "[index]\nmask_secrets = false\n");
    let out = repo.sno(&["init", "--history", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = repo.status();
    assert_eq!(status["secrets"]["masking"], false, "{status}");
    assert_eq!(status["secrets"]["masked"], 0, "{status}");
    let out = repo.sno(&["show", "GITHUB_TOKEN"]);
    assert!(
        stdout(&out).contains("ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ"),
        "{}",
        stdout(&out)
    );
    let out = repo.sno(&["grep", "xoxb"]);
    assert!(
        stdout(&out).contains("xoxb-2048-9921-Zq8LmN3pR7sT"),
        "{}",
        stdout(&out)
    );
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn what_agents_write_is_kept_with_its_secrets_masked() {
    let repo = seeded();
    let out = repo.sno(&["init", "--history", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut s = Server::init(&repo, "2025-06-18").0;
    // An agent pastes credentials into memory and into a query.
    let written = [
        (
            "log_decision",
            json!({
                "title": "rotate key AKIAQ3EGUIDEXAMPL3ZZ",
                "rationale": "it was in postgres://admin:Zk8pQ2vL9xW@db.internal:5432/app and password=Xk8mP2vL$9qR4aZ7b in the runbook",
                "files": ["app/settings.py"],
            }),
        ),
        (
            "create_checkpoint",
            json!({
                "name": "token ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ",
                "summary": "DB_PASSWORD = \"Xk8mP2vL$9qR4aZ7b\" was wrong",
            }),
        ),
        (
            "search",
            json!({"query": "where is ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ used"}),
        ),
    ];
    for (tool, args) in &written {
        let r = s.call(tool, args.clone());
        assert_ne!(r["result"]["isError"], true, "{tool}: {r}");
    }
    for (tool, args) in [
        ("list_decisions", json!({})),
        ("get_approved_memory", json!({})),
        ("session_history", json!({})),
        (
            "context_for_edit",
            json!({"file": "app/settings.py", "line": 12}),
        ),
    ] {
        let r = s.call(tool, args.clone());
        assert_ne!(r["result"]["isError"], true, "{tool}: {r}");
        assert_no_leak(tool, &r.to_string());
    }
    // What was masked is said, and the rest of the text is kept.
    let r = s.call("list_decisions", json!({}));
    let title = body(&r)["decisions"][0]["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        title.starts_with("rotate key ") && title.contains("«redacted:aws-key»"),
        "{title}"
    );
    s.finish();
    for args in [&["audit", "--json"][..], &["journal", "log"][..]] {
        let out = repo.sno(args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_no_leak(&format!("sno {args:?}"), &stdout(&out));
    }
    for entry in walk(&repo.path().join(".sno")) {
        let bytes = std::fs::read(&entry).unwrap();
        assert_no_leak(
            &format!("stored file {}", entry.display()),
            &String::from_utf8_lossy(&bytes),
        );
    }
}

#[test]
fn code_assigned_to_secret_sounding_names_is_served_as_written() {
    let repo = Repo::new();
    let schema = "import { z } from \"zod\";\n\nexport const Login = z.object({\n  user: z.string(),\n  password: z.string(),\n  token: z.string().min(20),\n});\n";
    let c = "#include <stdlib.h>\n\nchar **split(int slots) {\n    char **tokens = NULL;\n    tokens = s_malloc(sizeof(char *)*slots);\n    return tokens;\n}\n";
    let py = "def fresh(counter, api):\n    token = next(counter)\n    client = api.Client(api_key=self.apiKey)\n    return token, client\n";
    repo.write("src/login.ts", schema);
    repo.write("src/split.c", c);
    repo.write("src/fresh.py", py);
    repo.commit("code that names secrets without holding any");
    let out = repo.sno(&["init", "--history", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(repo.status()["secrets"]["masked"], 0, "nothing to mask");
    for (name, line) in [
        ("split", "    tokens = s_malloc(sizeof(char *)*slots);"),
        ("fresh", "    token = next(counter)"),
        ("fresh", "    client = api.Client(api_key=self.apiKey)"),
    ] {
        let out = repo.sno(&["show", name]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains(line), "{name}: {}", stdout(&out));
    }
    let out = repo.sno(&["grep", "z.string"]);
    let text = stdout(&out);
    assert!(
        text.contains("password: z.string(),") && text.contains("token: z.string().min(20),"),
        "{text}"
    );
    assert!(!text.contains("redacted"), "{text}");
}

/// A token pasted into a commit message is masked before the append-only
/// journal records the message, so `journal log` (and the MCP history
/// tool, which reads the same records) never serve it and the database
/// never holds it.
#[test]
fn a_secret_in_a_commit_message_is_masked_before_it_is_journaled() {
    let repo = Repo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.commit("first");
    repo.write("a.py", "def f():\n    return 2\n");
    let token = "ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ";
    repo.commit(&format!("use the token {token} for the client"));
    let o = repo.sno(&["init", "--history", "all"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = stdout(&repo.sno(&["journal", "log"]));
    assert!(log.contains("use the token"), "{log}");
    assert_no_leak("journal log", &log);
    assert!(!log.contains("ghp_R8sT1w"), "{log}");
    let bytes = std::fs::read(repo.db()).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("ghp_R8sT1w"));
}
