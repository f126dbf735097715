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

use serde::Deserialize as _;
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

/// What the relay reads of a daemon's line: its id and whether it
/// answers. The rest (a search's answer is kilobytes of text) is skipped
/// over, not built into a tree of values.
#[derive(serde::Deserialize)]
struct DaemonMessage {
    /// Present (`null` included) or not.
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// A field that is there, whatever its value (`null` too), skipped over.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

/// A field's value when it is there, `null` included.
fn present_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
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
        if let Ok(m) = serde_json::from_str::<DaemonMessage>(line) {
            if let (true, Some(id)) = (m.result || m.error, m.id) {
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
    fn an_answer_settles_its_request_whatever_it_holds() {
        let mut s = Session::default();
        for id in ["1", "2", "3", "\"x\"", "5"] {
            s.from_client(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#
            ));
        }
        // A result of null, an error, a long result with nested ids, a
        // string id; a notification and a line that is no JSON settle
        // nothing.
        s.from_daemon(r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
        s.from_daemon(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#);
        s.from_daemon(
            r#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"id\":5}"}],"id":9},"id":3}"#,
        );
        s.from_daemon(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#);
        s.from_daemon(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":5}}"#);
        s.from_daemon("not json");
        assert_eq!(s.pending.iter().collect::<Vec<_>>(), ["5"]);
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
