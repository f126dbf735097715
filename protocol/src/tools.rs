//! MCP tool arguments. Their doc comments become the JSON schema
//! descriptions a model reads, so they say what to pass and what happens by
//! default. Unknown argument names are refused (with the nearest known
//! names) rather than silently ignored.

use serde::Deserialize;

/// `search`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// A question in natural language, identifiers, or text the program printed (an error message, pasted as is), e.g. "where is the config file parsed".
    pub query: String,
    /// Token budget of the whole answer (cl100k_base). Default 2000, at least 150.
    pub max_tokens: Option<usize>,
    /// Only paths under this prefix, repository-relative (e.g. "src/") or absolute inside the repository.
    pub scope: Option<String>,
    /// Items to rank (1-50). Default 10.
    pub limit: Option<usize>,
    /// Answer from the state at this indexed commit-ish (branch, tag, sha) instead of the indexed head.
    pub at: Option<String>,
    /// Leave the semantic signal out (lexical and structural only). Default false.
    pub lexical_only: Option<bool>,
    /// "markdown" (default: the compact package to read) or "json" (the structured form); either fits `max_tokens`.
    pub format: Option<crate::context::AnswerFormat>,
    /// "symbols" (default) or "files": rank files by the symbols found in them, their text and the past changes like the query or named in it (#123, PR 123, a commit hash), for "which files" questions and "where does this change go" (pass a commit message as the query).
    pub group: Option<crate::context::Grouping>,
}

/// `search_symbols`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsArgs {
    /// A symbol name or qualified name (Class.method); prefixes and near spellings match too.
    pub name: String,
    /// At most this many results. Default 20.
    pub limit: Option<usize>,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `get_symbol`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameArgs {
    /// A symbol name, a qualified name (Class.method) or path:line.
    pub name: String,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `references`, `callers`, `callees`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphArgs {
    /// A symbol name, a qualified name (Class.method) or path:line.
    pub name: String,
    /// Hops to follow for callers/callees (1-5). Default 1.
    pub depth: Option<u32>,
    /// Results to list at most (the rest are counted in `more`). Default 200.
    pub limit: Option<usize>,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `search_text`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// A regular expression (Rust regex syntax), e.g. "TODO\\(.*\\)".
    pub pattern: String,
    /// At most this many hits (1-1000). Default 100.
    pub limit: Option<usize>,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `repo_map`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapArgs {
    /// Files to list, most central first. Default 20.
    pub files: Option<usize>,
    /// Token budget of the map (cl100k_base). Default 1500, at least 60.
    pub max_tokens: Option<usize>,
    /// Symbols listed per file. Default 5.
    pub per_file: Option<usize>,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
    /// "markdown" (default: the map as text) or "json" (the structured form); either fits `max_tokens`.
    pub format: Option<crate::context::AnswerFormat>,
}

/// `file_outline`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileArgs {
    /// A file path relative to the repository root, e.g. "src/config.py".
    pub file: String,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `context_for_edit`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// A file path relative to the repository root.
    pub file: String,
    /// The 1-based line you are about to edit.
    pub line: u32,
    /// Answer from the state at this indexed commit-ish instead of the indexed head.
    pub at: Option<String>,
}

/// `changes`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesArgs {
    /// The older indexed commit-ish. Required unless `to` is "worktree" (then the indexed head).
    pub from: Option<String>,
    /// The newer indexed commit-ish (default: the indexed head), or "worktree" for uncommitted edits.
    pub to: Option<String>,
}

/// `history`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// A file path relative to the repository root.
    pub file: Option<String>,
    /// Or a symbol: a name, qualified name (Class.method) or path:line.
    pub symbol: Option<String>,
}

/// `co_changed`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoChangedArgs {
    /// A file path relative to the repository root.
    pub file: String,
    /// At most this many files. Default 10.
    pub limit: Option<usize>,
}

/// `create_checkpoint`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointArgs {
    /// A short name, e.g. "parser refactor: step 2 of 4".
    pub name: String,
    /// What is done, what is next, what to watch out for: what you would need to resume.
    pub summary: String,
    /// Files the work touches (repository-relative).
    pub files: Option<Vec<String>>,
    /// Context tokens in use now, if you know.
    pub tokens_used: Option<u64>,
}

/// `restore_checkpoint`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The checkpoint id create_checkpoint returned (ckpt_…).
    pub id: String,
}

/// `log_decision`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionArgs {
    /// The decision in a line, e.g. "Parse config with serde, not by hand".
    pub title: String,
    /// Why, and what was rejected.
    pub rationale: String,
    /// Files the decision concerns (repository-relative).
    pub files: Option<Vec<String>>,
}

/// `list_decisions`, `get_approved_memory`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only what concerns this file (repository-relative).
    pub file: Option<String>,
    /// At most this many. Default 50, at most 200.
    pub limit: Option<usize>,
    /// Skip this many of the newest first (from a previous answer's
    /// `next_offset`).
    pub offset: Option<usize>,
}

/// `get_pending_memory`.
#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct PageArgs {
    /// At most this many. Default 50, at most 200.
    pub limit: Option<usize>,
    /// Skip this many (from a previous answer's `next_offset`).
    pub offset: Option<usize>,
}

/// `submit_lesson_analysis`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LessonArgs {
    /// The lesson id from get_pending_memory (lsn_…).
    pub lesson_id: String,
    /// What went wrong in the reverted change and why.
    pub analysis: String,
    /// The rule to follow next time, one imperative sentence.
    pub rule: String,
}

/// `signal_low_context`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// Tokens of your context window in use now.
    pub tokens_used: u64,
    /// Your context window's size in tokens.
    pub capacity: u64,
}

/// `session_info`, `session_history`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// Another session's id (a ULID); default: this session.
    pub session_id: Option<String>,
    /// For session_history: at most this many calls (newest). Default 50.
    pub limit: Option<usize>,
}

/// `validate_syntax`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyntaxArgs {
    /// A file in the work tree (repository-relative); its current content is checked.
    pub file: Option<String>,
    /// Or source code to check (with `language`).
    pub code: Option<String>,
    /// python, javascript, typescript, tsx, go, rust, java, c, cpp, ruby, csharp, php,
    /// kotlin, swift or scala (default for `file`: from its extension).
    pub language: Option<String>,
}

/// The defaults of arguments the CLI and the tools share: one question, one
/// answer, whichever front end asks it.
pub mod defaults {
    pub const SEARCH_MAX_TOKENS: usize = 2000;
    pub const SEARCH_LIMIT: usize = 10;
    pub const MAP_MAX_TOKENS: usize = 1500;
    pub const MAP_PER_FILE: usize = 5;
    pub const MAP_FILES: usize = 20;
    pub const SYMBOL_LIMIT: usize = 20;
    pub const GREP_LIMIT: usize = 100;
    pub const DEPTH: u32 = 1;
    /// References, callers or callees listed at most over MCP.
    pub const REFS_LIMIT: usize = 200;
}
