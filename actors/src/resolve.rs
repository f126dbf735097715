//! Edge resolution: from the names a file mentions to the symbols and files of
//! the repository they mean.
//!
//! Calls resolve to a symbol: same file first, then imported names (and
//! receivers that are imported modules), then a name that is unique in the
//! repository; anything else is kept as unresolved with its name. Imports
//! resolve to a file or a package directory where the language's rules find
//! one. Pure and deterministic: the same state always gives the same edges,
//! which replay depends on.

use std::collections::BTreeSet;

// Keys are names and paths from the repository, not from an adversary over a
// network: the fast non-keyed hash is the right trade.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use sno_journal::delta::State;
use sno_journal::model::{
    Certainty, Edge, EdgeKind, EdgeTarget, FileRecord, Language, RawImport, Symbol, SymbolId,
    SymbolKind,
};

/// Facts derived from the set of paths alone; rebuilt only when files appear
/// or disappear.
#[derive(Debug, Default)]
pub struct PathIndex {
    paths: HashSet<String>,
    /// file name -> paths with that name.
    by_file_name: HashMap<String, Vec<String>>,
    /// dotted Python module name (and each of its dotted suffixes) -> files.
    python_modules: HashMap<String, Vec<String>>,
    /// Directories holding at least one file, with how many files are below
    /// them (Go packages, Java packages).
    dirs: HashMap<String, usize>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Resolves `.` and `..` segments; `None` if the path climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out.join("/"))
}

