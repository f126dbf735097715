//! Python: classes, functions and methods (docstrings as docs), module-level
//! UPPER_CASE constants, `import`/`from ... import`, calls and class bases.
//!
//! Imports: `import a.b as c` is module `a.b` with alias `c`; `from ..m
//! import x, y` is module `..m` (dots kept, relative) with names `[x, y]`;
//! each renamed name (`from m import x as z`) is its own import with names
//! `[x]` and alias `z`; `from m import *` has the name `*`.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AliasedImport = "aliased_import",
        AsPattern = "as_pattern",
        Assignment = "assignment",
        Attribute = "attribute",
        AugmentedAssignment = "augmented_assignment",
        Call = "call",
        ClassDefinition = "class_definition",
        Comment = "comment",
        DecoratedDefinition = "decorated_definition",
        Decorator = "decorator",
        DottedName = "dotted_name",
        ExceptClause = "except_clause",
        ExpressionStatement = "expression_statement",
        ForInClause = "for_in_clause",
        ForStatement = "for_statement",
        FunctionDefinition = "function_definition",
        GlobalStatement = "global_statement",
        Identifier = "identifier",
        ImportFromStatement = "import_from_statement",
        ImportStatement = "import_statement",
        KeywordArgument = "keyword_argument",
        Lambda = "lambda",
        ListComprehension = "list_comprehension",
        SetComprehension = "set_comprehension",
        DictionaryComprehension = "dictionary_comprehension",
        GeneratorExpression = "generator_expression",
        List = "list",
        ListPattern = "list_pattern",
        ListSplat = "list_splat",
        ListSplatPattern = "list_splat_pattern",
        NamedExpression = "named_expression",
        ParenthesizedExpression = "parenthesized_expression",
        PatternList = "pattern_list",
        String = "string",
        Subscript = "subscript",
        Tuple = "tuple",
        TuplePattern = "tuple_pattern",
        WildcardImport = "wildcard_import",
    }
    skip ["type", "integer", "float", "true", "false", "none", "escape_sequence"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Python file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Python {
        g: Grammar::get(&GRAMMAR, Language::Python),
        locals: Default::default(),
    };
    walker::walk(Language::Python, tree, src, &mut rules).into_facts()
}

struct Python {
    g: &'static Grammar<K>,
    /// The names each function binds in its own body (by the function
    /// node's id), made on the first bare call inside it.
    locals: rustc_hash::FxHashMap<usize, Vec<String>>,
}

