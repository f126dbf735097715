//! The root supervisor: starts the audit actor, the parser pool and the
//! indexer, and restarts a child that dies, with backoff. A child that keeps
//! dying is given up on and reported by [`SupervisorMsg::Health`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use sno_journal::Journal;

use crate::agent::{Agent, AgentArgs, AgentMsg};
use crate::audit::{Audit, AuditMsg};
use crate::config::IndexConfig;
use crate::embedder::{Embedder, EmbedderArgs, EmbedderMsg};
use crate::indexer::{Indexer, IndexerArgs, IndexerMsg};
use crate::parser::{ParserPool, PoolArgs, PoolMsg};
use crate::writer::{Writer, WriterMsg};

/// Arguments of the supervisor.
#[derive(Clone)]
pub struct SupervisorArgs {
    pub root: std::path::PathBuf,
    pub journal: Arc<Journal>,
    pub config: IndexConfig,
    pub hooks: crate::test_hooks::TestHooks,
    /// The engine's embedding model.
    pub model: Arc<crate::model::ModelCell>,
}

/// Messages of the supervisor.
pub enum SupervisorMsg {
    Writer(RpcReplyPort<ActorRef<WriterMsg>>),
    Agent(RpcReplyPort<ActorRef<AgentMsg>>),
    Indexer(RpcReplyPort<ActorRef<IndexerMsg>>),
    Pool(RpcReplyPort<ActorRef<PoolMsg>>),
    Audit(RpcReplyPort<ActorRef<AuditMsg>>),
    Embedder(RpcReplyPort<ActorRef<EmbedderMsg>>),
    Health(RpcReplyPort<Health>),
}

/// Restarts per child, and children given up on.
#[derive(Clone, Debug, Default)]
pub struct Health {
    pub restarts: BTreeMap<String, u32>,
    pub given_up: Vec<String>,
}

/// The root supervisor.
pub struct Supervisor;

/// The supervisor's state.
pub struct SupervisorState {
    args: SupervisorArgs,
    writer: ActorRef<WriterMsg>,
    agent: ActorRef<AgentMsg>,
    audit: ActorRef<AuditMsg>,
    pool: ActorRef<PoolMsg>,
    indexer: ActorRef<IndexerMsg>,
    embedder: ActorRef<EmbedderMsg>,
    health: Health,
    recent: BTreeMap<String, Vec<Instant>>,
}

const MAX_RESTARTS_PER_MINUTE: usize = 5;

