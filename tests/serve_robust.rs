//! `sno serve` under raw JSON-RPC: version negotiation, malformed and
//! hostile input, floods, disconnects, and several servers and CLI commands
//! on one repository. No SDK here: the bytes are written by hand.

mod support;

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

fn indexed() -> Repo {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    repo
}

#[test]
fn protocol_versions_are_negotiated() {
    let repo = indexed();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let (s, got) = Server::init(&repo, version);
        assert_eq!(got, version, "a version the server supports is echoed");
        assert!(s.finish().success());
    }
    // An unknown version gets one the server supports, not an error.
    let (mut s, got) = Server::init(&repo, "1999-01-01");
    assert!(got.starts_with("20"), "{got}");
    let tools = s.request("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 26);
    assert!(s.finish().success());
}

#[test]
fn hostile_input_gets_protocol_answers_and_the_journal_survives() {
    let repo = indexed();
    let (mut s, _) = Server::init(&repo, "2025-06-18");

    // Unknown method: a JSON-RPC error, and the server goes on.
    let r = s.request("no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(
        r["error"]["data"]["error"]["code"], "SNO-UNKNOWN-METHOD",
        "{r}"
    );
    // A known method with params that do not fit it: invalid params.
    for params in [
        json!({"name": 5}),
        json!({"name": "status", "arguments": "x"}),
        json!({}),
    ] {
        let r = s.request("tools/call", params.clone());
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
        assert_eq!(r["error"]["data"]["error"]["code"], "SNO-BAD-ARGS", "{r}");
    }
    // Unknown tool: an error carrying the contract with near names.
    let r = s.call("file_outlin", json!({"file": "x"}));
    assert_eq!(
        r["error"]["data"]["error"]["code"], "SNO-UNKNOWN-TOOL",
        "{r}"
    );
    assert_eq!(
        r["error"]["data"]["error"]["did_you_mean"][0],
        "file_outline"
    );
    // Wrong types and missing arguments: tool errors in the contract.
    for args in [
        json!({"name": 7}),
        json!({}),
        json!({"name": ["a"]}),
        json!(null),
    ] {
        let r = s.call("search_symbols", args.clone());
        assert_eq!(r["result"]["isError"], true, "{args}: {r}");
        assert_eq!(body(&r)["error"]["code"], "SNO-BAD-ARGS", "{args}: {r}");
    }
    // Empty questions, names and titles, and budgets no answer can keep,
    // are refused with the argument named; nothing is written.
    let before = body(&s.call("list_decisions", json!({})))["page"]["total"].clone();
    for (tool, args, field) in [
        ("search", json!({"query": "  "}), "`query`"),
        ("search_symbols", json!({"name": ""}), "`name`"),
        (
            "log_decision",
            json!({"title": "", "rationale": "r"}),
            "`title`",
        ),
        (
            "log_decision",
            json!({"title": "t", "rationale": " "}),
            "`rationale`",
        ),
        (
            "create_checkpoint",
            json!({"name": "", "summary": "s"}),
            "`name`",
        ),
        (
            "search",
            json!({"query": "config", "max_tokens": 5}),
            "`max_tokens`",
        ),
        ("repo_map", json!({"max_tokens": 0}), "`max_tokens`"),
        ("search", json!({"query": "config", "limit": 0}), "`limit`"),
        (
            "search_symbols",
            json!({"name": "Config", "limit": 0}),
            "`limit`",
        ),
        (
            "search_text",
            json!({"pattern": "def", "limit": 0}),
            "`limit`",
        ),
        ("get_symbol", json!({"name": ""}), "`name`"),
        ("references", json!({"name": " "}), "`name`"),
        ("get_approved_memory", json!({"limit": 0}), "`limit`"),
        ("list_decisions", json!({"limit": 0}), "`limit`"),
        ("get_pending_memory", json!({"limit": 0}), "`limit`"),
        (
            "context_for_edit",
            json!({"file": "app/config.py", "line": 0}),
            "`line` 0",
        ),
        (
            "context_for_edit",
            json!({"file": "app/config.py", "line": 999999}),
            "`line` 999999",
        ),
    ] {
        let r = s.call(tool, args.clone());
        assert_eq!(
            body(&r)["error"]["code"],
            "SNO-BAD-ARGS",
            "{tool} {args}: {r}"
        );
        let message = body(&r)["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(field), "{tool} {args}: {r}");
    }
    let after = body(&s.call("list_decisions", json!({})))["page"]["total"].clone();
    assert_eq!(before, after);
    // Commits the journal does not hold are errors, never an answer from
    // some other state.
    let r = s.call(
        "search_symbols",
        json!({"name": "Config", "at": "no-such-branch"}),
    );
    assert_eq!(body(&r)["error"]["code"], "SNO-UNKNOWN-REV", "{r}");
    let r = s.call(
        "changes",
        json!({"from": "0123456789abcdef0123456789abcdef01234567"}),
    );
    assert_eq!(body(&r)["error"]["code"], "SNO-NOT-JOURNALED", "{r}");
    let r = s.call("restore_checkpoint", json!({"id": "ckpt_01nothing"}));
    assert_eq!(body(&r)["error"]["code"], "SNO-UNKNOWN-MEMORY", "{r}");
    // Paths cannot escape the repository.
    for file in ["../../etc/passwd", "/etc/passwd", "app/../../x"] {
        let r = s.call("file_outline", json!({"file": file}));
        assert_eq!(body(&r)["error"]["code"], "SNO-PATH-OUTSIDE", "{file}: {r}");
        let r = s.call("validate_syntax", json!({"file": file}));
        assert_eq!(body(&r)["error"]["code"], "SNO-PATH-OUTSIDE", "{file}: {r}");
    }
    // A 10 MB argument is answered (the query finds nothing), not a crash.
    let huge = "x".repeat(10 * 1024 * 1024);
    let r = s.call("search_symbols", json!({"name": huge}));
    assert_eq!(body(&r)["error"]["code"], "SNO-UNKNOWN-SYMBOL");
    let r = s.call(
        "validate_syntax",
        json!({"code": "def f(:\n".repeat(100_000), "language": "python"}),
    );
    assert_eq!(body(&r)["ok"], false);
    // 1,000 rapid calls, written before any answer is read, all answered.
    let first = s.next_id;
    for i in 0..1000u64 {
        let tool = ["status", "search_symbols", "file_outline", "callers"][(i % 4) as usize];
        let args = match tool {
            "status" => json!({}),
            "file_outline" => json!({"file": "app/config.py"}),
            _ => json!({"name": "read_text"}),
        };
        s.send(&json!({"jsonrpc": "2.0", "id": first + i, "method": "tools/call", "params": {"name": tool, "arguments": args}}));
    }
    s.next_id += 1000;
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 1000 {
        let r = s.recv();
        assert_eq!(r["result"]["isError"], false, "{r}");
        seen.insert(r["id"].as_u64().unwrap());
    }
    assert_eq!(seen, (first..first + 1000).collect());
    // Malformed JSON last: an answer or a clean exit, never a crash.
    s.raw("{\"jsonrpc\": \"2.0\", \"id\": 99999, \"method\": ");
    s.raw("this is not json");
    assert!(s.finish().success(), "a clean exit");

    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "the journal verifies: {}", stdout(&o));
    let audit = repo.sno_json(&["audit", "--json", "--tail", "5000"]);
    let calls = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"].get("ToolCall").is_some())
        .count();
    assert!(calls >= 1000, "every call is audited ({calls})");
}

