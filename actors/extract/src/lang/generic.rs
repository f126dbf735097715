//! The generic tier: languages whose definitions and calls come from a
//! tree-sitter tags query (`actors/extract/queries/<language>.scm`) instead
//! of an extractor of their own. Adding a language is a grammar crate, a
//! query file and a row of [`SPECS`].
//!
//! The captures follow tree-sitter's tags convention:
//! - `@definition.KIND` on the node that spans a definition, with `@name` on
//!   its name. KIND is one of function, method, class, struct, interface,
//!   trait, enum, union, module, namespace, type, constant, variable, field,
//!   macro, constructor; anything else is skipped.
//! - `@reference.call` on a call, with `@name` on the called name and, for a
//!   call through a value or module (`io.println`, `[obj msg]`), `@receiver`
//!   on it, so the call is never mistaken for a bare one.
//!
//! Other captures (for predicates such as `(#eq? @kind "def")`) are ignored.
//! Where two patterns define the same node, the first pattern in the file
//! wins; a reference whose name is a definition's own name (Julia's
//! `f(x) = ...`, Elixir's `def f(x)`) is not a call.
//!
//! Containers, doc comments (every comment directly above) and syntax
//! diagnostics come from the shared walker, as for the deep tier. A function
//! defined inside a class-like container is a method.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Query, QueryCursor, StreamingIterator, Tree};

use crate::facts::FileFacts;
use crate::walker::{self, DocStyle, Rules, Walk};

/// A language of the generic tier: its grammar and its tags query.
pub(crate) struct Spec {
    pub lang: Language,
    pub grammar: fn() -> tree_sitter::Language,
    pub query: &'static str,
}

macro_rules! spec {
    ($lang:ident, $grammar:expr, $file:literal) => {
        Spec {
            lang: Language::$lang,
            grammar: || $grammar.into(),
            query: include_str!(concat!("../../queries/", $file)),
        }
    };
}

/// Every language of the generic tier.
pub(crate) const SPECS: &[Spec] = &[
    spec!(Bash, tree_sitter_bash::LANGUAGE, "bash.scm"),
    spec!(Lua, tree_sitter_lua::LANGUAGE, "lua.scm"),
    spec!(Zig, tree_sitter_zig::LANGUAGE, "zig.scm"),
    spec!(Dart, tree_sitter_dart::LANGUAGE, "dart.scm"),
    spec!(Solidity, tree_sitter_solidity::LANGUAGE, "solidity.scm"),
    spec!(Hcl, tree_sitter_hcl::LANGUAGE, "hcl.scm"),
    spec!(Sql, tree_sitter_sequel::LANGUAGE, "sql.scm"),
    spec!(Julia, tree_sitter_julia::LANGUAGE, "julia.scm"),
    spec!(R, tree_sitter_r::LANGUAGE, "r.scm"),
    spec!(ObjectiveC, tree_sitter_objc::LANGUAGE, "objc.scm"),
    spec!(Groovy, tree_sitter_groovy::LANGUAGE, "groovy.scm"),
    spec!(Elixir, tree_sitter_elixir::LANGUAGE, "elixir.scm"),
    spec!(Erlang, tree_sitter_erlang::LANGUAGE, "erlang.scm"),
    spec!(Haskell, tree_sitter_haskell::LANGUAGE, "haskell.scm"),
    spec!(OCaml, tree_sitter_ocaml::LANGUAGE_OCAML, "ocaml.scm"),
    spec!(Elm, tree_sitter_elm::LANGUAGE, "elm.scm"),
    spec!(Gleam, tree_sitter_gleam::LANGUAGE, "gleam.scm"),
    spec!(Nix, tree_sitter_nix::LANGUAGE, "nix.scm"),
    spec!(Pascal, tree_sitter_pascal::LANGUAGE, "pascal.scm"),
];

/// The spec of a generic-tier language.
pub(crate) fn spec(lang: Language) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.lang == lang)
}

/// What a capture of the query stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Definition(SymbolKind),
    Call,
    Name,
    Receiver,
    /// Unknown definition kinds, and captures only predicates use.
    Ignored,
}

/// A tags query compiled for its grammar, with each capture's role and
/// which node kinds are comments.
pub(crate) struct Compiled {
    query: Query,
    roles: Vec<Role>,
    /// Indexed by node kind id.
    comment: Vec<bool>,
}

