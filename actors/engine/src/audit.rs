//! The audit actor: one writer of audit records, so callers never wait on
//! storage to report what they did. Records are batched: the first record
//! after a write schedules the next write a few milliseconds later, so a burst
//! of tool calls costs one transaction, not one each.

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_journal::audit::AuditRecord;
use sno_journal::Journal;

/// How long a record may wait for others to share its transaction.
const BATCH_WINDOW: Duration = Duration::from_millis(50);

/// Messages of the audit actor.
pub enum AuditMsg {
    Record(AuditRecord),
    /// Writes what is pending (sent by the actor to itself).
    Write,
    /// Answers once every record sent before it is stored.
    Flush(RpcReplyPort<()>),
}

/// The audit actor.
pub struct Audit;

/// The audit actor's state: the journal and records not yet written.
pub struct AuditState {
    journal: Arc<Journal>,
    pending: Vec<AuditRecord>,
}

impl AuditState {
    fn write(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if let Err(e) = self.journal.record_audit_batch(&self.pending) {
            // Losing an audit line must not stop indexing or serving.
            tracing::error!(error = %e, lost = self.pending.len(), "could not store audit records");
        }
        self.pending.clear();
    }
}

impl Actor for Audit {
    type Msg = AuditMsg;
    type State = AuditState;
    type Arguments = Arc<Journal>;

    async fn pre_start(
        &self,
        _me: ActorRef<AuditMsg>,
        journal: Arc<Journal>,
    ) -> Result<AuditState, ActorProcessingErr> {
        Ok(AuditState {
            journal,
            pending: Vec::new(),
        })
    }

    async fn handle(
        &self,
        me: ActorRef<AuditMsg>,
        msg: AuditMsg,
        st: &mut AuditState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AuditMsg::Record(rec) => {
                if st.pending.is_empty() {
                    me.send_after(BATCH_WINDOW, || AuditMsg::Write);
                }
                st.pending.push(rec);
            }
            AuditMsg::Write => st.write(),
            AuditMsg::Flush(reply) => {
                st.write();
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _me: ActorRef<AuditMsg>,
        st: &mut AuditState,
    ) -> Result<(), ActorProcessingErr> {
        st.write();
        Ok(())
    }
}

/// An audit record as answers show it.
pub fn to_wire(r: &sno_journal::audit::AuditRecord) -> sno_protocol::audit::AuditRecord {
    use sno_journal::audit::AuditEntry as J;
    use sno_protocol::audit as w;
    let entry = match &r.entry {
        J::IndexRun(x) => w::AuditEntry::IndexRun(w::IndexRun {
            pid: x.pid,
            started_ms: x.started_ms,
            finished_ms: x.finished_ms,
            target: x.target.map(|c| c.to_hex()),
            commits_indexed: x.commits_indexed,
            files_parsed: x.files_parsed,
            failures: x.failures.clone(),
            skipped_binary: x.skipped_binary,
            skipped_too_large: x.skipped_too_large,
            skipped_unsupported: x.skipped_unsupported,
            skipped_ignored: x.skipped_ignored,
            excluded_secrets: x.excluded_secrets,
            outcome: x.outcome.clone(),
        }),
        J::ToolCall(x) => w::AuditEntry::ToolCall(w::ToolCall {
            session: x.session.clone(),
            tool: x.tool.clone(),
            args_digest: x.args_digest.clone(),
            result_bytes: x.result_bytes,
            latency_us: x.latency_us,
            error: x.error.clone(),
        }),
        J::Retrieval(x) => w::AuditEntry::Retrieval(w::Retrieval {
            session: x.session.clone(),
            query: x.query.clone(),
            hits: x.hits,
            top_score: x.top_score,
            latency_us: x.latency_us,
        }),
        J::LlmCall(x) => w::AuditEntry::LlmCall(w::LlmCall {
            purpose: x.purpose.clone(),
            model: x.model.clone(),
            endpoint: x.endpoint.clone(),
            prompt_tokens: x.prompt_tokens,
            completion_tokens: x.completion_tokens,
            latency_ms: x.latency_ms,
            error: x.error.clone(),
        }),
    };
    w::AuditRecord {
        time_ms: r.time_ms,
        entry,
    }
}
