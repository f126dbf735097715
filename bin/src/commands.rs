//! From a command line to a typed request, run by an engine of this process
//! or by the daemon that holds the database, and rendered.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sno_engine::{Engine, Open, RepoPaths};
use sno_protocol::context::{AnswerFormat, Grouping};
use sno_protocol::query::RefsKind;
use sno_protocol::rpc::{Answer, Command as Request};
use sno_protocol::{ErrorCode, ErrorContract};

use crate::cli::{Command, History, InitArgs, JournalCommand, LessonsCommand, McpCommand};
use crate::out::outln;
use sno_serve::client::{forward, Forwarded};

/// Runs a command; the exit code (errors are rendered here).
pub async fn run(cmd: Command) -> ExitCode {
    let json = cmd.wants_json();
    let result = match cmd {
        Command::Serve { path } => match index_first(&path).await {
            Ok(()) => sno_serve::daemon::serve(path).await,
            Err(e) => Err(e),
        },
        Command::Daemon { path } => sno_serve::daemon::run(path).await,
        Command::Watch { path, json } => crate::watch::watch(&path, json).await,
        Command::Mcp {
            command:
                McpCommand::Config {
                    client,
                    path,
                    write,
                    file,
                },
        } => crate::mcp_config::run(client, &path, write, file),
        Command::Lessons {
            command: LessonsCommand::Review { path },
        } => review_interactively(&path).await,
        other => {
            let (path, request, model) = match request_of(other) {
                Ok(r) => r,
                Err(e) => return crate::render::error(&e, json),
            };
            return match request_answer(&path, request, model.as_deref()).await {
                Ok(a) => crate::render::answer(&a, json),
                Err(e) => crate::render::error(&e, json),
            };
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => crate::render::error(&e, json),
    }
}

/// The caller's environment a request needs (the API key `lessons draft`
/// sends to the provider, which a daemon must not take from its own).
fn caller_env(paths: &RepoPaths, request: &Request) -> Vec<(String, String)> {
    if !matches!(request, Request::DraftLessons { .. }) {
        return Vec::new();
    }
    sno_engine::config::IndexConfig::load(&paths.config())
        .map(|c| c.agent.api_key_env)
        .ok()
        .flatten()
        .into_iter()
        .filter_map(|var| std::env::var(&var).ok().map(|v| (var, v)))
        .collect()
}

/// Indexes a repository `sno serve` starts on as `sno init` would, when
/// nothing is: a client has no one at hand to run `sno init`, and saw the
/// error on stderr as a closed connection. stdout stays the protocol's.
async fn index_first(path: &Path) -> Result<(), ErrorContract> {
    if RepoPaths::discover(path).map_err(|e| *e.0)?.db().exists() {
        return Ok(());
    }
    eprintln!("sno: nothing is indexed here yet; indexing it first (as `sno init`)");
    let (rev, history, max_file_size, workers) = (None, None, None, None);
    let request = Request::Index {
        rev,
        history,
        max_file_size,
        workers,
    };
    request_answer(path, request, None).await.map(|_| ())
}

/// Runs a request in this process, or in the daemon that holds the
/// database.
pub async fn request_answer(
    path: &Path,
    request: Request,
    model: Option<&str>,
) -> Result<Answer, ErrorContract> {
    let how = if matches!(request, Request::Index { .. }) {
        Open::OrCreate
    } else {
        Open::Existing
    };
    // An index run's progress, from this process or the daemon's, is
    // rendered on stderr while the command runs.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(crate::progress::render(rx));
    let answer = loop {
        match Engine::open(path, how, model) {
            Ok(mut engine) => {
                engine.answer_only(&request);
                let env = caller_env(engine.paths(), &request);
                let answer = engine
                    .execute_with_progress(request.clone(), env, Some(tx.clone()))
                    .await;
                engine.stop().await;
                break answer.map_err(|e| *e.0);
            }
            Err(e) if e.is(ErrorCode::Locked) => {
                let paths = RepoPaths::discover(path).map_err(|e| *e.0)?;
                let env = caller_env(&paths, &request);
                let forwarded = tokio::task::block_in_place(|| forward(&paths, &request, env, &tx));
                match forwarded {
                    Forwarded::Answered(a) => break a,
                    Forwarded::Free => continue,
                    Forwarded::Held => break Err(*e.0),
                }
            }
            Err(e) => break Err(*e.0),
        }
    };
    drop(tx);
    let _ = renderer.await;
    answer
}

/// A symbol named by its place, `path:line`, with a path relative to the
/// current directory or `-C`'s, or absolute (as `outline` takes files), as
/// the repository-relative
/// place the engine resolves; any other name, or a path that is not a file
/// here, as given (a repository-relative path works from anywhere).
fn place_from_here(name: String, repo: &Path) -> String {
    let Some((file, line)) = name.rsplit_once(':') else {
        return name;
    };
    if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) || file.ends_with(':') {
        return name;
    }
    let Some(absolute) = there_from_here(file, repo, Path::is_file) else {
        return name;
    };
    let Ok(paths) = RepoPaths::discover(repo) else {
        return name;
    };
    match Path::new(&absolute).strip_prefix(&paths.root) {
        Ok(rel) => format!("{}:{line}", rel.display()),
        Err(_) => name,
    }
}

