//! The state of an index: what `sno status` reports, the journal's
//! integrity (`doctor`), replay, rollback, the journal's events and the
//! audit trail.

use std::collections::BTreeMap;

use sno_journal::audit::{AuditEntry, AuditRecord};
use sno_journal::delta::{Digest, State};
use sno_journal::event::Event;
use sno_journal::model::{EdgeTarget, FileRecord, FileState, Seq};
use sno_journal::IndexedHead;
use sno_protocol::status::{
    AsOf, DoctorAnswer, EdgeCounts, Failure, FileCounts, JournalEntry, JournalLog, LanguageCounts,
    LastRun, Problem, ReplayAnswer, RollbackAnswer, SecretCounts, SkippedCommit, StatusReport,
    VerifyReport,
};

use crate::engine::Engine;
use crate::error::Result;

pub(crate) fn status_report(
    repository: String,
    state: &State,
    head: Option<&IndexedHead>,
    journal_events: u64,
    commits_indexed: u64,
    last_audit: Option<&AuditRecord>,
    masking: bool,
) -> StatusReport {
    let mut t = StatusTally::new(masking);
    for rec in state.values() {
        t.add(rec);
    }
    t.report(
        repository,
        head,
        journal_events,
        commits_indexed,
        last_audit,
    )
}

/// What a status report counts, record by record in path order: a report
/// of the views read a batch at a time, never held whole.
pub(crate) struct StatusTally {
    files: FileCounts,
    languages: BTreeMap<String, LanguageCounts>,
    symbols_by_kind: BTreeMap<String, u64>,
    edges_by_kind: BTreeMap<String, EdgeCounts>,
    failures: Vec<Failure>,
    symbols_total: u64,
    edges_total: u64,
    diagnostics_total: u64,
    secrets: SecretCounts,
    digest: Digest,
}

impl StatusTally {
    pub(crate) fn new(masking: bool) -> StatusTally {
        StatusTally {
            files: FileCounts::default(),
            languages: BTreeMap::new(),
            symbols_by_kind: BTreeMap::new(),
            edges_by_kind: BTreeMap::new(),
            failures: Vec::new(),
            symbols_total: 0,
            edges_total: 0,
            diagnostics_total: 0,
            secrets: SecretCounts {
                masking,
                ..Default::default()
            },
            digest: Digest::default(),
        }
    }

    /// Counts the next record (in path order).
    pub(crate) fn add(&mut self, rec: &FileRecord) {
        self.digest.add(rec);
        self.files.total += 1;
        self.secrets.masked += u64::from(rec.masked_secrets);
        self.secrets.files += u64::from(rec.masked_secrets > 0);
        match &rec.state {
            FileState::Parsed => self.files.parsed += 1,
            FileState::ParsedWithErrors => self.files.parsed_with_errors += 1,
            FileState::Skipped(r) => {
                *self.files.skipped.entry(r.name().to_string()).or_default() += 1
            }
            FileState::Failed(reason) => {
                self.files.failed += 1;
                self.failures.push(Failure {
                    path: rec.path.clone(),
                    reason: reason.clone(),
                });
            }
        }
        self.diagnostics_total += rec.diagnostics.len() as u64;
        self.symbols_total += rec.symbols.len() as u64;
        self.edges_total += rec.edges.len() as u64;
        for s in &rec.symbols {
            *self
                .symbols_by_kind
                .entry(s.kind.name().to_string())
                .or_default() += 1;
        }
        for e in &rec.edges {
            let c = self
                .edges_by_kind
                .entry(e.kind.name().to_string())
                .or_default();
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
            let l = self.languages.entry(lang.name().to_string()).or_default();
            l.files += 1;
            l.lines += u64::from(rec.lines);
            l.symbols += rec.symbols.len() as u64;
            l.edges += rec.edges.len() as u64;
            l.files_with_errors += u64::from(rec.state == FileState::ParsedWithErrors);
        }
    }

    /// The report of the records counted.
    pub(crate) fn report(
        self,
        repository: String,
        head: Option<&IndexedHead>,
        journal_events: u64,
        commits_indexed: u64,
        last_audit: Option<&AuditRecord>,
    ) -> StatusReport {
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
            files: self.files,
            languages: self.languages,
            symbols_total: self.symbols_total,
            symbols_by_kind: self.symbols_by_kind,
            edges_total: self.edges_total,
            edges_by_kind: self.edges_by_kind,
            diagnostics_total: self.diagnostics_total,
            secrets: self.secrets,
            failures: self.failures,
            skipped_commits: Vec::new(),
            last_run,
            views_digest: format!("{:016x}", self.digest.finish()),
            git_head: None,
            rolled_back: false,
        }
    }
}

