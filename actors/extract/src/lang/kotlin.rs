//! Kotlin: classes (data, sealed, …), interfaces (`fun interface` too),
//! enum classes with their entries, objects, functions (methods inside a
//! type), secondary constructors (named after their class), properties
//! (fields in a type, variables at top level, constants when `const`) and
//! type aliases; the package is not a symbol. A companion object is not a
//! symbol of its own: its members are the class's, as they are called
//! (`Config.create()`). An extension function is a function qualified by
//! its receiver type (`String.shout`).
//!
//! Imports: the path as written (`import a.b.C` is module `a.b.C`),
//! `import a.b.*` is module `a.b`, names `[*]`, and `as D` is the alias.
//! Calls: `f()`, `x.f()`, `x?.f()` (with trailing lambdas too); a call of a
//! class's name is how Kotlin constructs, so it is a call of the class.
//! Inheritance: every supertype after `:` (class or interface, delegated or
//! not).

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        Block = "block",
        BlockComment = "block_comment",
        CallExpression = "call_expression",
        ClassBody = "class_body",
        ClassDeclaration = "class_declaration",
        ClassModifier = "class_modifier",
        CompanionObject = "companion_object",
        ConstructorInvocation = "constructor_invocation",
        DelegationSpecifier = "delegation_specifier",
        DelegationSpecifiers = "delegation_specifiers",
        EnumClassBody = "enum_class_body",
        EnumEntry = "enum_entry",
        ExplicitDelegation = "explicit_delegation",
        FunctionBody = "function_body",
        FunctionDeclaration = "function_declaration",
        Getter = "getter",
        Identifier = "identifier",
        Import = "import",
        LineComment = "line_comment",
        Modifiers = "modifiers",
        NavigationExpression = "navigation_expression",
        ObjectDeclaration = "object_declaration",
        PackageHeader = "package_header",
        PropertyDeclaration = "property_declaration",
        PropertyModifier = "property_modifier",
        QualifiedIdentifier = "qualified_identifier",
        SecondaryConstructor = "secondary_constructor",
        Setter = "setter",
        SourceFile = "source_file",
        SuperExpression = "super_expression",
        ThisExpression = "this_expression",
        TypeAlias = "type_alias",
        UserType = "user_type",
        VariableDeclaration = "variable_declaration",
    }
    skip ["type_arguments", "type_parameters", "type_constraints", "nullable_type", "function_type", "number_literal", "character_literal", "boolean_literal", "file_annotation"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Kotlin file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Kotlin {
        g: Grammar::get(&GRAMMAR, Language::Kotlin),
    };
    walker::walk(Language::Kotlin, tree, src, &mut rules).into_facts()
}

struct Kotlin {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Kotlin {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        match self.g.kind(node) {
            K::LineComment | K::BlockComment => {
                w.comment(node);
                false
            }
            K::PackageHeader => false,
            K::Import => {
                self.import(w, node);
                false
            }
            K::Modifiers => {
                // Annotations above a declaration belong to it.
                false
            }
            K::ClassDeclaration => {
                let kind = self.class_kind(w, node);
                self.type_decl(w, node, kind);
                true
            }
            K::ObjectDeclaration => {
                self.type_decl(w, node, SymbolKind::Class);
                true
            }
            K::CompanionObject => {
                // Its members are called through the class: they are the
                // class's. Its supertypes are the class's too.
                if let Some(owner) = w.container() {
                    self.supertypes(w, owner, node);
                }
                true
            }
            K::FunctionDeclaration => {
                self.function(w, node);
                true
            }
            K::SecondaryConstructor => {
                let class = w
                    .container()
                    .map(|c| w.symbols()[c].name.clone())
                    .unwrap_or_else(|| "constructor".to_string());
                let doc = w.doc_comment(node, DocStyle::JsDoc);
                let body = self.child(node, K::Block);
                w.symbol(&class, SymbolKind::Constructor, node, body, doc, None, true);
                true
            }
            K::PropertyDeclaration => {
                self.property(w, node);
                true
            }
            K::EnumEntry => {
                if let Some(name) = self.child(node, K::Identifier) {
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let body = self.child(node, K::ClassBody);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::EnumMember, node, body, doc, None, true);
                }
                true
            }
            K::TypeAlias => {
                if let Some(name) = node.child_by_field_id(self.g.f.type_) {
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::TypeAlias, node, None, doc, None, true);
                }
                false
            }
            K::CallExpression => {
                self.call(w, node);
                true
            }
            K::Skip => false,
            _ => true,
        }
    }
}

