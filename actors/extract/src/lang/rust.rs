//! Rust: functions and methods, structs (with fields), enums (with
//! variants), unions, traits (supertraits as inheritance), type aliases,
//! consts, statics, modules, `macro_rules!`, and impl blocks.
//!
//! An `impl Foo { fn bar() }` is an [`SymbolKind::Impl`] symbol named `Foo`
//! containing the method `Foo.bar`.
//!
//! Imports, one per `use` path group: the module is the path without its last
//! segment and `names` the last segments (`use crate::config::{Config, load}`
//! is module `crate::config`, names `[Config, load]`; `use std::fmt;` is
//! module `std`, names `[fmt]`; `use a::b::{self}` is module `a`, names `[b]`).
//! A single-segment path (`use serde;`, `extern crate serde;`) is the module
//! itself with no names. A glob is the name `*`. `use a::b as c` is its own
//! import with names `[b]` and alias `c`. Paths starting with `crate`, `self`
//! or `super` are relative.
//!
//! Inheritance: `impl Trait for Type` records `Type -> Trait`. The inheriting
//! symbol is the struct, enum, union or type alias named `Type` with the same
//! qualified name if this file defines one, otherwise the impl block itself.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        AttributeItem = "attribute_item",
        BlockComment = "block_comment",
        CallExpression = "call_expression",
        ConstItem = "const_item",
        Crate = "crate",
        EnumItem = "enum_item",
        EnumVariant = "enum_variant",
        ExternCrateDeclaration = "extern_crate_declaration",
        FieldDeclaration = "field_declaration",
        FieldExpression = "field_expression",
        FunctionItem = "function_item",
        FunctionSignatureItem = "function_signature_item",
        GenericFunction = "generic_function",
        GenericType = "generic_type",
        Identifier = "identifier",
        ImplItem = "impl_item",
        LineComment = "line_comment",
        MacroDefinition = "macro_definition",
        MacroInvocation = "macro_invocation",
        ModItem = "mod_item",
        MutableSpecifier = "mutable_specifier",
        ScopedIdentifier = "scoped_identifier",
        ScopedTypeIdentifier = "scoped_type_identifier",
        ScopedUseList = "scoped_use_list",
        SelfKeyword = "self",
        TokenTree = "token_tree",
        StaticItem = "static_item",
        Super = "super",
        StructItem = "struct_item",
        TraitItem = "trait_item",
        TypeIdentifier = "type_identifier",
        TypeItem = "type_item",
        UnionItem = "union_item",
        UseAsClause = "use_as_clause",
        UseDeclaration = "use_declaration",
        UseList = "use_list",
        UseWildcard = "use_wildcard",
    }
    skip ["parameters", "generic_type", "reference_type", "scoped_type_identifier", "type_arguments", "tuple_type", "function_type", "pointer_type", "dynamic_type", "abstract_type", "bounded_type", "string_literal", "raw_string_literal", "char_literal", "integer_literal", "float_literal", "visibility_modifier", "lifetime", "where_clause", "type_parameters"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// How far after an item's keyword its body may start, in tokens, when the
/// item is read off a macro's tokens: a long signature's worth.
const ITEM_HEAD_TOKENS: usize = 96;

/// Extracts the facts of a parsed Rust file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = RustRules {
        g: Grammar::get(&GRAMMAR, Language::Rust),
    };
    let mut facts = walker::walk(Language::Rust, tree, src, &mut rules).into_facts();
    attach_impl_inheritance_to_types(&mut facts);
    facts
}

/// Points `impl Trait for Type` inheritance at `Type`'s own symbol when the
/// file defines it (see the module docs).
fn attach_impl_inheritance_to_types(facts: &mut FileFacts) {
    for i in 0..facts.inherits.len() {
        let sym = facts.inherits[i].symbol;
        if facts.symbols[sym].kind != SymbolKind::Impl {
            continue;
        }
        let qualified = &facts.symbols[sym].qualified_name;
        let target = facts.symbols.iter().position(|s| {
            matches!(
                s.kind,
                SymbolKind::Struct | SymbolKind::Enum | SymbolKind::Union | SymbolKind::TypeAlias
            ) && &s.qualified_name == qualified
        });
        if let Some(t) = target {
            facts.inherits[i].symbol = t;
        }
    }
}

struct RustRules {
    g: &'static Grammar<K>,
}

/// One imported path, before paths sharing a module are grouped.
struct UsePath {
    module: String,
    name: Option<String>,
    alias: Option<String>,
}

