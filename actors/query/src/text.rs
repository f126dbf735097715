//! Regex search over the indexed files' text, each hit with its enclosing
//! symbol.

use regex::Regex;
use sno_journal::delta::State;
use sno_journal::model::{FileRecord, FileState, SkipReason};
use sno_protocol::query::GrepHit;

/// Searches every text file of the state; `read` gives a file's bytes (from
/// git objects, so the answer matches the indexed commit). Returns the hits
/// (at most `limit`) and whether the limit cut the search short.
pub fn grep(
    state: &State,
    pattern: &Regex,
    limit: usize,
    mut read: impl FnMut(&FileRecord) -> Option<crate::served::Served>,
) -> (Vec<GrepHit>, bool) {
    let mut hits = Vec::new();
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
        let Some(file) = read(rec) else { continue };
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
            if !pattern.is_match(line) {
                continue;
            }
            if hits.len() == limit {
                return (hits, true);
            }
            let n = i as u32 + 1;
            let symbol = rec
                .symbols
                .iter()
                .filter(|s| s.span.start_line <= n && n <= s.span.end_line)
                .min_by_key(|s| s.span.end_byte - s.span.start_byte)
                .map(|s| s.qualified_name.clone());
            hits.push(GrepHit {
                path: rec.path.clone(),
                line: n,
                text: line.trim_end().to_string(),
                symbol,
            });
        }
    }
    (hits, false)
}