impl Kotlin {
    /// The first named child of kind `kind`.
    fn child<'t>(&self, node: Node<'t>, kind: K) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        let found = node
            .named_children(&mut cursor)
            .find(|c| self.g.kind(*c) == kind);
        found
    }

    /// Interface (`interface`, `fun interface`, `annotation class`), enum
    /// (`enum class`) or class.
    fn class_kind(&self, w: &Walk<'_>, node: Node<'_>) -> SymbolKind {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() && child.kind() == "interface" {
                return SymbolKind::Interface;
            }
            if self.g.kind(child) == K::Modifiers {
                let mut cursor = child.walk();
                for m in child.named_children(&mut cursor) {
                    if self.g.kind(m) == K::ClassModifier {
                        match w.bytes(m) {
                            b"enum" => return SymbolKind::Enum,
                            b"annotation" => return SymbolKind::Interface,
                            _ => {}
                        }
                    }
                }
            }
        }
        SymbolKind::Class
    }

    fn type_decl(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) {
        let Some(name) = node.child_by_field_id(self.g.f.name) else {
            return;
        };
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = self
            .child(node, K::ClassBody)
            .or_else(|| self.child(node, K::EnumClassBody));
        let name = w.text(name);
        let sym = w.symbol(&name, kind, node, body, doc, None, true);
        self.supertypes(w, sym, node);
    }

    /// The types after `:` of a class, object or companion.
    fn supertypes(&self, w: &mut Walk<'_>, sym: usize, node: Node<'_>) {
        let Some(specs) = self.child(node, K::DelegationSpecifiers) else {
            return;
        };
        let mut cursor = specs.walk();
        for spec in specs.named_children(&mut cursor) {
            if self.g.kind(spec) != K::DelegationSpecifier {
                continue;
            }
            let Some(inner) = spec.named_child(0) else {
                continue;
            };
            let ty = match self.g.kind(inner) {
                K::ConstructorInvocation | K::ExplicitDelegation => self.child(inner, K::UserType),
                K::UserType => Some(inner),
                _ => None,
            };
            if let Some(ty) = ty {
                w.inherit(sym, ty);
            }
        }
    }

    fn function(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let Some(name) = node.child_by_field_id(self.g.f.name) else {
            return;
        };
        let in_type = w.container_kind().is_some_and(SymbolKind::is_type);
        let kind = if in_type {
            SymbolKind::Method
        } else {
            SymbolKind::Function
        };
        // `fun String.shout()`: the type before the name is the receiver.
        let mut cursor = node.walk();
        let receiver = node
            .named_children(&mut cursor)
            .take_while(|c| c.start_byte() < name.start_byte())
            .filter(|c| !matches!(self.g.kind(*c), K::Modifiers | K::Skip))
            .last()
            .map(|t| source_text::base_name(&w.text(t)).to_string());
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = self.child(node, K::FunctionBody);
        let name = w.text(name);
        w.symbol(&name, kind, node, body, doc, receiver.as_deref(), true);
    }

    /// A property of a type or file (a local variable is no symbol).
    fn property(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let member = w.parent().is_some_and(|p| {
            matches!(
                self.g.kind(p),
                K::ClassBody | K::EnumClassBody | K::SourceFile
            )
        });
        if !member {
            return;
        }
        let Some(name) = self
            .child(node, K::VariableDeclaration)
            .and_then(|v| self.child(v, K::Identifier))
        else {
            return;
        };
        let is_const = self.child(node, K::Modifiers).is_some_and(|m| {
            let mut cursor = m.walk();
            let found = m
                .named_children(&mut cursor)
                .any(|c| self.g.kind(c) == K::PropertyModifier && w.bytes(c) == b"const");
            found
        });
        let kind = if is_const {
            SymbolKind::Constant
        } else if w.container().is_some() {
            SymbolKind::Field
        } else {
            SymbolKind::Variable
        };
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let accessor = self
            .child(node, K::Getter)
            .or_else(|| self.child(node, K::Setter));
        let name = w.text(name);
        w.symbol(&name, kind, node, accessor, doc, None, true);
    }

    fn call(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let Some(callee) = node.named_child(0) else {
            return;
        };
        match self.g.kind(callee) {
            K::Identifier => {
                let name = w.text(callee);
                if w.calls_a_local(&crate::locals::KOTLIN, node, &name) {
                    return;
                }
                // In the lambda of a scope function with a receiver, a
                // bare call goes to that receiver first, whose type is not
                // known here: not to the enclosing class's method.
                let receiver = in_receiver_lambda(w, node).then(|| EXPRESSION_RECEIVER.into());
                w.call(&name, receiver, node);
            }
            K::NavigationExpression => {
                // `a.b`: the object, then the name called.
                if callee.named_child_count() != 2 {
                    return;
                }
                let (Some(object), Some(name)) = (callee.named_child(0), callee.named_child(1))
                else {
                    return;
                };
                if self.g.kind(name) != K::Identifier {
                    return;
                }
                let receiver = self
                    .receiver(w, object)
                    .unwrap_or_else(|| EXPRESSION_RECEIVER.into());
                let name = w.text(name);
                w.call(&name, Some(receiver), node);
            }
            _ => {}
        }
    }

    /// A receiver made of names: `this`, `super`, `cache`, `this.root`,
    /// `Config.Companion`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier | K::ThisExpression => return Some(w.text(node).into_owned()),
                // `super<Base>.f()` calls up the bases all the same.
                K::SuperExpression if cur == node => return Some("super".into()),
                K::SuperExpression => return Some(w.text(node).into_owned()),
                K::NavigationExpression if cur.named_child_count() == 2 => {
                    cur = cur.named_child(0)?;
                }
                _ => return None,
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let mut path = None;
        let mut alias = None;
        let mut wildcard = false;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match self.g.kind(child) {
                K::QualifiedIdentifier => path = Some(child),
                K::Identifier if path.is_none() => path = Some(child),
                K::Identifier => alias = Some(w.text(child).into_owned()),
                _ if !child.is_named() && w.bytes(child).ends_with(b"*") => wildcard = true,
                _ => {}
            }
        }
        let Some(path) = path else { return };
        let module: String = w
            .text(path)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let names = if wildcard {
            vec!["*".to_string()]
        } else {
            Vec::new()
        };
        w.import(module, names, alias, false, node);
    }
}

