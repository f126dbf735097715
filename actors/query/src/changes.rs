//! Symbol-level differences between two indexed states, from the journal
//! alone: nothing is reparsed.

use std::collections::HashMap;

use sno_journal::delta::State;
use sno_journal::model::SymbolId;
use sno_protocol::query::SymbolChange;

use crate::lookup::{all_symbols, Located};

/// Symbols added, removed and changed (same identity, different content or
/// signature) from `old` to `new`, ordered by path and line.
pub fn symbol_changes(old: &State, new: &State) -> Vec<SymbolChange> {
    let before: HashMap<SymbolId, Located> = all_symbols(old).map(|l| (l.symbol.id, l)).collect();
    let after: HashMap<SymbolId, Located> = all_symbols(new).map(|l| (l.symbol.id, l)).collect();
    let mut out = Vec::new();
    for l in all_symbols(new) {
        match before.get(&l.symbol.id) {
            None => out.push(SymbolChange {
                change: "added".into(),
                symbol: l.info(),
            }),
            Some(b)
                if b.symbol.content_hash != l.symbol.content_hash
                    || b.symbol.signature != l.symbol.signature =>
            {
                out.push(SymbolChange {
                    change: "changed".into(),
                    symbol: l.info(),
                })
            }
            Some(_) => {}
        }
    }
    for l in all_symbols(old) {
        if !after.contains_key(&l.symbol.id) {
            out.push(SymbolChange {
                change: "removed".into(),
                symbol: l.info(),
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.symbol.path, a.symbol.line, &a.change).cmp(&(&b.symbol.path, b.symbol.line, &b.change))
    });
    out
}
