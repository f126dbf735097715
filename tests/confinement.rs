//! One confinement rule for every path: nothing outside the work tree,
//! inside `.git/`, or named like a secret file is ever read or served, by
//! any tool that takes a path, CLI or MCP, however the path is spelled and
//! wherever a committed or planted link points.

mod support;

use serde_json::{json, Value};
use support::*;

/// Text that must never appear in any answer.
const OUTSIDE: &str = "OUTSIDE_SENTINEL_7f3a";
const ENV_SECRET: &str = "ENV_SECRET_c41d";
const GIT_TOKEN: &str = "GITTOKEN_e9b2";

struct Fixture {
    repo: Repo,
    _outside: tempfile::TempDir,
    /// Absolute path of a Python file outside the repository.
    secret_py: String,
}

fn fixture() -> Fixture {
    let outside = tempfile::tempdir().unwrap();
    let secret_py = outside.path().join("secret.py");
    std::fs::write(
        &secret_py,
        format!("{OUTSIDE} = 1\ndef leaked_outside_{OUTSIDE}(:\n    pass\n"),
    )
    .unwrap();
    let secret_py = secret_py.canonicalize().unwrap().display().to_string();
    let repo = Repo::new();
    repo.write(
        "src/app.py",
        "def render(x):\n    return x\n\n\ndef main():\n    return render(1)\n",
    );
    repo.write(".env", format!("API_KEY={ENV_SECRET}\n"));
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("https://user:{GIT_TOKEN}@example.com/r.git"),
    ]);
    let depth = "../".repeat(secret_py.matches('/').count() + 2);
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, repo.path().join(at)).unwrap();
    };
    link(&format!("{depth}{}", &secret_py[1..]), "src/evil.py");
    link(&secret_py, "src/abs.py");
    link("evil.py", "src/chain.py");
    link("../.env", "src/envlink.py");
    link("../.git/config", "src/gitcfg.py");
    repo.git(&["add", "-A", "-f"]);
    repo.commit("app, a committed .env and links out");
    let out = repo.sno(&["init", "--history", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    Fixture {
        repo,
        _outside: outside,
        secret_py,
    }
}

fn assert_no_leak(what: &str, text: &str) {
    for s in [OUTSIDE, ENV_SECRET, GIT_TOKEN] {
        assert!(!text.contains(s), "{what} leaked {s}: {text}");
    }
}

/// Paths that must never be read, each with the error it gets.
fn hostile(f: &Fixture) -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = vec![
        ("src/evil.py".into(), "SNO-PATH-OUTSIDE"),
        ("src/abs.py".into(), "SNO-PATH-OUTSIDE"),
        ("src/chain.py".into(), "SNO-PATH-OUTSIDE"),
        ("src/envlink.py".into(), "SNO-PATH-REFUSED"),
        ("src/gitcfg.py".into(), "SNO-PATH-REFUSED"),
        (".env".into(), "SNO-PATH-REFUSED"),
        ("src/../.env".into(), "SNO-PATH-REFUSED"),
        (".git/config".into(), "SNO-PATH-REFUSED"),
        ("./.git/HEAD".into(), "SNO-PATH-REFUSED"),
        ("../secret.py".into(), "SNO-PATH-OUTSIDE"),
        ("src/../../secret.py".into(), "SNO-PATH-OUTSIDE"),
    ];
    v.push((f.secret_py.clone(), "SNO-PATH-OUTSIDE"));
    v
}

fn error_code(r: &Value) -> String {
    body(r)["error"]["code"].as_str().unwrap_or("").to_string()
}

