//! The MCP tools. Each tool answers one JSON document that names the state
//! it reflects (`as_of`); every failure is an error contract
//! (`{"error": {code, message, llm_hint, fixability, did_you_mean}}`).
//!
//! `call_tool` wraps every call: it measures it, records it in the session
//! transcript and the audit, turns argument errors into contracts with
//! near-miss argument names, and answers an unknown tool with the nearest
//! tool names.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use ractor::{Actor, ActorRef};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use sno_engine::session::{Session, SessionMsg};
use sno_journal::audit::{AuditEntry, Retrieval, ToolCall};
use sno_journal::event::Event;
use sno_journal::memory::{
    Binding, CheckpointCreated, DecisionLogged, LessonAnalysisSubmitted, MemoryId,
};
use sno_journal::session::{CallRecord, SessionRecord};
use sno_protocol::{ErrorContract, Fixability};

use super::args::*;
use super::core::{now_ms, Core, Snapshot};

tokio::task_local! {
    /// Set by a tool that answered from a state already in memory.
    static CACHE_HIT: Cell<bool>;
}

fn mark_cache(hit: bool) {
    let _ = CACHE_HIT.try_with(|c| c.set(c.get() || hit));
}

/// A connection's handle on its session actor.
#[derive(Clone)]
pub struct SessionHandle {
    pub id: String,
    actor: ActorRef<SessionMsg>,
}

impl SessionHandle {
    /// Records the client's name and version.
    pub fn client(&self, name: String) {
        let _ = self.actor.cast(SessionMsg::Client(name));
    }

    /// Stores the session and stops its actor.
    pub async fn close(&self) {
        let _ = ractor::call!(self.actor, |r| SessionMsg::Persist(Some(r)));
        self.actor.stop(None);
    }
}

/// One MCP session's server.
#[derive(Clone)]
pub struct SnoServer {
    core: Arc<Core>,
    session: SessionHandle,
    tool_router: ToolRouter<SnoServer>,
}

/// A tool's outcome: a JSON answer, or an error in the contract.
type Answer = Result<String, String>;

fn answer(run: impl FnOnce() -> anyhow::Result<Value>) -> Answer {
    run()
        .map(|v| v.to_string())
        .map_err(|e| contract_json(&crate::failure::contract_of(&e)))
}

fn contract_json(c: &ErrorContract) -> String {
    json!({ "error": c }).to_string()
}