impl<'t> Rules<'t> for RustRules {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::LineComment | K::BlockComment => {
                w.comment(node);
                false
            }
            K::AttributeItem => {
                w.doc_transparent();
                false
            }
            K::FunctionItem | K::FunctionSignatureItem => {
                let kind = match w.container_kind() {
                    Some(SymbolKind::Impl | SymbolKind::Trait) => SymbolKind::Method,
                    _ => SymbolKind::Function,
                };
                self.named(w, node, kind);
                true
            }
            K::StructItem => {
                self.named(w, node, SymbolKind::Struct);
                true
            }
            K::UnionItem => {
                self.named(w, node, SymbolKind::Union);
                true
            }
            K::EnumItem => {
                self.named(w, node, SymbolKind::Enum);
                true
            }
            K::EnumVariant => {
                self.named(w, node, SymbolKind::EnumMember);
                true
            }
            K::FieldDeclaration => {
                self.named(w, node, SymbolKind::Field);
                true
            }
            K::TraitItem => {
                if let Some(sym) = self.named(w, node, SymbolKind::Trait) {
                    if let Some(bounds) = node.child_by_field_id(f.bounds) {
                        let mut cursor = bounds.walk();
                        for b in bounds.named_children(&mut cursor) {
                            if matches!(
                                self.g.kind(b),
                                K::TypeIdentifier | K::ScopedTypeIdentifier | K::GenericType
                            ) {
                                w.inherit(sym, b);
                            }
                        }
                    }
                }
                true
            }
            K::TypeItem => {
                self.named(w, node, SymbolKind::TypeAlias);
                true
            }
            K::ConstItem => {
                self.named(w, node, SymbolKind::Constant);
                true
            }
            K::StaticItem => {
                let mut cursor = node.walk();
                let mutable = node
                    .named_children(&mut cursor)
                    .any(|c| self.g.kind(c) == K::MutableSpecifier);
                let kind = if mutable {
                    SymbolKind::Variable
                } else {
                    SymbolKind::Constant
                };
                self.named(w, node, kind);
                true
            }
            K::ModItem => {
                self.named(w, node, SymbolKind::Module);
                true
            }
            K::MacroDefinition => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::RustOuter);
                    // The rules are the body: the signature is `macro_rules! name`.
                    let rules = name.next_sibling();
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::Macro, node, rules, doc, None, true);
                    // What each rule expands to may define functions and
                    // impls (serde visitors, `impl_trait!` tables): they
                    // are the macro's members.
                    let mut c = node.walk();
                    for rule in node.named_children(&mut c) {
                        let mut rc = rule.walk();
                        let expansion = rule
                            .children(&mut rc)
                            .filter(|n| self.g.kind(*n) == K::TokenTree)
                            .last();
                        if let Some(tree) = expansion {
                            self.token_tree_items(w, tree, false);
                        }
                    }
                }
                false
            }
            K::ImplItem => {
                let Some(ty) = node.child_by_field_id(f.type_) else {
                    return true;
                };
                let text = w.text(ty);
                let name = source_text::base_name(&text).to_string();
                if name.is_empty() {
                    return true;
                }
                let doc = w.doc_comment(node, DocStyle::RustOuter);
                let body = node.child_by_field_id(f.body);
                let sym = w.symbol(&name, SymbolKind::Impl, node, body, doc, None, true);
                if let Some(t) = node.child_by_field_id(f.trait_) {
                    w.inherit(sym, t);
                }
                true
            }
            K::UseDeclaration => {
                if let Some(arg) = node.child_by_field_id(f.argument) {
                    self.use_declaration(w, node, arg);
                }
                false
            }
            K::ExternCrateDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let module = w.text(name).into_owned();
                    w.import(module, Vec::new(), None, false, node);
                }
                false
            }
            K::CallExpression => {
                if let Some(func) = node.child_by_field_id(f.function) {
                    self.call(w, func, node);
                }
                true
            }
            K::MacroInvocation => {
                if let Some(m) = node.child_by_field_id(f.macro_) {
                    self.call(w, m, node);
                }
                // Macro arguments are token trees, not expressions: calls
                // in them (`assert_eq!(f(x), 1)`, `itry!(self.push(d))`)
                // are read off the tokens, and so are the items they
                // define (`cfg_rt! { pub fn spawn() .. }`, `cfg_if!`).
                self.token_tree_calls(w, node);
                let in_type = matches!(
                    w.container_kind(),
                    Some(SymbolKind::Impl | SymbolKind::Trait)
                );
                let mut c = node.walk();
                let trees: Vec<Node<'_>> = node
                    .children(&mut c)
                    .filter(|n| self.g.kind(*n) == K::TokenTree)
                    .collect();
                for tree in trees {
                    self.token_tree_items(w, tree, in_type);
                }
                false
            }
            K::Skip | K::GenericType | K::ScopedTypeIdentifier | K::TypeIdentifier => false,
            _ => true,
        }
    }
}

