//! The error contract: every failure an agent or user sees has a stable code,
//! a message, a hint phrased as an instruction, and how hard it is to fix.
//!
//! The codes, their default hints and their fixability are one table
//! ([`ErrorCode`]); a failure adds its message (and, where the hint needs
//! values, a hint of its own).

use serde::{Deserialize, Serialize};

/// How hard an error is to fix for whoever reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fixability {
    Trivial,
    Easy,
    Medium,
    Hard,
}

macro_rules! codes {
    ($($(#[$doc:meta])* $v:ident = $code:literal, $fix:ident, $hint:literal;)*) => {
        /// Every error code sno answers with.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $v,)*
        }

        impl ErrorCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$v,)*];

            /// The stable, greppable form: `SNO-NOT-A-REPO`.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$v => $code,)* }
            }

            /// How hard it is to fix.
            pub fn fixability(self) -> Fixability {
                match self { $(ErrorCode::$v => Fixability::$fix,)* }
            }

            /// What to do next, when the failure adds nothing to it.
            pub fn hint(self) -> &'static str {
                match self { $(ErrorCode::$v => $hint,)* }
            }

            /// The code of a stable string, if sno has it.
            pub fn parse(code: &str) -> Option<ErrorCode> {
                match code { $($code => Some(ErrorCode::$v),)* _ => None }
            }
        }
    };
}

