//! References and the call graph. Resolved edges are exact; unresolved calls
//! that merely share the symbol's name are reported as heuristic.

use std::collections::{BTreeSet, HashMap, VecDeque};

use sno_journal::delta::State;
use sno_journal::model::{Edge, EdgeKind, EdgeTarget, Symbol, SymbolId, SymbolKind};
use sno_protocol::query::Reference;

use crate::lookup::Located;

/// Why an unresolved call listed by its name is heuristic.
const UNRESOLVED: &str = "unresolved call; only its name matches";

/// Why a call of a method that `target` overrides is listed among its
/// references: the call is resolved to the base's method, and reaches the
/// override only when the receiver is of the overriding type.
fn through_base(base: &str, owner: &str) -> String {
    format!(
        "calls {base}, which this method overrides: it runs here when the receiver's type is {owner} or derives from it"
    )
}

/// Why an override is listed among a caller's callees: the call is
/// resolved to the base's method and runs the override for its receivers.
fn dispatched(base: &str, owner: &str) -> String {
    format!("overrides {base}, which this calls: it runs instead when the receiver's type is {owner} or derives from it")
}

/// Why a method of a derived type is listed among a method's references.
fn overrides_reason(owner: &str, base: &str) -> String {
    format!(
        "same name in {owner}, derived from {base}: an override (or an overload, where the language has them)"
    )
}

/// Types followed along an inheritance chain: past this, a cycle or a
/// generated hierarchy, not code a reader follows.
const MAX_TYPES: usize = 64;

/// The type a method belongs to: what overrides and is overridden.
pub fn method_owner(symbol: &Symbol) -> Option<SymbolId> {
    symbol.parent.filter(|_| symbol.kind == SymbolKind::Method)
}

/// `r`, labelled a guess for `reason`.
fn guessed(mut r: Reference, reason: String) -> Reference {
    r.heuristic = true;
    r.reason = Some(reason);
    r
}

/// Lookups over a whole state's symbols and edges.
pub struct Graph<'a> {
    symbols: HashMap<SymbolId, Located<'a>>,
    /// target -> (file, edge) of every resolved edge into it.
    incoming: HashMap<SymbolId, Vec<(&'a str, &'a Edge)>>,
    /// callee name -> unresolved call sites written with that name.
    unresolved_calls: HashMap<&'a str, Vec<(&'a str, &'a Edge)>>,
    /// type -> (what its inheritance edge names, the resolved base).
    bases: HashMap<SymbolId, Vec<(&'a str, SymbolId)>>,
    /// type -> the types inheriting from it.
    derived: HashMap<SymbolId, Vec<SymbolId>>,
    /// type in an inheritance hierarchy -> its methods.
    members: HashMap<SymbolId, Vec<SymbolId>>,
}

impl<'a> Graph<'a> {
    /// Indexes a state.
    pub fn new(state: &'a State) -> Graph<'a> {
        let mut symbols = HashMap::new();
        let mut incoming: HashMap<SymbolId, Vec<(&str, &Edge)>> = HashMap::new();
        let mut unresolved_calls: HashMap<&str, Vec<(&str, &Edge)>> = HashMap::new();
        let mut bases: HashMap<SymbolId, Vec<(&str, SymbolId)>> = HashMap::new();
        let mut members: HashMap<SymbolId, Vec<SymbolId>> = HashMap::new();
        let mut derived: HashMap<SymbolId, Vec<SymbolId>> = HashMap::new();
        for (path, rec) in state {
            for symbol in &rec.symbols {
                symbols.insert(symbol.id, Located { path, symbol });
                if let (SymbolKind::Method, Some(parent)) = (symbol.kind, symbol.parent) {
                    members.entry(parent).or_default().push(symbol.id);
                }
            }
            for e in &rec.edges {
                if let (EdgeKind::Inherits, Some(from), EdgeTarget::Symbol(base)) =
                    (e.kind, e.from, &e.to)
                {
                    bases
                        .entry(from)
                        .or_default()
                        .push((e.name.as_str(), *base));
                    derived.entry(*base).or_default().push(from);
                }
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
        // Only a type in a hierarchy has methods that override or are
        // overridden: a whole state's graph keeps no more than those.
        members.retain(|t, _| bases.contains_key(t) || derived.contains_key(t));
        Graph {
            symbols,
            incoming,
            unresolved_calls,
            bases,
            derived,
            members,
        }
    }

    /// The types inheriting from `owner`, directly or not, nearest first.
    pub fn descendants(&self, owner: SymbolId) -> Vec<SymbolId> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::from([owner]);
        let mut queue = VecDeque::from([owner]);
        while let Some(t) = queue.pop_front() {
            for &d in self.derived.get(&t).into_iter().flatten() {
                if seen.len() < MAX_TYPES && seen.insert(d) {
                    out.push(d);
                    queue.push_back(d);
                }
            }
        }
        out
    }

    /// The methods named `name` of `types`, in their order.
    fn methods_named<'s>(
        &'s self,
        types: Vec<SymbolId>,
        name: &'s str,
    ) -> impl Iterator<Item = Located<'a>> + 's {
        types
            .into_iter()
            .flat_map(|t| self.members.get(&t).into_iter().flatten())
            .filter_map(|m| self.symbols.get(m).copied())
            .filter(move |l| l.symbol.name == name)
    }

    /// The methods of `target`'s name in the types derived from its type.
    fn overriding(&self, target: &Symbol) -> Vec<Located<'a>> {
        let Some(owner) = method_owner(target) else {
            return Vec::new();
        };
        self.methods_named(self.descendants(owner), &target.name)
            .collect()
    }

