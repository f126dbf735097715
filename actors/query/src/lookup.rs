//! Finding symbols by name: exact, then case-insensitive, then prefix, then
//! fuzzy; and the nearest names when nothing matches.

use sno_journal::delta::State;
use sno_journal::model::Symbol;
use sno_protocol::query::{MatchKind, SymbolInfo, SymbolMatch};

/// A symbol and the file it is in.
#[derive(Clone, Copy, Debug)]
pub struct Located<'a> {
    pub path: &'a str,
    pub symbol: &'a Symbol,
}

impl Located<'_> {
    /// The wire form.
    pub fn info(&self) -> SymbolInfo {
        let s = self.symbol;
        SymbolInfo {
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind.name().to_string(),
            path: self.path.to_string(),
            line: s.span.start_line,
            end_line: s.span.end_line,
            signature: s.signature.clone(),
            doc: s.doc.clone(),
        }
    }
}

/// Every symbol of a state, in path order.
pub fn all_symbols(state: &State) -> impl Iterator<Item = Located<'_>> {
    state.iter().flat_map(|(path, rec)| {
        rec.symbols
            .iter()
            .map(move |symbol| Located { path, symbol })
    })
}

fn matches_exactly(s: &Symbol, q: &str) -> bool {
    s.name == q || s.qualified_name == q || s.qualified_name.ends_with(&format!(".{q}"))
}

fn fuzzy_close(name: &str, q: &str) -> bool {
    if q.len() > MAX_FUZZY_LEN {
        return false;
    }
    let (a, b) = (name.to_lowercase(), q.to_lowercase());
    let allowed = (b.chars().count() / 4).max(1);
    strsim::levenshtein(&a, &b) <= allowed
}

/// A match tier: its kind and the test a symbol must pass.
type Tier<'a> = (MatchKind, Box<dyn Fn(&Symbol) -> bool + 'a>);

/// Definitions matching `query`, best tier first: exact (name, qualified name
/// or its suffix), case-insensitive, then prefix, then fuzzy. Only the best
/// non-empty tier is returned, at most `limit` of it.
pub fn find_symbols(state: &State, query: &str, limit: usize) -> Vec<SymbolMatch> {
    let lower = query.to_lowercase();
    let tiers: [Tier; 4] = [
        (MatchKind::Exact, Box::new(|s| matches_exactly(s, query))),
        (
            MatchKind::CaseInsensitive,
            Box::new(|s| {
                s.name.to_lowercase() == lower || s.qualified_name.to_lowercase() == lower
            }),
        ),
        (
            MatchKind::Prefix,
            Box::new(|s| s.name.to_lowercase().starts_with(&lower)),
        ),
        (MatchKind::Fuzzy, Box::new(|s| fuzzy_close(&s.name, query))),
    ];
    for (kind, pred) in tiers.iter() {
        let hits: Vec<SymbolMatch> = all_symbols(state)
            .filter(|l| pred(l.symbol))
            .take(limit)
            .map(|l| SymbolMatch {
                symbol: l.info(),
                match_kind: *kind,
            })
            .collect();
        if !hits.is_empty() {
            return hits;
        }
    }
    Vec::new()
}

/// The names (as the names table keys them: a name's last `.`-segment)
/// whose files hold every symbol [`find_symbols`]'s inexact tiers can
/// match for `query` (case-insensitive, prefix, spelling), and the
/// `suggest` names closest in spelling, for [`did_you_mean`] when no tier
/// matches. Reading only their files answers a lookup that misses the
/// exact tier without the whole state.
pub fn names_near<'k>(keys: &'k [String], query: &str, suggest: usize) -> Vec<&'k str> {
    let lower = query.to_lowercase();
    let last = lower.rsplit('.').next().unwrap_or(&lower).to_string();
    let spelled = query.len() <= MAX_FUZZY_LEN;
    let mut out = Vec::new();
    let mut close: Vec<(f64, &str)> = Vec::new();
    for key in keys {
        let k = key.to_lowercase();
        if k == lower || k == last || k.starts_with(&lower) || fuzzy_close(key, query) {
            out.push(key.as_str());
        } else if spelled {
            let score = strsim::jaro_winkler(&k, &lower).max(strsim::jaro_winkler(&k, &last));
            if score > 0.7 {
                close.push((score, key.as_str()));
            }
        }
    }
    close.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    out.extend(close.into_iter().take(suggest).map(|(_, k)| k));
    out
}

