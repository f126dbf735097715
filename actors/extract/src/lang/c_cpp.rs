//! C and C++ (the C++ grammar's node names extend C's, so one set of rules
//! serves both; `.h` files are parsed as C++).
//!
//! Symbols: function definitions and prototypes, structs, unions, enums
//! (with enumerators), typedefs and `using` aliases, `#define` macros, and in
//! C++ classes, methods, constructors, fields and namespaces. An out-of-line
//! definition `void A::f() {}` is named `f`, qualified `A.f`, with the
//! enclosing namespace (if any) as parent; its kind is Method (Constructor
//! for `A::A`) because a qualified function name almost always names a class
//! member. `typedef struct { .. } T;` is the struct `T` itself.
//!
//! Imports: `#include "x.h"` (relative) and `#include <x.h>` (not relative),
//! module without the delimiters. Calls: calls and `new T(..)`. Inheritance:
//! C++ base classes.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AccessSpecifier = "access_specifier",
        AliasDeclaration = "alias_declaration",
        AttributedDeclarator = "attributed_declarator",
        BaseClassClause = "base_class_clause",
        CallExpression = "call_expression",
        ClassSpecifier = "class_specifier",
        Comment = "comment",
        CompoundStatement = "compound_statement",
        Declaration = "declaration",
        DestructorName = "destructor_name",
        EnumSpecifier = "enum_specifier",
        ExpressionStatement = "expression_statement",
        Enumerator = "enumerator",
        FieldDeclaration = "field_declaration",
        FieldExpression = "field_expression",
        FieldIdentifier = "field_identifier",
        FriendDeclaration = "friend_declaration",
        FunctionDeclarator = "function_declarator",
        FunctionDefinition = "function_definition",
        Identifier = "identifier",
        NamespaceDefinition = "namespace_definition",
        NamespaceIdentifier = "namespace_identifier",
        NewExpression = "new_expression",
        OperatorCast = "operator_cast",
        OperatorName = "operator_name",
        ParenthesizedDeclarator = "parenthesized_declarator",
        PointerDeclarator = "pointer_declarator",
        PreprocDef = "preproc_def",
        PreprocFunctionDef = "preproc_function_def",
        PreprocInclude = "preproc_include",
        QualifiedIdentifier = "qualified_identifier",
        ReferenceDeclarator = "reference_declarator",
        StringLiteral = "string_literal",
        StructSpecifier = "struct_specifier",
        SystemLibString = "system_lib_string",
        TemplateFunction = "template_function",
        TemplateParameterList = "template_parameter_list",
        TranslationUnit = "translation_unit",
        This = "this",
        TypeDefinition = "type_definition",
        TypeIdentifier = "type_identifier",
        UnionSpecifier = "union_specifier",
    }
    skip ["parameter_list", "primitive_type", "type_qualifier", "storage_class_specifier", "string_literal", "char_literal", "number_literal", "template_argument_list", "concatenated_string", "raw_string_literal"]
}

/// Words the grammar may take for a field's name when a macro before them
/// confused it; no field is named so.
const SPECIFIER_WORDS: &[&str] = &[
    "explicit",
    "inline",
    "virtual",
    "static",
    "constexpr",
    "friend",
    "const",
    "volatile",
    "mutable",
];

static C: OnceLock<Grammar<K>> = OnceLock::new();
static CPP: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed C or C++ file.
pub(crate) fn extract(lang: Language, tree: &Tree, src: &[u8]) -> FileFacts {
    let cell = if lang == Language::C { &C } else { &CPP };
    let mut rules = CFamily {
        g: Grammar::get(cell, lang),
    };
    walker::walk(lang, tree, src, &mut rules).into_facts()
}

struct CFamily {
    g: &'static Grammar<K>,
}

/// Declarators wrap each other (`*`, `&`, parentheses, attributes) deeper
/// than any real code; past this the name is not worth finding.
const MAX_DECLARATOR_DEPTH: usize = 64;