impl PathIndex {
    /// Indexes the paths of a state.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a String>) -> PathIndex {
        let mut ix = PathIndex::default();
        for p in paths {
            ix.add(p);
        }
        ix
    }

    fn python_module_keys(p: &str) -> Vec<String> {
        let Some(stem) = p.strip_suffix(".py").or_else(|| p.strip_suffix(".pyi")) else {
            return Vec::new();
        };
        let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
        let segs: Vec<&str> = stem.split('/').collect();
        (0..segs.len()).map(|k| segs[k..].join(".")).collect()
    }

    fn insert_sorted(v: &mut Vec<String>, p: &str) {
        if let Err(i) = v.binary_search_by(|x| x.as_str().cmp(p)) {
            v.insert(i, p.to_string());
        }
    }

    fn remove_sorted(map: &mut HashMap<String, Vec<String>>, key: &str, p: &str) {
        if let Some(v) = map.get_mut(key) {
            if let Ok(i) = v.binary_search_by(|x| x.as_str().cmp(p)) {
                v.remove(i);
            }
            if v.is_empty() {
                map.remove(key);
            }
        }
    }

    /// Adds a path.
    pub fn add(&mut self, p: &str) {
        if !self.paths.insert(p.to_string()) {
            return;
        }
        let name = p.rsplit('/').next().unwrap_or(p);
        Self::insert_sorted(self.by_file_name.entry(name.to_string()).or_default(), p);
        let mut d = dir_of(p);
        while !d.is_empty() {
            *self.dirs.entry(d.to_string()).or_default() += 1;
            d = dir_of(d);
        }
        for key in Self::python_module_keys(p) {
            Self::insert_sorted(self.python_modules.entry(key).or_default(), p);
        }
    }

    /// Removes a path.
    pub fn remove(&mut self, p: &str) {
        if !self.paths.remove(p) {
            return;
        }
        let name = p.rsplit('/').next().unwrap_or(p);
        Self::remove_sorted(&mut self.by_file_name, name, p);
        let mut d = dir_of(p);
        while !d.is_empty() {
            if let Some(n) = self.dirs.get_mut(d) {
                *n -= 1;
                if *n == 0 {
                    self.dirs.remove(d);
                }
            }
            d = dir_of(d);
        }
        for key in Self::python_module_keys(p) {
            Self::remove_sorted(&mut self.python_modules, &key, p);
        }
    }

    fn has(&self, p: &str) -> bool {
        self.paths.contains(p)
    }

    fn first_existing(&self, candidates: &[String]) -> Option<EdgeTarget> {
        candidates
            .iter()
            .find(|c| self.has(c))
            .map(|c| EdgeTarget::File(c.clone()))
    }

    /// The unique file whose path ends with `suffix` (on a segment boundary).
    fn unique_suffix(&self, suffix: &str) -> Option<String> {
        let name = suffix.rsplit('/').next().unwrap_or(suffix);
        let cands: Vec<&String> = self
            .by_file_name
            .get(name)?
            .iter()
            .filter(|p| p.as_str() == suffix || p.ends_with(&format!("/{suffix}")))
            .collect();
        match cands.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    }

    /// Resolves an import written in `from` (a file of language `lang`).
    pub fn resolve_import(
        &self,
        from: &str,
        lang: Language,
        imp: &RawImport,
    ) -> Option<EdgeTarget> {
        let m = imp.module.as_str();
        let dir = dir_of(from);
        match lang {
            Language::Python => self.resolve_python(dir, m),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                if !m.starts_with('.') {
                    return None;
                }
                let base = normalize(&join(dir, m))?;
                let mut cands = vec![base.clone()];
                for ext in ["ts", "tsx", "js", "jsx", "mjs", "cjs", "d.ts"] {
                    cands.push(format!("{base}.{ext}"));
                }
                for ext in ["ts", "tsx", "js", "jsx"] {
                    cands.push(format!("{base}/index.{ext}"));
                }
                self.first_existing(&cands)
            }
            Language::Go => {
                let segs: Vec<&str> = m.split('/').collect();
                (0..segs.len())
                    .map(|k| segs[k..].join("/"))
                    .find(|s| self.dirs.contains_key(s))
                    .map(EdgeTarget::Module)
            }
            Language::Rust => self.resolve_rust(from, m, &imp.names),
            Language::Java => {
                let m = m.strip_suffix(".*").unwrap_or(m);
                let as_path = m.replace('.', "/");
                if let Some(p) = self.unique_suffix(&format!("{as_path}.java")) {
                    return Some(EdgeTarget::File(p));
                }
                // A static import names a member: try its class.
                if let Some((cls, _)) = as_path.rsplit_once('/') {
                    if let Some(p) = self.unique_suffix(&format!("{cls}.java")) {
                        return Some(EdgeTarget::File(p));
                    }
                }
                let mut dirs = self
                    .dirs
                    .keys()
                    .filter(|d| *d == &as_path || d.ends_with(&format!("/{as_path}")));
                match (dirs.next(), dirs.next()) {
                    (Some(d), None) => Some(EdgeTarget::Module(d.clone())),
                    _ => None,
                }
            }
            Language::C | Language::Cpp => {
                if imp.is_relative {
                    if let Some(p) = normalize(&join(dir, m)) {
                        if self.has(&p) {
                            return Some(EdgeTarget::File(p));
                        }
                    }
                }
                self.unique_suffix(m).map(EdgeTarget::File)
            }
            Language::Ruby => {
                let with_ext = if m.ends_with(".rb") {
                    m.to_string()
                } else {
                    format!("{m}.rb")
                };
                if imp.is_relative {
                    return normalize(&join(dir, &with_ext))
                        .filter(|p| self.has(p))
                        .map(EdgeTarget::File);
                }
                if self.has(&format!("lib/{with_ext}")) {
                    return Some(EdgeTarget::File(format!("lib/{with_ext}")));
                }
                self.unique_suffix(&with_ext).map(EdgeTarget::File)
            }
        }
    }

    fn resolve_python(&self, dir: &str, m: &str) -> Option<EdgeTarget> {
        let level = m.chars().take_while(|&c| c == '.').count();
        let rest = &m[level..];
        if level > 0 {
            let mut base = dir.to_string();
            for _ in 1..level {
                base = dir_of(&base).to_string();
            }
            let rel = rest.replace('.', "/");
            let stem = if rel.is_empty() {
                base.clone()
            } else {
                join(&base, &rel)
            };
            if let Some(t) =
                self.first_existing(&[format!("{stem}.py"), format!("{stem}/__init__.py")])
            {
                return Some(t);
            }
            return self
                .dirs
                .contains_key(&stem)
                .then_some(EdgeTarget::Module(stem));
        }
        let rel = rest.replace('.', "/");
        if let Some(t) = self.first_existing(&[format!("{rel}.py"), format!("{rel}/__init__.py")]) {
            return Some(t);
        }
        match self.python_modules.get(rest).map(|v| v.as_slice()) {
            Some([one]) => Some(EdgeTarget::File(one.clone())),
            _ => None,
        }
    }

    fn resolve_rust(&self, from: &str, m: &str, names: &[String]) -> Option<EdgeTarget> {
        let segs: Vec<&str> = m.split("::").filter(|s| !s.is_empty()).collect();
        let (&first, rest) = segs.split_first()?;
        // The crate's src/ root and the module path of `from` within it.
        let (src_root, module_path): (String, Vec<String>) = match from.rfind("src/") {
            Some(i) if i == 0 || from.as_bytes()[i - 1] == b'/' => {
                let root = from[..i + 3].to_string();
                let inner = from[i + 4..].strip_suffix(".rs")?;
                let mut mp: Vec<String> = inner.split('/').map(str::to_string).collect();
                if matches!(mp.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    mp.pop();
                }
                (root, mp)
            }
            _ => return None,
        };
        let mut base: Vec<String> = match first {
            "crate" => Vec::new(),
            "self" => module_path,
            "super" => {
                let mut mp = module_path;
                mp.pop();
                mp
            }
            _ => return None,
        };
        let mut rest: Vec<&str> = rest.iter().copied().filter(|s| *s != "super").collect();
        // `use crate::a::{b}` may name module `b`: try it first when there is one name.
        if let [only] = names {
            rest.push(only.as_str());
        }
        base.extend(rest.iter().map(|s| s.to_string()));
        while !base.is_empty() {
            let p = base.join("/");
            if let Some(t) = self.first_existing(&[
                format!("{src_root}/{p}.rs"),
                format!("{src_root}/{p}/mod.rs"),
            ]) {
                return Some(t);
            }
            base.pop();
        }
        self.first_existing(&[format!("{src_root}/lib.rs"), format!("{src_root}/main.rs")])
    }
}

