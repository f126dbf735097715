//! Swift: classes and actors (as classes), structs, enums with their cases,
//! protocols (as interfaces), functions (methods inside a type), `init`
//! (constructors), `deinit` and `subscript` (methods), properties (fields
//! in a type, variables at top level) and type aliases.
//!
//! An `extension Foo` is an [`SymbolKind::Impl`] symbol named `Foo`, like a
//! Rust impl block: its members are `Foo`'s. The protocols an extension
//! adopts are inheritance of `Foo` when this file defines `Foo`, else of the
//! extension.
//!
//! Imports: the module as written (`import Foundation`, `import struct
//! Darwin.Cpu` is module `Darwin.Cpu`). Calls: `f()`, `x.f()`, `x?.f()`,
//! trailing closures, and `Foo<T>(..)`; a subscript `x[i]` is not a call.
//! Receivers are written without `?` and `!`. Doc comments are `///` lines
//! or `/** */`.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        CallExpression = "call_expression",
        CallSuffix = "call_suffix",
        ClassBody = "class_body",
        ClassDeclaration = "class_declaration",
        Comment = "comment",
        ComputedProperty = "computed_property",
        ConstructorExpression = "constructor_expression",
        DeinitDeclaration = "deinit_declaration",
        EnumClassBody = "enum_class_body",
        EnumEntry = "enum_entry",
        FunctionDeclaration = "function_declaration",
        ImportDeclaration = "import_declaration",
        InheritanceSpecifier = "inheritance_specifier",
        InitDeclaration = "init_declaration",
        MultilineComment = "multiline_comment",
        NavigationExpression = "navigation_expression",
        NavigationSuffix = "navigation_suffix",
        PropertyDeclaration = "property_declaration",
        ProtocolBody = "protocol_body",
        ProtocolDeclaration = "protocol_declaration",
        ProtocolFunctionDeclaration = "protocol_function_declaration",
        ProtocolPropertyDeclaration = "protocol_property_declaration",
        SelfExpression = "self_expression",
        SimpleIdentifier = "simple_identifier",
        SourceFile = "source_file",
        SubscriptDeclaration = "subscript_declaration",
        SuperExpression = "super_expression",
        TypealiasDeclaration = "typealias_declaration",
        ValueArguments = "value_arguments",
    }
    skip ["modifiers", "attribute", "type_annotation", "type_parameters", "type_constraints", "user_type", "array_type", "dictionary_type", "optional_type", "function_type", "tuple_type", "integer_literal", "real_literal", "boolean_literal", "hex_literal", "bin_literal", "oct_literal", "nil_literal", "parameter"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Swift file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Swift {
        g: Grammar::get(&GRAMMAR, Language::Swift),
    };
    let mut facts = walker::walk(Language::Swift, tree, src, &mut rules).into_facts();
    attach_extension_inheritance_to_types(&mut facts);
    facts
}

/// Points an extension's adopted protocols at the extended type's own
/// symbol when the file defines it (see the module docs).
fn attach_extension_inheritance_to_types(facts: &mut FileFacts) {
    for i in 0..facts.inherits.len() {
        let sym = facts.inherits[i].symbol;
        if facts.symbols[sym].kind != SymbolKind::Impl {
            continue;
        }
        let qualified = &facts.symbols[sym].qualified_name;
        let target = facts
            .symbols
            .iter()
            .position(|s| s.kind.is_type() && &s.qualified_name == qualified);
        if let Some(t) = target {
            facts.inherits[i].symbol = t;
        }
    }
}

struct Swift {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Swift {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment | K::MultilineComment => {
                w.comment(node);
                false
            }
            K::ImportDeclaration => {
                self.import(w, node);
                false
            }
            K::ClassDeclaration => {
                self.class(w, node);
                true
            }
            K::ProtocolDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let name = w.text(name);
                    let sym = self.symbol(w, node, &name, SymbolKind::Interface, f.body);
                    self.inheritance(w, sym, node);
                }
                true
            }
            K::FunctionDeclaration | K::ProtocolFunctionDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let in_type = w
                        .container_kind()
                        .is_some_and(|k| k.is_type() || k == SymbolKind::Impl);
                    let kind = if in_type {
                        SymbolKind::Method
                    } else {
                        SymbolKind::Function
                    };
                    let name = w.text(name);
                    self.symbol(w, node, &name, kind, f.body);
                }
                true
            }
            K::InitDeclaration => {
                self.symbol(w, node, "init", SymbolKind::Constructor, f.body);
                true
            }
            K::DeinitDeclaration => {
                self.symbol(w, node, "deinit", SymbolKind::Method, f.body);
                true
            }
            K::SubscriptDeclaration => {
                let doc = w.doc_comment(node, DocStyle::RustOuter);
                let mut cursor = node.walk();
                let body = node
                    .named_children(&mut cursor)
                    .find(|c| self.g.kind(*c) == K::ComputedProperty);
                w.symbol("subscript", SymbolKind::Method, node, body, doc, None, true);
                true
            }
            K::PropertyDeclaration | K::ProtocolPropertyDeclaration => {
                self.property(w, node);
                true
            }
            K::EnumEntry => {
                let names = walker::field_children(node, f.name);
                let doc = w.doc_comment(node, DocStyle::RustOuter);
                let single = names.len() == 1;
                for name in names {
                    let name = w.text(name);
                    w.symbol(
                        &name,
                        SymbolKind::EnumMember,
                        node,
                        None,
                        doc.clone(),
                        None,
                        single,
                    );
                }
                true
            }
            K::TypealiasDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let name = w.text(name);
                    self.symbol(w, node, &name, SymbolKind::TypeAlias, 0);
                }
                false
            }
            K::CallExpression => {
                self.call(w, node);
                true
            }
            K::ConstructorExpression => {
                if let Some(ty) = node.named_child(0) {
                    let text = w.text(ty);
                    w.call(source_text::base_name(&text), None, node);
                }
                true
            }
            K::Skip => false,
            _ => true,
        }
    }
}

