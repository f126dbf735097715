//! Answers as people read them (and, with `--json`, as programs do). Every
//! answer is rendered here, whichever process computed it.

use std::process::ExitCode;

use sno_protocol::query::{ChangesTo, MatchKind};
use sno_protocol::rpc::Answer;
use sno_protocol::status::{IndexSummary, StatusReport};

use crate::out::{errln, out, outln};

/// Prints a value as pretty JSON.
pub fn json<T: serde::Serialize>(v: &T) {
    outln!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    );
}

/// Prints a value as compact JSON: the form a `search` or `map` answer's
/// budget counts (the one MCP sends), so `--json --max-tokens N` prints at
/// most N tokens; pretty-printing it added a third.
pub fn wire<T: serde::Serialize>(v: &T) {
    outln!("{}", sno_protocol::to_wire(v));
}

/// Renders an answer; the exit code.
pub fn answer(a: &Answer, as_json: bool) -> ExitCode {
    if as_json {
        match a {
            Answer::Index(x) => json(x),
            Answer::Status(x) => json(x),
            Answer::Doctor(x) => json(x),
            Answer::Replay(x) => json(x),
            Answer::Rollback(x) => json(x),
            Answer::JournalLog(x) => json(&x.entries),
            Answer::Audit(x) => json(x),
            Answer::Search(x) => wire(x),
            Answer::Map(x) => wire(x),
            Answer::Symbols(x) => json(x),
            Answer::Outline(x) => json(x),
            Answer::Show(x) => json(x),
            Answer::Refs(x) => json(x),
            Answer::Grep(x) => json(x),
            Answer::Changes(x) => json(x),
            Answer::Lessons(x) => json(&x.lessons),
            Answer::Lesson(x) => json(&x.lesson),
            Answer::Drafts(x) => json(x),
        }
        return exit_of(a);
    }
    match a {
        Answer::Index(s) => index(s),
        Answer::Status(r) => status(r),
        Answer::Doctor(d) => {
            outln!(
                "journal     {} events, chain intact: {}",
                d.report.events,
                !d.report.problems.iter().any(|p| p.code.starts_with("SNO-J-")
                    && p.code != "SNO-J-VIEWS"
                    && p.code != "SNO-J-HEAD")
            );
            outln!(
                "views       {} files, digest {:016x}",
                d.report.files_in_views,
                d.report.views_digest
            );
            if d.repaired {
                outln!("repaired    the views were rebuilt from the journal");
            }
            if d.report.problems.is_empty() {
                outln!("ok          the views equal a replay of the journal");
            }
            for c in &d.skipped_commits {
                outln!(
                    "skipped     commit {} of the history could not be read ({}); `git fsck --full` lists the missing objects",
                    short(&c.commit),
                    c.reason
                );
            }
            for p in &d.report.problems {
                outln!("problem     [{}] {}\n  repair:   {}", p.code, p.message, p.repair);
            }
        }
        Answer::Replay(r) => outln!(
            "replayed to {} (journal seq {}): {} files, {} symbols, {} edges, digest {}",
            short(&r.commit),
            r.seq,
            r.files,
            r.symbols,
            r.edges,
            r.views_digest
        ),
        Answer::Rollback(r) if !r.rolled_back => {
            outln!("sno: the index is already at {}", short(&r.to))
        }
        Answer::Rollback(r) => outln!(
            "sno: rolled back from {} to {}: {} file(s) changed, journal seq {}; `sno init` indexes forward to HEAD again",
            r.from.as_deref().map(short).unwrap_or("nothing"),
            short(&r.to),
            r.files_changed,
            r.seq.unwrap_or(0)
        ),
        Answer::JournalLog(log) => {
            let shown = log.entries.len() as u64;
            if shown < log.total {
                crate::out::errln!(
                    "sno: showing the last {shown} of {} events (--tail N for more)",
                    log.total
                );
            }
            for e in &log.entries {
                let commit = e.commit.as_deref().or(e.to.as_deref()).map(short).unwrap_or("");
                outln!(
                    "{:>6}  {:<14} {}  {} ({} file deltas)",
                    e.seq,
                    e.kind,
                    commit,
                    e.summary.as_deref().unwrap_or(""),
                    e.file_deltas.unwrap_or(0)
                );
            }
        }
        Answer::Audit(records) => audit(records),
        Answer::Search(pkg) => out!("{}", pkg.package),
        Answer::Map(m) => out!("{}", m.map),
        Answer::Symbols(s) => {
            let fuzzy = fuzzy_only(a);
            for h in &s.results {
                let s = &h.symbol;
                outln!(
                    "{}:{}  {} {}  {}{}",
                    s.path,
                    s.line,
                    s.kind,
                    s.qualified_name,
                    s.signature,
                    if fuzzy { "  (fuzzy)" } else { "" }
                );
            }
        }
        Answer::Outline(o) => {
            fn print(nodes: &[sno_protocol::query::OutlineNode], indent: usize) {
                for n in nodes {
                    outln!("{:>5}  {}{}  [{}]", n.line, "  ".repeat(indent), n.signature, n.kind);
                    print(&n.children, indent + 1);
                }
            }
            outln!("{}", o.title());
            print(&o.outline, 0);
        }
        Answer::Show(s) => {
            let i = &s.symbol;
            outln!("{}:{}-{}  {} {}", i.path, i.line, i.end_line, i.kind, i.qualified_name);
            if s.edited_in_work_tree == Some(true) {
                errln!(
                    "sno: {} changed on disk since the indexed commit; this is the committed source",
                    i.path
                );
            }
            outln!("{}", s.source);
        }
        Answer::Refs(r) => {
            for x in &r.results {
                outln!(
                    "{}:{}  {} {} -> {}{}",
                    x.path,
                    x.line,
                    x.kind,
                    x.from.as_deref().unwrap_or("<top level>"),
                    x.to,
                    match (&x.reason, x.heuristic) {
                        (Some(why), _) => format!("  (heuristic: {why})"),
                        (None, true) => "  (heuristic)".to_string(),
                        (None, false) => String::new(),
                    }
                );
            }
            if r.results.is_empty() {
                outln!("no references to {}", r.symbol.qualified_name);
            }
        }
        Answer::Grep(g) => {
            for h in &g.results {
                outln!(
                    "{}:{}: [{}] {}",
                    h.path,
                    h.line,
                    h.symbol.as_deref().unwrap_or("-"),
                    h.text
                );
            }
            if g.truncated {
                errln!("sno: stopped at {} hits (--limit to see more)", g.limit);
            }
        }
        Answer::Changes(c) => {
            for x in &c.changes {
                let s = &x.symbol;
                outln!("{:<8} {}:{}  {} {}", x.change, s.path, s.line, s.kind, s.qualified_name);
            }
            if c.changes.is_empty() {
                outln!(
                    "no symbol changes between {} and {}",
                    short(&c.from.commit),
                    match &c.to {
                        ChangesTo::Commit(t) => short(&t.commit),
                        ChangesTo::WorkTree(_) => "the work tree",
                    }
                );
            }
        }
        Answer::Lessons(l) => {
            if l.lessons.is_empty() {
                outln!("sno: no lessons yet (they come from commits that revert others)");
            }
            for x in &l.lessons {
                outln!(
                    "{}  {:<9} {}  rule: {}",
                    x.id,
                    x.status,
                    x.summary,
                    x.analyses
                        .last()
                        .map(|a| a.rule.as_str())
                        .unwrap_or("(no analysis yet)")
                );
            }
        }
        Answer::Lesson(u) => {
            if let Some(l) = &u.lesson {
                outln!("sno: lesson {} {}", l.id, l.status);
            }
        }
        Answer::Drafts(d) => {
            for x in &d.drafted {
                outln!("{}  rule: {}", x.id, x.rule);
            }
            if d.drafted.is_empty() {
                outln!("sno: no lesson waits for an analysis");
            } else {
                outln!(
                    "sno: {} draft(s) journaled; `sno lessons review` approves or rejects them",
                    d.drafted.len()
                );
            }
        }
    }
    exit_of(a)
}