fn nearest(word: &str, candidates: impl IntoIterator<Item = String>, n: usize) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = candidates
        .into_iter()
        .map(|c| (sno_query::lookup::similarity(word, &c), c))
        .filter(|(s, _)| *s > 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

#[tool_router]
impl SnoServer {
    /// A server for one connection, with a new session.
    pub async fn new(core: Arc<Core>) -> anyhow::Result<SnoServer> {
        let record = SessionRecord::start(String::new(), now_ms());
        let id = record.id.clone();
        let (actor, _) = Actor::spawn(None, Session, (core.journal.clone(), record)).await?;
        Ok(SnoServer {
            core,
            session: SessionHandle { id, actor },
            tool_router: Self::tool_router(),
        })
    }

    /// The session of this connection.
    pub fn session_handle(&self) -> SessionHandle {
        self.session.clone()
    }

    fn snapshot(&self, at: Option<&str>) -> anyhow::Result<Arc<Snapshot>> {
        let (s, hit) = self.core.snapshot(at)?;
        mark_cache(hit);
        Ok(s)
    }

    /// Whether a snapshot is the indexed head's (the only state whose files
    /// are compared with the work tree).
    fn at_indexed_head(&self, snap: &Snapshot) -> anyhow::Result<bool> {
        Ok(self
            .core
            .journal
            .head()?
            .is_some_and(|h| h.commit.to_hex() == snap.as_of.commit))
    }

    fn binding(&self) -> anyhow::Result<Binding> {
        let head = self.core.journal.head()?;
        Ok(Binding {
            branch: head.as_ref().and_then(|h| h.branch.clone()),
            commit: head.map(|h| h.commit),
            session: self.session.id.clone(),
        })
    }

    /// A symbol-lookup error with, when configured, the nearest symbols.
    fn lookup_error(
        &self,
        snap: &Snapshot,
        name: &str,
        e: sno_query::lookup::LookupError,
    ) -> anyhow::Error {
        let mut c = crate::queries::lookup_contract(e);
        if self.core.config.retrieval_context {
            // The near misses, located, so the agent can go on without
            // another call; then whatever the name tiers find.
            let mut hits: Vec<_> = c
                .did_you_mean
                .iter()
                .filter_map(|n| {
                    sno_query::find_symbols(&snap.state, n, 1)
                        .into_iter()
                        .next()
                })
                .map(|m| m.symbol)
                .collect();
            if hits.is_empty() {
                hits = sno_query::find_symbols(&snap.state, name, 5)
                    .into_iter()
                    .map(|m| m.symbol)
                    .collect();
            }
            hits.truncate(5);
            c.retrieval_context = Some(hits.into());
        }
        c.into()
    }

    // ---- state ----------------------------------------------------------

    #[tool(
        description = "What sno has indexed: commit, branch, files/symbols/edges per language, journal length, failures. Call it first: every other answer reflects this state."
    )]
    fn status(&self) -> Answer {
        answer(|| {
            let j = &self.core.journal;
            let snap = self.snapshot(None)?;
            let len = j.len()?;
            let v = self.core.status_cached(&snap, len, || {
                let last = j.last_index_run()?;
                let indexed = j.head()?;
                let r = crate::report::status_report(
                    self.core.paths.root.display().to_string(),
                    &snap.state,
                    indexed.as_ref(),
                    len,
                    j.commits_indexed()?,
                    last.as_ref(),
                    self.core.mask_secrets,
                );
                let mut r = r;
                r.skipped_commits = crate::commands::skipped_commits(j)?;
                Ok(serde_json::to_value(&r)?)
            })?;
            Ok((*v).clone())
        })
    }

    #[tool(
        description = "Check the journal's integrity: the hash chain of events and that the views equal a replay of the journal. Use when answers look inconsistent."
    )]
    fn verify(&self) -> Answer {
        answer(|| {
            let report = sno_journal::verify::verify(&self.core.journal);
            Ok(json!({ "ok": report.problems.is_empty(), "report": report }))
        })
    }

    // ---- retrieval ------------------------------------------------------

    #[tool(
        description = "Search the repository and get a context package: the most relevant symbols' source in a token budget, under a header saying which commit it reflects, how each item matched and whether anything was left out. Use for questions about where or how something is done."
    )]
    fn search(&self, Parameters(a): Parameters<SearchArgs>) -> Answer {
        let t = Instant::now();
        let mut audit = None;
        let out = answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let searcher = self.core.searcher(&snap)?;
            let (owner, retriever) = (searcher.borrow_owner(), searcher.borrow_dependent());
            let request = sno_query::search::SearchRequest {
                query: &a.query,
                limit: a.limit.unwrap_or(10).clamp(1, 50),
                scope: a.scope.as_deref(),
                lexical_only: false,
                weights: Default::default(),
            };
            let hits = retriever.search(&request, &owner.history, &self.core.lesson_paths());
            let head_differs = self.core.head_differs(&snap.as_of);
            let edited = |path: &str, rec: &sno_journal::model::FileRecord| {
                crate::search::edited_in_work_tree(&self.core.work_tree, path, rec)
            };
            let pkg = sno_query::context::build_package(&sno_query::context::PackageInput {
                query: &a.query,
                state: &snap.state,
                retriever,
                hits: &hits,
                as_of: snap.as_of.clone(),
                head_differs,
                semantic_off_reason: if retriever.has_semantic() {
                    None
                } else {
                    self.core.semantic_off()
                },
                scope: a.scope.as_deref(),
                max_tokens: a.max_tokens.unwrap_or(2000).max(50),
                read: &|rec| self.core.blob(rec.blob),
                edited: self.at_indexed_head(&snap)?.then_some(&edited),
            });
            audit = Some((
                hits.len(),
                hits.first().map(|h| h.signals.total()).unwrap_or(0.0),
            ));
            Ok(serde_json::to_value(&pkg)?)
        });
        let (hits, top_score) = audit.unwrap_or((0, 0.0));
        self.core.audit(AuditEntry::Retrieval(Retrieval {
            session: self.session.id.clone(),
            query: a.query.clone(),
            hits: hits as u32,
            top_score,
            latency_us: t.elapsed().as_micros() as u64,
        }));
        out
    }

    #[tool(
        description = "Find symbol definitions by name (exact, then case-insensitive, prefix, fuzzy) with path:line and signature."
    )]
    fn search_symbols(&self, Parameters(a): Parameters<SymbolsArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let hits = sno_query::find_symbols(&snap.state, &a.name, a.limit.unwrap_or(20).max(1));
            if hits.is_empty() {
                let e = sno_query::lookup::LookupError::NotFound {
                    query: a.name.clone(),
                    did_you_mean: sno_query::lookup::did_you_mean(&snap.state, &a.name, 5),
                };
                return Err(self.lookup_error(&snap, &a.name, e));
            }
            Ok(json!({ "as_of": snap.as_of, "results": hits }))
        })
    }

    #[tool(
        description = "One symbol's definition and source: give a name, Class.method or path:line. Ambiguous names list the candidates in did_you_mean."
    )]
    fn get_symbol(&self, Parameters(a): Parameters<NameArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let found = sno_query::resolve_one(&snap.state, &a.name)
                .map_err(|e| self.lookup_error(&snap, &a.name, e))?;
            let rec = &snap.state[found.path];
            let bytes = self.core.blob(rec.blob).ok_or_else(|| {
                ErrorContract::new(
                    "SNO-GIT",
                    format!("the content of {} is not in the repository's objects", found.path),
                    "The indexed commit may have been garbage-collected; ask the user to run `sno init` again.",
                    Fixability::Medium,
                )
            })?;
            let source = sno_query::lookup::source_of(found.symbol, &bytes);
            Ok(json!({ "as_of": snap.as_of, "symbol": found.info(), "source": source }))
        })
    }

    #[tool(
        description = "The symbols of one file, nested, with signatures and line numbers, without bodies: a cheap way to see a file's shape."
    )]
    fn file_outline(&self, Parameters(a): Parameters<FileArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let rel = self.core.work_tree.relative(&a.file)?;
            let rec = snap
                .state
                .get(&rel)
                .ok_or_else(|| crate::queries::unknown_file(&snap.state, &rel))?;
            Ok(
                json!({ "as_of": snap.as_of, "file": rel, "outline": sno_query::outline::outline(rec) }),
            )
        })
    }

    #[tool(
        description = "Everything that refers to a symbol: resolved calls and inheritance (exact), then calls that only share its name (heuristic: true)."
    )]
    fn references(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        self.graph(&a, |g, _, s| g.references(s))
    }

    #[tool(
        description = "Who calls a symbol, transitively up to `depth` hops, with path:line of each call."
    )]
    fn callers(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        let depth = a.depth.unwrap_or(1).clamp(1, 5);
        self.graph(&a, |g, _, s| g.callers(s, depth))
    }

    #[tool(
        description = "What a symbol calls, transitively up to `depth` hops; unresolved (external) callees are listed as heuristic."
    )]
    fn callees(&self, Parameters(a): Parameters<GraphArgs>) -> Answer {
        let depth = a.depth.unwrap_or(1).clamp(1, 5);
        self.graph(&a, |g, st, s| g.callees(st, s, depth))
    }

    #[tool(
        description = "Regex search over the indexed files' text; each hit names its enclosing symbol."
    )]
    fn search_text(&self, Parameters(a): Parameters<TextArgs>) -> Answer {
        answer(|| {
            let re = regex::RegexBuilder::new(&a.pattern)
                .size_limit(1 << 22)
                .build()
                .map_err(|e| {
                    ErrorContract::new(
                        "SNO-BAD-REGEX",
                        format!(
                            "`{}` is not a valid regular expression: {e}",
                            cut(&a.pattern, 200)
                        ),
                        "Fix the pattern (Rust regex syntax; escape `(` as `\\(`).",
                        Fixability::Trivial,
                    )
                })?;
            let snap = self.snapshot(a.at.as_deref())?;
            let limit = a.limit.unwrap_or(100).clamp(1, 1000);
            let (hits, truncated) =
                sno_query::text::grep(&snap.state, &re, limit, |rec| self.core.blob(rec.blob));
            Ok(
                json!({ "as_of": snap.as_of, "results": hits, "truncated": truncated, "limit": limit }),
            )
        })
    }

    #[tool(
        description = "The repository's most central files and symbols (PageRank over calls and inheritance): a map to start exploring from."
    )]
    fn repo_map(&self, Parameters(a): Parameters<MapArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let (docs, rank) = sno_query::map::symbol_ranks(&snap.state);
            let files: Vec<Value> = sno_query::map::ranked_files(&docs, &rank)
                .into_iter()
                .take(a.files.unwrap_or(20).clamp(1, 500))
                .map(|(path, score, syms)| {
                    json!({
                        "path": path,
                        "score": score,
                        "symbols": syms.iter().take(5).map(|(i, _)| docs[*i].info()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            Ok(json!({ "as_of": snap.as_of, "files": files }))
        })
    }

    #[tool(
        description = "Before editing a line: the symbol that encloses it, that symbol's callers and callees, its siblings in the file, and the decisions and approved lessons that touch the file. Lines are the indexed commit's; `edited_in_work_tree` says the file has changed since. Call it before changing code you did not write."
    )]
    fn context_for_edit(&self, Parameters(a): Parameters<EditArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let rel = self.core.work_tree.relative(&a.file)?;
            let rec = snap
                .state
                .get(&rel)
                .ok_or_else(|| crate::queries::unknown_file(&snap.state, &rel))?;
            let line = a.line.max(1);
            // The innermost symbol whose span holds the line.
            let enclosing = rec
                .symbols
                .iter()
                .filter(|s| s.span.start_line <= line && line <= s.span.end_line)
                .min_by_key(|s| s.span.end_line - s.span.start_line);
            let graph = self.core.graph(&snap);
            let graph = graph.borrow_dependent();
            let info = |s: &sno_journal::model::Symbol| {
                sno_query::lookup::Located {
                    path: &rel,
                    symbol: s,
                }
                .info()
            };
            let (symbol, callers, callees, siblings) = match enclosing {
                Some(s) => (
                    Some(info(s)),
                    graph.callers(s, 1),
                    graph.callees(&snap.state, s, 1),
                    rec.symbols
                        .iter()
                        .filter(|o| o.parent == s.parent && o.id != s.id)
                        .map(|o| json!({ "name": o.qualified_name, "kind": o.kind.name(), "line": o.span.start_line }))
                        .collect::<Vec<_>>(),
                ),
                None => (None, Vec::new(), Vec::new(), Vec::new()),
            };
            let memory = self.core.memory()?;
            let (decisions, lessons) = memory.touching(&rel);
            Ok(json!({
                "as_of": snap.as_of,
                "file": rel,
                "line": line,
                "enclosing": symbol,
                "callers": callers,
                "callees": callees,
                "siblings": siblings,
                "decisions": decisions,
                "lessons": lessons.iter().map(|l| json!({ "id": l.proposed.id, "rule": l.rule(), "summary": l.proposed.summary })).collect::<Vec<_>>(),
                "diagnostics": rec.diagnostics,
                // Lines above are the indexed commit's: say when the file
                // the agent is about to edit no longer has them.
                // null when the answer is about another commit.
                "edited_in_work_tree": self.at_indexed_head(&snap)?.then(|| {
                    crate::search::edited_in_work_tree(&self.core.work_tree, &rel, rec)
                }),
            }))
        })
    }

    #[tool(
        description = "Symbols added, removed and changed between two indexed commits (`from`, `to`; `to` defaults to the indexed head), or between the indexed head and the work tree (`to`: \"worktree\") to see what uncommitted edits changed."
    )]
    fn changes(&self, Parameters(a): Parameters<ChangesArgs>) -> Answer {
        answer(|| {
            let worktree = a.to.as_deref() == Some("worktree");
            let from =
                match (a.from.as_deref(), worktree) {
                    (Some(f), _) => Some(f),
                    (None, true) => None,
                    (None, false) => return Err(ErrorContract::new(
                        "SNO-BAD-ARGS",
                        "`from` is required unless `to` is \"worktree\"",
                        "Pass `from` (a commit-ish that was indexed), or `to: \"worktree\"` alone.",
                        Fixability::Trivial,
                    )
                    .into()),
                };
            let old = self.snapshot(from)?;
            let (new_state, to) = if worktree {
                (
                    worktree_state(&self.core.work_tree, &old.state, self.core.mask_secrets)?,
                    json!("worktree"),
                )
            } else {
                let new = self.snapshot(a.to.as_deref())?;
                (new.state.clone(), json!(new.as_of))
            };
            let changes = sno_query::changes::symbol_changes(&old.state, &new_state);
            Ok(json!({ "from": old.as_of, "to": to, "changes": changes }))
        })
    }

    #[tool(
        description = "When a file or symbol appeared and changed, from the journal: each indexed commit that touched it, with its summary and time. Give `file`, or `symbol` (a name, Class.method or path:line)."
    )]
    fn history(&self, Parameters(a): Parameters<HistoryArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(None)?;
            let (path, symbol) = match (&a.file, &a.symbol) {
                (Some(f), _) => (self.core.work_tree.relative(f)?, None),
                (None, Some(name)) => {
                    let found = sno_query::resolve_one(&snap.state, name)
                        .map_err(|e| self.lookup_error(&snap, name, e))?;
                    (found.path.to_string(), Some(found.symbol.clone()))
                }
                (None, None) => {
                    return Err(ErrorContract::new(
                        "SNO-BAD-ARGS",
                        "give `file` or `symbol`",
                        "Pass `file` (a repository path) or `symbol` (a name).",
                        Fixability::Trivial,
                    )
                    .into())
                }
            };
            let events = history_of(&self.core.journal, &path, symbol.as_ref())?;
            if events.is_empty() && symbol.is_none() && !snap.state.contains_key(&path) {
                return Err(crate::queries::unknown_file(&snap.state, &path).into());
            }
            Ok(json!({
                "as_of": snap.as_of,
                "file": path,
                "symbol": symbol.map(|s| s.qualified_name),
                "commits": events,
            }))
        })
    }

    #[tool(
        description = "Files that changed in the same commits as a file (share of its commits, newest history first): what else usually needs an edit when this file does."
    )]
    fn co_changed(&self, Parameters(a): Parameters<CoChangedArgs>) -> Answer {
        answer(|| {
            let snap = self.snapshot(None)?;
            let rel = self.core.work_tree.relative(&a.file)?;
            if !snap.state.contains_key(&rel) {
                return Err(crate::queries::unknown_file(&snap.state, &rel).into());
            }
            let h = sno_query::search::HistoryFacts::from_journal(&self.core.journal, snap.seq)?;
            let own = h.touches.get(&rel).map(Vec::len).unwrap_or(0);
            let mut pairs: Vec<(String, f32, usize)> = h
                .touches
                .iter()
                .filter(|(p, _)| **p != rel)
                .map(|(p, ks)| {
                    let both = h
                        .touches
                        .get(&rel)
                        .map(|mine| ks.iter().filter(|k| mine.contains(k)).count())
                        .unwrap_or(0);
                    (p.clone(), h.co_change(&rel, p), both)
                })
                .filter(|(_, share, _)| *share > 0.0)
                .collect();
            pairs.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
            pairs.truncate(a.limit.unwrap_or(10).clamp(1, 100));
            Ok(json!({
                "as_of": snap.as_of,
                "file": rel,
                "commits_touching_file": own,
                "co_changed": pairs.iter().map(|(p, s, n)| json!({ "path": p, "share": s, "commits": n })).collect::<Vec<_>>(),
                "note": "Commits touching more than 50 files (imports, mass renames) are not counted.",
            }))
        })
    }

    // ---- memory ---------------------------------------------------------

    #[tool(
        description = "Save where you are (what you did, what is next, the files involved) as a checkpoint bound to the branch and commit, so you or another agent can resume with restore_checkpoint after the context is reset."
    )]
    fn create_checkpoint(&self, Parameters(a): Parameters<CheckpointArgs>) -> Answer {
        answer(|| {
            let files = self.confine_all(&a.files)?;
            let c = CheckpointCreated {
                id: MemoryId::generate("ckpt"),
                bound: self.binding()?,
                name: a.name.clone(),
                summary: a.summary.clone(),
                files,
                tokens_used: a.tokens_used,
            };
            let seq = self
                .core
                .journal
                .append_memory(Event::CheckpointCreated(c.clone()))?;
            Ok(json!({ "checkpoint": c, "seq": seq.0 }))
        })
    }

    #[tool(
        description = "Resume from a checkpoint: its summary and files, the decisions logged since, and whether the indexed commit moved since it was made."
    )]
    fn restore_checkpoint(&self, Parameters(a): Parameters<IdArgs>) -> Answer {
        answer(|| {
            let memory = self.core.memory()?;
            let id = MemoryId(a.id.clone());
            let c = memory.checkpoint(&id).ok_or_else(|| {
                unknown_memory(
                    &a.id,
                    memory.checkpoints.iter().map(|c| c.created.id.0.clone()),
                )
            })?;
            let head = self.core.journal.head()?;
            let since: Vec<_> = memory.decisions.iter().filter(|d| d.seq > c.seq).collect();
            let moved = head
                .as_ref()
                .map(|h| Some(h.commit) != c.created.bound.commit)
                .unwrap_or(false);
            Ok(json!({
                "checkpoint": c,
                "decisions_since": since,
                "head": head.map(|h| json!({ "commit": h.commit.to_hex(), "branch": h.branch })),
                "head_moved": moved,
            }))
        })
    }

    #[tool(
        description = "Record a design decision and why, bound to the branch and commit, optionally with the files it concerns; it is shown to agents editing those files."
    )]
    fn log_decision(&self, Parameters(a): Parameters<DecisionArgs>) -> Answer {
        answer(|| {
            let d = DecisionLogged {
                id: MemoryId::generate("dec"),
                bound: self.binding()?,
                title: a.title.clone(),
                rationale: a.rationale.clone(),
                files: self.confine_all(&a.files)?,
            };
            let seq = self
                .core
                .journal
                .append_memory(Event::DecisionLogged(d.clone()))?;
            Ok(json!({ "decision": d, "seq": seq.0 }))
        })
    }

    #[tool(
        description = "Decisions logged so far, newest last; `file` keeps those about one file."
    )]
    fn list_decisions(&self, Parameters(a): Parameters<ListArgs>) -> Answer {
        answer(|| {
            let memory = self.core.memory()?;
            let file = a
                .file
                .as_deref()
                .map(|f| self.core.work_tree.relative(f))
                .transpose()?;
            let all: Vec<_> = memory
                .decisions
                .iter()
                .filter(|d| file.as_ref().is_none_or(|f| d.logged.files.contains(f)))
                .collect();
            let (decisions, page) = newest_page(all, a.limit, a.offset);
            Ok(json!({ "decisions": decisions, "page": page }))
        })
    }

    #[tool(
        description = "What agents must follow: lessons humans approved (each with its rule and the files it concerns) and logged decisions, newest last, in pages (`limit`, `offset`). `file` keeps what touches one file."
    )]
    fn get_approved_memory(&self, Parameters(a): Parameters<ListArgs>) -> Answer {
        answer(|| {
            let memory = self.core.memory()?;
            let file = a
                .file
                .as_deref()
                .map(|f| self.core.work_tree.relative(f))
                .transpose()?;
            let touches = |files: &[String]| file.as_ref().is_none_or(|f| files.contains(f));
            let lessons: Vec<_> = memory
                .lessons
                .iter()
                .filter(|l| l.is_approved() && touches(&l.proposed.files))
                .map(|l| json!({ "id": l.proposed.id, "rule": l.rule(), "summary": l.proposed.summary, "files": l.proposed.files, "bound": l.proposed.bound, "review": l.review }))
                .collect();
            let decisions: Vec<_> = memory
                .decisions
                .iter()
                .filter(|d| touches(&d.logged.files))
                .collect();
            // One page over both lists: lessons first (they are rules).
            let all: Vec<(bool, usize)> = (0..lessons.len())
                .map(|i| (true, i))
                .chain((0..decisions.len()).map(|i| (false, i)))
                .collect();
            let (shown, page) = newest_page(all, a.limit, a.offset);
            let lessons: Vec<_> = shown
                .iter()
                .filter(|(l, _)| *l)
                .map(|(_, i)| &lessons[*i])
                .collect();
            let decisions: Vec<_> = shown
                .iter()
                .filter(|(l, _)| !*l)
                .map(|(_, i)| decisions[*i])
                .collect();
            Ok(json!({ "lessons": lessons, "decisions": decisions, "page": page }))
        })
    }

    #[tool(
        description = "Lessons waiting for review: reverts sno found in the history, with any analysis submitted, in pages (`limit`, `offset`). Analyse one with submit_lesson_analysis; a human approves it with `sno lessons approve`."
    )]
    fn get_pending_memory(&self, Parameters(a): Parameters<PageArgs>) -> Answer {
        answer(|| {
            let memory = self.core.memory()?;
            let pending: Vec<_> = memory
                .lessons
                .iter()
                .filter(|l| {
                    !matches!(
                        l.status,
                        sno_journal::memory::LessonStatus::Approved
                            | sno_journal::memory::LessonStatus::Rejected
                    )
                })
                .collect();
            let (lessons, page) = newest_page(pending, a.limit, a.offset);
            Ok(json!({ "lessons": lessons, "page": page }))
        })
    }

    #[tool(
        description = "Submit your analysis of a pending lesson: what went wrong in the reverted change and the rule to follow next time (one imperative sentence). A human reviews it before agents are told."
    )]
    fn submit_lesson_analysis(&self, Parameters(a): Parameters<LessonArgs>) -> Answer {
        answer(|| {
            let ev = LessonAnalysisSubmitted {
                lesson: MemoryId(a.lesson_id.clone()),
                bound: self.binding()?,
                analysis: a.analysis.clone(),
                rule: a.rule.clone(),
            };
            let seq = self
                .core
                .journal
                .append_memory(Event::LessonAnalysisSubmitted(ev))?;
            let memory = self.core.memory()?;
            Ok(json!({ "lesson": memory.lesson(&MemoryId(a.lesson_id.clone())), "seq": seq.0 }))
        })
    }

    #[tool(
        description = "Tell sno how full your context window is (tokens used and capacity). Past the threshold (80% by default) it recommends create_checkpoint before your context is compacted."
    )]
    fn signal_low_context(&self, Parameters(a): Parameters<ContextArgs>) -> Answer {
        answer(|| {
            if a.capacity == 0 {
                return Err(ErrorContract::new(
                    "SNO-BAD-ARGS",
                    "`capacity` must be greater than 0",
                    "Pass your context window size in tokens as `capacity`.",
                    Fixability::Trivial,
                )
                .into());
            }
            let threshold = self.core.config.low_context_threshold.unwrap_or(0.8);
            let used = a.tokens_used as f64 / a.capacity as f64;
            let _ = self.session.actor.cast(SessionMsg::Context {
                used: a.tokens_used,
                capacity: a.capacity,
            });
            let recommend = used >= threshold;
            Ok(json!({
                "used_share": used,
                "threshold": threshold,
                "recommend_checkpoint": recommend,
                "advice": if recommend {
                    "Call create_checkpoint now with a summary of what is done and what is next; after compaction, call restore_checkpoint with its id."
                } else {
                    "Plenty of context left; no action needed."
                },
            }))
        })
    }

    // ---- sessions -------------------------------------------------------

    #[tool(
        description = "This session (or another, by `session_id`): id, client, start time, call and error counts, cache hits. Sessions are kept after the server stops."
    )]
    async fn session_info(&self, Parameters(a): Parameters<SessionArgs>) -> Answer {
        match self.find_session(a.session_id.as_deref()).await {
            Ok(s) => Ok(json!({
                "id": s.id, "client": s.client, "started_ms": s.started_ms, "last_ms": s.last_ms,
                "calls": s.calls, "errors": s.errors, "cache_hits": s.cache_hits, "context": s.context,
                "current": s.id == self.session.id,
                "server_pid": std::process::id(),
            })
            .to_string()),
            Err(e) => Err(contract_json(&e)),
        }
    }

    #[tool(
        description = "The last calls of this session (or another, by `session_id`), oldest first: tool, argument digest, error code, result size, latency."
    )]
    async fn session_history(&self, Parameters(a): Parameters<SessionArgs>) -> Answer {
        match self.find_session(a.session_id.as_deref()).await {
            Ok(s) => {
                let limit = a.limit.unwrap_or(50).max(1);
                let skip = s.transcript.len().saturating_sub(limit);
                let calls: Vec<_> = s.transcript.iter().skip(skip).collect();
                Ok(json!({ "id": s.id, "calls": calls }).to_string())
            }
            Err(e) => Err(contract_json(&e)),
        }
    }

    // ---- syntax ---------------------------------------------------------

    #[tool(
        description = "Check syntax with tree-sitter before or after an edit: give `file` (read from the work tree) or `code` with its `language` (python, javascript, typescript, tsx, go, rust, java, c, cpp, ruby, csharp, php, kotlin, swift, scala). Returns diagnostics with line and column; none means it parses."
    )]
    fn validate_syntax(&self, Parameters(a): Parameters<SyntaxArgs>) -> Answer {
        answer(|| {
            let (lang, source, file) = match (&a.file, &a.code) {
                (Some(f), None) => {
                    let rel = self.core.work_tree.relative(f)?;
                    // Links are followed only within the work tree; .git
                    // and secret files are never read.
                    let source = self.core.work_tree.read(&rel)?;
                    let lang = match &a.language {
                        Some(l) => language(l)?,
                        None => sno_journal::model::Language::from_path(&rel).ok_or_else(|| {
                            ErrorContract::new(
                                "SNO-UNSUPPORTED-LANGUAGE",
                                format!("sno cannot tell the language of {rel}"),
                                "Pass `language` explicitly, or a file with a known extension.",
                                Fixability::Trivial,
                            )
                        })?,
                    };
                    (lang, source, Some(rel))
                }
                (None, Some(code)) => {
                    let l = a.language.as_deref().ok_or_else(|| {
                        ErrorContract::new(
                            "SNO-BAD-ARGS",
                            "`language` is required with `code`",
                            "Pass `language`, e.g. \"python\".",
                            Fixability::Trivial,
                        )
                    })?;
                    (language(l)?, code.as_bytes().to_vec(), None)
                }
                _ => {
                    return Err(ErrorContract::new(
                        "SNO-BAD-ARGS",
                        "give exactly one of `file` or `code`",
                        "Pass `file` (a repository path) or `code` with `language`.",
                        Fixability::Trivial,
                    )
                    .into())
                }
            };
            let mut facts = sno_extract::extract(lang, &source);
            // Diagnostics quote the source.
            if self.core.mask_secrets {
                sno_index::record::mask_facts(&mut facts, &source);
            }
            Ok(json!({
                "file": file,
                "language": lang.name(),
                "ok": facts.diagnostics.is_empty(),
                "diagnostics": facts.diagnostics,
                "symbols": facts.symbols.len(),
            }))
        })
    }
}

