//! JavaScript (with JSX), TypeScript and TSX: one set of rules over three
//! grammars that share their node names.
//!
//! Symbols: classes, methods, constructors, fields, functions, functions and
//! arrow functions assigned to a variable (`const f = () => {}` is a Function
//! named `f`), object-literal members holding functions (Methods named by
//! their key), a module-level object holding functions (a Variable, their
//! container), named function expressions nothing else names, interfaces
//! with their members, type aliases, enums with their members, namespaces.
//! Imports: `import`, `export ... from`, `require('x')` and `import('x')`;
//! a default or namespace import becomes the alias, each renamed specifier
//! (`{a as b}`) its own import with the alias `b`. Calls: call and `new`
//! expressions. Inheritance: `extends` and `implements`.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AbstractClassDeclaration = "abstract_class_declaration",
        AbstractMethodSignature = "abstract_method_signature",
        ArrowFunction = "arrow_function",
        AssignmentExpression = "assignment_expression",
        ClassDeclaration = "class_declaration",
        ClassHeritage = "class_heritage",
        CallExpression = "call_expression",
        Comment = "comment",
        EnumAssignment = "enum_assignment",
        EnumDeclaration = "enum_declaration",
        ExportClause = "export_clause",
        ExportSpecifier = "export_specifier",
        ExportStatement = "export_statement",
        ExtendsClause = "extends_clause",
        ExtendsTypeClause = "extends_type_clause",
        FieldDefinition = "field_definition",
        FunctionDeclaration = "function_declaration",
        FunctionExpression = "function_expression",
        FunctionSignature = "function_signature",
        GeneratorFunction = "generator_function",
        GeneratorFunctionDeclaration = "generator_function_declaration",
        GenericType = "generic_type",
        Identifier = "identifier",
        ImplementsClause = "implements_clause",
        Import = "import",
        ImportClause = "import_clause",
        ImportRequireClause = "import_require_clause",
        ImportSpecifier = "import_specifier",
        ImportStatement = "import_statement",
        InterfaceDeclaration = "interface_declaration",
        InternalModule = "internal_module",
        LexicalDeclaration = "lexical_declaration",
        MemberExpression = "member_expression",
        MethodDefinition = "method_definition",
        MethodSignature = "method_signature",
        Module = "module",
        NamedImports = "named_imports",
        NamespaceExport = "namespace_export",
        NamespaceImport = "namespace_import",
        NestedIdentifier = "nested_identifier",
        NestedTypeIdentifier = "nested_type_identifier",
        NewExpression = "new_expression",
        Object = "object",
        Pair = "pair",
        PropertyIdentifier = "property_identifier",
        PropertySignature = "property_signature",
        PublicFieldDefinition = "public_field_definition",
        String = "string",
        Super = "super",
        This = "this",
        TypeAliasDeclaration = "type_alias_declaration",
        TypeIdentifier = "type_identifier",
        VariableDeclaration = "variable_declaration",
        VariableDeclarator = "variable_declarator",
    }
    skip ["type_annotation", "type_arguments", "type_parameters", "predefined_type", "regex", "number", "literal_type", "union_type", "object_type"]
}

static JAVASCRIPT: OnceLock<Grammar<K>> = OnceLock::new();
static TYPESCRIPT: OnceLock<Grammar<K>> = OnceLock::new();
static TSX: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed JavaScript, TypeScript or TSX file.
pub(crate) fn extract(lang: Language, tree: &Tree, src: &[u8]) -> FileFacts {
    let cell = match lang {
        Language::TypeScript => &TYPESCRIPT,
        Language::Tsx => &TSX,
        _ => &JAVASCRIPT,
    };
    let mut rules = Script {
        g: Grammar::get(cell, lang),
    };
    walker::walk(lang, tree, src, &mut rules).into_facts()
}