/// Standard functions whose lambda runs with a receiver (`this`): `b.apply
/// { add(1) }`, `with(b) { build() }`, `buildString { append(x) }`.
const RECEIVER_SCOPES: &[&str] = &[
    "apply",
    "with",
    "run",
    "buildString",
    "buildList",
    "buildSet",
    "buildMap",
];

/// Whether `node` is inside the lambda passed to a [`RECEIVER_SCOPES`]
/// call, within the function it is written in.
fn in_receiver_lambda(w: &Walk<'_>, node: Node<'_>) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "lambda_literal" => {
                let mut up = n.parent();
                while let Some(u) = up {
                    match u.kind() {
                        "call_expression" => {
                            let called = u.named_child(0).map(|c| w.text(c)).unwrap_or_default();
                            let name = called.rsplit(['.', '?']).next().unwrap_or_default();
                            if RECEIVER_SCOPES.contains(&name.trim()) {
                                return true;
                            }
                            break;
                        }
                        "lambda_literal" | "function_declaration" => break,
                        _ => up = u.parent(),
                    }
                }
            }
            "function_declaration" | "class_body" | "source_file" => return false,
            _ => {}
        }
        at = n.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_KT: &str = r##"package com.example.config

import java.io.IOException
import kotlin.collections.*
import com.example.core.BaseLoader as Base

/**
 * Loads configuration files.
 */
@Suppress("unused")
class ConfigLoader(private val root: Path) : Base<Config>(root), Loader, AutoCloseable {
    /** Cached files. */
    val cache = mutableMapOf<String, Config>()

    constructor(s: String) : this(Path(s))

    /**
     * Loads one file.
     */
    fun load(name: String): Config {
        val cfg = Parser.parse(this.root.resolve(name))
        cache.put(name, cfg)
        validate(cfg)
        items[0].run()
        super.load(name)
        listener?.onLoad(cfg)
        return Config(cfg)
    }

    override fun close() = cache.clear()

    companion object {
        const val DEFAULT = "app.conf"
        fun create(): ConfigLoader = ConfigLoader(DEFAULT)
    }