impl Swift {
    /// Records a symbol whose signature ends at its `end` field (0: none).
    fn symbol(
        &self,
        w: &mut Walk<'_>,
        node: Node<'_>,
        name: &str,
        kind: SymbolKind,
        end: u16,
    ) -> usize {
        let doc = w.doc_comment(node, DocStyle::RustOuter);
        let body = node.child_by_field_id(end);
        w.symbol(name, kind, node, body, doc, None, true)
    }

    fn class(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(name) = node.child_by_field_id(f.name) else {
            return;
        };
        let keyword = node.child_by_field_id(f.declaration_kind);
        let kind = match keyword.map(|k| w.bytes(k)) {
            Some(b"struct") => SymbolKind::Struct,
            Some(b"enum") => SymbolKind::Enum,
            Some(b"extension") => SymbolKind::Impl,
            _ => SymbolKind::Class,
        };
        let text = w.text(name);
        // `extension Array where Element: X`, `extension Foo.Bar`.
        let name = source_text::base_name(&text).to_string();
        let sym = self.symbol(w, node, &name, kind, f.body);
        self.inheritance(w, sym, node);
    }

    fn inheritance(&self, w: &mut Walk<'_>, sym: usize, node: Node<'_>) {
        let mut cursor = node.walk();
        for spec in node.named_children(&mut cursor) {
            if self.g.kind(spec) == K::InheritanceSpecifier {
                if let Some(ty) = spec.child_by_field_id(self.g.f.inherits_from) {
                    w.inherit(sym, ty);
                }
            }
        }
    }

    /// A property of a type or file (a local variable is no symbol).
    fn property(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let member = w.parent().is_some_and(|p| {
            matches!(
                self.g.kind(p),
                K::ClassBody | K::EnumClassBody | K::ProtocolBody | K::SourceFile
            )
        });
        if !member {
            return;
        }
        let Some(pattern) = node.child_by_field_id(f.name) else {
            return;
        };
        let name = pattern
            .child_by_field_id(f.bound_identifier)
            .or_else(|| (self.g.kind(pattern) == K::SimpleIdentifier).then_some(pattern))
            .or_else(|| {
                // `var x: Int { get }` in a protocol names a bare pattern.
                (pattern.named_child_count() == 0).then_some(pattern)
            });
        let Some(name) = name else { return };
        let kind = if w.container().is_some() {
            SymbolKind::Field
        } else {
            SymbolKind::Variable
        };
        let doc = w.doc_comment(node, DocStyle::RustOuter);
        let mut cursor = node.walk();
        let body = node
            .named_children(&mut cursor)
            .find(|c| self.g.kind(*c) == K::ComputedProperty);
        let name = w.text(name);
        w.symbol(&name, kind, node, body, doc, None, true);
    }

    fn call(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let (Some(callee), Some(suffix)) = (node.named_child(0), node.named_child(1)) else {
            return;
        };
        if self.g.kind(suffix) != K::CallSuffix {
            return;
        }
        // `x[i]` parses as a call with bracketed arguments.
        let subscript = suffix.named_child(0).is_some_and(|a| {
            self.g.kind(a) == K::ValueArguments && w.bytes(a).first() == Some(&b'[')
        });
        if subscript {
            return;
        }
        match self.g.kind(callee) {
            K::SimpleIdentifier => {
                let name = w.text(callee);
                if w.calls_a_local(&crate::locals::SWIFT, node, &name) {
                    return;
                }
                w.call(&name, None, node);
            }
            K::NavigationExpression => {
                let f = &self.g.f;
                let name = callee
                    .child_by_field_id(f.suffix)
                    .filter(|s| self.g.kind(*s) == K::NavigationSuffix)
                    .and_then(|s| s.child_by_field_id(f.suffix))
                    .filter(|s| self.g.kind(*s) == K::SimpleIdentifier);
                let Some(name) = name else { return };
                let receiver = callee
                    .child_by_field_id(f.target)
                    .and_then(|t| self.receiver(w, t))
                    .unwrap_or_else(|| EXPRESSION_RECEIVER.into());
                let name = w.text(name);
                w.call(&name, Some(receiver), node);
            }
            _ => {}
        }
    }

