//! Ruby: modules, classes, methods, singleton methods (`def self.x`, and
//! methods inside `class << self`), and constants assigned in a class,
//! module or at top level. Imports: `require` and `require_relative`
//! (relative). Calls: `call` nodes only, that is calls with a receiver or
//! arguments; a bare identifier may be a local variable. Inheritance: `<
//! Base` and `include`/`extend`/`prepend` of a module.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        Assignment = "assignment",
        Call = "call",
        Class = "class",
        ClassVariable = "class_variable",
        Comment = "comment",
        Constant = "constant",
        Identifier = "identifier",
        InstanceVariable = "instance_variable",
        Method = "method",
        Module = "module",
        ScopeResolution = "scope_resolution",
        SelfKeyword = "self",
        SingletonMethod = "singleton_method",
        String = "string",
    }
    skip ["integer", "float", "simple_symbol", "hash_key_symbol", "method_parameters"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Ruby file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Ruby {
        g: Grammar::get(&GRAMMAR, Language::Ruby),
    };
    walker::walk(Language::Ruby, tree, src, &mut rules).into_facts()
}

struct Ruby {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Ruby {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => {
                w.comment(node);
                false
            }
            K::Module | K::Class => {
                let Some(name) = node.child_by_field_id(f.name) else {
                    return true;
                };
                let text = w.text(name);
                let (qualifier, name) = match text.rsplit_once("::") {
                    Some((q, n)) => (q.trim_start_matches("::").replace("::", "."), n.to_string()),
                    None => (String::new(), text.into_owned()),
                };
                let kind = if self.g.kind(node) == K::Module {
                    SymbolKind::Module
                } else {
                    SymbolKind::Class
                };
                let doc = w.doc_comment(node, DocStyle::AnyComment);
                // The header ends after the superclass or name; a comment may
                // follow it on the same line, before the body.
                let sig_end = node
                    .child_by_field_id(f.superclass)
                    .or(node.child_by_field_id(f.name))
                    .and_then(|n| n.next_sibling());
                let sym = w.symbol(&name, kind, node, sig_end, doc, Some(&qualifier), true);
                if let Some(sup) = node.child_by_field_id(f.superclass) {
                    if let Some(base) = sup.named_child(0) {
                        w.inherit(sym, base);
                    }
                }
                true
            }
            K::Method | K::SingletonMethod => {
                let Some(name) = node.child_by_field_id(f.name) else {
                    return true;
                };
                let kind = if w.container().is_none() && self.g.kind(node) == K::Method {
                    SymbolKind::Function
                } else {
                    SymbolKind::Method
                };
                let doc = w.doc_comment(node, DocStyle::AnyComment);
                let sig_end = self.header_end(node);
                let name = w.text(name);
                w.symbol(&name, kind, node, sig_end, doc, None, true);
                true
            }
            K::Assignment => {
                if let Some(left) = node.child_by_field_id(f.left) {
                    let scope_ok = matches!(
                        w.container_kind(),
                        None | Some(SymbolKind::Class | SymbolKind::Module)
                    );
                    if scope_ok && self.g.kind(left) == K::Constant {
                        let doc = w.doc_comment(node, DocStyle::AnyComment);
                        let name = w.text(left);
                        w.symbol(&name, SymbolKind::Constant, node, None, doc, None, true);
                    }
                }
                true
            }
            K::Call => {
                self.call(w, node);
                true
            }
            K::Skip => false,
            _ => true,
        }
    }
}

