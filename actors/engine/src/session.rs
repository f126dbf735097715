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

/// A tool call as the front end that served it saw it.
pub struct FinishedCall<'a> {
    pub tool: &'a str,
    /// The arguments as sent (JSON).
    pub args: &'a str,
    pub latency: std::time::Duration,
    pub result_bytes: usize,
    /// The error code, if the call failed.
    pub error: Option<String>,
    /// Whether the answer came from a state already in memory.
    pub cache_hit: bool,
}

fn preview(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A connection's handle on its session actor.
#[derive(Clone)]
pub struct SessionHandle {
    pub id: String,
    actor: ActorRef<SessionMsg>,
}

impl SessionHandle {
    /// Records the client's name and version.
    pub fn client(&self, name: String) {
        let _ = self.actor.cast(SessionMsg::Client(name));
    }

    /// Records a finished call.
    pub fn called(&self, call: CallRecord) {
        let _ = self.actor.cast(SessionMsg::Called(call));
    }

    /// Records how full the agent's context window is.
    pub fn context(&self, used: u64, capacity: u64) {
        let _ = self.actor.cast(SessionMsg::Context { used, capacity });
    }

    /// The session's current record.
    pub async fn record(&self) -> crate::Result<SessionRecord> {
        ractor::call!(self.actor, SessionMsg::Info)
            .map_err(|e| crate::Error::internal(format!("session: {e}")))
    }

    /// Stores the session and stops its actor.
    pub async fn close(&self) {
        let _ = ractor::call!(self.actor, |r| SessionMsg::Persist(Some(r)));
        self.actor.stop(None);
    }
}

fn info(s: &SessionRecord, current: bool) -> sno_protocol::session::SessionInfo {
    sno_protocol::session::SessionInfo {
        id: s.id.clone(),
        client: s.client.clone(),
        started_ms: s.started_ms,
        last_ms: s.last_ms,
        calls: s.calls,
        errors: s.errors,
        cache_hits: s.cache_hits,
        context: s.context,
        current,
        server_pid: std::process::id(),
    }
}

impl crate::Engine {
    /// A new MCP session, its actor supervised by the engine.
    pub async fn open_session(&self) -> crate::Result<SessionHandle> {
        let record = SessionRecord::start(String::new(), crate::now_ms());
        let id = record.id.clone();
        let sup = self.supervisor().await?;
        let (actor, _) = Actor::spawn_linked(
            None,
            Session,
            (self.journal.clone(), record),
            sup.get_cell(),
        )
        .await
        .map_err(crate::Error::internal)?;
        Ok(SessionHandle { id, actor })
    }

    /// The record of session `id`: the asking one (`current`) from its
    /// actor, another from the journal.
    async fn session_record(
        &self,
        current: &SessionHandle,
        id: Option<&str>,
    ) -> crate::Result<(SessionRecord, bool)> {
        match id {
            None | Some("") => Ok((current.record().await?, true)),
            Some(id) if id == current.id => Ok((current.record().await?, true)),
            Some(id) => match self.journal.session(id)? {
                Some(s) => Ok((s, false)),
                None => Err(sno_protocol::ErrorCode::UnknownSession
                    .with(format!("no session `{id}`"))
                    .suggesting(crate::error::nearest(
                        id,
                        self.journal.session_ids().unwrap_or_default(),
                        3,
                    ))
                    .into()),
            },
        }
    }

    /// `session_info`.
    pub async fn session_info(
        &self,
        current: &SessionHandle,
        id: Option<&str>,
    ) -> crate::Result<sno_protocol::session::SessionInfo> {
        let (s, is_current) = self.session_record(current, id).await?;
        Ok(info(&s, is_current))
    }

    /// `session_history`: the last `limit` calls, oldest first.
    pub async fn session_history(
        &self,
        current: &SessionHandle,
        id: Option<&str>,
        limit: Option<usize>,
    ) -> crate::Result<sno_protocol::session::SessionHistory> {
        let (s, _) = self.session_record(current, id).await?;
        let limit = limit.unwrap_or(50).max(1);
        let skip = s.transcript.len().saturating_sub(limit);
        Ok(sno_protocol::session::SessionHistory {
            id: s.id.clone(),
            calls: s
                .transcript
                .iter()
                .skip(skip)
                .map(|c| sno_protocol::session::Call {
                    time_ms: c.time_ms,
                    tool: c.tool.clone(),
                    args_digest: c.args_digest.clone(),
                    args_preview: c.args_preview.clone(),
                    error: c.error.clone(),
                    result_bytes: c.result_bytes,
                    latency_us: c.latency_us,
                    cache_hit: c.cache_hit,
                })
                .collect(),
        })
    }

    /// Records a finished tool call of `session` in the session and the
    /// audit (arguments as a digest and a short preview, never whole).
    pub async fn record_call(&self, session: &SessionHandle, call: FinishedCall<'_>) {
        let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(call.args.as_bytes()));
        let latency_us = call.latency.as_micros() as u64;
        session.called(CallRecord {
            time_ms: crate::now_ms(),
            tool: call.tool.to_string(),
            args_digest: digest.clone(),
            args_preview: preview(&self.kept_args(call.args), 200),
            error: call.error.clone(),
            result_bytes: call.result_bytes as u64,
            latency_us,
            cache_hit: call.cache_hit,
        });
        self.audit(sno_journal::audit::AuditEntry::ToolCall(
            sno_journal::audit::ToolCall {
                session: session.id.clone(),
                tool: call.tool.to_string(),
                args_digest: digest,
                result_bytes: call.result_bytes as u64,
                latency_us,
                error: call.error,
            },
        ))
        .await;
    }

    /// [`Engine::search`] for a session: the retrieval is audited.
    pub async fn search_for(
        &self,
        session: &SessionHandle,
        args: &crate::search::SearchArgs,
    ) -> crate::Result<sno_protocol::context::ContextPackage> {
        let t = std::time::Instant::now();
        if self.hooks.search_panic.as_deref() == Some(args.query.as_str()) {
            panic!("SNO_TEST_SEARCH_PANIC: a search for {:?}", args.query);
        }
        let r = self.search(args);
        let (hits, top_score) = r
            .as_ref()
            .map(|(_, s)| (s.hits, s.top_score))
            .unwrap_or((0, 0.0));
        self.audit(sno_journal::audit::AuditEntry::Retrieval(
            sno_journal::audit::Retrieval {
                session: session.id.clone(),
                query: self.kept(args.query.clone()),
                hits: hits as u32,
                top_score,
                latency_us: t.elapsed().as_micros() as u64,
            },
        ))
        .await;
        r.map(|(pkg, _)| pkg)
    }

    /// What an agent sent, as the session and the audit keep it: with its
    /// secret values masked unless the repository turned masking off.
    fn kept(&self, mut text: String) -> String {
        if self.config.mask_secrets {
            crate::masking::mask(&mut text);
        }
        text
    }

    /// A tool call's arguments as the session keeps them (see [`Self::kept`]).
    fn kept_args(&self, args: &str) -> String {
        if self.config.mask_secrets {
            crate::masking::masked_args(args)
        } else {
            args.to_string()
        }
    }

    /// Records an audit entry (asynchronously, batched by the audit actor).
    pub async fn audit(&self, entry: sno_journal::audit::AuditEntry) {
        if let Ok(sup) = self.supervisor().await {
            if let Ok(audit) = ractor::call!(sup, crate::supervisor::SupervisorMsg::Audit) {
                let _ = audit.cast(crate::audit::AuditMsg::Record(
                    sno_journal::audit::AuditRecord {
                        time_ms: crate::now_ms(),
                        entry,
                    },
                ));
            }
        }
    }
}
