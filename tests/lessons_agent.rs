//! `sno lessons draft`: the configured LLM provider drafts a lesson's
//! analysis. The provider is a scripted HTTP server on 127.0.0.1 inside the
//! test; nothing reaches the internet.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::Receiver;

use serde_json::{json, Value};
use support::*;

/// One request the scripted provider saw.
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Value,
}

/// Serves `replies` in order (status, body), one connection each; what it
/// was asked comes out of the receiver.
fn provider(replies: Vec<(u16, String)>) -> (String, Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (status, reply) in replies {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
            let header = |k: &str| headers.iter().find(|(h, _)| h == k).map(|(_, v)| v.clone());
            let mut body = Vec::new();
            if let Some(n) = header("content-length") {
                body.resize(n.parse().unwrap(), 0);
                reader.read_exact(&mut body).unwrap();
            } else if header("transfer-encoding").as_deref() == Some("chunked") {
                loop {
                    let mut size = String::new();
                    reader.read_line(&mut size).unwrap();
                    let n = usize::from_str_radix(size.trim(), 16).unwrap();
                    let mut chunk = vec![0; n + 2];
                    reader.read_exact(&mut chunk).unwrap();
                    if n == 0 {
                        break;
                    }
                    body.extend_from_slice(&chunk[..n]);
                }
            }
            let _ = tx.send(Seen {
                request_line: request_line.trim_end().to_string(),
                headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, rx)
}

fn completion(content: &str) -> String {
    json!({
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30},
    })
    .to_string()
}

/// A repository whose last commit reverts the one before: one lesson.
fn with_a_revert() -> Repo {
    let repo = Repo::new();
    repo.write("app/config.py", "def load(path):\n    return read(path)\n");
    repo.commit("config loader");
    repo.write(
        "app/config.py",
        "CACHE = {}\n\ndef load(path):\n    return CACHE.setdefault(path, read(path))\n\ndef cached_load(path):\n    return load(path)\n",
    );
    repo.commit("Cache loaded config");
    repo.git(&["revert", "--no-edit", "HEAD"]);
    repo.sno_json(&["init", "--json"]);
    repo
}

fn configure(repo: &Repo, endpoint: &str) {
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        format!("[agent]\nendpoint = \"{endpoint}\"\nmodel = \"test-model\"\napi_key_env = \"SNO_TEST_AGENT_KEY\"\n"),
    )
    .unwrap();
}

