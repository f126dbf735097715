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
    Certainty, Edge, EdgeKind, EdgeTarget, FileRecord, Guess, Language, RawCall, RawImport, Symbol,
    SymbolId, SymbolKind,
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
    /// Last segment of a directory's name (after its last `/` and `.`:
    /// `Config` for `src/Acme.Config`) -> directories with that name, for
    /// finding a namespace's directory without scanning them all.
    by_dir_name: HashMap<String, Vec<String>>,
}

/// Whether an import brings in every name of its module (`*`).
fn glob(imp: &RawImport) -> bool {
    imp.names.iter().any(|n| n == "*")
}

/// The key of a directory in [`PathIndex::by_dir_name`].
fn dir_name_key(dir: &str) -> &str {
    dir.rsplit(['/', '.']).next().unwrap_or(dir)
}

/// The one candidate whose path (as `path_of` gives it) ends with `segs`,
/// or else with the longest tail of them, of at least `keep` segments, that
/// one candidate ends with; `None` if a tail fits several. Paths are split
/// at `/` and `.`.
fn unique_by_tail<'c>(
    cands: &'c [String],
    segs: &[&str],
    keep: usize,
    path_of: impl Fn(&'c str) -> &'c str,
) -> Option<String> {
    let keep = keep.clamp(1, segs.len().max(1));
    for k in 0..=segs.len().saturating_sub(keep) {
        let tail = &segs[k..];
        let mut found = cands.iter().filter(|c| {
            let mut parts = path_of(c).rsplit(['/', '.']);
            tail.iter().rev().all(|s| parts.next() == Some(*s))
        });
        match (found.next(), found.next()) {
            (Some(one), None) => return Some(one.clone()),
            (Some(_), Some(_)) => return None,
            _ => {}
        }
    }
    None
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
            let n = self.dirs.entry(d.to_string()).or_default();
            *n += 1;
            if *n == 1 {
                Self::insert_sorted(
                    self.by_dir_name
                        .entry(dir_name_key(d).to_string())
                        .or_default(),
                    d,
                );
            }
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
                    Self::remove_sorted(&mut self.by_dir_name, dir_name_key(d), d);
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

    /// The unique directory whose path ends with the namespace `segs`, or
    /// with a tail of it of at least `keep` segments (a source root can
    /// stand for the leading ones: PHP's PSR-4, C# projects). A dotted
    /// directory name counts as nested ones (`src/Acme.Config` ends with
    /// `Acme`, `Config`).
    fn namespace_dir(&self, segs: &[&str], keep: usize) -> Option<String> {
        let cands = self.by_dir_name.get(*segs.last()?)?;
        unique_by_tail(cands, segs, keep, |d| d)
    }

    /// The file of a type named by a namespaced path (`a.b.Config` in
    /// `a/b/Config.kt`), found as [`PathIndex::namespace_dir`] finds a
    /// directory, keeping at least two segments of the path.
    fn type_file(&self, segs: &[&str], ext: &str) -> Option<String> {
        let cands = self.by_file_name.get(&format!("{}.{ext}", segs.last()?))?;
        let dot_ext = format!(".{ext}");
        unique_by_tail(cands, segs, 2, |p| p.strip_suffix(&dot_ext).unwrap_or(p))
    }

    /// A namespaced import (C#, PHP, Kotlin, Scala): the file of the type
    /// it names, or the directory of the namespace it names, or the
    /// directory of the namespace that holds what it names (a function, or
    /// a type in a file of another name). `glob` imports name a namespace
    /// first. A namespace's directory keeps `keep` segments of its path.
    fn resolve_namespaced(
        &self,
        m: &str,
        sep: char,
        ext: &str,
        glob: bool,
        keep: usize,
    ) -> Option<EdgeTarget> {
        let segs: Vec<&str> = m.split(sep).filter(|s| !s.is_empty()).collect();
        if segs.is_empty() {
            return None;
        }
        let file = || self.type_file(&segs, ext).map(EdgeTarget::File);
        let dir = |segs: &[&str]| self.namespace_dir(segs, keep).map(EdgeTarget::Module);
        if glob {
            return dir(&segs).or_else(file);
        }
        file()
            .or_else(|| dir(&segs))
            .or_else(|| dir(&segs[..segs.len() - 1]))
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
            // `using A.B;` names a namespace; `using static A.B.C;` and
            // `using X = A.B.C;` may name a type.
            Language::CSharp => self.resolve_namespaced(m, '.', "cs", glob(imp), 2),
            Language::Php if imp.is_relative => {
                // `require 'x.php'`: beside the file, from the root, or a
                // unique file of that path.
                let local = normalize(&join(dir, m))
                    .into_iter()
                    .chain(normalize(m))
                    .find(|p| self.has(p));
                local
                    .or_else(|| {
                        let tail = m.trim_start_matches(['.', '/']);
                        (!tail.is_empty())
                            .then(|| self.unique_suffix(tail))
                            .flatten()
                    })
                    .map(EdgeTarget::File)
            }
            // PSR-4 maps a vendor prefix to a source root: a namespace's
            // directory may keep only its last segment.
            Language::Php => self.resolve_namespaced(m, '\\', "php", false, 1),
            Language::Kotlin => self.resolve_namespaced(m, '.', "kt", glob(imp), 2),
            Language::Scala => self.resolve_namespaced(m, '.', "scala", glob(imp), 2),
            Language::Swift => {
                // A module is a target directory (`Sources/Name` in a
                // Swift package); `import struct A.B` imports from `A`.
                let module = m.split('.').next().unwrap_or(m);
                let preferred = format!("Sources/{module}");
                if self.dirs.contains_key(&preferred) {
                    return Some(EdgeTarget::Module(preferred));
                }
                self.namespace_dir(&[module], 1).map(EdgeTarget::Module)
            }
            // The generic tier records no imports.
            _ => None,
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
    /// The enclosing symbol, for members: its id, name, and whether it is
    /// an impl block (whose methods belong to the type it names).
    parent: Option<(SymbolId, std::sync::Arc<str>, bool)>,
    /// Language family: a name is only unique among files that can call
    /// each other.
    family: u8,
    /// A C or C++ prototype ([`Symbol::is_declaration`]): the function it
    /// declares is defined elsewhere, under the same name.
    declaration: bool,
    /// A hash of the segment of the qualified name before the name (`A` of
    /// `ns.A.run`; 0 for none): what a method declared in its class and
    /// defined out of it (`A::run` in a namespace) share, where their
    /// parents differ.
    owner: u32,
}

/// [`NameEntry::owner`] of a symbol.
fn owner_of(sym: &Symbol) -> u32 {
    sym.qualified_name
        .strip_suffix(sym.name.as_str())
        .and_then(|q| q.strip_suffix('.'))
        .map(|q| owner_hash(q.rsplit('.').next().unwrap_or(q)))
        .unwrap_or(0)
}

/// [`NameEntry::owner`] of a member of the type named `owner`.
fn owner_hash(owner: &str) -> u32 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    owner.hash(&mut h);
    (h.finish() >> 32) as u32 | 1
}

