//! Java: classes, interfaces, enums (with constants), records, annotation
//! types, methods, constructors and fields; the package is not a symbol.
//!
//! Imports: the module is the imported path as written and `names` is empty
//! (`import a.b.C;` is module `a.b.C`). On-demand imports name `*` in the
//! package (`import a.b.*;` is module `a.b`, names `[*]`), and static imports
//! name the member in its class (`import static a.b.C.m;` is module `a.b.C`,
//! names `[m]`). Java imports are never relative.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AnnotationTypeDeclaration = "annotation_type_declaration",
        AnnotationTypeElementDeclaration = "annotation_type_element_declaration",
        Asterisk = "asterisk",
        BlockComment = "block_comment",
        ClassDeclaration = "class_declaration",
        CompactConstructorDeclaration = "compact_constructor_declaration",
        ConstantDeclaration = "constant_declaration",
        ConstructorDeclaration = "constructor_declaration",
        EnumConstant = "enum_constant",
        EnumDeclaration = "enum_declaration",
        ExtendsInterfaces = "extends_interfaces",
        FieldAccess = "field_access",
        FieldDeclaration = "field_declaration",
        Identifier = "identifier",
        ImportDeclaration = "import_declaration",
        InterfaceDeclaration = "interface_declaration",
        LineComment = "line_comment",
        MethodDeclaration = "method_declaration",
        MethodInvocation = "method_invocation",
        ObjectCreationExpression = "object_creation_expression",
        PackageDeclaration = "package_declaration",
        RecordDeclaration = "record_declaration",
        Super = "super",
        This = "this",
        TypeList = "type_list",
        VariableDeclarator = "variable_declarator",
    }
    skip ["modifiers", "formal_parameters", "type_arguments", "type_parameters", "generic_type", "scoped_type_identifier", "array_type", "string_literal", "decimal_integer_literal", "throws"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Java file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Java {
        g: Grammar::get(&GRAMMAR, Language::Java),
    };
    walker::walk(Language::Java, tree, src, &mut rules).into_facts()
}