    /// The types `owner` inherits from, nearest first, and the names of
    /// the bases whose definitions this graph lacks (a point query's
    /// partial state loads them by name and asks again).
    fn ancestors(&self, owner: SymbolId) -> (Vec<SymbolId>, Vec<&'a str>) {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        let mut seen = BTreeSet::from([owner]);
        let mut queue = VecDeque::from([owner]);
        while let Some(t) = queue.pop_front() {
            if self.symbols.contains_key(&t) && t != owner {
                found.push(t);
            }
            for &(name, base) in self.bases.get(&t).into_iter().flatten() {
                if !self.symbols.contains_key(&base) {
                    missing.push(name);
                } else if seen.len() < MAX_TYPES && seen.insert(base) {
                    queue.push_back(base);
                }
            }
        }
        (found, missing)
    }

    /// The methods `target` overrides: the methods of its name in the
    /// types its type inherits from, nearest first.
    pub fn overridden(&self, target: &Symbol) -> Vec<SymbolId> {
        let Some(owner) = method_owner(target) else {
            return Vec::new();
        };
        self.methods_named(self.ancestors(owner).0, &target.name)
            .map(|l| l.symbol.id)
            .collect()
    }

    /// Names of the bases up `target`'s inheritance chain whose
    /// definitions are not in this graph's state.
    pub fn missing_bases(&self, target: &Symbol) -> Vec<String> {
        method_owner(target).map_or_else(Vec::new, |owner| {
            self.ancestors(owner)
                .1
                .into_iter()
                .map(String::from)
                .collect()
        })
    }

    /// Resolved calls of the methods `target` overrides, as references
    /// to it: heuristic, since they reach it only through dispatch.
    fn calls_through_bases(&self, target: &Symbol) -> Vec<Reference> {
        let owner = self.name_of(target.parent).unwrap_or_default();
        let mut out = Vec::new();
        for base in self.overridden(target) {
            let base_name = self.name_of(Some(base)).unwrap_or_default();
            for (p, e) in self.incoming.get(&base).into_iter().flatten() {
                if e.kind != EdgeKind::Calls {
                    continue;
                }
                let r = self.reference(p, e, base_name.clone(), 1, false);
                out.push(guessed(r, through_base(&base_name, &owner)));
            }
        }
        out
    }

    /// Unresolved calls spelled like `target`, as written: a method is
    /// matched by calls on a receiver (`x.run()`), a function by bare calls
    /// and calls through a module (`run()`, `m.run()`).
    fn unresolved_named(&self, target: &Symbol) -> impl Iterator<Item = &(&'a str, &'a Edge)> {
        let member = target
            .parent
            .and_then(|p| self.symbols.get(&p))
            .is_some_and(|p| p.symbol.kind.is_type() || p.symbol.kind == SymbolKind::Impl);
        let id = target.id;
        self.unresolved_calls
            .get(target.name.as_str())
            .into_iter()
            .flatten()
            .filter(move |(_, e)| {
                !member || matches!(&e.to, EdgeTarget::Unresolved(n) if n.contains('.'))
            })
            // A method's call of its base's method of its own name
            // (`super().fill()` in `fill`) is not a call of itself.
            .filter(move |(_, e)| {
                let to_base = matches!(&e.to, EdgeTarget::Unresolved(n)
                    if n.split('.').next().is_some_and(|r| matches!(r, "super" | "base" | "parent")));
                !(to_base && e.from == Some(id))
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
        out.extend(self.calls_through_bases(target));
        for o in self.overriding(target) {
            let owner = self.name_of(o.symbol.parent).unwrap_or_default();
            let base = self.name_of(target.parent).unwrap_or_default();
            let reason = overrides_reason(&owner, &base);
            out.push(Reference {
                kind: "overrides".to_string(),
                path: o.path.to_string(),
                line: o.symbol.span.start_line,
                from: Some(o.symbol.qualified_name.clone()),
                to: target.qualified_name.clone(),
                depth: 1,
                heuristic: true,
                reason: Some(reason),
            });
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
                // Listed, not followed: a chain through dispatch is a
                // guess at every hop.
                out.extend(self.calls_through_bases(callee.symbol));
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
                        out.push(self.reference(caller.path, e, to.clone(), d, false));
                        if d < depth && seen.insert(*t) {
                            queue.push_back((*t, d + 1));
                        }
                        // The call may run an override instead: listed,
                        // not followed.
                        if let Some(callee) = self.symbols.get(t) {
                            for o in self.overriding(callee.symbol) {
                                let owner = self.name_of(o.symbol.parent).unwrap_or_default();
                                let r = self.reference(
                                    caller.path,
                                    e,
                                    o.symbol.qualified_name.clone(),
                                    d,
                                    false,
                                );
                                out.push(guessed(r, dispatched(&to, &owner)));
                            }
                        }
                    }
                    EdgeTarget::Unresolved(name) => {
                        let r = self.reference(caller.path, e, name.clone(), d, true);
                        out.push(guessed(
                            r,
                            "unresolved: not a symbol of the repository".into(),
                        ));
                    }
                    _ => {}
                }
            }
        }
        out
    }
}