impl SnoServer {
    /// Repository paths for the files an agent named, under the rule.
    fn confine_all(
        &self,
        files: &Option<Vec<String>>,
    ) -> Result<Vec<String>, sno_index::confine::Refused> {
        files
            .iter()
            .flatten()
            .map(|f| self.core.work_tree.relative(f))
            .collect()
    }

    /// Runs a graph query on the symbol `a.name` names.
    fn graph(
        &self,
        a: &GraphArgs,
        query: impl FnOnce(
            &sno_query::graph::Graph,
            &sno_journal::delta::State,
            &sno_journal::model::Symbol,
        ) -> Vec<sno_protocol::query::Reference>,
    ) -> Answer {
        answer(|| {
            let snap = self.snapshot(a.at.as_deref())?;
            let found = sno_query::resolve_one(&snap.state, &a.name)
                .map_err(|e| self.lookup_error(&snap, &a.name, e))?;
            let graph = self.core.graph(&snap);
            let refs = query(graph.borrow_dependent(), &snap.state, found.symbol);
            Ok(json!({ "as_of": snap.as_of, "symbol": found.info(), "results": refs }))
        })
    }

    async fn find_session(&self, id: Option<&str>) -> Result<SessionRecord, ErrorContract> {
        let internal = |e: String| {
            ErrorContract::new(
                "SNO-INTERNAL",
                e,
                "Retry; report it if it repeats.",
                Fixability::Hard,
            )
        };
        match id {
            None | Some("") => ractor::call!(self.session.actor, SessionMsg::Info)
                .map_err(|e| internal(e.to_string())),
            Some(id) if id == self.session.id => {
                ractor::call!(self.session.actor, SessionMsg::Info)
                    .map_err(|e| internal(e.to_string()))
            }
            Some(id) => match self.core.journal.session(id) {
                Ok(Some(s)) => Ok(s),
                Ok(None) => {
                    let mut c = ErrorContract::new(
                        "SNO-UNKNOWN-SESSION",
                        format!("no session `{id}`"),
                        "Call session_info without arguments for the current session's id.",
                        Fixability::Trivial,
                    );
                    c.did_you_mean =
                        nearest(id, self.core.journal.session_ids().unwrap_or_default(), 3);
                    Err(c)
                }
                Err(e) => Err(internal(e.to_string())),
            },
        }
    }

