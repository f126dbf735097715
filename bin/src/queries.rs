//! The code-intelligence commands: `symbol`, `outline`, `show`, `refs`,
//! `grep`, `changes`. Each answers from the indexed head, or from a replay of
//! the journal with `--at`, and says which state it answered from.

use std::path::Path;
use std::process::ExitCode;

use sno_index::git::GitRepo;
use sno_journal::delta::State;
use sno_journal::replay::replay_to_commit;
use sno_protocol::query::AsOfCommit;
use sno_protocol::{ErrorContract, Fixability};
use sno_query::graph::Graph;
use sno_query::{find_symbols, resolve_one, LookupError};

use crate::cli::QueryOpts;
use crate::commands::{open_existing, print_json, resolve_journaled};
use crate::repo::RepoPaths;

/// A state to answer from, and which one it is.
struct Answering {
    paths: RepoPaths,
    state: State,
    as_of: AsOfCommit,
}

fn load(q: &QueryOpts) -> anyhow::Result<Answering> {
    let paths = RepoPaths::discover(&q.repo)?;
    let journal = open_existing(&paths)?;
    let (state, as_of) = match &q.at {
        None => {
            let head = journal.head()?.ok_or_else(|| {
                ErrorContract::new(
                    "SNO-NOT-INDEXED",
                    "nothing is indexed yet",
                    "Run `sno init` first.",
                    Fixability::Trivial,
                )
            })?;
            (
                journal.load_state()?,
                AsOfCommit {
                    commit: head.commit.to_hex(),
                    branch: head.branch,
                },
            )
        }
        Some(at) => {
            let commit = resolve_journaled(&paths, &journal, at)?;
            (
                replay_to_commit(&journal, &commit)?,
                AsOfCommit {
                    commit: commit.to_hex(),
                    branch: None,
                },
            )
        }
    };
    Ok(Answering {
        paths,
        state,
        as_of,
    })
}

/// The contract for a name that does not pick out one symbol.
pub fn lookup_contract(e: LookupError) -> ErrorContract {
    match e {
        LookupError::NotFound {
            query,
            did_you_mean,
        } => {
            let mut c = ErrorContract::new(
                "SNO-UNKNOWN-SYMBOL",
                format!("no symbol named `{query}` in the indexed state"),
                if did_you_mean.is_empty() {
                    "Search with `sno symbol <part of the name>` or `sno grep` instead.".to_string()
                } else {
                    format!(
                        "Retry with one of the names in did_you_mean, e.g. `{}`.",
                        did_you_mean[0]
                    )
                },
                Fixability::Trivial,
            );
            c.did_you_mean = did_you_mean;
            c
        }
        LookupError::Ambiguous { query, candidates } => {
            let mut c = ErrorContract::new(
                "SNO-AMBIGUOUS-SYMBOL",
                format!("`{query}` names {} symbols", candidates.len()),
                "Retry with a qualified name (Class.method) or a path:line from did_you_mean.",
                Fixability::Trivial,
            );
            c.did_you_mean = candidates;
            c
        }
    }
}

