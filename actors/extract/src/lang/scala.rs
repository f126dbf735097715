//! Scala (2 and 3): classes (case classes too), traits, objects (as
//! classes), enums with their cases, functions (methods inside a type),
//! `val`/`var` members (fields in a type, variables at top level) and type
//! members/aliases; packages are not symbols. A companion object (an
//! `object` beside a class, trait or enum of the same name) is an
//! [`SymbolKind::Impl`] of it, like a Rust impl block: `Config.apply()` is
//! `Config`'s. Extension methods are functions.
//!
//! Imports: one per imported name, as a path (`import a.b.C` is module
//! `a.b.C`; `import a.b.{C, D => E}` gives `a.b.C`, and `a.b.D` with alias
//! `E`); wildcards (`_`, `*`) are module `a.b`, names `[*]`; hidden names
//! (`D => _`) are no import. Calls: `f(..)`, `x.f(..)`, `f[T](..)` and
//! `new T(..)`; a method called without parentheses looks like a field and
//! is not recorded. Inheritance: every type after `extends` and `with`.
//! Spans end at a definition's last token: the grammar's indented blocks
//! (Scala 3) reach on to the next one.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        ArrowRenamedIdentifier = "arrow_renamed_identifier",
        AsRenamedIdentifier = "as_renamed_identifier",
        BlockComment = "block_comment",
        CallExpression = "call_expression",
        ClassDefinition = "class_definition",
        Comment = "comment",
        CompilationUnit = "compilation_unit",
        EnumBody = "enum_body",
        EnumDefinition = "enum_definition",
        FieldExpression = "field_expression",
        FullEnumCase = "full_enum_case",
        FunctionDeclaration = "function_declaration",
        FunctionDefinition = "function_definition",
        GenericFunction = "generic_function",
        Identifier = "identifier",
        ImportDeclaration = "import_declaration",
        InstanceExpression = "instance_expression",
        NamespaceSelectors = "namespace_selectors",
        NamespaceWildcard = "namespace_wildcard",
        ObjectDefinition = "object_definition",
        OperatorIdentifier = "operator_identifier",
        SimpleEnumCase = "simple_enum_case",
        TemplateBody = "template_body",
        TraitDefinition = "trait_definition",
        TypeDefinition = "type_definition",
        ValDeclaration = "val_declaration",
        ValDefinition = "val_definition",
        VarDeclaration = "var_declaration",
        VarDefinition = "var_definition",
    }
    skip ["modifiers", "annotation", "type_parameters", "type_arguments", "class_parameters", "parameters", "string", "integer_literal", "floating_point_literal", "boolean_literal", "character_literal", "type_identifier", "generic_type", "compound_type", "function_type", "tuple_type", "infix_type", "stable_type_identifier", "package_identifier"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Scala file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Scala {
        g: Grammar::get(&GRAMMAR, Language::Scala),
        objects: Vec::new(),
    };
    let mut walk = walker::walk(Language::Scala, tree, src, &mut rules);
    // An indented body (Scala 3) ends at the next token, past blank lines.
    for i in 0..walk.symbols().len() {
        walk.trim_span_end(i);
    }
    let objects = std::mem::take(&mut rules.objects);
    let mut facts = walk.into_facts();
    mark_companions(&mut facts, &objects);
    facts
}

/// Turns each object that has a class, trait or enum of the same name
/// beside it into an impl block of that type.
fn mark_companions(facts: &mut FileFacts, objects: &[usize]) {
    for &o in objects {
        let (parent, name) = (facts.symbols[o].parent, &facts.symbols[o].qualified_name);
        let companion = facts.symbols.iter().enumerate().any(|(i, s)| {
            i != o
                && s.parent == parent
                && &s.qualified_name == name
                && matches!(
                    s.kind,
                    SymbolKind::Class | SymbolKind::Trait | SymbolKind::Enum
                )
                && !objects.contains(&i)
        });
        if companion {
            facts.symbols[o].kind = SymbolKind::Impl;
        }
    }
}