#[test]
fn work_tree_reads_follow_no_link_out_and_never_open_git_or_secret_files() {
    let f = fixture();
    let mut s = Server::init(&f.repo, "2025-06-18").0;
    for (path, code) in hostile(&f) {
        let r = s.call("validate_syntax", json!({"file": path}));
        assert_no_leak(&format!("validate_syntax {path}"), &r.to_string());
        assert_eq!(error_code(&r), code, "validate_syntax {path}: {r}");
    }
    // A file inside, through a link inside, is fine.
    std::os::unix::fs::symlink("app.py", f.repo.path().join("src/alias.py")).unwrap();
    let r = s.call("validate_syntax", json!({"file": "src/alias.py"}));
    assert_eq!(body(&r)["ok"], true, "{r}");

    // An indexed file replaced in the work tree by a link out: the
    // work-tree diff treats it as gone and reads nothing behind it.
    f.repo.remove("src/app.py");
    std::os::unix::fs::symlink(&f.secret_py, f.repo.path().join("src/app.py")).unwrap();
    let r = s.call("changes", json!({"to": "worktree"}));
    assert_no_leak("changes to worktree", &r.to_string());
    let changes = body(&r)["changes"].to_string();
    assert!(
        changes.contains("removed"),
        "the link reads as a deletion: {r}"
    );
    // And answers say the file is no longer what was indexed.
    let r = s.call("context_for_edit", json!({"file": "src/app.py", "line": 1}));
    assert_eq!(body(&r)["edited_in_work_tree"], true, "{r}");
    assert_no_leak("context_for_edit", &r.to_string());
    let r = s.call("search", json!({"query": "render"}));
    assert_no_leak("search", &r.to_string());
    s.finish();
}

#[test]
fn every_tool_that_takes_a_path_applies_the_rule() {
    let f = fixture();
    let mut s = Server::init(&f.repo, "2025-06-18").0;
    for (path, _) in hostile(&f) {
        let named = format!("{path}:1");
        let calls = [
            ("file_outline", json!({"file": path})),
            ("context_for_edit", json!({"file": path, "line": 1})),
            ("history", json!({"file": path})),
            ("co_changed", json!({"file": path})),
            ("get_symbol", json!({"name": named})),
            ("references", json!({"name": named})),
            ("callers", json!({"name": named})),
        ];
        for (tool, args) in calls {
            let r = s.call(tool, args);
            assert_no_leak(&format!("{tool} {path}"), &r.to_string());
            assert_eq!(r["result"]["isError"], true, "{tool} {path} must fail: {r}");
            let code = error_code(&r);
            assert!(
                [
                    "SNO-PATH-OUTSIDE",
                    "SNO-PATH-REFUSED",
                    "SNO-UNKNOWN-FILE",
                    "SNO-UNKNOWN-SYMBOL"
                ]
                .contains(&code.as_str()),
                "{tool} {path}: {r}"
            );
            // A path to git's directory or a secret file is refused by its
            // name, before any lookup.
            if path.contains(".git/") || path.ends_with(".env") {
                assert!(
                    code == "SNO-PATH-REFUSED" || code == "SNO-UNKNOWN-SYMBOL",
                    "{tool} {path}: {r}"
                );
            }
        }
    }
    // Memory tools only record the names of files, never read them: a
    // name is refused for its spelling alone, and nothing is journaled.
    for (path, code) in hostile(&f) {
        let link_name = path.starts_with("src/") && !path.contains("..");
        let calls = [
            ("list_decisions", json!({"file": path})),
            ("get_approved_memory", json!({"file": path})),
            (
                "create_checkpoint",
                json!({"name": "n", "summary": "s", "files": [path]}),
            ),
            (
                "log_decision",
                json!({"title": "t", "rationale": "r", "files": [path]}),
            ),
        ];
        for (tool, args) in calls {
            let r = s.call(tool, args);
            assert_no_leak(&format!("{tool} {path}"), &r.to_string());
            if link_name {
                assert_ne!(r["result"]["isError"], true, "{tool} {path}: {r}");
            } else {
                assert_eq!(error_code(&r), code, "{tool} {path}: {r}");
            }
        }
    }
    let r = s.call("list_decisions", json!({}));
    let logged = body(&r)["decisions"].to_string();
    for bad in [".env", ".git", "secret.py"] {
        assert!(!logged.contains(bad), "{bad} journaled: {logged}");
    }
    s.finish();

    // The command line: the same rule.
    for (path, _) in hostile(&f) {
        for args in [
            vec!["outline", path.as_str()],
            vec!["show", &*format!("{path}:1").leak()],
            vec!["refs", &*format!("{path}:1").leak(), "--callers"],
        ] {
            let out = f.repo.sno(&args);
            assert!(!out.status.success(), "sno {args:?} must fail");
            assert_no_leak(
                &format!("sno {args:?}"),
                &format!("{}{}", stdout(&out), stderr(&out)),
            );
        }
    }
    let out = f.repo.sno(&["outline", ".env"]);
    assert_error_code(&out, "SNO-PATH-REFUSED");
    let out = f.repo.sno(&["outline", "../secret.py"]);
    assert_error_code(&out, "SNO-PATH-OUTSIDE");
    let out = f.repo.sno(&["grep", "SENTINEL|SECRET|TOKEN"]);
    assert_no_leak("sno grep", &stdout(&out));
}

