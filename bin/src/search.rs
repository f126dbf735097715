//! `sno search`: a context package for a question, in a token budget, with
//! the trust header.

use std::collections::{BTreeSet, HashSet};
use std::process::ExitCode;

use sno_actors::git::GitRepo;
use sno_journal::model::{FileState, Seq};
use sno_protocol::context::{
    Completeness, ContextItem, ContextPackage, ParseState, SignalScores, TrustHeader,
};
use sno_protocol::query::AsOfCommit;
use sno_query::pack::{count_tokens, pack, Candidate, Packed};
use sno_query::search::{HistoryFacts, Retriever, SearchRequest, Weights};
use sno_query::semantic::Embedder;

use crate::cli::QueryOpts;
use crate::commands::{open_existing, print_json, resolve_journaled};
use crate::repo::RepoPaths;

/// The default model: used when nothing else is configured.
pub const DEFAULT_MODEL: &str = "minishlab/potion-base-8M";

/// Options of `sno search`.
pub struct SearchArgs<'a> {
    pub query: &'a str,
    pub max_tokens: usize,
    pub limit: usize,
    pub scope: Option<&'a str>,
    pub lexical_only: bool,
    pub model: Option<&'a str>,
}

fn fence_lang(path: &str) -> &'static str {
    sno_journal::model::Language::from_path(path)
        .map(|l| l.name())
        .unwrap_or("")
}

/// Runs a search.
pub fn search(a: SearchArgs, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(&q.repo)?;
    let journal = open_existing(&paths)?;
    let head = journal
        .head()?
        .ok_or_else(|| sno_journal::JournalError::Missing(paths.db().display().to_string()))?;
    let (state, as_of, seq) = match &q.at {
        None => (
            journal.load_state()?,
            AsOfCommit {
                commit: head.commit.to_hex(),
                branch: head.branch.clone(),
            },
            head.seq,
        ),
        Some(at) => {
            let c = resolve_journaled(&paths, &journal, at)?;
            let seq = journal.seq_of_commit(&c)?.unwrap_or(Seq(0));
            (
                sno_journal::replay::replay_to_commit(&journal, &c)?,
                AsOfCommit {
                    commit: c.to_hex(),
                    branch: None,
                },
                seq,
            )
        }
    };
    let repo = GitRepo::open(&paths.root)?;
    let head_now = repo.head().ok().map(|c| c.to_hex());
    let head_differs = head_now.filter(|h| *h != as_of.commit);

    let model_spec = a
        .model
        .map(str::to_string)
        .or_else(|| std::env::var("SNO_MODEL").ok())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let (embedder, semantic_off) = if a.lexical_only {
        (None, Some("--lexical-only".to_string()))
    } else {
        match Embedder::load(&model_spec) {
            Ok(e) => (Some(e), None),
            Err(e) => {
                eprintln!("sno: semantic search is off ({e}); answering with lexical and structural signals");
                (None, Some(e.to_string()))
            }
        }
    };
    let retriever =
        Retriever::new(&state, embedder.as_ref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let history = HistoryFacts::from_journal(&journal, seq)?;
    let request = SearchRequest {
        query: a.query,
        limit: a.limit,
        scope: a.scope,
        lexical_only: a.lexical_only,
        weights: Weights::default(),
    };
    // No lesson is approved yet in this build: the memory signal is zero.
    let hits = retriever.search(&request, &history, &HashSet::new());

    // Sources, read from the indexed commit's blobs.
    let mut candidates = Vec::new();
    for h in &hits {
        let l = retriever.docs[h.doc];
        let rec = &state[l.path];
        let bytes = repo.blob(rec.blob).unwrap_or_default();
        let sp = l.symbol.span;
        let src = String::from_utf8_lossy(
            bytes
                .get(sp.start_byte as usize..sp.end_byte as usize)
                .unwrap_or_default(),
        )
        .into_owned();
        candidates.push(Candidate {
            text: format!(
                "\n### `{}` — {}:{} ({})\n```{}\n{}\n```\n",
                l.symbol.qualified_name,
                l.path,
                sp.start_line,
                l.symbol.kind.name(),
                fence_lang(l.path),
                src
            ),
        });
    }
    let files: BTreeSet<&str> = hits.iter().map(|h| retriever.docs[h.doc].path).collect();
    let parse_state = ParseState {
        files: files.len(),
        clean: files
            .iter()
            .filter(|p| state[**p].state == FileState::Parsed)
            .count(),
        with_errors: files
            .iter()
            .filter(|p| state[**p].state == FileState::ParsedWithErrors)
            .map(|p| p.to_string())
            .collect(),
    };
    let match_type = if embedder.is_some() {
        "hybrid"
    } else {
        "lexical+structural"
    }
    .to_string();
    let make_header = |completeness: Completeness, anchors: Vec<String>| TrustHeader {
        as_of: as_of.clone(),
        head_differs: head_differs.clone(),
        match_type: match_type.clone(),
        semantic_off_reason: semantic_off.clone(),
        completeness,
        parse_state: parse_state.clone(),
        scope: a.scope.map(str::to_string),
        anchors,
    };
    let all_anchors: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "{}:{}",
                retriever.docs[h.doc].path, retriever.docs[h.doc].symbol.span.start_line
            )
        })
        .collect();
    // Reserve room for the header as if every item were included: the real
    // one can only be shorter.
    // Reserve room for the longest header this answer could get (every
    // status, every anchor), plus a little for token boundaries: the real
    // one can only be shorter.
    let header_budget = ["full", "budget_limited", "truncated"]
        .iter()
        .map(|status| {
            let provisional = make_header(
                Completeness {
                    status: status.to_string(),
                    included: hits.len(),
                    omitted: hits.len(),
                    truncated: hits.len(),
                    tokens: a.max_tokens,
                    max_tokens: a.max_tokens,
                },
                all_anchors.clone(),
            );
            count_tokens(&render_header(&provisional))
        })
        .max()
        .unwrap_or(0)
        + 4;
    let packing = pack(&candidates, a.max_tokens.saturating_sub(header_budget));
    let included: Vec<usize> = (0..hits.len())
        .filter(|i| packing.outcome[*i] != Packed::Omitted)
        .collect();
    let omitted = hits.len() - included.len();
    let truncated = packing
        .outcome
        .iter()
        .filter(|o| **o == Packed::Truncated)
        .count();
    let status = if truncated > 0 {
        "truncated"
    } else if omitted > 0 {
        "budget_limited"
    } else {
        "full"
    };
    let mut header = make_header(
        Completeness {
            status: status.into(),
            included: included.len(),
            omitted,
            truncated,
            tokens: 0,
            max_tokens: a.max_tokens,
        },
        included.iter().map(|i| all_anchors[*i].clone()).collect(),
    );
    let header_text = render_header(&header);
    header.completeness.tokens = count_tokens(&header_text) + packing.tokens;
    let header_text = render_header(&header);
    let package_text = format!("{header_text}{}", packing.body);
    // What the agent receives is what counts.
    header.completeness.tokens = count_tokens(&package_text);
    let items: Vec<ContextItem> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let l = retriever.docs[h.doc];
            ContextItem {
                rank: i + 1,
                qualified_name: l.symbol.qualified_name.clone(),
                kind: l.symbol.kind.name().to_string(),
                path: l.path.to_string(),
                line: l.symbol.span.start_line,
                end_line: l.symbol.span.end_line,
                score: h.signals.total(),
                signals: SignalScores {
                    lexical: h.signals.lexical,
                    semantic: h.signals.semantic,
                    structural: h.signals.structural,
                    history: h.signals.history,
                    memory: h.signals.memory,
                },
                packed: match packing.outcome[i] {
                    Packed::Whole => "whole",
                    Packed::Truncated => "truncated",
                    Packed::Omitted => "omitted",
                }
                .to_string(),
            }
        })
        .collect();
    let pkg = ContextPackage {
        query: a.query.to_string(),
        header,
        items,
        package: package_text,
    };
    if q.json {
        print_json(&pkg)?;
    } else {
        print!("{}", pkg.package);
    }
    Ok(ExitCode::SUCCESS)
}