#[test]
fn a_client_that_disconnects_mid_call_leaves_a_clean_exit() {
    let repo = indexed();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    for i in 0..20u64 {
        s.send(&json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "config file"}}}));
    }
    // Gone without reading a single answer.
    drop(s.out);
    drop(s.stdin.take());
    let status = wait(&mut s.child, Duration::from_secs(20));
    assert!(
        status.code().is_some(),
        "exited, not killed by a signal: {status:?}"
    );
    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "{}", stdout(&o));
    wait_for_daemon_exit(&repo);
}

#[test]
fn two_servers_and_the_cli_share_one_repository() {
    let repo = indexed();
    let (mut a, _) = Server::init(&repo, "2025-06-18");
    // The first server owns the database; the second relays to it.
    let (mut b, _) = Server::init(&repo, "2025-06-18");
    let sa = body(&a.call("session_info", json!({})));
    let sb = body(&b.call("session_info", json!({})));
    assert_ne!(sa["id"], sb["id"], "one session per client");
    assert_eq!(
        body(&b.call("search_symbols", json!({"name": "Config.load"})))["results"][0]["path"],
        "app/config.py"
    );
    let d = body(&b.call("log_decision", json!({"title": "t", "rationale": "r"})));
    assert!(d["decision"]["id"].as_str().unwrap().starts_with("dec_"));
    assert_eq!(
        body(&a.call("list_decisions", json!({})))["decisions"][0]["title"],
        "t"
    );

    // CLI commands beside them: reads, and a write (indexing a new commit).
    let status = repo.sno_json(&["status", "--json"]);
    assert_eq!(status["as_of"]["commit"], repo.head());
    repo.write("app/extra.py", "def extra():\n    return 1\n");
    let new_head = repo.commit("extra");
    let o = repo.sno(&["init"]);
    assert!(o.status.success(), "init beside a server: {}", stderr(&o));
    let o = repo.sno(&["symbol", "extra", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("app/extra.py"));
    // Both servers answer from the new state.
    assert_eq!(
        body(&a.call("status", json!({})))["as_of"]["commit"],
        new_head
    );
    assert_eq!(
        body(&b.call("get_symbol", json!({"name": "extra"})))["symbol"]["path"],
        "app/extra.py"
    );
    // An error through the relay still carries the contract.
    assert_eq!(
        body(&b.call("get_symbol", json!({"name": "extr"})))["error"]["code"],
        "SNO-UNKNOWN-SYMBOL"
    );

    // stdout is protocol only; the daemon logs to .sno/logs/serve.log.
    let log = std::fs::read_to_string(repo.path().join(".sno/logs/serve.log")).unwrap();
    assert!(log.contains("sno daemon owns the database"), "{log}");
    // One client leaves; the daemon keeps serving the other.
    assert!(a.finish().success());
    assert_eq!(
        body(&b.call("status", json!({})))["as_of"]["commit"],
        new_head
    );
    assert!(b.finish().success());
    wait_for_daemon_exit(&repo);
    // With no server left, a new one owns the database again.
    let (c, _) = Server::init(&repo, "2025-06-18");
    assert!(c.finish().success());
}

/// A tool that panics inside sno answers with an error in the contract;
/// the session, the daemon and the stored index go on (unanswered, the
/// request left its client waiting for ever).
#[test]
fn a_tool_that_panics_answers_with_an_error_and_the_session_goes_on() {
    let repo = indexed();
    let before = repo.status()["views_digest"].clone();
    let mut s = Server::start_with(&repo, &[("SNO_TEST_SEARCH_PANIC", "make it panic")]);
    s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = s.call(
        "search",
        json!({"query": "make it panic", "format": "json"}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let e = body(&r);
    assert_eq!(e["error"]["code"], "SNO-INTERNAL", "{e}");
    assert!(
        e["error"]["llm_hint"]
            .as_str()
            .is_some_and(|h| h.contains("serve.log")),
        "{e}"
    );
    let ok = s.call(
        "search",
        json!({"query": "load the config", "format": "json"}),
    );
    assert_ne!(ok["result"]["isError"], true, "{ok}");
    assert!(!body(&ok)["items"].as_array().unwrap().is_empty(), "{ok}");
    assert!(s.finish().success());
    // The stored views are as they were.
    assert!(before.is_string(), "{before}");
    assert_eq!(repo.status()["views_digest"], before);
}

#[test]
fn retrieval_context_on_errors_is_a_setting() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    std::fs::create_dir_all(repo.path().join(".sno")).unwrap();
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        "[serve]\nretrieval_context = true\nlow_context_threshold = 0.5\n",
    )
    .unwrap();
    repo.sno_json(&["init", "--json"]);
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let e = body(&s.call("get_symbol", json!({"name": "Config.lod"})));
    assert_eq!(e["error"]["code"], "SNO-UNKNOWN-SYMBOL");
    let ctx = e["error"]["retrieval_context"].as_array().unwrap();
    assert!(
        ctx.iter()
            .any(|x| x["qualified_name"] == "Config.load" && x["path"] == "app/config.py"),
        "{e}"
    );
    let low = body(&s.call(
        "signal_low_context",
        json!({"tokens_used": 60, "capacity": 100}),
    ));
    assert_eq!(low["threshold"], 0.5);
    assert_eq!(low["recommend_checkpoint"], true);
    assert!(s.finish().success());
    // The next server must be a new daemon, reading the config again.
    wait_for_daemon_exit(&repo);

    // Off by default: the contract carries no retrieval_context.
    std::fs::remove_file(repo.path().join(".sno/config.toml")).unwrap();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let e = body(&s.call("get_symbol", json!({"name": "Config.lod"})));
    assert!(e["error"].get("retrieval_context").is_none(), "{e}");
    assert!(s.finish().success());
}

fn server_pid(s: &mut Server) -> u64 {
    body(&s.call("session_info", json!({})))["server_pid"]
        .as_u64()
        .unwrap()
}

#[test]
fn the_daemon_outlives_a_client_for_its_idle_time_and_survives_being_killed() {
    let repo = indexed();
    let start = |idle: &str| {
        let mut s = Server::start_with(&repo, &[("SNO_SERVE_IDLE_SECS", idle)]);
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        s
    };
    // A client leaves; the next one within the idle time finds the same
    // daemon, with its indexes loaded.
    let mut first = start("3");
    let pid = server_pid(&mut first);
    assert_ne!(pid, u64::from(first.child.id()), "a relay, not the owner");
    assert!(first.finish().success());
    let mut second = start("3");
    assert_eq!(server_pid(&mut second), pid, "the daemon was kept");

    // kill -9 of the daemon: the client keeps its session (no new
    // handshake), its next call starts a new daemon over the stale socket,
    // and nothing stored is lost. A call the dead daemon had taken is
    // answered SNO-SERVE-LOST, to be asked again.
    let o = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(o.success());
    // Asked again while lost, as the error says (a few times: under the
    // full suite's load a second call was once lost too; the cause is not
    // confirmed, the new daemon's 3 s idle time is a suspect).
    let mut r = second.call("search_symbols", json!({"name": "read_text"}));
    for _ in 0..5 {
        if !r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("SNO-SERVE-LOST"))
        {
            break;
        }
        r = second.call("search_symbols", json!({"name": "read_text"}));
    }
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(text(&r).contains("read_text"), "{r}");
    let replaced = server_pid(&mut second);
    assert_ne!(replaced, pid);
    assert!(second.finish().success());
    let mut third = start("0");
    let new_pid = server_pid(&mut third);
    assert_ne!(new_pid, pid);
    assert_eq!(
        new_pid, replaced,
        "the replacement stayed for its idle time"
    );
    assert_eq!(
        body(&third.call("status", json!({})))["as_of"]["commit"],
        repo.head()
    );
    assert!(third.finish().success());
    wait_for_daemon_exit(&repo);
    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "{}", stdout(&o));
}