/// The compiled query of `lang`, built once per process; `Err` holds why the
/// query does not compile against its grammar (a bug the tests catch).
pub(crate) fn compiled(lang: Language) -> Result<&'static Compiled, &'static str> {
    static CACHE: [OnceLock<Result<Compiled, String>>; Language::ALL.len()] =
        [const { OnceLock::new() }; Language::ALL.len()];
    CACHE[lang as usize]
        .get_or_init(|| {
            let spec = spec(lang).ok_or_else(|| format!("{} has no tags query", lang.name()))?;
            // The query lives on: none of it may come from a scratch heap
            // open on this thread for the file being extracted.
            let _default_heap = crate::allocator::Scratch::suspend();
            compile(spec)
        })
        .as_ref()
        .map_err(String::as_str)
}

fn compile(spec: &Spec) -> Result<Compiled, String> {
    let grammar = (spec.grammar)();
    let query = Query::new(&grammar, spec.query)
        .map_err(|e| format!("the {} tags query: {e}", spec.lang.name()))?;
    let roles = query.capture_names().iter().map(|n| role(n)).collect();
    let comment = (0..grammar.node_kind_count())
        .map(|id| {
            u16::try_from(id).is_ok_and(|id| {
                grammar.node_kind_is_named(id)
                    && grammar
                        .node_kind_for_id(id)
                        .is_some_and(|k| k.contains("comment") || k == "haddock")
            })
        })
        .collect();
    Ok(Compiled {
        query,
        roles,
        comment,
    })
}

fn role(capture: &str) -> Role {
    match capture {
        "name" => Role::Name,
        "receiver" => Role::Receiver,
        "reference.call" => Role::Call,
        _ => match capture.strip_prefix("definition.").and_then(kind) {
            Some(k) => Role::Definition(k),
            None => Role::Ignored,
        },
    }
}

fn kind(name: &str) -> Option<SymbolKind> {
    Some(match name {
        "function" => SymbolKind::Function,
        "method" => SymbolKind::Method,
        "constructor" => SymbolKind::Constructor,
        "class" => SymbolKind::Class,
        "struct" => SymbolKind::Struct,
        "interface" => SymbolKind::Interface,
        "trait" => SymbolKind::Trait,
        "enum" => SymbolKind::Enum,
        "union" => SymbolKind::Union,
        "module" => SymbolKind::Module,
        "namespace" => SymbolKind::Namespace,
        "type" => SymbolKind::TypeAlias,
        "constant" => SymbolKind::Constant,
        "variable" => SymbolKind::Variable,
        "field" => SymbolKind::Field,
        "macro" => SymbolKind::Macro,
        _ => return None,
    })
}

/// A definition found by the query.
struct Definition {
    pattern: usize,
    kind: SymbolKind,
    /// Byte range of the name.
    name: (usize, usize),
}

/// A call found by the query.
struct Call {
    name: (usize, usize),
    receiver: Option<(usize, usize)>,
}

/// Extracts the facts of a parsed file of a generic-tier language.
pub(crate) fn extract(lang: Language, tree: &Tree, src: &[u8]) -> FileFacts {
    let c = match compiled(lang) {
        Ok(c) => c,
        Err(why) => return crate::failed(lang, why),
    };
    let mut defs: HashMap<usize, Definition> = HashMap::new();
    let mut calls: HashMap<usize, Call> = HashMap::new();
    let mut def_names: HashSet<(usize, usize)> = HashSet::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&c.query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        let (mut target, mut name, mut receiver) = (None, None, None);
        for cap in m.captures() {
            match c.roles[cap.index as usize] {
                Role::Definition(k) => target = Some((cap.node, Some(k))),
                Role::Call => target = Some((cap.node, None)),
                Role::Name => name = Some(range(cap.node)),
                Role::Receiver => receiver = Some(range(cap.node)),
                Role::Ignored => {}
            }
        }
        let (Some((node, kind)), Some(name)) = (target, name) else {
            continue;
        };
        match kind {
            Some(kind) => {
                let d = Definition {
                    pattern: m.pattern_index,
                    kind,
                    name,
                };
                match defs.entry(node.id()) {
                    Entry::Occupied(mut o) if d.pattern < o.get().pattern => {
                        o.insert(d);
                    }
                    Entry::Occupied(_) => {}
                    Entry::Vacant(v) => {
                        v.insert(d);
                    }
                }
                def_names.insert(name);
            }
            None => {
                calls.entry(node.id()).or_insert(Call { name, receiver });
            }
        }
    }
    calls.retain(|_, call| !def_names.contains(&call.name));
    let mut rules = Generic {
        comment: &c.comment,
        defs,
        calls,
    };
    walker::walk(lang, tree, src, &mut rules).into_facts()
}

