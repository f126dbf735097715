//! The agent actor: owns the LLM provider and drafts lesson analyses, on
//! request (`sno lessons draft`) or after an index run that proposed lessons
//! (`[agent] draft_on_index`). One draft at a time; the provider's blocking
//! call runs on a blocking thread, so a provider that hangs holds only this
//! actor (until its timeout), and a draft that panics is this actor's
//! failure, which the supervisor restarts: the daemon serves on.
//!
//! Every call is audited, the failed ones too; a draft is journaled (through
//! the writer) as a `LessonAnalysisSubmitted` bound to `agent:<model>` and
//! waits for a human.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_agent::{
    lesson_prompt, parse_draft, AgentConfig, AgentError, Completion, Draft, Provider, RevertFacts,
    LESSON_SYSTEM,
};
use sno_journal::audit::{AuditEntry, AuditRecord, LlmCall};
use sno_journal::event::Event;
use sno_journal::memory::{
    Binding, LessonAnalysisSubmitted, LessonProposed, LessonStatus, MemoryId,
};
use sno_journal::model::{CommitId, Seq};
use sno_journal::Journal;
use sno_protocol::memory::{self as wire, DraftsAnswer};
use sno_protocol::ErrorCode;

use crate::audit::AuditMsg;
use crate::error::{Error, Result};
use crate::supervisor::SupervisorMsg;
use crate::writer::WriterMsg;

/// The most lessons drafted after one index run: a first index of a long
/// history may propose many, and each call can take the provider's timeout.
pub const MAX_DRAFTS_PER_RUN: usize = 3;

/// Messages of the agent.
pub enum AgentMsg {
    /// Draft the lessons waiting for an analysis, or lesson `id` (which
    /// may have one, but no verdict). `env` holds the caller's variables
    /// (the API key a forwarded command brings).
    Draft {
        id: Option<String>,
        env: Vec<(String, String)>,
        reply: RpcReplyPort<Result<DraftsAnswer>>,
    },
    /// After an index run: with `draft_on_index`, draft the lessons it
    /// proposed (journal position `since` or later).
    AfterIndex { since: Seq },
}

/// Arguments of the agent.
pub struct AgentArgs {
    pub root: PathBuf,
    pub journal: Arc<Journal>,
    pub config: AgentConfig,
    pub supervisor: ActorRef<SupervisorMsg>,
    /// Whether secrets are masked (`[index] mask_secrets`): a draft is
    /// masked before it is journaled, as what agents write is.
    pub mask_secrets: bool,
    /// Test hook: panic on a draft.
    pub panic_on_draft: bool,
}

/// The agent's state.
pub struct AgentState {
    args: AgentArgs,
    /// Lessons whose draft failed after an index run: not asked for again
    /// by later runs (`sno lessons draft` still may).
    failed: HashSet<MemoryId>,
    /// Whether a provider that cannot be used was reported already.
    said: bool,
}

/// The agent actor.
pub struct Agent;

impl Actor for Agent {
    type Msg = AgentMsg;
    type State = AgentState;
    type Arguments = AgentArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<AgentMsg>,
        args: AgentArgs,
    ) -> std::result::Result<AgentState, ActorProcessingErr> {
        Ok(AgentState {
            args,
            failed: HashSet::new(),
            said: false,
        })
    }

    async fn handle(
        &self,
        _me: ActorRef<AgentMsg>,
        msg: AgentMsg,
        st: &mut AgentState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        match msg {
            AgentMsg::Draft { id, env, reply } => {
                if st.args.panic_on_draft {
                    panic!("injected agent fault");
                }
                let r = draft_requested(st, id.as_deref(), &env).await;
                let _ = reply.send(r);
            }
            AgentMsg::AfterIndex { since } => draft_after_index(st, since).await,
        }
        Ok(())
    }
}

/// The provider as configured, with the key read from `env` (the caller's)
/// or this process's environment.
fn provider(config: &AgentConfig, env: &[(String, String)]) -> Result<Provider> {
    Ok(Provider::from_config_with(config, |var| {
        env.iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(var).ok())
    })?)
}

