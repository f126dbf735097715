//! The parser pool: stateless workers, one per core by default, each parsing one
//! file at a time. A worker that panics is replaced; the file it held is
//! answered as failed and every other file goes on.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use rustc_hash::FxHashMap;
use sno_extract::reparse::{extract_after, Parse, ParsedVersion};
use sno_extract::FileFacts;
use sno_journal::model::Language;

/// One file to parse.
#[derive(Debug)]
pub struct ParseJob {
    pub path: String,
    pub language: Language,
    pub bytes: Vec<u8>,
    /// While indexing history: where earlier versions of files are kept.
    pub versions: Option<Versions>,
    /// Mask secret values in what is stored of the file.
    pub mask_secrets: bool,
}

/// A job's link to the kept versions of its run.
#[derive(Clone, Debug)]
pub struct Versions {
    pub kept: Arc<KeptVersions>,
    /// Whether a later commit of the run changes this path again, so this
    /// version is worth keeping.
    pub keep: bool,
}

/// The last parsed version of files that a later commit of the same indexing
/// run changes again, so that version can be parsed from the previous tree
/// (see [`sno_extract::reparse`]). Shared by the workers; bounded by the
/// bytes of source it holds, since a tree costs several times its source.
#[derive(Debug)]
pub struct KeptVersions {
    files: Mutex<FxHashMap<String, ParsedVersion>>,
    bytes: AtomicUsize,
    budget: usize,
}

impl KeptVersions {
    /// An empty store that keeps at most `budget` bytes of source.
    pub fn new(budget: usize) -> Self {
        KeptVersions {
            files: Mutex::new(FxHashMap::default()),
            bytes: AtomicUsize::new(0),
            budget,
        }
    }

    /// Takes the kept version of `path` out, if any.
    fn take(&self, path: &str) -> Option<ParsedVersion> {
        let v = self.files.lock().ok()?.remove(path)?;
        self.bytes.fetch_sub(v.source().len(), Ordering::Relaxed);
        Some(v)
    }

    /// Keeps `v` as the version of `path`, unless that would pass the budget.
    fn put(&self, path: String, v: ParsedVersion) {
        let len = v.source().len();
        if self.bytes.load(Ordering::Relaxed) + len > self.budget {
            return;
        }
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        self.bytes.fetch_add(len, Ordering::Relaxed);
        // Two versions of a path can be in flight at once (the next commit is
        // parsed while this one is written); either is a valid base.
        if let Some(old) = files.insert(path, v) {
            self.bytes.fetch_sub(old.source().len(), Ordering::Relaxed);
        }
    }

    /// Bytes of source held.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// What came of a job. The bytes travel back so the caller need not keep a copy.
#[derive(Debug)]
pub enum ParseOutcome {
    Parsed {
        facts: Box<FileFacts>,
        bytes: Vec<u8>,
        /// Parsed from the tree of the previous version.
        reparsed: bool,
        /// Secret values found in the file (masked in `facts`).
        masked_secrets: u32,
    },
    Failed {
        reason: String,
    },
}

/// Messages of the pool.
pub enum PoolMsg {
    /// Parse a file; the answer goes to the reply port.
    Parse(ParseJob, RpcReplyPort<ParseOutcome>),
    /// A worker finished its job.
    Done {
        slot: usize,
        facts: Box<FileFacts>,
        bytes: Vec<u8>,
        reparsed: bool,
        masked_secrets: u32,
    },
    /// How many workers were replaced after a crash.
    Restarts(RpcReplyPort<u64>),
}

/// Arguments of the pool.
#[derive(Clone, Debug)]
pub struct PoolArgs {
    pub workers: usize,
    /// Test hook: workers panic on this path.
    pub fault_panic_on: Option<String>,
}

/// The pool actor.
pub struct ParserPool;

struct Slot {
    worker: ActorRef<WorkerMsg>,
    busy: Option<(String, RpcReplyPort<ParseOutcome>)>,
}

/// The pool's state.
pub struct PoolState {
    slots: Vec<Slot>,
    queue: VecDeque<(ParseJob, RpcReplyPort<ParseOutcome>)>,
    restarts: u64,
    args: PoolArgs,
}

/// Messages of a worker.
pub enum WorkerMsg {
    Parse(ParseJob),
}

/// A worker: parses, answers the pool, keeps nothing.
pub struct ParseWorker;

/// Arguments of a worker.
pub struct WorkerArgs {
    slot: usize,
    pool: ActorRef<PoolMsg>,
    fault_panic_on: Option<String>,
}

impl Actor for ParseWorker {
    type Msg = WorkerMsg;
    type State = WorkerArgs;
    type Arguments = WorkerArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<WorkerMsg>,
        args: WorkerArgs,
    ) -> Result<WorkerArgs, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(
        &self,
        _me: ActorRef<WorkerMsg>,
        msg: WorkerMsg,
        st: &mut WorkerArgs,
    ) -> Result<(), ActorProcessingErr> {
        let WorkerMsg::Parse(job) = msg;
        if st.fault_panic_on.as_deref() == Some(job.path.as_str()) {
            panic!("injected parser fault on {}", job.path);
        }
        let (mut facts, reparsed) = match job.versions {
            None => (sno_extract::extract(job.language, &job.bytes), false),
            Some(v) => {
                let previous = v.kept.take(&job.path);
                let (facts, how, kept) =
                    extract_after(job.language, &job.bytes, previous.as_ref(), v.keep);
                if let Some(kept) = kept {
                    v.kept.put(job.path, kept);
                }
                (facts, how == Parse::Incremental)
            }
        };
        // On the worker, beside the parse: finding secrets reads the file.
        let masked_secrets = if job.mask_secrets {
            sno_index::record::mask_facts(&mut facts, &job.bytes)
        } else {
            0
        };
        st.pool.cast(PoolMsg::Done {
            slot: st.slot,
            facts: Box::new(facts),
            bytes: job.bytes,
            reparsed,
            masked_secrets,
        })?;
        Ok(())
    }
}