fn range(node: Node<'_>) -> (usize, usize) {
    (node.start_byte(), node.end_byte())
}

struct Generic<'c> {
    comment: &'c [bool],
    defs: HashMap<usize, Definition>,
    calls: HashMap<usize, Call>,
}

impl<'t> Rules<'t> for Generic<'_> {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        if self
            .comment
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(false)
        {
            w.comment(node);
            return false;
        }
        if let Some(d) = self.defs.get(&node.id()) {
            let name = text(w.src, d.name);
            let kind = match (d.kind, w.container_kind()) {
                (SymbolKind::Function, Some(k)) if holds_methods(k) => SymbolKind::Method,
                (k, _) => k,
            };
            if !name.is_empty() {
                let doc = w.doc_comment(node, DocStyle::AnyComment);
                w.symbol(&name, kind, node, first_below(node), doc, None, true);
            }
        }
        if let Some(call) = self.calls.get(&node.id()) {
            let receiver = call.receiver.map(|r| text(w.src, r));
            w.call(&text(w.src, call.name), receiver, node);
        }
        true
    }
}

/// No query names a body: a signature is the definition's first line, up
/// to the first node (in pre-order) that starts below it.
fn first_below(node: Node<'_>) -> Option<Node<'_>> {
    let row = node.start_position().row;
    let mut c = node.walk();
    'walk: loop {
        if c.node().start_position().row > row {
            return Some(c.node());
        }
        if c.goto_first_child() {
            continue;
        }
        while !c.goto_next_sibling() {
            if !c.goto_parent() || c.node() == node {
                break 'walk;
            }
        }
    }
    None
}

/// Whether functions defined inside a symbol of this kind are its methods.
fn holds_methods(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Interface
            | SymbolKind::Trait
            | SymbolKind::Impl
            | SymbolKind::Enum
    )
}