/// One definition of a name.
#[derive(Clone, Debug)]
struct NameEntry {
    path: std::sync::Arc<str>,
    /// Position in the file's canonical symbol order.
    order: u32,
    id: SymbolId,
    kind: SymbolKind,
    top_level: bool,
    /// Language family: a name is only unique among files that can call
    /// each other.
    family: u8,
}

/// Languages whose files can refer to each other's symbols.
fn family(lang: Option<Language>) -> u8 {
    match lang {
        Some(Language::Python) => 1,
        Some(Language::JavaScript | Language::TypeScript | Language::Tsx) => 2,
        Some(Language::Go) => 3,
        Some(Language::Rust) => 4,
        Some(Language::Java) => 5,
        Some(Language::C | Language::Cpp) => 6,
        Some(Language::Ruby) => 7,
        None => 0,
    }
}

/// Every symbol of the repository by name, kept in step with the state so a
/// commit that touches three files costs three files, not a rebuild. Entries
/// are ordered by path, then position, so resolution is deterministic.
#[derive(Debug, Default)]
pub struct SymbolIndex {
    by_name: HashMap<String, Vec<NameEntry>>,
}

impl SymbolIndex {
    /// Indexes every symbol of a state.
    pub fn new(state: &State) -> SymbolIndex {
        let mut ix = SymbolIndex::default();
        for rec in state.values() {
            ix.add(rec);
        }
        ix
    }

    /// Adds a file's symbols.
    pub fn add(&mut self, rec: &FileRecord) {
        let path: std::sync::Arc<str> = rec.path.as_str().into();
        for (order, sym) in rec.symbols.iter().enumerate() {
            let v = self.by_name.entry(sym.name.clone()).or_default();
            let e = NameEntry {
                path: path.clone(),
                order: order as u32,
                id: sym.id,
                kind: sym.kind,
                top_level: sym.parent.is_none(),
                family: family(rec.language),
            };
            let at = v.partition_point(|x| (&*x.path, x.order) < (&*e.path, e.order));
            v.insert(at, e);
        }
    }

    /// How many symbols named `name` have a kind `want` accepts, per
    /// language family (what repository-unique resolution counts).
    pub fn count(&self, name: &str, want: fn(SymbolKind) -> bool) -> Vec<(u8, usize)> {
        let mut counts: Vec<(u8, usize)> = Vec::new();
        for e in self
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|e| want(e.kind))
        {
            match counts.iter_mut().find(|(f, _)| *f == e.family) {
                Some((_, n)) => *n += 1,
                None => counts.push((e.family, 1)),
            }
        }
        counts.sort();
        counts
    }

    /// Removes a file's symbols.
    pub fn remove(&mut self, rec: &FileRecord) {
        for sym in &rec.symbols {
            if let Some(v) = self.by_name.get_mut(&sym.name) {
                v.retain(|e| !(e.id == sym.id && *e.path == *rec.path));
                if v.is_empty() {
                    self.by_name.remove(&sym.name);
                }
            }
        }
    }
}