struct Script {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Script {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        let kind = self.g.kind(node);
        match kind {
            K::Comment => {
                w.comment(node);
                false
            }
            K::ClassDeclaration | K::AbstractClassDeclaration => {
                let Some(sym) = self.named_symbol(w, node, SymbolKind::Class) else {
                    return true;
                };
                let mut cursor = node.walk();
                for heritage in node.named_children(&mut cursor) {
                    if self.g.kind(heritage) == K::ClassHeritage {
                        self.heritage(w, sym, heritage);
                    }
                }
                true
            }
            K::InterfaceDeclaration => {
                let Some(sym) = self.named_symbol(w, node, SymbolKind::Interface) else {
                    return true;
                };
                let mut cursor = node.walk();
                for clause in node.named_children(&mut cursor) {
                    if self.g.kind(clause) == K::ExtendsTypeClause {
                        self.bases(w, sym, clause);
                    }
                }
                true
            }
            K::FunctionDeclaration | K::GeneratorFunctionDeclaration | K::FunctionSignature => {
                let sym = self.named_symbol(w, node, SymbolKind::Function);
                // An overload signature, or an ambient one: its body is
                // the definition after it, or elsewhere.
                if let (Some(i), K::FunctionSignature) = (sym, self.g.kind(node)) {
                    w.mark_declaration(i);
                }
                true
            }
            K::MethodDefinition | K::MethodSignature | K::AbstractMethodSignature => {
                let is_ctor = node
                    .child_by_field_id(f.name)
                    .is_some_and(|n| w.bytes(n) == b"constructor");
                let kind = if is_ctor {
                    SymbolKind::Constructor
                } else {
                    SymbolKind::Method
                };
                let sym = self.named_symbol(w, node, kind);
                // A signature in a class body is an overload of the
                // method defined after it (an interface's stays a method).
                let in_class = node.parent().is_some_and(|p| p.kind() == "class_body");
                if let (Some(i), K::MethodSignature, true) = (sym, self.g.kind(node), in_class) {
                    w.mark_declaration(i);
                }
                true
            }
            K::PublicFieldDefinition | K::FieldDefinition | K::PropertySignature => {
                // Class fields holding a function are how many codebases write methods.
                let is_fn = node
                    .child_by_field_id(f.value)
                    .is_some_and(|v| self.is_function(v));
                let kind = if is_fn {
                    SymbolKind::Method
                } else {
                    SymbolKind::Field
                };
                let name = node
                    .child_by_field_id(f.name)
                    .or_else(|| node.child_by_field_id(f.property));
                if let Some(name) = name {
                    let body = node
                        .child_by_field_id(f.value)
                        .and_then(|v| v.child_by_field_id(f.body));
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let name = w.text(name);
                    w.symbol(&name, kind, node, body, doc, None, true);
                }
                true
            }
            K::TypeAliasDeclaration => {
                self.named_symbol(w, node, SymbolKind::TypeAlias);
                true
            }
            K::EnumDeclaration => {
                let Some(sym) = self.named_symbol(w, node, SymbolKind::Enum) else {
                    return true;
                };
                if let Some(body) = node.child_by_field_id(f.body) {
                    self.enum_members(w, sym, body);
                }
                false
            }
            K::InternalModule | K::Module => {
                // `declare module "x"` names a module by string; keep the text without quotes.
                if let Some(name) = node.child_by_field_id(f.name) {
                    let body = node.child_by_field_id(f.body);
                    let doc = w.doc_comment(node, DocStyle::JsDoc);
                    let text = w.text(name);
                    let name = text.trim_matches(['"', '\'']);
                    w.symbol(name, SymbolKind::Namespace, node, body, doc, None, true);
                }
                true
            }
            K::LexicalDeclaration | K::VariableDeclaration => {
                self.function_variables(w, node);
                true
            }
            K::AssignmentExpression => {
                self.assigned_function(w, node);
                true
            }
            K::Pair => {
                self.pair_function(w, node);
                true
            }
            K::FunctionExpression | K::GeneratorFunction => {
                // A named function expression no variable, member or key
                // names (`return function generateETag() {}`, a named
                // callback): a Function by its own name.
                let named_by_parent = w.parent().is_some_and(|p| match self.g.kind(p) {
                    K::VariableDeclarator | K::Pair => true,
                    K::AssignmentExpression => self.assignment_target(w, p).is_some(),
                    _ => false,
                });
                if !named_by_parent {
                    self.named_symbol(w, node, SymbolKind::Function);
                }
                true
            }
            K::ImportStatement => {
                self.import(w, node);
                false
            }
            K::ExportStatement => {
                if node.child_by_field_id(f.source).is_some() {
                    self.reexport(w, node);
                    return false;
                }
                true
            }
            K::CallExpression => {
                self.call(w, node);
                true
            }
            K::NewExpression => {
                if let Some(ctor) = node.child_by_field_id(f.constructor) {
                    self.call_target(w, ctor, node);
                }
                true
            }
            K::Skip | K::String => false,
            _ => true,
        }
    }
}

impl Script {
    /// A symbol named by the node's `name` field, documented by the JSDoc
    /// above it, opening a scope; `None` if the name is missing (broken code).
    fn named_symbol(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let body = node.child_by_field_id(self.g.f.body);
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let name = w.text(name);
        Some(w.symbol(&name, kind, node, body, doc, None, true))
    }

