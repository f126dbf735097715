//! A raw MCP client for tests: JSON-RPC lines written by hand to `sno
//! serve`'s stdin, answers read from its stdout. No SDK, so malformed and
//! hostile input can be sent too.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{sno_command, Repo};

/// A `sno serve` process spoken to over stdio.
pub struct Server {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub out: BufReader<ChildStdout>,
    pub next_id: u64,
}

impl Server {
    pub fn start(repo: &Repo) -> Server {
        Server::start_with(repo, &[])
    }

    /// Starts with extra environment (which a daemon it starts inherits).
    pub fn start_with(repo: &Repo, env: &[(&str, &str)]) -> Server {
        let mut command = sno_command();
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .args(["serve", repo.path().to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            out,
            next_id: 1,
        }
    }

    /// Starts and initializes with `version`; returns the server and the
    /// negotiated version.
    pub fn init(repo: &Repo, version: &str) -> (Server, String) {
        Server::init_with(repo, version, &[])
    }

    /// [`Server::init`] with extra environment.
    pub fn init_with(repo: &Repo, version: &str, env: &[(&str, &str)]) -> (Server, String) {
        let mut s = Server::start_with(repo, env);
        let r = s.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let v = r["result"]["protocolVersion"].as_str().unwrap().to_string();
        (s, v)
    }

    pub fn send(&mut self, v: &Value) {
        self.raw(&v.to_string());
    }

    pub fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.out.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let r = self.recv();
            if r["id"] == id {
                return r;
            }
        }
    }

    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Closes stdin and waits for a clean exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait(&mut self.child, Duration::from_secs(20))
    }
}

pub fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t.elapsed() < limit, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The daemon removes its socket when it leaves (here right after its last
/// client: the tests run with SNO_SERVE_IDLE_SECS=0).
pub fn wait_for_daemon_exit(repo: &Repo) {
    let sock = repo.path().join(".sno/sno.sock");
    let t = Instant::now();
    while sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the daemon did not leave"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn body(r: &Value) -> Value {
    serde_json::from_str(&text(r)).unwrap()
}

/// A tool answer's text as sent.
pub fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {r}"))
        .to_string()
}