/// Languages whose files can refer to each other's symbols.
fn family(lang: Option<Language>) -> u8 {
    match lang {
        Some(Language::Python) => 1,
        Some(Language::JavaScript | Language::TypeScript | Language::Tsx) => 2,
        Some(Language::Go) => 3,
        Some(Language::Rust) => 4,
        // The JVM's languages call each other.
        Some(Language::Java | Language::Kotlin | Language::Scala) => 5,
        Some(Language::C | Language::Cpp) => 6,
        Some(Language::Ruby) => 7,
        Some(Language::CSharp) => 8,
        Some(Language::Php) => 9,
        Some(Language::Swift) => 10,
        // Each generic-tier language is a family of its own.
        Some(generic) => 100 + generic as u8,
        None => 0,
    }
}

/// Every symbol of the repository by name, kept in step with the state so a
/// commit that touches three files costs three files, not a rebuild. Entries
/// are ordered by path, then position, so resolution is deterministic.
#[derive(Debug, Default)]
pub struct SymbolIndex {
    by_name: HashMap<String, Vec<NameEntry>>,
    /// Types by id: name and file (what members and bases are found by).
    types: HashMap<SymbolId, (std::sync::Arc<str>, std::sync::Arc<str>)>,
    /// The bases each type names, as written.
    bases: HashMap<SymbolId, Vec<String>>,
    /// Set for an index of some of the repository's files only.
    partial: Option<Partial>,
}

/// What an index of some files knows of itself: the names whose every
/// definition it holds, and the others resolution asked for.
#[derive(Debug, Default)]
struct Partial {
    /// Keys ([`sno_journal::store::name_key`]) whose files are all held.
    complete: HashSet<String>,
    /// Files held (their symbols added), and files that must not be read
    /// from the views (the commit being indexed changes them).
    held: HashSet<String>,
    /// Keys looked up while not complete: resolution asks for them, is
    /// run again once they are, and is final when it asks for none.
    missed: std::sync::Mutex<HashSet<String>>,
}

impl SymbolIndex {
    /// An index holding no file yet, which notes every name it is asked
    /// for before all of the name's files are added
    /// ([`SymbolIndex::take_missed`], [`SymbolIndex::add_complete`]).
    pub fn partial() -> SymbolIndex {
        SymbolIndex {
            partial: Some(Partial::default()),
            ..SymbolIndex::default()
        }
    }

    /// Whether this index holds only some files ([`SymbolIndex::partial`]).
    pub fn is_partial(&self) -> bool {
        self.partial.is_some()
    }

    /// The definitions of `name`; in a partial index, a name not complete
    /// is noted as missed.
    fn named(&self, name: &str) -> Option<&Vec<NameEntry>> {
        if let Some(p) = &self.partial {
            let key = sno_journal::store::name_key(name);
            if !p.complete.contains(key) {
                p.missed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key.to_string());
            }
        }
        self.by_name.get(name)
    }

    /// The keys asked for and not complete since the last call, in order.
    pub fn take_missed(&mut self) -> Vec<String> {
        let Some(p) = &mut self.partial else {
            return Vec::new();
        };
        let missed = std::mem::take(p.missed.get_mut().unwrap_or_else(|e| e.into_inner()));
        let mut missed: Vec<String> = missed
            .into_iter()
            .filter(|k| !p.complete.contains(k))
            .collect();
        missed.sort();
        missed
    }

    /// Whether a partial index holds `path`'s symbols or must not read them.
    pub fn holds(&self, path: &str) -> bool {
        self.partial.as_ref().is_some_and(|p| p.held.contains(path))
    }

    /// In a partial index: adds `rec` unless its file is held, and holds it.
    pub fn add_held(&mut self, rec: &FileRecord) {
        let Some(p) = &mut self.partial else {
            return;
        };
        if p.held.insert(rec.path.clone()) {
            self.insert(rec, true);
        }
    }

    /// In a partial index: marks `path` held without adding it (a file
    /// the commit changes: its records come from the commit).
    pub fn hold(&mut self, path: &str) {
        if let Some(p) = &mut self.partial {
            p.held.insert(path.to_string());
        }
    }

    /// In a partial index: adds the files `defining` lists (every file
    /// defining a symbol under `keys`, as the views have them) that it
    /// does not hold, and marks `keys` complete.
    pub fn add_complete(&mut self, keys: &[String], defining: &State) {
        for rec in defining.values() {
            self.add_held(rec);
        }
        if let Some(p) = &mut self.partial {
            p.complete.extend(keys.iter().cloned());
        }
    }

    /// Indexes every symbol of a state.
    pub fn new(state: &State) -> SymbolIndex {
        let mut ix = SymbolIndex::default();
        for rec in state.values() {
            ix.add_unordered(rec);
        }
        ix.put_in_order();
        ix
    }

    /// Adds a file's symbols.
    pub fn add(&mut self, rec: &FileRecord) {
        self.insert(rec, true);
    }

    /// Adds a file's symbols after those of the files added before, out
    /// of order until [`SymbolIndex::put_in_order`]: files parsed in
    /// parallel arrive in any order, and keeping each name's entries in
    /// order as they came moved the entries of common names (`new`,
    /// `fmt`) once per file.
    pub fn add_unordered(&mut self, rec: &FileRecord) {
        self.insert(rec, false);
    }

    /// Puts the entries of files added by [`SymbolIndex::add_unordered`]
    /// in (path, position) order: cheap when they came in path order.
    pub fn put_in_order(&mut self) {
        // Stable: entries added in order already are one run, checked in
        // one pass.
        for entries in self.by_name.values_mut() {
            entries.sort_by(|a, b| (&*a.path, a.order).cmp(&(&*b.path, b.order)));
        }
    }

    fn insert(&mut self, rec: &FileRecord, in_order: bool) {
        let path: std::sync::Arc<str> = rec.path.as_str().into();
        let by_id: HashMap<SymbolId, &Symbol> = rec.symbols.iter().map(|s| (s.id, s)).collect();
        // One name per parent, shared by its members.
        let mut parent_names: HashMap<SymbolId, std::sync::Arc<str>> = HashMap::default();
        for (order, sym) in rec.symbols.iter().enumerate() {
            // A name already indexed is not copied to be looked up.
            if !self.by_name.contains_key(sym.name.as_str()) {
                self.by_name.insert(sym.name.clone(), Vec::new());
            }
            let parent = sym.parent.and_then(|p| by_id.get(&p)).map(|p| {
                let name = parent_names
                    .entry(p.id)
                    .or_insert_with(|| p.name.as_str().into());
                (p.id, name.clone(), p.kind == SymbolKind::Impl)
            });
            let v = self
                .by_name
                .get_mut(sym.name.as_str())
                .expect("the name was indexed above");
            let e = NameEntry {
                path: path.clone(),
                order: order as u32,
                id: sym.id,
                kind: sym.kind,
                top_level: sym.parent.is_none(),
                parent,
                family: family(rec.language),
                declaration: sym.is_declaration(),
                owner: owner_of(sym),
            };
            if in_order {
                let at = v.partition_point(|x| (&*x.path, x.order) < (&*e.path, e.order));
                v.insert(at, e);
            } else {
                v.push(e);
            }
            if sym.kind.is_type() {
                self.types
                    .insert(sym.id, (sym.name.as_str().into(), path.clone()));
            }
        }
        for i in &rec.refs.inherits {
            self.bases.entry(i.symbol).or_default().push(i.base.clone());
        }
    }

    /// How many symbols named `name` have a kind `want` accepts, per
    /// language family (what repository-unique resolution counts).
    pub fn count(&self, name: &str, want: fn(SymbolKind) -> bool) -> Vec<(u8, usize)> {
        let mut counts: Vec<(u8, usize)> = Vec::new();
        for e in self
            .named(name)
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
            self.types.remove(&sym.id);
            self.bases.remove(&sym.id);
        }
    }

    /// A type's name, by id.
    fn name_of(&self, ty: SymbolId) -> Option<String> {
        self.types.get(&ty).map(|(n, _)| n.to_string())
    }

    /// The bases a type names, as written.
    fn bases_of(&self, ty: SymbolId) -> impl Iterator<Item = &str> {
        self.bases
            .get(&ty)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Members named `name` of type `ty`: defined inside it, or in an impl
    /// block for a type of its name in the type's own directory (Rust keeps
    /// a type's impl blocks beside it).
    fn members<'s>(
        &'s self,
        name: &str,
        ty: SymbolId,
        ty_name: Option<&'s str>,
    ) -> impl Iterator<Item = &'s NameEntry> + 's {
        let ty_dir = self.types.get(&ty).map(|(_, p)| dir_of(p).to_string());
        self.named(name)
            .into_iter()
            .flatten()
            .filter(move |e| match &e.parent {
                Some((p, _, _)) if *p == ty => true,
                Some((_, pname, true)) => {
                    Some(&**pname) == ty_name && ty_dir.as_deref() == Some(dir_of(&e.path))
                }
                _ => false,
            })
    }
}

