//! The MCP tools: each calls one engine operation and serializes its typed
//! answer; every failure is an error contract (`{"error": {...}}`).
//!
//! `call_tool` wraps every call: it measures it, records it in the session
//! transcript and the audit, turns argument errors into contracts with
//! near-miss argument names, and answers an unknown tool with the nearest
//! tool names.

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode as RpcCode, Implementation, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use sno_engine::history::HistoryOf;
use sno_engine::search::SearchArgs as Search;
use sno_engine::session::{FinishedCall, SessionHandle};
use sno_engine::syntax::SyntaxInput;
use sno_engine::{Engine, Error};
use sno_protocol::context::AnswerFormat;
use sno_protocol::error::ErrorAnswer;
use sno_protocol::query::RefsKind;
use sno_protocol::tools::defaults;
use sno_protocol::tools::*;
use sno_protocol::{ErrorCode, ErrorContract};

/// One MCP session's server.
#[derive(Clone)]
pub struct SnoServer {
    engine: Arc<Engine>,
    session: SessionHandle,
    tool_router: ToolRouter<SnoServer>,
}

/// A tool's outcome: a JSON answer, or an error in the contract.
type Answer = Result<String, String>;

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|e| contract_json(&ErrorCode::Internal.with(e.to_string())))
}

fn contract_json(c: &ErrorContract) -> String {
    serde_json::to_string(&ErrorAnswer { error: c.clone() }).unwrap_or_default()
}

fn answer<T: serde::Serialize>(r: Result<T, Error>) -> Answer {
    r.map(|v| to_json(&v))
        .map_err(|e| contract_json(e.contract()))
}

fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn bad_args(message: &str, hint: &str) -> Error {
    ErrorCode::BadArgs.with(message).hinted(hint).into()
}

#[tool_router]
impl SnoServer {
    /// A server for one connection, with a new session.
    pub async fn new(engine: Arc<Engine>) -> sno_engine::Result<SnoServer> {
        let session = engine.open_session().await?;
        Ok(SnoServer {
            engine,
            session,
            tool_router: Self::tool_router(),
        })
    }

    /// The session of this connection.
    pub fn session_handle(&self) -> SessionHandle {
        self.session.clone()
    }

    // ---- state ----------------------------------------------------------

