//! One entry point for the commands a CLI runs, in its own process or in
//! the daemon's: a typed request in, a typed answer out.

use sno_protocol::rpc::{Answer, Command};
use sno_protocol::status::Progress;
use tokio::sync::mpsc::UnboundedSender;

use crate::engine::Engine;
use crate::error::Result;
use crate::search::SearchArgs;
use crate::writes::IndexOptions;

use crate::writes::PARTS_AT_INIT_FROM_FILES;

impl Engine {
    /// Runs a CLI command against this engine. `env` carries the caller's
    /// variables (the API key of `lessons draft`).
    pub async fn execute(&self, cmd: Command, env: Vec<(String, String)>) -> Result<Answer> {
        self.execute_with_progress(cmd, env, None).await
    }

    /// [`Engine::execute`], with an index run's progress sent to `progress`.
    pub async fn execute_with_progress(
        &self,
        cmd: Command,
        env: Vec<(String, String)>,
        progress: Option<UnboundedSender<Progress>>,
    ) -> Result<Answer> {
        Ok(match cmd {
            Command::Index {
                rev,
                history,
                max_file_size,
                workers,
            } => {
                let opts = IndexOptions {
                    rev,
                    history,
                    max_file_size,
                    workers,
                };
                // Drafting lessons after a run is the long-lived processes'
                // job (the daemon, `sno watch`): a CLI's run would stop the
                // agent mid-draft.
                let mut summary = self.index_with(&opts, progress.clone(), true).await?;
                // A large head's search parts, made now: when init says it
                // is done, the first search answers at once instead of
                // making them (a minute on 8.4M lines). A small head's are
                // made by its first search in well under a second, which
                // init would pay instead (0.8 -> 1.1 s on a flask-sized
                // corpus). A failure leaves them to the first search.
                let files = self.journal().files_len().unwrap_or(0);
                if summary.commit.is_some() && files >= PARTS_AT_INIT_FROM_FILES {
                    let stored = self.read().head_parts_stored().unwrap_or(false);
                    if let (Some(p), false) = (&progress, stored) {
                        let _ = p.send(Progress::SearchIndex { files });
                    }
                    let t = std::time::Instant::now();
                    // Off the runtime, on a thread of its own: in a daemon
                    // (a forwarded init) a runtime worker held for the
                    // minute it takes on 8.4M lines would hold the other
                    // sessions' answers queued behind it.
                    let read = self.read();
                    let reports = progress.clone();
                    // A first embedding left to the parts writes to the
                    // journal: no other run of this engine meanwhile.
                    let _ours = match summary.semantic {
                        None => Some(self.writes.lock().await),
                        Some(_) => None,
                    };
                    match crate::background::background(move || {
                        read.prepare_head_embedding(reports)
                    }) {
                        Ok(embedded) => {
                            tracing::debug!(
                                ms = t.elapsed().as_millis() as u64,
                                "the head's search index is made"
                            );
                            if summary.semantic.is_none() {
                                summary.semantic = embedded.map(crate::writes::semantic_summary);
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "could not make the search index"),
                    }
                }
                // Left to the parts, which did not make it: made now.
                if summary.semantic.is_none() {
                    summary.semantic = Some(self.refresh_embeddings(progress).await?);
                }
                Answer::Index(Box::new(summary))
            }
            Command::Status => Answer::Status(Box::new(self.status()?)),
            Command::Doctor { repair } => Answer::Doctor(self.doctor(repair).await?),
            Command::Replay { to } => Answer::Replay(self.replay(&to)?),
            Command::Rollback { to } => Answer::Rollback(self.rollback(&to).await?),
            Command::JournalLog { tail, cut_to } => {
                Answer::JournalLog(self.journal_log(tail, cut_to)?)
            }
            Command::Audit { tail } => Answer::Audit(self.audit_tail(tail)?),
            Command::Search {
                query,
                max_tokens,
                limit,
                scope,
                lexical_only,
                at,
                format,
                group,
            } => {
                let (pkg, _) = self.search(&SearchArgs {
                    query,
                    max_tokens,
                    limit,
                    scope,
                    lexical_only,
                    at,
                    format,
                    group,
                })?;
                Answer::Search(Box::new(pkg))
            }
            Command::Map {
                max_tokens,
                per_file,
                files,
                at,
                format,
            } => Answer::Map(self.map(max_tokens, per_file, Some(files), at.as_deref(), format)?),
            Command::Symbols { name, limit, at } => {
                Answer::Symbols(self.symbols(&name, limit, at.as_deref())?)
            }
            Command::Outline { file, at } => Answer::Outline(self.outline(&file, at.as_deref())?),
            Command::Show { name, at } => Answer::Show(self.show(&name, at.as_deref())?),
            Command::Refs {
                name,
                kind,
                depth,
                at,
            } => Answer::Refs(self.refs(&name, kind, depth, at.as_deref())?),
            Command::Grep { pattern, limit, at } => {
                Answer::Grep(self.grep(&pattern, limit, at.as_deref())?)
            }
            Command::Changes { from, to } => Answer::Changes(self.changes(&from, to.as_deref())?),
            Command::Lessons => Answer::Lessons(self.lessons(false, Some(200), None)?),
            Command::ReviewLesson {
                id,
                approved,
                reviewer,
                note,
            } => Answer::Lesson(self.review_lesson(&id, approved, &reviewer, &note).await?),
            Command::DraftLessons { id } => {
                Answer::Drafts(self.draft_lessons(id.as_deref(), env).await?)
            }
        })
    }
}