/// Longer inputs are not compared for spelling: no identifier is this long,
/// and Jaro-Winkler is quadratic (a 10 MB argument would stall a server).
pub const MAX_FUZZY_LEN: usize = 256;

/// The source text of `symbol` in its file's `bytes` (empty when the span
/// does not fit them), from the start of its first line when only
/// indentation precedes it ([`crate::served::Served::line_start`]).
pub fn source_of(symbol: &Symbol, file: &crate::served::Served) -> String {
    let sp = symbol.span;
    file.slice(file.line_start(sp.start_byte as usize)..sp.end_byte as usize)
}

/// Similarity of two strings in [0, 1] (Jaro-Winkler, case-insensitive).
pub fn similarity(a: &str, b: &str) -> f64 {
    if a.len() > MAX_FUZZY_LEN || b.len() > MAX_FUZZY_LEN {
        return 0.0;
    }
    strsim::jaro_winkler(&a.to_lowercase(), &b.to_lowercase())
}

/// The names closest in spelling to `query` (qualified names, distinct).
pub fn did_you_mean(state: &State, query: &str, n: usize) -> Vec<String> {
    if query.len() > MAX_FUZZY_LEN {
        return Vec::new();
    }
    let q = query.to_lowercase();
    let mut scored: Vec<(f64, String)> = all_symbols(state)
        .map(|l| {
            let name = l.symbol.name.to_lowercase();
            let qual = l.symbol.qualified_name.to_lowercase();
            let score = strsim::jaro_winkler(&name, &q).max(strsim::jaro_winkler(&qual, &q));
            (score, l.symbol.qualified_name.clone())
        })
        .filter(|(score, _)| *score > 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, name)| name).collect()
}

/// Why a name does not pick out one symbol.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LookupError {
    #[error("no symbol named `{query}`")]
    NotFound {
        query: String,
        did_you_mean: Vec<String>,
    },
    #[error("`{query}` names {} symbols; qualify it", candidates.len())]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    /// A `path:line` of an indexed file that no definition spans.
    #[error("no definition spans line {line} of `{path}`")]
    NoSymbolAt {
        path: String,
        line: u32,
        /// The file's lines.
        lines: u32,
        /// The definitions nearest the line, as `path:line`.
        nearest: Vec<String>,
    },
}

/// Definitions [`LookupError::NoSymbolAt`] names: the nearest before and
/// after the line asked for.
const NEAREST_AT: usize = 3;