async fn draft_requested(
    st: &mut AgentState,
    id: Option<&str>,
    env: &[(String, String)],
) -> Result<DraftsAnswer> {
    let provider = provider(&st.args.config, env)?;
    let memory = st.args.journal.memory()?;
    let lessons: Vec<LessonProposed> = match id {
        Some(id) => {
            let lesson = memory.lesson(&MemoryId(id.to_string())).ok_or_else(|| {
                crate::memory::unknown_memory(
                    id,
                    memory.lessons.iter().map(|l| l.proposed.id.0.clone()),
                )
            })?;
            // A reviewed lesson's rule is what a human decided on: a new
            // draft would replace it unseen.
            if lesson.review.is_some() {
                return Err(ErrorCode::LessonReviewed
                    .with(format!(
                        "lesson `{id}` was already {} by a human",
                        crate::memory::status_name(lesson.status)
                    ))
                    .into());
            }
            vec![lesson.proposed.clone()]
        }
        None => memory
            .lessons
            .iter()
            .filter(|l| l.status == LessonStatus::Proposed)
            .map(|l| l.proposed.clone())
            .collect(),
    };
    let mut drafted = Vec::new();
    for p in lessons {
        drafted.push(draft_one(st, &provider, &p).await?);
    }
    Ok(DraftsAnswer { drafted })
}

/// Whether a failure is the provider's or the setup's rather than this
/// lesson's: the next lessons would fail the same way.
fn stops_the_run(e: &Error) -> bool {
    let lesson_refused = e.is(ErrorCode::AgentHttp)
        && ["HTTP 400", "HTTP 413", "HTTP 422"]
            .iter()
            .any(|s| e.contract().message.contains(s));
    !(e.is(ErrorCode::AgentReply) || lesson_refused)
}

async fn draft_after_index(st: &mut AgentState, since: Seq) {
    if !st.args.config.draft_on_index {
        return;
    }
    let provider = match provider(&st.args.config, &[]) {
        Ok(p) => p,
        Err(e) => {
            if !std::mem::replace(&mut st.said, true) {
                tracing::warn!(error = %e, "[agent] draft_on_index is set but the provider cannot be used");
            }
            return;
        }
    };
    let todo: Vec<LessonProposed> = match st.args.journal.memory() {
        Ok(m) => m
            .lessons
            .iter()
            .filter(|l| l.status == LessonStatus::Proposed && l.seq >= since)
            .filter(|l| !st.failed.contains(&l.proposed.id))
            .take(MAX_DRAFTS_PER_RUN)
            .map(|l| l.proposed.clone())
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "could not read the lessons to draft");
            return;
        }
    };
    for p in todo {
        match draft_one(st, &provider, &p).await {
            Ok(_) => tracing::info!(lesson = %p.id, "lesson drafted"),
            Err(e) => {
                tracing::warn!(lesson = %p.id, error = %e, "could not draft a lesson");
                st.failed.insert(p.id.clone());
                if stops_the_run(&e) {
                    return;
                }
            }
        }
    }
}