/// Everything resolution needs of the repository at one state.
pub struct Resolver<'a> {
    paths: &'a PathIndex,
    symbols: &'a SymbolIndex,
}

/// Exact when the definition found is the only candidate, else a guess
/// among several.
fn certainty_among(only: bool) -> Certainty {
    if only {
        Certainty::Exact
    } else {
        Certainty::Heuristic(Guess::Overloaded)
    }
}

/// Candidates of a call less the declarations of a function one of them
/// defines (a C or C++ prototype, a Python `@overload` stub, a TypeScript
/// overload signature): those are the same function, not alternatives.
/// With no definition among them, the declarations are what there is.
fn keep_definitions<T>(cands: &mut Vec<T>, declaration: impl Fn(&T) -> bool) {
    if cands.iter().any(|c| !declaration(c)) {
        cands.retain(|c| !declaration(c));
    }
}

/// Receivers that name the enclosing object or class.
const SELF_RECEIVERS: &[&str] = &["self", "this", "cls", "Self", "@"];

/// Whether a receiver names the enclosing object or class: PHP's too
/// (`$this->f()`, `static::f()`).
fn is_self(lang: Language, receiver: &str) -> bool {
    SELF_RECEIVERS.contains(&receiver)
        || (lang == Language::Php && matches!(receiver, "$this" | "static"))
}

/// Whether a receiver names the bases: `super`, C#'s `base`, PHP's
/// `parent`.
fn is_super(lang: Language, receiver: &str) -> bool {
    match lang {
        Language::CSharp => matches!(receiver, "super" | "base"),
        Language::Php => matches!(receiver, "super" | "parent"),
        _ => receiver == "super",
    }
}

/// Languages in which a bare call inside a method may call a method of the
/// enclosing class (an implicit `this`): Java, C++, Ruby, C#, Kotlin, Scala,
/// Swift, and of the generic tier Dart, Solidity and Groovy. In Python, Rust, JavaScript, Go and PHP (`$this->` is
/// required) a bare name is never a method of `self`.
fn implicit_receiver(lang: Language) -> bool {
    matches!(
        lang,
        Language::Java
            | Language::Cpp
            | Language::Ruby
            | Language::CSharp
            | Language::Kotlin
            | Language::Scala
            | Language::Swift
            | Language::Dart
            | Language::Solidity
            | Language::Groovy
    )
}

/// Languages whose files of one directory share a namespace without any
/// import: Go packages (functions and types), Java, Kotlin and Scala
/// packages, C# and PHP namespaces (a directory stands for the package or
/// namespace, as their conventions have it). Swift's module is a whole
/// build target: a name from another of its files is found only by being
/// unique, a guess.
fn package_scope(lang: Language) -> bool {
    matches!(
        lang,
        Language::Go
            | Language::Java
            | Language::Kotlin
            | Language::Scala
            | Language::CSharp
            | Language::Php
    )
}

/// Languages whose import without names (`import a.b.Config`) names the
/// last segment itself, a type or function, not a module to call through.
fn imports_name_last_segment(lang: Language) -> bool {
    matches!(
        lang,
        Language::Java | Language::Kotlin | Language::Scala | Language::Php | Language::CSharp
    )
}

/// The last segment of an import's module: `Config` for `a.b.Config` and
/// `App\Config`.
fn last_module_segment(module: &str) -> &str {
    module
        .rsplit(['.', '/', ':', '\\'])
        .next()
        .unwrap_or(module)
}

/// A function, method or constructor: what has parameters and a body of
/// code ([`SymbolKind::is_callable`] counts types too, as constructors).
fn is_function(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
    )
}

