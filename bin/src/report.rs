//! Building reports from a state: the numbers `sno status` and `sno replay` show.

use std::collections::BTreeMap;

use sno_journal::audit::{AuditEntry, AuditRecord};
use sno_journal::delta::{digest, State};
use sno_journal::model::{EdgeTarget, FileState};
use sno_journal::IndexedHead;
use sno_protocol::status::{
    AsOf, EdgeCounts, Failure, FileCounts, LanguageCounts, LastRun, SecretCounts, StatusReport,
};

/// Counts everything in a state.
pub fn status_report(
    repository: String,
    state: &State,
    head: Option<&IndexedHead>,
    journal_events: u64,
    commits_indexed: u64,
    last_audit: Option<&AuditRecord>,
    masking: bool,
) -> StatusReport {
    let mut files = FileCounts::default();
    let mut languages: BTreeMap<String, LanguageCounts> = BTreeMap::new();
    let mut symbols_by_kind: BTreeMap<String, u64> = BTreeMap::new();
    let mut edges_by_kind: BTreeMap<String, EdgeCounts> = BTreeMap::new();
    let mut failures = Vec::new();
    let (mut symbols_total, mut edges_total, mut diagnostics_total) = (0u64, 0u64, 0u64);
    let mut secrets = SecretCounts {
        masking,
        ..Default::default()
    };
    for rec in state.values() {
        files.total += 1;
        secrets.masked += u64::from(rec.masked_secrets);
        secrets.files += u64::from(rec.masked_secrets > 0);
        match &rec.state {
            FileState::Parsed => files.parsed += 1,
            FileState::ParsedWithErrors => files.parsed_with_errors += 1,
            FileState::Skipped(r) => *files.skipped.entry(r.name().to_string()).or_default() += 1,
            FileState::Failed(reason) => {
                files.failed += 1;
                failures.push(Failure {
                    path: rec.path.clone(),
                    reason: reason.clone(),
                });
            }
        }
        diagnostics_total += rec.diagnostics.len() as u64;
        symbols_total += rec.symbols.len() as u64;
        edges_total += rec.edges.len() as u64;
        for s in &rec.symbols {
            *symbols_by_kind
                .entry(s.kind.name().to_string())
                .or_default() += 1;
        }
        for e in &rec.edges {
            let c = edges_by_kind.entry(e.kind.name().to_string()).or_default();
            if matches!(e.to, EdgeTarget::Unresolved(_)) {
                c.unresolved += 1;
            } else {
                c.resolved += 1;
                c.heuristic += u64::from(!e.certainty.is_exact());
            }
        }
        let parsed = matches!(
            rec.state,
            FileState::Parsed | FileState::ParsedWithErrors | FileState::Failed(_)
        );
        if let (Some(lang), true) = (rec.language, parsed) {
            let l = languages.entry(lang.name().to_string()).or_default();
            l.files += 1;
            l.lines += u64::from(rec.lines);
            l.symbols += rec.symbols.len() as u64;
            l.edges += rec.edges.len() as u64;
            l.files_with_errors += u64::from(rec.state == FileState::ParsedWithErrors);
        }
    }
    let last_run = last_audit.and_then(|a| match &a.entry {
        AuditEntry::IndexRun(r) => Some(LastRun {
            outcome: r.outcome.clone(),
            commits_indexed: r.commits_indexed,
            files_parsed: r.files_parsed,
            seconds: r.finished_ms.saturating_sub(r.started_ms) as f64 / 1000.0,
            excluded_secrets: r.excluded_secrets,
            skipped_ignored: r.skipped_ignored,
        }),
        _ => None,
    });
    StatusReport {
        repository,
        as_of: head.map(|h| AsOf {
            commit: h.commit.to_hex(),
            branch: h.branch.clone(),
            seq: h.seq.0,
        }),
        journal_events,
        commits_indexed,
        files,
        languages,
        symbols_total,
        symbols_by_kind,
        edges_total,
        edges_by_kind,
        diagnostics_total,
        secrets,
        failures,
        skipped_commits: Vec::new(),
        last_run,
        views_digest: format!("{:016x}", digest(state)),
    }
}

/// The human form of a report.
pub fn print_status(r: &StatusReport) {
    crate::out::outln!("repository  {}", r.repository);
    match &r.as_of {
        Some(a) => crate::out::outln!(
            "as of       {} on {} (journal seq {})",
            &a.commit[..12],
            a.branch.as_deref().unwrap_or("detached HEAD"),
            a.seq
        ),
        None => crate::out::outln!("as of       nothing indexed yet"),
    }
    crate::out::outln!(
        "journal     {} events, {} commits indexed",
        r.journal_events,
        r.commits_indexed
    );
    let skipped: Vec<String> = r
        .files
        .skipped
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    crate::out::outln!(
        "files       {} total: {} parsed, {} with syntax errors, {} failed{}",
        r.files.total,
        r.files.parsed,
        r.files.parsed_with_errors,
        r.files.failed,
        if skipped.is_empty() {
            String::new()
        } else {
            format!(", skipped: {}", skipped.join(", "))
        }
    );
    if !r.languages.is_empty() {
        crate::out::outln!(
            "\n{:<12} {:>7} {:>9} {:>9} {:>9} {:>7}",
            "language",
            "files",
            "lines",
            "symbols",
            "edges",
            "errors"
        );
        for (name, l) in &r.languages {
            crate::out::outln!(
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
    crate::out::outln!("\nsymbols     {} ({})", r.symbols_total, kinds.join(", "));
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
    crate::out::outln!("edges       {} ({})", r.edges_total, edges.join(", "));
    crate::out::outln!("diagnostics {}", r.diagnostics_total);
    crate::out::outln!(
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
        crate::out::outln!("\nfailures:");
        for f in &r.failures {
            crate::out::outln!("  {}: {}", f.path, f.reason);
        }
    }
    if !r.skipped_commits.is_empty() {
        crate::out::outln!(
            "\nskipped commits (their objects cannot be read; `git fsck --full` lists them):"
        );
        for c in &r.skipped_commits {
            crate::out::outln!("  {}: {}", &c.commit[..12.min(c.commit.len())], c.reason);
        }
    }
    if let Some(run) = &r.last_run {
        crate::out::outln!(
            "\nlast run    {} — {} commit(s), {} files parsed in {:.2}s; {} secret file(s) never admitted, {} ignored",
            run.outcome, run.commits_indexed, run.files_parsed, run.seconds, run.excluded_secrets, run.skipped_ignored
        );
    }
}