/// Whether a writer holds `.sno/lock` now (flock(1) probes it like sno does).
fn writer_busy(repo: &Repo) -> bool {
    !std::process::Command::new("flock")
        .args([
            "-n",
            repo.path().join(".sno/lock").to_str().unwrap(),
            "true",
        ])
        .status()
        .unwrap()
        .success()
}

#[test]
fn cli_commands_beside_an_init_the_daemon_runs_and_a_terminated_daemon() {
    let repo = indexed();
    // The commits below are indexed by the forwarded `sno init`, not by
    // the daemon following HEAD on its own (its debounce would race it).
    repo.write(".sno/config.toml", "[watch]\nenabled = false\n");
    // The daemon inherits the server's environment: its indexing is slowed
    // so the forwarded `sno init` below is still running when we look.
    let mut s = Server::start_with(&repo, &[("SNO_TEST_COMMIT_DELAY_MS", "500")]);
    s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    let pid = server_pid(&mut s);
    for i in 0..4 {
        repo.write(
            &format!("app/more{i}.py"),
            format!("def more{i}():\n    return {i}\n"),
        );
        repo.commit(&format!("more {i}"));
    }
    let init = sno_command()
        .args(["init"])
        .current_dir(repo.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !writer_busy(&repo) {
        assert!(t.elapsed() < Duration::from_secs(20), "init never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The daemon is indexing (it holds the writer lock); a read command is
    // still answered by it, not refused as locked.
    let o = repo.sno(&["status", "--json"]);
    assert!(o.status.success(), "status beside init: {}", stderr(&o));
    assert!(
        writer_busy(&repo),
        "the init ended before the status answered; the test proves nothing"
    );
    // So is a tool call of a connected client.
    assert!(
        body(&s.call("search_symbols", json!({"name": "Config.load"})))["results"][0].is_object()
    );
    let o = init.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Its progress reached this CLI, not the daemon's stderr.
    assert!(
        stderr(&o).contains("sno: indexed 4/4"),
        "no progress: {}",
        stderr(&o)
    );
    assert_eq!(repo.status()["as_of"]["commit"], repo.head());

    // A terminated daemon exits soon, even with a client still connected,
    // and leaves a database that passes doctor.
    let o = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(o.success());
    let status = wait(&mut s.child, Duration::from_secs(20));
    assert!(status.code().is_some(), "{status:?}");
    wait_for_daemon_exit(&repo);
    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn lessons_review_takes_verdicts_from_stdin_beside_a_running_daemon() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    repo.write("app/cache.py", "def cache():\n    return {}\n");
    repo.commit("Add a cache");
    repo.git(&["revert", "--no-edit", "HEAD"]);
    let first = format!("lsn_{}", &repo.head()[..12]);
    repo.write("app/fast.py", "def fast():\n    return 1\n");
    repo.commit("Add a fast path");
    repo.git(&["revert", "--no-edit", "HEAD"]);
    let second = format!("lsn_{}", &repo.head()[..12]);
    repo.sno_json(&["init", "--json"]);

    // An agent analyses the first; the daemon holds the database from here.
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let a = body(&s.call(
        "submit_lesson_analysis",
        json!({"lesson_id": first, "analysis": "The cache went stale.", "rule": "Do not cache without invalidation."}),
    ));
    assert!(a.get("error").is_none(), "{a}");

    let review = |answers: &str| {
        let mut child = sno_command()
            .args(["lessons", "review"])
            .current_dir(repo.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answers.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    // Unknown answer, approve, then for the unanalysed one: approve (refused:
    // no rule), then reject with a note.
    let o = review("maybe\na\na\nr not a lesson, a bad idea\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o);
    assert!(
        shown.contains("sno: 2 lesson(s) wait for a verdict"),
        "{shown}"
    );
    assert!(
        shown.contains("Do not cache without invalidation."),
        "{shown}"
    );
    assert!(shown.contains("answer a, r, s or q"), "{shown}");
    assert!(shown.contains("no rule to approve"), "{shown}");
    assert!(
        shown.contains("sno: 1 approved, 1 rejected, 0 skipped"),
        "{shown}"
    );

    let listed = repo.sno_json(&["lessons", "list", "--json"]);
    let by_id = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {listed}"))
    };
    assert_eq!(by_id(&first)["status"], "approved");
    assert_eq!(by_id(&second)["status"], "rejected");
    assert_eq!(by_id(&second)["review"]["note"], "not a lesson, a bad idea");
    // Agents now get the approved rule.
    let m = body(&s.call("get_approved_memory", json!({})));
    assert!(
        m.to_string().contains("Do not cache without invalidation."),
        "{m}"
    );
    // Nothing waits any more.
    let o = review("");
    assert!(
        stdout(&o).contains("no lesson waits for a verdict"),
        "{}",
        stdout(&o)
    );
    assert!(s.finish().success());
}

#[test]
fn the_daemon_follows_head_unless_told_not_to() {
    let repo = indexed();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    assert_eq!(
        body(&s.call("status", json!({})))["as_of"]["commit"],
        repo.head()
    );
    // (After the daemon's start has made the indexed head's search parts:
    // a start still making them would make the new head's instead.)
    let t = Instant::now();
    while !std::fs::read_to_string(repo.path().join(".sno/logs/serve.log"))
        .unwrap_or_default()
        .contains("search index ready")
    {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "the daemon's start did not make the search index"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    repo.write("app/later.py", "def later():\n    return 2\n");
    let new_head = repo.commit("later");
    // The agent's next answers are about the new commit, with no `sno init`.
    let t = Instant::now();
    loop {
        let st = body(&s.call("status", json!({})));
        if st["as_of"]["commit"] == new_head {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "the daemon did not follow HEAD: {st}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And searchable without waiting: the new head's search parts are made
    // once it is indexed, not by the first `search` after it (none was
    // asked for here).
    let t = Instant::now();
    let head_parts = || {
        std::fs::read_dir(repo.path().join(".sno/cache"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(&new_head))
    };
    while !head_parts() {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "the new head's search parts were not made ahead of a search"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        body(&s.call("get_symbol", json!({"name": "later"})))["symbol"]["path"],
        "app/later.py"
    );
    assert!(s.finish().success());
    wait_for_daemon_exit(&repo);
    // The daemon leaves after the run it is in (its socket goes first).
    let t = Instant::now();
    loop {
        let log = std::fs::read_to_string(repo.path().join(".sno/logs/serve.log")).unwrap();
        if log.contains("indexed where HEAD moved") {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(90), "{log}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // Switched off: the daemon serves what is indexed and says HEAD moved.
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        "[watch]\nenabled = false\n",
    )
    .unwrap();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    repo.write("app/even_later.py", "def even_later():\n    return 3\n");
    let newest = repo.commit("even later");
    std::thread::sleep(Duration::from_secs(2));
    let st = body(&s.call("status", json!({})));
    assert_eq!(st["as_of"]["commit"], new_head, "{st}");
    assert!(s.finish().success());
    wait_for_daemon_exit(&repo);
    assert_ne!(repo.status()["as_of"]["commit"], newest);
}

#[test]
fn answers_name_files_edited_since_the_indexed_commit() {
    let repo = indexed();
    let first = repo.head();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let edit = |s: &mut Server, at: Option<&str>| {
        let mut args = json!({"file": "app/config.py", "line": 14});
        if let Some(at) = at {
            args["at"] = json!(at);
        }
        body(&s.call("context_for_edit", args))
    };
    assert_eq!(edit(&mut s, None)["edited_in_work_tree"], false);
    let config = std::fs::read_to_string(repo.path().join("app/config.py")).unwrap();
    repo.write("app/config.py", format!("\n\n{config}"));
    let e = edit(&mut s, None);
    assert_eq!(e["edited_in_work_tree"], true, "{e}");
    assert_eq!(
        e["enclosing"]["qualified_name"], "Config.load",
        "lines are the indexed ones: {e}"
    );
    let found = body(&s.call("search", json!({"query": "load config", "format": "json"})));
    assert!(
        found["header"]["edited_in_work_tree"]
            .as_array()
            .unwrap()
            .contains(&json!("app/config.py")),
        "{found}"
    );
    repo.remove("app/main.py");
    let found = body(&s.call(
        "search",
        json!({"query": "Config load main", "format": "json"}),
    ));
    assert!(
        found["header"]["edited_in_work_tree"]
            .as_array()
            .unwrap()
            .contains(&json!("app/main.py")),
        "a deleted file: {found}"
    );
    // Restored: not flagged (nothing is cached).
    repo.git(&["checkout", "--", "."]);
    assert_eq!(edit(&mut s, None)["edited_in_work_tree"], false);
    // Another commit's state is not compared with the work tree.
    repo.write("app/later.py", "def later():\n    return 2\n");
    repo.commit("later");
    let t = Instant::now();
    while body(&s.call("status", json!({})))["as_of"]["commit"] == first {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "the daemon did not follow HEAD"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let old = edit(&mut s, Some(&first));
    assert!(old["edited_in_work_tree"].is_null(), "{old}");
    assert_eq!(edit(&mut s, None)["edited_in_work_tree"], false);
    assert!(s.finish().success());
    wait_for_daemon_exit(&repo);
}

#[test]
fn the_audit_prints_times_and_escapes_what_agents_sent() {
    let repo = indexed();
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call("status\u{1b}[31mred", json!({}));
    assert!(r["error"].is_object(), "{r}");
    s.call("status", json!({}));
    s.finish();
    wait_for_daemon_exit(&repo);
    let out = repo.sno(&["audit"]);
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal: {text:?}"
    );
    assert!(text.contains("\\u{1b}[31mred"), "{text}");
    // RFC 3339 times, not epoch milliseconds.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("20") && first.contains('T') && first.contains('Z'),
        "{first}"
    );
}

/// A server whose daemon stays (an hour's idle time), initialized; and
/// the daemon's pid.
fn a_daemon_that_stays(repo: &Repo) -> (Server, u64) {
    let mut s = Server::start_with(repo, &[("SNO_SERVE_IDLE_SECS", "3600")]);
    let r = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    assert!(r["result"].is_object());
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let pid = server_pid(&mut s);
    (s, pid)
}

/// Removes `dir`; the daemon may write its log while the tree goes: tried
/// again then.
fn remove_beside_a_daemon(dir: &std::path::Path) {
    let mut tries = 0;
    while let Err(e) = std::fs::remove_dir_all(dir) {
        tries += 1;
        assert!(tries < 50, "{e}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until process `pid` has exited (or is a zombie), failing with
/// `stayed` after 30 s.
fn wait_until_gone(pid: u64, stayed: &str) {
    let t = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|st| !st.contains(") Z "))
        .unwrap_or(false)
    {
        assert!(t.elapsed() < Duration::from_secs(30), "{stayed}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_daemon_whose_repository_is_deleted_leaves() {
    let repo = indexed();
    let (s, pid) = a_daemon_that_stays(&repo);
    remove_beside_a_daemon(repo.path());
    wait_until_gone(pid, "the daemon stayed after its repository was deleted");
    drop(s);
}

/// A commit made while another process holds the writer lock for a
/// moment (a command, an `sno init`): the daemon tries again within the
/// change, a tenth of a second on and longer each time, and indexes the
/// commit once the lock is free, with no failed run to report (it used to
/// wait for the watcher's poll, 5 s, and log a failure).
#[test]
fn a_commit_made_while_the_writer_lock_is_held_briefly_is_indexed_after_it() {
    let repo = indexed();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let log =
        || std::fs::read_to_string(repo.path().join(".sno/logs/serve.log")).unwrap_or_default();
    let t = Instant::now();
    while !log().contains("search index ready") {
        assert!(t.elapsed() < Duration::from_secs(90), "no search index");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Held from before the commit until well after the daemon's first try.
    let mut held = std::process::Command::new("flock")
        .args([
            repo.path().join(".sno/lock").to_str().unwrap(),
            "sleep",
            "1.5",
        ])
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !writer_busy(&repo) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "flock did not take the lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    repo.write("app/later.py", "def later():\n    return 2\n");
    let new_head = repo.commit("later");
    let t = Instant::now();
    while body(&s.call("status", json!({})))["as_of"]["commit"] != new_head {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "not indexed: {}",
            log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(held.wait().unwrap().success());
    assert!(
        !log().contains("could not index where HEAD moved"),
        "the held lock was reported as a failed run: {}",
        log()
    );
    // The search indexes of both heads were opened with no thread watching
    // them for commits (each stored index is fixed once written; tantivy's
    // watcher polled a replaced head's directory twice a second, warning
    // each time it found it gone).
    let found = s.call("search", json!({"query": "later", "max_tokens": 500}));
    assert!(found.to_string().contains("app/later.py"), "{found}");
    let pid = server_pid(&mut s);
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .collect();
    assert!(
        !threads
            .iter()
            .any(|t| t.starts_with("thread-tantivy") || t.starts_with("watch-callbacks")),
        "{threads:?}"
    );
    assert!(!log().contains("Failed to open meta file"), "{}", log());
    assert!(s.finish().success());
    wait_for_daemon_exit(&repo);
}

/// `rm -rf .sno` and a new `sno init` under a running daemon: the old
/// daemon, whose database is gone, leaves rather than competing for the
/// new database's writer lock when HEAD moves (a commit then waited 8 s
/// for it), and a new server indexes and finds the next commit.
#[test]
fn a_daemon_whose_database_is_made_again_leaves() {
    let repo = indexed();
    let (s, pid) = a_daemon_that_stays(&repo);
    remove_beside_a_daemon(&repo.path().join(".sno"));
    repo.sno_json(&["init", "--json"]);
    wait_until_gone(pid, "the daemon stayed over a database made again");
    drop(s);
    // The new database is whole and the next commit is the new daemon's.
    repo.write("later.py", "def later_probe():\n    return 2\n");
    let later = repo.commit("later");
    let mut fresh = Server::start_with(&repo, &[("SNO_SERVE_IDLE_SECS", "0")]);
    fresh.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    assert_ne!(server_pid(&mut fresh), pid);
    let t = Instant::now();
    while body(&fresh.call("status", json!({})))["as_of"]["commit"] != later {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the new daemon did not index the commit"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(fresh.finish().success());
    wait_for_daemon_exit(&repo);
    let o = repo.sno(&["doctor"]);
    assert!(o.status.success(), "{}", stdout(&o));
}

/// A common name's references over MCP are listed 200 at most, or as many
/// as asked, and the rest counted: 500 of them would fill an agent's
/// context.
#[test]
fn graph_answers_list_what_was_asked_and_count_the_rest() {
    let repo = Repo::new();
    let calls: String = (0..30)
        .map(|i| format!("\n\ndef use{i}():\n    return helper()\n"))
        .collect();
    repo.write("app/m.py", format!("def helper():\n    return 1\n{calls}"));
    repo.commit("many callers");
    repo.sno_json(&["init", "--json"]);
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call("callers", json!({"name": "helper", "limit": 5}));
    assert_eq!(body(&r)["results"].as_array().unwrap().len(), 5, "{r}");
    assert_eq!(body(&r)["more"], 25, "{r}");
    let r = s.call("callers", json!({"name": "helper"}));
    assert_eq!(body(&r)["results"].as_array().unwrap().len(), 30, "{r}");
    assert!(body(&r).get("more").is_none(), "{r}");
    let r = s.call("references", json!({"name": "helper", "limit": 0}));
    assert_eq!(body(&r)["error"]["code"], "SNO-BAD-ARGS", "{r}");
    s.finish();
}

/// A server started on a repository nothing has indexed (an agent's client
/// set up before anyone ran `sno init`) indexes it first, as `sno init`
/// would, and then answers: it no longer exits with the error on stderr,
/// which the client saw as a closed connection.
#[test]
fn a_server_on_a_repository_not_indexed_yet_indexes_it_first() {
    let repo = Repo::new();
    repo.write(
        "app/greet.py",
        "def greet(name):\n    return 'hi ' + name\n",
    );
    repo.commit("one function");
    assert!(!repo.path().join(".sno/sno.redb").exists());
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call("get_symbol", json!({"name": "greet"}));
    assert_eq!(body(&r)["symbol"]["path"], "app/greet.py", "{r}");
    s.finish();
    let status = repo.status();
    assert_eq!(status["commits_indexed"], 1, "{status}");
    assert_eq!(status["symbols_total"], 1, "{status}");
}

/// A line past the indexed end of a file the work tree has grown is the
/// agent's next edit, not a mistake; one past a file that has not changed
/// is.
#[test]
fn context_for_edit_takes_lines_the_work_tree_added() {
    let repo = Repo::new();
    repo.write("app/a.py", "def f():\n    return 1\n");
    repo.commit("two lines");
    repo.sno_json(&["init", "--json"]);
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call("context_for_edit", json!({"file": "app/a.py", "line": 4}));
    assert_eq!(body(&r)["error"]["code"], "SNO-BAD-ARGS", "{r}");
    repo.write(
        "app/a.py",
        "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
    );
    let r = s.call("context_for_edit", json!({"file": "app/a.py", "line": 5}));
    assert_eq!(body(&r)["edited_in_work_tree"], true, "{r}");
    s.finish();
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let repo = indexed();
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    for line in ["hello", "{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": "] {
        s.raw(line);
        let r = s.recv();
        assert_eq!(r["error"]["code"], -32700, "{r}");
        assert!(r["id"].is_null(), "{r}");
    }
    // Bytes that are not UTF-8: a parse error too, and the session goes on.
    let stdin = s.stdin.as_mut().unwrap();
    stdin.write_all(b"\xff\xfe not utf-8\n").unwrap();
    stdin.flush().unwrap();
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    let r = s.call("status", json!({}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(s.finish().success());
}

#[test]
fn changes_to_the_work_tree_include_new_and_renamed_files() {
    let repo = Repo::new();
    repo.write(
        "a.py",
        "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n",
    );
    repo.write("g.py", "def gamma():\n    return 3\n");
    repo.write(".gitignore", "ignored.py\n");
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    repo.git(&["mv", "a.py", "renamed.py"]);
    repo.write("staged.py", "def staged_fn():\n    return 4\n");
    repo.git(&["add", "staged.py"]);
    repo.write("untracked.py", "def untracked_fn():\n    return 5\n");
    repo.write("ignored.py", "def ignored_fn():\n    return 6\n");
    let (mut s, _) = Server::init(&repo, "2025-06-18");
    let r = s.call("changes", json!({"to": "worktree"}));
    let mut seen: Vec<(String, String, String)> = body(&r)["changes"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|c| {
            (
                c["change"].as_str().unwrap().to_string(),
                c["name"].as_str().unwrap().to_string(),
                c["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let want: Vec<(String, String, String)> = [
        ("added", "alpha", "renamed.py"),
        ("added", "beta", "renamed.py"),
        ("added", "staged_fn", "staged.py"),
        ("added", "untracked_fn", "untracked.py"),
        ("removed", "alpha", "a.py"),
        ("removed", "beta", "a.py"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(seen, want, "{r}");
    assert!(s.finish().success());
}