    /// Records a finished call in the session and the audit.
    fn record(
        &self,
        tool: &str,
        args: &str,
        t: Instant,
        result_bytes: usize,
        error: Option<String>,
        cache_hit: bool,
    ) {
        let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(args.as_bytes()));
        let latency_us = t.elapsed().as_micros() as u64;
        let _ = self.session.actor.cast(SessionMsg::Called(CallRecord {
            time_ms: now_ms(),
            tool: tool.to_string(),
            args_digest: digest.clone(),
            args_preview: cut(args, 200),
            error: error.clone(),
            result_bytes: result_bytes as u64,
            latency_us,
            cache_hit,
        }));
        self.core.audit(AuditEntry::ToolCall(ToolCall {
            session: self.session.id.clone(),
            tool: tool.to_string(),
            args_digest: digest,
            result_bytes: result_bytes as u64,
            latency_us,
            error,
        }));
    }

    /// An argument error from rmcp, in the contract, with the nearest
    /// argument names when one was misspelled.
    fn bad_args(&self, tool: &str, e: &ErrorData) -> ErrorContract {
        let mut c = ErrorContract::new(
            "SNO-BAD-ARGS",
            format!("invalid arguments for `{tool}`: {}", cut(&e.message, 500)),
            "Fix the arguments to match the tool's input schema (tools/list shows it).",
            Fixability::Trivial,
        );
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
        if let Some(field) = e
            .message
            .split("unknown field `")
            .nth(1)
            .and_then(|r| r.split('`').next())
        {
            c.did_you_mean = nearest(field, known, 3);
        }
        c
    }
}

