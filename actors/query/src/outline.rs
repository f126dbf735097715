//! A file's symbols as a tree, with signatures and no bodies.

use std::collections::HashMap;

use sno_journal::model::{FileRecord, SymbolId};
use sno_protocol::query::OutlineNode;

/// The outline of one file, top-level symbols first, children nested.
pub fn outline(rec: &FileRecord) -> Vec<OutlineNode> {
    let mut children: HashMap<Option<SymbolId>, Vec<usize>> = HashMap::new();
    for (i, s) in rec.symbols.iter().enumerate() {
        // A parent that is not in the file (never expected) makes a root.
        let parent = s.parent.filter(|p| rec.symbols.iter().any(|x| x.id == *p));
        children.entry(parent).or_default().push(i);
    }
    fn build(
        rec: &FileRecord,
        children: &HashMap<Option<SymbolId>, Vec<usize>>,
        at: Option<SymbolId>,
    ) -> Vec<OutlineNode> {
        children
            .get(&at)
            .map(|v| {
                v.iter()
                    .map(|&i| {
                        let s = &rec.symbols[i];
                        OutlineNode {
                            name: s.name.clone(),
                            kind: s.kind.name().to_string(),
                            line: s.span.start_line,
                            end_line: s.span.end_line,
                            signature: s.signature.clone(),
                            children: build(rec, children, Some(s.id)),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    build(rec, &children, None)
}