/// Whether a symbols answer holds only names close in spelling.
fn fuzzy_only(a: &Answer) -> bool {
    matches!(a, Answer::Symbols(s) if !s.results.is_empty()
        && s.results.iter().all(|h| h.match_kind == MatchKind::Fuzzy))
}

/// Answers that are not errors but not what was asked either exit 1: only
/// fuzzy symbol matches (a script must not take them for the name).
fn exit_of(a: &Answer) -> ExitCode {
    // A journal or views `doctor` found broken (and did not repair) fails.
    if matches!(a, Answer::Doctor(d) if !d.ok) {
        return ExitCode::from(1);
    }
    if fuzzy_only(a) {
        if let Answer::Symbols(s) = a {
            errln!(
                "sno: no symbol named `{}`; these are close in spelling (fuzzy matches)",
                s.query
            );
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn short(id: &str) -> &str {
    &id[..12.min(id.len())]
}

/// `sno init`'s summary.
fn index(s: &IndexSummary) {
    let at = s.commit.as_deref().map(short).unwrap_or_default();
    let branch = s.branch.as_deref().unwrap_or("detached HEAD");
    if let Some(note) = s.history_note() {
        errln!("sno: note: {note}");
    }
    if s.up_to_date {
        outln!("sno: already up to date at {at} ({branch})");
        return;
    }
    outln!(
        "sno: indexed {} commit(s) up to {at} ({branch}): {} files parsed in {:.2}s",
        s.commits_indexed,
        s.files_parsed,
        s.seconds
    );
    let k = &s.skipped;
    if k.binary + k.too_large + k.unsupported_language + k.ignored + s.excluded_secrets > 0 {
        // Counted over the run: a file that changed in five commits counts
        // five times. `status` counts the indexed state.
        let scope = if s.commits_indexed > 1 {
            format!(
                " (file versions seen across the {} commits; `sno status` counts HEAD's files)",
                s.commits_indexed
            )
        } else {
            String::new()
        };
        outln!(
            "     skipped {} binary, {} over the size limit, {} without a grammar, {} ignored; {} secret file(s) never admitted{scope}",
            k.binary, k.too_large, k.unsupported_language, k.ignored, s.excluded_secrets
        );
    }
    if s.shallow {
        outln!("     note: shallow clone; history stops where the clone does");
    }
    for f in &s.failures {
        outln!("     failed: {}: {}", f.path, f.reason);
    }
    match &s.semantic {
        Some(e) if e.enabled => outln!(
            "     semantic index: {} symbols ({} embedded now, {} reused)",
            e.symbols,
            e.embedded,
            e.reused
        ),
        Some(e) => outln!(
            "     semantic index off ({}); search uses lexical and structural signals",
            e.off_reason.as_deref().unwrap_or("")
        ),
        None => {}
    }
}

/// `sno status`.
pub fn status(r: &StatusReport) {
    outln!("repository  {}", r.repository);
    match &r.as_of {
        Some(a) => outln!(
            "as of       {} on {} (journal seq {})",
            short(&a.commit),
            a.branch.as_deref().unwrap_or("detached HEAD"),
            a.seq
        ),
        None => outln!("as of       nothing indexed yet"),
    }
    if let Some(note) = r.git_head_note() {
        outln!("{note}");
    }
    outln!(
        "journal     {} events, {} commits indexed",
        r.journal_events,
        r.commits_indexed
    );
    outln!(
        "files       {} total: {} parsed, {} with syntax errors, {} failed{}",
        r.files.total,
        r.files.parsed,
        r.files.parsed_with_errors,
        r.files.failed,
        r.skipped_summary()
    );
    if !r.languages.is_empty() {
        outln!(
            "\n{:<12} {:>7} {:>9} {:>9} {:>9} {:>7}",
            "language",
            "files",
            "lines",
            "symbols",
            "edges",
            "errors"
        );
        for (name, l) in &r.languages {
            outln!(
                "{:<12} {:>7} {:>9} {:>9} {:>9} {:>7}",
                name,
                l.files,
                l.lines,
                l.symbols,
                l.edges,
                l.files_with_errors
            );
        }
    }
    let kinds: Vec<String> = r
        .symbols_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    outln!("\nsymbols     {} ({})", r.symbols_total, kinds.join(", "));
    let edges: Vec<String> = r
        .edges_by_kind
        .iter()
        .map(|(k, c)| {
            format!(
                "{k} {} ({} unresolved, {} heuristic)",
                c.resolved + c.unresolved,
                c.unresolved,
                c.heuristic
            )
        })
        .collect();
    outln!("edges       {} ({})", r.edges_total, edges.join(", "));
    outln!("diagnostics {}", r.diagnostics_total);
    outln!(
        "secrets     {} value(s) in {} file(s) {}",
        r.secrets.masked,
        r.secrets.files,
        if r.secrets.masking {
            "masked in everything stored and served"
        } else {
            "NOT masked ([index] mask_secrets = false)"
        }
    );
    if !r.failures.is_empty() {
        outln!("\nfailures:");
        for f in &r.failures {
            outln!("  {}: {}", f.path, f.reason);
        }
    }
    if !r.skipped_commits.is_empty() {
        outln!("\nskipped commits (their objects cannot be read; `git fsck --full` lists them):");
        for c in &r.skipped_commits {
            outln!("  {}: {}", short(&c.commit), c.reason);
        }
    }
    if let Some(run) = &r.last_run {
        outln!(
            "\nlast run    {} — {} commit(s), {} files parsed in {:.2}s; {} secret file(s) never admitted, {} ignored",
            run.outcome, run.commits_indexed, run.files_parsed, run.seconds, run.excluded_secrets, run.skipped_ignored
        );
    }
}

/// `sno audit`.
fn audit(records: &[sno_protocol::audit::AuditRecord]) {
    use sno_protocol::audit::AuditEntry;
    for r in records {
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
        outln!(
            "{}  {}",
            utc(r.time_ms),
            sno_protocol::terminal::printable(&line)
        );
    }
    if records.is_empty() {
        outln!("sno: the audit trail is empty");
    }
}

/// A time in milliseconds since the epoch, as RFC 3339 UTC.
pub fn utc(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(ms as i64)
        .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
        .unwrap_or_else(|_| format!("{ms} ms"))
}

/// Set when a panic came from inside redb (see `main`): an internal error
/// after it is the database's damage, and is reported as such.
pub static STORAGE_PANICKED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// An error in the contract: one line and its hint on stderr, and with
/// `--json` the contract on stdout.
pub fn error(c: &sno_protocol::ErrorContract, as_json: bool) -> ExitCode {
    let damaged;
    let c = if c.code == sno_protocol::ErrorCode::Internal.as_str()
        && STORAGE_PANICKED.load(std::sync::atomic::Ordering::Relaxed)
    {
        damaged = sno_protocol::ErrorCode::DbCorrupt.with(
            "the sno database (.sno/sno.redb) has damaged pages: reading it broke the storage engine's own invariants",
        );
        &damaged
    } else {
        c
    };
    if as_json {
        json(&sno_protocol::error::ErrorAnswer { error: c.clone() });
    }
    errln!("error[{}]: {}", c.code, c.message);
    errln!("  hint: {}", c.llm_hint);
    if !c.did_you_mean.is_empty() {
        errln!("  did you mean: {}", c.did_you_mean.join(", "));
    }
    ExitCode::from(1)
}