/// Everything resolution needs of the repository at one state.
pub struct Resolver<'a> {
    paths: &'a PathIndex,
    symbols: &'a SymbolIndex,
}

const SELF_RECEIVERS: &[&str] = &["self", "this", "cls", "Self", "@"];

impl<'a> Resolver<'a> {
    /// A resolver over indexes that reflect the state being resolved.
    pub fn new(paths: &'a PathIndex, symbols: &'a SymbolIndex) -> Resolver<'a> {
        Resolver { paths, symbols }
    }

    fn in_target(
        &self,
        name: &str,
        target: &EdgeTarget,
        want: fn(SymbolKind) -> bool,
    ) -> Option<SymbolId> {
        let cands = self.symbols.by_name.get(name)?;
        let all: Vec<&NameEntry> = cands
            .iter()
            .filter(|l| {
                want(l.kind)
                    && match target {
                        EdgeTarget::File(p) => *l.path == **p,
                        EdgeTarget::Module(d) => dir_of(&l.path) == d,
                        _ => false,
                    }
            })
            .collect();
        // Prefer a top-level definition over a same-named member.
        all.iter()
            .find(|l| l.top_level)
            .or(all.first())
            .map(|l| l.id)
    }

    fn unique(&self, name: &str, want: fn(SymbolKind) -> bool, fam: u8) -> Option<SymbolId> {
        let mut it = self
            .symbols
            .by_name
            .get(name)?
            .iter()
            .filter(|l| want(l.kind) && l.family == fam);
        match (it.next(), it.next()) {
            (Some(one), None) => Some(one.id),
            _ => None,
        }
    }

    /// The import edges of a file: cheap, and all that can change for a file
    /// when only the set of paths changed.
    pub fn import_edges(&self, rec: &FileRecord) -> Vec<Edge> {
        let Some(lang) = rec.language else {
            return Vec::new();
        };
        let mut edges: Vec<Edge> = rec
            .refs
            .imports
            .iter()
            .map(|imp| Edge {
                kind: EdgeKind::Imports,
                from: None,
                to: self
                    .paths
                    .resolve_import(&rec.path, lang, imp)
                    .unwrap_or_else(|| EdgeTarget::Unresolved(imp.module.clone())),
                name: imp.module.clone(),
                line: imp.line,
                certainty: Certainty::Exact,
            })
            .collect();
        edges.sort();
        edges.dedup();
        edges
    }

    /// All edges of one file at this state.
    pub fn edges_for(&self, rec: &FileRecord) -> Vec<Edge> {
        let mut edges = Vec::new();
        let lang = match rec.language {
            Some(l) => l,
            None => return edges,
        };
        let local: HashMap<SymbolId, &Symbol> = rec.symbols.iter().map(|s| (s.id, s)).collect();
        let mut local_by_name: HashMap<&str, Vec<&Symbol>> = HashMap::default();
        for s in &rec.symbols {
            local_by_name.entry(s.name.as_str()).or_default().push(s);
            edges.push(Edge {
                kind: EdgeKind::Contains,
                from: s.parent,
                to: EdgeTarget::Symbol(s.id),
                name: s.name.clone(),
                line: s.span.start_line,
                certainty: Certainty::Exact,
            });
        }
        let imports: Vec<(&RawImport, Option<EdgeTarget>)> = rec
            .refs
            .imports
            .iter()
            .map(|imp| (imp, self.paths.resolve_import(&rec.path, lang, imp)))
            .collect();
        for (imp, target) in &imports {
            edges.push(Edge {
                kind: EdgeKind::Imports,
                from: None,
                to: target
                    .clone()
                    .unwrap_or_else(|| EdgeTarget::Unresolved(imp.module.clone())),
                name: imp.module.clone(),
                line: imp.line,
                certainty: Certainty::Exact,
            });
        }
        // The innermost enclosing type of a symbol, for `self.x()` calls.
        let enclosing_type = |mut id: Option<SymbolId>| -> Option<SymbolId> {
            while let Some(i) = id {
                let s = local.get(&i)?;
                if s.kind.is_type() || s.kind == SymbolKind::Impl {
                    return Some(i);
                }
                id = s.parent;
            }
            None
        };
        let imported_name = |name: &str, want: fn(SymbolKind) -> bool| -> Option<SymbolId> {
            imports.iter().find_map(|(imp, t)| {
                let t = t.as_ref()?;
                imp.names
                    .iter()
                    .any(|n| n == name)
                    .then(|| self.in_target(name, t, want))
                    .flatten()
            })
        };
        for call in &rec.refs.calls {
            let callee = call.callee.as_str();
            let recv = call.receiver.as_deref();
            let is_self = recv.is_some_and(|r| SELF_RECEIVERS.contains(&r));
            let mut target = None;
            if recv.is_none() || is_self {
                let cands: Vec<&Symbol> = local_by_name
                    .get(callee)
                    .map(|v| v.iter().copied().filter(|s| s.kind.is_callable()).collect())
                    .unwrap_or_default();
                let owner = enclosing_type(call.caller);
                let owner_name = owner.and_then(|o| local.get(&o)).map(|s| s.name.as_str());
                let same_owner = |s: &&Symbol| -> bool {
                    s.parent.is_some()
                        && (s.parent == owner
                            || s.parent
                                .and_then(|p| local.get(&p))
                                .map(|p| p.name.as_str())
                                == owner_name)
                };
                let preferred = cands.iter().find(|s| same_owner(s));
                target = if is_self {
                    preferred.or(cands.first())
                } else {
                    preferred
                        .or(cands.iter().find(|s| s.parent.is_none()))
                        .or(cands.first())
                }
                .map(|s| s.id);
            } else if let Some(r) = recv {
                // `module.func()` through an import, or `Class.method()` of this file.
                target = imports.iter().find_map(|(imp, t)| {
                    let t = t.as_ref()?;
                    let last = imp
                        .module
                        .rsplit(['.', '/', ':'])
                        .next()
                        .unwrap_or(&imp.module);
                    let names_it = imp.alias.as_deref() == Some(r)
                        || imp.module == r
                        || (imp.alias.is_none() && last == r)
                        || imp.names.iter().any(|n| n == r);
                    names_it
                        .then(|| self.in_target(callee, t, SymbolKind::is_callable))
                        .flatten()
                });
                if target.is_none() {
                    let head = r.rsplit('.').next().unwrap_or(r);
                    let class = local_by_name
                        .get(head)
                        .and_then(|v| v.iter().find(|s| s.kind.is_type()));
                    if let Some(class) = class {
                        target = local_by_name
                            .get(callee)
                            .and_then(|v| v.iter().find(|s| s.parent == Some(class.id)))
                            .map(|s| s.id);
                    }
                }
            }
            let target = target
                .or_else(|| imported_name(callee, SymbolKind::is_callable))
                .or_else(|| self.unique(callee, SymbolKind::is_callable, family(Some(lang))));
            edges.push(Edge {
                kind: EdgeKind::Calls,
                from: call.caller,
                to: match target {
                    Some(id) => EdgeTarget::Symbol(id),
                    None => EdgeTarget::Unresolved(match recv {
                        Some(r) => format!("{r}.{callee}"),
                        None => callee.to_string(),
                    }),
                },
                name: callee.to_string(),
                line: call.line,
                certainty: Certainty::Exact,
            });
        }
        for inh in &rec.refs.inherits {
            let base = inh.base.as_str();
            let target = local_by_name
                .get(base)
                .and_then(|v| v.iter().find(|s| s.kind.is_type() && s.id != inh.symbol))
                .map(|s| s.id)
                .or_else(|| imported_name(base, SymbolKind::is_type))
                .or_else(|| self.unique(base, SymbolKind::is_type, family(Some(lang))));
            edges.push(Edge {
                kind: EdgeKind::Inherits,
                from: Some(inh.symbol),
                to: target
                    .map(EdgeTarget::Symbol)
                    .unwrap_or_else(|| EdgeTarget::Unresolved(base.to_string())),
                name: base.to_string(),
                line: inh.line,
                certainty: Certainty::Exact,
            });
        }
        edges.sort();
        edges.dedup();
        edges
    }
}

