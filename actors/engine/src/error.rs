//! The engine's one error type: an error contract, made from whatever failed
//! inside (git, the journal, a lookup, a path refused, the provider).

use sno_index::confine::Refused;
use sno_index::git::GitError;
use sno_journal::replay::ReplayError;
use sno_journal::JournalError;
use sno_protocol::error::ErrorCode;
use sno_protocol::ErrorContract;
use sno_query::lookup::LookupError;

/// A failure, as every front end shows it (boxed: a contract is large and
/// most results are not errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub Box<ErrorContract>);

/// What the engine's operations return.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The contract.
    pub fn contract(&self) -> &ErrorContract {
        &self.0
    }

    /// Whether this is the error `code`.
    pub fn is(&self, code: ErrorCode) -> bool {
        self.0.is(code)
    }

    /// An internal failure (a bug or an actor gone), with what was going on.
    pub fn internal(what: impl std::fmt::Display) -> Error {
        ErrorCode::Internal.with(what.to_string()).into()
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl From<ErrorContract> for Error {
    fn from(c: ErrorContract) -> Self {
        Error(Box::new(c))
    }
}

impl From<GitError> for Error {
    fn from(e: GitError) -> Self {
        match &e {
            GitError::NotARepository(p) => {
                ErrorCode::NotARepo.with(format!("{} is not inside a git repository", p.display()))
            }
            GitError::Bare(p) => {
                ErrorCode::BareRepo.with(format!("{} is a bare repository", p.display()))
            }
            GitError::Empty => ErrorCode::EmptyRepo
                .with("the repository has no commits yet, so there is nothing to index"),
            GitError::UnknownRevision(r) => ErrorCode::UnknownRev
                .with(format!("`{r}` does not name a commit of this repository")),
            GitError::MissingObject(id) => ErrorCode::Git.with(format!(
                "reading git failed: an object with id {id} could not be found"
            )),
            GitError::Git(m) => ErrorCode::Git.with(format!("reading git failed: {m}")),
        }
        .into()
    }
}

impl From<JournalError> for Error {
    fn from(e: JournalError) -> Self {
        match e {
            JournalError::Locked { pid } if pid == "unknown" => {
                ErrorCode::Locked.with("the sno database is open in another sno process")
            }
            JournalError::Locked { pid } => ErrorCode::Locked
                .with(format!("the sno database is locked by pid {pid}"))
                .hinted(format!(
                    "Another sno process (pid {pid}) holds this repository's database (an index run, or a command reading it); wait for it to finish and retry."
                )),
            JournalError::Corrupt { path, detail } => ErrorCode::DbCorrupt
                .with(format!("{path} is corrupt or not a sno database ({detail})")),
            JournalError::Missing(path) => ErrorCode::NotIndexed
                .with(format!("nothing is indexed yet (no database at {path})")),
            JournalError::UnknownMemory { id, known } => {
                let near = nearest(&id, known, 3);
                ErrorCode::UnknownMemory
                    .with(format!("no lesson, checkpoint or decision `{id}`"))
                    .suggesting(near)
            }
            JournalError::TooLarge { field, size, limit } => ErrorCode::TooLarge
                .with(format!("`{field}` is too large ({size}; the limit is {limit})"))
                .hinted(format!(
                    "Shorten `{field}` to at most {limit} (bytes, or entries for `files`) and call again; keep details in the files themselves or a checkpoint's summary. Nothing was written."
                )),
            other => ErrorCode::Journal.with(other.to_string()),
        }
        .into()
    }
}

impl From<ReplayError> for Error {
    fn from(e: ReplayError) -> Self {
        match e {
            ReplayError::UnknownCommit(c) => ErrorCode::NotJournaled
                .with(format!(
                    "commit {c} was never indexed, so there is no state to replay to"
                ))
                .into(),
            ReplayError::ViewsDrifted => ErrorCode::Views
                .with("the index's views disagree with its journal, so nothing was rolled back")
                .into(),
            ReplayError::Journal(j) => j.into(),
        }
    }
}

impl From<Refused> for Error {
    fn from(e: Refused) -> Self {
        match &e {
            Refused::Unreadable { path, reason } => ErrorCode::UnknownFile
                .with(format!("cannot read {path} from the work tree: {reason}"))
                .hinted("Pass a path, relative to the repository root, of a file that exists."),
            Refused::Outside(_) => ErrorCode::PathOutside.with(e.to_string()),
            Refused::GitDir(_) | Refused::StateDir(_) | Refused::Secret(_) => {
                ErrorCode::PathRefused.with(e.to_string())
            }
        }
        .into()
    }
}

impl From<LookupError> for Error {
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::NotFound {
                query,
                did_you_mean,
            } => {
                let c = ErrorCode::UnknownSymbol
                    .with(format!("no symbol named `{query}` in the indexed state"));
                let c = match did_you_mean.first() {
                    Some(first) => c.hinted(format!(
                        "Retry with one of the names in did_you_mean, e.g. `{first}`."
                    )),
                    None => c,
                };
                c.suggesting(did_you_mean)
            }
            LookupError::Ambiguous { query, candidates } => ErrorCode::AmbiguousSymbol
                .with(format!("`{query}` names {} symbols", candidates.len()))
                .suggesting(candidates),
            LookupError::NoSymbolAt {
                path,
                line,
                lines,
                nearest,
            } => {
                // A file sno did not parse (a doc, a config file) has no
                // line count.
                let length = if lines > 0 {
                    format!(" ({lines} lines)")
                } else {
                    String::new()
                };
                let c = ErrorCode::UnknownSymbol.with(format!(
                    "no definition spans line {line} of `{path}`{length}"
                ));
                let c = match nearest.first() {
                    Some(first) => c.hinted(format!(
                        "Pass a line inside a definition: the nearest are in did_you_mean, e.g. `{first}`; `sno outline {path}` lists them all."
                    )),
                    None => c.hinted(format!(
                        "`{path}` has no definitions; read the file itself."
                    )),
                };
                c.suggesting(nearest)
            }
        }
        .into()
    }
}