    #[tool(
        description = "What sno has indexed: commit, branch, files/symbols/edges per language, journal length, failures. Call it first: every other answer reflects this state."
    )]
    fn status(&self) -> Answer {
        answer(self.engine.status())
    }

    #[tool(
        description = "Check the journal's integrity: the hash chain of events and that the views equal a replay of the journal. Use when answers look inconsistent."
    )]
    async fn verify(&self) -> Answer {
        answer(self.engine.doctor(false).await)
    }

    // ---- retrieval ------------------------------------------------------

    #[tool(
        description = "Search the repository and get a context package: the most relevant symbols' source in a token budget, under a header saying which commit it reflects, how each item matched and whether anything was left out. Use for questions about where or how something is done, and to find the code behind an error message or log line."
    )]
    async fn search(&self, Parameters(a): Parameters<SearchArgs>) -> Answer {
        let args = Search {
            query: a.query,
            max_tokens: a.max_tokens.unwrap_or(defaults::SEARCH_MAX_TOKENS),
            limit: a.limit.unwrap_or(defaults::SEARCH_LIMIT).min(50),
            scope: a.scope,
            lexical_only: a.lexical_only.unwrap_or(false),
            at: a.at,
            format: a.format.unwrap_or_default(),
            group: a.group.unwrap_or_default(),
        };
        let r = self.engine.search_for(&self.session, &args).await;
        match (r, args.format) {
            // What an agent reads: the package alone, within the budget.
            (Ok(pkg), AnswerFormat::Markdown) => Ok(pkg.package),
            (r, _) => answer(r),
        }
    }

    #[tool(
        description = "Find symbol definitions by name (exact, then case-insensitive, prefix, fuzzy) with path:line and signature."
    )]
    fn search_symbols(&self, Parameters(a): Parameters<SymbolsArgs>) -> Answer {
        answer(self.engine.symbols(
            &a.name,
            a.limit.unwrap_or(defaults::SYMBOL_LIMIT),
            a.at.as_deref(),
        ))
    }

    #[tool(
        description = "One symbol's definition and source: give a name, Class.method or path:line. Ambiguous names list the candidates in did_you_mean."
    )]
    fn get_symbol(&self, Parameters(a): Parameters<NameArgs>) -> Answer {
        answer(self.engine.show(&a.name, a.at.as_deref()))
    }

    #[tool(
        description = "The symbols of one file, nested, with signatures and line numbers, without bodies: a cheap way to see a file's shape."
    )]
    fn file_outline(&self, Parameters(a): Parameters<FileArgs>) -> Answer {
        answer(self.engine.outline(&a.file, a.at.as_deref()))
    }

    #[tool(
        description = "Everything that refers to a symbol: calls and inheritance resolved by the language's scoping rules (exact), then calls found by a name alone (heuristic: true, with the reason)."
    )]
    fn references(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        answer(self.graph(&a, RefsKind::References, 1))
    }

    #[tool(
        description = "Who calls a symbol, transitively up to `depth` hops, with path:line of each call; calls matched by name alone are heuristic, with the reason."
    )]
    fn callers(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        let depth = a.depth.unwrap_or(defaults::DEPTH);
        answer(self.graph(&a, RefsKind::Callers, depth))
    }

    #[tool(
        description = "What a symbol calls, transitively up to `depth` hops; unresolved (external) callees are listed as heuristic."
    )]
    fn callees(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        let depth = a.depth.unwrap_or(defaults::DEPTH);
        answer(self.graph(&a, RefsKind::Callees, depth))
    }

    #[tool(
        description = "Regex search over the indexed files' text; each hit names its enclosing symbol."
    )]
    fn search_text(&self, Parameters(a): Parameters<TextArgs>) -> Answer {
        let limit = a.limit.unwrap_or(defaults::GREP_LIMIT).min(1000);
        answer(self.engine.grep(&a.pattern, limit, a.at.as_deref()))
    }

    #[tool(
        description = "The repository's most central files and symbols (PageRank over calls and inheritance): a map to start exploring from."
    )]
    fn repo_map(&self, Parameters(a): Parameters<MapArgs>) -> Answer {
        let format = a.format.unwrap_or_default();
        let r = self.engine.map(
            a.max_tokens.unwrap_or(defaults::MAP_MAX_TOKENS),
            a.per_file.unwrap_or(defaults::MAP_PER_FILE).clamp(1, 50),
            Some(a.files.unwrap_or(defaults::MAP_FILES).clamp(1, 500)),
            a.at.as_deref(),
            format,
        );
        match (r, format) {
            // The map text alone, within the budget, as `search` answers.
            (Ok(m), AnswerFormat::Markdown) => Ok(m.map),
            (r, _) => answer(r),
        }
    }

    #[tool(
        description = "Before editing a line: the symbol that encloses it, that symbol's callers and callees, its siblings in the file, and the decisions and approved lessons that touch the file. Lines are the indexed commit's; `edited_in_work_tree` says the file has changed since. Call it before changing code you did not write."
    )]
    fn context_for_edit(&self, Parameters(a): Parameters<EditArgs>) -> Answer {
        answer(
            self.engine
                .context_for_edit(&a.file, a.line, a.at.as_deref()),
        )
    }

    #[tool(
        description = "Symbols added, removed and changed between two indexed commits (`from`, `to`; `to` defaults to the indexed head), or between the indexed head and the work tree (`to`: \"worktree\") to see what uncommitted edits changed (new files, staged or not, included; ignored ones not)."
    )]
    fn changes(&self, Parameters(a): Parameters<ChangesArgs>) -> Answer {
        if a.to.as_deref() == Some("worktree") {
            return answer(self.engine.changes_in_work_tree(a.from.as_deref()));
        }
        let Some(from) = a.from.as_deref() else {
            return answer::<()>(Err(bad_args(
                "`from` is required unless `to` is \"worktree\"",
                "Pass `from` (a commit-ish that was indexed), or `to: \"worktree\"` alone.",
            )));
        };
        answer(self.engine.changes(from, a.to.as_deref()))
    }

    #[tool(
        description = "When a file or symbol appeared and changed, from the journal: each indexed commit that touched it, with its summary and time. Give `file`, or `symbol` (a name, Class.method or path:line)."
    )]
    fn history(&self, Parameters(a): Parameters<HistoryArgs>) -> Answer {
        let of = match (&a.file, &a.symbol) {
            (Some(f), _) => HistoryOf::File(f),
            (None, Some(s)) => HistoryOf::Symbol(s),
            (None, None) => return answer::<()>(Err(sno_engine::history::history_needs_subject())),
        };
        answer(self.engine.history(of))
    }

    #[tool(
        description = "Files that changed in the same commits as a file (share of its commits, newest history first): what else usually needs an edit when this file does."
    )]
    fn co_changed(&self, Parameters(a): Parameters<CoChangedArgs>) -> Answer {
        answer(self.engine.co_changed(&a.file, a.limit.unwrap_or(10)))
    }

    // ---- memory ---------------------------------------------------------

    #[tool(
        description = "Save where you are (what you did, what is next, the files involved) as a checkpoint bound to the branch and commit, so you or another agent can resume with restore_checkpoint after the context is reset."
    )]
    async fn create_checkpoint(&self, Parameters(a): Parameters<CheckpointArgs>) -> Answer {
        let c = sno_engine::memory::NewCheckpoint {
            name: a.name,
            summary: a.summary,
            files: a.files.unwrap_or_default(),
            tokens_used: a.tokens_used,
        };
        answer(self.engine.create_checkpoint(&self.session.id, c).await)
    }

    #[tool(
        description = "Resume from a checkpoint: its summary and files, the decisions logged since, and whether the indexed commit moved since it was made."
    )]
    fn restore_checkpoint(&self, Parameters(a): Parameters<IdArgs>) -> Answer {
        answer(self.engine.restore_checkpoint(&a.id))
    }

    #[tool(
        description = "Record a design decision and why, bound to the branch and commit, optionally with the files it concerns; it is shown to agents editing those files."
    )]
    async fn log_decision(&self, Parameters(a): Parameters<DecisionArgs>) -> Answer {
        let files = a.files.unwrap_or_default();
        answer(
            self.engine
                .log_decision(&self.session.id, a.title, a.rationale, &files)
                .await,
        )
    }

    #[tool(
        description = "Decisions logged so far, newest last, in pages (`limit`, `offset`); `file` keeps those about one file."
    )]
    fn list_decisions(&self, Parameters(a): Parameters<ListArgs>) -> Answer {
        answer(self.engine.decisions(a.file.as_deref(), a.limit, a.offset))
    }

    #[tool(
        description = "What agents must follow: lessons humans approved (each with its rule and the files it concerns) and logged decisions, newest last, in pages (`limit`, `offset`). `file` keeps what touches one file."
    )]
    fn get_approved_memory(&self, Parameters(a): Parameters<ListArgs>) -> Answer {
        answer(
            self.engine
                .approved_memory(a.file.as_deref(), a.limit, a.offset),
        )
    }

    #[tool(
        description = "Lessons waiting for review: reverts sno found in the history, with any analysis submitted, in pages (`limit`, `offset`). Analyse one with submit_lesson_analysis; a human approves it with `sno lessons approve`."
    )]
    fn get_pending_memory(&self, Parameters(a): Parameters<PageArgs>) -> Answer {
        answer(self.engine.lessons(true, a.limit, a.offset))
    }

    #[tool(
        description = "Submit your analysis of a pending lesson: what went wrong in the reverted change and the rule to follow next time (one imperative sentence). A human reviews it before agents are told."
    )]
    async fn submit_lesson_analysis(&self, Parameters(a): Parameters<LessonArgs>) -> Answer {
        answer(
            self.engine
                .submit_lesson_analysis(&self.session.id, &a.lesson_id, a.analysis, a.rule)
                .await,
        )
    }

    #[tool(
        description = "Tell sno how full your context window is (tokens used and capacity). Past the threshold (80% by default) it recommends create_checkpoint before your context is compacted."
    )]
    fn signal_low_context(&self, Parameters(a): Parameters<ContextArgs>) -> Answer {
        let r = self.engine.context_advice(a.tokens_used, a.capacity);
        if r.is_ok() {
            self.session.context(a.tokens_used, a.capacity);
        }
        answer(r)
    }

    // ---- sessions -------------------------------------------------------

    #[tool(
        description = "This session (or another, by `session_id`): id, client, start time, call and error counts, cache hits. Sessions are kept after the server stops."
    )]
    async fn session_info(&self, Parameters(a): Parameters<SessionArgs>) -> Answer {
        answer(
            self.engine
                .session_info(&self.session, a.session_id.as_deref())
                .await,
        )
    }

    #[tool(
        description = "The last calls of this session (or another, by `session_id`), oldest first: tool, argument digest, error code, result size, latency."
    )]
    async fn session_history(&self, Parameters(a): Parameters<SessionArgs>) -> Answer {
        answer(
            self.engine
                .session_history(&self.session, a.session_id.as_deref(), a.limit)
                .await,
        )
    }

    // ---- syntax ---------------------------------------------------------

    #[tool(
        description = "Check syntax with tree-sitter before or after an edit: give `file` (read from the work tree) or `code` with its `language` (python, javascript, typescript, tsx, go, rust, java, c, cpp, ruby, csharp, php, kotlin, swift, scala). Returns diagnostics with line and column; none means it parses."
    )]
    fn validate_syntax(&self, Parameters(a): Parameters<SyntaxArgs>) -> Answer {
        let input = match (&a.file, &a.code) {
            (Some(f), None) => SyntaxInput::File {
                path: f,
                language: a.language.as_deref(),
            },
            (None, Some(code)) => match a.language.as_deref() {
                Some(l) => SyntaxInput::Code { code, language: l },
                None => {
                    return answer::<()>(Err(bad_args(
                        "`language` is required with `code`",
                        "Pass `language`, e.g. \"python\".",
                    )))
                }
            },
            _ => {
                return answer::<()>(Err(bad_args(
                    "give exactly one of `file` or `code`",
                    "Pass `file` (a repository path) or `code` with `language`.",
                )))
            }
        };
        answer(self.engine.validate_syntax(input))
    }
}

