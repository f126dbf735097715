//! Regex search over the indexed files' text, each hit with its enclosing
//! symbol.

use regex::Regex;
use sno_journal::delta::State;
use sno_journal::model::{FileRecord, FileState, SkipReason};
use sno_protocol::query::GrepHit;

/// What [`grep`] found.
#[derive(Debug, Default)]
pub struct Grepped {
    /// At most the limit's hits.
    pub hits: Vec<GrepHit>,
    /// Whether the limit cut the search short.
    pub truncated: bool,
    /// Files `read` could not give (git no longer holds their objects):
    /// the hits say nothing of them.
    pub unreadable: Vec<String>,
}

/// Searches every text file of the state; `read` gives a file's bytes (from
/// git objects, so the answer matches the indexed commit).
pub fn grep(
    state: &State,
    pattern: &Regex,
    limit: usize,
    mut read: impl FnMut(&FileRecord) -> Option<crate::served::Served>,
) -> Grepped {
    let mut out = Grepped::default();
    let hits = &mut out.hits;
    // A whole-file check first (most files have no match); multi-line mode
    // so `^`/`$` mean what they mean per line.
    let prefilter = Regex::new(&format!("(?m:{})", pattern.as_str())).ok();
    for rec in state.values() {
        if matches!(
            rec.state,
            FileState::Skipped(SkipReason::Binary | SkipReason::TooLarge)
        ) {
            continue;
        }
        let Some(file) = read(rec) else {
            out.unreadable.push(rec.path.clone());
            continue;
        };
        if file.is_binary() {
            continue;
        }
        // The masked text: a pattern cannot find what is not served.
        let text = file.text();
        // One pass over the whole file first: most files have no match.
        if prefilter.as_ref().is_some_and(|p| !p.is_match(&text)) {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            let Some(m) = pattern.find(line) else {
                continue;
            };
            if hits.len() == limit {
                out.truncated = true;
                return out;
            }
            let n = i as u32 + 1;
            // A match in the indentation (`^\s+def`) is of the line's code.
            let indent = line.len() - line.trim_start().len();
            // Spans count columns from 1.
            let at = (n, m.start().max(indent) as u32 + 1);
            let on_line =
                |s: &&sno_journal::model::Symbol| s.span.start_line <= n && n <= s.span.end_line;
            let around = |s: &&sno_journal::model::Symbol| {
                (s.span.start_line, s.span.start_col) <= at
                    && at < (s.span.end_line, s.span.end_col)
            };
            let size = |s: &&sno_journal::model::Symbol| s.span.end_byte - s.span.start_byte;
            // The innermost definition around the match itself: a minified
            // line holds many.
            let symbol = rec
                .symbols
                .iter()
                .filter(around)
                .min_by_key(size)
                .or_else(|| rec.symbols.iter().filter(on_line).min_by_key(size))
                .map(|s| s.qualified_name.clone());
            hits.push(GrepHit {
                path: rec.path.clone(),
                line: n,
                text: excerpt(line.trim_end(), m.start(), m.end()),
                symbol,
            });
        }
    }
    out
}

/// Longest line a hit shows whole; a longer one (minified code) shows
/// [`CONTEXT`] bytes either side of the match.
const LONGEST_LINE: usize = 400;
const CONTEXT: usize = 120;

/// `line`, or the part of it around the match at `start..end`, marked
/// with `…` where it is cut.
fn excerpt(line: &str, start: usize, end: usize) -> String {
    if line.len() <= LONGEST_LINE {
        return line.to_string();
    }
    let mut from = start.saturating_sub(CONTEXT);
    while !line.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = end.max(start).saturating_add(CONTEXT).min(line.len());
    // A match longer than the room is shown as far as the room goes.
    to = to.min(from + 2 * CONTEXT + LONGEST_LINE).min(line.len());
    while !line.is_char_boundary(to) {
        to += 1;
    }
    format!(
        "{}{}{}",
        if from > 0 { "…" } else { "" },
        &line[from..to],
        if to < line.len() { "…" } else { "" }
    )
}
