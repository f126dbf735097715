//! One function per command.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use ractor::Actor;
use sno_engine::config::IndexConfig;
use sno_engine::embedder::{EmbedSummary, EmbedderMsg};
use sno_engine::indexer::{IndexRequest, IndexSummary, IndexerMsg};
use sno_engine::supervisor::{Supervisor, SupervisorArgs, SupervisorMsg};
use sno_journal::event::Event;
use sno_journal::lock::WriterLock;
use sno_journal::model::{CommitId, Seq};
use sno_journal::replay::replay_to_commit;
use sno_journal::verify::{repair_views, verify};
use sno_journal::Journal;

use crate::cli::{Command, History, InitArgs, JournalCommand, LessonsCommand, McpCommand};
use crate::failure::DoctorFound;
use crate::repo::RepoPaths;
use crate::report::{print_status, status_report};

/// Runs a command; `Ok` carries the exit code for outcomes that are not errors.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Init(args) => init(args),
        Command::Status { path, json } => status(&path, json),
        Command::Doctor { path, repair, json } => doctor(&path, repair, json),
        Command::Replay { to, path, json } => replay(&path, &to, json),
        Command::Rollback { to, path, json } => rollback(&path, &to, json),
        Command::Journal {
            command: JournalCommand::Log { path, tail, json },
        } => journal_log(&path, tail, json),
        Command::Search {
            query,
            max_tokens,
            limit,
            scope,
            lexical_only,
            model,
            q,
        } => crate::search::search(
            crate::search::SearchArgs {
                query: &query,
                max_tokens,
                limit,
                scope: scope.as_deref(),
                lexical_only,
                model: model.as_deref(),
            },
            &q,
        ),
        Command::Serve { path } => crate::serve::serve(path),
        Command::Daemon { path } => crate::serve::daemon(path),
        Command::Watch { path, json } => crate::watch::watch(&path, json),
        Command::Audit { path, tail, json } => crate::memory_cmd::audit(&path, tail, json),
        Command::Mcp {
            command:
                McpCommand::Config {
                    client,
                    path,
                    write,
                    file,
                },
        } => crate::mcp_config::run(client, &path, write, file),
        Command::Lessons { command } => match command {
            LessonsCommand::List { path, json } => crate::memory_cmd::lessons_list(&path, json),
            LessonsCommand::Approve {
                id,
                path,
                note,
                json,
            } => crate::memory_cmd::lessons_review(&path, &id, true, &note, json),
            LessonsCommand::Reject {
                id,
                path,
                note,
                json,
            } => crate::memory_cmd::lessons_review(&path, &id, false, &note, json),
            LessonsCommand::Review { path } => crate::memory_cmd::lessons_review_interactive(&path),
            LessonsCommand::Draft { id, path, json } => {
                crate::memory_cmd::lessons_draft(&path, id.as_deref(), json)
            }
        },
        Command::Map {
            max_tokens,
            per_file,
            q,
        } => crate::queries::map(max_tokens, per_file, &q),
        Command::Symbol { name, q, limit } => crate::queries::symbol(&name, &q, limit),
        Command::Outline { file, q } => crate::queries::outline(&file, &q),
        Command::Show { name, q } => crate::queries::show(&name, &q),
        Command::Refs {
            name,
            callers,
            callees,
            depth,
            q,
        } => crate::queries::refs(&name, callers, callees, depth, &q),
        Command::Grep { pattern, limit, q } => crate::queries::grep(&pattern, limit, &q),
        Command::Changes { range, q } => crate::queries::changes(&range, &q),
        Command::Journal {
            command: JournalCommand::Verify { path, json },
        } => doctor(&path, false, json),
    }
}

pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    crate::out::outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn init(a: InitArgs) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(&a.path)?;
    let done = index_repository(&paths, &a, true)?;
    report_init(
        &paths,
        &done.journal,
        &done.summary,
        done.embedded.as_ref(),
        a.json,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// What [`index_repository`] did.
pub struct Indexed {
    pub journal: Arc<Journal>,
    /// The journal's length before the run: its events start there.
    pub events_before: Seq,
    pub summary: IndexSummary,
    pub embedded: Option<EmbedSummary>,
}

/// Index runs of this process, one at a time: the daemon's watcher and a
/// forwarded `sno init` wait for each other instead of meeting the writer
/// lock (which is for other processes).
static INDEXING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for this process's other index run (or repair), saying so when
/// `tell`.
pub fn one_writer_at_a_time(tell: bool) -> std::sync::MutexGuard<'static, ()> {
    match INDEXING.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => {
            if tell {
                crate::out::errln!("sno: waiting for the index run in progress to finish");
            }
            INDEXING.lock().unwrap_or_else(|e| e.into_inner())
        }
    }
}

/// Indexes the repository as `sno init` does (`a.json` aside), with progress
/// on stderr when `progress`.
pub fn index_repository(
    paths: &RepoPaths,
    a: &InitArgs,
    progress: bool,
) -> anyhow::Result<Indexed> {
    let InitArgs {
        history,
        rev,
        max_file_size,
        workers,
        model,
        ..
    } = a.clone();
    let _one_at_a_time = one_writer_at_a_time(progress);
    let _lock = WriterLock::acquire(&paths.sno_dir)?;
    let _small_pages = sno_extract::allocator::HugePagesOff::start();
    paths.exclude_sno_dir()?;
    let journal = open_or_create(paths)?;
    let events_before = Seq(journal.len()?);
    let mut config = IndexConfig::load(&paths.config())?;
    if let Some(m) = max_file_size {
        config.max_file_size = m;
    }
    if let Some(w) = workers {
        config.parser_workers = w.max(1);
    }
    // Test hooks, documented in the README's "Testing" section.
    config.fault_panic_on = std::env::var("SNO_TEST_PANIC_ON").ok();
    config.commit_delay_ms = std::env::var("SNO_TEST_COMMIT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let history = match history {
        Some(History::All) => None,
        Some(History::Commits(n)) => Some(n),
        None => config.history,
    };
    let request = IndexRequest {
        target: rev,
        history,
    };
    let workers = config.parser_workers;
    let model = crate::search::model_spec(model.as_deref(), &config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(2))
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let summary = runtime.block_on(async {
        let args = SupervisorArgs {
            root: paths.root.clone(),
            journal: journal.clone(),
            config,
            model,
        };
        let (sup, handle) = Actor::spawn(None, Supervisor, args)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let indexer =
            ractor::call!(sup, SupervisorMsg::Indexer).map_err(|e| anyhow::anyhow!("{e}"))?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let tx = progress.then_some(tx);
        // Rendered on this thread, not a spawned task: a command the daemon
        // runs for a CLI captures this thread's output (see `out`).
        let (result, ()) = tokio::join!(
            async {
                ractor::call!(indexer, IndexerMsg::Run, request, tx)
                    .map_err(|e| anyhow::anyhow!("{e}"))
            },
            crate::progress::render(rx),
        );
        // Then the semantic index, for what is new.
        let embedded = match &result {
            Ok(Ok(_)) => {
                let embedder = ractor::call!(sup, SupervisorMsg::Embedder)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                Some(
                    ractor::call!(embedder, EmbedderMsg::Refresh)
                        .map_err(|e| anyhow::anyhow!("{e}"))?,
                )
            }
            _ => None,
        };
        sup.stop(None);
        let _ = handle.await;
        anyhow::Ok((result??, embedded))
    })?;
    let (summary, embedded) = summary;
    let embedded = embedded
        .transpose()
        .map_err(|e| anyhow::anyhow!("embedding: {e}"))?;
    Ok(Indexed {
        journal,
        events_before,
        summary,
        embedded,
    })
}