/// The text of a byte range, on one line: a name or receiver spanning
/// lines (an Objective-C message's receiver) is kept to its first.
fn text(src: &[u8], (start, end): (usize, usize)) -> String {
    let bytes = src.get(start..end).unwrap_or_default();
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;

    /// (language, source, definitions as `kind qualified_name`, calls as
    /// `caller -> callee`).
    type Case = (
        Language,
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    );

    const CASES: &[Case] = &[
        (
            Language::Bash,
            "# Greets.\ngreet() {\n  helper \"$1\"\n}\nfunction helper {\n  ls\n}\n",
            &["function greet", "function helper"],
            &["greet -> helper", "helper -> ls"],
        ),
        (
            Language::Lua,
            "local function add(a, b)\n  return a + b\nend\nfunction M.sub(a, b) return add(a, -b) end\nfunction M:m(x) self:other(x) end\n",
            &["function add", "function sub", "method m"],
            &["sub -> add", "m -> self.other"],
        ),
        (
            Language::Zig,
            "/// Adds.\npub fn add(a: i32) i32 {\n    return helper(a);\n}\nconst Point = struct {\n    pub fn init() Point { return std.mem.zeroes(Point); }\n};\n",
            &["function add", "struct Point", "method Point.init"],
            &["add -> helper", "Point.init -> std.mem.zeroes"],
        ),
        (
            Language::Dart,
            "class Point extends Base {\n  Point(this.x);\n  double distance(Point o) {\n    return sqrt(o.x);\n  }\n}\nvoid main() { print(1); }\n",
            &["class Point", "constructor Point.Point", "method Point.distance", "function main"],
            &["Point.distance -> sqrt", "main -> print"],
        ),
        (
            Language::Solidity,
            "contract Token is ERC20 {\n    function transfer(address to) public {\n        _move(to);\n    }\n}\ninterface IThing { function f() external; }\n",
            &["class Token", "method Token.transfer", "interface IThing", "method IThing.f"],
            &["Token.transfer -> _move"],
        ),
        (
            Language::Hcl,
            "resource \"aws_instance\" \"web\" {\n  ami = \"x\"\n}\nvariable \"region\" {}\n",
            &["struct web", "variable region"],
            &[],
        ),
        (
            Language::Sql,
            "CREATE TABLE users (id INT);\nCREATE FUNCTION add_one(x integer) RETURNS integer AS $$ SELECT x + 1 $$ LANGUAGE sql;\nSELECT count(*) FROM users;\n",
            &["struct users", "function add_one"],
            &["- -> count"],
        ),
        (
            Language::Julia,
            "function add(a, b)\n    helper(a) + b\nend\nsquare(x) = x^2\nstruct Point\n    x::Int\nend\nmodule M\nend\n",
            &["function add", "function square", "struct Point", "module M"],
            &["add -> helper"],
        ),
        (
            Language::R,
            "# Adds.\nadd <- function(a, b) {\n  helper(a) + b\n}\nsub = function(a, b) a - b\n",
            &["function add", "function sub"],
            &["add -> helper"],
        ),
        (
            Language::ObjectiveC,
            "@interface Foo : NSObject\n- (void)bar:(int)x;\n@end\n@implementation Foo\n- (void)bar:(int)x {\n  [self baz:x];\n  helper(x);\n}\n@end\nvoid helper(int x) {}\n",
            &["class Foo", "method Foo.bar", "class Foo", "method Foo.bar", "function helper"],
            &["Foo.bar -> self.baz", "Foo.bar -> helper"],
        ),
        (
            Language::Groovy,
            "class Foo extends Bar {\n  def greet(String n) {\n    helper(n)\n  }\n}\ndef top(List a) { a.each { it } }\n",
            &["class Foo", "method Foo.greet", "function top"],
            &["Foo.greet -> helper", "top -> a.each"],
        ),
        (
            Language::Elixir,
            "defmodule MyApp.Greeter do\n  def hello(name) do\n    helper(name)\n    String.upcase(name)\n  end\n  defp helper(x), do: x\nend\n",
            &["module MyApp.Greeter", "function MyApp.Greeter.hello", "function MyApp.Greeter.helper"],
            &["MyApp.Greeter.hello -> helper", "MyApp.Greeter.hello -> String.upcase"],
        ),
        (
            Language::Erlang,
            "-module(greeter).\n%% Says hi.\nhello(Name) ->\n    helper(Name),\n    io:format(\"hi\", [Name]).\nhelper(X) -> X.\n",
            &["module greeter", "function hello", "function helper"],
            &["hello -> helper", "hello -> io.format"],
        ),
        (
            Language::Haskell,
            "module Main where\n-- | Adds.\nadd :: Int -> Int -> Int\nadd a b = helper a + b\nhelper x = x\ndata Color = Red | Green\nclass Pretty a where\n  pretty :: a -> String\n",
            &["module Main", "function add", "function helper", "type_alias Color", "class Pretty", "method Pretty.pretty"],
            &["add -> helper"],
        ),
        (
            Language::OCaml,
            "(** Adds. *)\nlet add a b = helper a + b\nlet x = 3\ntype color = Red | Green\nmodule M = struct\n  let inner () = print_endline \"x\"\nend\n",
            &["function add", "variable x", "type_alias color", "module M", "function M.inner"],
            &["add -> helper", "M.inner -> print_endline"],
        ),
        (
            Language::Elm,
            "module Main exposing (..)\nadd : Int -> Int -> Int\nadd a b = helper a + b\nhelper x = x\ntype alias Model = { count : Int }\n",
            &["module Main", "function add", "function helper", "type_alias Model"],
            &["add -> helper"],
        ),
        (
            Language::Gleam,
            "import gleam/io\n/// Says hi.\npub fn hello(name: String) {\n  helper(name)\n  io.println(name)\n}\nfn helper(x) { x }\npub const max = 10\n",
            &["function hello", "function helper", "constant max"],
            &["hello -> helper", "hello -> io.println"],
        ),
        (
            // Gleam 1.11's assert statements, which the grammar does not
            // know, lose nothing after them.
            Language::Gleam,
            "pub fn length_test() {\n  assert list.length([]) == 0\n  assert list.length([1]) == 1\n}\n\npub fn count_test() {\n  assert list.count([], is_odd) == 0\n}\n\nfn is_odd(x) { x % 2 == 1 }\n",
            &["function length_test", "function count_test", "function is_odd"],
            &["length_test -> list.length", "count_test -> list.count"],
        ),
        (
            Language::Nix,
            "let\n  add = a: b: a + b;\nin {\n  result = add 1 2;\n  shell = pkgs.mkShell { };\n}\n",
            &["function add"],
            &["- -> add", "- -> pkgs.mkShell"],
        ),
        (
            Language::Pascal,
            "unit Foo;\ninterface\ntype\n  TPoint = class(TObject)\n    procedure Move(dx: Integer);\n  end;\nimplementation\nprocedure TPoint.Move(dx: Integer);\nbegin\n  Helper(dx);\nend;\nprocedure Helper(x: Integer);\nbegin\nend;\nend.\n",
            &["class TPoint", "method TPoint.Move", "function Move", "function Helper"],
            &["Move -> Helper"],
        ),
    ];

    #[test]
    fn every_generic_language_has_a_query_that_compiles() {
        for lang in Language::ALL.into_iter().filter(|l| l.is_generic()) {
            assert!(spec(lang).is_some(), "{lang:?} has no spec");
            if let Err(e) = compiled(lang) {
                panic!("{e}");
            }
        }
        assert_eq!(
            SPECS.len(),
            Language::ALL.iter().filter(|l| l.is_generic()).count()
        );
    }

    #[test]
    fn definitions_and_calls_of_each_generic_language() {
        let mut covered = Vec::new();
        for (lang, src, want_defs, want_calls) in CASES {
            covered.push(*lang);
            let f = extract(*lang, src.as_bytes());
            assert!(f.diagnostics.is_empty(), "{lang:?}: {:?}", f.diagnostics);
            let defs: Vec<String> = f
                .symbols
                .iter()
                .map(|s| format!("{} {}", s.kind.name(), s.qualified_name))
                .collect();
            assert_eq!(&defs, want_defs, "{lang:?} definitions");
            let calls: Vec<String> = f
                .calls
                .iter()
                .map(|c| {
                    let caller = c
                        .caller
                        .map_or("-".to_string(), |i| f.symbols[i].qualified_name.clone());
                    match &c.receiver {
                        Some(r) => format!("{caller} -> {r}.{}", c.callee),
                        None => format!("{caller} -> {}", c.callee),
                    }
                })
                .collect();
            for want in *want_calls {
                assert!(
                    calls.contains(&want.to_string()),
                    "{lang:?}: no call {want} in {calls:?}"
                );
            }
            for s in &f.symbols {
                assert!(s.span.start_line >= 1 && s.span.end_line >= s.span.start_line);
                assert!(!s.signature.is_empty(), "{lang:?} {}: no signature", s.name);
                let first_line = src.lines().nth(s.span.start_line as usize - 1).unwrap();
                assert!(
                    first_line.trim().starts_with(s.signature.trim())
                        || s.span.start_line == s.span.end_line,
                    "{lang:?} {}: signature {:?} is not its first line",
                    s.name,
                    s.signature
                );
            }
        }
        for lang in Language::ALL.into_iter().filter(|l| l.is_generic()) {
            assert!(covered.contains(&lang), "{lang:?} has no case");
        }
    }

    #[test]
    fn doc_comments_above_a_generic_definition_are_kept() {
        let f = extract(
            Language::R,
            b"# Adds two numbers.\nadd <- function(a, b) a + b\n",
        );
        assert_eq!(f.symbols[0].doc, "Adds two numbers.");
        let f = extract(
            Language::Zig,
            b"/// Adds.\npub fn add(a: i32) i32 { return a; }\n",
        );
        assert_eq!(f.symbols[0].doc, "Adds.");
    }

    #[test]
    fn a_broken_generic_file_gives_diagnostics_and_what_was_recovered() {
        let f = extract(
            Language::Lua,
            b"function ok() return 1 end\nfunction broken(\n",
        );
        assert!(f.symbols.iter().any(|s| s.name == "ok"));
        assert!(!f.diagnostics.is_empty());
    }
}
