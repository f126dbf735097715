//! The write path: index runs, memory events, rollbacks and repairs. Every
//! journal append goes through the writer actor, one at a time; runs,
//! rollbacks and repairs (which move the views) go through the indexer,
//! one at a time, so a rollback never lands between two commits of a run.

use sno_journal::event::Event;
use sno_journal::lock::WriterLock;
use sno_journal::model::{CommitId, Seq};
use sno_journal::rollback::Rollback;
use sno_protocol::status::{Failure, IndexSummary, SemanticSummary, SkipCounts};
use tokio::sync::mpsc::UnboundedSender;

use crate::embedder::EmbedderMsg;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::indexer::{IndexRequest, IndexerMsg, Progress};
use crate::supervisor::SupervisorMsg;
use crate::writer::WriterMsg;

/// What to index.
#[derive(Clone, Debug, Default)]
pub struct IndexOptions {
    /// A commit-ish; `None` means HEAD.
    pub rev: Option<String>,
    /// First-parent commits before the target; `None`: the configured
    /// number (200 by default); `Some(None)`: all of them.
    pub history: Option<Option<usize>>,
    /// Largest file to parse, in bytes (default: the configuration's).
    pub max_file_size: Option<u64>,
    /// Parser workers (default: the configuration's). Applied by
    /// [`Engine::set_parser_workers`] before the actors start; a running
    /// engine keeps its pool.
    pub workers: Option<usize>,
}

/// An actor call's failure (the actor died or is gone).
fn gone(e: impl std::fmt::Display) -> Error {
    Error::internal(format!("actor system: {e}"))
}

impl Engine {
    /// The writer actor.
    async fn writer(&self) -> Result<ractor::ActorRef<WriterMsg>> {
        ractor::call!(self.supervisor().await?, SupervisorMsg::Writer).map_err(gone)
    }

    /// The indexer actor.
    async fn indexer(&self) -> Result<ractor::ActorRef<IndexerMsg>> {
        ractor::call!(self.supervisor().await?, SupervisorMsg::Indexer).map_err(gone)
    }

    /// Appends a memory event (checkpoint, decision, lesson analysis or
    /// review) through the writer.
    pub(crate) async fn append_memory(&self, mut ev: Event) -> Result<Seq> {
        if self.config.mask_secrets {
            crate::masking::mask_memory(&mut ev);
        }
        let writer = self.writer().await?;
        ractor::call!(writer, WriterMsg::Memory, ev).map_err(gone)?
    }

    /// Rebuilds the views from the journal (after a run, never during one).
    pub(crate) async fn repair_views(&self) -> Result<()> {
        let indexer = self.indexer().await?;
        ractor::call!(indexer, IndexerMsg::Repair).map_err(gone)?
    }

    /// Moves the views back to `commit`'s state (after a run, never during
    /// one).
    pub(crate) async fn roll_back(
        &self,
        commit: CommitId,
        git_head: Option<CommitId>,
    ) -> Result<Rollback> {
        let _ours = self.writes.lock().await;
        let _lock = WriterLock::acquire(&self.paths.sno_dir)?;
        let indexer = self.indexer().await?;
        ractor::call!(indexer, IndexerMsg::Rollback, commit, git_head).map_err(gone)?
    }

    /// Indexes the repository: the target commit and its history, then the
    /// vectors of new symbols. `progress` receives the plan and each commit.
    pub async fn index(
        &self,
        opts: &IndexOptions,
        progress: Option<UnboundedSender<Progress>>,
    ) -> Result<IndexSummary> {
        self.index_with(opts, progress, false).await
    }

