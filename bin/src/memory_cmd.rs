//! `sno audit` and `sno lessons`: reading the audit trail, and the human's
//! side of lessons (approve or reject what agents analysed).

use std::path::Path;
use std::process::ExitCode;

use sno_journal::audit::AuditEntry;
use sno_journal::event::Event;
use sno_journal::memory::{LessonReviewed, MemoryId};
use sno_protocol::{ErrorContract, Fixability};

use crate::commands::{open_existing, print_json};
use crate::out::{errln, out, outln};
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
            AuditEntry::LlmCall(c) => format!(
                "llm       {} {} ({}): {} prompt + {} completion tokens, {} ms  {}",
                c.purpose,
                c.model,
                c.endpoint,
                c.prompt_tokens.map_or("?".into(), |t| t.to_string()),
                c.completion_tokens.map_or("?".into(), |t| t.to_string()),
                c.latency_ms,
                c.error.as_deref().unwrap_or("ok")
            ),
        };
        outln!("{}  {}", utc(r.time_ms), printable(&line));
    }
    if records.is_empty() {
        outln!("sno: the audit trail is empty");
    }
    Ok(ExitCode::SUCCESS)
}

/// A time in milliseconds since the epoch, as RFC 3339 UTC.
pub fn utc(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(ms as i64)
        .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
        .unwrap_or_else(|_| format!("{ms} ms"))
}

/// Text from agents (tool names, queries) as it may be printed on a
/// terminal: control characters escaped, so none can move the cursor or
/// recolour the screen.
pub fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
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
        return Err(unknown_lesson(id, &memory).into());
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

/// `sno lessons review`: each lesson waiting for a verdict, shown, with the
/// verdict read from stdin.
///
/// Each read and verdict runs as an `sno lessons …` command of its own: with
/// a daemon holding the database the daemon runs those, and a command run
/// there could not read this terminal.
pub fn lessons_review_interactive(path: &Path) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let root = paths.root.to_string_lossy().into_owned();
    let listed = match sno_step(&["lessons", "list", "--json", &root]) {
        Ok(out) => out,
        Err(code) => return Ok(code),
    };
    let lessons: Vec<serde_json::Value> = serde_json::from_str(&listed)?;
    let waiting: Vec<&serde_json::Value> = lessons
        .iter()
        .filter(|l| matches!(l["status"].as_str(), Some("proposed" | "analysed")))
        .collect();
    if waiting.is_empty() {
        outln!("sno: no lesson waits for a verdict");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("sno: {} lesson(s) wait for a verdict", waiting.len());
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let mut input = std::io::stdin().lock();
    let (mut approved, mut rejected, mut skipped) = (0, 0, 0);
    'lessons: for lesson in waiting {
        show_lesson(lesson);
        let id = lesson["id"].as_str().unwrap_or_default();
        let analysed = lesson["analyses"].as_array().is_some_and(|a| !a.is_empty());
        loop {
            out!("[a]pprove, [r]eject, [s]kip or [q]uit (a note may follow the letter): ");
            let _ = std::io::Write::flush(&mut std::io::stdout());
            let mut line = String::new();
            if std::io::BufRead::read_line(&mut input, &mut line)? == 0 {
                outln!();
                break 'lessons;
            }
            let line = line.trim();
            if !interactive {
                // Piped answers are not echoed by a terminal: show them.
                outln!("{line}");
            }
            let (answer, note) = line
                .split_once(char::is_whitespace)
                .map_or((line, ""), |(a, n)| (a, n.trim()));
            let verdict = match answer {
                "a" | "approve" if !analysed => {
                    outln!("  it has no analysis yet, so there is no rule to approve: reject or skip it");
                    continue;
                }
                "a" | "approve" => "approve",
                "r" | "reject" => "reject",
                "s" | "skip" => {
                    skipped += 1;
                    continue 'lessons;
                }
                "q" | "quit" => break 'lessons,
                _ => {
                    outln!("  answer a, r, s or q");
                    continue;
                }
            };
            let note = format!("--note={note}");
            if let Err(code) = sno_step(&["lessons", verdict, id, &root, &note]) {
                return Ok(code);
            }
            if verdict == "approve" {
                approved += 1;
                outln!("  approved: agents are told its rule from now on");
            } else {
                rejected += 1;
                outln!("  rejected");
            }
            continue 'lessons;
        }
    }
    outln!("sno: {approved} approved, {rejected} rejected, {skipped} skipped");
    Ok(ExitCode::SUCCESS)
}

