//! C#: classes, records, structs, interfaces, enums (with members),
//! delegates (as type aliases), methods, local functions, constructors,
//! destructors (`~Name`), operators (`operator +`), indexers (`this`),
//! properties, events and fields (`const` ones as constants). Namespaces
//! are not symbols, like Java packages: a type in a namespace is top-level.
//!
//! Imports: `using A.B;` imports every type of the namespace (module `A.B`,
//! names `[*]`), as does `using static A.B.C;` for the members of `C`;
//! `using X = A.B;` is module `A.B` with alias `X`. Doc comments are `///`
//! lines (or `/** */`), without their `<summary>` tags. Inheritance: every
//! type of the base list (the class cannot be told from the interfaces
//! without the types). Calls: invocations, `new T(..)`, and `x?.M()`.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AliasQualifiedName = "alias_qualified_name",
        BaseList = "base_list",
        ClassDeclaration = "class_declaration",
        Comment = "comment",
        ConditionalAccessExpression = "conditional_access_expression",
        ConstructorDeclaration = "constructor_declaration",
        ConversionOperatorDeclaration = "conversion_operator_declaration",
        DelegateDeclaration = "delegate_declaration",
        DestructorDeclaration = "destructor_declaration",
        EnumDeclaration = "enum_declaration",
        EnumMemberDeclaration = "enum_member_declaration",
        EventDeclaration = "event_declaration",
        EventFieldDeclaration = "event_field_declaration",
        FieldDeclaration = "field_declaration",
        FileScopedNamespaceDeclaration = "file_scoped_namespace_declaration",
        GenericName = "generic_name",
        Identifier = "identifier",
        IndexerDeclaration = "indexer_declaration",
        InterfaceDeclaration = "interface_declaration",
        InvocationExpression = "invocation_expression",
        LocalFunctionStatement = "local_function_statement",
        MemberAccessExpression = "member_access_expression",
        MemberBindingExpression = "member_binding_expression",
        MethodDeclaration = "method_declaration",
        Modifier = "modifier",
        ObjectCreationExpression = "object_creation_expression",
        OperatorDeclaration = "operator_declaration",
        PredefinedType = "predefined_type",
        PrimaryConstructorBaseType = "primary_constructor_base_type",
        PropertyDeclaration = "property_declaration",
        QualifiedName = "qualified_name",
        RecordDeclaration = "record_declaration",
        StructDeclaration = "struct_declaration",
        UsingDirective = "using_directive",
        VariableDeclaration = "variable_declaration",
        VariableDeclarator = "variable_declarator",
    }
    skip ["attribute_list", "type_argument_list", "type_parameter_list", "parameter_list", "bracketed_parameter_list", "type_parameter_constraints_clause", "string_literal", "verbatim_string_literal", "raw_string_literal", "integer_literal", "real_literal", "character_literal", "array_type", "nullable_type", "pointer_type", "tuple_type", "extern_alias_directive"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed C# file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = CSharp {
        g: Grammar::get(&GRAMMAR, Language::CSharp),
    };
    walker::walk(Language::CSharp, tree, src, &mut rules).into_facts()
}

