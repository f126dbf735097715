//! The writer: the only path for journal appends. Each message is one redb
//! write transaction (an event and the view changes it implies), taken one
//! at a time in the order they arrive, so no two appends ever race and the
//! hash chain grows in one place.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_journal::event::{CommitIndexed, Event};
use sno_journal::model::{CommitId, Seq};
use sno_journal::rollback::Rollback;
use sno_journal::{Flush, Journal};

use crate::error::{Error, Result};

/// Messages of the writer.
pub enum WriterMsg {
    /// A commit's event and views, with the memory events it gave rise to
    /// (a revert's lesson).
    Commit(
        Box<CommitIndexed>,
        Vec<Event>,
        Flush,
        RpcReplyPort<Result<Seq>>,
    ),
    /// A first index of one commit: the commit (its deltas empty) and its
    /// files, parsed and packed, resolved and written a block at a time
    /// ([`Journal::append_first_index_streamed`]).
    FirstIndex(
        Box<CommitIndexed>,
        sno_index::advance::FirstIndex,
        Vec<Event>,
        Flush,
        RpcReplyPort<Result<Seq>>,
    ),
    /// An event that does not move the views (a branch move, a skipped
    /// commit).
    Append(Event, RpcReplyPort<Result<Seq>>),
    /// A memory event (checkpoint, decision, lesson analysis or review).
    Memory(Event, RpcReplyPort<Result<Seq>>),
    /// Moves the views back to a journaled commit's state.
    Rollback(CommitId, Option<CommitId>, RpcReplyPort<Result<Rollback>>),
    /// Rebuilds the views from the journal.
    Repair(RpcReplyPort<Result<()>>),
    /// Makes deferred commits durable.
    Flush,
}

/// The writer actor.
pub struct Writer;

/// Runs a write off the runtime's worker queue (a large first index takes a
/// while to encode and sync): other actors go on meanwhile.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl Actor for Writer {
    type Msg = WriterMsg;
    type State = Arc<Journal>;
    type Arguments = Arc<Journal>;

    async fn pre_start(
        &self,
        _me: ActorRef<WriterMsg>,
        journal: Arc<Journal>,
    ) -> std::result::Result<Arc<Journal>, ActorProcessingErr> {
        Ok(journal)
    }

    async fn handle(
        &self,
        _me: ActorRef<WriterMsg>,
        msg: WriterMsg,
        journal: &mut Arc<Journal>,
    ) -> std::result::Result<(), ActorProcessingErr> {
        let j: &Journal = journal;
        match msg {
            WriterMsg::Commit(ev, memory, flush, reply) => {
                let r = blocking(|| j.append_commit_with(*ev, memory, flush));
                let _ = reply.send(r.map_err(Error::from));
            }
            WriterMsg::FirstIndex(ev, first, memory, flush, reply) => {
                let r = blocking(|| {
                    let _purge = sno_extract::allocator::PurgeSoon::start();
                    let (len, deltas) = first.into_deltas();
                    j.append_first_index_streamed(*ev, len, deltas, memory, flush)
                });
                let _ = reply.send(r.map_err(Error::from));
            }
            WriterMsg::Append(ev, reply) => {
                let _ = reply.send(j.append(ev).map_err(Error::from));
            }
            WriterMsg::Memory(ev, reply) => {
                let _ = reply.send(j.append_memory(ev).map_err(Error::from));
            }
            WriterMsg::Rollback(to, git_head, reply) => {
                let r = blocking(|| sno_journal::rollback::rollback_to(j, &to, git_head));
                let _ = reply.send(r.map_err(Error::from));
            }
            WriterMsg::Repair(reply) => {
                let r = blocking(|| sno_journal::verify::repair_views(j));
                let _ = reply.send(r.map_err(Error::from));
            }
            WriterMsg::Flush => {
                if let Err(e) = j.flush() {
                    tracing::warn!(error = %e, "could not sync the journal; a rerun indexes the last commits again");
                }
            }
        }
        Ok(())
    }
}