impl RustRules {
    /// A symbol named by the `name` field, with the `///` docs above it.
    fn named(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let doc = w.doc_comment(node, DocStyle::RustOuter);
        let body = node.child_by_field_id(self.g.f.body);
        let opens_scope = kind != SymbolKind::Field;
        let name = w.text(name);
        let sym = w.symbol(&name, kind, node, body, doc, None, opens_scope);
        // Its attributes (`#[derive(..)]`, `#[serde(..)]`, `#[test]`) are
        // part of the definition: the first of those right above it.
        let mut first = None;
        let mut prev = node.prev_sibling();
        while let Some(p) = prev {
            match self.g.kind(p) {
                K::AttributeItem => first = Some(p),
                K::LineComment | K::BlockComment => {}
                _ => break,
            }
            prev = p.prev_sibling();
        }
        if let Some(attribute) = first {
            w.extend_start(sym, attribute);
        }
        Some(sym)
    }

    /// Records a call (or macro invocation) of `target`.
    fn call(&self, w: &mut Walk<'_>, target: Node<'_>, at: Node<'_>) {
        let f = &self.g.f;
        match self.g.kind(target) {
            K::Identifier => {
                let callee = w.text(target);
                // A macro is never a variable.
                let macro_call = self.g.kind(at) == K::MacroInvocation;
                if !macro_call && w.calls_a_local(&crate::locals::RUST, at, &callee) {
                    return;
                }
                w.call(&callee, None, at);
            }
            K::FieldExpression => {
                let Some(field) = target.child_by_field_id(f.field) else {
                    return;
                };
                let receiver = target.child_by_field_id(f.value).map(|v| {
                    self.receiver(w, v)
                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                });
                let callee = w.text(field);
                w.call(&callee, receiver, at);
            }
            K::ScopedIdentifier => {
                let Some(name) = target.child_by_field_id(f.name) else {
                    return;
                };
                let receiver = target
                    .child_by_field_id(f.path)
                    .map(|p| compact(&w.text(p)));
                let callee = w.text(name);
                w.call(&callee, receiver, at);
            }
            K::GenericFunction => {
                if let Some(inner) = target.child_by_field_id(f.function) {
                    if self.g.kind(inner) != K::GenericFunction {
                        self.call(w, inner, at);
                    }
                }
            }
            _ => {}
        }
    }