/// `sno lessons draft --json` with `key` in the environment; it must succeed.
fn draft_json(repo: &Repo, key: &str) -> Value {
    let out = sno_in(
        repo.path(),
        &["lessons", "draft", "--json"],
        &[("SNO_TEST_AGENT_KEY", key)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn lessons(repo: &Repo) -> Vec<Value> {
    repo.sno_json(&["lessons", "list", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_provider_drafts_and_a_human_still_decides() {
    let repo = with_a_revert();
    let before = lessons(&repo);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["status"], "proposed", "{before:?}");
    let (url, seen) = provider(vec![(
        200,
        completion("```json\n{\"analysis\": \"The change cached loaded config forever, so edits to the file were never seen.\", \"rule\": \"Do not cache config without invalidation.\"}\n```"),
    )]);
    configure(&repo, &url);

    let v = draft_json(&repo, "sk-test");
    assert_eq!(
        v["drafted"][0]["rule"],
        "Do not cache config without invalidation."
    );
    assert_eq!(v["drafted"][0]["prompt_tokens"], 120);

    // What the provider was asked.
    let asked = seen.recv().unwrap();
    assert_eq!(asked.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert!(asked
        .headers
        .contains(&("authorization".into(), "Bearer sk-test".into())));
    assert_eq!(asked.body["model"], "test-model");
    let user = asked.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Revert \"Cache loaded config\""), "{user}");
    assert!(user.contains("app/config.py"), "{user}");
    assert!(
        user.contains("Message of the reverted commit:\nCache loaded config"),
        "the reverted commit: {user}"
    );
    assert!(
        user.contains("cached_load"),
        "its symbols, from the journal: {user}"
    );

    // Journaled as an analysis; the lesson waits for a human.
    let after = lessons(&repo);
    assert_eq!(after[0]["status"], "analysed");
    assert_eq!(
        after[0]["analyses"][0]["rule"],
        "Do not cache config without invalidation."
    );
    assert_eq!(
        after[0]["analyses"][0]["bound"]["session"],
        "agent:test-model"
    );
    let id = after[0]["id"].as_str().unwrap().to_string();
    repo.sno_json(&[
        "lessons",
        "approve",
        &id,
        "--note",
        "checked by hand",
        "--json",
    ]);
    assert_eq!(lessons(&repo)[0]["status"], "approved");

    // Approving it again journals nothing and keeps the first review's note.
    let events = |r: &Repo| {
        r.sno_json(&["journal", "log", "--json", "--tail", "1000"])
            .as_array()
            .unwrap()
            .len()
    };
    let before = events(&repo);
    let again = sno_in(repo.path(), &["lessons", "approve", &id], &[]);
    assert_error_code(&again, "SNO-LESSON-REVIEWED");
    assert_eq!(events(&repo), before, "a second approval was journaled");
    assert_eq!(lessons(&repo)[0]["review"]["note"], "checked by hand");

    // The call is in the audit trail, with its tokens.
    let audit = repo.sno_json(&["audit", "--json"]);
    let calls: Vec<&Value> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["entry"].get("LlmCall"))
        .collect();
    assert_eq!(calls.len(), 1, "{audit}");
    assert_eq!(calls[0]["model"], "test-model");
    assert_eq!(calls[0]["prompt_tokens"], 120);
    assert!(calls[0]["error"].is_null());

    // A reviewed lesson is not drafted again.
    let out = sno_in(
        repo.path(),
        &["lessons", "draft", &id],
        &[("SNO_TEST_AGENT_KEY", "sk-test")],
    );
    assert_error_code(&out, "SNO-LESSON-REVIEWED");

    // Nothing left to draft: no request is made.
    let v = draft_json(&repo, "sk-test");
    assert_eq!(v["drafted"], json!([]));
}

#[test]
fn a_provider_that_fails_writes_nothing_and_says_why() {
    let repo = with_a_revert();
    let events = |r: &Repo| {
        r.sno_json(&["journal", "log", "--json", "--tail", "1000"])
            .as_array()
            .unwrap()
            .len()
    };
    let n = events(&repo);
    let key = [("SNO_TEST_AGENT_KEY", "sk-test")];

    // Not configured.
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-OFF");

    // An HTTP error, then an answer that is not a draft.
    let (url, _seen) = provider(vec![
        (500, "{\"error\": \"model overloaded\"}".into()),
        (
            200,
            completion("I think it was reverted because of caching."),
        ),
    ]);
    configure(&repo, &url);
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-HTTP");
    assert!(
        stderr(&out).contains("model overloaded"),
        "{}",
        stderr(&out)
    );
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-REPLY");

    // No key in the environment.
    let out = sno_in(repo.path(), &["lessons", "draft"], &[]);
    assert_error_code(&out, "SNO-AGENT-KEY");

    // Plain http off this machine would expose the key: refused unsent.
    configure(&repo, "http://llm.example.invalid/v1");
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-INSECURE");

    // Nobody listening.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    configure(&repo, &url);
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-UNREACHABLE");

    assert_eq!(events(&repo), n, "no event was written");
    // The failed calls are audited with their error codes.
    let audit = repo.sno_json(&["audit", "--json"]);
    let errors: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["entry"].get("LlmCall"))
        .map(|c| c["error"].as_str().unwrap_or("ok").to_string())
        .collect();
    assert_eq!(
        errors,
        ["SNO-AGENT-HTTP", "SNO-AGENT-REPLY", "SNO-AGENT-UNREACHABLE"]
    );
    assert_eq!(lessons(&repo)[0]["status"], "proposed");
}

#[test]
fn an_anthropic_provider_speaks_its_own_protocol() {
    let repo = with_a_revert();
    let reply = json!({
        "content": [{"type": "text", "text": "{\"analysis\": \"Caching hid config edits.\", \"rule\": \"Invalidate cached config on change.\"}"}],
        "usage": {"input_tokens": 90, "output_tokens": 20},
    })
    .to_string();
    let (url, seen) = provider(vec![(200, reply)]);
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        format!("[agent]\nprotocol = \"anthropic\"\nendpoint = \"{url}\"\nmodel = \"claude-test\"\napi_key_env = \"SNO_TEST_AGENT_KEY\"\n"),
    )
    .unwrap();
    let v = draft_json(&repo, "ak-test");
    assert_eq!(
        v["drafted"][0]["rule"],
        "Invalidate cached config on change."
    );
    assert_eq!(v["drafted"][0]["completion_tokens"], 20);
    let asked = seen.recv().unwrap();
    assert_eq!(asked.request_line, "POST /v1/messages HTTP/1.1");
    assert!(asked
        .headers
        .contains(&("x-api-key".into(), "ak-test".into())));
    assert!(asked.headers.iter().any(|(k, _)| k == "anthropic-version"));
    assert!(!asked.headers.iter().any(|(k, _)| k == "authorization"));
    assert_eq!(asked.body["model"], "claude-test");
    assert!(asked.body["system"].as_str().unwrap().contains("\"rule\""));
    assert_eq!(lessons(&repo)[0]["status"], "analysed");
}

#[test]
fn the_key_never_shows_and_redirects_are_not_followed() {
    let repo = with_a_revert();
    let key = [("SNO_TEST_AGENT_KEY", "sk-very-secret")];
    let (url, _seen) = provider(vec![
        (401, "{\"error\": \"bad key sk-very-secret\"}".into()),
        (302, String::new()),
    ]);
    configure(&repo, &url);
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-HTTP");
    assert!(!stderr(&out).contains("sk-very-secret"), "{}", stderr(&out));
    assert!(stderr(&out).contains("<key>"), "{}", stderr(&out));
    let out = sno_in(repo.path(), &["lessons", "draft"], &key);
    assert_error_code(&out, "SNO-AGENT-HTTP");
    assert!(stderr(&out).contains("302"), "{}", stderr(&out));
}

#[test]
fn beside_a_server_the_callers_key_is_used() {
    let repo = with_a_revert();
    let (url, seen) = provider(vec![(
        200,
        completion("{\"analysis\": \"Cached too long.\", \"rule\": \"Invalidate caches.\"}"),
    )]);
    configure(&repo, &url);
    // The daemon starts without the key in its environment.
    let mut server = serve_in_background(&repo, &["SNO_TEST_AGENT_KEY"]);
    let out = sno_in(
        repo.path(),
        &["lessons", "draft", "--json"],
        &[("SNO_TEST_AGENT_KEY", "sk-caller")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = seen.recv().unwrap();
    assert!(asked
        .headers
        .contains(&("authorization".into(), "Bearer sk-caller".into())));
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn with_draft_on_index_the_daemon_drafts_a_revert_it_follows() {
    // An older revert, indexed before: its lesson is not the daemon's to
    // draft (it drafts what its own runs propose).
    let repo = with_a_revert();
    assert_eq!(lessons(&repo).len(), 1);
    let (url, seen) = provider(vec![(
        200,
        completion(
            "{\"analysis\": \"The helper was unused.\", \"rule\": \"Do not add unused helpers.\"}",
        ),
    )]);
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        format!("[agent]\nendpoint = \"{url}\"\nmodel = \"test-model\"\ndraft_on_index = true\n"),
    )
    .unwrap();
    let mut server = serve_in_background(&repo, &[]);
    repo.write("app/util.py", "def helper():\n    return 2\n");
    repo.commit("Add a helper");
    repo.git(&["revert", "--no-edit", "HEAD"]);
    // The daemon indexes the revert, proposes the lesson and drafts it.
    let t = std::time::Instant::now();
    loop {
        let l = lessons(&repo);
        if l.len() == 2 && l[1]["status"] == "analysed" {
            assert_eq!(l[1]["analyses"][0]["rule"], "Do not add unused helpers.");
            assert_eq!(l[0]["status"], "proposed", "the older lesson is left");
            break;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(90),
            "not drafted: {l:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let asked = seen.recv().unwrap();
    assert!(asked.body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("Revert \"Add a helper\""));
    drop(server.stdin.take());
    let _ = server.wait();
    let audit = repo.sno_json(&["audit", "--json"]);
    let calls = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["entry"].get("LlmCall").is_some())
        .count();
    assert_eq!(calls, 1, "one call, for the new lesson: {audit}");
}

/// `sno serve` in the background with `env` set for the daemon it starts.
fn serve_with(repo: &Repo, env: &[(&str, &str)]) -> std::process::Child {
    let mut command = sno_command();
    command.envs(env.iter().copied());
    let child = command
        .args(["serve", "."])
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sno serve starts");
    let sock = repo.path().join(".sno/sno.sock");
    let t = std::time::Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "no daemon"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// The daemon answers `sno status` (it holds the database, so the answer
/// can only come from it).
fn daemon_answers(repo: &Repo) {
    let o = repo.sno(&["status", "--json"]);
    assert!(o.status.success(), "status: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["as_of"]["commit"], repo.head());
    assert!(
        std::os::unix::net::UnixStream::connect(repo.path().join(".sno/sno.sock")).is_ok(),
        "the daemon left"
    );
}

#[test]
fn a_draft_that_panics_fails_alone_and_the_daemon_serves_on() {
    let repo = with_a_revert();
    let (url, _seen) = provider(vec![]);
    configure(&repo, &url);
    let mut server = serve_with(&repo, &[("SNO_TEST_AGENT_PANIC", "1")]);
    for _ in 0..2 {
        // The agent panics on each draft; the supervisor starts a new one.
        let out = sno_in(
            repo.path(),
            &["lessons", "draft", "--json"],
            &[("SNO_TEST_AGENT_KEY", "k")],
        );
        assert!(!out.status.success(), "a panicked draft is a failure");
        assert!(stderr(&out).contains("error[SNO-"), "{}", stderr(&out));
        daemon_answers(&repo);
    }
    assert_eq!(
        lessons(&repo)[0]["status"],
        "proposed",
        "nothing was journaled"
    );
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn a_provider_that_hangs_holds_only_the_agent() {
    let repo = with_a_revert();
    // Accepts the connection and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        format!("[agent]\nendpoint = \"{url}\"\nmodel = \"m\"\ntimeout_secs = 4\n"),
    )
    .unwrap();
    let mut server = serve_with(&repo, &[]);
    let draft = sno_command()
        .args(["lessons", "draft", "--json"])
        .current_dir(repo.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The provider has the request: the agent is waiting on it.
    let _stream = held.join().unwrap().unwrap();
    daemon_answers(&repo);
    let found = repo.sno_json(&["symbol", "load", "--json"]);
    assert!(found["results"][0].is_object(), "{found}");
    let out = draft.wait_with_output().unwrap();
    assert!(!out.status.success(), "a timed-out draft is a failure");
    assert!(stderr(&out).contains("SNO-AGENT"), "{}", stderr(&out));
    daemon_answers(&repo);
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn a_revert_indexed_again_after_a_branch_switch_is_one_lesson() {
    let repo = with_a_revert();
    let proposed = |r: &Repo| {
        r.sno_json(&["journal", "log", "--json", "--tail", "1000"])
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "LessonProposed")
            .count()
    };
    assert_eq!(proposed(&repo), 1);
    // Away and back twice: the revert commit is indexed again each time.
    for _ in 0..2 {
        repo.git(&["checkout", "-q", "-B", "away", "HEAD~2"]);
        repo.sno_json(&["init", "--json"]);
        repo.git(&["checkout", "-q", "main"]);
        repo.sno_json(&["init", "--json"]);
    }
    assert_eq!(proposed(&repo), 1);
    assert_eq!(lessons(&repo).len(), 1);
}
