//! A ranked map of a repository: PageRank over the symbol graph (resolved
//! calls and inheritance), files ranked by their most central symbol, packed
//! into a token budget.

use std::collections::HashMap;

use sno_journal::delta::State;
use sno_journal::model::{EdgeKind, EdgeTarget, SymbolId};

use sno_protocol::context::AnswerFormat;
use sno_protocol::query::{AsOfCommit, MapAnswer, MapFile};

use crate::lookup::{all_symbols, Located};
use crate::pack::count_tokens;

/// PageRank of every symbol (damping 0.85), indexed like [`all_symbols`].
pub fn symbol_ranks(state: &State) -> (Vec<Located<'_>>, Vec<f64>) {
    let docs: Vec<Located> = all_symbols(state).collect();
    let index: HashMap<SymbolId, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, l)| (l.symbol.id, i))
        .collect();
    let n = docs.len();
    if n == 0 {
        return (docs, Vec::new());
    }
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for rec in state.values() {
        for e in &rec.edges {
            let (Some(from), EdgeTarget::Symbol(to)) = (e.from, &e.to) else {
                continue;
            };
            if !matches!(e.kind, EdgeKind::Calls | EdgeKind::Inherits) {
                continue;
            }
            if let (Some(&a), Some(&b)) = (index.get(&from), index.get(to)) {
                if a != b {
                    out[a].push(b);
                }
            }
        }
    }
    let d = 0.85;
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..40 {
        let dangling: f64 = (0..n).filter(|&i| out[i].is_empty()).map(|i| rank[i]).sum();
        let mut next = vec![(1.0 - d) / n as f64 + d * dangling / n as f64; n];
        for i in 0..n {
            if out[i].is_empty() {
                continue;
            }
            let share = d * rank[i] / out[i].len() as f64;
            for &j in &out[i] {
                next[j] += share;
            }
        }
        let delta: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if delta < 1e-9 {
            break;
        }
    }
    (docs, rank)
}

/// A ranked file: its path, score, and its symbols (index, rank) best first.
pub type RankedFile<'a> = (&'a str, f64, Vec<(usize, f64)>);

/// Files by their most central symbol (a sum would favour files that are
/// merely long), best first, each with its symbols best
/// first: `(path, file score, [(symbol index, score)])`.
pub fn ranked_files<'a>(docs: &[Located<'a>], rank: &[f64]) -> Vec<RankedFile<'a>> {
    let mut files: HashMap<&str, RankedFile> = HashMap::new();
    for (i, l) in docs.iter().enumerate() {
        let f = files.entry(l.path).or_insert((l.path, 0.0, Vec::new()));
        f.1 = f.1.max(rank[i]);
        f.2.push((i, rank[i]));
    }
    let mut v: Vec<RankedFile> = files
        .into_values()
        .map(|(p, s, mut syms)| {
            syms.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            (p, s, syms)
        })
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

