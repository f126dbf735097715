//! From internal errors to the error contract users and agents see.

use sno_engine::config::ConfigError;
use sno_engine::indexer::IndexError;
use sno_index::git::GitError;
use sno_journal::replay::ReplayError;
use sno_journal::JournalError;
use sno_protocol::{ErrorContract, Fixability};

/// A path given on the command line does not exist.
#[derive(Debug, thiserror::Error)]
#[error("{0} does not exist")]
pub struct PathMissing(pub String);

/// `sno doctor` found problems.
#[derive(Debug, thiserror::Error)]
#[error("{0} problem(s) found")]
pub struct DoctorFound(pub usize);

fn git_contract(e: &GitError) -> ErrorContract {
    match e {
        GitError::NotARepository(p) => ErrorContract::new(
            "SNO-NOT-A-REPO",
            format!("{} is not inside a git repository", p.display()),
            "Pass the path of a git repository (or a directory inside one); `git init` makes one.",
            Fixability::Trivial,
        ),
        GitError::Bare(p) => ErrorContract::new(
            "SNO-BARE-REPO",
            format!("{} is a bare repository", p.display()),
            "Run sno on a clone with a work tree; sno keeps its index in the work tree's .sno/ folder.",
            Fixability::Easy,
        ),
        GitError::Empty => ErrorContract::new(
            "SNO-EMPTY-REPO",
            "the repository has no commits yet, so there is nothing to index",
            "Commit something first (sno indexes commits, not the work tree), then run `sno init` again.",
            Fixability::Trivial,
        ),
        GitError::UnknownRevision(r) => ErrorContract::new(
            "SNO-UNKNOWN-REV",
            format!("`{r}` does not name a commit of this repository"),
            "Use a branch, tag or commit id that `git rev-parse` accepts.",
            Fixability::Trivial,
        ),
        GitError::Git(m) => ErrorContract::new(
            "SNO-GIT",
            format!("reading git failed: {m}"),
            "The repository's objects are damaged or missing. Commits of the history that cannot be read are skipped on their own; this one is the commit to index (HEAD or --rev), so it cannot be. `git fsck --full` lists what is missing; fetch or restore it (e.g. `git fetch`), or index another commit with `sno init --rev <commit>`.",
            Fixability::Medium,
        ),
    }
}

fn journal_contract(e: &JournalError) -> ErrorContract {
    match e {
        JournalError::Locked { pid } if pid == "unknown" => ErrorContract::new(
            "SNO-LOCKED",
            "the sno database is open in another sno process",
            "Another sno process (a server's daemon, or a command such as `sno status`) has this repository's database open; wait for it to finish and retry.",
            Fixability::Easy,
        ),
        JournalError::Locked { pid } => ErrorContract::new(
            "SNO-LOCKED",
            format!("the sno database is locked by pid {pid}"),
            format!("Another sno process (pid {pid}) is writing this repository's index; wait for it to finish and retry."),
            Fixability::Easy,
        ),
        JournalError::Corrupt { path, detail } => ErrorContract::new(
            "SNO-DB-CORRUPT",
            format!("{path} is corrupt or not a sno database ({detail})"),
            "Nothing was changed. Move the file aside (keep it for inspection) and run `sno init` to index again.",
            Fixability::Medium,
        ),
        JournalError::Missing(path) => ErrorContract::new(
            "SNO-NOT-INDEXED",
            format!("nothing is indexed yet (no database at {path})"),
            "Run `sno init PATH` to index the repository first.",
            Fixability::Trivial,
        ),
        JournalError::UnknownMemory { id, known } => {
            let mut c = ErrorContract::new(
                "SNO-UNKNOWN-MEMORY",
                format!("no lesson, checkpoint or decision `{id}`"),
                "Use an id from get_pending_memory (lessons), create_checkpoint or list_decisions; did_you_mean lists near ids.",
                Fixability::Trivial,
            );
            let mut near: Vec<(f64, &String)> = known
                .iter()
                .map(|k| (sno_query::lookup::similarity(id, k), k))
                .filter(|(s, _)| *s > 0.5)
                .collect();
            near.sort_by(|a, b| b.0.total_cmp(&a.0));
            c.did_you_mean = near.into_iter().take(3).map(|(_, k)| k.clone()).collect();
            c
        }
        JournalError::TooLarge { field, size, limit } => ErrorContract::new(
            "SNO-TOO-LARGE",
            format!("`{field}` is too large ({size}; the limit is {limit})"),
            format!("Shorten `{field}` to at most {limit} (bytes, or entries for `files`) and call again; keep details in the files themselves or a checkpoint's summary. Nothing was written."),
            Fixability::Trivial,
        ),
        other => ErrorContract::new(
            "SNO-JOURNAL",
            other.to_string(),
            "Run `sno doctor` to check the database; it says how to repair what it finds.",
            Fixability::Medium,
        ),
    }
}

/// The contract for a path the confinement rule refuses.
pub fn refused_contract(e: &sno_index::confine::Refused) -> ErrorContract {
    use sno_index::confine::Refused;
    match e {
        Refused::Unreadable { path, reason } => ErrorContract::new(
            "SNO-UNKNOWN-FILE",
            format!("cannot read {path} from the work tree: {reason}"),
            "Pass a path, relative to the repository root, of a file that exists.",
            Fixability::Trivial,
        ),
        Refused::Outside(_) => ErrorContract::new(
            "SNO-PATH-OUTSIDE",
            e.to_string(),
            "Pass a path inside the repository, relative to its root; sno never follows a link out of the work tree.",
            Fixability::Trivial,
        ),
        Refused::GitDir(_) | Refused::Secret(_) => ErrorContract::new(
            "SNO-PATH-REFUSED",
            e.to_string(),
            "sno never reads git's own directory or secret files (.env, keys, credentials), not even through a link; pass a source file of the repository.",
            Fixability::Trivial,
        ),
    }
}