fn emit<T: serde::Serialize>(
    a: &Answering,
    json: bool,
    results: &T,
    human: impl FnOnce(),
) -> anyhow::Result<ExitCode> {
    if json {
        print_json(&serde_json::json!({ "as_of": a.as_of, "results": results }))?;
    } else {
        human();
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno symbol`.
pub fn symbol(name: &str, q: &QueryOpts, limit: usize) -> anyhow::Result<ExitCode> {
    let a = load(q)?;
    let hits = find_symbols(&a.state, name, limit);
    if hits.is_empty() {
        return Err(lookup_contract(LookupError::NotFound {
            query: name.to_string(),
            did_you_mean: sno_query::lookup::did_you_mean(&a.state, name, 5),
        })
        .into());
    }
    // Only names close in spelling: say so, and exit 1 as for no match, so
    // a script (or an agent reading the exit status) is not told it found it.
    let fuzzy = hits
        .iter()
        .all(|h| h.match_kind == sno_protocol::query::MatchKind::Fuzzy);
    if fuzzy {
        crate::out::errln!(
            "sno: no symbol named `{name}`; these are close in spelling (fuzzy matches)"
        );
    }
    emit(&a, q.json, &hits, || {
        for h in &hits {
            let s = &h.symbol;
            crate::out::outln!(
                "{}:{}  {} {}  {}{}",
                s.path,
                s.line,
                s.kind,
                s.qualified_name,
                s.signature,
                if fuzzy { "  (fuzzy)" } else { "" }
            );
        }
    })?;
    Ok(if fuzzy {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A repository-relative path for a file the user named on the command
/// line (relative to the current directory, or absolute), under the one
/// confinement rule (`sno_index::confine`).
fn repo_relative(paths: &RepoPaths, file: &str) -> anyhow::Result<String> {
    let p = Path::new(file);
    let absolute = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    };
    let wt = paths.work_tree()?;
    // Spelled from the current directory, which may itself be reached
    // through a link: compare with the root as the work tree sees it.
    let absolute = match (
        absolute.parent().map(Path::canonicalize),
        absolute.file_name(),
    ) {
        (Some(Ok(dir)), Some(name)) => dir.join(name),
        _ => absolute,
    };
    Ok(wt.relative(&absolute.display().to_string())?)
}

/// The error for a path the state does not hold, with the nearest paths.
pub fn unknown_file(state: &State, rel: &str) -> ErrorContract {
    let mut scored: Vec<(f64, &String)> = state
        .keys()
        .map(|p| (strsim_score(p, rel), p))
        .filter(|(s, _)| *s > 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut c = ErrorContract::new(
        "SNO-UNKNOWN-FILE",
        format!("{rel} is not in the indexed state"),
        "Use a path from did_you_mean, relative to the repository root; `sno status` shows what is indexed.",
        Fixability::Trivial,
    );
    c.did_you_mean = scored.into_iter().take(5).map(|(_, p)| p.clone()).collect();
    c
}

fn strsim_score(a: &str, b: &str) -> f64 {
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let whole = sno_query::lookup::similarity(a, b);
    whole.max(sno_query::lookup::similarity(&name(a), &name(b)) * 0.9)
}

/// `sno outline`.
pub fn outline(file: &str, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let a = load(q)?;
    let rel = repo_relative(&a.paths, file)?;
    let rec = a
        .state
        .get(&rel)
        .ok_or_else(|| unknown_file(&a.state, &rel))?;
    let tree = sno_query::outline::outline(rec);
    emit(&a, q.json, &tree, || {
        fn print(nodes: &[sno_protocol::query::OutlineNode], indent: usize) {
            for n in nodes {
                crate::out::outln!(
                    "{:>5}  {}{}  [{}]",
                    n.line,
                    "  ".repeat(indent),
                    n.signature,
                    n.kind
                );
                print(&n.children, indent + 1);
            }
        }
        crate::out::outln!("{rel}");
        print(&tree, 0);
    })
}

/// `sno show`.
pub fn show(name: &str, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let a = load(q)?;
    let found = resolve_one(&a.state, name).map_err(lookup_contract)?;
    let rec = &a.state[found.path];
    let repo = GitRepo::open(&a.paths.root)?;
    let file = sno_query::served::Served::new(&repo.blob(rec.blob)?, a.paths.mask_secrets());
    let source = sno_query::lookup::source_of(found.symbol, &file);
    let info = found.info();
    if q.json {
        print_json(&serde_json::json!({ "as_of": a.as_of, "symbol": info, "source": source }))?;
    } else {
        crate::out::outln!(
            "{}:{}-{}  {} {}",
            info.path,
            info.line,
            info.end_line,
            info.kind,
            info.qualified_name
        );
        crate::out::outln!("{source}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno refs`.
pub fn refs(
    name: &str,
    callers: bool,
    callees: bool,
    depth: u32,
    q: &QueryOpts,
) -> anyhow::Result<ExitCode> {
    let a = load(q)?;
    let found = resolve_one(&a.state, name).map_err(lookup_contract)?;
    let graph = Graph::new(&a.state);
    let results = if callers {
        graph.callers(found.symbol, depth.max(1))
    } else if callees {
        graph.callees(&a.state, found.symbol, depth.max(1))
    } else {
        graph.references(found.symbol)
    };
    emit(&a, q.json, &results, || {
        for r in &results {
            crate::out::outln!(
                "{}:{}  {} {} -> {}{}",
                r.path,
                r.line,
                r.kind,
                r.from.as_deref().unwrap_or("<top level>"),
                r.to,
                match (&r.reason, r.heuristic) {
                    (Some(why), _) => format!("  (heuristic: {why})"),
                    (None, true) => "  (heuristic)".to_string(),
                    (None, false) => String::new(),
                }
            );
        }
        if results.is_empty() {
            crate::out::outln!("no references to {}", found.symbol.qualified_name);
        }
    })
}

/// `sno grep`.
pub fn grep(pattern: &str, limit: usize, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let re = regex::Regex::new(pattern).map_err(|e| {
        ErrorContract::new(
            "SNO-BAD-REGEX",
            format!("`{pattern}` is not a valid regular expression: {e}"),
            "Fix the pattern (Rust regex syntax; escape `(` as `\\(`).",
            Fixability::Trivial,
        )
    })?;
    let a = load(q)?;
    let repo = GitRepo::open(&a.paths.root)?;
    let mask = a.paths.mask_secrets();
    let (hits, truncated) = sno_query::text::grep(&a.state, &re, limit, |rec| {
        repo.blob(rec.blob)
            .ok()
            .map(|b| sno_query::served::Served::new(&b, mask))
    });
    if q.json {
        print_json(
            &serde_json::json!({ "as_of": a.as_of, "results": hits, "truncated": truncated, "limit": limit }),
        )?;
    } else {
        for h in &hits {
            crate::out::outln!(
                "{}:{}: [{}] {}",
                h.path,
                h.line,
                h.symbol.as_deref().unwrap_or("-"),
                h.text
            );
        }
        if truncated {
            crate::out::errln!("sno: stopped at {limit} hits (--limit to see more)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno changes A..B`.
pub fn changes(range: &str, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let (from, to) = range.split_once("..").ok_or_else(|| {
        ErrorContract::new(
            "SNO-BAD-RANGE",
            format!("`{range}` is not a range"),
            "Write the range as A..B (two commit-ishes), or A.. for A to the indexed head.",
            Fixability::Trivial,
        )
    })?;
    let paths = RepoPaths::discover(&q.repo)?;
    let journal = open_existing(&paths)?;
    let a = resolve_journaled(&paths, &journal, from)?;
    let b = if to.is_empty() {
        journal
            .head()?
            .map(|h| h.commit)
            .ok_or_else(|| anyhow::anyhow!("nothing indexed"))?
    } else {
        resolve_journaled(&paths, &journal, to)?
    };
    let old = replay_to_commit(&journal, &a)?;
    let new = replay_to_commit(&journal, &b)?;
    let diff = sno_query::changes::symbol_changes(&old, &new);
    if q.json {
        print_json(&serde_json::json!({ "from": a.to_hex(), "to": b.to_hex(), "results": diff }))?;
    } else {
        for c in &diff {
            let s = &c.symbol;
            crate::out::outln!(
                "{:<8} {}:{}  {} {}",
                c.change,
                s.path,
                s.line,
                s.kind,
                s.qualified_name
            );
        }
        if diff.is_empty() {
            crate::out::outln!("no symbol changes between {} and {}", a.short(), b.short());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `sno map`.
pub fn map(max_tokens: usize, per_file: usize, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let a = load(q)?;
    let (docs, rank) = sno_query::map::symbol_ranks(&a.state);
    let files = sno_query::map::ranked_files(&docs, &rank);
    let header = format!(
        "# repository map as of {} — files by centrality (PageRank over calls and inheritance)\n",
        &a.as_of.commit[..12]
    );
    let mut text = header.clone();
    let mut used = sno_query::pack::count_tokens(&header);
    let mut shown = Vec::new();
    let mut omitted = 0;
    for (path, score, syms) in &files {
        let mut block = format!("{path}  ({score:.4})\n");
        for (i, _) in syms.iter().take(per_file) {
            let s = docs[*i].symbol;
            block.push_str(&format!(
                "  {}:{} {} {}\n",
                s.kind.name(),
                s.span.start_line,
                s.qualified_name,
                s.signature
            ));
        }
        let t = sno_query::pack::count_tokens(&block);
        if used + t > max_tokens {
            omitted += 1;
            continue;
        }
        used += t;
        text.push_str(&block);
        shown.push(serde_json::json!({
            "path": path,
            "score": score,
            "symbols": syms.iter().take(per_file).map(|(i, r)| {
                let s = docs[*i].symbol;
                serde_json::json!({"qualified_name": s.qualified_name, "kind": s.kind.name(), "line": s.span.start_line, "rank": r})
            }).collect::<Vec<_>>(),
        }));
    }
    if omitted > 0 {
        text.push_str(&format!(
            "… {omitted} more file(s) left out for the {max_tokens}-token budget\n"
        ));
    }
    if q.json {
        print_json(&serde_json::json!({
            "as_of": a.as_of,
            "files": shown,
            "omitted_files": omitted,
            "tokens": sno_query::pack::count_tokens(&text),
            "max_tokens": max_tokens,
            "map": text,
        }))?;
    } else {
        crate::out::out!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}