/// Whether a kind defines members (a method's container).
fn is_container(kind: SymbolKind) -> bool {
    kind.is_type() || kind == SymbolKind::Impl
}

/// Base classes are followed this many levels up for `self.method()`.
const BASE_DEPTH: usize = 4;

/// A resolved target and how sure it is.
type Resolved = (SymbolId, Certainty);

/// What one file can see: its own symbols and its imports.
struct FileScope<'r, 'a> {
    resolver: &'r Resolver<'a>,
    rec: &'r FileRecord,
    lang: Language,
    local: HashMap<SymbolId, &'r Symbol>,
    local_by_name: HashMap<&'r str, Vec<&'r Symbol>>,
    imports: Vec<(&'r RawImport, Option<EdgeTarget>)>,
}

impl<'r, 'a> FileScope<'r, 'a> {
    fn family(&self) -> u8 {
        family(Some(self.lang))
    }

    /// The innermost enclosing type (or impl block) of a symbol: `None`
    /// past a module, whose methods' `self` is whatever includes the module
    /// (a Ruby `module Helpers` inside `class Response` is mixed into other
    /// classes too), not the type around it.
    fn enclosing_type(&self, mut id: Option<SymbolId>) -> Option<&'r Symbol> {
        while let Some(i) = id {
            let s = self.local.get(&i)?;
            if is_container(s.kind) {
                return Some(s);
            }
            if s.kind == SymbolKind::Module {
                return None;
            }
            id = s.parent;
        }
        None
    }

    /// A name the file imports (by name, or through a glob import of a
    /// module that defines it): exact when the module defines the name
    /// once (Kotlin extensions of one name on two receivers are two).
    fn imported(&self, name: &str, want: fn(SymbolKind) -> bool) -> Option<Resolved> {
        self.imports.iter().find_map(|(imp, t)| {
            let t = t.as_ref()?;
            // A Swift `import Module` brings in every public name of it,
            // and a C or C++ `#include` every name its header declares.
            let whole = matches!(self.lang, Language::Swift | Language::C | Language::Cpp);
            // `from m import x as a`, `import { x as a } from "m"`, `use
            // m::x as a`: the file knows `x` by `a` alone, so `a()` calls
            // `x` and a bare `x()` is not this import's.
            if let (Some(alias), [original]) = (imp.alias.as_deref(), imp.names.as_slice()) {
                if alias == name && original != "*" {
                    return self.resolver.in_target(original, t, want, true);
                }
                return None;
            }
            let named =
                imp.names.iter().any(|n| n == name || n == "*") || (whole && imp.names.is_empty());
            if named {
                return self.resolver.in_target(name, t, want, true);
            }
            // `import a.b.Config;` names the class itself, and `import
            // a.b.Config as C` names it `C`.
            if imp.names.is_empty() && imports_name_last_segment(self.lang) {
                let last = last_module_segment(&imp.module);
                let local = imp.alias.as_deref().unwrap_or(last);
                if local == name {
                    return self.resolver.in_target(last, t, want, true);
                }
            }
            None
        })
    }

    /// The module `from <imp.module> import <name>` names, when `name` is a
    /// module of that package (Python).
    fn submodule(&self, imp: &RawImport, name: &str) -> Option<EdgeTarget> {
        if self.lang != Language::Python {
            return None;
        }
        // `from pkg import mod as m` names `pkg.mod` by `m`.
        let name = match (imp.alias.as_deref(), imp.names.as_slice()) {
            (Some(alias), [original]) if alias == name => original.as_str(),
            (Some(_), _) => return None,
            (None, names) if names.iter().any(|n| n == name) => name,
            (None, _) => return None,
        };
        let module = if imp.module.ends_with('.') {
            format!("{}{name}", imp.module)
        } else {
            format!("{}.{name}", imp.module)
        };
        let sub = RawImport {
            module,
            names: Vec::new(),
            alias: None,
            is_relative: imp.is_relative,
            line: imp.line,
        };
        self.resolver
            .paths
            .resolve_import(&self.rec.path, self.lang, &sub)
    }

    /// A symbol of the same package (another file of this directory):
    /// exact when the package defines the name once.
    fn same_package(&self, name: &str, want: fn(SymbolKind) -> bool) -> Option<Resolved> {
        if !package_scope(self.lang) {
            return None;
        }
        let dir = EdgeTarget::Module(dir_of(&self.rec.path).to_string());
        self.resolver.in_target(name, &dir, want, true)
    }

    /// A type the file can name: its own, an imported one, one of its
    /// package.
    fn type_in_scope(&self, name: &str) -> Option<SymbolId> {
        self.local_by_name
            .get(name)
            .and_then(|v| v.iter().find(|s| s.kind.is_type()))
            .map(|s| s.id)
            .or_else(|| self.imported(name, SymbolKind::is_type).map(|(id, _)| id))
            .or_else(|| {
                self.same_package(name, SymbolKind::is_type)
                    .map(|(id, _)| id)
            })
    }

    /// The method `name` of type `ty` (its own, or its impl blocks'). A
    /// type with several methods of the name (overloads, `#[cfg]` variants,
    /// the same method of two traits) has its first linked, as a guess: which
    /// one a call reaches takes types or a build configuration sno does not
    /// know.
    fn member(&self, ty: SymbolId, name: &str) -> Option<Resolved> {
        let ty_name = self.type_name(ty);
        let mut found: Vec<&NameEntry> = self
            .resolver
            .symbols
            .members(name, ty, ty_name.as_deref())
            .filter(|e| e.kind.is_callable())
            .collect();
        keep_definitions(&mut found, |e| e.declaration);
        let first = found.first()?.id;
        Some((first, certainty_among(found.len() == 1)))
    }

    /// A method of the class enclosing `caller`, or of one of its bases:
    /// exact when every base on the way was resolved by scope.
    fn own_method(&self, caller: Option<SymbolId>, name: &str) -> Option<Resolved> {
        self.method_from(caller, name, false)
    }

    /// [`FileScope::own_method`], from the bases only with `bases_only`
    /// (`super().name()`).
    fn method_from(
        &self,
        caller: Option<SymbolId>,
        name: &str,
        bases_only: bool,
    ) -> Option<Resolved> {
        let found = self.method_of_owner(caller, name, bases_only)?;
        // A method defined inside a function belongs to an anonymous or
        // local class (Java's `new Base() { .. }`, a Kotlin `object :`) or
        // an object literal, whose own members and bases come first and are
        // not known here: the enclosing class's method is a guess.
        let caller = caller.and_then(|id| self.local.get(&id));
        let anonymous = caller.is_some_and(|c| {
            c.kind == SymbolKind::Method
                && c.parent
                    .and_then(|p| self.local.get(&p))
                    .is_some_and(|p| is_function(p.kind))
        });
        Some(if anonymous {
            (found.0, Certainty::Heuristic(Guess::UnknownReceiver))
        } else {
            found
        })
    }