impl SnoServer {
    /// References, callers or callees of `a.name`, at most `a.limit` of
    /// them listed.
    fn graph(
        &self,
        a: &GraphArgs,
        kind: RefsKind,
        depth: u32,
    ) -> Result<sno_protocol::query::RefsAnswer, Error> {
        let limit = sno_engine::error::some(a.limit.unwrap_or(defaults::REFS_LIMIT))?;
        Ok(self
            .engine
            .refs(&a.name, kind, depth, a.at.as_deref())?
            .limited(limit))
    }

    /// Records a finished call in the session and the audit.
    async fn record(
        &self,
        tool: &str,
        args: &str,
        t: Instant,
        result_bytes: usize,
        error: Option<String>,
        cache_hit: bool,
    ) {
        let call = FinishedCall {
            tool,
            args,
            latency: t.elapsed(),
            result_bytes,
            error,
            cache_hit,
        };
        self.engine.record_call(&self.session, call).await;
    }

    /// An argument error from rmcp, in the contract, with the nearest
    /// argument names when one was misspelled.
    fn bad_args(&self, tool: &str, message: &str) -> ErrorContract {
        let mut c = ErrorCode::BadArgs.with(format!(
            "invalid arguments for `{tool}`: {}",
            cut(message, 500)
        ));
        let known: Vec<String> = self
            .tool_router
            .get(tool)
            .and_then(|t| {
                t.input_schema
                    .get("properties")
                    .and_then(|p| p.as_object())
                    .map(|p| p.keys().cloned().collect())
            })
            .unwrap_or_default();
        if let Some(field) = message
            .split("unknown field `")
            .nth(1)
            .and_then(|r| r.split('`').next())
        {
            c.did_you_mean = sno_engine::error::nearest(field, known, 3);
        }
        c
    }
}