fn show_lesson(l: &serde_json::Value) {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let short = |v: &serde_json::Value| v.as_str().map(|c| c.chars().take(12).collect::<String>());
    outln!();
    outln!("lesson {}  ({})", text(&l["id"]), text(&l["status"]));
    outln!(
        "  revert    {}  {}{}",
        short(&l["bound"]["commit"]).unwrap_or_default(),
        text(&l["summary"]),
        l["bound"]["branch"]
            .as_str()
            .map(|b| format!("  on {b}"))
            .unwrap_or_default()
    );
    if let Some(r) = short(&l["reverted"]) {
        outln!("  reverted  {r}");
    }
    let files: Vec<String> = l["files"]
        .as_array()
        .map(|f| f.iter().map(text).collect())
        .unwrap_or_default();
    outln!("  files     {}", files.join(", "));
    match l["analyses"].as_array().and_then(|a| a.last()) {
        Some(a) => {
            outln!("  analysis  {}", text(&a["analysis"]));
            outln!("  rule      {}", text(&a["rule"]));
        }
        None => outln!("  analysis  none yet (an agent submits one with submit_lesson_analysis)"),
    }
}

/// Runs `sno ARGS` (this binary) and returns its stdout; on failure its
/// stderr, which carries the error contract, is passed on with its exit code.
fn sno_step(args: &[&str]) -> Result<String, ExitCode> {
    let run = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
    });
    match run {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => {
            crate::out::write(
                crate::out::Stream::Err,
                format_args!("{}", String::from_utf8_lossy(&o.stderr)),
            );
            Err(ExitCode::from(
                o.status.code().unwrap_or(1).clamp(1, 255) as u8
            ))
        }
        Err(e) => {
            errln!("error[SNO-INTERNAL]: could not run sno again for the next step: {e}");
            Err(ExitCode::from(1))
        }
    }
}

/// `sno lessons draft`: analyses drafted by the configured LLM provider.
/// Each draft is journaled as soon as it is made; the first failure stops
/// the run and is reported (drafts already made stay).
pub fn lessons_draft(path: &Path, id: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    use sno_agent::Provider;
    use sno_journal::memory::LessonStatus;
    let paths = RepoPaths::discover(path)?;
    let config = sno_engine::config::IndexConfig::load(&paths.config())?;
    let provider = Provider::from_config_with(&config.agent, crate::serve::forward::env_var)?;
    let journal = open_existing(&paths)?;
    // One drafting at a time in this process (the daemon's follower drafts too).
    let _one_at_a_time = crate::drafting::one_at_a_time();
    let memory = journal.memory()?;
    let lessons: Vec<_> = match id {
        Some(id) => {
            let lesson = memory
                .lesson(&MemoryId(id.to_string()))
                .ok_or_else(|| unknown_lesson(id, &memory))?;
            // A reviewed lesson's rule is what a human decided on: a new
            // draft would replace it unseen.
            if lesson.review.is_some() {
                return Err(ErrorContract::new(
                    "SNO-LESSON-REVIEWED",
                    format!(
                        "lesson `{id}` was already {} by a human",
                        format!("{:?}", lesson.status).to_lowercase()
                    ),
                    "Only lessons waiting for a verdict are drafted; `sno lessons list` shows their status.",
                    Fixability::Trivial,
                )
                .into());
            }
            vec![lesson]
        }
        None => memory
            .lessons
            .iter()
            .filter(|l| l.status == LessonStatus::Proposed)
            .collect(),
    };
    let mut drafted = Vec::new();
    for lesson in lessons {
        if !json {
            errln!(
                "sno: drafting {} ({}) with {}",
                lesson.proposed.id,
                lesson.proposed.summary,
                provider.model()
            );
        }
        let d = crate::drafting::draft_lesson(&paths, &journal, &provider, &lesson.proposed)?;
        if !json {
            outln!(
                "{}  rule: {}",
                lesson.proposed.id,
                d["rule"].as_str().unwrap_or("")
            );
        }
        drafted.push(d);
    }
    if json {
        print_json(&serde_json::json!({ "drafted": drafted }))?;
    } else if drafted.is_empty() {
        outln!("sno: no lesson waits for an analysis");
    } else {
        outln!(
            "sno: {} draft(s) journaled; `sno lessons review` approves or rejects them",
            drafted.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn unknown_lesson(id: &str, memory: &sno_journal::memory::Memory) -> ErrorContract {
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
    c
}
