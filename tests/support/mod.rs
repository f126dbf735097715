//! Helpers shared by the end-to-end tests: git repositories built in temp
//! directories with the git CLI, and the real `sno` binary run against them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod mcp;
#[allow(unused_imports)] // not every test speaks MCP
pub use mcp::*;

/// The `sno` binary under test.
pub fn sno_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sno"))
}

/// A git repository in a temporary directory.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// `git init` with a fixed identity and branch `main`.
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = Repo { dir };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.email", "test@example.com"]);
        r.git(&["config", "user.name", "sno test"]);
        r.git(&["config", "commit.gpgsign", "false"]);
        // As `sno init` leaves it: a test that writes `.sno/config.toml`
        // before its first index does not commit it (a repository that
        // ships `.sno` is refused).
        let exclude = r.path().join(".git/info/exclude");
        let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
        text.push_str("\n/.sno/\n");
        std::fs::write(&exclude, text).expect("info/exclude");
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs git in the repository; panics with its output on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Writes a file (creating directories).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Removes a file.
    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.path().join(rel)).unwrap();
    }

    /// Stages everything and commits; returns the new commit id.
    pub fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        self.head()
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    /// Runs `sno ARGS... ` with the repository as working directory.
    pub fn sno(&self, args: &[&str]) -> Output {
        sno_in(self.path(), args, &[])
    }

    /// Runs sno and parses stdout as JSON, asserting success.
    pub fn sno_json(&self, args: &[&str]) -> Value {
        let out = self.sno(args);
        assert!(
            out.status.success(),
            "sno {args:?} failed:\nstdout: {}\nstderr: {}",
            stdout(&out),
            stderr(&out)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("sno {args:?}: not JSON ({e}): {}", stdout(&out)))
    }

    /// `sno status --json`.
    pub fn status(&self) -> Value {
        self.sno_json(&["status", "--json"])
    }

    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.path().join(".sno").join("sno.redb")
    }
}

/// A `sno` command that can never reach the internet or a model the
/// machine happens to have cached: tests are hermetic.
pub fn sno_command() -> Command {
    let mut c = Command::new(sno_bin());
    c.env_remove("SNO_LOG")
        .env("SNO_OFFLINE", "1")
        .env("HF_HOME", "/nonexistent/sno-tests-hf-home")
        // The daemon `sno serve` starts leaves with its last client, so no
        // test leaves a process behind.
        .env("SNO_SERVE_IDLE_SECS", "0");
    c
}

/// Runs sno in `dir` with extra environment variables.
pub fn sno_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = sno_command();
    c.args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("sno runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a failed run printed the error code on stderr.
pub fn assert_error_code(o: &Output, code: &str) {
    assert!(
        !o.status.success(),
        "expected failure with {code}, got success: {}",
        stdout(o)
    );
    let err = stderr(o);
    assert!(
        err.contains(&format!("error[{code}]")),
        "expected {code} in stderr, got: {err}"
    );
    assert!(err.contains("hint:"), "every error carries a hint: {err}");
}

/// Writes `billing.py`: one function, `settle_invoice`, of 84 lines, more
/// than a small budget quotes whole.
pub fn write_long_invoice(repo: &Repo) {
    let body: String = (0..80)
        .map(|i| format!("    total = total + invoice_line_{i}(order)\n"))
        .collect();
    repo.write(
        "billing.py",
        format!("def settle_invoice(order):\n    total = 0\n{body}    return total\n"),
    );
}

/// A small multi-language project: Python, JavaScript, Go, Rust.
pub fn seed_polyglot(repo: &Repo) {
    repo.write(
        "app/config.py",
        r#""""Configuration loading."""
import json
from app.util import read_text


class Config:
    """Holds settings."""

    def __init__(self, values):
        self.values = values

    @classmethod
    def load(cls, path):
        """Read a config file."""
        return cls(json.loads(read_text(path)))

    def get(self, key):
        return self.values.get(key)
"#,
    );
    repo.write(
        "app/util.py",
        r#"def read_text(path):
    """Return the file's text."""
    with open(path) as f:
        return f.read()
"#,
    );
    repo.write(
        "app/main.py",
        r#"from app.config import Config


def main():
    cfg = Config.load("settings.json")
    print(cfg.get("name"))
"#,
    );
    repo.write(
        "web/api.js",
        r#"import { request } from './http.js';

/** Fetch a user by id. */
export async function getUser(id) {
  return request(`/users/${id}`);
}

export class Client {
  constructor(base) { this.base = base; }
  users() { return getUser(1); }
}
"#,
    );
    repo.write(
        "web/http.js",
        r#"export function request(url) {
  return fetch(url).then((r) => r.json());
}
"#,
    );
    repo.write(
        "server/server.go",
        r#"package server

import "fmt"

// Server answers requests.
type Server struct {
	Name string
}

// Run starts the server.
func (s *Server) Run() error {
	fmt.Println(s.Name)
	return s.stop()
}

func (s *Server) stop() error { return nil }
"#,
    );
    repo.write(
        "core/src/lib.rs",
        r#"//! Core.
pub mod parse;

/// Adds two numbers.
pub fn add(a: i32, b: i32) -> i32 {
    parse::check(a) + b
}
"#,
    );
    repo.write(
        "core/src/parse.rs",
        r#"/// Checks a value.
pub fn check(v: i32) -> i32 {
    v
}
"#,
    );
    repo.write("README.md", "# polyglot\n");
}

/// `sno serve` on `repo` as a client would start it (stdin piped: dropping
/// it ends the client), returned once the daemon answers on its socket.
/// `without` names variables the server (and so its daemon) must not have.
pub fn serve_in_background(repo: &Repo, without: &[&str]) -> std::process::Child {
    let mut command = sno_command();
    for var in without {
        command.env_remove(var);
    }
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
            "the daemon did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// Writes a real model2vec model directory: a WordLevel tokenizer.json, a
/// config.json and an F32 `embeddings` tensor in safetensors format. Words
/// of one topic get the same direction, so "car" lands near "automobile".
pub fn tiny_model(dir: &std::path::Path) {
    let topics: &[&[&str]] = &[
        &["car", "automobile", "vehicle", "registry"],
        &["invoice", "bill", "payment"],
        &["weather", "forecast", "rain"],
        &["password", "secret", "hash"],
    ];
    let mut vocab = vec!["[UNK]".to_string()];
    let mut rows: Vec<[f32; 4]> = vec![[0.0; 4]];
    for (t, words) in topics.iter().enumerate() {
        for w in *words {
            vocab.push(w.to_string());
            let mut row = [0.05f32; 4];
            row[t] = 1.0;
            rows.push(row);
        }
    }
    let vocab_json: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, w)| (w.clone(), serde_json::json!(i)))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab_json, "unk_token": "[UNK]"}
    });
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model_type": "model2vec", "normalize": true}"#,
    )
    .unwrap();
    let data: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let mut header = serde_json::json!({
        "embeddings": {"dtype": "F32", "shape": [rows.len(), 4], "data_offsets": [0, data.len()]}
    })
    .to_string();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}
