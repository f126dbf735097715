//! Drafting lesson analyses with the configured LLM provider: on demand
//! (`sno lessons draft`) and after an index run that proposed lessons
//! (`[agent] draft_on_index`, in `sno watch` and the daemon).
//!
//! Every call is audited, the failed ones too; a draft is journaled as a
//! `LessonAnalysisSubmitted` bound to `agent:<model>` and waits for a human.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

use sno_agent::{
    lesson_prompt, parse_draft, AgentError, Completion, Draft, Provider, RevertFacts, LESSON_SYSTEM,
};
use sno_journal::audit::{AuditEntry, AuditRecord, LlmCall};
use sno_journal::event::Event;
use sno_journal::memory::{
    Binding, LessonAnalysisSubmitted, LessonProposed, LessonStatus, MemoryId,
};
use sno_journal::model::{CommitId, Seq};
use sno_journal::Journal;

use crate::repo::RepoPaths;

/// The most lessons drafted after one index run: a first index of a long
/// history may propose many, and each call can take the provider's timeout.
pub const MAX_DRAFTS_PER_RUN: usize = 3;

static DRAFTING: Mutex<()> = Mutex::new(());

/// Lessons whose draft failed in this process: not asked for again after
/// each index run (`sno lessons draft` still may).
static FAILED: Mutex<Option<HashSet<MemoryId>>> = Mutex::new(None);

/// One drafting at a time in this process, so a lesson is not drafted twice.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    DRAFTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the prompt says of a lesson's revert.
fn revert_facts(
    paths: &RepoPaths,
    journal: &Journal,
    p: &LessonProposed,
) -> anyhow::Result<RevertFacts> {
    let repo = sno_index::git::GitRepo::open(&paths.root).ok();
    Ok(RevertFacts {
        summary: p.summary.clone(),
        reverted_message: p
            .reverted
            .and_then(|c| repo.as_ref()?.commit(c).ok())
            .map(|c| c.summary),
        files: p.files.clone(),
        symbols: p
            .reverted
            .map(|c| symbols_of_commit(journal, c))
            .transpose()?
            .unwrap_or_default(),
    })
}

/// Qualified names of the symbols a journaled commit added or changed, read
/// from its latest event (one record) when that holds the commit's own
/// change: a diff from its first parent, not a first index (every file) or
/// a re-index from elsewhere. Else none: the prompt has the files anyway.
fn symbols_of_commit(journal: &Journal, commit: CommitId) -> anyhow::Result<Vec<String>> {
    let Some(seq) = journal.seq_of_commit(&commit)? else {
        return Ok(Vec::new());
    };
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

/// Asks the provider; the answer and how long it took.
fn ask(provider: &Provider, facts: &RevertFacts) -> (Result<(Completion, Draft), AgentError>, u64) {
    let started = std::time::Instant::now();
    let answer = provider
        .complete(LESSON_SYSTEM, &lesson_prompt(facts))
        .and_then(|c| parse_draft(&c.text).map(|d| (c, d)));
    (answer, started.elapsed().as_millis() as u64)
}

/// Audits a call and journals its draft; what was drafted, as JSON.
fn record(
    journal: &Journal,
    provider: &Provider,
    p: &LessonProposed,
    answer: Result<(Completion, Draft), AgentError>,
    latency_ms: u64,
) -> anyhow::Result<serde_json::Value> {
    let (tokens, error) = match &answer {
        Ok((c, _)) => ((c.prompt_tokens, c.completion_tokens), None),
        Err(e) => ((None, None), Some(crate::failure::agent_contract(e).code)),
    };
    let audited = journal.record_audit(&AuditRecord {
        time_ms: crate::serve::core::now_ms(),
        entry: AuditEntry::LlmCall(LlmCall {
            purpose: format!("lesson {}", p.id),
            model: provider.model().to_string(),
            endpoint: provider.endpoint().to_string(),
            prompt_tokens: tokens.0,
            completion_tokens: tokens.1,
            latency_ms,
            error,
        }),
    });
    if let Err(e) = audited {
        tracing::warn!(error = %e, "could not audit an LLM call");
    }
    let (completion, draft) = answer?;
    let head = journal.head()?;
    journal.append_memory(Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
        lesson: p.id.clone(),
        bound: Binding {
            branch: head.as_ref().and_then(|h| h.branch.clone()),
            commit: head.as_ref().map(|h| h.commit),
            session: format!("agent:{}", provider.model()),
        },
        analysis: draft.analysis.clone(),
        rule: draft.rule.clone(),
    }))?;
    Ok(serde_json::json!({
        "id": p.id,
        "analysis": draft.analysis,
        "rule": draft.rule,
        "model": provider.model(),
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "latency_ms": latency_ms,
    }))
}