/// A `.sno` the repository ships is never used: a committed config could
/// send a user's environment variable to an endpoint the repository picks
/// or turn masking off, and a link in it would send sno's writes outside
/// the repository. Every command refuses, and nothing outside changes.
#[cfg(unix)]
#[test]
fn a_state_directory_the_repository_ships_or_links_out_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let precious = outside.path().join("precious.txt");
    std::fs::write(&precious, "keep me\n").unwrap();

    // Committed: the clone brings `.sno/config.toml`.
    let repo = Repo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.write(
        ".sno/config.toml",
        "[agent]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n\n[index]\nmask_secrets = false\n",
    );
    repo.git(&["add", "-f", ".sno/config.toml"]);
    repo.commit("ships its own sno settings");
    for args in [
        &["init", "--history", "0"][..],
        &["status"],
        &["search", "f"],
    ] {
        let o = repo.sno(args);
        assert_error_code(&o, "SNO-UNSAFE-STATE");
        assert!(
            stderr(&o).contains("git rm -r --cached .sno"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!repo.path().join(".sno/sno.redb").exists());
    assert!(!repo.path().join(".sno/lock").exists());

    // A link among sno's files, made on disk: refused before any write.
    let repo = Repo::new();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.commit("one");
    std::fs::create_dir(repo.path().join(".sno")).unwrap();
    std::os::unix::fs::symlink(&precious, repo.path().join(".sno/lock")).unwrap();
    assert_error_code(&repo.sno(&["init", "--history", "0"]), "SNO-UNSAFE-STATE");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
    assert!(!outside.path().join("sno.redb").exists());

    // `.sno` itself a link to a directory outside.
    std::fs::remove_dir_all(repo.path().join(".sno")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join(".sno")).unwrap();
    assert_error_code(&repo.sno(&["init", "--history", "0"]), "SNO-UNSAFE-STATE");
    let entries: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "only precious.txt: {entries:?}");

    // Without them sno works, and keeps its directory to its owner.
    std::fs::remove_file(repo.path().join(".sno")).unwrap();
    let o = repo.sno(&["init", "--history", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(repo.path().join(".sno"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
}

/// What git ignores is never read, not even by `validate_syntax`: a
/// `local_settings.py` or a file `info/exclude` names holds what the user
/// keeps out of the repository. A new file git would track is read.
#[test]
fn validate_syntax_never_reads_what_git_ignores() {
    let repo = Repo::new();
    repo.write(".gitignore", "local_settings.py\nbuild/\n");
    repo.write("app.py", "def f():\n    return 1\n");
    repo.commit("app");
    repo.sno(&["init", "--history", "0"]);
    let marker = "Zq9LOCALONLYmarker";
    repo.write("local_settings.py", format!("PASSWORD = '{marker}' +\n"));
    repo.write("build/gen.py", format!("x = '{marker}' +\n"));
    repo.write("new_module.py", "def g(:\n    pass\n");
    let exclude = repo.path().join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap();
    text.push_str("private.py\n");
    std::fs::write(&exclude, text).unwrap();
    repo.write("private.py", format!("y = '{marker}' +\n"));

    let mut s = Server::init(&repo, "2025-06-18").0;
    for file in ["local_settings.py", "build/gen.py", "private.py"] {
        let r = s.call("validate_syntax", json!({"file": file}));
        assert_eq!(error_code(&r), "SNO-PATH-REFUSED", "{file}: {r}");
        assert!(!r.to_string().contains(marker), "{file}: {r}");
    }
    let r = s.call("validate_syntax", json!({"file": "new_module.py"}));
    assert_eq!(
        body(&r)["ok"],
        false,
        "a new file is read and its error found: {r}"
    );
    s.finish();
}