/// A scope named on the command line: a path that is there from the
/// directory the command runs in (as files are named), absolute for the
/// engine to make repository-relative; anything else, a prefix of
/// repository-relative paths, as given.
fn scope_from_here(scope: String, repo: &Path) -> String {
    let bare = scope.trim_end_matches(['/', '\\']);
    if bare.is_empty() || Path::new(&scope).is_absolute() {
        return scope;
    }
    match there_from_here(bare, repo, Path::exists) {
        Some(absolute) if bare.len() < scope.len() => format!("{absolute}/"),
        Some(absolute) => absolute,
        None => scope,
    }
}

/// `given`'s absolute path ([`from_here`]) when, named from the directory
/// the command runs in, it is there as `is` asks (a file, any path).
fn there_from_here(given: &str, repo: &Path, is: fn(&Path) -> bool) -> Option<String> {
    let here = std::env::current_dir().ok()?.join(repo).join(given);
    is(&here).then(|| from_here(given, repo))
}

/// A file named on the command line (relative to the directory the
/// command runs in: the current one, or `-C`'s, as git takes `-C`; or
/// absolute), as an absolute path the engine confines to the repository.
fn from_here(file: &str, repo: &Path) -> String {
    let p = Path::new(file);
    let absolute = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("."))
            .join(repo)
            .join(p)
    };
    // The current directory may be reached through a link: name the file
    // from its real directory, as the engine sees the root.
    let absolute = match (
        absolute.parent().map(Path::canonicalize),
        absolute.file_name(),
    ) {
        (Some(Ok(dir)), Some(name)) => dir.join(name),
        _ => absolute,
    };
    absolute.display().to_string()
}

/// The repository, the typed request and the model flag of a command.
fn request_of(cmd: Command) -> Result<(PathBuf, Request, Option<String>), ErrorContract> {
    Ok(match cmd {
        Command::Init(InitArgs {
            path,
            history,
            rev,
            max_file_size,
            workers,
            model,
            ..
        }) => (
            path,
            Request::Index {
                rev,
                history: history.map(|h| match h {
                    History::All => None,
                    History::Commits(n) => Some(n),
                }),
                max_file_size,
                workers,
            },
            model,
        ),
        Command::Status { path, .. } => (path, Request::Status, None),
        Command::Doctor { path, repair, .. } => (path, Request::Doctor { repair }, None),
        Command::Journal {
            command: JournalCommand::Verify { path, .. },
        } => (path, Request::Doctor { repair: false }, None),
        Command::Replay { to, path, .. } => (path, Request::Replay { to }, None),
        Command::Rollback { to, path, .. } => (path, Request::Rollback { to }, None),
        Command::Journal {
            command: JournalCommand::Log { path, tail, json },
        } => (
            path,
            Request::JournalLog {
                tail,
                cut_to: if json { sno_engine::limits::SHORT } else { 200 },
            },
            None,
        ),
        Command::Audit { path, tail, .. } => (path, Request::Audit { tail }, None),
        Command::Search {
            query,
            max_tokens,
            limit,
            scope,
            lexical_only,
            files,
            model,
            q,
        } => (
            q.repo.clone(),
            Request::Search {
                query,
                max_tokens,
                limit,
                scope: scope.map(|s| scope_from_here(s, &q.repo)),
                lexical_only,
                at: q.at,
                // --json prints the structured form, within the budget too.
                format: if q.json {
                    AnswerFormat::Json
                } else {
                    AnswerFormat::Markdown
                },
                group: if files {
                    Grouping::Files
                } else {
                    Grouping::Symbols
                },
            },
            model,
        ),
        Command::Map {
            max_tokens,
            per_file,
            files,
            q,
        } => (
            q.repo,
            Request::Map {
                max_tokens,
                per_file,
                files,
                at: q.at,
                // --json prints the structured form, within the budget too.
                format: if q.json {
                    AnswerFormat::Json
                } else {
                    AnswerFormat::Markdown
                },
            },
            None,
        ),
        Command::Symbol { name, q, limit } => (
            q.repo,
            Request::Symbols {
                name,
                limit,
                at: q.at,
            },
            None,
        ),
        Command::Outline { file, q } => {
            let file = from_here(&file, &q.repo);
            (q.repo, Request::Outline { file, at: q.at }, None)
        }
        Command::Show { name, q } => {
            let name = place_from_here(name, &q.repo);
            (q.repo, Request::Show { name, at: q.at }, None)
        }
        Command::Refs {
            name,
            callers,
            callees,
            depth,
            q,
        } => (
            q.repo.clone(),
            Request::Refs {
                name: place_from_here(name, &q.repo),
                kind: if callers {
                    RefsKind::Callers
                } else if callees {
                    RefsKind::Callees
                } else {
                    RefsKind::References
                },
                depth,
                at: q.at,
            },
            None,
        ),
        Command::Grep { pattern, limit, q } => (
            q.repo,
            Request::Grep {
                pattern,
                limit,
                at: q.at,
            },
            None,
        ),
        Command::Changes { range, q } => {
            let (from, to) = range
                .split_once("..")
                .ok_or_else(|| ErrorCode::BadRange.with(format!("`{range}` is not a range")))?;
            (
                q.repo,
                Request::Changes {
                    from: from.to_string(),
                    to: (!to.is_empty()).then(|| to.to_string()),
                },
                None,
            )
        }
        Command::Lessons { command } => match command {
            LessonsCommand::List { path, .. } => (path, Request::Lessons, None),
            LessonsCommand::Approve { id, path, note, .. } => (
                path,
                Request::ReviewLesson {
                    id,
                    approved: true,
                    reviewer: reviewer(),
                    note,
                },
                None,
            ),
            LessonsCommand::Reject { id, path, note, .. } => (
                path,
                Request::ReviewLesson {
                    id,
                    approved: false,
                    reviewer: reviewer(),
                    note,
                },
                None,
            ),
            LessonsCommand::Draft { id, path, .. } => (path, Request::DraftLessons { id }, None),
            LessonsCommand::Review { .. } => unreachable!("handled before"),
        },
        Command::Serve { .. }
        | Command::Daemon { .. }
        | Command::Watch { .. }
        | Command::Mcp { .. } => unreachable!("handled before"),
    })
}

