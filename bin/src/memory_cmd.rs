//! `sno audit` and `sno lessons`: reading the audit trail, and the human's
//! side of lessons (approve or reject what agents analysed).

use std::path::Path;
use std::process::ExitCode;

use sno_journal::audit::AuditEntry;
use sno_journal::event::Event;
use sno_journal::memory::{LessonReviewed, MemoryId};
use sno_protocol::{ErrorContract, Fixability};

use crate::commands::{open_existing, print_json};
use crate::out::outln;
use crate::repo::RepoPaths;

/// `sno audit`.
pub fn audit(path: &Path, tail: usize, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    let records = journal.audit_tail(tail)?;
    if json {
        print_json(&records)?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &records {
        let line = match &r.entry {
            AuditEntry::IndexRun(run) => format!(
                "index     {} commits, {} files parsed, {} failed: {}",
                run.commits_indexed,
                run.files_parsed,
                run.failures.len(),
                run.outcome
            ),
            AuditEntry::ToolCall(c) => format!(
                "tool      {:<22} {:>8} µs {:>8} B  {}  session {}  args {}",
                c.tool,
                c.latency_us,
                c.result_bytes,
                c.error.as_deref().unwrap_or("ok"),
                c.session,
                c.args_digest
            ),
            AuditEntry::Retrieval(q) => format!(
                "retrieval {:?}: {} hits, top {:.3}, {} µs  session {}",
                q.query, q.hits, q.top_score, q.latency_us, q.session
            ),
        };
        outln!("{}  {line}", r.time_ms);
    }
    if records.is_empty() {
        outln!("sno: the audit trail is empty");
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno lessons list`.
pub fn lessons_list(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let memory = open_existing(&paths)?.memory()?;
    if json {
        print_json(&memory.lessons)?;
        return Ok(ExitCode::SUCCESS);
    }
    if memory.lessons.is_empty() {
        outln!("sno: no lessons yet (they come from commits that revert others)");
    }
    for l in &memory.lessons {
        outln!(
            "{}  {:<9} {}  rule: {}",
            l.proposed.id,
            format!("{:?}", l.status).to_lowercase(),
            l.proposed.summary,
            l.rule().unwrap_or("(no analysis yet)")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno lessons approve|reject`.
pub fn lessons_review(
    path: &Path,
    id: &str,
    approved: bool,
    note: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    let lesson = MemoryId(id.to_string());
    let memory = journal.memory()?;
    let Some(found) = memory.lesson(&lesson) else {
        let mut c = ErrorContract::new(
            "SNO-UNKNOWN-MEMORY",
            format!("no lesson `{id}`"),
            "Run `sno lessons list` for the lesson ids.",
            Fixability::Trivial,
        );
        c.did_you_mean = memory
            .lessons
            .iter()
            .map(|l| l.proposed.id.0.clone())
            .filter(|k| sno_query::lookup::similarity(k, id) > 0.5)
            .collect();
        return Err(c.into());
    };
    if approved && found.rule().is_none() {
        return Err(ErrorContract::new(
            "SNO-LESSON-UNANALYSED",
            format!("lesson `{id}` has no analysis yet, so there is no rule to approve"),
            "Have an agent call submit_lesson_analysis for it first, or reject it.",
            Fixability::Easy,
        )
        .into());
    }
    let reviewer = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    journal.append_memory(Event::LessonReviewed(LessonReviewed {
        lesson: lesson.clone(),
        approved,
        reviewer,
        note: note.to_string(),
    }))?;
    let after = journal.memory()?;
    if json {
        print_json(&after.lesson(&lesson))?;
    } else {
        outln!(
            "sno: lesson {id} {}",
            if approved { "approved" } else { "rejected" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