    fn is_function(&self, node: Node<'_>) -> bool {
        matches!(
            self.g.kind(node),
            K::ArrowFunction | K::FunctionExpression | K::GeneratorFunction
        )
    }

    /// `const f = () => {}` and `let g = function () {}`: Functions named
    /// after the variable. With one declarator the span is the whole
    /// declaration (`const` included).
    fn function_variables(&self, w: &mut Walk<'_>, decl: Node<'_>) {
        let f = &self.g.f;
        let count = decl.named_child_count();
        for i in 0..count {
            let Some(d) = decl.named_child(i as u32) else {
                continue;
            };
            if self.g.kind(d) != K::VariableDeclarator {
                continue;
            }
            let (Some(value), Some(name)) = (
                d.child_by_field_id(f.value),
                d.child_by_field_id(f.name)
                    .filter(|n| self.g.kind(*n) == K::Identifier),
            ) else {
                continue;
            };
            let (kind, body) = if self.is_function(value) {
                (SymbolKind::Function, value.child_by_field_id(f.body))
            } else if self.g.kind(value) == K::Object
                && w.container().is_none()
                && self.holds_function(value)
            {
                // `var User = { index: function () {} }` at module level: a
                // namespace of functions; its members are `User.index`.
                (SymbolKind::Variable, Some(value))
            } else {
                continue;
            };
            // Only a declaration of one name spans the declaration and opens
            // a scope its members are found in.
            let single = count == 1;
            let span = if single { decl } else { d };
            let doc = if single {
                w.doc_comment(decl, DocStyle::JsDoc)
            } else {
                String::new()
            };
            let name = w.text(name);
            w.symbol(&name, kind, span, body, doc, None, single);
        }
    }

    /// Whether an object literal has a member holding a function.
    fn holds_function(&self, object: Node<'_>) -> bool {
        let mut cursor = object.walk();
        let found = object
            .named_children(&mut cursor)
            .any(|m| match self.g.kind(m) {
                K::Pair => m
                    .child_by_field_id(self.g.f.value)
                    .is_some_and(|v| self.is_function(v)),
                K::MethodDefinition => true,
                _ => false,
            });
        found
    }

    /// An object literal's member holding a function (`index: function
    /// (req, res) {}`, `'get': () => {}`): a Method named by its key.
    fn pair_function(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let (Some(key), Some(value)) = (
            node.child_by_field_id(f.key),
            node.child_by_field_id(f.value),
        ) else {
            return;
        };
        if !self.is_function(value)
            || !matches!(self.g.kind(key), K::PropertyIdentifier | K::String)
        {
            return;
        }
        let text = w.text(key);
        let name = text.trim_matches(['"', '\'']);
        if name.is_empty() {
            return;
        }
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = value.child_by_field_id(f.body);
        w.symbol(name, SymbolKind::Method, node, body, doc, None, true);
    }

    /// CommonJS and prototype definitions: `exports.f = function () {}`
    /// and `module.exports.f = …` are Functions `f`; `A.prototype.m =
    /// function () {}` is the Method `A.m`, and `A.s = () => {}` the
    /// Function `A.s`. Assignments to `this` or to computed members are
    /// not definitions of a name.
    fn assigned_function(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(right) = node.child_by_field_id(f.right) else {
            return;
        };
        let Some((kind, qualifier, prop)) = self.assignment_target(w, node) else {
            return;
        };
        // The statement is what a JSDoc comment sits above.
        let stmt = node
            .parent()
            .filter(|p| p.kind() == "expression_statement")
            .unwrap_or(node);
        let doc = w.doc_comment(stmt, DocStyle::JsDoc);
        let body = right.child_by_field_id(f.body);
        let name = w.text(prop);
        w.symbol(&name, kind, stmt, body, doc, qualifier.as_deref(), true);
    }