/// Drafts one lesson: asks the provider (on a blocking thread), audits the
/// call, journals the draft.
async fn draft_one(
    st: &AgentState,
    provider: &Provider,
    p: &LessonProposed,
) -> Result<wire::Draft> {
    let facts = revert_facts(&st.args, p)?;
    let asking = provider.clone();
    let started = std::time::Instant::now();
    let answer: std::result::Result<(Completion, Draft), AgentError> =
        tokio::task::spawn_blocking(move || {
            asking
                .complete(LESSON_SYSTEM, &lesson_prompt(&facts))
                .and_then(|c| parse_draft(&c.text).map(|d| (c, d)))
        })
        .await
        .map_err(|e| Error::internal(format!("the provider's call failed: {e}")))?;
    let latency_ms = started.elapsed().as_millis() as u64;
    let (tokens, error) = match &answer {
        Ok((c, _)) => ((c.prompt_tokens, c.completion_tokens), None),
        Err(e) => (
            (None, None),
            Some(Error::from(e.clone()).contract().code.clone()),
        ),
    };
    if let Ok(audit) = ractor::call!(st.args.supervisor, SupervisorMsg::Audit) {
        let _ = audit.cast(AuditMsg::Record(AuditRecord {
            time_ms: crate::now_ms(),
            entry: AuditEntry::LlmCall(LlmCall {
                purpose: format!("lesson {}", p.id),
                model: provider.model().to_string(),
                endpoint: provider.endpoint().to_string(),
                prompt_tokens: tokens.0,
                completion_tokens: tokens.1,
                latency_ms,
                error,
            }),
        }));
        let _ = ractor::call!(audit, AuditMsg::Flush);
    }
    let (completion, draft) = answer?;
    let head = st.args.journal.head()?;
    let writer = ractor::call!(st.args.supervisor, SupervisorMsg::Writer)
        .map_err(|e| Error::internal(format!("actor system: {e}")))?;
    let mut ev = Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
        lesson: p.id.clone(),
        bound: Binding {
            branch: head.as_ref().and_then(|h| h.branch.clone()),
            commit: head.as_ref().map(|h| h.commit),
            session: format!("agent:{}", provider.model()),
        },
        analysis: draft.analysis.clone(),
        rule: draft.rule.clone(),
    });
    if st.args.mask_secrets {
        crate::masking::mask_memory(&mut ev);
    }
    ractor::call!(writer, WriterMsg::Memory, ev)
        .map_err(|e| Error::internal(format!("actor system: {e}")))??;
    Ok(wire::Draft {
        id: p.id.0.clone(),
        analysis: draft.analysis,
        rule: draft.rule,
        model: provider.model().to_string(),
        prompt_tokens: completion.prompt_tokens,
        completion_tokens: completion.completion_tokens,
        latency_ms,
    })
}

/// What the prompt says of a lesson's revert.
fn revert_facts(a: &AgentArgs, p: &LessonProposed) -> Result<RevertFacts> {
    let repo = sno_index::git::GitRepo::open(&a.root).ok();
    Ok(RevertFacts {
        summary: p.summary.clone(),
        reverted_message: p
            .reverted
            .and_then(|c| repo.as_ref()?.commit(c).ok())
            .map(|c| c.summary),
        files: p.files.clone(),
        symbols: p
            .reverted
            .map(|c| symbols_of_commit(&a.journal, c))
            .transpose()?
            .unwrap_or_default(),
    })
}

/// Qualified names of the symbols a journaled commit added or changed, read
/// from its latest event (one record) when that holds the commit's own
/// change: a diff from its first parent, not a first index (every file) or
/// a re-index from elsewhere. Else none: the prompt has the files anyway.
fn symbols_of_commit(journal: &Journal, commit: CommitId) -> Result<Vec<String>> {
    let Some(seq) = journal.seq_of_commit(&commit)? else {
        return Ok(Vec::new());
    };
    // Its outline first: a first index (every file) is not read whole to
    // be left out.
    let diff = journal
        .event_outlines(seq, Some(Seq(seq.0 + 1)))?
        .iter()
        .any(|(_, env)| match &env.event {
            Event::CommitIndexed(c) => {
                c.commit == commit && c.base.is_some() && c.base == c.parents.first().copied()
            }
            _ => false,
        });
    if !diff {
        return Ok(Vec::new());
    }
    let event = journal.events(seq, Some(Seq(seq.0 + 1)))?;
    Ok(event
        .iter()
        .find_map(|(_, env)| match &env.event {
            Event::CommitIndexed(c)
                if c.commit == commit
                    && c.base.is_some()
                    && c.base == c.parents.first().copied() =>
            {
                Some(
                    c.deltas
                        .iter()
                        .flat_map(|d| d.symbols_added.iter().map(|s| s.qualified_name.clone()))
                        .collect(),
                )
            }
            _ => None,
        })
        .unwrap_or_default())
}
