//! The audit actor: one writer of audit records, so callers never wait on
//! storage to report what they did.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_journal::audit::AuditRecord;
use sno_journal::Journal;

/// Messages of the audit actor.
pub enum AuditMsg {
    Record(AuditRecord),
    /// Answers once every record sent before it is stored.
    Flush(RpcReplyPort<()>),
}

/// The audit actor.
pub struct Audit;

impl Actor for Audit {
    type Msg = AuditMsg;
    type State = Arc<Journal>;
    type Arguments = Arc<Journal>;

    async fn pre_start(
        &self,
        _me: ActorRef<AuditMsg>,
        j: Arc<Journal>,
    ) -> Result<Arc<Journal>, ActorProcessingErr> {
        Ok(j)
    }

    async fn handle(
        &self,
        _me: ActorRef<AuditMsg>,
        msg: AuditMsg,
        j: &mut Arc<Journal>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            AuditMsg::Record(rec) => {
                if let Err(e) = j.record_audit(&rec) {
                    // Losing an audit line must not stop indexing.
                    tracing::error!(error = %e, "could not store an audit record");
                }
            }
            AuditMsg::Flush(reply) => {
                let _ = reply.send(());
            }
        }
        Ok(())
    }
}