impl Ruby {
    /// Where a method's header ends: after its parameters or name.
    fn header_end<'t>(&self, method: Node<'t>) -> Option<Node<'t>> {
        let after = method
            .child_by_field_id(self.g.f.parameters)
            .or_else(|| method.child_by_field_id(self.g.f.name))?;
        after.next_sibling()
    }

    fn call(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(method) = node.child_by_field_id(f.method) else {
            return;
        };
        if !matches!(self.g.kind(method), K::Identifier | K::Constant) {
            return;
        }
        let name = w.text(method);
        let receiver = node.child_by_field_id(f.receiver);
        if receiver.is_none() {
            match &*name {
                "require" | "require_relative" => {
                    if let Some(module) = self.string_argument(w, node) {
                        w.import(module, Vec::new(), None, name == "require_relative", node);
                        return;
                    }
                }
                "include" | "extend" | "prepend" => {
                    let owner = w.container().filter(|_| {
                        matches!(
                            w.container_kind(),
                            Some(SymbolKind::Class | SymbolKind::Module)
                        )
                    });
                    if let (Some(owner), Some(args)) = (owner, node.child_by_field_id(f.arguments))
                    {
                        let mut cursor = args.walk();
                        for m in args.named_children(&mut cursor) {
                            if matches!(self.g.kind(m), K::Constant | K::ScopeResolution) {
                                w.inherit(owner, m);
                            }
                        }
                        return;
                    }
                }
                _ => {}
            }
        }
        let receiver = receiver.map(|r| {
            self.receiver(w, r)
                .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
        });
        w.call(&name, receiver, node);
    }

    fn string_argument(&self, w: &Walk<'_>, call: Node<'_>) -> Option<String> {
        let args = call.child_by_field_id(self.g.f.arguments)?;
        let first = args.named_child(0)?;
        (self.g.kind(first) == K::String)
            .then(|| w.text(first).trim_matches(['"', '\'']).to_string())
    }

    /// A receiver made of names and argument-less calls: `self`, `File`,
    /// `Foo::Bar`, `@client`, `config.loader`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier
                | K::Constant
                | K::SelfKeyword
                | K::InstanceVariable
                | K::ClassVariable
                | K::ScopeResolution => return Some(w.text(node).into_owned()),
                K::Call
                    if cur.child_by_field_id(self.g.f.arguments).is_none()
                        && cur.child_by_field_id(self.g.f.block).is_none() =>
                {
                    cur = cur.child_by_field_id(self.g.f.receiver)?;
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const CONFIG_RB: &str = r##"require "json"
require_relative "base_loader"

module App
  # Default config path.
  DEFAULT_PATH = "~/.app.json".freeze

  # Loads configuration files.
  # Caches results.
  class ConfigLoader < Base::Loader
    include Enumerable
    extend Forwardable

    attr_reader :root

    def initialize(root)
      super(root)
      @root = File.expand_path(root)
      @cache = {}
    end

    # Loads one file.
    def load(name)
      @cache[name] ||= parse(File.read(File.join(@root, name)))
    end

    def self.default
      new(DEFAULT_PATH)
    end

    private

    def parse(text)
      data = JSON.parse(text)
      validate!(data)
      Config.new(data)
    end
  end

  class Config < Struct
  end
end
"##;

    #[test]
    fn ruby_config_symbols() {
        let f = extract_clean(Language::Ruby, CONFIG_RB);
        let want = [
            ("App", S::Module),
            ("App.DEFAULT_PATH", S::Constant),
            ("App.ConfigLoader", S::Class),
            ("App.ConfigLoader.initialize", S::Method),
            ("App.ConfigLoader.load", S::Method),
            ("App.ConfigLoader.default", S::Method),
            ("App.ConfigLoader.parse", S::Method),
            ("App.Config", S::Class),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "App.ConfigLoader"), (10, 38));
        assert_eq!(lines(&f, "App.ConfigLoader.load"), (23, 25));
        let class = sym(&f, "App.ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.\nCaches results.");
        assert_eq!(class.signature, "class ConfigLoader < Base::Loader");
        assert_eq!(sym(&f, "App").signature, "module App");
        assert_eq!(sym(&f, "App").doc, "");
        let load = sym(&f, "App.ConfigLoader.load");
        assert_eq!(
            (load.signature.as_str(), load.doc.as_str()),
            ("def load(name)", "Loads one file.")
        );
        assert_span_text(CONFIG_RB, load, "def load", "end");
        assert_eq!(
            sym(&f, "App.ConfigLoader.default").signature,
            "def self.default"
        );
        assert_eq!(sym(&f, "App.DEFAULT_PATH").doc, "Default config path.");
    }

    #[test]
    fn ruby_config_references() {
        let f = extract_clean(Language::Ruby, CONFIG_RB);
        assert_eq!(imports(&f), ["json @1", "base_loader (rel) @2",]);
        assert_eq!(
            calls(&f),
            [
                "App.DEFAULT_PATH -> (expr).freeze @6",
                "App.ConfigLoader -> attr_reader @14",
                "App.ConfigLoader.initialize -> File.expand_path @18",
                "App.ConfigLoader.load -> parse @24",
                "App.ConfigLoader.load -> File.read @24",
                "App.ConfigLoader.load -> File.join @24",
                "App.ConfigLoader.default -> new @28",
                "App.ConfigLoader.parse -> JSON.parse @34",
                "App.ConfigLoader.parse -> validate! @35",
                "App.ConfigLoader.parse -> Config.new @36",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "App.ConfigLoader : Loader @10",
                "App.ConfigLoader : Enumerable @11",
                "App.ConfigLoader : Forwardable @12",
                "App.Config : Struct @40",
            ]
        );

        assert!(!calls(&f).iter().any(|c| c.contains("require")));
    }

    #[test]
    fn broken_ruby_keeps_symbols() {
        let src = "class A\n  def ok\n    go(1)\n  end\n  def bad(x\n    y = )\n  end\nend\ndef after\nend\n";
        let f = crate::extract(Language::Ruby, src.as_bytes());
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["A", "A.ok", "A.bad", "after"]);
        let d: Vec<_> = f
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(d, [(6, 5, "syntax error near `y =`")]);
        assert_eq!(lines(&f, "A.bad"), (5, 7));
    }
}