impl Engine {
    /// What is indexed: commit, files, symbols and edges per language and
    /// kind, journal, secrets, failures, skipped commits.
    pub fn status(&self) -> Result<StatusReport> {
        let mut r = self.indexed_status()?;
        // Git's HEAD moves on its own: never part of a cached report.
        // A repository git cannot open still has its journal's status.
        if let Some(indexed) = &r.as_of {
            let head = self.read.with_git(|g| g.head().ok()).ok().flatten();
            r.git_head = head.map(|h| h.to_hex()).filter(|h| *h != indexed.commit);
            // Held by a rollback only while HEAD is where it was then.
            r.rolled_back = head.is_some() && self.journal.rolled_back_at()? == Some(head);
        }
        Ok(r)
    }

    /// The indexed state's counts (cached by journal position).
    fn indexed_status(&self) -> Result<StatusReport> {
        let j = &self.journal;
        // The head's views counted a batch at a time, unless its state is
        // in memory already.
        if !self.read.head_is_loaded() {
            if let Some(head) = j.head()? {
                let len = j.len()?;
                let key = format!("head@{}", head.seq.0);
                let streamed = self.read.status_cached_by(&key, len, || {
                    let mut t = StatusTally::new(self.config.mask_secrets);
                    let read = j.files_in_batches(head.seq, 512, |batch| {
                        for rec in batch.values() {
                            t.add(rec);
                        }
                        true
                    })?;
                    // The head moved while it was read: its state instead.
                    if !read {
                        return Err(crate::error::Error::internal("the head moved"));
                    }
                    let mut r = t.report(
                        self.paths.root.display().to_string(),
                        Some(&head),
                        len,
                        j.commits_indexed()?,
                        j.last_index_run()?.as_ref(),
                    );
                    r.skipped_commits = self.skipped_commits()?;
                    Ok(r)
                });
                if let Ok(r) = streamed {
                    return Ok(r);
                }
            }
        }
        let (snap, _) = self.snapshot(None)?;
        let len = j.len()?;
        self.read.status_cached(&snap, len, || {
            let mut r = status_report(
                self.paths.root.display().to_string(),
                &snap.state,
                j.head()?.as_ref(),
                len,
                j.commits_indexed()?,
                j.last_index_run()?.as_ref(),
                self.config.mask_secrets,
            );
            r.skipped_commits = self.skipped_commits()?;
            Ok(r)
        })
    }

    /// Commits of the history that could not be indexed.
    pub fn skipped_commits(&self) -> Result<Vec<SkippedCommit>> {
        Ok(self
            .journal
            .skipped_commits()?
            .into_iter()
            .map(|(c, reason)| SkippedCommit {
                commit: c.to_hex(),
                reason,
            })
            .collect())
    }

    /// Checks the journal's chain and that the views equal a replay of it;
    /// with `repair`, rebuilds views that do not.
    pub async fn doctor(&self, repair: bool) -> Result<DoctorAnswer> {
        let mut report = sno_journal::verify::verify(&self.journal);
        let mut repaired = false;
        let fixable = |r: &sno_journal::verify::Report| {
            !r.problems.is_empty()
                && r.problems
                    .iter()
                    .all(|p| p.code == "SNO-J-VIEWS" || p.code == "SNO-J-HEAD")
        };
        if repair && fixable(&report) {
            self.repair_views().await?;
            repaired = true;
            report = sno_journal::verify::verify(&self.journal);
        }
        Ok(DoctorAnswer {
            ok: report.problems.is_empty(),
            repaired,
            report: VerifyReport {
                events: report.events,
                files_in_views: report.files_in_views,
                views_digest: report.views_digest,
                problems: report
                    .problems
                    .iter()
                    .map(|p| Problem {
                        code: p.code.to_string(),
                        message: p.message.clone(),
                        repair: p.repair.to_string(),
                    })
                    .collect(),
            },
            skipped_commits: self.skipped_commits()?,
        })
    }

    /// The state at a journaled commit, rebuilt from the journal alone.
    pub fn replay(&self, to: &str) -> Result<ReplayAnswer> {
        let (snap, _) = self.snapshot(Some(to))?;
        let head = IndexedHead {
            commit: sno_journal::model::CommitId::from_hex(&snap.as_of.commit).unwrap_or_default(),
            branch: None,
            seq: snap.seq,
        };
        let r = status_report(
            self.paths.root.display().to_string(),
            &snap.state,
            Some(&head),
            snap.seq.0 + 1,
            0,
            None,
            self.config.mask_secrets,
        );
        Ok(ReplayAnswer {
            commit: snap.as_of.commit.clone(),
            seq: snap.seq.0,
            files: r.files.total,
            symbols: r.symbols_total,
            edges: r.edges_total,
            views_digest: r.views_digest,
            languages: r.languages,
        })
    }