/// The one symbol `query` names: an exact qualified name, or an exact name
/// (or qualified suffix) that only one symbol has. `path:line` picks by
/// location.
pub fn resolve_one<'a>(state: &'a State, query: &str) -> Result<Located<'a>, LookupError> {
    if let Some((path, line)) = query
        .rsplit_once(':')
        .and_then(|(p, l)| Some((p, l.parse::<u32>().ok()?)))
    {
        if let Some(rec) = state.get(path) {
            let inner = rec
                .symbols
                .iter()
                .filter(|s| s.span.start_line <= line && line <= s.span.end_line)
                .min_by_key(|s| s.span.end_byte - s.span.start_byte);
            if let Some(symbol) = inner {
                return Ok(Located {
                    path: &rec.path,
                    symbol,
                });
            }
            // The file is indexed and the line is in none of its
            // definitions (past its end, between two, a file of none): the
            // answer is that, with where its definitions are, not a name
            // lookup of `path:line`.
            let mut near: Vec<&Symbol> = rec.symbols.iter().collect();
            // Nearest first, the innermost of equals (a method before
            // its class).
            near.sort_by_key(|s| {
                let (a, b) = (s.span.start_line, s.span.end_line);
                (a.abs_diff(line).min(b.abs_diff(line)), b - a, a)
            });
            return Err(LookupError::NoSymbolAt {
                path: path.to_string(),
                line,
                lines: rec.lines,
                nearest: near
                    .into_iter()
                    .take(NEAREST_AT)
                    .map(|s| format!("{path}:{}", s.span.start_line))
                    .collect(),
            });
        }
    }
    // A qualified name (`Config.load`) picks its symbol even when others
    // share the last segment; a bare name that several symbols have is
    // ambiguous, never silently one of them.
    let qualified = query.contains(['.', ':']);
    let by_qualified: Vec<Located> = if qualified {
        all_symbols(state)
            .filter(|l| l.symbol.qualified_name == query)
            .collect()
    } else {
        Vec::new()
    };
    let mut cands: Vec<Located> = if by_qualified.is_empty() {
        all_symbols(state)
            .filter(|l| matches_exactly(l.symbol, query))
            .collect()
    } else {
        by_qualified
    };
    // What merely repeats another candidate's name is not another meaning:
    // a constructor named like its class, an impl block named like its type,
    // a C or C++ prototype or an overload stub of a function a candidate
    // defines, a Python property's setter beside its getter.
    if cands.len() > 1 {
        let ids: std::collections::HashSet<_> = cands.iter().map(|l| l.symbol.id).collect();
        let has_definition = cands
            .iter()
            .any(|l| l.symbol.kind != sno_journal::model::SymbolKind::Impl);
        let defined: std::collections::HashSet<&str> = cands
            .iter()
            .filter(|l| !l.symbol.is_declaration() && !l.symbol.is_accessor())
            .map(|l| l.symbol.qualified_name.as_str())
            .collect();
        cands.retain(|l| {
            let repeats_parent = l.symbol.parent.is_some_and(|p| ids.contains(&p));
            let impl_of_it =
                has_definition && l.symbol.kind == sno_journal::model::SymbolKind::Impl;
            // A declaration of it, or a property's setter or deleter
            // beside its getter.
            let declares_it = (l.symbol.is_declaration() || l.symbol.is_accessor())
                && defined.contains(l.symbol.qualified_name.as_str());
            !(repeats_parent || impl_of_it || declares_it)
        });
    }
    match cands.as_slice() {
        [one] => Ok(*one),
        [] => Err(LookupError::NotFound {
            query: query.to_string(),
            did_you_mean: did_you_mean(state, query, 5),
        }),
        many => Err(LookupError::Ambiguous {
            query: query.to_string(),
            candidates: many
                .iter()
                .map(|l| {
                    format!(
                        "{} ({}:{})",
                        l.symbol.qualified_name, l.path, l.symbol.span.start_line
                    )
                })
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::test_support::record;

    #[test]
    fn the_files_of_the_names_near_a_query_answer_it_as_the_whole_state_does() {
        let files: [(&str, &[&str]); 6] = [
            ("a/config.py", &["load_config", "LoadConfig", "parse_args"]),
            ("a/io.py", &["read_file", "write_file", "read_files"]),
            ("b/net.py", &["open_socket", "close_socket"]),
            ("b/loader.py", &["loader", "load", "loads"]),
            ("c/misc.py", &["reed_file", "unrelated_helper"]),
            ("c/other.py", &["something_else", "zzz"]),
        ];
        let state: State = files
            .iter()
            .enumerate()
            .map(|(i, (p, names))| (p.to_string(), record(p, i as u8, names)))
            .collect();
        let mut keys: Vec<String> = all_symbols(&state)
            .map(|l| l.symbol.name.rsplit('.').next().unwrap().to_string())
            .collect();
        keys.sort();
        keys.dedup();
        let queries = [
            "LOAD_CONFIG", // case
            "read_fil",    // prefix
            "reed_file",   // exact, in another file than its neighbours
            "opn_socket",  // spelling
            "clse_sockt",  // spelling, too far for the tier: suggestions only
            "Loader.loads",
            "nothing_like_it_at_all",
        ];
        for q in queries {
            let near = names_near(&keys, q, 40);
            let partial: State = state
                .iter()
                .filter(|(_, r)| r.symbols.iter().any(|s| near.contains(&s.name.as_str())))
                .map(|(p, r)| (p.clone(), r.clone()))
                .collect();
            let whole = find_symbols(&state, q, 5);
            let found = find_symbols(&partial, q, 5);
            let names = |m: &[SymbolMatch]| -> Vec<(String, MatchKind)> {
                m.iter()
                    .map(|m| (m.symbol.qualified_name.clone(), m.match_kind))
                    .collect()
            };
            assert_eq!(names(&found), names(&whole), "{q}");
            assert_eq!(
                did_you_mean(&partial, q, 5),
                did_you_mean(&state, q, 5),
                "{q}"
            );
            assert!(partial.len() < state.len(), "{q}: read every file");
        }
    }
}