struct Scala {
    g: &'static Grammar<K>,
    /// The symbols of `object` definitions, for [`mark_companions`].
    objects: Vec<usize>,
}

impl<'t> Rules<'t> for Scala {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment | K::BlockComment => {
                w.comment(node);
                false
            }
            K::ImportDeclaration => {
                self.import(w, node);
                false
            }
            K::ClassDefinition => {
                self.type_def(w, node, SymbolKind::Class);
                true
            }
            K::TraitDefinition => {
                self.type_def(w, node, SymbolKind::Trait);
                true
            }
            K::EnumDefinition => {
                self.type_def(w, node, SymbolKind::Enum);
                true
            }
            K::ObjectDefinition => {
                if let Some(sym) = self.type_def(w, node, SymbolKind::Class) {
                    self.objects.push(sym);
                }
                true
            }
            K::SimpleEnumCase | K::FullEnumCase => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let name = w.text(name);
                    let sym = w.symbol(&name, SymbolKind::EnumMember, node, None, doc, None, true);
                    self.bases(w, sym, node);
                }
                true
            }
            K::FunctionDefinition | K::FunctionDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let in_type = w
                        .container_kind()
                        .is_some_and(|k| k.is_type() || k == SymbolKind::Impl);
                    let kind = if in_type {
                        SymbolKind::Method
                    } else {
                        SymbolKind::Function
                    };
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let end = self.equals(node);
                    let name = w.text(name);
                    w.symbol(&name, kind, node, end, doc, None, true);
                }
                true
            }
            K::ValDefinition | K::VarDefinition => {
                if let Some(pattern) = node.child_by_field_id(f.pattern) {
                    if self.g.kind(pattern) == K::Identifier {
                        self.member(w, node, pattern);
                    }
                }
                true
            }
            K::ValDeclaration | K::VarDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    self.member(w, node, name);
                }
                false
            }
            K::TypeDefinition => {
                if let Some(name) = node.child_by_field_id(f.name) {
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
            K::InstanceExpression => {
                // `new T(..)`; `new { .. }` names no type.
                let mut cursor = node.walk();
                let ty = node.named_children(&mut cursor).find(|c| {
                    !matches!(
                        c.kind(),
                        "arguments" | "template_body" | "end_marker" | "early_defs"
                    )
                });
                if let Some(ty) = ty {
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

impl Scala {
    fn type_def(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = node.child_by_field_id(self.g.f.body);
        let name = w.text(name);
        let sym = w.symbol(&name, kind, node, body, doc, None, true);
        self.bases(w, sym, node);
        Some(sym)
    }

    /// The types of an `extends ... with ...` clause.
    fn bases(&self, w: &mut Walk<'_>, sym: usize, node: Node<'_>) {
        let Some(clause) = node.child_by_field_id(self.g.f.extend) else {
            return;
        };
        for ty in walker::field_children(clause, self.g.f.type_) {
            if ty.is_named() && ty.kind() != "arguments" {
                w.inherit(sym, ty);
            }
        }
    }

    /// The `=` before a definition's body: where its signature ends.
    fn equals<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        let eq = node
            .children(&mut cursor)
            .find(|c| !c.is_named() && c.kind() == "=");
        eq.or_else(|| node.child_by_field_id(self.g.f.body))
    }

    /// A `val` or `var` of a type or file (a local one is no symbol).
    fn member(&self, w: &mut Walk<'_>, node: Node<'_>, name: Node<'_>) {
        let member = w.parent().is_some_and(|p| {
            matches!(
                self.g.kind(p),
                K::TemplateBody | K::EnumBody | K::CompilationUnit
            )
        });
        if !member {
            return;
        }
        let kind = if w.container().is_some() {
            SymbolKind::Field
        } else {
            SymbolKind::Variable
        };
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let name = w.text(name);
        w.symbol(&name, kind, node, None, doc, None, true);
    }

    fn call(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(mut func) = node.child_by_field_id(f.function) else {
            return;
        };
        if self.g.kind(func) == K::GenericFunction {
            let Some(inner) = func.child_by_field_id(f.function) else {
                return;
            };
            func = inner;
        }
        match self.g.kind(func) {
            K::Identifier => {
                let name = w.text(func);
                if !w.calls_a_local(&crate::locals::SCALA, node, &name) {
                    w.call(&name, None, node);
                }
            }
            K::FieldExpression => {
                let Some(name) = func.child_by_field_id(f.field) else {
                    return;
                };
                let receiver = func
                    .child_by_field_id(f.value)
                    .and_then(|v| self.receiver(w, v))
                    .unwrap_or_else(|| EXPRESSION_RECEIVER.into());
                let name = w.text(name);
                w.call(&name, Some(receiver), node);
            }
            _ => {}
        }
    }

    /// A receiver made of names: `this`, `super`, `cache`, `this.root`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier => return Some(w.text(node).into_owned()),
                K::FieldExpression => cur = cur.child_by_field_id(self.g.f.value)?,
                _ => return None,
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        // `import a.b.C, d.e._`: the path's segments up to a `,`, a
        // wildcard or a selector list.
        let mut path: Vec<String> = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match self.g.kind(child) {
                K::Identifier | K::OperatorIdentifier => path.push(w.text(child).into_owned()),
                K::NamespaceWildcard => {
                    self.emit(w, node, &path, None, None);
                    path.clear();
                }
                K::NamespaceSelectors => {
                    let mut cursor = child.walk();
                    for sel in child.named_children(&mut cursor) {
                        match self.g.kind(sel) {
                            K::Identifier | K::OperatorIdentifier => {
                                let name = w.text(sel);
                                self.emit(w, node, &path, Some(&name), None);
                            }
                            K::ArrowRenamedIdentifier | K::AsRenamedIdentifier => {
                                let f = &self.g.f;
                                let name = sel.child_by_field_id(f.name).map(|n| w.text(n));
                                let alias = sel.child_by_field_id(f.alias).map(|n| w.text(n));
                                if let (Some(name), Some(alias)) = (name, alias) {
                                    // `D => _` hides `D`.
                                    if alias != "_" {
                                        self.emit(w, node, &path, Some(&name), Some(&alias));
                                    }
                                }
                            }
                            K::NamespaceWildcard => self.emit(w, node, &path, None, None),
                            _ => {}
                        }
                    }
                    path.clear();
                }
                _ if !child.is_named() && child.kind() == "," => {
                    if !path.is_empty() {
                        self.emit_path(w, node, &path);
                    }
                    path.clear();
                }
                _ => {}
            }
        }
        if !path.is_empty() {
            self.emit_path(w, node, &path);
        }
    }

    /// `import a.b.C`: the whole path is the module.
    fn emit_path(&self, w: &mut Walk<'_>, at: Node<'_>, path: &[String]) {
        w.import(path.join("."), Vec::new(), None, false, at);
    }

    /// A name of `path` (`None`: all of them), possibly renamed.
    fn emit(
        &self,
        w: &mut Walk<'_>,
        at: Node<'_>,
        path: &[String],
        name: Option<&str>,
        alias: Option<&str>,
    ) {
        if path.is_empty() {
            return;
        }
        let prefix = path.join(".");
        match name {
            Some(n) => w.import(
                format!("{prefix}.{n}"),
                Vec::new(),
                alias.map(str::to_string),
                false,
                at,
            ),
            None => w.import(prefix, vec!["*".to_string()], None, false, at),
        }
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_SCALA: &str = r##"package com.example.config

import java.io.IOException
import scala.collection.mutable.{Map, HashMap => HM, Set => _}
import com.example.core._
import com.example.core.BaseLoader, java.nio.file.Path

/** Loads configuration files.
  *
  * Caches results.
  */
class ConfigLoader(root: Path) extends BaseLoader[Config](root) with Loader with AutoCloseable {
  /** Default file name. */
  val Default = "app.conf"
  private var cache = HM.empty[String, Config]

  /** Loads one file. */
  def load(name: String): Config = {
    val cfg = Parser.parse(this.root.resolve(name))
    cache.put(name, cfg)
    validate(cfg)
    super.load(name)
    new Config(cfg)
  }

  def close(): Unit = cache.clear()
  type Key = String
}

object ConfigLoader {
  def apply(s: String): ConfigLoader = new ConfigLoader(Path.of(s))
}

object Registry extends Loader

trait Loader extends Base { def load(name: String): Config }
case class Entry(key: String, value: String)
enum Format { case Json, Yaml }
def topLevel(x: Int): Int = helpers.twice[Int](x)
"##;

    #[test]
    fn scala_loader_symbols() {
        let f = extract_clean(Language::Scala, LOADER_SCALA);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.Default", S::Field),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.close", S::Method),
            ("ConfigLoader.Key", S::TypeAlias),
            ("ConfigLoader", S::Impl),
            ("ConfigLoader.apply", S::Method),
            ("Registry", S::Class),
            ("Loader", S::Trait),
            ("Loader.load", S::Method),
            ("Entry", S::Class),
            ("Format", S::Enum),
            ("Format.Json", S::EnumMember),
            ("Format.Yaml", S::EnumMember),
            ("topLevel", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        let class = sym_of(&f, "ConfigLoader", S::Class);
        assert_eq!((class.span.start_line, class.span.end_line), (12, 28));
        assert_eq!(class.doc, "Loads configuration files.\n\nCaches results.");
        assert_eq!(
            class.signature,
            "class ConfigLoader(root: Path) extends BaseLoader[Config](root) with Loader with AutoCloseable"
        );
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(lines(&f, "ConfigLoader.load"), (18, 24));
        assert_eq!(load.signature, "def load(name: String): Config");
        assert_eq!(load.doc, "Loads one file.");
        assert_span_text(LOADER_SCALA, load, "def load", "new Config(cfg)\n  }");
        assert_eq!(sym(&f, "ConfigLoader.close").signature, "def close(): Unit");
        assert_eq!(sym(&f, "ConfigLoader.Default").doc, "Default file name.");
        assert_eq!(
            sym_of(&f, "ConfigLoader", S::Impl).signature,
            "object ConfigLoader"
        );
        assert_eq!(
            sym(&f, "Entry").signature,
            "case class Entry(key: String, value: String)"
        );
    }

    #[test]
    fn scala_loader_references() {
        let f = extract_clean(Language::Scala, LOADER_SCALA);
        assert_eq!(
            imports(&f),
            [
                "java.io.IOException @3",
                "scala.collection.mutable.Map @4",
                "scala.collection.mutable.HashMap as HM @4",
                "com.example.core [*] @5",
                "com.example.core.BaseLoader @6",
                "java.nio.file.Path @6",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.load -> Parser.parse @19",
                "ConfigLoader.load -> this.root.resolve @19",
                "ConfigLoader.load -> cache.put @20",
                "ConfigLoader.load -> validate @21",
                "ConfigLoader.load -> super.load @22",
                "ConfigLoader.load -> Config @23",
                "ConfigLoader.close -> cache.clear @26",
                "ConfigLoader.apply -> ConfigLoader @31",
                "ConfigLoader.apply -> Path.of @31",
                "topLevel -> helpers.twice @39",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : BaseLoader @12",
                "ConfigLoader : Loader @12",
                "ConfigLoader : AutoCloseable @12",
                "Registry : Loader @34",
                "Loader : Base @36",
            ]
        );
    }

    #[test]
    fn scala3_indented_syntax() {
        let src = "package app\n\nobject Main:\n  def main(args: Array[String]): Unit =\n    val n = args.length\n    run(n)\n\n  private def run(n: Int): Unit = println(n)\n";
        let f = extract_clean(Language::Scala, src);
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["Main", "Main.main", "Main.run"]);
        assert_eq!(lines(&f, "Main.main"), (4, 6));
        assert_span_text(src, sym(&f, "Main.main"), "def main", "run(n)");
        assert_eq!(
            sym(&f, "Main.main").signature,
            "def main(args: Array[String]): Unit"
        );
        assert_eq!(calls(&f), ["Main.main -> run @6", "Main.run -> println @8"]);
    }
}
