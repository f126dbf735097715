//! References and the call graph. Resolved edges are exact; unresolved calls
//! that merely share the symbol's name are reported as heuristic.

use std::collections::{BTreeSet, HashMap, VecDeque};

use sno_journal::delta::State;
use sno_journal::model::{Edge, EdgeKind, EdgeTarget, Symbol, SymbolId, SymbolKind};
use sno_protocol::query::Reference;

use crate::lookup::Located;

/// Why an unresolved call listed by its name is heuristic.
const UNRESOLVED: &str = "unresolved call; only its name matches";

/// Lookups over a whole state's symbols and edges.
pub struct Graph<'a> {
    symbols: HashMap<SymbolId, Located<'a>>,
    /// target -> (file, edge) of every resolved edge into it.
    incoming: HashMap<SymbolId, Vec<(&'a str, &'a Edge)>>,
    /// callee name -> unresolved call sites written with that name.
    unresolved_calls: HashMap<&'a str, Vec<(&'a str, &'a Edge)>>,
}

impl<'a> Graph<'a> {
    /// Indexes a state.
    pub fn new(state: &'a State) -> Graph<'a> {
        let mut symbols = HashMap::new();
        let mut incoming: HashMap<SymbolId, Vec<(&str, &Edge)>> = HashMap::new();
        let mut unresolved_calls: HashMap<&str, Vec<(&str, &Edge)>> = HashMap::new();
        for (path, rec) in state {
            for symbol in &rec.symbols {
                symbols.insert(symbol.id, Located { path, symbol });
            }
            for e in &rec.edges {
                match &e.to {
                    EdgeTarget::Symbol(t) if e.kind != EdgeKind::Contains => {
                        incoming.entry(*t).or_default().push((path, e))
                    }
                    EdgeTarget::Unresolved(_) if e.kind == EdgeKind::Calls => unresolved_calls
                        .entry(e.name.as_str())
                        .or_default()
                        .push((path, e)),
                    _ => {}
                }
            }
        }
        Graph {
            symbols,
            incoming,
            unresolved_calls,
        }
    }

    /// Unresolved calls spelled like `target`, as written: a method is
    /// matched by calls on a receiver (`x.run()`), a function by bare calls
    /// and calls through a module (`run()`, `m.run()`).
    fn unresolved_named(&self, target: &Symbol) -> impl Iterator<Item = &(&'a str, &'a Edge)> {
        let member = target
            .parent
            .and_then(|p| self.symbols.get(&p))
            .is_some_and(|p| p.symbol.kind.is_type() || p.symbol.kind == SymbolKind::Impl);
        self.unresolved_calls
            .get(target.name.as_str())
            .into_iter()
            .flatten()
            .filter(move |(_, e)| {
                !member || matches!(&e.to, EdgeTarget::Unresolved(n) if n.contains('.'))
            })
    }

    /// A symbol by id.
    pub fn symbol(&self, id: SymbolId) -> Option<Located<'a>> {
        self.symbols.get(&id).copied()
    }

    fn name_of(&self, id: Option<SymbolId>) -> Option<String> {
        id.and_then(|i| self.symbols.get(&i))
            .map(|l| l.symbol.qualified_name.clone())
    }

    /// A reference along edge `e`; `by_name` when the edge is an
    /// unresolved call matched to its target by spelling alone.
    fn reference(&self, path: &str, e: &Edge, to: String, depth: u32, by_name: bool) -> Reference {
        let reason = if by_name {
            Some(UNRESOLVED.to_string())
        } else {
            e.certainty.reason().map(str::to_string)
        };
        Reference {
            kind: e.kind.name().to_string(),
            path: path.to_string(),
            line: e.line,
            from: self.name_of(e.from),
            to,
            depth,
            heuristic: reason.is_some(),
            reason,
        }
    }

    /// Every reference to `target`: resolved calls and inheritance (exact),
    /// then unresolved calls spelled like it (heuristic).
    pub fn references(&self, target: &Symbol) -> Vec<Reference> {
        let mut out: Vec<Reference> = self
            .incoming
            .get(&target.id)
            .into_iter()
            .flatten()
            .map(|(p, e)| self.reference(p, e, target.qualified_name.clone(), 1, false))
            .collect();
        for (p, e) in self.unresolved_named(target) {
            out.push(self.reference(p, e, target.qualified_name.clone(), 1, true));
        }
        out.sort_by(|a, b| (a.heuristic, &a.path, a.line).cmp(&(b.heuristic, &b.path, b.line)));
        out
    }

    /// Who calls `target`, up to `depth` hops (breadth first).
    pub fn callers(&self, target: &Symbol, depth: u32) -> Vec<Reference> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::from([target.id]);
        let mut queue = VecDeque::from([(target.id, 1u32)]);
        while let Some((id, d)) = queue.pop_front() {
            let Some(callee) = self.symbols.get(&id) else {
                continue;
            };
            for (p, e) in self.incoming.get(&id).into_iter().flatten() {
                if e.kind != EdgeKind::Calls {
                    continue;
                }
                out.push(self.reference(p, e, callee.symbol.qualified_name.clone(), d, false));
                if let Some(from) = e.from {
                    if d < depth && seen.insert(from) {
                        queue.push_back((from, d + 1));
                    }
                }
            }
            if d == 1 {
                for (p, e) in self.unresolved_named(callee.symbol) {
                    out.push(self.reference(p, e, callee.symbol.qualified_name.clone(), d, true));
                }
            }
        }
        out
    }

    /// What `source` calls, up to `depth` hops. Unresolved callees are listed
    /// (heuristic) but not followed.
    pub fn callees(&self, state: &'a State, source: &Symbol, depth: u32) -> Vec<Reference> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::from([source.id]);
        let mut queue = VecDeque::from([(source.id, 1u32)]);
        while let Some((id, d)) = queue.pop_front() {
            let Some(caller) = self.symbols.get(&id) else {
                continue;
            };
            let Some(rec) = state.get(caller.path) else {
                continue;
            };
            for e in rec
                .edges
                .iter()
                .filter(|e| e.kind == EdgeKind::Calls && e.from == Some(id))
            {
                match &e.to {
                    EdgeTarget::Symbol(t) => {
                        let to = self.name_of(Some(*t)).unwrap_or_else(|| e.name.clone());
                        out.push(self.reference(caller.path, e, to, d, false));
                        if d < depth && seen.insert(*t) {
                            queue.push_back((*t, d + 1));
                        }
                    }
                    EdgeTarget::Unresolved(name) => {
                        let mut r = self.reference(caller.path, e, name.clone(), d, true);
                        r.reason = Some("unresolved: not a symbol of the repository".into());
                        out.push(r);
                    }
                    _ => {}
                }
            }
        }
        out
    }
}