impl<'t> Rules<'t> for CFamily {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => {
                w.comment(node);
                false
            }
            K::TemplateParameterList => {
                w.doc_transparent();
                false
            }
            // `friend class X;` and `friend void f(X&);` declare nothing
            // here, but a hidden friend defined in its class
            // (`friend bool operator==(..) { .. }`) is a function, written
            // there and found through it.
            K::FriendDeclaration => {
                let mut cursor = node.walk();
                let defines = node
                    .named_children(&mut cursor)
                    .any(|c| self.g.kind(c) == K::FunctionDefinition);
                defines
            }
            K::PreprocInclude => {
                if let Some(path) = node.child_by_field_id(f.path) {
                    let text = w.text(path);
                    let is_relative = self.g.kind(path) == K::StringLiteral;
                    let module = text.trim_matches(['"', '<', '>']).trim().to_string();
                    w.import(module, Vec::new(), None, is_relative, node);
                }
                false
            }
            K::PreprocDef | K::PreprocFunctionDef => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::Macro, node, None, doc, None, false);
                }
                false
            }
            K::NamespaceDefinition => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let (qualifier, name) = split_qualified(&w.text(name));
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let body = node.child_by_field_id(f.body);
                    w.symbol(
                        &name,
                        SymbolKind::Namespace,
                        node,
                        body,
                        doc,
                        Some(&qualifier),
                        true,
                    );
                }
                true
            }
            K::ClassSpecifier | K::StructSpecifier | K::UnionSpecifier | K::EnumSpecifier => {
                self.type_specifier(w, node);
                true
            }
            K::Enumerator => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let name = w.text(name);
                    w.symbol(
                        &name,
                        SymbolKind::EnumMember,
                        node,
                        None,
                        String::new(),
                        None,
                        false,
                    );
                }
                false
            }
            K::TypeDefinition => {
                self.typedef(w, node);
                true
            }
            K::AliasDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::TypeAlias, node, None, doc, None, false);
                }
                false
            }
            K::FunctionDefinition => {
                if let Some(decl) = node.child_by_field_id(f.declarator) {
                    let body = node.child_by_field_id(f.body);
                    if let Some(real) = self.swept_constructor(node) {
                        // `INLINE pool::pool(int a) : q_(a) {}`: the name is
                        // the swept declarator's, not the initializer's.
                        if let Some(name) = self.function_name(real) {
                            self.function(w, node, name, body);
                        }
                    } else if let Some((name, at)) = self.conversion_name(w, decl) {
                        self.function_named(w, node, &name, at, body);
                    } else if let Some(name) = self.function_name(decl) {
                        // `CONSTEXPR20 ~Buf()`: the macro left the `~` an error.
                        let tilde = decl
                            .prev_sibling()
                            .is_some_and(|p| p.is_error() && w.text(p).trim() == "~");
                        if tilde && !w.text(name).contains('~') {
                            let text = format!("~{}", w.text(name));
                            self.function_named(w, node, &text, name, body);
                        } else {
                            self.function(w, node, name, body);
                        }
                    } else if let Some(name) = self.macro_head_name(node, decl) {
                        self.function(w, node, name, body);
                    }
                }
                true
            }
            K::CompoundStatement => {
                // `INLINE pool::pool(int a) : pool(a, 1) {}`: a declaration
                // missing its `;` (the delegation read as an initializer),
                // then a block.
                if let Some((head, name)) = self.swept_delegating_constructor(node) {
                    let i = self.function(w, node, name, Some(node));
                    w.widen_start(i, head);
                    return true;
                }
                // `TEST(group, name) { .. }` at the top level: the grammar
                // reads a statement missing its `;`, then a block.
                if let Some(head) = self.macro_call_head(node) {
                    if let Some(name) = head
                        .named_child(0)
                        .and_then(|c| c.child_by_field_id(f.function))
                    {
                        let name = w.text(name);
                        let doc = w.doc_comment(head, DocStyle::AnyComment);
                        let i = w.symbol(
                            &name,
                            SymbolKind::Function,
                            node,
                            Some(node),
                            doc,
                            None,
                            true,
                        );
                        w.widen_start(i, head);
                    }
                }
                true
            }
            K::Declaration | K::FieldDeclaration => {
                self.declaration(w, node);
                true
            }
            K::CallExpression => {
                if let Some(func) = node.child_by_field_id(f.function) {
                    self.call(w, func, node);
                }
                true
            }
            K::NewExpression => {
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

impl CFamily {
    /// A struct, class, union or enum with a body (a bare `struct foo` is a
    /// reference, not a definition). Anonymous ones are named by an
    /// enclosing typedef instead (see [`Self::typedef`]).
    fn type_specifier(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(body) = node.child_by_field_id(f.body) else {
            return;
        };
        let Some(name) = node.child_by_field_id(f.name) else {
            return;
        };
        let kind = match self.g.kind(node) {
            K::ClassSpecifier => SymbolKind::Class,
            K::StructSpecifier => SymbolKind::Struct,
            K::UnionSpecifier => SymbolKind::Union,
            _ => SymbolKind::Enum,
        };
        let (qualifier, name) = split_qualified(&w.text(name));
        let doc = w.doc_comment(node, DocStyle::AnyComment);
        let sym = w.symbol(&name, kind, node, Some(body), doc, Some(&qualifier), true);
        let mut cursor = node.walk();
        for clause in node.named_children(&mut cursor) {
            if self.g.kind(clause) != K::BaseClassClause {
                continue;
            }
            let mut cursor = clause.walk();
            for base in clause.named_children(&mut cursor) {
                if self.g.kind(base) != K::AccessSpecifier {
                    w.inherit(sym, base);
                }
            }
        }
    }

    fn typedef(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(decl) = node.child_by_field_id(f.declarator) else {
            return;
        };
        let Some(name) = self.declarator_name(decl) else {
            return;
        };
        let doc = w.doc_comment(node, DocStyle::AnyComment);
        let name = w.text(name);
        let ty = node.child_by_field_id(f.type_);
        let anonymous_body = ty
            .filter(|t| t.child_by_field_id(f.name).is_none())
            .and_then(|t| {
                let kind = match self.g.kind(t) {
                    K::StructSpecifier | K::ClassSpecifier => SymbolKind::Struct,
                    K::UnionSpecifier => SymbolKind::Union,
                    K::EnumSpecifier => SymbolKind::Enum,
                    _ => return None,
                };
                t.child_by_field_id(f.body).map(|b| (kind, b))
            });
        match anonymous_body {
            Some((kind, body)) => {
                w.symbol(&name, kind, node, Some(body), doc, None, true);
            }
            None => {
                w.symbol(&name, SymbolKind::TypeAlias, node, None, doc, None, false);
            }
        }
    }

    /// A declaration: a prototype (function or method), or class fields.
    fn declaration(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let in_type = matches!(
            w.container_kind(),
            Some(SymbolKind::Class | SymbolKind::Struct | SymbolKind::Union)
        );
        // Block-scope declarations are locals (and `T x(a);` looks like a
        // prototype): only file, namespace and class scope declare symbols.
        if !(in_type || matches!(w.container_kind(), None | Some(SymbolKind::Namespace))) {
            return;
        }
        let declarators = walker::field_children(node, f.declarator);
        let single = declarators.len() == 1;
        for decl in declarators {
            if let Some(name) = self.function_name(decl) {
                self.function(w, node, name, None);
            } else if in_type && self.g.kind(node) == K::FieldDeclaration {
                if let Some(name) = self.declarator_name(decl) {
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let name = w.text(name);
                    // `CONSTEXPR explicit Buf(int a) : a_(a) {}` reads as a
                    // field `explicit` missing its `;`: a keyword is no name.
                    if SPECIFIER_WORDS.iter().any(|k| *k == &*name) {
                        continue;
                    }
                    w.symbol(&name, SymbolKind::Field, node, None, doc, None, single);
                }
            }
        }
    }

    fn function(
        &self,
        w: &mut Walk<'_>,
        node: Node<'_>,
        name: Node<'_>,
        body: Option<Node<'_>>,
    ) -> usize {
        let text = w.text(name);
        self.function_named(w, node, &text, name, body)
    }

    /// [`Self::function`] with its name spelled out (`operator bool`,
    /// `~Buf`), `name_node` where the name is written.
    fn function_named(
        &self,
        w: &mut Walk<'_>,
        node: Node<'_>,
        name: &str,
        name_node: Node<'_>,
        body: Option<Node<'_>>,
    ) -> usize {
        let (qualifier, name) = split_qualified(name);
        let container = w.container().map(|i| &w.symbols()[i]);
        let in_type = container.is_some_and(|c| {
            matches!(
                c.kind,
                SymbolKind::Class | SymbolKind::Struct | SymbolKind::Union
            )
        });
        let owner = if qualifier.is_empty() {
            in_type
                .then(|| container.map(|c| c.name.as_str()))
                .flatten()
        } else {
            Some(source_text::last_segment(&qualifier))
        };
        let kind = match owner {
            Some(owner) if owner == name => SymbolKind::Constructor,
            Some(_) => SymbolKind::Method,
            None => SymbolKind::Function,
        };
        let doc = w.doc_comment(node, DocStyle::AnyComment);
        let i = w.symbol(&name, kind, node, body, doc, Some(&qualifier), true);
        w.drop_stray_head(i, node, name_node, body);
        if body.is_none() {
            w.mark_declaration(i);
        }
        i
    }

    /// A conversion operator's name (`operator bool`, `Foo::operator T*`)
    /// and where it is written: the grammar gives it no name node.
    fn conversion_name<'t>(&self, w: &Walk<'_>, decl: Node<'t>) -> Option<(String, Node<'t>)> {
        let (scope, cast) = match self.g.kind(decl) {
            K::OperatorCast => (None, decl),
            K::QualifiedIdentifier => {
                let name = decl.child_by_field_id(self.g.f.name)?;
                if self.g.kind(name) != K::OperatorCast {
                    return None;
                }
                (decl.child_by_field_id(self.g.f.scope), name)
            }
            _ => return None,
        };
        let ty = w.text(cast.child_by_field_id(self.g.f.type_)?);
        let suffix = match cast
            .child_by_field_id(self.g.f.declarator)
            .map(|d| d.kind())
        {
            Some("abstract_pointer_declarator") => "*",
            Some("abstract_reference_declarator") => "&",
            _ => "",
        };
        let name = format!("operator {ty}{suffix}");
        let name = match scope {
            Some(scope) => format!("{}::{name}", w.text(scope)),
            None => name,
        };
        Some((name, cast))
    }

    /// The declarator of a constructor whose head a macro made the grammar
    /// misread: `INLINE pool::pool(int a, int b) : q_(a) {}` is a definition
    /// of `q_(a)` behind an error holding `pool::pool(..) :`.
    fn swept_constructor<'t>(&self, def: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = def.walk();
        let error = def.children(&mut cursor).find(|c| c.is_error())?;
        self.declarator_before_colon(error)
    }

    /// The function declarator an error ends with, before a `:` (a
    /// constructor's initializer list begins there).
    fn declarator_before_colon<'t>(&self, error: Node<'t>) -> Option<Node<'t>> {
        let n = error.child_count();
        let colon = error.child(n.checked_sub(1)?)?;
        let decl = error.child(n.checked_sub(2)?)?;
        (colon.kind() == ":" && self.g.kind(decl) == K::FunctionDeclarator).then_some(decl)
    }

    /// A delegating constructor a macro made the grammar misread:
    /// `INLINE pool::pool(int a) : pool(a, 1) {}` is a declaration of
    /// `pool(a, 1)` missing its `;`, behind an error holding `pool::pool(..)
    /// :`, and then a block. The declaration and the declarator's name.
    fn swept_delegating_constructor<'t>(&self, block: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        if !self.at_top(block) {
            return None;
        }
        let head = block.prev_named_sibling()?;
        if self.g.kind(head) != K::Declaration
            || !head.child(head.child_count().checked_sub(1)?)?.is_missing()
        {
            return None;
        }
        let mut cursor = head.walk();
        let error = head.children(&mut cursor).find(|c| c.is_error())?;
        let decl = self.declarator_before_colon(error)?;
        Some((head, self.function_name(decl)?))
    }

    /// The name node of a function declarator chain (`*f(..)`, `A::f(..)`),
    /// or `None` if the declarator declares no function (a function pointer
    /// variable is not a function).
    fn function_name<'t>(&self, declarator: Node<'t>) -> Option<Node<'t>> {
        let mut cur = declarator;
        for _ in 0..MAX_DECLARATOR_DEPTH {
            match self.g.kind(cur) {
                K::FunctionDeclarator => {
                    let name = cur.child_by_field_id(self.g.f.declarator)?;
                    return self.is_name(name).then_some(name);
                }
                K::PointerDeclarator | K::ReferenceDeclarator | K::AttributedDeclarator => {
                    cur = self.inner_declarator(cur)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// A function defined through a macro, which the grammar reads as a
    /// type and a parenthesised declarator: `TEST_SETUP(group) { .. }` is
    /// named `TEST_SETUP`, and `int CJSON_CDECL main(void) { .. }` (a
    /// calling-convention macro, read as `int CJSON_CDECL;` and then `main
    /// (void) { .. }`) is named `main`. No real declarator is a bare
    /// parenthesised name with a body.
    fn macro_head_name<'t>(&self, def: Node<'t>, decl: Node<'t>) -> Option<Node<'t>> {
        if self.g.kind(decl) != K::ParenthesizedDeclarator {
            return None;
        }
        let ty = def.child_by_field_id(self.g.f.type_)?;
        (self.g.kind(ty) == K::TypeIdentifier && self.at_top(def)).then_some(ty)
    }

    /// The statement before a top-level block that heads it as a
    /// function: a bare call `NAME(..)` whose `;` the grammar had to
    /// invent.
    fn macro_call_head<'t>(&self, block: Node<'t>) -> Option<Node<'t>> {
        if !self.at_top(block) {
            return None;
        }
        let head = block.prev_named_sibling()?;
        let call = head.named_child(0)?;
        let is_head = self.g.kind(head) == K::ExpressionStatement
            && self.g.kind(call) == K::CallExpression
            && call
                .child_by_field_id(self.g.f.function)
                .is_some_and(|f| self.g.kind(f) == K::Identifier)
            && head
                .child(head.child_count().checked_sub(1)?)
                .is_some_and(|semi| semi.is_missing());
        is_head.then_some(head)
    }

    /// Whether `node` sits at file level (or in a namespace, C++).
    fn at_top(&self, node: Node<'_>) -> bool {
        node.parent().is_some_and(|p| {
            self.g.kind(p) == K::TranslationUnit
                || p.parent()
                    .is_some_and(|g| self.g.kind(g) == K::NamespaceDefinition)
        })
    }

    /// The declared name under any wrapping declarators (`*p`, `a[3]`, `(*cb)(int)`).
    fn declarator_name<'t>(&self, declarator: Node<'t>) -> Option<Node<'t>> {
        let mut cur = declarator;
        for _ in 0..MAX_DECLARATOR_DEPTH {
            if self.is_name(cur) {
                return Some(cur);
            }
            cur = self.inner_declarator(cur)?;
        }
        None
    }

    fn inner_declarator<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.g.kind(node) {
            K::ParenthesizedDeclarator | K::ReferenceDeclarator => {
                let mut cursor = node.walk();
                let inner = node
                    .named_children(&mut cursor)
                    .find(|c| self.g.kind(*c) != K::Other);
                inner
            }
            _ => node.child_by_field_id(self.g.f.declarator),
        }
    }

    fn is_name(&self, node: Node<'_>) -> bool {
        matches!(
            self.g.kind(node),
            K::Identifier
                | K::FieldIdentifier
                | K::TypeIdentifier
                | K::QualifiedIdentifier
                | K::DestructorName
                | K::OperatorName
                | K::TemplateFunction
        )
    }

    fn call(&self, w: &mut Walk<'_>, func: Node<'_>, at: Node<'_>) {
        let f = &self.g.f;
        match self.g.kind(func) {
            K::Identifier => {
                let callee = w.text(func);
                w.call(&callee, None, at);
            }
            K::FieldExpression => {
                let Some(field) = func.child_by_field_id(f.field) else {
                    return;
                };
                let receiver = func.child_by_field_id(f.argument).map(|a| {
                    self.receiver(w, a)
                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                });
                let (_, callee) = split_qualified(&w.text(field));
                w.call(&callee, receiver, at);
            }
            K::QualifiedIdentifier | K::TemplateFunction => {
                let (qualifier, callee) = split_qualified(&w.text(func));
                let receiver = (!qualifier.is_empty()).then(|| qualifier.replace('.', "::"));
                w.call(&callee, receiver, at);
            }
            _ => {}
        }
    }

    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier | K::This | K::QualifiedIdentifier | K::NamespaceIdentifier => {
                    return Some(w.text(node).into_owned())
                }
                K::FieldExpression => cur = cur.child_by_field_id(self.g.f.argument)?,
                _ => return None,
            }
        }
    }
}