    /// Definitions in a macro's tokens, which the grammar leaves unparsed:
    /// `fn name(..) {..}` (a method inside an `impl` or `trait`), `impl ..
    /// {..}` with its methods, and `struct`, `enum`, `union`, `trait` and
    /// `mod` by name. A definition spans from its first qualifier (`pub`,
    /// `async`, ...) to the end of its body, and takes the `///` comments
    /// just before it as its doc. A name written as a metavariable (`fn
    /// $name`) is not known, and nothing is recorded for it.
    fn token_tree_items(&self, w: &mut Walk<'_>, tree: Node<'_>, in_type: bool) {
        let mut c = tree.walk();
        let tokens: Vec<Node<'_>> = tree.children(&mut c).collect();
        let group = |n: Node<'_>, open: &str| self.group(n, &[open]);
        // The body of the item whose keyword is at `i`: the first `{..}`
        // group (or `;`) within a head's length.
        let body_after = |i: usize| {
            (i + 1..tokens.len().min(i + 1 + ITEM_HEAD_TOKENS))
                .find(|&k| group(tokens[k], "{") || tokens[k].kind() == ";")
        };
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let keyword = t.kind();
            let named = tokens
                .get(i + 1)
                .filter(|n| self.g.kind(**n) == K::Identifier)
                .copied();
            let item = match (keyword, named) {
                ("fn", Some(name)) => Some((
                    name,
                    if in_type {
                        SymbolKind::Method
                    } else {
                        SymbolKind::Function
                    },
                )),
                ("struct", Some(name)) => Some((name, SymbolKind::Struct)),
                ("enum", Some(name)) => Some((name, SymbolKind::Enum)),
                ("union", Some(name)) => Some((name, SymbolKind::Union)),
                ("trait", Some(name)) => Some((name, SymbolKind::Trait)),
                ("mod", Some(name)) => Some((name, SymbolKind::Module)),
                _ => None,
            };
            let Some(end) = (item.is_some() || keyword == "impl")
                .then(|| body_after(i))
                .flatten()
            else {
                // A group that heads no item may hold some (`cfg_if!`'s
                // branches); an item's own body is read below.
                if self.group(t, &["{", "(", "["]) {
                    self.token_tree_items(w, t, in_type);
                }
                i += 1;
                continue;
            };
            let head = self.item_head(&tokens, i);
            let doc = self.token_doc(w, &tokens, head);
            let body = tokens[end];
            let has_body = group(body, "{");
            let sym = match item {
                Some((name, kind)) => {
                    let name = w.text(name).into_owned();
                    let scope = has_body && matches!(kind, SymbolKind::Trait | SymbolKind::Module);
                    w.symbol(&name, kind, body, Some(body), doc, None, scope)
                }
                None => {
                    // `impl<T> Trait for Type<T> where .. {`: named by its
                    // type's base name.
                    let from = tokens[i..end]
                        .iter()
                        .rposition(|n| n.kind() == "for")
                        .map_or(i + 1, |k| i + k + 1);
                    let from = if from == i + 1 && tokens.get(from).is_some_and(|n| n.kind() == "<")
                    {
                        self.after_generics(&tokens, from).unwrap_or(from)
                    } else {
                        from
                    };
                    let text: String = tokens[from.min(end)..end]
                        .iter()
                        .map(|n| w.text(*n).into_owned())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let text = text.split(" where ").next().unwrap_or_default();
                    let name = source_text::base_name(&text.replace(" ", "")).to_string();
                    if name.is_empty() || !has_body {
                        i = end + 1;
                        continue;
                    }
                    w.symbol(&name, SymbolKind::Impl, body, Some(body), doc, None, true)
                }
            };
            w.widen_start(sym, tokens[head]);
            let kind = w.symbols()[sym].kind;
            if has_body
                && matches!(
                    kind,
                    SymbolKind::Impl | SymbolKind::Trait | SymbolKind::Module
                )
            {
                let members_in_type = kind != SymbolKind::Module;
                self.token_tree_items(w, body, members_in_type);
                w.close_scope(sym);
            }
            i = end + 1;
        }
    }

    /// The first token of the item whose keyword is at `i`: back over its
    /// qualifiers (`pub`, `pub(crate)`, `async`, `const`, `unsafe`, `extern
    /// "C"`, `default`).
    fn item_head(&self, tokens: &[Node<'_>], i: usize) -> usize {
        let mut head = i;
        while head > 0 {
            let prev = tokens[head - 1];
            let qualifier =
                matches!(
                    prev.kind(),
                    "pub" | "async" | "const" | "unsafe" | "extern" | "default" | "string_literal"
                ) || (self.group(prev, &["("]) && head >= 2 && tokens[head - 2].kind() == "pub");
            if !qualifier {
                break;
            }
            head -= 1;
        }
        head
    }

    /// The `///` comments just before the token at `head` (attributes,
    /// `#[..]`, may sit between), as a doc.
    fn token_doc(&self, w: &Walk<'_>, tokens: &[Node<'_>], head: usize) -> String {
        let mut k = head;
        let mut docs: Vec<Node<'_>> = Vec::new();
        while k > 0 {
            let prev = tokens[k - 1];
            match self.g.kind(prev) {
                K::LineComment | K::BlockComment => docs.push(prev),
                K::TokenTree if k >= 2 && tokens[k - 2].kind() == "#" => k -= 1,
                _ => break,
            }
            k -= 1;
        }
        docs.reverse();
        source_text::clean_comments(
            docs.iter()
                .map(|n| w.bytes(*n))
                .filter(|c| walker::is_rust_outer_doc(c)),
        )
    }

    /// Whether `n` is a token tree opened by one of `open` (`(`, `[`, `{`).
    fn group(&self, n: Node<'_>, open: &[&str]) -> bool {
        self.g.kind(n) == K::TokenTree && n.child(0).is_some_and(|o| open.contains(&o.kind()))
    }

    /// The index after the `<..>` that opens at `open`.
    fn after_generics(&self, tokens: &[Node<'_>], open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for (k, n) in tokens.iter().enumerate().skip(open) {
            match n.kind() {
                "<" => depth += 1,
                ">" => depth -= 1,
                ">>" => depth -= 2,
                _ => {}
            }
            if depth == 0 {
                return Some(k + 1);
            }
        }
        None
    }

    /// Calls in a macro's token trees: a name followed by a parenthesised
    /// group, with the `a.b.` or `a::b::` before it as its receiver; `fn
    /// name(` and other item heads are definitions, not calls.
    fn token_tree_calls(&self, w: &mut Walk<'_>, invocation: Node<'_>) {
        let mut stack: Vec<Node<'_>> = Vec::new();
        let mut c = invocation.walk();
        stack.extend(
            invocation
                .children(&mut c)
                .filter(|n| self.g.kind(*n) == K::TokenTree),
        );
        while let Some(tree) = stack.pop() {
            let mut c = tree.walk();
            let tokens: Vec<Node<'_>> = tree.children(&mut c).collect();
            for (i, t) in tokens.iter().enumerate() {
                if self.g.kind(*t) == K::TokenTree {
                    stack.push(*t);
                    continue;
                }
                let group = |k: usize, open: &[&str]| {
                    tokens.get(i + k).is_some_and(|n| self.group(*n, open))
                };
                // `f(..)`, or a macro `m!(..)` / `m![..]` / `m!{..}`.
                let opens_call = group(1, &["("])
                    || (tokens.get(i + 1).is_some_and(|n| n.kind() == "!")
                        && group(2, &["(", "[", "{"]));
                if self.g.kind(*t) != K::Identifier || !opens_call {
                    continue;
                }
                let before = |k: usize| i.checked_sub(k).map(|j| tokens[j]);
                let sep = before(1).map(|n| n.kind()).unwrap_or("");
                if matches!(
                    sep,
                    "fn" | "struct" | "enum" | "union" | "trait" | "impl" | "type" | "!" | "$"
                ) {
                    continue;
                }
                let receiver = if sep == "." || sep == "::" {
                    // Back over `a.b.` / `a::b::`: names and separators.
                    let mut parts = Vec::new();
                    let mut k = 2;
                    while let Some(n) = before(k) {
                        let name_like = matches!(
                            self.g.kind(n),
                            K::Identifier | K::SelfKeyword | K::Super | K::Crate
                        );
                        if !name_like {
                            break;
                        }
                        parts.push(w.text(n).into_owned());
                        if before(k + 1).map(|x| x.kind()) != Some(sep) {
                            break;
                        }
                        k += 2;
                    }
                    parts.reverse();
                    Some(if parts.is_empty() {
                        EXPRESSION_RECEIVER.to_string()
                    } else if sep == "." {
                        parts.join(".")
                    } else {
                        compact(&parts.join("::"))
                    })
                } else {
                    None
                };
                let callee = w.text(*t).into_owned();
                w.call(&callee, receiver, *t);
            }
        }
    }

    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier | K::SelfKeyword => return Some(w.text(node).into_owned()),
                K::FieldExpression => cur = cur.child_by_field_id(self.g.f.value)?,
                _ => return None,
            }
        }
    }

    fn use_declaration(&self, w: &mut Walk<'_>, decl: Node<'_>, arg: Node<'_>) {
        let mut paths = Vec::new();
        // Use trees nest (`a::{b::{c}}`); an explicit stack keeps hostile
        // input from exhausting the call stack.
        let mut stack = vec![(arg, String::new())];
        while let Some((node, prefix)) = stack.pop() {
            self.use_tree(w, node, prefix, &mut paths, &mut stack);
        }
        // Popping reversed the order of list items; restore source order.
        paths.reverse();
        let mut grouped: Vec<(String, Vec<String>, Option<String>)> = Vec::new();
        for p in paths {
            let names: Vec<String> = p.name.into_iter().collect();
            if p.alias.is_none() {
                if let Some(g) = grouped
                    .iter_mut()
                    .find(|g| g.0 == p.module && g.2.is_none())
                {
                    g.1.extend(names);
                    continue;
                }
            }
            grouped.push((p.module, names, p.alias));
        }
        for (module, names, alias) in grouped {
            let is_relative = ["crate", "self", "super"]
                .iter()
                .any(|r| module == *r || module.starts_with(&format!("{r}::")));
            w.import(module, names, alias, is_relative, decl);
        }
    }

    fn use_tree<'t>(
        &self,
        w: &Walk<'_>,
        node: Node<'t>,
        prefix: String,
        paths: &mut Vec<UsePath>,
        stack: &mut Vec<(Node<'t>, String)>,
    ) {
        let f = &self.g.f;
        let join = |rest: &str| {
            let rest = compact(rest);
            if prefix.is_empty() {
                rest
            } else if rest.is_empty() {
                prefix.clone()
            } else {
                format!("{prefix}::{rest}")
            }
        };
        match self.g.kind(node) {
            K::ScopedUseList => {
                let path = node
                    .child_by_field_id(f.path)
                    .map(|p| w.text(p))
                    .unwrap_or_default();
                if let Some(list) = node.child_by_field_id(f.list) {
                    stack.push((list, join(&path)));
                }
            }
            K::UseList => {
                let mut cursor = node.walk();
                for item in node.named_children(&mut cursor) {
                    stack.push((item, prefix.clone()));
                }
            }
            K::UseWildcard => {
                let path = node.named_child(0).map(|p| w.text(p)).unwrap_or_default();
                paths.push(UsePath {
                    module: join(&path),
                    name: Some("*".into()),
                    alias: None,
                });
            }
            K::UseAsClause => {
                let Some(path) = node.child_by_field_id(f.path) else {
                    return;
                };
                let alias = node
                    .child_by_field_id(f.alias)
                    .map(|a| w.text(a).into_owned());
                let mut p = split_path(&join(&w.text(path)));
                p.alias = alias;
                paths.push(p);
            }
            K::SelfKeyword if !prefix.is_empty() => paths.push(split_path(&prefix)),
            K::Identifier | K::ScopedIdentifier | K::Crate | K::Super | K::SelfKeyword => {
                paths.push(split_path(&join(&w.text(node))));
            }
            _ => {}
        }
    }
}