struct CSharp {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for CSharp {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => {
                w.comment(node);
                false
            }
            K::UsingDirective => {
                self.using(w, node);
                false
            }
            K::FileScopedNamespaceDeclaration => false,
            K::ClassDeclaration | K::RecordDeclaration => {
                self.type_decl(w, node, SymbolKind::Class);
                true
            }
            K::StructDeclaration => {
                self.type_decl(w, node, SymbolKind::Struct);
                true
            }
            K::InterfaceDeclaration => {
                self.type_decl(w, node, SymbolKind::Interface);
                true
            }
            K::EnumDeclaration => {
                self.type_decl(w, node, SymbolKind::Enum);
                true
            }
            K::EnumMemberDeclaration => {
                self.named(w, node, SymbolKind::EnumMember, None);
                true
            }
            K::DelegateDeclaration => {
                self.named(w, node, SymbolKind::TypeAlias, None);
                false
            }
            K::MethodDeclaration => {
                self.named(w, node, SymbolKind::Method, None);
                true
            }
            K::LocalFunctionStatement => {
                self.named(w, node, SymbolKind::Function, None);
                true
            }
            K::ConstructorDeclaration => {
                self.named(w, node, SymbolKind::Constructor, None);
                true
            }
            K::DestructorDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let name = format!("~{}", w.text(name));
                    self.symbol(w, node, &name, SymbolKind::Method, f.body);
                }
                true
            }
            K::OperatorDeclaration | K::ConversionOperatorDeclaration => {
                // `operator +`, or the target type of a conversion.
                let op = node
                    .child_by_field_id(f.operator)
                    .or_else(|| node.child_by_field_id(f.type_));
                if let Some(op) = op {
                    let name = format!("operator {}", w.text(op));
                    self.symbol(w, node, &name, SymbolKind::Method, f.body);
                }
                true
            }
            K::IndexerDeclaration => {
                let end = if node.child_by_field_id(f.accessors).is_some() {
                    f.accessors
                } else {
                    f.value
                };
                self.symbol(w, node, "this", SymbolKind::Method, end);
                true
            }
            K::PropertyDeclaration | K::EventDeclaration => {
                self.named(w, node, SymbolKind::Field, Some(self.g.f.name));
                true
            }
            K::FieldDeclaration | K::EventFieldDeclaration => {
                self.fields(w, node);
                true
            }
            K::InvocationExpression => {
                self.invocation(w, node);
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

impl CSharp {
    fn doc(&self, w: &Walk<'_>, node: Node<'_>) -> String {
        source_text::without_summary_tags(w.doc_comment(node, DocStyle::RustOuter))
    }

    /// Records a symbol whose signature ends where the `end` field starts.
    fn symbol(
        &self,
        w: &mut Walk<'_>,
        node: Node<'_>,
        name: &str,
        kind: SymbolKind,
        end: u16,
    ) -> usize {
        let doc = self.doc(w, node);
        let body = node.child_by_field_id(end);
        w.symbol(name, kind, node, body, doc, None, true)
    }

    /// A declaration named by its `name` field; its signature ends at its
    /// body (or, for properties and events, after the name).
    fn named(
        &self,
        w: &mut Walk<'_>,
        node: Node<'_>,
        kind: SymbolKind,
        header_ends_after: Option<u16>,
    ) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let doc = self.doc(w, node);
        let body = match header_ends_after {
            Some(field) => node.child_by_field_id(field).and_then(|n| n.next_sibling()),
            None => node.child_by_field_id(self.g.f.body),
        };
        let name = w.text(name);
        Some(w.symbol(&name, kind, node, body, doc, None, true))
    }

    fn type_decl(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) {
        let Some(sym) = self.named(w, node, kind, None) else {
            return;
        };
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if self.g.kind(child) != K::BaseList {
                continue;
            }
            let mut cursor = child.walk();
            for base in child.named_children(&mut cursor) {
                match self.g.kind(base) {
                    K::Identifier | K::GenericName | K::QualifiedName | K::AliasQualifiedName => {
                        w.inherit(sym, base);
                    }
                    K::PrimaryConstructorBaseType => {
                        if let Some(ty) = base.child_by_field_id(self.g.f.type_) {
                            w.inherit(sym, ty);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// `int a, b;` gives two fields; `const` ones are constants.
    fn fields(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let mut is_const = false;
        let mut decl = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match self.g.kind(child) {
                K::Modifier if w.bytes(child) == b"const" => is_const = true,
                K::VariableDeclaration => decl = Some(child),
                _ => {}
            }
        }
        let Some(decl) = decl else { return };
        let kind = if is_const {
            SymbolKind::Constant
        } else {
            SymbolKind::Field
        };
        let doc = self.doc(w, node);
        let mut cursor = decl.walk();
        let declarators: Vec<Node<'_>> = decl
            .named_children(&mut cursor)
            .filter(|d| self.g.kind(*d) == K::VariableDeclarator)
            .collect();
        let single = declarators.len() == 1;
        for d in declarators {
            if let Some(name) = d.child_by_field_id(self.g.f.name) {
                let name = w.text(name);
                w.symbol(&name, kind, node, None, doc.clone(), None, single);
            }
        }
    }

    fn invocation(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(func) = node.child_by_field_id(f.function) else {
            return;
        };
        match self.g.kind(func) {
            K::Identifier | K::GenericName => {
                let name = self.simple_name(w, func);
                // `nameof(x)` is an operator, not a call.
                if name != "nameof" && !w.calls_a_local(&crate::locals::CSHARP, node, &name) {
                    w.call(&name, None, node);
                }
            }
            K::MemberAccessExpression | K::QualifiedName => {
                let (name, object) = if self.g.kind(func) == K::QualifiedName {
                    (
                        func.child_by_field_id(f.name),
                        func.child_by_field_id(f.qualifier),
                    )
                } else {
                    (
                        func.child_by_field_id(f.name),
                        func.child_by_field_id(f.expression),
                    )
                };
                let Some(name) = name else { return };
                let receiver = object.map(|o| {
                    self.receiver(w, o)
                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                });
                let name = self.simple_name(w, name);
                w.call(&name, receiver, node);
            }
            K::ConditionalAccessExpression => {
                // `a?.B()`: the name is in the binding after `?`.
                let mut cursor = func.walk();
                let binding = func
                    .named_children(&mut cursor)
                    .find(|c| self.g.kind(*c) == K::MemberBindingExpression);
                let Some(name) = binding.and_then(|b| b.child_by_field_id(f.name)) else {
                    return;
                };
                let receiver = func
                    .child_by_field_id(f.condition)
                    .and_then(|c| self.receiver(w, c))
                    .unwrap_or_else(|| EXPRESSION_RECEIVER.into());
                let name = self.simple_name(w, name);
                w.call(&name, Some(receiver), node);
            }
            _ => {}
        }
    }

    /// `Load` for `Load` and `Go` for `Go<int>`.
    fn simple_name(&self, w: &Walk<'_>, node: Node<'_>) -> String {
        match self.g.kind(node) {
            K::GenericName => node
                .named_child(0)
                .map(|n| w.text(n).into_owned())
                .unwrap_or_default(),
            _ => w.text(node).into_owned(),
        }
    }

    /// A receiver made of names: `this`, `base`, `cache`, `IO.Path`,
    /// `global::System.Console`, `string`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            if !cur.is_named() {
                return matches!(w.bytes(cur), b"this" | b"base")
                    .then(|| w.text(node).into_owned());
            }
            match self.g.kind(cur) {
                K::Identifier
                | K::GenericName
                | K::QualifiedName
                | K::AliasQualifiedName
                | K::PredefinedType => return Some(w.text(node).into_owned()),
                K::MemberAccessExpression => cur = cur.child_by_field_id(self.g.f.expression)?,
                _ => return None,
            }
        }
    }

    fn using(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let alias = node.child_by_field_id(self.g.f.name);
        // `using static A.B;` is written like `using A.B;` here: both
        // bring in every name the target declares.
        let mut cursor = node.walk();
        let target = node.named_children(&mut cursor).find(|c| Some(*c) != alias);
        let Some(target) = target else { return };
        let module: String = w
            .text(target)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        match alias {
            Some(a) => {
                let alias = w.text(a).into_owned();
                w.import(module, Vec::new(), Some(alias), false, node);
            }
            None => {
                w.import(module, vec!["*".to_string()], None, false, node);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_CS: &str = r##"using System;
using System.Collections.Generic;
using static System.Math;
using IO = System.IO;

namespace Acme.Config
{
    /// <summary>
    /// Loads configuration files.
    /// </summary>
    [Serializable]
    public class ConfigLoader : BaseLoader<Config>, ILoader, IDisposable
    {
        /// <summary>Default file name.</summary>
        public const string Default = "app.conf";
        private readonly Dictionary<string, Config> cache = new Dictionary<string, Config>();
        public string Root { get; set; }

        public ConfigLoader(string root) : base(root)
        {
            Root = root;
        }

        /// <summary>Loads one file.</summary>
        /// <param name="name">The file.</param>
        public Config Load(string name)
        {
            if (cache.TryGetValue(name, out var cached)) return cached;
            var cfg = Parser.Parse(this.Root, IO.Path.Combine(Root, name));
            Validate(cfg);
            items[0].Run();
            base.Load(name);
            return new Config(cfg);
        }

        private static void Validate(Config c) => c?.Check();

        ~ConfigLoader() { }

        public static ConfigLoader operator +(ConfigLoader a, ConfigLoader b) => a;

        public int this[int i] => i;

        public interface IListener : IEventListener { void OnLoad(Config cfg); }

        public enum Format { Json, Yaml = 2 }

        public record Entry(string Key, string Value) : EntryBase(Key);

        public struct Point { public int X, Y; }

        public delegate void Handler(int x);
    }
}
"##;

    #[test]
    fn csharp_loader_symbols() {
        let f = extract_clean(Language::CSharp, LOADER_CS);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.Default", S::Constant),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.Root", S::Field),
            ("ConfigLoader.ConfigLoader", S::Constructor),
            ("ConfigLoader.Load", S::Method),
            ("ConfigLoader.Validate", S::Method),
            ("ConfigLoader.~ConfigLoader", S::Method),
            ("ConfigLoader.operator +", S::Method),
            ("ConfigLoader.this", S::Method),
            ("ConfigLoader.IListener", S::Interface),
            ("ConfigLoader.IListener.OnLoad", S::Method),
            ("ConfigLoader.Format", S::Enum),
            ("ConfigLoader.Format.Json", S::EnumMember),
            ("ConfigLoader.Format.Yaml", S::EnumMember),
            ("ConfigLoader.Entry", S::Class),
            ("ConfigLoader.Point", S::Struct),
            ("ConfigLoader.Point.X", S::Field),
            ("ConfigLoader.Point.Y", S::Field),
            ("ConfigLoader.Handler", S::TypeAlias),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));
        // The namespace is no symbol: the class is top-level.
        assert_eq!(parent_of(&f, "ConfigLoader"), "-");

        assert_eq!(lines(&f, "ConfigLoader"), (11, 53));
        assert_eq!(lines(&f, "ConfigLoader.Load"), (26, 34));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.");
        assert_eq!(
            class.signature,
            "[Serializable] public class ConfigLoader : BaseLoader<Config>, ILoader, IDisposable"
        );
        let load = sym(&f, "ConfigLoader.Load");
        assert_eq!(load.signature, "public Config Load(string name)");
        assert_eq!(
            load.doc,
            "Loads one file.\n<param name=\"name\">The file.</param>"
        );
        assert_span_text(
            LOADER_CS,
            load,
            "public Config Load",
            "return new Config(cfg);\n        }",
        );
        assert_eq!(sym(&f, "ConfigLoader.Default").doc, "Default file name.");
        assert_eq!(
            sym(&f, "ConfigLoader.Default").signature,
            "public const string Default = \"app.conf\""
        );
        assert_eq!(sym(&f, "ConfigLoader.Root").signature, "public string Root");
        assert_eq!(
            sym(&f, "ConfigLoader.ConfigLoader").signature,
            "public ConfigLoader(string root) : base(root)"
        );
        assert_eq!(
            sym(&f, "ConfigLoader.Validate").signature,
            "private static void Validate(Config c)"
        );
        assert_eq!(
            sym(&f, "ConfigLoader.this").signature,
            "public int this[int i]"
        );
        assert_eq!(
            parent_of(&f, "ConfigLoader.IListener.OnLoad"),
            "ConfigLoader.IListener"
        );
    }

    #[test]
    fn csharp_loader_references() {
        let f = extract_clean(Language::CSharp, LOADER_CS);
        assert_eq!(
            imports(&f),
            [
                "System [*] @1",
                "System.Collections.Generic [*] @2",
                "System.Math [*] @3",
                "System.IO as IO @4",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.cache -> Dictionary @16",
                "ConfigLoader.Load -> cache.TryGetValue @28",
                "ConfigLoader.Load -> Parser.Parse @29",
                "ConfigLoader.Load -> IO.Path.Combine @29",
                "ConfigLoader.Load -> Validate @30",
                "ConfigLoader.Load -> (expr).Run @31",
                "ConfigLoader.Load -> base.Load @32",
                "ConfigLoader.Load -> Config @33",
                "ConfigLoader.Validate -> c.Check @36",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : BaseLoader @12",
                "ConfigLoader : ILoader @12",
                "ConfigLoader : IDisposable @12",
                "ConfigLoader.IListener : IEventListener @44",
                "ConfigLoader.Entry : EntryBase @48",
            ]
        );
    }

    #[test]
    fn csharp_file_scoped_namespace_and_local_functions() {
        let src = "namespace Acme.Tools;\n\nstatic class Runner\n{\n    static void Main() { Helper.Go<int>(); Local(); void Local() { this.Run(); } }\n}\n";
        let f = extract_clean(Language::CSharp, src);
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["Runner", "Runner.Main", "Runner.Main.Local"]);
        assert_eq!(sym(&f, "Runner.Main.Local").kind, S::Function);
        assert_eq!(
            calls(&f),
            [
                "Runner.Main -> Helper.Go @5",
                "Runner.Main -> Local @5",
                "Runner.Main.Local -> this.Run @5",
            ]
        );
    }
}