    /// What an assignment of a function defines, if it names one: a
    /// member of `exports`, of a prototype or of a plain object path
    /// (`Router.prototype.use = function ..`). A member of `this` or of an
    /// expression (`this.skip = function asyncSkip ..`) names nothing the
    /// code can be found by; a named function expression there is found by
    /// its own name.
    fn assignment_target<'t>(
        &self,
        w: &Walk<'_>,
        node: Node<'t>,
    ) -> Option<(SymbolKind, Option<String>, Node<'t>)> {
        let f = &self.g.f;
        let (left, right) = (
            node.child_by_field_id(f.left)?,
            node.child_by_field_id(f.right)?,
        );
        if !self.is_function(right) || self.g.kind(left) != K::MemberExpression {
            return None;
        }
        let (prop, object) = (
            left.child_by_field_id(f.property)?,
            left.child_by_field_id(f.object)?,
        );
        if self.g.kind(prop) != K::PropertyIdentifier {
            return None;
        }
        let object = w.text(object);
        let plain = |o: &str| {
            !o.is_empty()
                && o.split('.').all(|part| {
                    part.chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                        && part
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                })
        };
        let (kind, qualifier) = match &*object {
            "exports" | "module.exports" => (SymbolKind::Function, None),
            o if o.starts_with("this") || !plain(o) => return None,
            o => match o.strip_suffix(".prototype") {
                Some(class) => (SymbolKind::Method, Some(class.to_string())),
                None => (SymbolKind::Function, Some(o.to_string())),
            },
        };
        Some((kind, qualifier, prop))
    }

    fn heritage(&self, w: &mut Walk<'_>, sym: usize, heritage: Node<'_>) {
        let mut cursor = heritage.walk();
        for clause in heritage.named_children(&mut cursor) {
            match self.g.kind(clause) {
                K::ExtendsClause | K::ImplementsClause => self.bases(w, sym, clause),
                _ => self.base(w, sym, clause),
            }
        }
    }

    fn bases(&self, w: &mut Walk<'_>, sym: usize, clause: Node<'_>) {
        let mut cursor = clause.walk();
        for base in clause.named_children(&mut cursor) {
            self.base(w, sym, base);
        }
    }

    fn base(&self, w: &mut Walk<'_>, sym: usize, base: Node<'_>) {
        if matches!(
            self.g.kind(base),
            K::Identifier
                | K::MemberExpression
                | K::TypeIdentifier
                | K::NestedTypeIdentifier
                | K::NestedIdentifier
                | K::GenericType
        ) {
            w.inherit(sym, base);
        }
    }

    fn enum_members(&self, w: &mut Walk<'_>, _enum: usize, body: Node<'_>) {
        let mut cursor = body.walk();
        for member in body.named_children(&mut cursor) {
            let name = match self.g.kind(member) {
                K::PropertyIdentifier | K::String => member,
                K::EnumAssignment => match member.child_by_field_id(self.g.f.name) {
                    Some(n) => n,
                    None => continue,
                },
                _ => continue,
            };
            let text = w.text(name);
            let name = text.trim_matches(['"', '\'']);
            w.symbol(
                name,
                SymbolKind::EnumMember,
                member,
                None,
                String::new(),
                None,
                false,
            );
        }
    }

    fn call(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let Some(func) = node.child_by_field_id(self.g.f.function) else {
            return;
        };
        match self.g.kind(func) {
            K::Import => {
                if let Some(module) = self.first_string_argument(w, node) {
                    self.add_import(w, module, Vec::new(), None, node);
                }
            }
            K::Identifier if w.bytes(func) == b"require" => {
                if let Some(module) = self.first_string_argument(w, node) {
                    // `const x = require('m')`: the variable is the module's alias.
                    let alias = w
                        .parent()
                        .filter(|p| self.g.kind(*p) == K::VariableDeclarator)
                        .and_then(|p| p.child_by_field_id(self.g.f.name))
                        .filter(|n| self.g.kind(*n) == K::Identifier)
                        .map(|n| w.text(n).into_owned());
                    self.add_import(w, module, Vec::new(), alias, node);
                } else {
                    w.call("require", None, node);
                }
            }
            _ => self.call_target(w, func, node),
        }
    }

    /// Records a call of `target` (`f`, `a.b.f`, `new Foo`).
    fn call_target(&self, w: &mut Walk<'_>, target: Node<'_>, call: Node<'_>) {
        let f = &self.g.f;
        match self.g.kind(target) {
            K::Identifier => {
                let callee = w.text(target);
                if !w.calls_a_local(&crate::locals::JAVASCRIPT, call, &callee) {
                    w.call(&callee, None, call);
                }
            }
            K::MemberExpression => {
                let Some(prop) = target.child_by_field_id(f.property) else {
                    return;
                };
                let receiver = target.child_by_field_id(f.object).map(|o| {
                    self.receiver(w, o)
                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                });
                let callee = w.text(prop);
                w.call(&callee, receiver, call);
            }
            _ => {}
        }
    }

    /// The text of a simple receiver: identifiers, `this`, `super` and
    /// property accesses on them.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                // Inside a plain `function` (a callback), `this` is that
                // function's own, not the class's instance: unknown.
                K::This if this_is_rebound(cur) => return None,
                K::Identifier | K::This | K::Super => return Some(w.text(node).into_owned()),
                K::MemberExpression => cur = cur.child_by_field_id(self.g.f.object)?,
                _ => return None,
            }
        }
    }

    fn first_string_argument(&self, w: &Walk<'_>, call: Node<'_>) -> Option<String> {
        let args = call.child_by_field_id(self.g.f.arguments)?;
        let first = args.named_child(0)?;
        (self.g.kind(first) == K::String).then(|| self.string_value(w, first))
    }

    fn string_value(&self, w: &Walk<'_>, string: Node<'_>) -> String {
        w.text(string).trim_matches(['"', '\'', '`']).to_string()
    }

    fn add_import(
        &self,
        w: &mut Walk<'_>,
        module: String,
        names: Vec<String>,
        alias: Option<String>,
        at: Node<'_>,
    ) {
        let is_relative = module.starts_with('.') || module.starts_with('/');
        w.import(module, names, alias, is_relative, at);
    }

    fn import(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let mut cursor = node.walk();
        let source = node.child_by_field_id(f.source);
        let Some(module) = source.map(|s| self.string_value(w, s)) else {
            // `import x = require("y")` (TypeScript).
            for child in node.named_children(&mut cursor) {
                if self.g.kind(child) == K::ImportRequireClause {
                    let alias = child.named_child(0).map(|a| w.text(a).into_owned());
                    if let Some(s) = child.child_by_field_id(f.source) {
                        let module = self.string_value(w, s);
                        self.add_import(w, module, Vec::new(), alias, node);
                    }
                }
            }
            return;
        };
        let mut names = Vec::new();
        let mut any = false;
        let clause = node
            .named_children(&mut cursor)
            .find(|c| self.g.kind(*c) == K::ImportClause);
        if let Some(clause) = clause {
            let mut cursor = clause.walk();
            for part in clause.named_children(&mut cursor) {
                match self.g.kind(part) {
                    K::Identifier => {
                        any = true;
                        let alias = Some(w.text(part).into_owned());
                        self.add_import(w, module.clone(), Vec::new(), alias, node);
                    }
                    K::NamespaceImport => {
                        any = true;
                        let alias = part.named_child(0).map(|a| w.text(a).into_owned());
                        self.add_import(w, module.clone(), Vec::new(), alias, node);
                    }
                    K::NamedImports => {
                        let mut cursor = part.walk();
                        for spec in part.named_children(&mut cursor) {
                            if self.g.kind(spec) != K::ImportSpecifier {
                                continue;
                            }
                            let Some(name) = spec.child_by_field_id(f.name) else {
                                continue;
                            };
                            let name = w.text(name).into_owned();
                            match spec.child_by_field_id(f.alias) {
                                Some(alias) => {
                                    any = true;
                                    let alias = Some(w.text(alias).into_owned());
                                    self.add_import(w, module.clone(), vec![name], alias, node);
                                }
                                None => names.push(name),
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if !names.is_empty() || !any {
            self.add_import(w, module, names, None, node);
        }
    }

    /// `export { a } from './a'`, `export * from './b'`, `export * as ns from './c'`.
    fn reexport(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let Some(source) = node.child_by_field_id(f.source) else {
            return;
        };
        let module = self.string_value(w, source);
        let mut names = Vec::new();
        let mut alias = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match self.g.kind(child) {
                K::ExportClause => {
                    let mut cursor = child.walk();
                    for spec in child.named_children(&mut cursor) {
                        if self.g.kind(spec) == K::ExportSpecifier {
                            if let Some(n) = spec.child_by_field_id(f.name) {
                                names.push(w.text(n).into_owned());
                            }
                        }
                    }
                }
                K::NamespaceExport => alias = child.named_child(0).map(|a| w.text(a).into_owned()),
                _ => {}
            }
        }
        if names.is_empty() && alias.is_none() {
            names.push("*".to_string());
        }
        self.add_import(w, module, names, alias, node);
    }
}

/// Whether `this` at `node` is a plain function's own: the nearest
/// function around it (arrow functions take the `this` around them) is a
/// `function` expression or declaration, not a method or a class's body.
fn this_is_rebound(node: Node<'_>) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind() {
            "function_expression"
            | "function"
            | "function_declaration"
            | "generator_function"
            | "generator_function_declaration" => return true,
            "method_definition" | "class_body" | "class_declaration" | "class" => return false,
            _ => cur = n.parent(),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_TS: &str = r##"import fs from "fs";
import * as path from "path";
import { parse as parseJson, validate } from "./schema";
import type { Options } from "../types";
export { defaults } from "./defaults";
const yaml = require("js-yaml");

/** Settings shared by loaders. */
export interface Settings extends Base, Partial<Options> {
  root: string;
  load(name: string): Promise<Config>;
}

export type Format = "json" | "yaml";

export enum Mode {
  Strict,
  Lenient = 2,
}

/**
 * Loads configuration files.
 * @see Settings
 */
export class ConfigLoader extends BaseLoader implements Settings, io.Closer {
  private cache = new Map<string, Config>();

  constructor(public root: string) {
    super(root);
  }

  /** Loads one file. */
  async load(name: string): Promise<Config> {
    const file = path.join(this.root, name);
    const text = await fs.promises.readFile(file, "utf8");
    return this.parse(text);
  }

  private parse(text: string): Config {
    validate(text);
    return parseJson(text);
  }
}

// Not JSDoc, so not a doc.
export const createLoader = (root: string): ConfigLoader => new ConfigLoader(root);

function helper(x: number) {
  return Math.max(x, 0);
}
"##;

    #[test]
    fn typescript_loader_symbols() {
        let f = extract_clean(Language::TypeScript, LOADER_TS);
        let want = [
            ("Settings", S::Interface),
            ("Settings.root", S::Field),
            ("Settings.load", S::Method),
            ("Format", S::TypeAlias),
            ("Mode", S::Enum),
            ("Mode.Strict", S::EnumMember),
            ("Mode.Lenient", S::EnumMember),
            ("ConfigLoader", S::Class),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.constructor", S::Constructor),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.parse", S::Method),
            ("createLoader", S::Function),
            ("helper", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "ConfigLoader"), (25, 43));
        assert_eq!(lines(&f, "ConfigLoader.load"), (33, 37));
        assert_eq!(lines(&f, "createLoader"), (46, 46));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(
            class.signature,
            "class ConfigLoader extends BaseLoader implements Settings, io.Closer"
        );
        assert_eq!(class.doc, "Loads configuration files.\n@see Settings");
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(load.signature, "async load(name: string): Promise<Config>");
        assert_eq!(load.doc, "Loads one file.");
        assert_eq!(parent_of(&f, "ConfigLoader.load"), "ConfigLoader");
        assert_span_text(
            LOADER_TS,
            load,
            "async load(",
            "return this.parse(text);\n  }",
        );
        assert_eq!(sym(&f, "Settings").doc, "Settings shared by loaders.");
        // A `//` comment is not JSDoc; the arrow function spans its `export const`.
        let create = sym(&f, "createLoader");
        assert_eq!((create.doc.as_str(), create.span.start_col), ("", 8));
        assert_eq!(
            create.signature,
            "const createLoader = (root: string): ConfigLoader =>"
        );
        assert_eq!(sym(&f, "Mode.Lenient").signature, "Lenient = 2");
        assert_eq!(
            sym(&f, "ConfigLoader.constructor").signature,
            "constructor(public root: string)"
        );
    }

    #[test]
    fn typescript_loader_references() {
        let f = extract_clean(Language::TypeScript, LOADER_TS);
        assert_eq!(
            imports(&f),
            [
                "fs as fs @1",
                "path as path @2",
                "./schema [parse] as parseJson (rel) @3",
                "./schema [validate] (rel) @3",
                "../types [Options] (rel) @4",
                "./defaults [defaults] (rel) @5",
                "js-yaml as yaml @6",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.cache -> Map @26",
                "ConfigLoader.load -> path.join @34",
                "ConfigLoader.load -> fs.promises.readFile @35",
                "ConfigLoader.load -> this.parse @36",
                "ConfigLoader.parse -> validate @40",
                "ConfigLoader.parse -> parseJson @41",
                "createLoader -> ConfigLoader @46",
                "helper -> Math.max @49",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "Settings : Base @9",
                "Settings : Partial @9",
                "ConfigLoader : BaseLoader @25",
                "ConfigLoader : Settings @25",
                "ConfigLoader : Closer @25",
            ]
        );

        let yaml = f.imports.iter().find(|i| i.module == "js-yaml").unwrap();
        assert_eq!(
            (yaml.alias.as_deref(), yaml.is_relative),
            (Some("yaml"), false)
        );
        let readfile = f.calls.iter().find(|c| c.callee == "readFile").unwrap();
        assert_eq!((readfile.line, readfile.column), (35, 24));
    }

    #[test]
    fn object_literal_members_and_named_function_expressions() {
        let src = "var User = {\n  index: function (req, res) {\n    res.send(list());\n  },\n  'show': (req) => req.id,\n  count: 3,\n};\nfunction etag(options) {\n  return function generateETag(body) {\n    return hash(body);\n  };\n}\nconst f = function g() {};\napp.use(function logger(req) {});\n";
        let f = extract_clean(Language::JavaScript, src);
        assert_eq!(
            outline(&f),
            [
                ("User".to_string(), S::Variable),
                ("User.index".to_string(), S::Method),
                ("User.show".to_string(), S::Method),
                ("etag".to_string(), S::Function),
                ("etag.generateETag".to_string(), S::Function),
                ("f".to_string(), S::Function),
                ("logger".to_string(), S::Function),
            ]
        );
        // Calls inside are attributed to the member or expression.
        assert!(
            calls(&f)
                .iter()
                .any(|c| c.starts_with("User.index -> list")),
            "{:?}",
            calls(&f)
        );
        assert!(
            calls(&f)
                .iter()
                .any(|c| c.starts_with("etag.generateETag -> hash")),
            "{:?}",
            calls(&f)
        );
    }

    #[test]
    fn tsx_and_broken_typescript() {
        let tsx = "import React from 'react';\n/** Shows a name. */\nexport function Name({ n }: Props) {\n  return <b onClick={() => track(n)}>{fmt.upper(n)}</b>;\n}\n";
        let f = extract_clean(Language::Tsx, tsx);
        assert_eq!(outline(&f), [("Name".to_string(), S::Function)]);
        assert_eq!(sym(&f, "Name").doc, "Shows a name.");
        assert_eq!(calls(&f), ["Name -> track @4", "Name -> fmt.upper @4"]);

        let broken =
            "class A {\n  ok() { go(); }\n  bad() { let x = ; }\n}\nfunction after() { run(); }\n";
        let f = crate::extract(Language::TypeScript, broken.as_bytes());
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["A", "A.ok", "A.bad", "after"]);
        let d: Vec<_> = f
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(d, [(3, 17, "syntax error near `=`")]);
        assert_eq!(calls(&f), ["A.ok -> go @2", "after -> run @5"]);

        // Worse damage flattens the class into an ERROR node; the method inside is still found.
        let wrecked = "class A {\n  ok() { go(); }\n  bad( { \n}\n";
        let f = crate::extract(Language::TypeScript, wrecked.as_bytes());
        assert!(
            outline(&f).contains(&("ok".to_string(), S::Method)),
            "{:?}",
            outline(&f)
        );
        assert_eq!(f.diagnostics.first().map(|d| d.line), Some(1));
    }
}

#[cfg(test)]
mod jsx_tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const APP_JSX: &str = r##"const React = require("react");
import { useState } from "react";
import Loader from "./loader.js";

/**
 * Renders the settings page.
 */
export default class SettingsPage extends React.Component {
  state = { loaded: false };

  /** Fetches settings once mounted. */
  componentDidMount() {
    this.props.api.fetchSettings().then(this.onLoad);
  }

  onLoad = (settings) => {
    this.setState({ loaded: true, settings });
  };

  render() {
    return <Panel title="Settings">{this.renderRows()}</Panel>;
  }
}

/** A single row. */
function Row({ name, value }) {
  const [open, setOpen] = useState(false);
  return <div onClick={() => setOpen(!open)}>{format(name, value)}</div>;
}

export const loadAll = async (names) => {
  const loader = new Loader();
  return Promise.all(names.map((n) => loader.load(n)));
};

module.exports = { Row };
"##;

    #[test]
    fn overload_signatures_are_declarations_and_interface_methods_are_not() {
        let src = "export function pick(x: number): number;\nexport function pick(x: any): any { return x; }\n\nclass Box {\n  get(a: number): number;\n  get(a: any): any { return a; }\n}\n\ninterface Reader {\n  read(n: number): string;\n}\n";
        let f = extract_clean(Language::TypeScript, src);
        let sigs: Vec<(&str, &str)> = f
            .symbols
            .iter()
            .filter(|s| matches!(s.name.as_str(), "pick" | "get" | "read"))
            .map(|s| (s.qualified_name.as_str(), s.signature.as_str()))
            .collect();
        assert_eq!(
            sigs,
            [
                ("pick", "function pick(x: number): number;"),
                ("pick", "function pick(x: any): any"),
                ("Box.get", "get(a: number): number;"),
                ("Box.get", "get(a: any): any"),
                ("Reader.read", "read(n: number): string"),
            ]
        );
    }

    #[test]
    fn commonjs_and_prototype_definitions() {
        let src = r#"/**
 * Makes a frozen map.
 */
exports.defineConstants = function (obj) {
  return Object.freeze(exports.createMap(obj));
};
module.exports.createMap = (obj) => Object.assign(Object.create(null), obj);

function Mocha(options) {
  this.options = options;
  this.handler = function () {};
}

/** Drops references after a run. */
Mocha.prototype.cleanReferencesAfterRun = function (clean) {
  this._clean = clean !== false;
  return this;
};
Mocha.unloadFile = (file) => delete require.cache[file];
items[0].run = function () {};
"#;
        let f = extract_clean(Language::JavaScript, src);
        let want = [
            ("defineConstants", S::Function),
            ("createMap", S::Function),
            ("Mocha", S::Function),
            ("Mocha.cleanReferencesAfterRun", S::Method),
            ("Mocha.unloadFile", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));
        assert_eq!(sym(&f, "defineConstants").doc, "Makes a frozen map.");
        assert_eq!(lines(&f, "defineConstants"), (4, 6));
        assert_eq!(
            sym(&f, "Mocha.cleanReferencesAfterRun").doc,
            "Drops references after a run."
        );
        // The call inside is attributed to the definition.
        assert!(f.calls.iter().any(|c| c.callee == "createMap"
            && c.caller.map(|i| f.symbols[i].name.as_str()) == Some("defineConstants")));
    }

    #[test]
    fn jsx_page_symbols() {
        let f = extract_clean(Language::JavaScript, APP_JSX);
        let want = [
            ("SettingsPage", S::Class),
            ("SettingsPage.state", S::Field),
            ("SettingsPage.componentDidMount", S::Method),
            ("SettingsPage.onLoad", S::Method),
            ("SettingsPage.render", S::Method),
            ("Row", S::Function),
            ("loadAll", S::Function),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "SettingsPage"), (8, 23));
        assert_eq!(lines(&f, "loadAll"), (31, 34));
        assert_eq!(sym(&f, "SettingsPage").doc, "Renders the settings page.");
        assert_eq!(
            sym(&f, "SettingsPage.componentDidMount").doc,
            "Fetches settings once mounted."
        );
        assert_eq!(sym(&f, "Row").signature, "function Row({ name, value })");
        assert_eq!(sym(&f, "Row").doc, "A single row.");
        assert_eq!(
            sym(&f, "SettingsPage.onLoad").signature,
            "onLoad = (settings) =>"
        );
    }

    #[test]
    fn jsx_page_references() {
        let f = extract_clean(Language::JavaScript, APP_JSX);
        assert_eq!(
            imports(&f),
            [
                "react as React @1",
                "react [useState] @2",
                "./loader.js as Loader (rel) @3",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "SettingsPage.componentDidMount -> (expr).then @13",
                "SettingsPage.componentDidMount -> this.props.api.fetchSettings @13",
                "SettingsPage.onLoad -> this.setState @17",
                "SettingsPage.render -> this.renderRows @21",
                "Row -> useState @27",
                // `setOpen` is a local (`const [open, setOpen] =
                // useState(..)`): calling it calls no definition.
                "Row -> format @28",
                "loadAll -> Loader @32",
                "loadAll -> Promise.all @33",
                "loadAll -> names.map @33",
                "loadAll -> loader.load @33",
            ]
        );
        assert_eq!(inherits(&f), ["SettingsPage : Component @8",]);

        assert!(f.imports.iter().all(|i| i.line <= 3));
    }

    #[test]
    fn a_named_function_assigned_to_a_member_of_this_is_found_by_its_name() {
        // mocha's `this.skip = function asyncSkip() {..}`; a plain member
        // path names what it assigns (`inst._zod.run`), as a prototype's
        // member does.
        let src = "function Runnable() {\n  this.skip = function asyncSkip() {\n    throw new Pending();\n  };\n}\ninst._zod.run = function countingShim(payload) {\n  return payload;\n};\nRunnable.prototype.run = function (fn) {\n  return fn();\n};\nthis.anon = function () {};\n";
        let f = crate::extract(Language::JavaScript, src.as_bytes());
        let got = outline(&f);
        for want in ["Runnable.asyncSkip", "inst._zod.run", "Runnable.run"] {
            assert!(got.iter().any(|(n, _)| n == want), "{want}: {got:?}");
        }
        assert_eq!(got.len(), 4, "an anonymous function names nothing: {got:?}");
    }
}