    /// Moves the index back to a journaled commit's state.
    pub async fn rollback(&self, to: &str) -> Result<RollbackAnswer> {
        use sno_journal::rollback::Rollback;
        let commit = self.read.journaled(to)?;
        // An index git cannot serve the files of would answer with holes.
        if !self.read.with_git(|g| g.commit(commit).is_ok())? {
            return Err(sno_protocol::ErrorCode::Git
                .with(format!(
                    "commit {} is journaled but git no longer holds it (garbage-collected?): its files could not be served",
                    &commit.to_hex()[..12]
                ))
                .hinted("Roll back to a commit git still has (`git log`), or use `sno replay --to` to inspect that state from the journal.")
                .into());
        }
        // A watcher leaves the rollback alone while HEAD stays here.
        let git_head = self.read.with_git(|g| g.head().ok())?;
        let outcome = self.roll_back(commit, git_head).await?;
        let head = self.journal.head()?;
        let (rolled_back, from, seq, files_changed) = match outcome {
            Rollback::AlreadyThere => (false, None, None, 0),
            Rollback::Done {
                seq,
                from,
                files_changed,
            } => (true, from, Some(seq.0), files_changed),
        };
        Ok(RollbackAnswer {
            rolled_back,
            from: from.map(|c| c.to_hex()),
            to: commit.to_hex(),
            branch: head.and_then(|h| h.branch),
            seq,
            files_changed,
        })
    }

    /// The last `tail` events of the journal, oldest first.
    pub fn journal_log(&self, tail: usize, cut_to: usize) -> Result<JournalLog> {
        let total = self.journal.len()?;
        let from = Seq(total.saturating_sub(tail as u64));
        let entries = self
            .journal
            .events(from, None)?
            .iter()
            .map(|(seq, env)| journal_entry(seq.0, env, cut_to))
            .collect();
        Ok(JournalLog { total, entries })
    }

    /// The last `n` audit records, oldest first.
    pub fn audit_tail(&self, n: usize) -> Result<Vec<sno_protocol::audit::AuditRecord>> {
        Ok(self
            .journal
            .audit_tail(n)?
            .iter()
            .map(crate::audit::to_wire)
            .collect())
    }
}

/// One journal event as `journal log` shows it, its text cut to `cut_to`.
fn journal_entry(seq: u64, env: &sno_journal::event::Envelope, cut_to: usize) -> JournalEntry {
    let mut e = JournalEntry {
        seq,
        kind: env.event.kind_name().to_string(),
        written_ms: env.written_ms,
        commit: None,
        branch: None,
        from: None,
        to: None,
        id: None,
        summary: None,
        file_deltas: None,
    };
    let text: Option<String> = match &env.event {
        Event::CommitIndexed(c) => {
            e.commit = Some(c.commit.to_hex());
            e.branch = c.branch.clone();
            e.file_deltas = Some(c.deltas.len());
            Some(c.summary.clone())
        }
        Event::BranchMoved(b) => {
            e.branch = b.branch.clone();
            e.from = b.from.map(|c| c.to_hex());
            e.to = Some(b.to.to_hex());
            None
        }
        Event::CheckpointCreated(c) => {
            e.id = Some(c.id.0.clone());
            Some(c.name.clone())
        }
        Event::DecisionLogged(d) => {
            e.id = Some(d.id.0.clone());
            Some(d.title.clone())
        }
        Event::LessonProposed(l) => {
            e.id = Some(l.id.0.clone());
            Some(l.summary.clone())
        }
        Event::LessonAnalysisSubmitted(a) => {
            e.id = Some(a.lesson.0.clone());
            Some(a.rule.clone())
        }
        Event::LessonReviewed(r) => {
            e.id = Some(r.lesson.0.clone());
            Some(if r.approved { "approved" } else { "rejected" }.to_string())
        }
        Event::CommitSkipped(c) => {
            e.commit = Some(c.commit.to_hex());
            Some(format!("skipped: {}", c.reason))
        }
        Event::RolledBack(r) => {
            e.commit = Some(r.to.to_hex());
            e.branch = r.branch.clone();
            e.from = r.from.map(|c| c.to_hex());
            e.to = Some(r.to.to_hex());
            e.file_deltas = Some(r.deltas.len());
            Some(format!(
                "rolled back from {}",
                r.from
                    .map(|c| c.short())
                    .unwrap_or_else(|| "nothing".into())
            ))
        }
    };
    // What people and agents wrote may be long: a line each here.
    e.summary = text.map(|t| sno_journal::memory::cut(&t, cut_to).into_owned());
    e
}