/// The contract a tool's error text carries, if it is one.
fn contract_in(text: &str) -> Option<ErrorContract> {
    serde_json::from_str::<ErrorAnswer>(text)
        .ok()
        .map(|a| a.error)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SnoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sno", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "sno is a code memory of this git repository. Start with `status`, then `search` for questions, \
                 `search_symbols`/`get_symbol` for names, `context_for_edit` before editing. Record decisions with \
                 `log_decision`; follow `get_approved_memory`."
                    .to_string(),
            )
    }

    /// rmcp hands over as "custom" every request whose params do not fit
    /// its method: a known method with such params is an invalid-params
    /// error (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.clone();
        const KNOWN: &[&str] = &[
            "initialize",
            "ping",
            "tools/call",
            "tools/list",
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
        ];
        let (code, c) = if KNOWN.contains(&method.as_str()) {
            (
                RpcCode::INVALID_PARAMS,
                ErrorCode::BadArgs
                    .with(format!("invalid params for `{method}`"))
                    .hinted("tools/call takes {\"name\": <tool name>, \"arguments\": {...}}; tools/list shows each tool's arguments."),
            )
        } else {
            (
                RpcCode::METHOD_NOT_FOUND,
                ErrorCode::UnknownMethod
                    .with(format!("sno does not answer `{}`", cut(&method, 100))),
            )
        };
        Err(ErrorData::new(
            code,
            c.message.clone(),
            serde_json::to_value(ErrorAnswer { error: c }).ok(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let t = Instant::now();
        let tool = request.name.to_string();
        let args = request
            .arguments
            .as_ref()
            .map(|a| serde_json::to_string(a).unwrap_or_default())
            .unwrap_or_default();
        if !self.tool_router.has_route(&tool) {
            let c = ErrorCode::UnknownTool
                .with(format!("sno has no tool `{}`", cut(&tool, 100)))
                .suggesting(sno_engine::error::nearest(
                    &tool,
                    self.tool_router
                        .list_all()
                        .into_iter()
                        .map(|t| t.name.to_string()),
                    3,
                ));
            self.record(&tool, &args, t, 0, Some(c.code.clone()), false)
                .await;
            return Err(ErrorData::new(
                RpcCode::INVALID_PARAMS,
                c.message.clone(),
                serde_json::to_value(ErrorAnswer { error: c }).ok(),
            ));
        }
        // Whether the answer comes from a state already in memory.
        let cache_hit = self.engine.read().head_is_loaded();
        let tcc = ToolCallContext::new(self, request, context);
        // Tool bodies compute synchronously (a first search builds indexes
        // for a second or more): off the runtime's few workers, so other
        // sessions, the socket and the idle clock keep running meanwhile.
        let run = self.tool_router.call(tcc);
        let handle = tokio::runtime::Handle::current();
        let result = if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
            // A tool that panics answers with an error: unanswered, the
            // request would leave its client waiting for ever.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tokio::task::block_in_place(|| handle.block_on(run))
            }))
            .unwrap_or_else(|_| {
                let c = ErrorCode::Internal
                    .with(format!("the tool `{}` failed inside sno", cut(&tool, 100)))
                    .hinted("the server log (.sno/logs/serve.log) has the panic; the stored index is untouched, and other calls go on");
                Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                    ContentBlock::text(contract_json(&c)),
                ])))
            })
        } else {
            run.await
        };
        let result = match result {
            // rmcp answers arguments that do not fit the schema with a bare
            // text error: put it in the contract.
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                let text = r
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                if contract_in(&text).is_some() {
                    CallToolResponse::Complete(r)
                } else {
                    CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                        contract_json(&self.bad_args(&tool, &text)),
                    )]))
                }
            }
            Ok(r) => r,
            // rmcp rejects arguments that do not fit the schema before the
            // tool runs: answer in the contract, as a tool error the model sees.
            Err(e) => CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                contract_json(&self.bad_args(&tool, &e.message)),
            )])),
        };
        if let CallToolResponse::Complete(r) = &result {
            let text: Vec<&str> = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            let bytes = text.iter().map(|t| t.len()).sum();
            let error = (r.is_error == Some(true)).then(|| {
                text.first()
                    .and_then(|t| contract_in(t))
                    .map(|c| c.code)
                    .unwrap_or_else(|| ErrorCode::Internal.as_str().to_string())
            });
            self.record(&tool, &args, t, bytes, error, cache_hit).await;
        }
        Ok(result)
    }
}