/// The summary of an index run as JSON (`sno init --json`, `sno watch --json`).
pub fn init_json(
    paths: &RepoPaths,
    journal: &Journal,
    s: &IndexSummary,
    embedded: Option<&EmbedSummary>,
) -> anyhow::Result<serde_json::Value> {
    let head = journal.head()?;
    let r = &s.run;
    Ok(serde_json::json!({
            "repository": paths.root.display().to_string(),
            "up_to_date": s.up_to_date,
            "commit": head.as_ref().map(|h| h.commit.to_hex()),
            "branch": s.branch,
            "shallow": s.shallow,
            "commits_indexed": r.commits_indexed,
            "files_parsed": r.files_parsed,
            "files_reparsed": s.files_reparsed,
            "failures": r.failures.iter().map(|(p, why)| serde_json::json!({"path": p, "reason": why})).collect::<Vec<_>>(),
            // File versions seen over the run's commits, not the files of
            // the indexed state (which `status` counts).
            "skipped_scope": "file versions across the commits of this run",
            "skipped": {
                "binary": r.skipped_binary,
                "too_large": r.skipped_too_large,
                "unsupported_language": r.skipped_unsupported,
                "ignored": r.skipped_ignored,
            },
            "excluded_secrets": r.excluded_secrets,
            "journal_events": journal.len()?,
            "semantic": embedded.map(|e| serde_json::json!({
                "enabled": e.off_reason.is_none(),
                "off_reason": e.off_reason,
                "symbols": e.symbols,
                "embedded": e.embedded,
                "reused": e.reused,
            })),
            "seconds": r.finished_ms.saturating_sub(r.started_ms) as f64 / 1000.0,
    }))
}

pub fn report_init(
    paths: &RepoPaths,
    journal: &Journal,
    s: &IndexSummary,
    embedded: Option<&EmbedSummary>,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        return print_json(&init_json(paths, journal, s, embedded)?);
    }
    let head = journal.head()?;
    let r = &s.run;
    let at = head.as_ref().map(|h| h.commit.short()).unwrap_or_default();
    let branch = s.branch.as_deref().unwrap_or("detached HEAD");
    if s.up_to_date {
        crate::out::outln!("sno: already up to date at {at} ({branch})");
        return Ok(());
    }
    crate::out::outln!(
        "sno: indexed {} commit(s) up to {at} ({branch}): {} files parsed in {:.2}s",
        r.commits_indexed,
        r.files_parsed,
        r.finished_ms.saturating_sub(r.started_ms) as f64 / 1000.0
    );
    let skipped =
        r.skipped_binary + r.skipped_too_large + r.skipped_unsupported + r.skipped_ignored;
    if skipped + r.excluded_secrets > 0 {
        // Counted over the run: a file that changed in five commits counts
        // five times. `status` counts the indexed state.
        let scope = if r.commits_indexed > 1 {
            format!(
                " (file versions seen across the {} commits; `sno status` counts HEAD's files)",
                r.commits_indexed
            )
        } else {
            String::new()
        };
        crate::out::outln!(
            "     skipped {} binary, {} over the size limit, {} without a grammar, {} ignored; {} secret file(s) never admitted{scope}",
            r.skipped_binary, r.skipped_too_large, r.skipped_unsupported, r.skipped_ignored, r.excluded_secrets
        );
    }
    if s.shallow {
        crate::out::outln!("     note: shallow clone; history stops where the clone does");
    }
    for (p, why) in &r.failures {
        crate::out::outln!("     failed: {p}: {why}");
    }
    match embedded {
        Some(e) if e.off_reason.is_none() => crate::out::outln!(
            "     semantic index: {} symbols ({} embedded now, {} reused)",
            e.symbols,
            e.embedded,
            e.reused
        ),
        Some(e) => crate::out::outln!(
            "     semantic index off ({}); search uses lexical and structural signals",
            e.off_reason.as_deref().unwrap_or("")
        ),
        None => {}
    }
    crate::out::outln!("     database: {}", paths.db().display());
    Ok(())
}