impl Supervisor {
    async fn spawn_writer(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<WriterMsg>, ActorProcessingErr> {
        Ok(
            Actor::spawn_linked(None, Writer, a.journal.clone(), me.get_cell())
                .await?
                .0,
        )
    }
    async fn spawn_agent(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<AgentMsg>, ActorProcessingErr> {
        let args = AgentArgs {
            root: a.root.clone(),
            journal: a.journal.clone(),
            config: a.config.agent.clone(),
            supervisor: me.clone(),
            mask_secrets: a.config.mask_secrets,
            panic_on_draft: a.hooks.agent_panic,
        };
        Ok(Actor::spawn_linked(None, Agent, args, me.get_cell())
            .await?
            .0)
    }
    async fn spawn_audit(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<AuditMsg>, ActorProcessingErr> {
        Ok(
            Actor::spawn_linked(None, Audit, a.journal.clone(), me.get_cell())
                .await?
                .0,
        )
    }
    async fn spawn_pool(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<PoolMsg>, ActorProcessingErr> {
        let args = PoolArgs {
            workers: a.config.parser_workers,
            fault_panic_on: a.hooks.panic_on.clone(),
        };
        Ok(Actor::spawn_linked(None, ParserPool, args, me.get_cell())
            .await?
            .0)
    }
    async fn spawn_indexer(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<IndexerMsg>, ActorProcessingErr> {
        let args = IndexerArgs {
            root: a.root.clone(),
            journal: a.journal.clone(),
            config: a.config.clone(),
            commit_delay_ms: a.hooks.commit_delay_ms,
            lazy_commits: a.hooks.lazy_commits,
            supervisor: me.clone(),
        };
        Ok(Actor::spawn_linked(None, Indexer, args, me.get_cell())
            .await?
            .0)
    }

    async fn spawn_embedder(
        me: &ActorRef<SupervisorMsg>,
        a: &SupervisorArgs,
    ) -> Result<ActorRef<EmbedderMsg>, ActorProcessingErr> {
        let args = EmbedderArgs {
            journal: a.journal.clone(),
            model: a.model.clone(),
            root: a.root.clone(),
            mask_secrets: a.config.mask_secrets,
        };
        Ok(Actor::spawn_linked(None, Embedder, args, me.get_cell())
            .await?
            .0)
    }

    fn child_name(st: &SupervisorState, cell: &ActorCell) -> Option<&'static str> {
        let id = cell.get_id();
        if id == st.writer.get_id() {
            Some("writer")
        } else if id == st.agent.get_id() {
            Some("agent")
        } else if id == st.audit.get_id() {
            Some("audit")
        } else if id == st.pool.get_id() {
            Some("parser-pool")
        } else if id == st.indexer.get_id() {
            Some("indexer")
        } else if id == st.embedder.get_id() {
            Some("embedder")
        } else {
            None
        }
    }
}

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        me: ActorRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let writer = Self::spawn_writer(&me, &args).await?;
        let agent = Self::spawn_agent(&me, &args).await?;
        let audit = Self::spawn_audit(&me, &args).await?;
        let pool = Self::spawn_pool(&me, &args).await?;
        let indexer = Self::spawn_indexer(&me, &args).await?;
        let embedder = Self::spawn_embedder(&me, &args).await?;
        Ok(SupervisorState {
            args,
            writer,
            agent,
            audit,
            pool,
            indexer,
            embedder,
            health: Health::default(),
            recent: BTreeMap::new(),
        })
    }

    async fn post_stop(
        &self,
        me: ActorRef<SupervisorMsg>,
        _st: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        // Without this, children are killed without their own post_stop.
        me.stop_children_and_wait(
            Some("supervisor stopping".into()),
            Some(Duration::from_secs(5)),
        )
        .await;
        Ok(())
    }

    async fn handle(
        &self,
        _me: ActorRef<SupervisorMsg>,
        msg: SupervisorMsg,
        st: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Writer(r) => {
                let _ = r.send(st.writer.clone());
            }
            SupervisorMsg::Agent(r) => {
                let _ = r.send(st.agent.clone());
            }
            SupervisorMsg::Indexer(r) => {
                let _ = r.send(st.indexer.clone());
            }
            SupervisorMsg::Pool(r) => {
                let _ = r.send(st.pool.clone());
            }
            SupervisorMsg::Audit(r) => {
                let _ = r.send(st.audit.clone());
            }
            SupervisorMsg::Embedder(r) => {
                let _ = r.send(st.embedder.clone());
            }
            SupervisorMsg::Health(r) => {
                let _ = r.send(st.health.clone());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        me: ActorRef<SupervisorMsg>,
        ev: SupervisionEvent,
        st: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, why) = match ev {
            SupervisionEvent::ActorFailed(cell, err) => (cell, err.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, why) => (cell, why.unwrap_or_default()),
            _ => return Ok(()),
        };
        let Some(name) = Self::child_name(st, &cell) else {
            return Ok(());
        };
        tracing::error!(child = name, reason = %why, "actor died; restarting");
        let now = Instant::now();
        let recent = st.recent.entry(name.to_string()).or_default();
        recent.retain(|t| now.duration_since(*t) < Duration::from_secs(60));
        recent.push(now);
        if recent.len() > MAX_RESTARTS_PER_MINUTE {
            st.health.given_up.push(name.to_string());
            return Err(format!(
                "{name} crashed {} times in a minute; giving up",
                recent.len()
            )
            .into());
        }
        let backoff = Duration::from_millis(10 << recent.len().min(6));
        tokio::time::sleep(backoff).await;
        *st.health.restarts.entry(name.to_string()).or_default() += 1;
        match name {
            "writer" => st.writer = Self::spawn_writer(&me, &st.args).await?,
            "agent" => st.agent = Self::spawn_agent(&me, &st.args).await?,
            "audit" => st.audit = Self::spawn_audit(&me, &st.args).await?,
            "parser-pool" => st.pool = Self::spawn_pool(&me, &st.args).await?,
            "embedder" => st.embedder = Self::spawn_embedder(&me, &st.args).await?,
            _ => st.indexer = Self::spawn_indexer(&me, &st.args).await?,
        }
        Ok(())
    }
}