impl ParserPool {
    async fn spawn_worker(
        me: &ActorRef<PoolMsg>,
        slot: usize,
        args: &PoolArgs,
    ) -> Result<ActorRef<WorkerMsg>, ActorProcessingErr> {
        let wargs = WorkerArgs {
            slot,
            pool: me.clone(),
            fault_panic_on: args.fault_panic_on.clone(),
        };
        let (w, _) = Actor::spawn_linked(None, ParseWorker, wargs, me.get_cell()).await?;
        Ok(w)
    }

    fn dispatch(st: &mut PoolState) {
        for slot in st.slots.iter_mut() {
            if slot.busy.is_some() {
                continue;
            }
            let Some((job, reply)) = st.queue.pop_front() else {
                return;
            };
            let path = job.path.clone();
            match slot.worker.cast(WorkerMsg::Parse(job)) {
                Ok(()) => slot.busy = Some((path, reply)),
                Err(e) => {
                    let _ = reply.send(ParseOutcome::Failed {
                        reason: format!("parser worker unavailable: {e}"),
                    });
                }
            }
        }
    }
}

impl Actor for ParserPool {
    type Msg = PoolMsg;
    type State = PoolState;
    type Arguments = PoolArgs;

    async fn pre_start(
        &self,
        me: ActorRef<PoolMsg>,
        args: PoolArgs,
    ) -> Result<PoolState, ActorProcessingErr> {
        let mut slots = Vec::new();
        for slot in 0..args.workers.max(1) {
            slots.push(Slot {
                worker: Self::spawn_worker(&me, slot, &args).await?,
                busy: None,
            });
        }
        Ok(PoolState {
            slots,
            queue: VecDeque::new(),
            restarts: 0,
            args,
        })
    }

    async fn handle(
        &self,
        _me: ActorRef<PoolMsg>,
        msg: PoolMsg,
        st: &mut PoolState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PoolMsg::Parse(job, reply) => st.queue.push_back((job, reply)),
            PoolMsg::Done {
                slot,
                facts,
                bytes,
                reparsed,
                masked_secrets,
            } => {
                if let Some((_, reply)) = st.slots.get_mut(slot).and_then(|s| s.busy.take()) {
                    // The requester may have gone away; that is its business.
                    let _ = reply.send(ParseOutcome::Parsed {
                        facts,
                        bytes,
                        reparsed,
                        masked_secrets,
                    });
                }
            }
            PoolMsg::Restarts(reply) => {
                let _ = reply.send(st.restarts);
            }
        }
        Self::dispatch(st);
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        me: ActorRef<PoolMsg>,
        ev: SupervisionEvent,
        st: &mut PoolState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, reason) = match ev {
            SupervisionEvent::ActorFailed(cell, err) => {
                (cell, format!("parser worker panicked: {err}"))
            }
            SupervisionEvent::ActorTerminated(cell, _, why) => (
                cell,
                format!(
                    "parser worker stopped: {}",
                    why.unwrap_or_else(|| "no reason".into())
                ),
            ),
            _ => return Ok(()),
        };
        let Some(slot) = st
            .slots
            .iter()
            .position(|s| s.worker.get_id() == cell.get_id())
        else {
            return Ok(());
        };
        if let Some((path, reply)) = st.slots[slot].busy.take() {
            tracing::warn!(%path, %reason, "file failed to parse; replacing the worker");
            let _ = reply.send(ParseOutcome::Failed { reason });
        }
        st.restarts += 1;
        st.slots[slot].worker = Self::spawn_worker(&me, slot, &st.args).await?;
        Self::dispatch(st);
        Ok(())
    }
}