/// The names a file's resolution depends on: if a symbol with one of these
/// names appears or disappears anywhere, the file's edges may change.
pub fn names_used(rec: &FileRecord) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    for c in &rec.refs.calls {
        names.insert(c.callee.as_str());
    }
    for i in &rec.refs.inherits {
        names.insert(i.base.as_str());
    }
    for i in &rec.refs.imports {
        names.extend(i.names.iter().map(String::as_str));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(module: &str, names: &[&str], is_relative: bool) -> RawImport {
        RawImport {
            module: module.into(),
            names: names.iter().map(|s| s.to_string()).collect(),
            alias: None,
            is_relative,
            line: 1,
        }
    }

    fn index(paths: &[&str]) -> PathIndex {
        let owned: Vec<String> = paths.iter().map(|s| s.to_string()).collect();
        PathIndex::new(owned.iter())
    }

    fn file(p: &str) -> Option<EdgeTarget> {
        Some(EdgeTarget::File(p.into()))
    }

    #[test]
    fn python_absolute_relative_and_src_layout() {
        let ix = index(&[
            "src/pkg/__init__.py",
            "src/pkg/config.py",
            "src/pkg/sub/util.py",
            "tools/run.py",
        ]);
        let from = "src/pkg/sub/util.py";
        assert_eq!(
            ix.resolve_import(from, Language::Python, &imp("pkg.config", &[], false)),
            file("src/pkg/config.py")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Python, &imp("..config", &["load"], false)),
            file("src/pkg/config.py")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Python, &imp("..", &["config"], false)),
            file("src/pkg/__init__.py")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Python, &imp("pkg", &[], false)),
            file("src/pkg/__init__.py")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Python, &imp("os.path", &[], false)),
            None
        );
    }

    #[test]
    fn javascript_relative_with_extensions_and_index() {
        let ix = index(&["web/api.ts", "web/lib/index.js", "web/app.tsx"]);
        let from = "web/app.tsx";
        assert_eq!(
            ix.resolve_import(from, Language::Tsx, &imp("./api", &[], true)),
            file("web/api.ts")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Tsx, &imp("./lib", &[], true)),
            file("web/lib/index.js")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Tsx, &imp("react", &[], false)),
            None
        );
        assert_eq!(
            ix.resolve_import(from, Language::Tsx, &imp("../../outside", &[], true)),
            None
        );
    }

    #[test]
    fn go_package_directories_by_import_path_suffix() {
        let ix = index(&["internal/store/db.go", "cmd/main.go"]);
        assert_eq!(
            ix.resolve_import(
                "cmd/main.go",
                Language::Go,
                &imp("example.com/app/internal/store", &[], false)
            ),
            Some(EdgeTarget::Module("internal/store".into()))
        );
        assert_eq!(
            ix.resolve_import("cmd/main.go", Language::Go, &imp("fmt", &[], false)),
            None
        );
    }

    #[test]
    fn rust_crate_self_and_super_paths() {
        let ix = index(&[
            "core/src/lib.rs",
            "core/src/config.rs",
            "core/src/net/mod.rs",
            "core/src/net/tcp.rs",
        ]);
        let from = "core/src/net/tcp.rs";
        assert_eq!(
            ix.resolve_import(
                from,
                Language::Rust,
                &imp("crate::config", &["Config"], false)
            ),
            file("core/src/config.rs")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Rust, &imp("super", &["Socket"], false)),
            file("core/src/net/mod.rs")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Rust, &imp("crate", &["config"], false)),
            file("core/src/config.rs")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Rust, &imp("std::fmt", &[], false)),
            None
        );
    }

    #[test]
    fn java_c_and_ruby() {
        let ix = index(&[
            "src/main/java/com/acme/Config.java",
            "src/main/java/com/acme/util/Strings.java",
            "include/acme/config.h",
            "src/config.c",
            "lib/acme/loader.rb",
            "lib/acme.rb",
        ]);
        let j = "src/main/java/com/acme/App.java";
        assert_eq!(
            ix.resolve_import(j, Language::Java, &imp("com.acme.Config", &[], false)),
            file("src/main/java/com/acme/Config.java")
        );
        assert_eq!(
            ix.resolve_import(j, Language::Java, &imp("com.acme.util.*", &[], false)),
            Some(EdgeTarget::Module("src/main/java/com/acme/util".into()))
        );
        assert_eq!(
            ix.resolve_import(
                "src/config.c",
                Language::C,
                &imp("acme/config.h", &[], true)
            ),
            file("include/acme/config.h")
        );
        assert_eq!(
            ix.resolve_import("src/config.c", Language::C, &imp("stdio.h", &[], false)),
            None
        );
        assert_eq!(
            ix.resolve_import(
                "lib/acme.rb",
                Language::Ruby,
                &imp("acme/loader", &[], true)
            ),
            file("lib/acme/loader.rb")
        );
        assert_eq!(
            ix.resolve_import("bin/x.rb", Language::Ruby, &imp("acme", &[], false)),
            file("lib/acme.rb")
        );
    }
}