/// Drafts one lesson's analysis (the caller holds [`one_at_a_time`]).
pub fn draft_lesson(
    paths: &RepoPaths,
    journal: &Journal,
    provider: &Provider,
    p: &LessonProposed,
) -> anyhow::Result<serde_json::Value> {
    let facts = revert_facts(paths, journal, p)?;
    let (answer, latency) = ask(provider, &facts);
    record(journal, provider, p, answer, latency)
}

/// Whether a failure is the provider's or the setup's rather than this
/// lesson's: the next lessons would fail the same way.
fn stops_the_run(e: &AgentError) -> bool {
    !matches!(
        e,
        AgentError::BadReply(_)
            | AgentError::Http {
                status: 400 | 413 | 422,
                ..
            }
    )
}

/// After an index run: with `[agent] draft_on_index`, drafts the lessons
/// the run proposed (those at `since` or later), at most
/// [`MAX_DRAFTS_PER_RUN`], skipping lessons that failed before in this
/// process. The database is open only to read the facts and to record each
/// answer, not while the provider thinks. Failures are logged: the index
/// run itself succeeded.
pub fn draft_after_index(paths: &RepoPaths, since: Seq) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let Ok(config) = sno_engine::config::IndexConfig::load(&paths.config()) else {
        return;
    };
    if !config.agent.draft_on_index {
        return;
    }
    let provider = match Provider::from_config(&config.agent) {
        Ok(p) => p,
        Err(e) => {
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(error = %e, "[agent] draft_on_index is set but the provider cannot be used");
            }
            return;
        }
    };
    let _one_at_a_time = one_at_a_time();
    let todo = match lessons_to_draft(paths, since) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(
                error = format!("{e:#}"),
                "could not read the lessons to draft"
            );
            return;
        }
    };
    for (p, facts) in todo {
        let (answer, latency) = ask(&provider, &facts);
        let stop = answer.as_ref().err().is_some_and(stops_the_run);
        let failed = answer.is_err();
        let recorded = crate::commands::open_existing(paths)
            .and_then(|journal| record(&journal, &provider, &p, answer, latency));
        match recorded {
            Ok(_) => tracing::info!(lesson = %p.id, "lesson drafted"),
            Err(e) => {
                tracing::warn!(lesson = %p.id, error = format!("{e:#}"), "could not draft a lesson")
            }
        }
        if failed {
            FAILED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert_with(HashSet::new)
                .insert(p.id.clone());
        }
        if stop {
            return;
        }
    }
}

/// The lessons an index run proposed that still wait for an analysis, with
/// their facts; the journal is closed again when this returns (unless the
/// process holds it open anyway, as the daemon does).
fn lessons_to_draft(
    paths: &RepoPaths,
    since: Seq,
) -> anyhow::Result<Vec<(LessonProposed, RevertFacts)>> {
    let journal = crate::commands::open_existing(paths)?;
    let memory = journal.memory()?;
    let failed = FAILED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default();
    memory
        .lessons
        .iter()
        .filter(|l| l.status == LessonStatus::Proposed && l.seq >= since)
        .filter(|l| !failed.contains(&l.proposed.id))
        .take(MAX_DRAFTS_PER_RUN)
        .map(|l| {
            Ok((
                l.proposed.clone(),
                revert_facts(paths, &journal, &l.proposed)?,
            ))
        })
        .collect()
}