codes! {
    /// The path is not inside a git repository.
    NotARepo = "SNO-NOT-A-REPO", Trivial,
        "Pass the path of a git repository (or a directory inside one); `git init` makes one.";
    BareRepo = "SNO-BARE-REPO", Easy,
        "Run sno on a clone with a work tree; sno keeps its index in the work tree's .sno/ folder.";
    EmptyRepo = "SNO-EMPTY-REPO", Trivial,
        "Commit something first (sno indexes commits, not the work tree), then run `sno init` again.";
    UnknownRev = "SNO-UNKNOWN-REV", Trivial,
        "Use a branch, tag or commit id that `git rev-parse` accepts.";
    /// Git objects could not be read.
    Git = "SNO-GIT", Medium,
        "The repository's objects are damaged or missing. Commits of the history that cannot be read are skipped on their own; this one is the commit to index (HEAD or --rev), so it cannot be. `git fsck --full` lists what is missing; fetch or restore it (e.g. `git fetch`), or index another commit with `sno init --rev <commit>`.";
    Locked = "SNO-LOCKED", Easy,
        "Another sno process (a server's daemon, or a command such as `sno status`) has this repository's database open; wait for it to finish and retry.";
    DbCorrupt = "SNO-DB-CORRUPT", Medium,
        "Nothing was changed. Move the file aside (keep it for inspection) and run `sno init` to index again.";
    NotIndexed = "SNO-NOT-INDEXED", Trivial,
        "Run `sno init` in the repository first (agents: ask the user to).";
    /// A commit the journal never indexed.
    NotJournaled = "SNO-NOT-JOURNALED", Easy,
        "Pick a commit from `sno journal log`. sno journals the commits HEAD reaches along its first parents (a branch never checked out is not; check it out and run `sno init`). The journal grows forward from its first commit: to reach commits older than that, move `.sno` aside (its lessons and decisions stay in that copy) and run `sno init --history N` again.";
    /// The views disagree with the journal.
    Views = "SNO-J-VIEWS", Easy,
        "Run `sno doctor --repair` (it rebuilds the views from the journal), then try again.";
    Journal = "SNO-JOURNAL", Medium,
        "Run `sno doctor` to check the database; it says how to repair what it finds.";
    UnknownMemory = "SNO-UNKNOWN-MEMORY", Trivial,
        "Use an id from get_pending_memory (lessons), create_checkpoint or list_decisions; did_you_mean lists near ids.";
    TooLarge = "SNO-TOO-LARGE", Trivial,
        "Shorten the field to its limit and call again; keep details in the files themselves or a checkpoint's summary. Nothing was written.";
    LessonReviewed = "SNO-LESSON-REVIEWED", Trivial,
        "A human already decided on this lesson; draft only lessons waiting for review (`sno lessons list`).";
    LessonUnanalysed = "SNO-LESSON-UNANALYSED", Easy,
        "Approve a lesson once it has an analysis with a rule: `sno lessons draft ID`, or an agent's submit_lesson_analysis.";
    PathOutside = "SNO-PATH-OUTSIDE", Trivial,
        "Pass a path inside the repository, relative to its root; sno never follows a link out of the work tree.";
    UnsafeState = "SNO-UNSAFE-STATE", Easy,
        "sno keeps its own state in .sno/ and never uses one the repository ships or one that links elsewhere: remove it from the repository (`git rm -r --cached .sno`, commit), delete the directory or the links, and run `sno init` again. Nothing was read or written.";
    PathRefused = "SNO-PATH-REFUSED", Trivial,
        "sno never reads git's own directory, its own .sno/, files git ignores or secret files (.env, keys, credentials), not even through a link; pass a source file of the repository.";
    NoPath = "SNO-NO-PATH", Trivial,
        "Pass an existing directory.";
    UnknownFile = "SNO-UNKNOWN-FILE", Trivial,
        "Use a path from did_you_mean, relative to the repository root; `sno status` shows what is indexed.";
    UnknownSymbol = "SNO-UNKNOWN-SYMBOL", Trivial,
        "Search with `sno symbol <part of the name>` (search_symbols) or grep instead.";
    AmbiguousSymbol = "SNO-AMBIGUOUS-SYMBOL", Trivial,
        "Retry with a qualified name (Class.method) or a path:line from did_you_mean.";
    BadArgs = "SNO-BAD-ARGS", Trivial,
        "Fix the arguments to match the tool's input schema (tools/list shows it).";
    BadRegex = "SNO-BAD-REGEX", Trivial,
        "Fix the pattern (Rust regex syntax; escape `(` as `\\(`).";
    BadRange = "SNO-BAD-RANGE", Trivial,
        "Write the range as A..B (two commit-ishes), or A.. for A to the indexed head.";
    UnsupportedLanguage = "SNO-UNSUPPORTED-LANGUAGE", Trivial,
        "Pass a language sno parses (the README lists them), or a file with a known extension.";
    UnknownTool = "SNO-UNKNOWN-TOOL", Trivial,
        "Call tools/list for sno's tools; did_you_mean lists the nearest names.";
    UnknownMethod = "SNO-UNKNOWN-METHOD", Trivial,
        "Use the MCP methods initialize, tools/list and tools/call.";
    UnknownSession = "SNO-UNKNOWN-SESSION", Trivial,
        "Call session_info without arguments for the current session's id.";
    Config = "SNO-CONFIG", Easy,
        "Fix or remove the offending key in .sno/config.toml; the README lists the settings.";
    ConfigUnmergeable = "SNO-CONFIG-UNMERGEABLE", Easy,
        "Nothing was written. Run `sno mcp config --client NAME` without --write and paste the block by hand.";
    AgentOff = "SNO-AGENT-OFF", Easy,
        "Add an [agent] table to .sno/config.toml: endpoint (an OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 for Ollama) and model; api_key_env names the variable holding the key. Lessons work without it: agents can submit analyses over MCP.";
    AgentInsecure = "SNO-AGENT-INSECURE", Easy,
        "Use an https endpoint, or a provider on this machine (localhost); nothing was sent.";
    AgentKey = "SNO-AGENT-KEY", Easy,
        "Export the variable `[agent] api_key_env` names, or remove api_key_env for a provider that needs no key.";
    AgentUnreachable = "SNO-AGENT-UNREACHABLE", Medium,
        "Check that the provider runs and `[agent] endpoint` is right; nothing was written.";
    AgentHttp = "SNO-AGENT-HTTP", Medium,
        "The provider refused the request (model name, key, quota?); nothing was written.";
    AgentReply = "SNO-AGENT-REPLY", Medium,
        "The model did not answer with {\"analysis\", \"rule\"}; try again or another model. Nothing was written.";
    ServeDaemon = "SNO-SERVE-DAEMON", Medium,
        "Read .sno/logs/serve.log for the reason; `sno doctor` checks the database.";
    ServeLost = "SNO-SERVE-LOST", Medium,
        "The sno daemon went away before answering; run the command again (an interrupted index run is safe to redo).";
    WatchServed = "SNO-WATCH-SERVED", Trivial,
        "A `sno serve` daemon follows HEAD for this repository; `sno watch` resumes when it leaves.";
    Doctor = "SNO-DOCTOR", Medium,
        "Follow the repair line printed for each problem.";
    Internal = "SNO-INTERNAL", Hard,
        "This is unexpected; run with -vv for details and report it.";
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user- or agent-visible error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContract {
    /// Stable, greppable: `SNO-NOT-A-REPO`, `SNO-LOCKED`, ...
    pub code: String,
    pub message: String,
    /// What to do next, phrased for a model (and readable by a person).
    pub llm_hint: String,
    pub fixability: Fixability,
    /// Near misses, when the input looked like something that exists.
    #[serde(default)]
    pub did_you_mean: Vec<String>,
    /// When enabled (`[serve] retrieval_context = true`), the top hits for
    /// the failed request, so an agent can go on without another call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval_context: Option<Box<[crate::query::SymbolInfo]>>,
}

/// An answer that is an error: `{"error": {...}}`, what `--json` prints
/// and what a failed MCP tool call carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAnswer {
    pub error: ErrorContract,
}