/// `a::b::c` as module `a::b`, name `c`; a single segment is a module alone.
fn split_path(path: &str) -> UsePath {
    match path.rsplit_once("::") {
        Some((module, name)) => UsePath {
            module: module.to_string(),
            name: Some(name.to_string()),
            alias: None,
        },
        None => UsePath {
            module: path.to_string(),
            name: None,
            alias: None,
        },
    }
}

/// A path without the whitespace formatting may have put inside it.
fn compact(path: &str) -> String {
    path.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const CONFIG_RS: &str = r##"//! Configuration loading.

use std::collections::HashMap;
use std::fmt;
use crate::source::{self, Source, parse as parse_source};
use super::*;

/// Maximum nesting depth.
pub const MAX_DEPTH: usize = 8;

static mut COUNTER: u32 = 0;

/// Loaded settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it came from.
    pub path: String,
    values: HashMap<String, String>,
}

/// Things that can load a config.
pub trait Loader: Send + fmt::Debug {
    /// Loads from `path`.
    fn load(&self, path: &str) -> Option<Config>;
}

impl Config {
    /// Parses a config file.
    pub fn parse(path: &str, text: &str) -> Result<Self, Error> {
        let values = source::parse_pairs(text)?;
        let cfg = Config { path: path.to_string(), values };
        cfg.validate();
        Ok(cfg)
    }