struct Java {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Java {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::LineComment | K::BlockComment => {
                w.comment(node);
                false
            }
            K::PackageDeclaration => false,
            K::ImportDeclaration => {
                self.import(w, node);
                false
            }
            K::ClassDeclaration | K::RecordDeclaration => {
                let kind = SymbolKind::Class;
                if let Some(sym) = self.named(w, node, kind) {
                    if let Some(sup) = node.child_by_field_id(f.superclass) {
                        self.bases(w, sym, sup);
                    }
                    if let Some(ifaces) = node.child_by_field_id(f.interfaces) {
                        self.bases(w, sym, ifaces);
                    }
                }
                true
            }
            K::InterfaceDeclaration | K::AnnotationTypeDeclaration => {
                if let Some(sym) = self.named(w, node, SymbolKind::Interface) {
                    let mut cursor = node.walk();
                    for child in node.named_children(&mut cursor) {
                        if self.g.kind(child) == K::ExtendsInterfaces {
                            self.bases(w, sym, child);
                        }
                    }
                }
                true
            }
            K::EnumDeclaration => {
                if let Some(sym) = self.named(w, node, SymbolKind::Enum) {
                    if let Some(ifaces) = node.child_by_field_id(f.interfaces) {
                        self.bases(w, sym, ifaces);
                    }
                }
                true
            }
            K::EnumConstant => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let body = node.child_by_field_id(f.body);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::EnumMember, node, body, doc, None, true);
                }
                true
            }
            // An annotation's elements (`String value();` in `@interface
            // SerializedName`) are its methods.
            K::MethodDeclaration | K::AnnotationTypeElementDeclaration => {
                self.named(w, node, SymbolKind::Method);
                true
            }
            K::ConstructorDeclaration | K::CompactConstructorDeclaration => {
                self.named(w, node, SymbolKind::Constructor);
                true
            }
            K::FieldDeclaration | K::ConstantDeclaration => {
                let kind = if self.g.kind(node) == K::ConstantDeclaration {
                    SymbolKind::Constant
                } else {
                    SymbolKind::Field
                };
                let doc = w.doc_comment(node, DocStyle::JsDoc);
                let mut declarators = walker::field_children(node, f.declarator);
                declarators.retain(|d| self.g.kind(*d) == K::VariableDeclarator);
                let single = declarators.len() == 1;
                for d in declarators {
                    if let Some(name) = d.child_by_field_id(f.name) {
                        let name = w.text(name);
                        w.symbol(&name, kind, node, None, doc.clone(), None, single);
                    }
                }
                true
            }
            K::MethodInvocation => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let receiver = node.child_by_field_id(f.object).map(|o| {
                        self.receiver(w, o)
                            .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                    });
                    let callee = w.text(name);
                    w.call(&callee, receiver, node);
                }
                true
            }
            K::ObjectCreationExpression => {
                if let Some(ty) = node.child_by_field_id(f.type_) {
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

impl Java {
    fn named(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = node.child_by_field_id(self.g.f.body);
        let name = w.text(name);
        Some(w.symbol(&name, kind, node, body, doc, None, true))
    }

    /// The types of a `superclass`, `super_interfaces` or `extends_interfaces`
    /// clause (directly or through a `type_list`).
    fn bases(&self, w: &mut Walk<'_>, sym: usize, clause: Node<'_>) {
        let mut cursor = clause.walk();
        for child in clause.named_children(&mut cursor) {
            if self.g.kind(child) == K::TypeList {
                let mut cursor = child.walk();
                for ty in child.named_children(&mut cursor) {
                    w.inherit(sym, ty);
                }
            } else {
                w.inherit(sym, child);
            }
        }
    }

    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier | K::This | K::Super => return Some(w.text(node).into_owned()),
                K::FieldAccess => cur = cur.child_by_field_id(self.g.f.object)?,
                _ => return None,
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let mut path = None;
        let mut wildcard = false;
        let mut is_static = false;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match self.g.kind(child) {
                K::Asterisk => wildcard = true,
                K::Other if child.kind() == "static" => is_static = true,
                K::Other if child.is_named() && path.is_none() => path = Some(child),
                K::Identifier => path = Some(child),
                _ => {}
            }
        }
        let Some(path) = path else { return };
        let path: String = w
            .text(path)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let (module, names) = if wildcard {
            (path, vec!["*".to_string()])
        } else if is_static {
            match path.rsplit_once('.') {
                Some((class, member)) => (class.to_string(), vec![member.to_string()]),
                None => (path, Vec::new()),
            }
        } else {
            (path, Vec::new())
        };
        w.import(module, names, None, false, node);
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_JAVA: &str = r##"package com.example.config;

import java.io.IOException;
import java.util.*;
import static java.util.Objects.requireNonNull;
import com.example.core.BaseLoader;

/**
 * Loads configuration files.
 *
 * @author team
 */
@Component
public class ConfigLoader extends BaseLoader<Config> implements Loader, AutoCloseable {
    /** Default file name. */
    public static final String DEFAULT = "app.conf";
    private final Map<String, Config> cache = new HashMap<>();

    public ConfigLoader(Path root) {
        super(root);
        this.root = requireNonNull(root);
    }

    /**
     * Loads one file.
     */
    @Override
    public Config load(String name) throws IOException {
        Config cached = cache.get(name);
        if (cached != null) {
            return cached;
        }
        Config cfg = Parser.parse(this.root.resolve(name));
        cache.put(name, cfg);
        return cfg;
    }

    @Override
    public void close() {
        cache.clear();
    }

    interface Listener extends EventListener {
        void onLoad(Config cfg);
    }

    enum Format { JSON, YAML }

    record Entry(String key, String value) {}
}
"##;

    #[test]
    fn java_loader_symbols() {
        let f = extract_clean(Language::Java, LOADER_JAVA);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.DEFAULT", S::Field),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.ConfigLoader", S::Constructor),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.close", S::Method),
            ("ConfigLoader.Listener", S::Interface),
            ("ConfigLoader.Listener.onLoad", S::Method),
            ("ConfigLoader.Format", S::Enum),
            ("ConfigLoader.Format.JSON", S::EnumMember),
            ("ConfigLoader.Format.YAML", S::EnumMember),
            ("ConfigLoader.Entry", S::Class),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "ConfigLoader"), (13, 50));
        assert_eq!(lines(&f, "ConfigLoader.load"), (27, 36));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.\n\n@author team");
        assert!(class.signature.ends_with(
            "public class ConfigLoader extends BaseLoader<Config> implements Loader, AutoCloseable"
        ));
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(
            load.signature,
            "@Override public Config load(String name) throws IOException"
        );
        assert_eq!(load.doc, "Loads one file.");
        assert_span_text(LOADER_JAVA, load, "@Override", "return cfg;\n    }");
        assert_eq!(sym(&f, "ConfigLoader.DEFAULT").doc, "Default file name.");
        assert_eq!(
            sym(&f, "ConfigLoader.ConfigLoader").signature,
            "public ConfigLoader(Path root)"
        );
        assert_eq!(
            parent_of(&f, "ConfigLoader.Listener.onLoad"),
            "ConfigLoader.Listener"
        );
    }

    #[test]
    fn java_loader_references() {
        let f = extract_clean(Language::Java, LOADER_JAVA);
        assert_eq!(
            imports(&f),
            [
                "java.io.IOException @3",
                "java.util [*] @4",
                "java.util.Objects [requireNonNull] @5",
                "com.example.core.BaseLoader @6",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.cache -> HashMap @17",
                "ConfigLoader.ConfigLoader -> requireNonNull @21",
                "ConfigLoader.load -> cache.get @29",
                "ConfigLoader.load -> Parser.parse @33",
                "ConfigLoader.load -> this.root.resolve @33",
                "ConfigLoader.load -> cache.put @34",
                "ConfigLoader.close -> cache.clear @40",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : BaseLoader @14",
                "ConfigLoader : Loader @14",
                "ConfigLoader : AutoCloseable @14",
                "ConfigLoader.Listener : EventListener @43",
            ]
        );
    }

    #[test]
    fn an_annotations_elements_are_its_methods() {
        let src = "/** Since when. */\npublic @interface Since {\n  /** The version. */\n  double value();\n  String[] alternate() default {};\n}\n";
        let f = crate::extract(Language::Java, src.as_bytes());
        assert_eq!(
            outline(&f),
            [
                ("Since".to_string(), S::Interface),
                ("Since.value".to_string(), S::Method),
                ("Since.alternate".to_string(), S::Method),
            ]
        );
        assert_eq!(sym(&f, "Since.value").doc, "The version.");
    }
}