    /// [`FileScope::method_from`] by the enclosing type's scope rules.
    fn method_of_owner(
        &self,
        caller: Option<SymbolId>,
        name: &str,
        bases_only: bool,
    ) -> Option<Resolved> {
        let owner = self.enclosing_type(caller)?;
        // This file's methods of the owner, also in other blocks of the same
        // name (Rust impl blocks, reopened Ruby classes).
        let mut local: Vec<&Symbol> = self
            .local_by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|s| {
                s.kind.is_callable()
                    && s.parent.is_some()
                    && s.parent.and_then(|p| self.local.get(&p)).is_some_and(|p| {
                        p.id == owner.id || (is_container(p.kind) && p.name == owner.name)
                    })
            })
            .collect();
        keep_definitions(&mut local, |s| s.is_declaration());
        if !bases_only {
            let elsewhere = self.member(owner.id, name);
            if let Some(s) = local.first() {
                let several = local.len() > 1
                    || elsewhere.is_some_and(|(_, c)| !c.is_exact())
                    || self.overloaded_in_a_base(owner.id, name);
                return Some((s.id, certainty_among(!several)));
            }
            if elsewhere.is_some() {
                return elsewhere;
            }
        }
        // Up the bases: the owner's as written in this file, then theirs.
        let mut level: Vec<Resolved> = self
            .rec
            .refs
            .inherits
            .iter()
            .filter(|i| i.symbol == owner.id)
            .filter_map(|i| self.base_of(owner.id, &i.base))
            .collect();
        for _ in 0..BASE_DEPTH {
            let mut next = Vec::new();
            for (base, how) in level {
                if let Some((id, c)) = self.member(base, name) {
                    return Some((id, if c.is_exact() { how } else { c }));
                }
                for b in self.resolver.symbols.bases_of(base) {
                    // A base's own bases are known by name only.
                    if let Some(id) = self
                        .resolver
                        .unique(b, SymbolKind::is_type, self.family())
                        .filter(|id| *id != base)
                    {
                        next.push((id, Certainty::Heuristic(Guess::UniqueName)));
                    }
                }
            }
            level = next;
        }
        None
    }

    /// A base type named in this file.
    /// The base `name` of type `ty`: never `ty` itself. A class named
    /// like its base (`class TextWrapper(textwrap.TextWrapper)`) inherits
    /// from another definition of the name, here an import's: unknown.
    fn base_of(&self, ty: SymbolId, name: &str) -> Option<Resolved> {
        let found = match self.type_in_scope(name) {
            Some(id) => Some((id, Certainty::Exact)),
            None => self
                .resolver
                .unique(name, SymbolKind::is_type, self.family())
                .map(|id| (id, Certainty::Heuristic(Guess::UniqueName))),
        };
        found.filter(|(id, _)| *id != ty)
    }

    /// A callable in this file's own scope seen from `caller`, not a
    /// member of a type: a top-level function, or one nested in a function
    /// the call is inside (a nested function is a local name: from
    /// anywhere else a bare call of its name means something else).
    /// The innermost scope that defines the name wins, as it shadows the
    /// outer ones.
    fn free_function(
        &self,
        caller: Option<SymbolId>,
        name: &str,
        want: fn(SymbolKind) -> bool,
    ) -> Option<Resolved> {
        let mut cands: Vec<(&Symbol, usize)> = self
            .local_by_name
            .get(name)?
            .iter()
            .copied()
            .filter(|s| want(s.kind))
            .filter_map(|s| match s.parent.and_then(|p| self.local.get(&p)) {
                None => Some((s, usize::MAX)),
                Some(p) if is_container(p.kind) => None,
                // A method of an object literal a function makes binds no
                // name in that function: `{ optional() { return
                // optional(this) } }` calls the module's `optional`.
                Some(_) if s.kind == SymbolKind::Method && self.literal_members() => None,
                Some(p) => self.scope_distance(caller, p.id).map(|d| (s, d)),
            })
            .collect();
        let nearest = cands.iter().map(|(_, d)| *d).min()?;
        cands.retain(|(_, d)| *d == nearest);
        keep_definitions(&mut cands, |(s, _)| s.is_declaration());
        // Where a definition rebinds its name as it runs (Python, Ruby,
        // JavaScript), the last one in the file is the one left bound
        // unless a branch chose another; elsewhere the first stands for
        // its variants.
        let rebinds = matches!(
            self.lang,
            Language::Python
                | Language::Ruby
                | Language::JavaScript
                | Language::TypeScript
                | Language::Tsx
        );
        let pick = if rebinds {
            cands.last()?
        } else {
            cands.first()?
        }
        .0;
        // Two of the name in one scope are alternatives (`#[cfg]` or
        // `#ifdef` variants, `try: def f ... except: def f`): a guess.
        Some((pick.id, certainty_among(cands.len() == 1)))
    }

    /// A type's name: this file's, or the repository's.
    fn type_name(&self, ty: SymbolId) -> Option<String> {
        self.local
            .get(&ty)
            .map(|s| s.name.clone())
            .or_else(|| self.resolver.symbols.name_of(ty))
    }

    /// Whether, where methods overload (Java, Kotlin, C#, C++, Scala,
    /// Swift), a base of `ty` has several methods `name`: overriding one
    /// overload hides none of the others, so a call of the name may reach
    /// an inherited one (`add(5, 6)` beside an own `add(int)`). A base
    /// with one such method is what the own one overrides.
    fn overloaded_in_a_base(&self, ty: SymbolId, name: &str) -> bool {
        let overloads = matches!(
            self.lang,
            Language::Java
                | Language::Kotlin
                | Language::CSharp
                | Language::Cpp
                | Language::Scala
                | Language::Swift
        );
        overloads
            && self
                .rec
                .refs
                .inherits
                .iter()
                .filter(|i| i.symbol == ty)
                .filter_map(|i| self.base_of(ty, &i.base))
                .any(|(base, _)| {
                    let base_name = self.type_name(base);
                    let several = self
                        .resolver
                        .symbols
                        .members(name, base, base_name.as_deref())
                        .filter(|e| e.kind.is_callable() && !e.declaration)
                        .nth(1)
                        .is_some();
                    several
                })
    }

    /// The type of Go method `caller`'s receiver when `receiver` names it
    /// (and no local of the method rebinds it: the walker left such calls
    /// unrecorded as locals).
    fn go_receiver_type<'s>(&'s self, caller: Option<SymbolId>, receiver: &str) -> Option<&'s str> {
        if self.lang != Language::Go {
            return None;
        }
        let method = self.local.get(&caller?)?;
        let (name, ty) = crate::params::go_receiver(&method.signature)?;
        (name == receiver).then_some(ty)
    }

    /// Method `name` of Go type `ty`: declared anywhere in this file's
    /// package (its directory), as `ty.name`.
    fn go_method(&self, ty: &str, name: &str) -> Option<Resolved> {
        let owner = owner_hash(ty);
        let dir = dir_of(&self.rec.path);
        let found: Vec<&NameEntry> = self
            .resolver
            .symbols
            .named(name)?
            .iter()
            .filter(|e| e.owner == owner && e.kind.is_callable() && dir_of(&e.path) == dir)
            .collect();
        let first = found.first()?.id;
        Some((first, certainty_among(found.len() == 1)))
    }

    /// Whether a method inside a function is an object literal's member
    /// (JavaScript, TypeScript), whose name its methods' code cannot call
    /// bare.
    fn literal_members(&self) -> bool {
        matches!(
            self.lang,
            Language::JavaScript | Language::TypeScript | Language::Tsx
        )
    }

    /// A function nested in a function the call is inside (not a
    /// top-level one): [`FileScope::free_function`] limited to local names.
    fn nested_function(&self, caller: Option<SymbolId>, name: &str) -> Option<Resolved> {
        // Inside a function, not a namespace or module: a C++ namespace's
        // `log()` does not hide the class's own `log` for its methods.
        let nested = self.local_by_name.get(name)?.iter().any(|s| {
            s.kind.is_callable()
                && s.parent.and_then(|p| self.local.get(&p)).is_some_and(|p| {
                    is_function(p.kind) && self.scope_distance(caller, p.id).is_some()
                })
        });
        if !nested {
            return None;
        }
        self.free_function(caller, name, SymbolKind::is_callable)
    }

    /// The signatures of the caller and the functions around it, innermost
    /// first, up to the first type (whose fields are no parameters).
    fn callers(&self, caller: Option<SymbolId>) -> impl Iterator<Item = &'r str> + '_ {
        let at = |id: Option<SymbolId>| id.and_then(|id| self.local.get(&id).copied());
        std::iter::successors(at(caller), move |s| at(s.parent))
            .take_while(|s| is_function(s.kind))
            .map(|s| s.signature.as_str())
    }

    /// How many scopes out from `caller` the function `scope` is (0: the
    /// caller itself), or `None` when the caller is not inside it.
    fn scope_distance(&self, caller: Option<SymbolId>, scope: SymbolId) -> Option<usize> {
        let mut at = caller;
        let mut d = 0;
        while let Some(id) = at {
            if id == scope {
                return Some(d);
            }
            d += 1;
            at = self.local.get(&id).and_then(|s| s.parent);
        }
        None
    }

    /// Where a call lands, by the language's scoping rules first, then by a
    /// repository-unique name (a guess, labelled so).
    fn call(&self, call: &RawCall) -> Option<Resolved> {
        let callee = call.callee.as_str();
        let by_name = |guess: Guess| {
            self.resolver
                .unique(callee, SymbolKind::is_callable, self.family())
                .map(|id| (id, Certainty::Heuristic(guess)))
        };
        let go_receiver = call
            .receiver
            .as_deref()
            .and_then(|r| self.go_receiver_type(call.caller, r));
        match call.receiver.as_deref() {
            None => {
                // A parameter of the function the call is in (or of one
                // around it) shadows every function of its name: what it
                // calls is whatever was passed, a guess at most.
                if crate::params::shadowed_by_parameter(
                    self.lang,
                    callee,
                    self.callers(call.caller),
                ) {
                    return by_name(Guess::Shadowed);
                }
                // A function nested in the caller's own scope shadows the
                // methods of its class (a C# local function, a Kotlin
                // local fun).
                if let Some(r) = self.nested_function(call.caller, callee) {
                    return Some(r);
                }
                if implicit_receiver(self.lang) {
                    if let Some(r) = self.own_method(call.caller, callee) {
                        return Some(r);
                    }
                }
                // Without an implicit receiver a bare name is never a
                // method: Go's `MarkFlagRequired(f, n)` inside the method
                // `Command.MarkFlagRequired` calls the package's function.
                let want: fn(SymbolKind) -> bool = if implicit_receiver(self.lang) {
                    SymbolKind::is_callable
                } else {
                    |k| k.is_callable() && k != SymbolKind::Method
                };
                // A constructor call by the type's name.
                self.free_function(call.caller, callee, want)
                    .or_else(|| {
                        self.imported(callee, want)
                            .or_else(|| self.same_package(callee, want))
                    })
                    .or_else(|| {
                        self.resolver
                            .unique(callee, want, self.family())
                            .map(|id| (id, Certainty::Heuristic(Guess::UniqueName)))
                    })
            }
            Some(r) if is_self(self.lang, r) => self
                .own_method(call.caller, callee)
                .or_else(|| by_name(Guess::UnknownReceiver)),
            // A Go method's receiver (`mx.handle()` in `func (mx *Mux)`)
            // is its type's value, as `self` is elsewhere.
            Some(_) if go_receiver.is_some() => go_receiver
                .and_then(|ty| self.go_method(ty, callee))
                .or_else(|| by_name(Guess::UnknownReceiver)),
            // A method's `super().name()` is not itself, whatever else the
            // name may reach.
            Some(r) if is_super(self.lang, r) => self
                .method_from(call.caller, callee, true)
                .or_else(|| by_name(Guess::UnknownReceiver))
                .filter(|(id, _)| Some(*id) != call.caller),
            Some(r) => {
                // `module.func()` through an import of the module.
                let through_import = self.imports.iter().find_map(|(imp, t)| {
                    let t = t.as_ref()?;
                    let last = last_module_segment(&imp.module);
                    // An import that names a type is no module to call
                    // through: `Config.load()` is the type's (below).
                    let names_type = imp.names.is_empty() && imports_name_last_segment(self.lang);
                    // A Python alias of one name (`from pkg import mod as
                    // m`) names that name, not the package (below); Rust's
                    // `use crate::config as cfg` names the module.
                    let python_name = self.lang == Language::Python && !imp.names.is_empty();
                    let names_it = !names_type
                        && ((imp.alias.as_deref() == Some(r) && !python_name)
                            || imp.module == r
                            || (imp.alias.is_none() && last == r));
                    if names_it {
                        return self
                            .resolver
                            .in_target(callee, t, SymbolKind::is_callable, true);
                    }
                    // `from pkg import mod` then `mod.func()`.
                    let sub = self.submodule(imp, r)?;
                    self.resolver
                        .in_target(callee, &sub, SymbolKind::is_callable, true)
                });
                if through_import.is_some() {
                    return through_import;
                }
                // `Type.method()` / `Type::method()` on a type in scope.
                let head = r.rsplit(['.', ':', '\\']).next().unwrap_or(r);
                if let Some(r) = self
                    .type_in_scope(head)
                    .and_then(|ty| self.member(ty, callee))
                {
                    return Some(r);
                }
                by_name(Guess::UnknownReceiver)
            }
        }
    }
}

