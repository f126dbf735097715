//! `sno serve`: the MCP server on stdio (rmcp). A first cut: read tools over
//! the indexed state, each answer a JSON document. stdout carries protocol
//! only; logs go to stderr.

use std::path::PathBuf;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde::Deserialize;
use sno_journal::Journal;

use crate::repo::RepoPaths;

/// The server: one repository.
#[derive(Clone)]
pub struct SnoServer {
    paths: std::sync::Arc<RepoPaths>,
    /// One open database for every call: redb allows one open per process.
    journal: std::sync::Arc<Journal>,
    tool_router: ToolRouter<SnoServer>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// A question in natural language or identifiers, e.g. "where is the config file parsed".
    pub query: String,
    /// Token budget of the answer (cl100k_base). Default 2000.
    pub max_tokens: Option<usize>,
    /// Only paths under this prefix, e.g. "src/".
    pub scope: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct NameArgs {
    /// A symbol name, a qualified name (Class.method) or path:line.
    pub name: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct GraphArgs {
    /// A symbol name, a qualified name (Class.method) or path:line.
    pub name: String,
    /// Hops to follow (callers/callees). Default 1.
    pub depth: Option<u32>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct TextArgs {
    /// A regular expression (Rust regex syntax), e.g. "TODO\\(.*\\)".
    pub pattern: String,
    /// At most this many hits. Default 100.
    pub limit: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct MapArgs {
    /// Files to list, most central first. Default 20.
    pub files: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct FileArgs {
    /// A file path relative to the repository root.
    pub file: String,
}

fn contract_json(e: &anyhow::Error) -> String {
    serde_json::to_string(&serde_json::json!({ "error": crate::failure::contract_of(e) }))
        .unwrap_or_default()
}

#[tool_router]
impl SnoServer {
    /// Builds a server for an indexed repository.
    pub fn new(paths: RepoPaths, journal: Journal) -> SnoServer {
        SnoServer {
            paths: std::sync::Arc::new(paths),
            journal: std::sync::Arc::new(journal),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "What sno has indexed: commit, branch, files/symbols/edges per language, journal length, failures. Call first to know the state answers come from."
    )]
    fn status(&self) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let j = &self.journal;
            let state = j.load_state()?;
            let head = j.head()?;
            let last = j.audit_tail(1)?;
            let r = crate::report::status_report(
                self.paths.root.display().to_string(),
                &state,
                head.as_ref(),
                j.len()?,
                j.commits_indexed()?,
                last.last(),
            );
            Ok(serde_json::to_string(&r)?)
        };
        run().map_err(|e| contract_json(&e))
    }

    #[tool(
        description = "Search the repository and get a context package: the most relevant symbols' source in a token budget, under a header saying which commit it reflects and whether anything was left out. Use for questions about where or how something is done."
    )]
    fn search(&self, Parameters(a): Parameters<SearchArgs>) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let pkg = crate::search::package_from(
                &self.paths,
                &self.journal,
                crate::search::SearchArgs {
                    query: &a.query,
                    max_tokens: a.max_tokens.unwrap_or(2000),
                    limit: 10,
                    scope: a.scope.as_deref(),
                    lexical_only: false,
                    model: None,
                },
                None,
            )?;
            Ok(serde_json::to_string(&pkg)?)
        };
        run().map_err(|e| contract_json(&e))
    }

    #[tool(
        description = "Find symbol definitions by name (exact, then prefix, then fuzzy) with path:line and signature."
    )]
    fn search_symbols(&self, Parameters(a): Parameters<NameArgs>) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let state = self.journal.load_state()?;
            let hits = sno_query::find_symbols(&state, &a.name, 20);
            if hits.is_empty() {
                let mut c = sno_protocol::ErrorContract::new(
                    "SNO-UNKNOWN-SYMBOL",
                    format!("no symbol named `{}`", a.name),
                    "Retry with a name from did_you_mean, or use the search tool.",
                    sno_protocol::Fixability::Trivial,
                );
                c.did_you_mean = sno_query::lookup::did_you_mean(&state, &a.name, 5);
                return Err(c.into());
            }
            Ok(serde_json::to_string(&hits)?)
        };
        run().map_err(|e| contract_json(&e))
    }

    #[tool(
        description = "Everything that refers to a symbol: resolved calls and inheritance (exact), then calls that only share its name (heuristic: true)."
    )]
    fn references(&self, Parameters(a): Parameters<GraphArgs>) -> Result<String, String> {
        self.graph(&a, |g, _, s| g.references(s))
    }

    #[tool(
        description = "Who calls a symbol, transitively up to `depth` hops, with path:line of each call."
    )]
    fn callers(&self, Parameters(a): Parameters<GraphArgs>) -> Result<String, String> {
        let depth = a.depth.unwrap_or(1).max(1);
        self.graph(&a, |g, _, s| g.callers(s, depth))
    }

    #[tool(
        description = "What a symbol calls, transitively up to `depth` hops; unresolved (external) callees are listed as heuristic."
    )]
    fn callees(&self, Parameters(a): Parameters<GraphArgs>) -> Result<String, String> {
        let depth = a.depth.unwrap_or(1).max(1);
        self.graph(&a, |g, st, s| g.callees(st, s, depth))
    }

    #[tool(
        description = "Regex search over the indexed files' text; each hit names its enclosing symbol."
    )]
    fn search_text(&self, Parameters(a): Parameters<TextArgs>) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let re = regex::Regex::new(&a.pattern).map_err(|e| {
                sno_protocol::ErrorContract::new(
                    "SNO-BAD-REGEX",
                    format!("`{}` is not a valid regular expression: {e}", a.pattern),
                    "Fix the pattern (Rust regex syntax; escape `(` as `\\(`).",
                    sno_protocol::Fixability::Trivial,
                )
            })?;
            let state = self.journal.load_state()?;
            let repo = sno_actors::git::GitRepo::open(&self.paths.root)?;
            let limit = a.limit.unwrap_or(100);
            let (hits, truncated) =
                sno_query::text::grep(&state, &re, limit, |rec| repo.blob(rec.blob).ok());
            Ok(serde_json::to_string(
                &serde_json::json!({ "results": hits, "truncated": truncated, "limit": limit }),
            )?)
        };
        run().map_err(|e| contract_json(&e))
    }

    #[tool(
        description = "The repository's most central files and symbols (PageRank over calls and inheritance): a map to start exploring from."
    )]
    fn repo_map(&self, Parameters(a): Parameters<MapArgs>) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let state = self.journal.load_state()?;
            let (docs, rank) = sno_query::map::symbol_ranks(&state);
            let files: Vec<serde_json::Value> = sno_query::map::ranked_files(&docs, &rank)
                .into_iter()
                .take(a.files.unwrap_or(20))
                .map(|(path, score, syms)| {
                    serde_json::json!({
                        "path": path,
                        "score": score,
                        "symbols": syms.iter().take(5).map(|(i, _)| docs[*i].info()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            Ok(serde_json::to_string(&files)?)
        };
        run().map_err(|e| contract_json(&e))
    }

    #[tool(
        description = "The symbols of one file, nested, with signatures and line numbers, without bodies."
    )]
    fn file_outline(&self, Parameters(a): Parameters<FileArgs>) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let state = self.journal.load_state()?;
            let rel = crate::queries::confine(&a.file)?;
            let rel = rel.as_str();
            let rec = state
                .get(rel)
                .ok_or_else(|| anyhow::anyhow!(crate::queries::unknown_file(&state, rel)))?;
            Ok(serde_json::to_string(&sno_query::outline::outline(rec))?)
        };
        run().map_err(|e| contract_json(&e))
    }
}

impl SnoServer {
    /// Runs a graph query on the symbol `a.name` names.
    fn graph(
        &self,
        a: &GraphArgs,
        query: impl FnOnce(
            &sno_query::graph::Graph,
            &sno_journal::delta::State,
            &sno_journal::model::Symbol,
        ) -> Vec<sno_protocol::query::Reference>,
    ) -> Result<String, String> {
        let run = || -> anyhow::Result<String> {
            let state = self.journal.load_state()?;
            let found =
                sno_query::resolve_one(&state, &a.name).map_err(crate::queries::lookup_contract)?;
            let graph = sno_query::graph::Graph::new(&state);
            Ok(serde_json::to_string(&query(&graph, &state, found.symbol))?)
        };
        run().map_err(|e| contract_json(&e))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SnoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sno", env!("CARGO_PKG_VERSION")))
    }
}

/// Serves MCP on stdio until the client goes away.
pub fn serve(path: PathBuf) -> anyhow::Result<std::process::ExitCode> {
    let paths = RepoPaths::discover(&path)?;
    let journal = crate::commands::open_existing(&paths)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = SnoServer::new(paths, journal)
            .serve(rmcp::transport::stdio())
            .await?;
        server.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(std::process::ExitCode::SUCCESS)
}