    /// A receiver made of names: `self`, `super`, `cache`, `self.root`,
    /// `delegate?` (written `delegate`).
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::SimpleIdentifier | K::SelfExpression | K::SuperExpression => {
                    let text = w.text(node);
                    return Some(text.chars().filter(|c| !matches!(c, '?' | '!')).collect());
                }
                K::NavigationExpression => cur = cur.child_by_field_id(self.g.f.target)?,
                _ => return None,
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let mut cursor = node.walk();
        let path = node
            .named_children(&mut cursor)
            .find(|c| c.kind() == "identifier");
        let Some(path) = path else { return };
        let module: String = w
            .text(path)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        w.import(module, Vec::new(), None, false, node);
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_SWIFT: &str = r##"import Foundation
import struct Darwin.Cpu
@testable import ConfigKit

/// Loads configuration files.
/// Caches results.
public final class ConfigLoader: BaseLoader, Loader {
    /// Default file name.
    static let defaultName = "app.conf"
    private var cache: [String: Config] = [:]
    var count: Int { cache.count }

    init(root: String) {
        super.init(root: root)
        self.reset()
    }

    /// Loads one file.
    func load(_ name: String) throws -> Config {
        if let c = cache[name] { return c }
        let cfg = try Parser.parse(self.root.appending(name))
        validate(cfg)
        items[0].run()
        delegate?.didLoad(cfg)
        return Config(cfg)
    }

    deinit { cache.removeAll() }

    subscript(key: String) -> Config? { cache[key] }
}

struct Point: Equatable { var x: Int; func moved() -> Point { Point(x: x + 1) } }

enum Format: String {
    case json, yaml
    case other
}

protocol Listener: AnyObject {
    func onLoad(_ cfg: Config)
}

extension Point: CustomStringConvertible {
    var description: String { "(\(x))" }
}

typealias Loaders = [ConfigLoader]
func makeLoader() -> ConfigLoader { ConfigLoader(root: "/") }
let version = "1"
"##;

    #[test]
    fn swift_loader_symbols() {
        let f = extract_clean(Language::Swift, LOADER_SWIFT);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.defaultName", S::Field),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.count", S::Field),
            ("ConfigLoader.init", S::Constructor),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.deinit", S::Method),
            ("ConfigLoader.subscript", S::Method),
            ("Point", S::Struct),
            ("Point.x", S::Field),
            ("Point.moved", S::Method),
            ("Format", S::Enum),
            ("Format.json", S::EnumMember),
            ("Format.yaml", S::EnumMember),
            ("Format.other", S::EnumMember),
            ("Listener", S::Interface),
            ("Listener.onLoad", S::Method),
            ("Point", S::Impl),
            ("Point.description", S::Field),
            ("Loaders", S::TypeAlias),
            ("makeLoader", S::Function),
            ("version", S::Variable),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "ConfigLoader"), (7, 31));
        assert_eq!(lines(&f, "ConfigLoader.load"), (19, 26));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.\nCaches results.");
        assert_eq!(
            class.signature,
            "public final class ConfigLoader: BaseLoader, Loader"
        );
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(load.signature, "func load(_ name: String) throws -> Config");
        assert_eq!(load.doc, "Loads one file.");
        assert_span_text(LOADER_SWIFT, load, "func load", "return Config(cfg)\n    }");
        assert_eq!(
            sym(&f, "ConfigLoader.defaultName").doc,
            "Default file name."
        );
        assert_eq!(sym(&f, "ConfigLoader.count").signature, "var count: Int");
        assert_eq!(sym(&f, "ConfigLoader.init").signature, "init(root: String)");
        assert_eq!(
            sym(&f, "ConfigLoader.subscript").signature,
            "subscript(key: String) -> Config?"
        );
        assert_eq!(
            sym_of(&f, "Point", S::Impl).signature,
            "extension Point: CustomStringConvertible"
        );
    }

    #[test]
    fn swift_loader_references() {
        let f = extract_clean(Language::Swift, LOADER_SWIFT);
        assert_eq!(
            imports(&f),
            ["Foundation @1", "Darwin.Cpu @2", "ConfigKit @3"]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.init -> super.init @14",
                "ConfigLoader.init -> self.reset @15",
                "ConfigLoader.load -> Parser.parse @21",
                "ConfigLoader.load -> self.root.appending @21",
                "ConfigLoader.load -> validate @22",
                "ConfigLoader.load -> (expr).run @23",
                "ConfigLoader.load -> delegate.didLoad @24",
                "ConfigLoader.load -> Config @25",
                "ConfigLoader.deinit -> cache.removeAll @28",
                "Point.moved -> Point @33",
                "makeLoader -> ConfigLoader @49",
            ]
        );
        // The extension's protocol is the struct's: this file defines it.
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : BaseLoader @7",
                "ConfigLoader : Loader @7",
                "Point : Equatable @33",
                "Format : String @35",
                "Listener : AnyObject @40",
                "Point : CustomStringConvertible @44",
            ]
        );
        let conforming = f.inherits.last().unwrap().symbol;
        assert_eq!(f.symbols[conforming].kind, S::Struct);
    }
}