impl<'a> Resolver<'a> {
    /// A resolver over indexes that reflect the state being resolved.
    pub fn new(paths: &'a PathIndex, symbols: &'a SymbolIndex) -> Resolver<'a> {
        Resolver { paths, symbols }
    }

    /// The top-level (with `top_only`) symbol named `name` of a kind `want`
    /// accepts in `target` (a file, or a package's directory): exact when
    /// the target defines the name once (a prototype beside its definition
    /// is one), else the first, a guess among several.
    fn in_target(
        &self,
        name: &str,
        target: &EdgeTarget,
        want: fn(SymbolKind) -> bool,
        top_only: bool,
    ) -> Option<Resolved> {
        let cands = self.symbols.named(name)?;
        let mut all: Vec<&NameEntry> = cands
            .iter()
            .filter(|l| {
                want(l.kind)
                    && (!top_only || l.top_level)
                    && match target {
                        EdgeTarget::File(p) => *l.path == **p,
                        EdgeTarget::Module(d) => dir_of(&l.path) == d,
                        _ => false,
                    }
            })
            .collect();
        keep_definitions(&mut all, |l| l.declaration);
        let first = all.first()?.id;
        Some((first, certainty_among(all.len() == 1)))
    }

    /// The one symbol of the family named `name` of a kind `want` accepts.
    /// Prototypes do not count beside a definition: a C function declared in
    /// a header and defined in a source file is one function.
    fn unique(&self, name: &str, want: fn(SymbolKind) -> bool, fam: u8) -> Option<SymbolId> {
        let mut it = self
            .symbols
            .named(name)?
            .iter()
            .filter(|l| want(l.kind) && l.family == fam);
        let (first, second) = (it.next()?, it.next());
        let Some(second) = second else {
            return Some(first.id);
        };
        if !(first.declaration || second.declaration) {
            return None;
        }
        // Two or more, some of them prototypes: the one definition, or the
        // one prototype where nothing here defines it.
        let all = [first, second].into_iter().chain(it);
        let (defs, decls): (Vec<&NameEntry>, Vec<&NameEntry>) = all.partition(|l| !l.declaration);
        match (defs.as_slice(), decls.as_slice()) {
            ([one], _) | ([], [one]) => Some(one.id),
            _ => None,
        }
    }

    /// The definition of the function the prototype `id` (named `name`)
    /// declares: the one in the prototype's file if it has one (a static
    /// function declared before its use), else the family's only definition
    /// of that name and kind with the same owner (`A` of `A::run`). `id`
    /// itself when it declares nothing or the definition is not one symbol.
    fn defined(&self, id: SymbolId, name: &str) -> SymbolId {
        let Some(cands) = self.symbols.named(name) else {
            return id;
        };
        let Some(decl) = cands.iter().find(|l| l.id == id && l.declaration) else {
            return id;
        };
        // A method declared in its class is defined out of it (`A::f` in a
        // namespace): the kinds and owners match where the parents need not.
        let defs: Vec<&NameEntry> = cands
            .iter()
            .filter(|l| {
                !l.declaration
                    && l.kind == decl.kind
                    && l.family == decl.family
                    && l.owner == decl.owner
            })
            .collect();
        if let Some(same_file) = defs.iter().find(|l| l.path == decl.path) {
            return same_file.id;
        }
        match defs.as_slice() {
            [one] => one.id,
            _ => id,
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
        let Some(lang) = rec.language else {
            return edges;
        };
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
        let scope = FileScope {
            resolver: self,
            rec,
            lang,
            local: rec.symbols.iter().map(|s| (s.id, s)).collect(),
            local_by_name,
            imports: rec
                .refs
                .imports
                .iter()
                .map(|imp| (imp, self.paths.resolve_import(&rec.path, lang, imp)))
                .collect(),
        };
        for (imp, target) in &scope.imports {
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
        // Only C and C++ declare functions apart from their definitions;
        // elsewhere a call's target needs no second look (a name as common
        // as Rust's `new` has tens of thousands of definitions to scan).
        let declares = matches!(scope.lang, Language::C | Language::Cpp);
        for call in &rec.refs.calls {
            let (to, certainty) = match scope.call(call) {
                // A call reaches a C or C++ function through its prototype
                // (the header a file includes): it calls the definition.
                Some((id, c)) if declares => (
                    EdgeTarget::Symbol(scope.resolver.defined(id, &call.callee)),
                    c,
                ),
                Some((id, c)) => (EdgeTarget::Symbol(id), c),
                None => (
                    EdgeTarget::Unresolved(match &call.receiver {
                        Some(r) => format!("{r}.{}", call.callee),
                        None => call.callee.clone(),
                    }),
                    Certainty::Exact,
                ),
            };
            edges.push(Edge {
                kind: EdgeKind::Calls,
                from: call.caller,
                to,
                name: call.callee.clone(),
                line: call.line,
                certainty,
            });
        }
        for inh in &rec.refs.inherits {
            let base = inh.base.as_str();
            let local = scope
                .local_by_name
                .get(base)
                .and_then(|v| v.iter().find(|s| s.kind.is_type() && s.id != inh.symbol))
                .map(|s| (s.id, Certainty::Exact));
            let (to, certainty) = match local.or_else(|| scope.base_of(inh.symbol, base)) {
                Some((id, c)) => (EdgeTarget::Symbol(id), c),
                None => (EdgeTarget::Unresolved(base.to_string()), Certainty::Exact),
            };
            edges.push(Edge {
                kind: EdgeKind::Inherits,
                from: Some(inh.symbol),
                to,
                name: base.to_string(),
                line: inh.line,
                certainty,
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
    rec.refs.names_used()
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

    fn module(d: &str) -> Option<EdgeTarget> {
        Some(EdgeTarget::Module(d.into()))
    }

    #[test]
    fn csharp_namespaces_and_types() {
        let ix = index(&[
            "src/Acme.Config/Loader.cs",
            "src/Acme.Config/Formats/Json.cs",
            "tests/Acme.Tests/LoaderTests.cs",
        ]);
        let from = "tests/Acme.Tests/LoaderTests.cs";
        let using = |m: &str| RawImport {
            names: vec!["*".into()],
            ..imp(m, &[], false)
        };
        // `using A.B;` finds the namespace's directory, dotted or nested.
        assert_eq!(
            ix.resolve_import(from, Language::CSharp, &using("Acme.Config")),
            module("src/Acme.Config")
        );
        assert_eq!(
            ix.resolve_import(from, Language::CSharp, &using("Acme.Config.Formats")),
            module("src/Acme.Config/Formats")
        );
        // `using X = A.B.Type;` names the type's file.
        assert_eq!(
            ix.resolve_import(
                from,
                Language::CSharp,
                &imp("Acme.Config.Loader", &[], false)
            ),
            file("src/Acme.Config/Loader.cs")
        );
        assert_eq!(
            ix.resolve_import(from, Language::CSharp, &using("System.Linq")),
            None
        );
    }

    #[test]
    fn php_psr4_classes_functions_and_includes() {
        let ix = index(&[
            "src/Core/BaseLoader.php",
            "src/Util/functions.php",
            "lib/bootstrap.php",
            "public/index.php",
        ]);
        let from = "public/index.php";
        // `App\` stands for `src/`: the class is found by its path's tail.
        assert_eq!(
            ix.resolve_import(
                from,
                Language::Php,
                &imp("App\\Core\\BaseLoader", &[], false)
            ),
            file("src/Core/BaseLoader.php")
        );
        // `use function App\Util\helper;`: the namespace's directory.
        assert_eq!(
            ix.resolve_import(from, Language::Php, &imp("App\\Util\\helper", &[], false)),
            module("src/Util")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Php, &imp("../lib/bootstrap.php", &[], true)),
            file("lib/bootstrap.php")
        );
        assert_eq!(
            ix.resolve_import("lib/x.php", Language::Php, &imp("bootstrap.php", &[], true)),
            file("lib/bootstrap.php")
        );
        assert_eq!(
            ix.resolve_import(from, Language::Php, &imp("Vendor\\Lib\\Client", &[], false)),
            None
        );
    }

    #[test]
    fn kotlin_scala_and_swift() {
        let ix = index(&[
            "app/src/main/kotlin/com/acme/config/Loader.kt",
            "app/src/main/kotlin/com/acme/config/Util.kt",
            "core/src/main/scala/com/acme/core/Base.scala",
            "Sources/ConfigKit/Loader.swift",
            "Sources/App/main.swift",
        ]);
        let kt = "app/src/main/kotlin/com/acme/App.kt";
        assert_eq!(
            ix.resolve_import(
                kt,
                Language::Kotlin,
                &imp("com.acme.config.Loader", &[], false)
            ),
            file("app/src/main/kotlin/com/acme/config/Loader.kt")
        );
        // A function or a class of another file name: its package.
        assert_eq!(
            ix.resolve_import(
                kt,
                Language::Kotlin,
                &imp("com.acme.config.helper", &[], false)
            ),
            module("app/src/main/kotlin/com/acme/config")
        );
        assert_eq!(
            ix.resolve_import(kt, Language::Kotlin, &imp("com.acme.config", &["*"], false)),
            module("app/src/main/kotlin/com/acme/config")
        );
        assert_eq!(
            ix.resolve_import(kt, Language::Scala, &imp("com.acme.core.Base", &[], false)),
            file("core/src/main/scala/com/acme/core/Base.scala")
        );
        assert_eq!(
            ix.resolve_import(
                "Sources/App/main.swift",
                Language::Swift,
                &imp("ConfigKit", &[], false)
            ),
            module("Sources/ConfigKit")
        );
        assert_eq!(
            ix.resolve_import(
                "Sources/App/main.swift",
                Language::Swift,
                &imp("Foundation", &[], false)
            ),
            None
        );
    }

    #[test]
    fn dir_names_follow_removals() {
        let mut ix = index(&["a/Config/x.cs", "b/Config/y.cs"]);
        let using = |m: &str| RawImport {
            names: vec!["*".into()],
            ..imp(m, &[], false)
        };
        assert_eq!(
            ix.resolve_import("c.cs", Language::CSharp, &using("Config")),
            None
        );
        ix.remove("b/Config/y.cs");
        assert_eq!(
            ix.resolve_import("c.cs", Language::CSharp, &using("Config")),
            module("a/Config")
        );
    }
}

#[cfg(test)]
mod declaration_tests {
    use super::*;
    use sno_journal::delta::State;
    use sno_journal::test_support::record;

    /// A C++ file whose symbols are methods `(qualified name, signature)`.
    fn cpp(path: &str, b: u8, methods: &[(&str, &str)]) -> FileRecord {
        let names: Vec<&str> = methods
            .iter()
            .map(|(q, _)| q.rsplit('.').next().unwrap())
            .collect();
        let mut r = record(path, b, &names);
        r.language = Some(Language::Cpp);
        for (s, (q, sig)) in r.symbols.iter_mut().zip(methods) {
            s.kind = SymbolKind::Method;
            s.qualified_name = q.to_string();
            s.signature = sig.to_string();
        }
        r
    }

    #[test]
    fn a_prototype_leads_to_the_definition_of_its_own_owner_only() {
        let st = State::from([
            (
                "a.h".to_string(),
                cpp(
                    "a.h",
                    1,
                    &[("ns.A.run", "void run();"), ("ns.A.stop", "void stop();")],
                ),
            ),
            (
                "a.cc".to_string(),
                cpp("a.cc", 2, &[("ns.A.run", "void A::run()")]),
            ),
            (
                "b.h".to_string(),
                cpp("b.h", 3, &[("B.stop", "void stop()")]),
            ),
        ]);
        let symbols = SymbolIndex::new(&st);
        let paths = PathIndex::new(st.keys());
        let r = Resolver::new(&paths, &symbols);
        let (run, stop) = (st["a.h"].symbols[0].id, st["a.h"].symbols[1].id);
        // A::run is defined out of its class: the call lands there.
        assert_eq!(r.defined(run, "run"), st["a.cc"].symbols[0].id);
        // A::stop is defined nowhere here; B::stop is another function.
        assert_eq!(r.defined(stop, "stop"), stop);
        // A definition is its own.
        let def = st["b.h"].symbols[0].id;
        assert_eq!(r.defined(def, "stop"), def);
    }
}
