//! The engine: one repository's journal, read model and actor tree, and the
//! typed operations every front end calls. The CLI opens one for a command;
//! the daemon keeps one for as long as it serves, so the model, the search
//! indexes and the actors are made once.

use std::path::Path;
use std::sync::Arc;

use ractor::ActorRef;
use sno_index::confine::WorkTree;
use sno_journal::Journal;
use sno_protocol::query::AsOfCommit;

use crate::config::IndexConfig;
use crate::error::Result;
use crate::read::{ReadModel, Snapshot};
use crate::repo::RepoPaths;
use crate::supervisor::{Supervisor, SupervisorArgs, SupervisorMsg};
use crate::test_hooks::TestHooks;

/// The default embedding model: used when nothing else is configured.
pub const DEFAULT_MODEL: &str = "minishlab/potion-base-8M";

/// The model to use: `flag`, then `SNO_MODEL`, then `[search] model` of
/// `.sno/config.toml`, then the default.
pub fn model_spec(flag: Option<&str>, config: &IndexConfig) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("SNO_MODEL").ok().filter(|m| !m.is_empty()))
        .or_else(|| config.model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string())
}

/// One repository's engine.
pub struct Engine {
    pub(crate) paths: RepoPaths,
    pub(crate) config: IndexConfig,
    pub(crate) journal: Arc<Journal>,
    pub(crate) read: ReadModel,
    pub(crate) work_tree: WorkTree,
    pub(crate) model: Arc<crate::model::ModelCell>,
    pub(crate) hooks: TestHooks,
    actors: tokio::sync::OnceCell<ActorRef<SupervisorMsg>>,
    /// The engine's own writes (index runs, rollbacks) wait for each
    /// other: the daemon following HEAD and a forwarded `sno init` must
    /// not refuse each other as another process would be refused.
    pub(crate) writes: tokio::sync::Mutex<()>,
    /// Searches in flight and the last one's end: what background
    /// preparation waits on.
    pub(crate) activity: Arc<crate::activity::Activity>,
}

/// How an engine opens its database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// The repository must be indexed already (every query).
    Existing,
    /// A database is created when missing (`sno init`).
    OrCreate,
}

impl Engine {
    /// The engine of the repository containing `path`. A configuration
    /// that cannot be read is an error; `model` overrides the configured
    /// embedding model.
    pub fn open(path: &Path, how: Open, model: Option<&str>) -> Result<Engine> {
        let paths = RepoPaths::discover(path)?;
        let config = IndexConfig::load(&paths.config())?;
        let journal = Arc::new(match how {
            Open::Existing => Journal::open_existing(&paths.db())?,
            Open::OrCreate => {
                paths.exclude_sno_dir()?;
                Journal::open_or_create(&paths.db())?
            }
        });
        Self::with_journal(paths, config, journal, model)
    }

    /// An engine over a journal already open (the daemon's, which keeps
    /// serving with the default configuration when the file is broken).
    pub fn with_journal(
        paths: RepoPaths,
        config: IndexConfig,
        journal: Arc<Journal>,
        model: Option<&str>,
    ) -> Result<Engine> {
        let work_tree = paths.work_tree_with(&config)?;
        let model = crate::model::ModelCell::new(model_spec(model, &config));
        sno_query::cl100k::cache_table_in(paths.cache_dir());
        let hooks = TestHooks::from_env();
        let read = ReadModel::new(
            paths.clone(),
            journal.clone(),
            model.clone(),
            config.mask_secrets,
            config.serve.memory_bytes(),
        )
        .streaming_first_parts(!hooks.parts_from_state);
        Ok(Engine {
            paths,
            config,
            journal,
            read,
            work_tree,
            model,
            hooks,
            actors: tokio::sync::OnceCell::new(),
            writes: tokio::sync::Mutex::new(()),
            activity: Arc::default(),
        })
    }

    /// Where the repository and sno's files are.
    pub fn paths(&self) -> &RepoPaths {
        &self.paths
    }

    /// Sets up an engine that answers `request` alone (a CLI process): an
    /// index run's parser pool as it asks, and no embedding model for a
    /// lexical-only search (see [`crate::model::ModelCell::decline`]).
    /// Never for a daemon: its later questions would lose their semantic
    /// signal.
    pub fn answer_only(&mut self, request: &sno_protocol::rpc::Command) {
        use sno_protocol::rpc::Command;
        match request {
            Command::Index {
                workers: Some(w), ..
            } => {
                self.set_parser_workers(*w);
            }
            Command::Search {
                lexical_only: true, ..
            } => self.model.decline("--lexical-only"),
            _ => {}
        }
    }

    /// Sizes the parser pool, if the actors have not started yet (they start
    /// at the first write); returns whether it took effect.
    pub fn set_parser_workers(&mut self, workers: usize) -> bool {
        if self.actors.initialized() {
            return false;
        }
        self.config.parser_workers = workers.max(1);
        true
    }

    /// The configuration read when the engine opened.
    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// The journal (for front ends that report on it).
    pub fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }

    /// The read model.
    pub fn read(&self) -> &ReadModel {
        &self.read
    }

    /// The rule for every path a user or an agent names.
    pub fn work_tree(&self) -> &WorkTree {
        &self.work_tree
    }

    /// The root of the actor tree, started on first use (queries need no
    /// actors; indexing, sessions, the agent and the audit do).
    pub(crate) async fn supervisor(&self) -> Result<&ActorRef<SupervisorMsg>> {
        self.actors
            .get_or_try_init(|| async {
                let args = SupervisorArgs {
                    root: self.paths.root.clone(),
                    journal: self.journal.clone(),
                    config: self.config.clone(),
                    hooks: self.hooks.clone(),
                    model: self.model.clone(),
                };
                ractor::Actor::spawn(None, Supervisor, args)
                    .await
                    .map(|(sup, _)| sup)
                    .map_err(crate::error::Error::internal)
            })
            .await
    }

    /// Stops the actor tree, letting each actor finish what it holds (the
    /// audit flushes its batch), and waits until it has: a runtime dropped
    /// while the supervisor still stops its children cancels their tasks,
    /// which ractor reports as a panic.
    pub async fn stop(&self) {
        if let Some(sup) = self.actors.get() {
            if let Ok(audit) = ractor::call!(sup, SupervisorMsg::Audit) {
                let _ = ractor::call!(audit, crate::audit::AuditMsg::Flush);
            }
            // The supervisor gives its children 5 s; this waits a little
            // longer for it.
            if let Err(e) = sup
                .stop_and_wait(None, Some(std::time::Duration::from_secs(8)))
                .await
            {
                tracing::warn!(error = %e, "the actor tree did not stop in time");
            }
        }
    }

    /// The state at the indexed head or `at`, and whether it was cached.
    pub fn snapshot(&self, at: Option<&str>) -> Result<(Arc<Snapshot>, bool)> {
        self.read.snapshot(at)
    }

    /// The indexed head as an answer names it; `None` before anything is
    /// indexed.
    pub fn head(&self) -> Result<Option<AsOfCommit>> {
        Ok(self.journal.head()?.map(|h| AsOfCommit {
            commit: h.commit.to_hex(),
            branch: h.branch,
        }))
    }
}