impl ErrorCode {
    /// The contract for a failure of this kind, with the table's hint.
    pub fn with(self, message: impl Into<String>) -> ErrorContract {
        ErrorContract {
            code: self.as_str().to_string(),
            message: message.into(),
            llm_hint: self.hint().to_string(),
            fixability: self.fixability(),
            did_you_mean: Vec::new(),
            retrieval_context: None,
        }
    }
}

impl ErrorContract {
    /// An error by its code's string (being replaced by [`ErrorCode::with`]).
    pub fn new(
        code: &str,
        message: impl Into<String>,
        llm_hint: impl Into<String>,
        fixability: Fixability,
    ) -> Self {
        ErrorContract {
            code: code.to_string(),
            message: message.into(),
            llm_hint: llm_hint.into(),
            fixability,
            did_you_mean: Vec::new(),
            retrieval_context: None,
        }
    }

    /// The same error with a hint that needs this failure's values.
    pub fn hinted(mut self, hint: impl Into<String>) -> Self {
        self.llm_hint = hint.into();
        self
    }

    /// The same error with near misses.
    pub fn suggesting(mut self, did_you_mean: Vec<String>) -> Self {
        self.did_you_mean = did_you_mean;
        self
    }

    /// The code, when it is one of sno's (always, for contracts sno made).
    pub fn error_code(&self) -> Option<ErrorCode> {
        ErrorCode::parse(&self.code)
    }

    /// Whether this is the error `code`.
    pub fn is(&self, code: ErrorCode) -> bool {
        self.code == code.as_str()
    }
}

impl std::fmt::Display for ErrorContract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (hint: {})",
            self.code, self.message, self.llm_hint
        )
    }
}

impl std::error::Error for ErrorContract {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_distinct_parses_back_and_has_a_hint() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert!(c.as_str().starts_with("SNO-"));
            assert_eq!(ErrorCode::parse(c.as_str()), Some(*c));
            assert!(c.hint().len() > 10, "{c}");
        }
        let e = ErrorCode::Locked.with("held").hinted("wait for pid 7");
        assert!(e.is(ErrorCode::Locked));
        assert_eq!(e.llm_hint, "wait for pid 7");
        assert_eq!(e.fixability, Fixability::Easy);
    }
}