/// `ns::A<T>::f` as qualifier `ns.A` and name `f`; template arguments and
/// whitespace dropped, `::` turned into `.`. Operator names (`A::operator<<`)
/// keep their symbols.
fn split_qualified(text: &str) -> (String, String) {
    let (scope, operator) = match text.find("operator") {
        Some(i) => (&text[..i], Some(&text[i..])),
        None => (text, None),
    };
    let mut plain = String::with_capacity(scope.len());
    let mut angle = 0usize;
    let mut spaced = false;
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for c in scope.chars() {
        match c {
            '<' => angle += 1,
            '>' if angle > 0 => angle -= 1,
            _ if angle > 0 => {}
            _ if c.is_whitespace() => spaced = true,
            _ => {
                // A word after a word is a new name: what came before was
                // a macro the grammar took into the declarator
                // (`size_t SPDLOG_INLINE thread_pool::queue_size()`).
                if spaced && word(c) && plain.ends_with(word) {
                    plain.clear();
                }
                spaced = false;
                plain.push(c);
            }
        }
    }
    if let Some(op) = operator {
        // Spaces go, but one between two words stays: `operator ==` is
        // `operator==`, `operator unsigned int` keeps its words apart.
        let mut spelled = String::with_capacity(op.len());
        let mut gap = false;
        for c in op.chars() {
            if c.is_whitespace() {
                gap = true;
                continue;
            }
            if gap && word(c) && spelled.ends_with(word) {
                spelled.push(' ');
            }
            gap = false;
            spelled.push(c);
        }
        let op = spelled;
        let qualifier = plain.trim_end_matches("::").trim_start_matches("::");
        return (qualifier.replace("::", "."), op);
    }
    match plain.rsplit_once("::") {
        Some((q, n)) => (q.trim_start_matches("::").replace("::", "."), n.to_string()),
        None => (String::new(), plain),
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const CONFIG_C: &str = r##"#include <stdio.h>
#include <stdlib.h>
#include "config.h"

/* Maximum line length. */
#define MAX_LINE 256
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* A key/value pair. */
struct entry {
    char *key;
    char *value;
    struct entry *next;
};

typedef struct {
    struct entry *head;
    size_t count;
} config_t;

union value {
    int i;
    double d;
};

enum format { FORMAT_INI, FORMAT_ENV };

typedef int (*parse_fn)(const char *line, struct entry *out);

// Parses one line into an entry.
static int parse_line(const char *line, struct entry *out) {
    char buf[MAX_LINE];
    strncpy(buf, line, MIN(strlen(line), MAX_LINE - 1));
    out->key = strdup(buf);
    return 0;
}

config_t *config_load(const char *path);

config_t *config_load(const char *path) {
    FILE *fp = fopen(path, "r");
    config_t *cfg = calloc(1, sizeof(config_t));
    cfg->head->next = NULL;
    fclose(fp);
    return cfg;
}
"##;

    #[test]
    fn c_config_symbols() {
        let f = extract_clean(Language::C, CONFIG_C);
        let want = [
            ("MAX_LINE", S::Macro),
            ("MIN", S::Macro),
            ("entry", S::Struct),
            ("entry.key", S::Field),
            ("entry.value", S::Field),
            ("entry.next", S::Field),
            ("config_t", S::Struct),
            ("config_t.head", S::Field),
            ("config_t.count", S::Field),
            ("value", S::Union),
            ("value.i", S::Field),
            ("value.d", S::Field),
            ("format", S::Enum),
            ("format.FORMAT_INI", S::EnumMember),
            ("format.FORMAT_ENV", S::EnumMember),
            ("parse_fn", S::TypeAlias),
            ("parse_line", S::Function),
            ("config_load", S::Function),
            ("config_load", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "parse_line"), (31, 36));
        assert_eq!(lines(&f, "MAX_LINE"), (6, 6));
        assert_eq!(lines(&f, "config_t"), (16, 19));
        let parse = sym(&f, "parse_line");
        assert_eq!(
            parse.signature,
            "static int parse_line(const char *line, struct entry *out)"
        );
        assert_eq!(parse.doc, "Parses one line into an entry.");
        assert_span_text(CONFIG_C, parse, "static int", "return 0;\n}");
        assert_eq!(sym(&f, "MAX_LINE").doc, "Maximum line length.");
        assert_eq!(sym(&f, "MAX_LINE").signature, "#define MAX_LINE 256");
        assert_eq!(sym(&f, "MIN").doc, "");
        assert_eq!(sym(&f, "entry").doc, "A key/value pair.");
        assert_eq!(parent_of(&f, "config_t.count"), "config_t");
    }

    #[test]
    fn c_config_references() {
        let f = extract_clean(Language::C, CONFIG_C);
        assert_eq!(
            imports(&f),
            ["stdio.h @1", "stdlib.h @2", "config.h (rel) @3",]
        );
        assert_eq!(
            calls(&f),
            [
                "parse_line -> strncpy @33",
                "parse_line -> MIN @33",
                "parse_line -> strlen @33",
                "parse_line -> strdup @34",
                "config_load -> fopen @41",
                "config_load -> calloc @42",
                "config_load -> fclose @44",
            ]
        );
        assert!(inherits(&f).is_empty());

        assert!(f
            .imports
            .iter()
            .filter(|i| i.is_relative)
            .all(|i| i.module == "config.h"));
    }

    #[test]
    fn functions_defined_through_macros_are_functions() {
        // Unity's fixtures and a calling-convention macro (cJSON's tests):
        // the grammar reads each as something else, with errors.
        let src = "static int data = -1;\n\nTEST_GROUP(mygroup);\n\nTEST_SETUP(mygroup)\n{\n    data = 0;\n}\n\nTEST(mygroup, test1)\n{\n    check(0, data);\n}\n\nint CJSON_CDECL main(void)\n{\n    return run();\n}\n";
        let f = crate::extract(Language::C, src.as_bytes());
        let got: Vec<(&str, S, u32, u32, &str)> = f
            .symbols
            .iter()
            .filter(|s| s.kind == S::Function)
            .map(|s| {
                (
                    s.qualified_name.as_str(),
                    s.kind,
                    s.span.start_line,
                    s.span.end_line,
                    s.signature.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("TEST_SETUP", S::Function, 5, 8, "TEST_SETUP(mygroup)"),
                ("TEST", S::Function, 10, 13, "TEST(mygroup, test1)"),
                ("main", S::Function, 15, 18, "main(void)"),
            ]
        );
        // The body's calls belong to the function.
        assert!(
            calls(&f).contains(&"TEST -> check @12".to_string()),
            "{:?}",
            calls(&f)
        );
        assert!(
            calls(&f).contains(&"main -> run @17".to_string()),
            "{:?}",
            calls(&f)
        );
        // A block inside a function is no definition.
        let f = extract_clean(
            Language::C,
            "void f(void)\n{\n    g(1);\n    {\n        h();\n    }\n}\n",
        );
        assert_eq!(outline(&f), [("f".to_string(), S::Function)]);
    }
}

#[cfg(test)]
mod header_tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const CONFIG_HPP: &str = r##"#pragma once
#include <string>
#include "base/loader.h"

#define CONFIG_VERSION 2

namespace app {
namespace config {

// Loads configuration files.
// Thread-safe.
class ConfigLoader : public BaseLoader, private util::NonCopyable {
public:
    explicit ConfigLoader(const std::string& root);
    ~ConfigLoader() override;

    /* Loads one file. */
    Config load(const std::string& name) const;

private:
    std::string root_;
    int hits_ = 0;
};

struct Entry {
    std::string key;
    std::string value;
};

Config ConfigLoader::load(const std::string& name) const {
    auto path = util::join(root_, name);
    auto* parser = new Parser(path);
    parser->run();
    return Config::from(parser->result());
}

ConfigLoader::ConfigLoader(const std::string& root) : root_(root) {
    init();
}

}  // namespace config
}  // namespace app

using LoaderPtr = std::unique_ptr<app::config::ConfigLoader>;
"##;

    #[test]
    fn cpp_header_symbols() {
        let f = extract_clean(Language::Cpp, CONFIG_HPP);
        let want = [
            ("CONFIG_VERSION", S::Macro),
            ("app", S::Namespace),
            ("app.config", S::Namespace),
            ("app.config.ConfigLoader", S::Class),
            ("app.config.ConfigLoader.ConfigLoader", S::Constructor),
            ("app.config.ConfigLoader.~ConfigLoader", S::Method),
            ("app.config.ConfigLoader.load", S::Method),
            ("app.config.ConfigLoader.root_", S::Field),
            ("app.config.ConfigLoader.hits_", S::Field),
            ("app.config.Entry", S::Struct),
            ("app.config.Entry.key", S::Field),
            ("app.config.Entry.value", S::Field),
            ("app.config.ConfigLoader.load", S::Method),
            ("app.config.ConfigLoader.ConfigLoader", S::Constructor),
            ("LoaderPtr", S::TypeAlias),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "app.config.ConfigLoader"), (12, 23));
        let class = sym(&f, "app.config.ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.\nThread-safe.");
        assert_eq!(
            class.signature,
            "class ConfigLoader : public BaseLoader, private util::NonCopyable"
        );
        let loads: Vec<_> = f
            .symbols
            .iter()
            .filter(|s| s.qualified_name == "app.config.ConfigLoader.load")
            .collect();
        assert_eq!(loads.len(), 2);
        assert_eq!(
            (loads[0].doc.as_str(), loads[0].span.start_line),
            ("Loads one file.", 18)
        );
        // The out-of-line definition: named `load`, qualified through its class, parented by the namespace.
        assert_eq!(
            (
                loads[1].name.as_str(),
                loads[1].span.start_line,
                loads[1].span.end_line
            ),
            ("load", 30, 35)
        );
        assert_eq!(qname(&f, loads[1].parent), "app.config");
        assert_eq!(
            loads[1].signature,
            "Config ConfigLoader::load(const std::string& name) const"
        );
    }

    #[test]
    fn cpp_header_references() {
        let f = extract_clean(Language::Cpp, CONFIG_HPP);
        assert_eq!(imports(&f), ["string @2", "base/loader.h (rel) @3",]);
        assert_eq!(
            calls(&f),
            [
                "app.config.ConfigLoader.load -> util.join @31",
                "app.config.ConfigLoader.load -> Parser @32",
                "app.config.ConfigLoader.load -> parser.run @33",
                "app.config.ConfigLoader.load -> Config.from @34",
                "app.config.ConfigLoader.load -> parser.result @34",
                "app.config.ConfigLoader.ConfigLoader -> init @38",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "app.config.ConfigLoader : BaseLoader @12",
                "app.config.ConfigLoader : NonCopyable @12",
            ]
        );
    }
}