/// The map's answer within `max_tokens` cl100k tokens as given: in
/// markdown, `header`, then each file's block (`files`, best first) that
/// still fits, then a line counting those left out; in JSON, the files that
/// fit the whole structured answer. A smaller file ranked lower may take
/// the place a bigger one did not fit, and the answer says how many were
/// left out either way. The markdown text is not repeated in the JSON.
pub fn pack_map(
    as_of: AsOfCommit,
    header: &str,
    files: Vec<(String, MapFile)>,
    max_tokens: usize,
    format: AnswerFormat,
) -> MapAnswer {
    let n = files.len();
    let mut ans = MapAnswer {
        as_of,
        files: Vec::new(),
        omitted_files: n,
        tokens: max_tokens,
        max_tokens,
        map: String::new(),
    };
    // What is counted whatever is included, at its longest.
    let (base, costs): (usize, Vec<usize>) = match format {
        AnswerFormat::Markdown => (
            count_tokens(header) + count_tokens(&left_out_line(n, max_tokens)),
            files.iter().map(|(text, _)| count_tokens(text)).collect(),
        ),
        AnswerFormat::Json => (
            count_tokens(&sno_protocol::to_wire(&ans)),
            files
                .iter()
                .map(|(_, f)| count_tokens(&sno_protocol::to_wire(f)) + 1)
                .collect(),
        ),
    };
    let mut used = base;
    let mut included: Vec<usize> = Vec::new();
    for (i, t) in costs.iter().enumerate() {
        if used + t <= max_tokens {
            used += t;
            included.push(i);
        }
    }
    // Pieces are counted apart and can merge where they meet: the whole is
    // counted, and the last file dropped while it is over.
    loop {
        ans.omitted_files = n - included.len();
        ans.files = included.iter().map(|&i| files[i].1.clone()).collect();
        let total = match format {
            AnswerFormat::Markdown => {
                let mut text = header.to_string();
                for &i in &included {
                    text.push_str(&files[i].0);
                }
                if ans.omitted_files > 0 {
                    text.push_str(&left_out_line(ans.omitted_files, max_tokens));
                }
                ans.map = text;
                let total = count_tokens(&ans.map);
                ans.tokens = total;
                total
            }
            AnswerFormat::Json => {
                // The count is part of what it counts.
                let total = crate::pack::settled_count(|total| {
                    ans.tokens = total;
                    count_tokens(&sno_protocol::to_wire(&ans))
                });
                ans.tokens = total;
                total
            }
        };
        if total <= max_tokens || included.pop().is_none() {
            return ans;
        }
    }
}

/// The line that says how many files the budget left out.
fn left_out_line(omitted: usize, max_tokens: usize) -> String {
    format!("… {omitted} more file(s) left out for the {max_tokens}-token budget\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::model::*;

    fn sym(path: &str, name: &str) -> Symbol {
        Symbol {
            id: SymbolId::derive(path, name, SymbolKind::Function, 0),
            name: name.into(),
            qualified_name: name.into(),
            kind: SymbolKind::Function,
            parent: None,
            span: Span::default(),
            signature: format!("def {name}()"),
            doc: String::new(),
            content_hash: 0,
        }
    }

    #[test]
    fn the_most_called_symbol_and_its_file_rank_first() {
        let hub = sym("core.py", "hub");
        let callers: Vec<Symbol> = (0..5)
            .map(|i| sym(&format!("c{i}.py"), &format!("c{i}")))
            .collect();
        let mut state = State::new();
        let rec = |path: &str, symbols: Vec<Symbol>, edges: Vec<Edge>| FileRecord {
            path: path.into(),
            blob: BlobId::default(),
            language: Some(Language::Python),
            size: 0,
            lines: 0,
            state: FileState::Parsed,
            diagnostics: vec![],
            symbols,
            edges,
            refs: FileRefs::default(),
            masked_secrets: 0,
        };
        state.insert("core.py".into(), rec("core.py", vec![hub.clone()], vec![]));
        for c in &callers {
            let path = format!("{}.py", c.name);
            let e = Edge {
                kind: EdgeKind::Calls,
                from: Some(c.id),
                to: EdgeTarget::Symbol(hub.id),
                name: "hub".into(),
                line: 1,
                certainty: sno_journal::model::Certainty::Exact,
            };
            state.insert(path.clone(), rec(&path, vec![c.clone()], vec![e]));
        }
        let (docs, rank) = symbol_ranks(&state);
        let best = (0..docs.len())
            .max_by(|a, b| rank[*a].total_cmp(&rank[*b]))
            .unwrap();
        assert_eq!(docs[best].symbol.name, "hub");
        let files = ranked_files(&docs, &rank);
        assert_eq!(files[0].0, "core.py");
        let total: f64 = rank.iter().sum();
        assert!((total - 1.0).abs() < 1e-6, "ranks sum to one: {total}");
    }
}
