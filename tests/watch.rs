//! `sno watch`: the index follows HEAD through commits, resets and branch
//! switches, the database stays usable beside it, and bad input gets a
//! clear error.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// Generous: a deadline for a slow shared machine, not a speed claim.
const DEADLINE: Duration = Duration::from_secs(90);

struct Watch {
    child: Child,
    lines: Receiver<Value>,
}

impl Watch {
    fn start(repo: &Repo) -> Watch {
        let mut child = sno_command()
            .args(["watch", "--json", "."])
            .current_dir(repo.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Watch { child, lines }
    }

    /// The next "indexed" event, skipping none: every event must be one.
    fn next_indexed(&mut self) -> Value {
        let v = self.next_event();
        assert_eq!(v["event"], "indexed", "{v}");
        v
    }

    /// The next event, whatever it is.
    fn next_event(&mut self) -> Value {
        let started = Instant::now();
        loop {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(v) => return v,
                Err(RecvTimeoutError::Timeout) => {
                    assert!(self.child.try_wait().unwrap().is_none(), "sno watch exited");
                    assert!(started.elapsed() < DEADLINE, "no index run came");
                }
                Err(RecvTimeoutError::Disconnected) => panic!("sno watch closed its output"),
            }
        }
    }

    /// Stops it as Ctrl-C would; its exit status.
    fn interrupt(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let ok = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(ok.success());
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(t.elapsed() < DEADLINE, "sno watch did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kinds(repo: &Repo) -> Vec<String> {
    let log = repo.sno_json(&["journal", "log", "--json"]);
    log.as_array()
        .or_else(|| log["events"].as_array())
        .unwrap_or_else(|| panic!("journal log: {log}"))
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_index_follows_commits_resets_and_branch_switches() {
    let repo = Repo::new();
    repo.write(
        "app.py",
        "def main():\n    return helper()\n\ndef helper():\n    return 1\n",
    );
    let first = repo.commit("first");
    let mut watch = Watch::start(&repo);

    // Nothing was indexed: the first look indexes HEAD.
    let run = watch.next_indexed();
    assert_eq!(run["commit"], first);
    assert_eq!(run["branch"], "main");

    // A commit.
    repo.write(
        "util.py",
        "from app import helper\n\ndef twice():\n    return helper() * 2\n",
    );
    let second = repo.commit("second");
    let run = watch.next_indexed();
    assert_eq!(run["commit"], second, "{run}");
    assert_eq!(run["commits_indexed"], 1);
    assert_eq!(run["files_parsed"], 1, "only the new file is parsed: {run}");

    // Between runs the database is free for other commands.
    let status = repo.status();
    assert_eq!(status["as_of"]["commit"], second);
    let found = repo.sno_json(&["symbol", "twice", "--json"]);
    assert!(found.to_string().contains("util.py"), "{found}");

    // A reset leaves the indexed line: journaled as a branch move.
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let run = watch.next_indexed();
    assert_eq!(run["commit"], first, "{run}");

    // A new branch with a commit of its own.
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("feature.py", "def shiny():\n    return 2\n");
    let third = repo.commit("feature work");
    let run = watch.next_indexed();
    assert_eq!(run["commit"], third, "{run}");
    assert_eq!(run["branch"], "feature");

    assert!(watch.interrupt().success(), "Ctrl-C is a clean stop");
    let status = repo.status();
    assert_eq!(status["as_of"]["commit"], third);
    assert_eq!(status["as_of"]["branch"], "feature");
    assert_eq!(
        kinds(&repo),
        [
            "CommitIndexed",
            "CommitIndexed",
            "BranchMoved",
            "CommitIndexed",
            "CommitIndexed"
        ],
    );
    // What the watch built is what `sno init` would have: doctor agrees and
    // nothing is left to index.
    let doctor = repo.sno(&["doctor"]);
    assert!(doctor.status.success(), "{}", stderr(&doctor));
    let again = repo.sno_json(&["init", "--json"]);
    assert_eq!(again["up_to_date"], true, "{again}");
}

#[test]
fn an_empty_repository_is_watched_until_its_first_commit() {
    let repo = Repo::new();
    let mut watch = Watch::start(&repo);
    // Nothing to index yet: the watch waits (and says so only on stderr).
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        matches!(
            watch.lines.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Empty)
        ),
        "no run without a commit, and the watch still runs"
    );
    assert!(watch.child.try_wait().unwrap().is_none());
    repo.write("main.go", "package main\n\nfunc main() {}\n");
    let first = repo.commit("first");
    let run = watch.next_indexed();
    assert_eq!(run["commit"], first);
    assert!(watch.interrupt().success());
}

#[test]
fn bad_places_to_watch_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = sno_in(dir.path(), &["watch", "."], &[]);
    assert!(!out.status.success());
    assert_error_code(&out, "SNO-NOT-A-REPO");

    // Beside a running server, whose daemon follows the repository itself.
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    pass\n");
    repo.commit("a");
    repo.sno_json(&["init", "--json"]);
    let mut server = serve_in_background(&repo, &[]);
    let out = repo.sno(&["watch", "--json"]);
    assert!(!out.status.success());
    assert_error_code(&out, "SNO-WATCH-SERVED");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "SNO-WATCH-SERVED");
    drop(server.stdin.take());
    let _ = server.wait();
}

#[test]
fn a_server_started_beside_a_watch_takes_over_and_the_watch_resumes_after_it() {
    let repo = Repo::new();
    repo.write("a.py", "def a():\n    pass\n");
    let first = repo.commit("first");
    repo.sno_json(&["init", "--json"]);
    // Short retries, so the watch notices the server has gone soon.
    std::fs::write(
        repo.path().join(".sno/config.toml"),
        "[watch]\npoll_secs = 1\n",
    )
    .unwrap();
    let mut watch = Watch::start(&repo);
    let mut server = serve_in_background(&repo, &[]);
    repo.write("b.py", "def b():\n    return a()\n");
    let second = repo.commit("second");
    // The daemon holds the database and indexes the commit itself; the
    // watch says so once, not at every retry, and not as an error.
    let said = watch.next_event();
    assert_eq!(said["event"], "paused", "{said}");
    assert!(
        said["reason"]
            .as_str()
            .unwrap()
            .contains("resumes when it leaves"),
        "{said}"
    );
    assert!(said.get("error").is_none(), "{said}");
    assert_eq!(said["commit"], second);
    drop(server.stdin.take());
    assert!(server.wait().unwrap().success());
    // The daemon gone, the watch resumes and finds the daemon's work done.
    let run = watch.next_event();
    assert_eq!(run["event"], "indexed", "said once: {run}");
    assert_eq!(run["commit"], second);
    assert_eq!(run["up_to_date"], true, "{run}");
    assert!(watch.interrupt().success());
    let log = repo.sno_json(&["journal", "log", "--json"]);
    assert_eq!(log[0]["commit"], first);
    assert_eq!(
        log[1]["commit"], second,
        "indexed once, by the daemon: {log}"
    );
    assert_eq!(
        kinds(&repo),
        ["CommitIndexed", "CommitIndexed"],
        "one index of each commit"
    );
}
