//! Building a context package: the ranked symbols' sources packed into a
//! token budget under the trust header. Shared by `sno search` and the MCP
//! server, so both answer alike.

use std::collections::BTreeSet;

use sno_journal::delta::State;
use sno_journal::model::{FileRecord, FileState};
use sno_protocol::context::{
    Completeness, ContextItem, ContextPackage, ParseState, SignalScores, TrustHeader,
};
use sno_protocol::query::AsOfCommit;

use crate::pack::{count_tokens, pack, Candidate, Packed};
use crate::search::{Hit, Retriever};

/// Whether a file (path, indexed record) differs in the work tree.
pub type EditedInWorkTree<'a> = dyn Fn(&str, &FileRecord) -> bool + 'a;

/// Everything a package is built from.
pub struct PackageInput<'a> {
    pub query: &'a str,
    pub state: &'a State,
    pub retriever: &'a Retriever<'a>,
    pub hits: &'a [Hit],
    pub as_of: AsOfCommit,
    /// The repository's HEAD, when the index is not at it.
    pub head_differs: Option<String>,
    pub semantic_off_reason: Option<String>,
    pub scope: Option<&'a str>,
    pub max_tokens: usize,
    /// A file's text at the indexed commit, as served (secrets masked).
    pub read: &'a dyn Fn(&FileRecord) -> Option<crate::served::Served>,
    /// Whether a file differs in the work tree from its indexed version;
    /// `None` when the answer is not about the work tree's commit.
    pub edited: Option<&'a EditedInWorkTree<'a>>,
}

fn fence_lang(path: &str) -> &'static str {
    sno_journal::model::Language::from_path(path)
        .map(|l| l.name())
        .unwrap_or("")
}

/// Builds the package for ranked hits.
pub fn build_package(input: &PackageInput) -> ContextPackage {
    // Sources, read from the indexed commit's blobs.
    let mut candidates = Vec::new();
    for h in input.hits {
        let l = input.retriever.docs[h.doc];
        let rec = &input.state[l.path];
        let sp = l.symbol.span;
        let src = (input.read)(rec)
            .map(|file| crate::lookup::source_of(l.symbol, &file))
            .unwrap_or_default();
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
    let files: BTreeSet<&str> = input
        .hits
        .iter()
        .map(|h| input.retriever.docs[h.doc].path)
        .collect();
    let parse_state = ParseState {
        files: files.len(),
        clean: files
            .iter()
            .filter(|p| input.state[**p].state == FileState::Parsed)
            .count(),
        with_errors: files
            .iter()
            .filter(|p| input.state[**p].state == FileState::ParsedWithErrors)
            .map(|p| p.to_string())
            .collect(),
    };
    let edited_in_work_tree: Option<Vec<String>> = input.edited.map(|edited| {
        files
            .iter()
            .filter(|p| edited(p, &input.state[**p]))
            .map(|p| p.to_string())
            .collect()
    });
    let match_type = if input.semantic_off_reason.is_none() {
        "hybrid"
    } else {
        "lexical+structural"
    }
    .to_string();
    let make_header = |completeness: Completeness, anchors: Vec<String>| TrustHeader {
        as_of: input.as_of.clone(),
        head_differs: input.head_differs.clone(),
        edited_in_work_tree: edited_in_work_tree.clone(),
        match_type: match_type.clone(),
        semantic_off_reason: input.semantic_off_reason.clone(),
        completeness,
        parse_state: parse_state.clone(),
        scope: input.scope.map(str::to_string),
        anchors,
    };
    let all_anchors: Vec<String> = input
        .hits
        .iter()
        .map(|h| {
            format!(
                "{}:{}",
                input.retriever.docs[h.doc].path,
                input.retriever.docs[h.doc].symbol.span.start_line
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
                    included: input.hits.len(),
                    omitted: input.hits.len(),
                    truncated: input.hits.len(),
                    tokens: input.max_tokens,
                    max_tokens: input.max_tokens,
                },
                all_anchors.clone(),
            );
            count_tokens(&render_header(&provisional))
        })
        .max()
        .unwrap_or(0)
        + 4;
    let packing = pack(&candidates, input.max_tokens.saturating_sub(header_budget));
    let included: Vec<usize> = (0..input.hits.len())
        .filter(|i| packing.outcome[*i] != Packed::Omitted)
        .collect();
    let omitted = input.hits.len() - included.len();
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
            max_tokens: input.max_tokens,
        },
        included.iter().map(|i| all_anchors[*i].clone()).collect(),
    );
    // The header states the package's own token count, which depends on the
    // header: settle it (two rounds suffice; digits rarely change twice).
    // Header and body are counted apart, which saves re-encoding the body;
    // at the seam tokens merge rather than split, so the sum bounds the
    // real count (the tests check the budget against the real count).
    let mut header_text = render_header(&header);
    for _ in 0..3 {
        let total = count_tokens(&header_text) + packing.tokens;
        if total == header.completeness.tokens {
            break;
        }
        header.completeness.tokens = total;
        header_text = render_header(&header);
    }
    let package_text = format!("{header_text}{}", packing.body);
    let items: Vec<ContextItem> = input
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let l = input.retriever.docs[h.doc];
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
    ContextPackage {
        query: input.query.to_string(),
        header,
        items,
        package: package_text,
    }
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
    if let Some(edited) = h.edited_in_work_tree.as_ref().filter(|e| !e.is_empty()) {
        let files: Vec<String> = edited.iter().map(|p| format!("`{p}`")).collect();
        s.push_str(&format!(
            "> **changed on disk since the indexed commit**: {} (the source and lines below are the committed ones; read those files for their current text)\n",
            files.join(", ")
        ));
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