impl<'t> Rules<'t> for Python {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => false,
            K::ClassDefinition => {
                let Some(name) = node.child_by_field_id(f.name) else {
                    return true;
                };
                let body = node.child_by_field_id(f.body);
                let doc = self.docstring(w, body);
                let name = w.text(name);
                let header_end = header_colon(node, body);
                let sym = w.symbol(&name, SymbolKind::Class, node, header_end, doc, None, true);
                self.with_decorators(w, sym, node);
                if let Some(bases) = node.child_by_field_id(f.superclasses) {
                    for i in 0..bases.named_child_count() {
                        let Some(base) = bases.named_child(i as u32) else {
                            continue;
                        };
                        match self.g.kind(base) {
                            K::Identifier | K::Attribute => w.inherit(sym, base),
                            K::Subscript => {
                                if let Some(v) = base.child_by_field_id(f.value) {
                                    w.inherit(sym, v);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                true
            }
            K::FunctionDefinition => {
                let Some(name) = node.child_by_field_id(f.name) else {
                    return true;
                };
                let body = node.child_by_field_id(f.body);
                let doc = self.docstring(w, body);
                let kind = if w.container_kind() == Some(SymbolKind::Class) {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                };
                let name = w.text(name);
                // A decorator that makes the function another thing than a
                // definition of its name is said before its signature: an
                // `@overload` stub declares a signature of the function
                // defined after it, and `@x.setter` / `@x.deleter` are
                // accessors of the property `x`'s getter defines.
                let marker = node
                    .parent()
                    .filter(|p| self.g.kind(*p) == K::DecoratedDefinition)
                    .and_then(|p| {
                        (0..p.named_child_count())
                            .filter_map(|i| p.named_child(i as u32))
                            .filter(|d| self.g.kind(*d) == K::Decorator)
                            .map(|d| w.text(d))
                            .find(|d| {
                                let d = d.trim();
                                sno_journal::model::is_overload_decorator(d)
                                    || sno_journal::model::accessor_decorator(d)
                                        .is_some_and(|(property, _)| property == name)
                            })
                            .map(|d| d.trim().to_string())
                    });
                let sym = w.symbol(&name, kind, node, header_colon(node, body), doc, None, true);
                self.with_decorators(w, sym, node);
                if let Some(decorator) = marker {
                    w.prefix_signature(sym, &decorator);
                }
                true
            }
            K::Assignment => {
                if w.container().is_none() {
                    if let Some(left) = node.child_by_field_id(f.left) {
                        if self.g.kind(left) == K::Identifier {
                            let name = w.text(left);
                            if source_text::is_upper_case(&name) {
                                w.symbol(
                                    &name,
                                    SymbolKind::Constant,
                                    node,
                                    None,
                                    String::new(),
                                    None,
                                    true,
                                );
                            }
                        }
                    }
                }
                true
            }
            K::ImportStatement => {
                self.import(w, node);
                false
            }
            K::ImportFromStatement => {
                self.import_from(w, node);
                false
            }
            K::Call => {
                if let Some(func) = node.child_by_field_id(f.function) {
                    match self.g.kind(func) {
                        K::Identifier => {
                            let callee = w.text(func);
                            // A name the function binds (`load =
                            // make_loader()`, `for load in ...`) is a local
                            // variable wherever it is used in the function:
                            // calling it calls a value, no definition of
                            // the name.
                            // Module-level names are no function's locals.
                            let local = w.may_call_a_local(&crate::locals::PYTHON, &callee, true)
                                && self.bound_in_enclosing_function(w, node, &callee);
                            if !local {
                                w.call(&callee, None, node);
                            }
                        }
                        K::Attribute => {
                            if let Some(attr) = func.child_by_field_id(f.attribute) {
                                let receiver = func.child_by_field_id(f.object).map(|o| {
                                    self.receiver(w, o)
                                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                                });
                                let callee = w.text(attr);
                                w.call(&callee, receiver, node);
                            }
                        }
                        _ => {}
                    }
                }
                true
            }
            // Only f-strings hold expressions (and so calls).
            K::String => w
                .bytes(node)
                .iter()
                .take(3)
                .any(|b| matches!(b, b'f' | b'F')),
            K::Skip => false,
            _ => true,
        }
    }
}

impl Python {
    /// Whether `name`, called at `at`, is a local variable of a function
    /// around it: bound in its body (assigned, a loop or `with`/`except`
    /// target, a walrus) and not declared `global` there. Python decides
    /// this per function, before the body runs, so a binding after the call
    /// counts too. Parameters are read from signatures at resolution
    /// (`sno_index::params`); a nested `def` is a definition, resolved.
    fn bound_in_enclosing_function(&mut self, w: &Walk<'_>, at: Node<'_>, name: &str) -> bool {
        let mut cur = at.parent();
        while let Some(n) = cur {
            match self.g.kind(n) {
                K::FunctionDefinition => {
                    let id = n.id();
                    if !self.locals.contains_key(&id) {
                        let bound = self.bound_names(w, n);
                        self.locals.insert(id, bound);
                    }
                    if self.locals[&id].iter().any(|b| b == name) {
                        return true;
                    }
                }
                K::Lambda => {
                    // `lambda load: load()`; a default value binds nothing.
                    if let Some(params) = n.child_by_field_id(self.g.f.parameters) {
                        let mut cursor = params.walk();
                        let bound = params.named_children(&mut cursor).any(|p| {
                            let id = match self.g.kind(p) {
                                K::Identifier => Some(p),
                                _ => p.child_by_field_id(self.g.f.name),
                            };
                            id.is_some_and(|id| w.text(id) == name)
                        });
                        if bound {
                            return true;
                        }
                    }
                }
                // A comprehension is a scope of its own: its `for` targets
                // are bound inside it only (`[f() for f in fs]`).
                K::ListComprehension
                | K::SetComprehension
                | K::DictionaryComprehension
                | K::GeneratorExpression => {
                    let mut cursor = n.walk();
                    let clauses: Vec<Node<'_>> = n
                        .named_children(&mut cursor)
                        .filter(|c| self.g.kind(*c) == K::ForInClause)
                        .collect();
                    for c in clauses {
                        let mut found = Vec::new();
                        if let Some(t) = c.child_by_field_id(self.g.f.left) {
                            self.targets(w, t, &mut found);
                        }
                        if found.iter().any(|b| b == name) {
                            return true;
                        }
                    }
                }
                _ => {}
            }
            cur = n.parent();
        }
        false
    }

    /// The names `function` binds in its body, less those it declares
    /// `global`. Nested functions, classes and lambdas are scopes of their
    /// own and are not looked into.
    fn bound_names(&self, w: &Walk<'_>, function: Node<'_>) -> Vec<String> {
        let f = &self.g.f;
        let mut bound = Vec::new();
        let mut global = Vec::new();
        let Some(body) = function.child_by_field_id(f.body) else {
            return bound;
        };
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let target = match self.g.kind(n) {
                K::FunctionDefinition
                | K::ClassDefinition
                | K::Lambda
                | K::Comment
                | K::ListComprehension
                | K::SetComprehension
                | K::DictionaryComprehension
                | K::GeneratorExpression => continue,
                K::String if !w.bytes(n).iter().take(3).any(|b| matches!(b, b'f' | b'F')) => {
                    continue
                }
                K::Assignment | K::AugmentedAssignment | K::ForStatement => {
                    n.child_by_field_id(f.left)
                }
                K::NamedExpression => n.child_by_field_id(f.name),
                K::AsPattern | K::ExceptClause => n.child_by_field_id(f.alias),
                K::GlobalStatement => {
                    self.targets(w, n, &mut global);
                    continue;
                }
                _ => None,
            };
            if let Some(t) = target {
                self.targets(w, t, &mut bound);
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        bound.retain(|b| !global.contains(b));
        bound
    }

    /// The names a binding target holds: `x`, `a, (b, *c)`, `[d, e]`; not
    /// an attribute or a subscript, which bind no name.
    fn targets(&self, w: &Walk<'_>, target: Node<'_>, out: &mut Vec<String>) {
        let mut stack = vec![target];
        while let Some(n) = stack.pop() {
            match self.g.kind(n) {
                K::Identifier => out.push(w.text(n).into_owned()),
                K::Attribute | K::Subscript => {}
                _ => {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
        }
    }

    /// The docstring of a class or function body: its first statement, if
    /// that is a plain string.
    fn docstring(&self, w: &Walk<'_>, body: Option<Node<'_>>) -> String {
        let Some(body) = body else {
            return String::new();
        };
        let mut cursor = body.walk();
        let first = body
            .named_children(&mut cursor)
            .find(|n| self.g.kind(*n) != K::Comment);
        let Some(stmt) = first.filter(|n| self.g.kind(*n) == K::ExpressionStatement) else {
            return String::new();
        };
        match stmt.named_child(0) {
            Some(s) if self.g.kind(s) == K::String => source_text::docstring(&w.text(s)),
            _ => String::new(),
        }
    }

    /// A decorated definition's span starts at its first decorator.
    fn with_decorators(&self, w: &mut Walk<'_>, sym: usize, def: Node<'_>) {
        if let Some(decorated) = def
            .parent()
            .filter(|p| self.g.kind(*p) == K::DecoratedDefinition)
        {
            w.extend_start(sym, decorated);
        }
    }

    /// The text of an identifier or attribute chain (`self`, `os.path`);
    /// `super()` is `super`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        if self.g.kind(node) == K::Call
            && node
                .child_by_field_id(self.g.f.function)
                .is_some_and(|f| self.g.kind(f) == K::Identifier && w.text(f) == "super")
        {
            return Some("super".into());
        }
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier => return Some(w.text(node).into_owned()),
                K::Attribute => cur = cur.child_by_field_id(self.g.f.object)?,
                _ => return None,
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match self.g.kind(child) {
                K::DottedName => {
                    let module = w.text(child).into_owned();
                    w.import(module, Vec::new(), None, false, node);
                }
                K::AliasedImport => {
                    let Some(name) = child.child_by_field_id(f.name) else {
                        continue;
                    };
                    let module = w.text(name).into_owned();
                    let alias = child
                        .child_by_field_id(f.alias)
                        .map(|a| w.text(a).into_owned());
                    w.import(module, Vec::new(), alias, false, node);
                }
                _ => {}
            }
        }
    }

    /// `from m import a, b as c`: the plain names share one import, each
    /// aliased name gets its own with the alias.
    fn import_from(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(module_node) = node.child_by_field_id(f.module_name) else {
            return;
        };
        let module = w.text(module_node).into_owned();
        let is_relative = module.starts_with('.');
        let mut names = Vec::new();
        let mut aliased = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.id() == module_node.id() {
                continue;
            }
            match self.g.kind(child) {
                K::DottedName => names.push(w.text(child).into_owned()),
                K::WildcardImport => names.push("*".to_string()),
                K::AliasedImport => {
                    let Some(name) = child.child_by_field_id(f.name) else {
                        continue;
                    };
                    let alias = child
                        .child_by_field_id(f.alias)
                        .map(|a| w.text(a).into_owned());
                    aliased.push((w.text(name).into_owned(), alias));
                }
                _ => {}
            }
        }
        if !names.is_empty() {
            w.import(module.clone(), names, None, is_relative, node);
        }
        for (name, alias) in aliased {
            w.import(module.clone(), vec![name], alias, is_relative, node);
        }
    }
}

/// The `:` that ends a `def`/`class` header: the signature stops there, so a
/// comment between it and the body stays out.
fn header_colon<'t>(def: Node<'t>, body: Option<Node<'t>>) -> Option<Node<'t>> {
    let body_start = body.map_or(def.end_byte(), |b| b.start_byte());
    let mut cursor = def.walk();
    let colon = def
        .children(&mut cursor)
        .filter(|c| !c.is_named() && c.kind() == ":" && c.start_byte() < body_start)
        .last();
    colon.or(body)
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const CONFIG: &str = r#""""Configuration loading."""
import os.path as osp
import json, sys
from ..core.base import BaseLoader, Source as Src
from . import schema

DEFAULT_PATH = "~/.app/config.json"
max_size = 10


class Config(BaseLoader, metaclass=Registry):
    """Holds settings.

    Loaded from JSON.
    """

    RETRIES = 3

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = osp.expanduser(path)
        self.data = {}

    @classmethod
    def load(cls, path: str = DEFAULT_PATH) -> "Config":
        """Load a config from `path`."""
        cfg = cls(path)
        cfg.reload()
        return cfg

    def reload(self):
        with open(self.path) as fh:
            self.data = json.load(fh)
        self.validate()
        schema.check(self.data)

    def get(self, key, default=None):
        # not a docstring
        return self.data.get(key, default)


class Empty(Config): pass


def main(argv):
    def inner():
        return Config.load(argv[1])
    cfg = inner()
    print(cfg.get("name"))
    sys.exit(0)
"#;

    #[test]
    fn config_loader_symbols() {
        let f = extract_clean(Language::Python, CONFIG);
        let want = [
            ("DEFAULT_PATH", S::Constant),
            ("Config", S::Class),
            ("Config.__init__", S::Method),
            ("Config.load", S::Method),
            ("Config.reload", S::Method),
            ("Config.get", S::Method),
            ("Empty", S::Class),
            ("main", S::Function),
            ("main.inner", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));
        assert_eq!(parent_of(&f, "Config.load"), "Config");
        assert_eq!(parent_of(&f, "main.inner"), "main");
        assert_eq!(parent_of(&f, "Config"), "-");
        assert_eq!(lines(&f, "Config"), (11, 39));
        // Its decorator is part of the definition, not of its signature.
        assert_eq!(lines(&f, "Config.load"), (24, 29));
        assert_eq!(lines(&f, "DEFAULT_PATH"), (7, 7));
        assert_eq!(lines(&f, "Empty"), (42, 42));
        let load = sym(&f, "Config.load");
        assert_eq!(load.name, "load");
        assert_eq!(
            load.signature,
            "def load(cls, path: str = DEFAULT_PATH) -> \"Config\""
        );
        assert_eq!(load.doc, "Load a config from `path`.");
        assert_span_text(CONFIG, load, "@classmethod", "return cfg");
        let config = sym(&f, "Config");
        assert_eq!(
            config.signature,
            "class Config(BaseLoader, metaclass=Registry)"
        );
        assert_eq!(config.doc, "Holds settings.\n\nLoaded from JSON.");
        assert_eq!(
            (config.span.start_col, config.span.start_byte),
            (1, CONFIG.find("class Config").unwrap() as u32)
        );
        // A comment is not a docstring, and stays out of the signature.
        let get = sym(&f, "Config.get");
        assert_eq!(
            (get.signature.as_str(), get.doc.as_str()),
            ("def get(self, key, default=None)", "")
        );
        assert_eq!(
            sym(&f, "Config.__init__").signature,
            "def __init__(self, path: str) -> None"
        );
        assert_ne!(
            sym(&f, "Config.reload").content_hash,
            sym(&f, "Config.get").content_hash
        );
    }

    #[test]
    fn config_loader_references() {
        let f = extract_clean(Language::Python, CONFIG);
        assert_eq!(
            imports(&f),
            [
                "os.path as osp @2",
                "json @3",
                "sys @3",
                "..core.base [BaseLoader] (rel) @4",
                "..core.base [Source] as Src (rel) @4",
                ". [schema] (rel) @5",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "Config.__init__ -> super.__init__ @20",
                "Config.__init__ -> super @20",
                "Config.__init__ -> osp.expanduser @21",
                "Config.load -> cls @27",
                "Config.load -> cfg.reload @28",
                "Config.reload -> open @32",
                "Config.reload -> json.load @33",
                "Config.reload -> self.validate @34",
                "Config.reload -> schema.check @35",
                "Config.get -> self.data.get @39",
                "main.inner -> Config.load @47",
                "main -> inner @48",
                "main -> print @49",
                "main -> cfg.get @49",
                "main -> sys.exit @50",
            ]
        );
        // `metaclass=` is a keyword argument, not a base.
        assert_eq!(
            inherits(&f),
            ["Config : BaseLoader @11", "Empty : Config @42"]
        );
        assert_eq!(f.calls[2].column, 21);
    }

    #[test]
    fn an_overload_stub_says_so_before_its_signature() {
        let src = "import typing as t\nfrom typing import overload\n\nclass P:\n    @t.overload\n    def get(self, a: int) -> int: ...\n\n    @overload\n    @staticmethod\n    def get(self, a: str) -> str: ...\n\n    @cache\n    def get(self, a):\n        return a\n";
        let f = extract_clean(Language::Python, src);
        let sigs: Vec<&str> = f
            .symbols
            .iter()
            .filter(|s| s.name == "get")
            .map(|s| s.signature.as_str())
            .collect();
        assert_eq!(
            sigs,
            [
                "@t.overload def get(self, a: int) -> int",
                "@overload def get(self, a: str) -> str",
                "def get(self, a)",
            ]
        );
        // A property's setter says so; a decorator naming another
        // property's setter does not make this one an accessor.
        let src = "class C:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n    def x(self, v):\n        pass\n\n    @x.setter\n    def y(self, v):\n        pass\n";
        let f2 = extract_clean(Language::Python, src);
        let props: Vec<&str> = f2
            .symbols
            .iter()
            .skip(1)
            .map(|s| s.signature.as_str())
            .collect();
        assert_eq!(
            props,
            ["def x(self)", "@x.setter def x(self, v)", "def y(self, v)"]
        );
        let stub = |s: &str| sno_journal::model::is_overload_decorator(s);
        assert_eq!(
            sigs.iter().map(|s| stub(s)).collect::<Vec<_>>(),
            [true, true, false]
        );
    }

    #[test]
    fn broken_code_keeps_recovered_symbols() {
        let src = "import os\n\nclass Good:\n    def ok(self):\n        return 1\n\ndef broken(:\n    pass\n\ndef after(x):\n    return os.getcwd()\n";
        let f = crate::extract(Language::Python, src.as_bytes());
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["Good", "Good.ok", "broken", "after"]);
        let d: Vec<_> = f
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(d, [(7, 12, "missing `)`")]);
        assert_eq!(calls(&f), ["after -> os.getcwd @11"]);
        assert_eq!(imports(&f), ["os @1"]);
    }

    #[test]
    fn a_call_of_a_name_the_function_binds_calls_no_definition() {
        let src = r#"def load():
    return 1

def assigned():
    load = make_loader()
    return load()

def looped(loaders):
    for load in loaders:
        load()

def walrus():
    if (load := make_loader()):
        load()

def bound_after_the_call():
    load()
    load = 3

def unpacked(pairs):
    first, (second, load) = pairs
    return load()

def handled():
    try:
        pass
    except Exception as load:
        load()

def closure():
    load = make_loader()
    def inner():
        return load()
    return inner

def declared_global():
    global load
    load = make_loader()
    return load()

def lambda_param():
    return lambda load: load()

def plain():
    return load()

def attribute_only(obj):
    obj.load = 1
    return load()

def comprehension(fs):
    firsts = [load() for load in fs]
    return load()
"#;
        let f = crate::extract(Language::Python, src.as_bytes());
        let loads: Vec<String> = calls(&f)
            .into_iter()
            .filter(|c| c.contains("-> load "))
            .collect();
        assert_eq!(
            loads,
            [
                "declared_global -> load @39",
                "plain -> load @45",
                "attribute_only -> load @49",
                "comprehension -> load @53",
            ]
        );
        // The calls that make the locals are kept.
        assert!(calls(&f).contains(&"assigned -> make_loader @5".to_string()));
    }
}
