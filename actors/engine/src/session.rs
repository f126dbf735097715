//! The session actor: one per MCP connection. It owns the session record
//! (ULID, counters, the last 50 calls) and persists it, so a client that
//! reconnects, or a server that restarts, finds the session by id.
//!
//! Writes are debounced: a record changed by a burst of calls is stored once
//! the burst settles, and always when the connection ends.

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_journal::session::{CallRecord, SessionRecord};
use sno_journal::Journal;

/// How long a changed record may wait before it is stored.
const PERSIST_AFTER: Duration = Duration::from_millis(100);

/// Messages of the session actor.
pub enum SessionMsg {
    /// A tool call finished.
    Called(CallRecord),
    /// The client said how much of its context is used, and the capacity.
    Context { used: u64, capacity: u64 },
    /// The client named itself in `initialize`.
    Client(String),
    /// The current record.
    Info(RpcReplyPort<SessionRecord>),
    /// Stores the record now (sent by the actor to itself, or by a caller
    /// that needs it stored before it answers).
    Persist(Option<RpcReplyPort<()>>),
}

/// The session actor.
pub struct Session;

/// State of a session actor.
pub struct SessionState {
    journal: Arc<Journal>,
    record: SessionRecord,
    dirty: bool,
}

impl SessionState {
    fn persist(&mut self) {
        if !self.dirty {
            return;
        }
        match self.journal.put_session(&self.record) {
            Ok(()) => self.dirty = false,
            Err(e) => {
                tracing::error!(error = %e, session = %self.record.id, "could not store the session")
            }
        }
    }
}

impl Actor for Session {
    type Msg = SessionMsg;
    type State = SessionState;
    type Arguments = (Arc<Journal>, SessionRecord);

    async fn pre_start(
        &self,
        _me: ActorRef<SessionMsg>,
        (journal, record): (Arc<Journal>, SessionRecord),
    ) -> Result<SessionState, ActorProcessingErr> {
        let mut st = SessionState {
            journal,
            record,
            dirty: true,
        };
        st.persist();
        Ok(st)
    }

    async fn handle(
        &self,
        me: ActorRef<SessionMsg>,
        msg: SessionMsg,
        st: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        let changed = match msg {
            SessionMsg::Called(call) => {
                st.record.push(call);
                true
            }
            SessionMsg::Context { used, capacity } => {
                st.record.context = Some((used, capacity));
                true
            }
            SessionMsg::Client(c) => {
                st.record.client = c;
                true
            }
            SessionMsg::Info(reply) => {
                let _ = reply.send(st.record.clone());
                false
            }
            SessionMsg::Persist(reply) => {
                st.persist();
                if let Some(r) = reply {
                    let _ = r.send(());
                }
                false
            }
        };
        if changed {
            if !st.dirty {
                me.send_after(PERSIST_AFTER, || SessionMsg::Persist(None));
            }
            st.dirty = true;
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _me: ActorRef<SessionMsg>,
        st: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        st.persist();
        Ok(())
    }
}
