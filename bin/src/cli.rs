//! Command-line arguments.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use sno_protocol::tools::defaults;

/// sno: a local, Git-aware code memory for AI coding agents.
///
/// sno parses a git repository with tree-sitter into a graph of symbols,
/// imports and calls, read from git objects, and records every indexed commit
/// in an append-only journal (`.sno/sno.redb`) that can be replayed.
#[derive(Parser, Debug)]
#[command(name = "sno", version, about, long_about = None)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug). SNO_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// How much history to journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    Commits(usize),
    All,
}

fn parse_history(s: &str) -> Result<History, String> {
    if s == "all" {
        return Ok(History::All);
    }
    s.parse::<usize>()
        .map(History::Commits)
        .map_err(|_| format!("`{s}` is not a number of commits or `all`"))
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index a repository: HEAD and its recent first-parent history.
    ///
    /// Builds the index from git objects (not the work tree) into
    /// PATH/.sno/sno.redb and adds `.sno/` to .git/info/exclude. Running it
    /// again continues from what is already indexed.
    Init(InitArgs),
    /// Show what is indexed: commit, branch, files, symbols and edges per
    /// language and kind, journal length and failures.
    Status {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Verify the database and the journal; say what is wrong and how to repair.
    Doctor {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Rebuild the views from the journal when they disagree with it.
        #[arg(long)]
        repair: bool,
        #[arg(long)]
        json: bool,
    },
    /// Rebuild the indexed state at a journaled commit from the journal alone.
    ///
    /// Prints the state's counts and digest; nothing is reparsed and nothing
    /// stored changes.
    Replay {
        /// The commit-ish to travel to (it must have been indexed).
        #[arg(long)]
        to: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Move the index back to the state of an earlier indexed commit.
    ///
    /// Nothing is reparsed and nothing journaled is rewritten: one
    /// `RolledBack` event takes the views back to that commit's state (a
    /// replay of the journal passes through it). Answers then come from that
    /// state; `sno init` indexes forward to HEAD again. While `sno serve`'s
    /// daemon follows HEAD, the rollback stays until HEAD moves.
    Rollback {
        /// The commit-ish to go back to (it must have been indexed).
        #[arg(long)]
        to: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// A context package for a question: ranked symbols (lexical, semantic,
    /// structural and history signals) with their source, in a token budget,
    /// under a header that says how far to trust it.
    Search {
        /// A question, identifiers, or text the program printed (an error message as pasted): "where do we parse the config file".
        query: String,
        /// Token budget of the whole package (cl100k_base), header included; at least 150.
        #[arg(long, default_value_t = defaults::SEARCH_MAX_TOKENS)]
        max_tokens: usize,
        /// Items to rank.
        #[arg(long, default_value_t = defaults::SEARCH_LIMIT)]
        limit: usize,
        /// Only paths under this prefix: a directory or file named from here (or absolute), else a repository-relative prefix such as src/
        #[arg(long)]
        scope: Option<String>,
        /// Turn the semantic signal off.
        #[arg(long)]
        lexical_only: bool,
        /// Rank files instead of symbols: by the symbols found in them, their text, and the past changes like the query or named in it (#123, PR 123, a commit hash). A commit message as the query asks where that change goes.
        #[arg(long)]
        files: bool,
        /// A model2vec model directory (default: $SNO_MODEL, then minishlab/potion-base-8M).
        #[arg(long)]
        model: Option<String>,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// A ranked map of the repository's most central files and symbols
    /// (PageRank over calls and inheritance), in a token budget.
    Map {
        /// Token budget (cl100k_base); at least 60.
        #[arg(long, default_value_t = defaults::MAP_MAX_TOKENS)]
        max_tokens: usize,
        /// Symbols listed per file.
        #[arg(long, default_value_t = defaults::MAP_PER_FILE)]
        per_file: usize,
        /// Files listed at most.
        #[arg(long, default_value_t = defaults::MAP_FILES)]
        files: usize,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// Find symbol definitions by name: exact, then prefix, then fuzzy.
    Symbol {
        name: String,
        #[command(flatten)]
        q: QueryOpts,
        /// At most this many results.
        #[arg(long, default_value_t = defaults::SYMBOL_LIMIT)]
        limit: usize,
    },
    /// A file's symbols, nested, with signatures and no bodies.
    Outline {
        /// The file: relative to the current directory (or `-C`'s), to the
        /// repository root, or absolute.
        file: String,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// The source of one symbol (`Config.load`, a unique name, or
    /// `path:line`, the path as `outline` takes it).
    Show {
        name: String,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// References to a symbol; --callers / --callees walk the call graph.
    Refs {
        name: String,
        /// Who calls it (transitively with --depth).
        #[arg(long, conflicts_with = "callees")]
        callers: bool,
        /// What it calls (transitively with --depth).
        #[arg(long)]
        callees: bool,
        /// Hops to follow for --callers / --callees.
        #[arg(long, default_value_t = defaults::DEPTH)]
        depth: u32,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// Regex search over the indexed files, each hit with its enclosing symbol.
    Grep {
        /// A regular expression (Rust regex syntax).
        pattern: String,
        /// At most this many hits.
        #[arg(long, default_value_t = defaults::GREP_LIMIT)]
        limit: usize,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// Symbols added, removed and changed between two indexed commits (A..B),
    /// from the journal: nothing is reparsed.
    Changes {
        /// `A..B` (B defaults to the indexed head: `A..`).
        range: String,
        #[command(flatten)]
        q: QueryOpts,
    },
    /// Serve MCP on stdio for agents (Claude Desktop, Claude Code, Cursor,
    /// Codex, Zed, Cline, ...).
    ///
    /// The first server of a repository owns its database; more servers (and
    /// CLI commands) on the same repository reach it through .sno/sno.sock,
    /// so several agents can work at once. `sno mcp config` prints the
    /// client set-up. A repository not indexed yet is indexed first, as
    /// `sno init` would (progress on stderr).
    Serve {
        /// The repository (any directory inside it).
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Keep the index following the repository until stopped (Ctrl-C).
    ///
    /// Indexes each commit HEAD moves to: a commit, a checkout, a reset, a
    /// rebase, a pull (the history between the indexed commit and HEAD is
    /// journaled as `sno init` would; a HEAD that left the indexed line is
    /// journaled as a branch move). Git's ref updates are seen through file
    /// events, debounced, and HEAD is also read every `[watch] poll_secs`
    /// (default 5). The work tree is not indexed: sno indexes commits. The
    /// daemon behind `sno serve` follows the repository the same way, so
    /// this command is for when no server runs.
    Watch {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// One JSON object per line for each index run (or error).
        #[arg(long)]
        json: bool,
    },
    /// The process that owns a repository's database and serves its MCP
    /// sessions (started by `sno serve`; not meant to be run by hand).
    #[command(hide = true)]
    Daemon {
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// What sno did for agents: every MCP tool call (tool, argument digest,
    /// result size, latency, error code), every MCP search (query, secrets
    /// masked; hits, top score), every indexing run, every LLM call (model,
    /// tokens, latency, error). Searches from this command line are not
    /// recorded.
    Audit {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Show only the last N records (at least 1).
        #[arg(long, default_value_t = 50, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        tail: usize,
        #[arg(long)]
        json: bool,
    },
    /// Set up MCP clients to use sno.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Lessons drawn from reverts: list them, draft their analyses with an
    /// LLM, approve or reject them. Approved lessons travel with the context
    /// agents get.
    Lessons {
        #[command(subcommand)]
        command: LessonsCommand,
    },
    /// Read the journal.
    Journal {
        #[command(subcommand)]
        command: JournalCommand,
    },
}

/// Arguments of `sno init`.
#[derive(clap::Args, Debug, Clone)]
pub struct InitArgs {
    /// The repository (any directory inside it).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// First-parent commits before HEAD to journal, or `all` [default: 200].
    #[arg(long, value_parser = parse_history)]
    pub history: Option<History>,
    /// Index this commit-ish instead of HEAD.
    #[arg(long)]
    pub rev: Option<String>,
    /// Largest file to parse, in bytes [default: 1048576].
    #[arg(long)]
    pub max_file_size: Option<u64>,
    /// Parser workers [default: one per core].
    #[arg(long)]
    pub workers: Option<usize>,
    /// A model2vec model directory for the semantic index (default:
    /// $SNO_MODEL, then `[search] model` in .sno/config.toml).
    #[arg(long)]
    pub model: Option<String>,
    /// Print the run's summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options every query command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct QueryOpts {
    /// The repository (any directory inside it).
    #[arg(short = 'C', long = "repo", default_value = ".")]
    pub repo: PathBuf,
    /// Answer from the state at this journaled commit-ish instead of the
    /// indexed head.
    #[arg(long)]
    pub at: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sno mcp ...`
#[derive(Subcommand, Debug)]
pub enum McpCommand {
    /// Print the configuration block a client needs (or merge it into the
    /// client's config file with --write, keeping everything else there).
    Config {
        /// The client: claude-desktop, claude-code, cursor, codex, zed or cline.
        #[arg(long, value_parser = client)]
        client: sno_protocol::client_config::Client,
        /// The repository the server should serve.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Merge into the client's config file instead of printing.
        #[arg(long)]
        write: bool,
        /// The config file to write (default: the client's usual location).
        #[arg(long)]
        file: Option<PathBuf>,
    },
}

/// `sno lessons ...`
#[derive(Subcommand, Debug)]
pub enum LessonsCommand {
    /// Every lesson with its status (proposed, analysed, approved, rejected).
    List {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Approve a lesson: agents are told its rule from now on.
    Approve {
        id: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Why (kept in the journal).
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long)]
        json: bool,
    },
    /// Reject a lesson: agents are not told it.
    Reject {
        id: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long)]
        json: bool,
    },
    /// Draft analyses with the configured LLM provider (`[agent]` in
    /// .sno/config.toml): for each lesson with none yet, or for ID, what
    /// went wrong and the rule to follow. Drafts wait for a human's verdict
    /// like any analysis.
    Draft {
        /// One lesson: drafted again if it has an analysis but no verdict
        /// yet (a reviewed lesson is refused). Each draft is journaled as it
        /// is made; the first failure stops the run.
        id: Option<String>,
        /// The repository (any directory inside it).
        #[arg(long, default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Go through the lessons waiting for a verdict, one at a time.
    ///
    /// Each is shown with the revert it came from and the agents' analysis;
    /// answer `a` (approve), `r` (reject), `s` (skip) or `q` (quit). A note
    /// may follow the letter (`r too specific`) and is kept in the journal.
    /// Answers are read line by line from stdin, so they can be piped.
    Review {
        #[arg(default_value = ".")]
        path: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum JournalCommand {
    /// List events, newest last.
    Log {
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Show only the last N events (at least 1).
        #[arg(long, default_value_t = 50, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        tail: usize,
        #[arg(long)]
        json: bool,
    },
    /// Check the chain of events (same as the journal part of `sno doctor`).
    Verify {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    /// Whether errors should be printed as JSON too.
    pub fn wants_json(&self) -> bool {
        match self {
            Command::Init(InitArgs { json, .. })
            | Command::Status { json, .. }
            | Command::Doctor { json, .. }
            | Command::Replay { json, .. }
            | Command::Rollback { json, .. }
            | Command::Watch { json, .. } => *json,
            Command::Journal {
                command: JournalCommand::Log { json, .. } | JournalCommand::Verify { json, .. },
            } => *json,
            Command::Serve { .. } | Command::Daemon { .. } => false,
            Command::Lessons {
                command: LessonsCommand::Review { .. },
            } => false,
            Command::Audit { json, .. } => *json,
            Command::Mcp { .. } => false,
            Command::Lessons {
                command:
                    LessonsCommand::List { json, .. }
                    | LessonsCommand::Draft { json, .. }
                    | LessonsCommand::Approve { json, .. }
                    | LessonsCommand::Reject { json, .. },
            } => *json,
            Command::Search { q, .. }
            | Command::Map { q, .. }
            | Command::Symbol { q, .. }
            | Command::Outline { q, .. }
            | Command::Show { q, .. }
            | Command::Refs { q, .. }
            | Command::Grep { q, .. }
            | Command::Changes { q, .. } => q.json,
        }
    }
}

fn client(name: &str) -> Result<sno_protocol::client_config::Client, String> {
    use sno_protocol::client_config::Client;
    Client::named(name).ok_or_else(|| format!("one of {}", Client::NAMES.join(", ")))
}