/// The contract for any error that reaches the command line.
pub fn contract_of(err: &anyhow::Error) -> ErrorContract {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<sno_index::confine::Refused>() {
            return refused_contract(e);
        }
        if let Some(e) = cause.downcast_ref::<ErrorContract>() {
            return e.clone();
        }
        if let Some(e) = cause.downcast_ref::<GitError>() {
            return git_contract(e);
        }
        if let Some(e) = cause.downcast_ref::<JournalError>() {
            return journal_contract(e);
        }
        if let Some(e) = cause.downcast_ref::<IndexError>() {
            return match e {
                IndexError::Git(g) => git_contract(g),
                IndexError::Journal(j) => journal_contract(j),
                IndexError::Config(m) => ErrorContract::new(
                    "SNO-CONFIG",
                    format!("configuration: {m}"),
                    "Fix the pattern or value in .sno/config.toml.",
                    Fixability::Easy,
                ),
                IndexError::Actor(m) => ErrorContract::new(
                    "SNO-INTERNAL",
                    format!("actor system failure: {m}"),
                    "Run the command again; nothing partial was stored. Report it if it repeats.",
                    Fixability::Hard,
                ),
            };
        }
        if let Some(e) = cause.downcast_ref::<ReplayError>() {
            return match e {
                ReplayError::UnknownCommit(c) => ErrorContract::new(
                    "SNO-NOT-JOURNALED",
                    format!("commit {c} was never indexed, so there is no state to replay to"),
                    "Pick a commit from `sno journal log`, or index more history with `sno init --history N`.",
                    Fixability::Easy,
                ),
                ReplayError::ViewsDrifted => ErrorContract::new(
                    "SNO-J-VIEWS",
                    "the index's views disagree with its journal, so nothing was rolled back",
                    "Run `sno doctor --repair` (it rebuilds the views from the journal), then roll back again.",
                    Fixability::Easy,
                ),
                ReplayError::Journal(j) => journal_contract(j),
            };
        }
        if let Some(e) = cause.downcast_ref::<sno_agent::AgentError>() {
            return agent_contract(e);
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            return ErrorContract::new(
                "SNO-CONFIG",
                format!("invalid configuration in {}", e),
                "Fix or remove the offending key in .sno/config.toml; `sno init --help` lists the settings.",
                Fixability::Easy,
            );
        }
        if let Some(e) = cause.downcast_ref::<PathMissing>() {
            return ErrorContract::new(
                "SNO-NO-PATH",
                e.to_string(),
                "Pass an existing directory.",
                Fixability::Trivial,
            );
        }
        if let Some(e) = cause.downcast_ref::<DoctorFound>() {
            return ErrorContract::new(
                "SNO-DOCTOR",
                format!("sno doctor: {e}"),
                "Follow the repair line printed for each problem.",
                Fixability::Medium,
            );
        }
    }
    ErrorContract::new(
        "SNO-INTERNAL",
        format!("{err:#}"),
        "This is unexpected; run with -vv for details and report it.",
        Fixability::Hard,
    )
}

pub fn agent_contract(e: &sno_agent::AgentError) -> ErrorContract {
    use sno_agent::AgentError;
    let (code, hint, fix) = match e {
        AgentError::NotConfigured => (
            "SNO-AGENT-OFF",
            "Add an [agent] table to .sno/config.toml: endpoint (an OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 for Ollama) and model; api_key_env names the variable holding the key. Lessons work without it: agents can submit analyses over MCP.",
            Fixability::Easy,
        ),
        AgentError::UnknownProtocol(_) => (
            "SNO-CONFIG",
            "Set `[agent] protocol` to openai (the default: OpenAI, Ollama, vLLM, LM Studio, ...) or anthropic.",
            Fixability::Trivial,
        ),
        AgentError::InsecureKey(_) => (
            "SNO-AGENT-INSECURE",
            "Use an https endpoint, or a provider on this machine (localhost); nothing was sent.",
            Fixability::Easy,
        ),
        AgentError::MissingKey(_) => (
            "SNO-AGENT-KEY",
            "Export the variable `[agent] api_key_env` names, or remove api_key_env for a provider that needs no key.",
            Fixability::Easy,
        ),
        AgentError::Unreachable { .. } => (
            "SNO-AGENT-UNREACHABLE",
            "Check that the provider runs and `[agent] endpoint` is right; nothing was written.",
            Fixability::Medium,
        ),
        AgentError::Http { .. } => (
            "SNO-AGENT-HTTP",
            "The provider refused the request (model name, key, quota?); nothing was written.",
            Fixability::Medium,
        ),
        AgentError::BadReply(_) => (
            "SNO-AGENT-REPLY",
            "The model did not answer with {\"analysis\", \"rule\"}; try again or another model. Nothing was written.",
            Fixability::Medium,
        ),
    };
    ErrorContract::new(code, e.to_string(), hint, fix)
}