    interface Listener : EventListener { fun onLoad(cfg: Config) }
    enum class Format { JSON, YAML }
    data class Entry(val key: String, val value: String)
    object Registry : Map<String, String> by emptyMap()
}

fun String.shout(): String = uppercase()
typealias Loaders = List<ConfigLoader>
val VERSION = "1"
"##;

    #[test]
    fn kotlin_loader_symbols() {
        let f = extract_clean(Language::Kotlin, LOADER_KT);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.ConfigLoader", S::Constructor),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.close", S::Method),
            ("ConfigLoader.DEFAULT", S::Constant),
            ("ConfigLoader.create", S::Method),
            ("ConfigLoader.Listener", S::Interface),
            ("ConfigLoader.Listener.onLoad", S::Method),
            ("ConfigLoader.Format", S::Enum),
            ("ConfigLoader.Format.JSON", S::EnumMember),
            ("ConfigLoader.Format.YAML", S::EnumMember),
            ("ConfigLoader.Entry", S::Class),
            ("ConfigLoader.Registry", S::Class),
            ("String.shout", S::Function),
            ("Loaders", S::TypeAlias),
            ("VERSION", S::Variable),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "ConfigLoader"), (10, 41));
        assert_eq!(lines(&f, "ConfigLoader.load"), (20, 28));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.");
        assert_eq!(
            class.signature,
            "@Suppress(\"unused\") class ConfigLoader(private val root: Path) : Base<Config>(root), Loader, AutoCloseable"
        );
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(load.signature, "fun load(name: String): Config");
        assert_eq!(load.doc, "Loads one file.");
        assert_span_text(LOADER_KT, load, "fun load", "return Config(cfg)\n    }");
        assert_eq!(sym(&f, "ConfigLoader.cache").doc, "Cached files.");
        assert_eq!(
            sym(&f, "ConfigLoader.close").signature,
            "override fun close()"
        );
        assert_eq!(
            sym(&f, "ConfigLoader.ConfigLoader").signature,
            "constructor(s: String) : this(Path(s))"
        );
        let shout = sym(&f, "String.shout");
        assert_eq!(shout.name, "shout");
        assert_eq!(shout.signature, "fun String.shout(): String");
        assert_eq!(
            parent_of(&f, "ConfigLoader.Listener.onLoad"),
            "ConfigLoader.Listener"
        );
    }

    #[test]
    fn kotlin_loader_references() {
        let f = extract_clean(Language::Kotlin, LOADER_KT);
        assert_eq!(
            imports(&f),
            [
                "java.io.IOException @3",
                "kotlin.collections [*] @4",
                "com.example.core.BaseLoader as Base @5",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.cache -> mutableMapOf @13",
                "ConfigLoader.ConfigLoader -> Path @15",
                "ConfigLoader.load -> Parser.parse @21",
                "ConfigLoader.load -> this.root.resolve @21",
                "ConfigLoader.load -> cache.put @22",
                "ConfigLoader.load -> validate @23",
                "ConfigLoader.load -> (expr).run @24",
                "ConfigLoader.load -> super.load @25",
                "ConfigLoader.load -> listener.onLoad @26",
                "ConfigLoader.load -> Config @27",
                "ConfigLoader.close -> cache.clear @30",
                "ConfigLoader.create -> ConfigLoader @34",
                "ConfigLoader.Registry -> emptyMap @40",
                "String.shout -> uppercase @43",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : Base @11",
                "ConfigLoader : Loader @11",
                "ConfigLoader : AutoCloseable @11",
                "ConfigLoader.Listener : EventListener @37",
                "ConfigLoader.Registry : Map @40",
            ]
        );
    }

    #[test]
    fn kotlin_backticked_names_lose_their_backticks() {
        let src = "class LoaderTest {\n    @Test fun `loads a file`() { `do it`() }\n}\n";
        let f = extract_clean(Language::Kotlin, src);
        assert_eq!(sym(&f, "LoaderTest.loads a file").kind, S::Method);
        assert_eq!(calls(&f), ["LoaderTest.loads a file -> do it @2"]);
    }

    #[test]
    fn kotlin_locals_are_no_symbols() {
        let src = "fun main() {\n    val x = 1\n    fun helper() = x\n    helper()\n}\nclass A { init { val y = 2 } }\n";
        let f = extract_clean(Language::Kotlin, src);
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["main", "main.helper", "A"]);
    }
}