    // A plain comment, not a doc.
    fn validate(&self) {
        assert!(self.values.len() < MAX_DEPTH);
        self.values.keys().for_each(|k| check(k));
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)
    }
}

pub enum Error {
    Missing(String),
    Invalid { line: u32 },
}

mod tests {
    type Pairs = Vec<(String, String)>;

    macro_rules! pairs {
        ($($k:expr => $v:expr),*) => { vec![$(($k.into(), $v.into())),*] };
    }
}
"##;

    #[test]
    fn rust_config_symbols() {
        let f = extract_clean(Language::Rust, CONFIG_RS);
        let want = [
            ("MAX_DEPTH", S::Constant),
            ("COUNTER", S::Variable),
            ("Config", S::Struct),
            ("Config.path", S::Field),
            ("Config.values", S::Field),
            ("Loader", S::Trait),
            ("Loader.load", S::Method),
            ("Config", S::Impl),
            ("Config.parse", S::Method),
            ("Config.validate", S::Method),
            ("Config", S::Impl),
            ("Config.fmt", S::Method),
            ("Error", S::Enum),
            ("Error.Missing", S::EnumMember),
            ("Error.Invalid", S::EnumMember),
            ("Error.Invalid.line", S::Field),
            ("tests", S::Module),
            ("tests.Pairs", S::TypeAlias),
            ("tests.pairs", S::Macro),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "Config.parse"), (29, 34));
        let config = sym_of(&f, "Config", S::Struct);
        // From its `#[derive]`: the attribute is part of the definition.
        assert_eq!((config.span.start_line, config.span.end_line), (14, 19));
        assert_span_text(CONFIG_RS, config, "#[derive(Debug, Clone)]", "}");
        assert_eq!(config.doc, "Loaded settings.");
        assert_eq!(config.signature, "pub struct Config");
        let parse = sym(&f, "Config.parse");
        assert_eq!(
            parse.signature,
            "pub fn parse(path: &str, text: &str) -> Result<Self, Error>"
        );
        assert_eq!(parse.doc, "Parses a config file.");
        assert_eq!(f.symbols[parse.parent.unwrap()].kind, S::Impl);
        assert_span_text(CONFIG_RS, parse, "pub fn parse", "Ok(cfg)\n    }");
        // A plain `//` comment is not a doc comment.
        assert_eq!(sym(&f, "Config.validate").doc, "");
        assert_eq!(sym(&f, "Config.path").doc, "Where it came from.");
        assert_eq!(sym(&f, "Loader.load").doc, "Loads from `path`.");
        assert_eq!(sym(&f, "MAX_DEPTH").doc, "Maximum nesting depth.");
        let display = f
            .symbols
            .iter()
            .filter(|s| s.kind == S::Impl)
            .nth(1)
            .unwrap();
        assert_eq!(display.signature, "impl fmt::Display for Config");
        assert_eq!(sym(&f, "tests.pairs").signature, "macro_rules! pairs");
    }

    #[test]
    fn rust_config_references() {
        let f = extract_clean(Language::Rust, CONFIG_RS);
        assert_eq!(
            imports(&f),
            [
                "std::collections [HashMap] @3",
                "std [fmt] @4",
                "crate [source] (rel) @5",
                "crate::source [Source] (rel) @5",
                "crate::source [parse] as parse_source (rel) @5",
                "super [*] (rel) @6",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "Config.parse -> source.parse_pairs @30",
                "Config.parse -> path.to_string @31",
                "Config.parse -> cfg.validate @32",
                "Config.parse -> Ok @33",
                "Config.validate -> assert @38",
                "Config.validate -> self.values.len @38",
                "Config.validate -> (expr).for_each @39",
                "Config.validate -> self.values.keys @39",
                "Config.validate -> check @39",
                "Config.fmt -> write @45",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "Loader : Send @22",
                "Loader : Debug @22",
                "Config : Display @43",
            ]
        );

        // The trait impl's inheritance points at the struct, not the impl block.
        let display = f.inherits.iter().find(|i| i.base == "Display").unwrap();
        assert_eq!(f.symbols[display.symbol].kind, S::Struct);
    }

    #[test]
    fn calls_inside_macro_arguments_are_read_off_the_tokens() {
        let src = "fn go(w: &mut W) -> R {\n    itry!(self.push(&d));\n    assert_eq!(helper(1), Error::from_path(p).code());\n    println!(\"{}\", a.b.c(format!(\"{}\", x)));\n    m! { fn inner(x: u8) {} }\n    vec![(1, 2)]\n}\n";
        let f = extract_clean(Language::Rust, src);
        assert_eq!(
            calls(&f),
            [
                "go -> itry @2",
                "go -> self.push @2",
                "go -> assert_eq @3",
                "go -> helper @3",
                "go -> Error.from_path @3",
                "go -> (expr).code @3",
                "go -> println @4",
                "go -> a.b.c @4",
                "go -> format @4",
                "go -> m @5",
                "go -> vec @6",
            ]
        );
    }

    #[test]
    fn items_inside_macro_tokens_are_definitions() {
        // tokio's `cfg_rt! { .. }`, `cfg_if!` branches, and what a
        // `macro_rules!` expands to (bytes' serde visitors): the grammar
        // leaves them as tokens.
        let src = r#"macro_rules! visitor {
    ($ty:ident) => {
        impl<'de> Visitor<'de> for $ty {
            /// What the visitor expects.
            fn expecting(&self, f: &mut Formatter) -> Result {
                f.write_str("bytes")
            }
            fn $skipped(&self) {}
        }
    };
}