/// The trust header as markdown.
pub fn render_header(h: &TrustHeader) -> String {
    let c = &h.completeness;
    let mut s = String::from("<!-- sno context package -->\n");
    s.push_str(&format!(
        "> **sno** · as of `{}`{}",
        &h.as_of.commit[..12.min(h.as_of.commit.len())],
        h.as_of
            .branch
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default()
    ));
    match &h.head_differs {
        Some(head) => s.push_str(&format!(
            " · **index is not at HEAD** (`{}`): run `sno init` to update\n",
            &head[..12]
        )),
        None => s.push_str(" · index matches HEAD\n"),
    }
    s.push_str(&format!("> match: {}", h.match_type));
    if let Some(r) = &h.semantic_off_reason {
        s.push_str(&format!(" (semantic off: {r})"));
    }
    s.push('\n');
    let what = match c.status.as_str() {
        "full" => format!(
            "full — {} item(s), {} of {} tokens",
            c.included, c.tokens, c.max_tokens
        ),
        "truncated" => format!(
            "truncated — {} item(s) included, {} cut to fit, {} omitted; {} of {} tokens",
            c.included, c.truncated, c.omitted, c.tokens, c.max_tokens
        ),
        _ => format!(
            "budget-limited — {} of {} item(s) included, {} omitted for the {}-token budget",
            c.included,
            c.included + c.omitted,
            c.omitted,
            c.max_tokens
        ),
    };
    s.push_str(&format!("> completeness: {what}\n"));
    let p = &h.parse_state;
    s.push_str(&format!(
        "> parse state: {} file(s), {} parsed cleanly",
        p.files, p.clean
    ));
    if !p.with_errors.is_empty() {
        s.push_str(&format!(
            ", with syntax errors: {}",
            p.with_errors.join(", ")
        ));
    }
    s.push('\n');
    s.push_str(&format!(
        "> scope: {}\n",
        h.scope
            .as_deref()
            .map(|x| format!("under `{x}`"))
            .unwrap_or_else(|| "whole repository".into())
    ));
    if !h.anchors.is_empty() {
        s.push_str(&format!("> anchors: {}\n", h.anchors.join(", ")));
    }
    s
}