fn is_contract(r: &CallToolResult) -> bool {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .and_then(|t| serde_json::from_str::<Value>(&t.text).ok())
        .is_some_and(|v| v["error"]["code"].is_string())
}

fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The page of `items` (in journal order, newest last) that ends `offset`
/// items before the newest, at most `limit` (default 50, at most 200) long,
/// kept in journal order; and where it is.
fn newest_page<T>(
    mut items: Vec<T>,
    limit: Option<usize>,
    offset: Option<usize>,
) -> (Vec<T>, Value) {
    let total = items.len();
    let limit = limit.unwrap_or(50).clamp(1, 200);
    let offset = offset.unwrap_or(0).min(total);
    let end = total - offset;
    let start = end.saturating_sub(limit);
    items.truncate(end);
    items.drain(..start);
    let next = (start > 0).then_some(total - start);
    (
        items,
        json!({ "total": total, "offset": offset, "returned": end - start, "next_offset": next }),
    )
}

fn unknown_memory(id: &str, known: impl IntoIterator<Item = String>) -> ErrorContract {
    let mut c = ErrorContract::new(
        "SNO-UNKNOWN-MEMORY",
        format!("no checkpoint, decision or lesson `{id}`"),
        "Use an id returned by create_checkpoint, list_decisions or get_pending_memory.",
        Fixability::Trivial,
    );
    c.did_you_mean = nearest(id, known, 3);
    c
}