/// Who reviews, for the journal.
fn reviewer() -> String {
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}

/// `sno lessons review`: each lesson waiting for a verdict, shown, with the
/// verdict read from stdin. Each read and verdict is a typed request of its
/// own, run here or by the daemon: a command the daemon ran could not read
/// this terminal.
async fn review_interactively(path: &Path) -> Result<ExitCode, ErrorContract> {
    use std::io::{BufRead, IsTerminal, Write};
    let Answer::Lessons(all) = request_answer(path, Request::Lessons, None).await? else {
        return Err(ErrorCode::Internal.with("unexpected answer to a lessons list"));
    };
    let waiting: Vec<_> = all
        .lessons
        .iter()
        .filter(|l| matches!(l.status.as_str(), "proposed" | "analysed"))
        .collect();
    if waiting.is_empty() {
        outln!("sno: no lesson waits for a verdict");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("sno: {} lesson(s) wait for a verdict", waiting.len());
    let interactive = std::io::stdin().is_terminal();
    let mut input = std::io::stdin().lock();
    let (mut approved, mut rejected, mut skipped) = (0, 0, 0);
    'lessons: for lesson in waiting {
        show_lesson(lesson);
        let analysed = !lesson.analyses.is_empty();
        loop {
            crate::out::out!(
                "[a]pprove, [r]eject, [s]kip or [q]uit (a note may follow the letter): "
            );
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            if input
                .read_line(&mut line)
                .map_err(|e| ErrorCode::Internal.with(e.to_string()))?
                == 0
            {
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
                "a" | "approve" => true,
                "r" | "reject" => false,
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
            let request = Request::ReviewLesson {
                id: lesson.id.clone(),
                approved: verdict,
                reviewer: reviewer(),
                note: note.to_string(),
            };
            if let Err(e) = request_answer(path, request, None).await {
                return Ok(crate::render::error(&e, false));
            }
            if verdict {
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

fn show_lesson(l: &sno_protocol::memory::Lesson) {
    let short = |c: &str| c.chars().take(12).collect::<String>();
    outln!();
    outln!("lesson {}  ({})", l.id, l.status);
    outln!(
        "  revert    {}  {}{}",
        l.bound.commit.as_deref().map(short).unwrap_or_default(),
        l.summary,
        l.bound
            .branch
            .as_deref()
            .map(|b| format!("  on {b}"))
            .unwrap_or_default()
    );
    if let Some(r) = &l.reverted {
        outln!("  reverted  {}", short(r));
    }
    outln!("  files     {}", l.files.join(", "));
    match l.analyses.last() {
        Some(a) => {
            outln!("  analysis  {}", a.analysis);
            outln!("  rule      {}", a.rule);
        }
        None => outln!("  analysis  none yet (an agent submits one with submit_lesson_analysis)"),
    }
}