#[cfg(test)]
mod split_tests {
    use super::split_qualified;

    #[test]
    fn qualified_names_split_into_qualifier_and_name() {
        let s = |t: &str| split_qualified(t);
        assert_eq!(s("ns::A<T>::f"), ("ns.A".to_string(), "f".to_string()));
        assert_eq!(s("~Loader"), (String::new(), "~Loader".to_string()));
        assert_eq!(
            s("A::operator<<"),
            ("A".to_string(), "operator<<".to_string())
        );
        assert_eq!(s("make<int>"), (String::new(), "make".to_string()));
        // A macro the grammar read into the declarator is not the scope.
        assert_eq!(
            s("SPDLOG_INLINE thread_pool::queue_size"),
            ("thread_pool".to_string(), "queue_size".to_string())
        );
        assert_eq!(s("ns :: A :: f"), ("ns.A".to_string(), "f".to_string()));
    }
}

#[cfg(test)]
mod friend_tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    #[test]
    fn a_friend_defined_in_its_class_is_a_function_there() {
        // The hidden-friend idiom, and Qt's `Q_OBJECT` (a macro with no `;`)
        // before it (hiredis' adapters/qt.h).
        let src = "class Adapter : public QObject {\n\n    Q_OBJECT\n\n    friend\n    void AddRead(void * adapter) {\n        static_cast<Adapter *>(adapter)->addRead();\n    }\n\n    friend bool operator==(const Adapter&, const Adapter&) { return true; }\n    friend class Other;\n    friend void declared(Adapter&);\n\npublic:\n    void addRead() {}\n};\n";
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let got: Vec<(String, S)> = outline(&f);
        assert!(
            got.contains(&("Adapter.AddRead".to_string(), S::Method)),
            "{got:?}"
        );
        assert!(
            got.contains(&("Adapter.operator==".to_string(), S::Method)),
            "{got:?}"
        );
        assert!(
            got.contains(&("Adapter.addRead".to_string(), S::Method)),
            "{got:?}"
        );
        assert!(
            !got.iter()
                .any(|(n, _)| n.ends_with("declared") || n.ends_with("Other")),
            "{got:?}"
        );
        // The definition's lines, as ctags gives them (from its return type).
        assert_eq!(lines(&f, "Adapter.AddRead"), (6, 8));
    }

    #[test]
    fn a_definition_starts_past_the_statements_error_recovery_swept_into_it() {
        // fmt's format.h: an export macro with no `;` makes the grammar read
        // the `extern template` lines and the function after them as one
        // definition's head, so `write2digits` started at the second
        // `extern template` line, with it as its signature.
        let src = "#ifndef FMT_HEADER_ONLY\nFMT_BEGIN_EXPORT\n\
extern template FMT_API auto thousands_sep_impl<char>(locale_ref)\n    -> thousands_sep_result<char>;\n\
extern template FMT_API auto decimal_point_impl(locale_ref) -> char;\nFMT_END_EXPORT\n#endif  // FMT_HEADER_ONLY\n\n\
template <typename Char> auto equal2(const Char* lhs, const char* rhs) -> bool {\n  return lhs[0] == Char(rhs[0]);\n}\n\n\
// Writes a two-digit value to out.\ntemplate <typename Char>\n\
FMT_CONSTEXPR20 FMT_INLINE void write2digits(Char* out, size_t value) {\n  *out = static_cast<Char>('0' + value % 10);\n}\n";
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let w = sym(&f, "write2digits");
        assert_eq!((w.span.start_line, w.span.end_line), (15, 17), "{w:?}");
        assert_eq!(w.span.start_col, 1);
        assert_eq!(
            w.signature,
            "FMT_CONSTEXPR20 FMT_INLINE void write2digits(Char* out, size_t value)"
        );
        assert_eq!(w.doc, "Writes a two-digit value to out.");
        let start = w.span.start_byte as usize;
        assert!(src[start..].starts_with("FMT_CONSTEXPR20 FMT_INLINE"));

        // A definition the grammar read whole keeps its head (from the
        // function, as the grammar starts a template's).
        let clean =
            "template <typename T>\n[[nodiscard]] inline auto twice(T x) -> T { return x + x; }\n";
        let f = crate::extract(Language::Cpp, clean.as_bytes());
        assert_eq!(lines(&f, "twice"), (2, 2));
        assert_eq!(
            sym(&f, "twice").signature,
            "[[nodiscard]] inline auto twice(T x) -> T"
        );
    }

    #[test]
    fn conversion_operators_macro_destructors_and_constructors_are_named() {
        // Each from fmt and spdlog, as an outline comparison with ctags
        // found them: conversion operators were never extracted, a macro
        // before `~Buf()` made a constructor `Buf`, one before an
        // out-of-class constructor named it after its first initializer or
        // lost it, and one before `explicit` made a field `explicit`.
        let src = "namespace ns {\nclass Buf {\n public:\n  explicit operator bool() const { return true; }\n  operator int() const { return 1; }\n  template <typename T> operator T*() const { return nullptr; }\n  CONSTEXPR20 ~Buf() { clear(); }\n  CONSTEXPR explicit Buf(int a) : a_(a) {}\n  int a_;\n};\n}\nFoo::operator bool() const { return ok_; }\nINLINE pool::pool(int a, int b) : q_(a) {}\nINLINE pool::pool(int a) : pool(a, 1) {}\n";
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let got: Vec<(String, S)> = outline(&f);
        for (name, kind) in [
            ("ns.Buf.operator bool", S::Method),
            ("ns.Buf.operator int", S::Method),
            ("ns.Buf.operator T*", S::Method),
            ("ns.Buf.~Buf", S::Method),
            ("ns.Buf.Buf", S::Constructor),
            ("ns.Buf.a_", S::Field),
            ("Foo.operator bool", S::Method),
            ("pool.pool", S::Constructor),
        ] {
            assert!(got.contains(&(name.to_string(), kind)), "{name}: {got:?}");
        }
        let ctors: Vec<_> = f
            .symbols
            .iter()
            .filter(|s| s.qualified_name == "pool.pool")
            .collect();
        assert_eq!(ctors.len(), 2, "{got:?}");
        assert_eq!((ctors[1].span.start_line, ctors[1].span.end_line), (14, 14));
        for wrong in ["q_", "explicit", "ns.Buf.explicit"] {
            assert!(
                !got.iter()
                    .any(|(n, _)| n == wrong || n.ends_with(&format!(".{wrong}"))),
                "{wrong}: {got:?}"
            );
        }
        assert_eq!(lines(&f, "ns.Buf.~Buf"), (7, 7));
    }
}