fn language(name: &str) -> Result<sno_journal::model::Language, ErrorContract> {
    use sno_journal::model::Language;
    let all = Language::ALL;
    let lower = name.to_ascii_lowercase();
    let alias = match lower.as_str() {
        "py" => "python",
        "js" | "jsx" => "javascript",
        "ts" => "typescript",
        "c++" | "cc" => "cpp",
        "rb" => "ruby",
        "rs" => "rust",
        "cs" | "c#" => "csharp",
        "kt" => "kotlin",
        other => other,
    };
    all.into_iter().find(|l| l.name() == alias).ok_or_else(|| {
        let mut c = ErrorContract::new(
            "SNO-UNSUPPORTED-LANGUAGE",
            format!("sno does not parse `{name}`"),
            "Use one of: python, javascript, typescript, tsx, go, rust, java, c, cpp, ruby, csharp, php, kotlin, swift, scala.",
            Fixability::Trivial,
        );
        c.did_you_mean = nearest(name, all.iter().map(|l| l.name().to_string()), 3);
        c
    })
}

/// The indexed state with tracked files' work-tree content parsed in place
/// of the indexed content (symbols only: a diff of symbols needs no edges).
fn worktree_state(
    work_tree: &sno_index::confine::WorkTree,
    indexed: &sno_journal::delta::State,
    mask_secrets: bool,
) -> anyhow::Result<sno_journal::delta::State> {
    use sno_index::confine::WorkTreeFile;
    let mut state = indexed.clone();
    for (path, rec) in indexed {
        let Some(lang) = rec.language else { continue };
        match work_tree.compare(path, rec.blob, rec.size) {
            Ok(WorkTreeFile::Same) => {}
            Ok(WorkTreeFile::Edited) => {
                let bytes = work_tree.read(path)?;
                let facts = sno_extract::extract(lang, &bytes);
                let mut facts = facts;
                let masked = if mask_secrets {
                    sno_index::record::mask_facts(&mut facts, &bytes)
                } else {
                    0
                };
                let new = sno_index::record::parsed_record(
                    path,
                    rec.blob,
                    bytes.len() as u64,
                    &bytes,
                    facts,
                    masked,
                );
                state.insert(path.clone(), new);
            }
            Ok(WorkTreeFile::Deleted) => {
                state.remove(path);
            }
            // Taking an unreadable file as unchanged would be a wrong diff.
            Err(e) => anyhow::bail!("could not read {path} in the work tree: {e}"),
        }
    }
    Ok(state)
}