impl From<sno_agent::AgentError> for Error {
    fn from(e: sno_agent::AgentError) -> Self {
        use sno_agent::AgentError;
        let code = match &e {
            AgentError::NotConfigured => ErrorCode::AgentOff,
            AgentError::UnknownProtocol(_) => {
                return ErrorCode::Config
                    .with(e.to_string())
                    .hinted("Set `[agent] protocol` to openai (the default: OpenAI, Ollama, vLLM, LM Studio, ...) or anthropic.")
                    .into()
            }
            AgentError::InsecureKey(_) => ErrorCode::AgentInsecure,
            AgentError::MissingKey(_) => ErrorCode::AgentKey,
            AgentError::Unreachable { .. } => ErrorCode::AgentUnreachable,
            AgentError::Http { .. } => ErrorCode::AgentHttp,
            AgentError::BadReply(_) => ErrorCode::AgentReply,
        };
        code.with(e.to_string()).into()
    }
}

impl From<crate::config::ConfigError> for Error {
    fn from(e: crate::config::ConfigError) -> Self {
        ErrorCode::Config
            .with(format!("invalid configuration in {e}"))
            .into()
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::internal(format!("i/o: {e}"))
    }
}

/// The least `max_tokens` a search answer can keep: its trust header alone
/// takes about forty tokens in markdown and 120 in JSON (below it, answers
/// came back over budget).
pub const MIN_SEARCH_TOKENS: usize = 150;

/// The least `max_tokens` a repository map can keep: its JSON header alone
/// takes 53 (50 was allowed, and answered over budget).
pub const MIN_MAP_TOKENS: usize = 60;

/// `value` of argument `field`, refused when it is empty (or only blanks):
/// an empty question, name or title has no answer worth giving.
pub fn required<'v>(field: &str, value: &'v str) -> Result<&'v str> {
    if value.trim().is_empty() {
        return Err(Error::from(
            ErrorCode::BadArgs
                .with(format!("`{field}` is empty"))
                .hinted(format!("Pass a non-empty `{field}` and call again.")),
        ));
    }
    Ok(value)
}

/// A `limit` of at least one: asking for no results is a mistake, not a
/// question (it used to be raised to one silently).
pub fn some(limit: usize) -> Result<usize> {
    if limit == 0 {
        return Err(Error::from(ErrorCode::BadArgs.with("`limit` is 0").hinted(
            "Pass a limit of at least 1, or leave it out for the default.",
        )));
    }
    Ok(limit)
}

/// A `max_tokens` an answer can keep, refused below `least` rather than
/// raised: an answer longer than asked for breaks the budget.
pub fn budget(max_tokens: usize, least: usize) -> Result<usize> {
    if max_tokens < least {
        return Err(Error::from(
            ErrorCode::BadArgs
                .with(format!(
                    "`max_tokens` is {max_tokens}; this answer needs at least {least}"
                ))
                .hinted(format!("Pass max_tokens of at least {least}.")),
        ));
    }
    Ok(max_tokens)
}

/// The candidates closest in spelling to `word` (Jaro-Winkler over 0.5).
pub fn nearest(word: &str, candidates: impl IntoIterator<Item = String>, n: usize) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = candidates
        .into_iter()
        .map(|c| (sno_query::lookup::similarity(word, &c), c))
        .filter(|(s, _)| *s > 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}
