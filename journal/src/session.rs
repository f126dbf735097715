//! MCP sessions as the journal keeps them: one record per connection, with
//! the transcript of its last calls, so `session_info` finds a session by id
//! after the server restarts. Sessions describe work, not repository state:
//! they live beside the events, like audit records, and are never replayed.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// How many calls a session's transcript keeps.
pub const TRANSCRIPT_LEN: usize = 50;

/// One tool call in a session's transcript.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct CallRecord {
    /// Milliseconds since the epoch.
    pub time_ms: u64,
    pub tool: String,
    /// xxh3-64 of the arguments' JSON, hex.
    pub args_digest: String,
    /// The arguments' JSON, cut to 200 characters.
    pub args_preview: String,
    /// The error code, `None` when the call succeeded.
    pub error: Option<String>,
    pub result_bytes: u64,
    pub latency_us: u64,
    /// Whether the answer came from a state already in memory.
    pub cache_hit: bool,
}

/// A session: counters and the last [`TRANSCRIPT_LEN`] calls.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct SessionRecord {
    /// A ULID.
    pub id: String,
    /// The client's name and version from `initialize`, when it gave them.
    pub client: String,
    pub started_ms: u64,
    pub last_ms: u64,
    pub calls: u64,
    pub errors: u64,
    pub cache_hits: u64,
    /// Context tokens the agent last reported in use, and its capacity.
    pub context: Option<(u64, u64)>,
    pub transcript: VecDeque<CallRecord>,
}

impl SessionRecord {
    /// A new session with a fresh ULID.
    pub fn start(client: String, now_ms: u64) -> SessionRecord {
        SessionRecord {
            id: ulid::Ulid::generate().to_string(),
            client,
            started_ms: now_ms,
            last_ms: now_ms,
            calls: 0,
            errors: 0,
            cache_hits: 0,
            context: None,
            transcript: VecDeque::new(),
        }
    }

    /// Counts a call and keeps it in the transcript, dropping the oldest.
    pub fn push(&mut self, call: CallRecord) {
        self.calls += 1;
        self.errors += u64::from(call.error.is_some());
        self.cache_hits += u64::from(call.cache_hit);
        self.last_ms = self.last_ms.max(call.time_ms);
        if self.transcript.len() == TRANSCRIPT_LEN {
            self.transcript.pop_front();
        }
        self.transcript.push_back(call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcript_keeps_the_last_fifty_calls_and_counts_all() {
        let mut s = SessionRecord::start("c".into(), 0);
        for i in 0..120u64 {
            s.push(CallRecord {
                time_ms: i,
                tool: format!("t{i}"),
                args_digest: String::new(),
                args_preview: String::new(),
                error: (i % 10 == 0).then(|| "SNO-X".into()),
                result_bytes: 1,
                latency_us: 1,
                cache_hit: i % 2 == 0,
            });
        }
        assert_eq!(s.calls, 120);
        assert_eq!(s.errors, 12);
        assert_eq!(s.cache_hits, 60);
        assert_eq!(s.transcript.len(), TRANSCRIPT_LEN);
        assert_eq!(s.transcript.front().unwrap().tool, "t70");
        assert_eq!(s.last_ms, 119);
    }
}