/// Each journaled commit whose deltas touched `path` (or, with `symbol`,
/// that symbol), oldest first.
fn history_of(
    journal: &sno_journal::Journal,
    path: &str,
    symbol: Option<&sno_journal::model::Symbol>,
) -> anyhow::Result<Vec<Value>> {
    use sno_journal::event::FileChange;
    let mut out = Vec::new();
    let events = journal.events(sno_journal::model::Seq(0), None)?;
    // The history of the indexed state: commits a rollback or a reset left
    // behind are not in it.
    for i in sno_journal::replay::lineage(&events) {
        let (seq, env) = &events[i];
        let Event::CommitIndexed(c) = &env.event else {
            continue;
        };
        for d in c.deltas.iter().filter(|d| d.path == path) {
            let change = match (&d.change, symbol) {
                (FileChange::Reresolved, _) => continue,
                (FileChange::Deleted, None) => "file deleted",
                (FileChange::Added(_), None) => "file added",
                (FileChange::Modified(_), None) => "file modified",
                (_, Some(s)) => {
                    let added = d.symbols_added.iter().any(|x| x.id == s.id);
                    let removed = d.symbols_removed.contains(&s.id);
                    match (added, removed) {
                        (true, true) => "symbol changed",
                        (true, false) => "symbol added",
                        (false, true) => "symbol removed",
                        (false, false) => continue,
                    }
                }
            };
            out.push(json!({
                "seq": seq.0,
                "commit": c.commit.to_hex(),
                "summary": c.summary,
                "time": c.time,
                "change": change,
            }));
        }
    }
    Ok(out)
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
        if KNOWN.contains(&method.as_str()) {
            let c = ErrorContract::new(
                "SNO-BAD-ARGS",
                format!("invalid params for `{method}`"),
                "tools/call takes {\"name\": <tool name>, \"arguments\": {...}}; tools/list shows each tool's arguments.",
                Fixability::Trivial,
            );
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                c.message.clone(),
                Some(json!({ "error": c })),
            ));
        }
        let c = ErrorContract::new(
            "SNO-UNKNOWN-METHOD",
            format!("sno does not answer `{}`", cut(&method, 100)),
            "Use the MCP methods initialize, tools/list and tools/call.",
            Fixability::Trivial,
        );
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            c.message.clone(),
            Some(json!({ "error": c })),
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
            let mut c = ErrorContract::new(
                "SNO-UNKNOWN-TOOL",
                format!("sno has no tool `{}`", cut(&tool, 100)),
                "Call tools/list for sno's tools; did_you_mean lists the nearest names.",
                Fixability::Trivial,
            );
            c.did_you_mean = nearest(
                &tool,
                self.tool_router
                    .list_all()
                    .into_iter()
                    .map(|t| t.name.to_string()),
                3,
            );
            self.record(&tool, &args, t, 0, Some(c.code.clone()), false);
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                c.message.clone(),
                Some(json!({ "error": c })),
            ));
        }
        let tcc = ToolCallContext::new(self, request, context);
        let run = CACHE_HIT.scope(Cell::new(false), async {
            let r = self.tool_router.call(tcc).await;
            (r, CACHE_HIT.with(Cell::get))
        });
        // Tool bodies compute synchronously (a first search builds indexes
        // for a second or more): off the runtime's few workers, so other
        // sessions, the socket and the idle clock keep running meanwhile.
        let handle = tokio::runtime::Handle::current();
        let (result, hit) = if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        {
            tokio::task::block_in_place(|| handle.block_on(run))
        } else {
            run.await
        };
        let result = match result {
            // rmcp answers arguments that do not fit the schema with a bare
            // text error: put it in the contract.
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) && !is_contract(&r) => {
                let message = r
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                let e = ErrorData::invalid_params(message, None);
                CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                    contract_json(&self.bad_args(&tool, &e)),
                )]))
            }
            Ok(r) => r,
            // rmcp rejects arguments that do not fit the schema before the
            // tool runs: answer in the contract, as a tool error the model sees.
            Err(e) => CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
                contract_json(&self.bad_args(&tool, &e)),
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
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "SNO-INTERNAL".to_string())
            });
            self.record(&tool, &args, t, bytes, error, hit);
        }
        Ok(result)
    }
}