/// Journals this process has open. redb allows one open per process, and a
/// server runs CLI commands for other processes (see `serve::forward`), so
/// every command takes its journal from here.
static OPEN: std::sync::Mutex<Vec<(std::path::PathBuf, std::sync::Weak<Journal>)>> =
    std::sync::Mutex::new(Vec::new());

fn shared(
    db: &Path,
    open: impl FnOnce(&Path) -> Result<Journal, sno_journal::JournalError>,
) -> anyhow::Result<Arc<Journal>> {
    let mut all = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|(_, j)| j.strong_count() > 0);
    if let Some(j) = all
        .iter()
        .find(|(p, _)| p == db)
        .and_then(|(_, j)| j.upgrade())
    {
        return Ok(j);
    }
    let j = Arc::new(open(db)?);
    all.push((db.to_path_buf(), Arc::downgrade(&j)));
    Ok(j)
}

/// The repository's journal; a missing database is an error.
pub fn open_existing(paths: &RepoPaths) -> anyhow::Result<Arc<Journal>> {
    shared(&paths.db(), Journal::open_existing)
}

/// The repository's journal, created when missing.
pub fn open_or_create(paths: &RepoPaths) -> anyhow::Result<Arc<Journal>> {
    shared(&paths.db(), Journal::open_or_create)
}