    /// [`Engine::index`]; with `parts_embed`, a first embedding of a head
    /// whose search parts are made next from its views (as `sno init`
    /// makes a large head's) is left to them: the summary's `semantic` is
    /// then `None`, for the caller to fill with what the parts did
    /// ([`crate::read::ReadModel::prepare_head_embedding`]).
    pub(crate) async fn index_with(
        &self,
        opts: &IndexOptions,
        progress: Option<UnboundedSender<Progress>>,
        parts_embed: bool,
    ) -> Result<IndexSummary> {
        let _ours = self.writes.lock().await;
        let _lock = WriterLock::acquire(&self.paths.sno_dir)?;
        self.paths.exclude_sno_dir()?;
        let history = match opts.history {
            Some(h) => h,
            None => self.config.history,
        };
        let request = IndexRequest {
            target: opts.rev.clone(),
            history,
            max_file_size: opts.max_file_size,
        };

        // History asked of a journal that exists: the journal is
        // append-only, so commits older than its first cannot join it.
        let history_starts_at = match (opts.history, self.journal.head()?) {
            (Some(asked), Some(_)) if asked != Some(0) => self.journal_start_with_parents()?,
            _ => None,
        };
        let indexer = self.indexer().await?;
        let done =
            ractor::call!(indexer, IndexerMsg::Run, request, progress.clone()).map_err(gone)??;
        // Then the semantic index, for what is new; a large head's first
        // one while its search parts are made, which read every file's
        // text anyway (on 8.3M lines the embedder's own pass over them
        // took 9.4 s).
        let semantic = match parts_embed && self.first_embedding_in_parts()? {
            true => None,
            false => Some(self.refresh_embeddings(progress).await?),
        };
        let r = &done.run;
        let head = self.journal.head()?;
        Ok(IndexSummary {
            repository: self.paths.root.display().to_string(),
            up_to_date: done.up_to_date,
            commit: head.as_ref().map(|h| h.commit.to_hex()),
            branch: done.branch.clone(),
            shallow: done.shallow,
            commits_indexed: r.commits_indexed,
            files_parsed: r.files_parsed,
            files_reparsed: done.files_reparsed,
            failures: r
                .failures
                .iter()
                .map(|(path, reason)| Failure {
                    path: path.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            skipped_scope: "file versions across the commits of this run".into(),
            skipped: SkipCounts {
                binary: r.skipped_binary,
                too_large: r.skipped_too_large,
                unsupported_language: r.skipped_unsupported,
                ignored: r.skipped_ignored,
            },
            excluded_secrets: r.excluded_secrets,
            journal_events: self.journal.len()?,
            semantic,
            seconds: r.finished_ms.saturating_sub(r.started_ms) as f64 / 1000.0,
            history_starts_at,
        })
    }

    /// Brings the stored vectors up to the indexed state.
    pub(crate) async fn refresh_embeddings(
        &self,
        progress: Option<UnboundedSender<Progress>>,
    ) -> Result<SemanticSummary> {
        let embedder =
            ractor::call!(self.supervisor().await?, SupervisorMsg::Embedder).map_err(gone)?;
        let embedded = ractor::call!(embedder, EmbedderMsg::Refresh, progress)
            .map_err(gone)?
            .map_err(|e| Error::internal(format!("embedding: {e}")))?;
        Ok(semantic_summary(embedded))
    }

    /// Whether the head's first embedding is left to its search parts: a
    /// head of [`PARTS_AT_INIT_FROM_FILES`] files or more with nothing
    /// embedded yet, a model, and no parts stored.
    fn first_embedding_in_parts(&self) -> Result<bool> {
        Ok(self.journal.head()?.is_some()
            && self.journal.vectors_upto()?.is_none()
            && self.journal.files_len()? >= PARTS_AT_INIT_FROM_FILES
            && self.read().embedder().is_some()
            && !self.read().head_parts_stored()?)
    }

    /// The journal's first indexed commit, when it has parents (older
    /// history exists in git but not in the journal).
    fn journal_start_with_parents(&self) -> Result<Option<String>> {
        // The first commit journaled, among the first events (a skipped
        // commit or a memory event may come before it).
        let first = self.journal.event_outlines(Seq(0), Some(Seq(16)))?;
        Ok(first
            .into_iter()
            .find_map(|(_, env)| match env.event {
                Event::CommitIndexed(c) => Some(c),
                _ => None,
            })
            .filter(|c| !c.parents.is_empty())
            .map(|c| c.commit.to_hex()))
    }
}

/// Files from which `sno init` makes the head's search parts itself: on
/// the ~600k-line corpus (2,154 files) the first search made them in 4 s
/// (init 6.5-7.1 -> 8.3-10.5 s, the first search 3.9-4.2 -> 0.3-0.4 s),
/// on 8.4M lines (16.5k) in a minute.
pub(crate) const PARTS_AT_INIT_FROM_FILES: u64 = 2_000;

/// What the embedder did, as an index run's summary says it.
pub(crate) fn semantic_summary(e: crate::embedder::EmbedSummary) -> SemanticSummary {
    SemanticSummary {
        enabled: e.off_reason.is_none(),
        off_reason: e.off_reason,
        symbols: e.symbols,
        embedded: e.embedded,
        reused: e.reused,
    }
}

impl Engine {
    /// Drafts lesson analyses with the configured provider: those waiting
    /// for one, or lesson `id`. `env` carries the caller's variables (the
    /// API key, when the daemon drafts for a CLI).
    pub async fn draft_lessons(
        &self,
        id: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Result<sno_protocol::memory::DraftsAnswer> {
        let agent = ractor::call!(self.supervisor().await?, SupervisorMsg::Agent).map_err(gone)?;
        let id = id.map(str::to_string);
        ractor::call!(agent, |reply| crate::agent::AgentMsg::Draft {
            id,
            env,
            reply
        })
        .map_err(|e| Error::internal(format!("the agent failed: {e}")))?
    }

    /// After an index run: lets the agent draft the lessons it proposed
    /// (with `[agent] draft_on_index`); does not wait.
    pub async fn draft_after_index(&self, since: Seq) {
        if !self.config.agent.draft_on_index {
            return;
        }
        if let Ok(sup) = self.supervisor().await {
            if let Ok(agent) = ractor::call!(sup, SupervisorMsg::Agent) {
                let _ = agent.cast(crate::agent::AgentMsg::AfterIndex { since });
            }
        }
    }
}
