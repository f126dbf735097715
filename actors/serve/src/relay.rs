//! The relay `sno serve` runs between its client's stdio and the daemon.
//!
//! MCP over stdio is one JSON-RPC message per line, so the relay copies
//! lines, and reads each as little as it must: a line that is not JSON is
//! answered with JSON-RPC's parse error (-32700) here, as the
//! specification asks, instead of vanishing; and the relay remembers the
//! client's `initialize` and the requests still unanswered. When the
//! daemon goes away under a client (killed, crashed), each unanswered
//! request gets an error, a daemon is started again (or found), and the
//! session is opened on it with the client's own `initialize`: the agent
//! keeps its tools instead of a connection that ends without a word.

use std::collections::BTreeSet;

use serde_json::Value;

/// What the relay knows of its client's session.
#[derive(Debug, Default)]
pub struct Session {
    /// The client's `initialize` request, as sent.
    initialize: Option<String>,
    /// The id of that request.
    initialize_id: Option<String>,
    /// The client's `notifications/initialized`, as sent.
    initialized: Option<String>,
    /// Requests sent to the daemon and not answered yet, by id (as JSON).
    pending: BTreeSet<String>,
}

/// What to do with a line from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum FromClient {
    /// Send it to the daemon.
    Forward,
    /// Nothing (a blank line).
    Skip,
    /// Answer the client with this line instead: the message is not JSON.
    Answer(String),
}

impl Session {
    /// Reads a line the client sent.
    pub fn from_client(&mut self, line: &str) -> FromClient {
        if line.trim().is_empty() {
            return FromClient::Skip;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return FromClient::Answer(error_line(
                    &Value::Null,
                    -32700,
                    &format!("Parse error: the line is not JSON ({e})"),
                ))
            }
        };
        let method = v.get("method").and_then(Value::as_str);
        match (v.get("id"), method) {
            (Some(id), Some(m)) => {
                let id = id.to_string();
                if m == "initialize" {
                    self.initialize = Some(line.to_string());
                    self.initialize_id = Some(id.clone());
                }
                self.pending.insert(id);
            }
            (None, Some("notifications/initialized")) => {
                self.initialized = Some(line.to_string());
            }
            _ => {}
        }
        FromClient::Forward
    }

    /// Reads a line the daemon sent (an answer settles its request).
    pub fn from_daemon(&mut self, line: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            let answer = v.get("result").is_some() || v.get("error").is_some();
            if let (true, Some(id)) = (answer, v.get("id")) {
                self.pending.remove(&id.to_string());
            }
        }
    }

    /// The errors for the requests the lost daemon left unanswered, each
    /// settled.
    pub fn lost(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .map(|id| {
                let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
                error_line(
                    &id,
                    -32603,
                    "SNO-SERVE-LOST: the sno daemon stopped before answering; a new one serves now, ask again",
                )
            })
            .collect()
    }

    /// What opens the session again on a new daemon: the client's
    /// `initialize` (whose answer the relay keeps to itself, by this id)
    /// and its `initialized`. `None` before the client initialized.
    pub fn reopen(&self) -> Option<(&str, &str, Option<&str>)> {
        Some((
            self.initialize.as_deref()?,
            self.initialize_id.as_deref()?,
            self.initialized.as_deref(),
        ))
    }

    /// Whether `line` from the daemon answers the replayed `initialize`.
    pub fn answers_initialize(&self, line: &str) -> bool {
        let Some(want) = &self.initialize_id else {
            return false;
        };
        serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("id").map(Value::to_string))
            .is_some_and(|id| &id == want)
    }
}

/// A JSON-RPC error answer, as one line (no newline).
fn error_line(id: &Value, code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_json_is_answered_with_a_parse_error() {
        let mut s = Session::default();
        for line in ["hello", "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": "] {
            let FromClient::Answer(a) = s.from_client(line) else {
                panic!("{line}");
            };
            let v: Value = serde_json::from_str(&a).unwrap();
            assert_eq!(v["error"]["code"], -32700);
            assert_eq!(v["id"], Value::Null);
        }
        assert_eq!(s.from_client("  "), FromClient::Skip);
        assert!(s.pending.is_empty());
    }

    #[test]
    fn unanswered_requests_get_errors_and_the_session_reopens() {
        let mut s = Session::default();
        assert!(s.reopen().is_none());
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        assert_eq!(s.from_client(init), FromClient::Forward);
        s.from_daemon(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        s.from_client(note);
        s.from_client(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#);
        s.from_client(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#);
        s.from_daemon(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        let lost = s.lost();
        assert_eq!(lost.len(), 1, "{lost:?}");
        let v: Value = serde_json::from_str(&lost[0]).unwrap();
        assert_eq!(v["id"], "a");
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("SNO-SERVE-LOST"));
        assert!(s.lost().is_empty(), "each is answered once");
        let (i, id, n) = s.reopen().unwrap();
        assert_eq!((i, id, n), (init, "0", Some(note)));
        assert!(s.answers_initialize(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#));
        assert!(!s.answers_initialize(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    }
}