fn status(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    let state = journal.load_state()?;
    let head = journal.head()?;
    let last = journal.last_index_run()?;
    let report = status_report(
        paths.root.display().to_string(),
        &state,
        head.as_ref(),
        journal.len()?,
        journal.commits_indexed()?,
        last.as_ref(),
        paths.mask_secrets(),
    );
    let mut report = report;
    report.skipped_commits = skipped_commits(&journal)?;
    if json {
        print_json(&report)?;
    } else {
        print_status(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// The commits of the history that could not be indexed, for reports.
pub fn skipped_commits(
    journal: &sno_journal::Journal,
) -> anyhow::Result<Vec<sno_protocol::status::SkippedCommit>> {
    Ok(journal
        .skipped_commits()?
        .into_iter()
        .map(|(c, reason)| sno_protocol::status::SkippedCommit {
            commit: c.to_hex(),
            reason,
        })
        .collect())
}

fn doctor(path: &Path, repair: bool, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    // A repair replaces the views: not while the daemon's watcher indexes.
    let _no_index_run = repair.then(|| one_writer_at_a_time(true));
    let mut report = verify(&journal);
    let mut repaired = false;
    if repair
        && report
            .problems
            .iter()
            .all(|p| p.code == "SNO-J-VIEWS" || p.code == "SNO-J-HEAD")
        && !report.problems.is_empty()
    {
        repair_views(&journal)?;
        repaired = true;
        report = verify(&journal);
    }
    let skipped: Vec<serde_json::Value> = journal
        .skipped_commits()?
        .into_iter()
        .map(|(c, reason)| serde_json::json!({ "commit": c.to_hex(), "reason": reason }))
        .collect();
    if json {
        print_json(
            &serde_json::json!({ "ok": report.problems.is_empty(), "repaired": repaired, "report": report, "skipped_commits": skipped }),
        )?;
    } else {
        crate::out::outln!("database    {}", paths.db().display());
        crate::out::outln!(
            "journal     {} events, chain intact: {}",
            report.events,
            !report.problems.iter().any(|p| p.code.starts_with("SNO-J-")
                && p.code != "SNO-J-VIEWS"
                && p.code != "SNO-J-HEAD")
        );
        crate::out::outln!(
            "views       {} files, digest {:016x}",
            report.files_in_views,
            report.views_digest
        );
        if repaired {
            crate::out::outln!("repaired    the views were rebuilt from the journal");
        }
        if report.problems.is_empty() {
            crate::out::outln!("ok          the views equal a replay of the journal");
        }
        for c in &skipped {
            crate::out::outln!(
                "skipped     commit {} of the history could not be read ({}); `git fsck --full` lists the missing objects",
                &c["commit"].as_str().unwrap_or("")[..12],
                c["reason"].as_str().unwrap_or("")
            );
        }
        for p in &report.problems {
            crate::out::outln!(
                "problem     [{}] {}\n  repair:   {}",
                p.code,
                p.message,
                p.repair
            );
        }
    }
    if report.problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(DoctorFound(report.problems.len()).into())
    }
}

fn replay(path: &Path, to: &str, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    let commit = resolve_journaled(&paths, &journal, to)?;
    let state = replay_to_commit(&journal, &commit)?;
    let seq = journal.seq_of_commit(&commit)?.unwrap_or(Seq(0));
    let head = sno_journal::IndexedHead {
        commit,
        branch: None,
        seq,
    };
    let report = status_report(
        paths.root.display().to_string(),
        &state,
        Some(&head),
        seq.0 + 1,
        0,
        None,
        paths.mask_secrets(),
    );
    if json {
        print_json(&serde_json::json!({
            "commit": commit.to_hex(),
            "seq": seq.0,
            "files": report.files.total,
            "symbols": report.symbols_total,
            "edges": report.edges_total,
            "views_digest": report.views_digest,
            "languages": report.languages,
        }))?;
    } else {
        crate::out::outln!(
            "replayed to {} (journal seq {}): {} files, {} symbols, {} edges, digest {}",
            commit.short(),
            seq.0,
            report.files.total,
            report.symbols_total,
            report.edges_total,
            report.views_digest
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn rollback(path: &Path, to: &str, json: bool) -> anyhow::Result<ExitCode> {
    use sno_journal::rollback::{rollback_to, Rollback};
    let paths = RepoPaths::discover(path)?;
    let _one = one_writer_at_a_time(!json);
    let _lock = WriterLock::acquire(&paths.sno_dir)?;
    let journal = open_existing(&paths)?;
    let commit = resolve_journaled(&paths, &journal, to)?;
    // A watcher leaves the rollback alone while HEAD stays here.
    let git_head = sno_index::git::GitRepo::open(&paths.root)
        .ok()
        .and_then(|r| r.head().ok());
    let outcome = rollback_to(&journal, &commit, git_head)?;
    let head = journal.head()?;
    if json {
        let (rolled_back, from, seq, files_changed) = match &outcome {
            Rollback::AlreadyThere => (false, None, None, 0),
            Rollback::Done {
                seq,
                from,
                files_changed,
            } => (true, *from, Some(seq.0), *files_changed),
        };
        print_json(&serde_json::json!({
            "rolled_back": rolled_back,
            "from": from.map(|c| c.to_hex()),
            "to": commit.to_hex(),
            "branch": head.as_ref().and_then(|h| h.branch.clone()),
            "seq": seq,
            "files_changed": files_changed,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    match outcome {
        Rollback::AlreadyThere => {
            crate::out::outln!("sno: the index is already at {}", commit.short())
        }
        Rollback::Done {
            seq,
            from,
            files_changed,
        } => crate::out::outln!(
            "sno: rolled back from {} to {}: {files_changed} file(s) changed, journal seq {}; `sno init` indexes forward to HEAD again",
            from.map(|c| c.short()).unwrap_or_else(|| "nothing".into()),
            commit.short(),
            seq.0
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// A commit-ish that the journal knows: full or abbreviated ids of journaled
/// commits first (they may be gone from git), then anything git resolves.
pub fn resolve_journaled(
    paths: &RepoPaths,
    journal: &Journal,
    spec: &str,
) -> anyhow::Result<CommitId> {
    if let Some(id) = CommitId::from_hex(spec) {
        return Ok(id);
    }
    let repo = sno_index::git::GitRepo::open(&paths.root)?;
    match repo.resolve(spec) {
        Ok(id) => Ok(id),
        Err(_) => {
            let lower = spec.to_ascii_lowercase();
            let mut found = None;
            for (_, env) in journal.events(Seq(0), None)? {
                if let Event::CommitIndexed(c) = &env.event {
                    if c.commit.to_hex().starts_with(&lower) {
                        found = Some(c.commit);
                    }
                }
            }
            found.ok_or_else(|| sno_index::git::GitError::UnknownRevision(spec.to_string()).into())
        }
    }
}

fn journal_log(path: &Path, tail: usize, json: bool) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(path)?;
    let journal = open_existing(&paths)?;
    let len = journal.len()?;
    let from = Seq(len.saturating_sub(tail as u64));
    let events = journal.events(from, None)?;
    if from.0 > 0 {
        crate::out::errln!(
            "sno: showing the last {} of {len} events (--tail N for more)",
            len - from.0
        );
    }
    let rows: Vec<serde_json::Value> = events
        .iter()
        .map(|(seq, env)| {
            let mut row = serde_json::json!({ "seq": seq.0, "kind": env.event.kind_name(), "written_ms": env.written_ms });
            match &env.event {
                Event::CommitIndexed(c) => {
                    row["commit"] = c.commit.to_hex().into();
                    row["branch"] = c.branch.clone().into();
                    row["summary"] = c.summary.clone().into();
                    row["file_deltas"] = c.deltas.len().into();
                }
                Event::BranchMoved(b) => {
                    row["branch"] = b.branch.clone().into();
                    row["from"] = b.from.map(|c| c.to_hex()).into();
                    row["to"] = b.to.to_hex().into();
                }
                Event::CheckpointCreated(c) => {
                    row["id"] = c.id.0.clone().into();
                    row["summary"] = c.name.clone().into();
                }
                Event::DecisionLogged(d) => {
                    row["id"] = d.id.0.clone().into();
                    row["summary"] = d.title.clone().into();
                }
                Event::LessonProposed(l) => {
                    row["id"] = l.id.0.clone().into();
                    row["summary"] = l.summary.clone().into();
                }
                Event::LessonAnalysisSubmitted(a) => {
                    row["id"] = a.lesson.0.clone().into();
                    row["summary"] = a.rule.clone().into();
                }
                Event::LessonReviewed(r) => {
                    row["id"] = r.lesson.0.clone().into();
                    row["summary"] = (if r.approved { "approved" } else { "rejected" }).into();
                }
                Event::CommitSkipped(c) => {
                    row["commit"] = c.commit.to_hex().into();
                    row["summary"] = format!("skipped: {}", c.reason).into();
                }
                Event::RolledBack(r) => {
                    row["commit"] = r.to.to_hex().into();
                    row["branch"] = r.branch.clone().into();
                    row["from"] = r.from.map(|c| c.to_hex()).into();
                    row["to"] = r.to.to_hex().into();
                    row["file_deltas"] = r.deltas.len().into();
                    row["summary"] = format!(
                        "rolled back from {}",
                        r.from.map(|c| c.short()).unwrap_or_else(|| "nothing".into())
                    )
                    .into();
                }
            }
            // What people and agents wrote may be long: a line each here.
            if let Some(text) = row["summary"].as_str() {
                let limit = if json {
                    sno_journal::memory::limits::SHORT
                } else {
                    200
                };
                row["summary"] = sno_journal::memory::cut(text, limit).into_owned().into();
            }
            row
        })
        .collect();
    if json {
        print_json(&rows)?;
    } else {
        for r in &rows {
            let commit = r["commit"]
                .as_str()
                .or(r["to"].as_str())
                .map(|c| &c[..12])
                .unwrap_or("");
            crate::out::outln!(
                "{:>6}  {:<14} {}  {} ({} file deltas)",
                r["seq"],
                r["kind"].as_str().unwrap_or(""),
                commit,
                r["summary"].as_str().unwrap_or(""),
                r["file_deltas"].as_u64().unwrap_or(0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