cfg_rt! {
    /// Spawns a task.
    #[track_caller]
    pub(crate) async fn spawn_task(x: u32) -> u32 {
        x + 1
    }
    impl<T: Into<Vec<u8>>> Runtime<T> where T: Send {
        pub const fn block_on(&self) -> u8 { 0 }
    }
    pub trait Spawner {
        fn spawn_it(&self);
    }
}

cfg_if! {
    if #[cfg(unix)] {
        struct Unix(u8);
    } else {
        enum Other { A }
    }
}

fn caller() -> u32 { spawn_task(1) }
"#;
        let f = extract_clean(Language::Rust, src);
        let o = outline(&f);
        let names: Vec<&str> = o.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "visitor",
                "visitor.$ty",
                "visitor.$ty.expecting",
                "spawn_task",
                "Runtime",
                "Runtime.block_on",
                "Spawner",
                "Spawner.spawn_it",
                "Unix",
                "Other",
                "caller",
            ],
            "{o:?}"
        );
        assert_eq!(sym(&f, "visitor.$ty.expecting").kind, S::Method);
        assert_eq!(
            sym(&f, "visitor.$ty.expecting").doc,
            "What the visitor expects."
        );
        let spawn = sym(&f, "spawn_task");
        assert_eq!(spawn.kind, S::Function);
        assert_eq!(spawn.doc, "Spawns a task.");
        assert_eq!(
            spawn.signature,
            "pub(crate) async fn spawn_task(x: u32) -> u32"
        );
        assert_span_text(src, spawn, "pub(crate) async fn spawn_task", "x + 1\n    }");
        assert_eq!(lines(&f, "spawn_task"), (16, 18));
        assert_eq!(sym(&f, "Runtime.block_on").kind, S::Method);
        assert_eq!(sym(&f, "Spawner.spawn_it").signature, "fn spawn_it(&self)");
        assert_eq!(sym(&f, "Unix").kind, S::Struct);
        assert_eq!(sym(&f, "Other").kind, S::Enum);
        // Calls still come off the tokens, and the caller's call is plain.
        assert!(
            calls(&f).contains(&"caller -> spawn_task @35".to_string()),
            "{:?}",
            calls(&f)
        );
    }

    #[test]
    fn impl_of_a_foreign_type_inherits_through_the_impl() {
        let f = extract_clean(
            Language::Rust,
            "impl Iterator for Vec<u8> {\n    fn next(&mut self) {}\n}\n",
        );
        assert_eq!(
            outline(&f),
            [
                ("Vec".to_string(), S::Impl),
                ("Vec.next".to_string(), S::Method)
            ]
        );
        assert_eq!(f.inherits.len(), 1);
        assert_eq!(
            (f.inherits[0].symbol, f.inherits[0].base.as_str()),
            (0, "Iterator")
        );
    }

    #[test]
    fn broken_rust_keeps_symbols() {
        let src = "fn good() { run(); }\n\nfn bad(x: u8) -> u8 {\n    let y = ;\n    x\n}\n\nstruct After { a: u8 }\n";
        let f = crate::extract(Language::Rust, src.as_bytes());
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert_eq!(names, ["good", "bad", "After", "After.a"]);
        let d: Vec<_> = f
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(d, [(4, 11, "syntax error near `=`")]);
        assert_eq!(lines(&f, "bad"), (3, 6));
    }

    #[test]
    fn attributed_functions_walk_their_own_nodes_for_locals() {
        // Each `#[test] fn`'s span starts at its attribute, outside its
        // node: gathering its local names from the span walked the whole
        // module once per function (4,000 of them: 78 s).
        let fns: String = (0..300)
            .map(|i| format!("    #[test]\n    fn t{i}() {{\n        let x = helper({i});\n        assert_eq!(x, {i});\n    }}\n\n"))
            .collect();
        let src = format!("pub fn helper(x: i32) -> i32 {{ x }}\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n{fns}}}\n");
        crate::locals::WALKED.with(|w| w.set(0));
        let f = extract_clean(Language::Rust, &src);
        assert_eq!(f.calls.iter().filter(|c| c.callee == "helper").count(), 300);
        let walked = crate::locals::WALKED.with(|w| w.get());
        // Linear: a few dozen nodes a function, not the module's thousands.
        assert!(walked < 300 * 100, "{walked} nodes walked");
    }
}
