//! Go: functions, methods (qualified by their receiver type, without a
//! parent: `func (s *Server) Run()` is `Server.Run`), type declarations
//! (struct, interface, alias and defined types) with struct fields and
//! interface methods, top-level consts and vars, imports, calls, and embedded
//! types as inheritance.

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
        Comment = "comment",
        ConstDeclaration = "const_declaration",
        ConstSpec = "const_spec",
        FieldDeclaration = "field_declaration",
        FunctionDeclaration = "function_declaration",
        GenericType = "generic_type",
        Identifier = "identifier",
        ImportDeclaration = "import_declaration",
        ImportSpec = "import_spec",
        ImportSpecList = "import_spec_list",
        InterfaceType = "interface_type",
        MethodDeclaration = "method_declaration",
        MethodElem = "method_elem",
        ParameterDeclaration = "parameter_declaration",
        QualifiedType = "qualified_type",
        SelectorExpression = "selector_expression",
        StructType = "struct_type",
        TypeAlias = "type_alias",
        TypeDeclaration = "type_declaration",
        TypeElem = "type_elem",
        TypeIdentifier = "type_identifier",
        TypeSpec = "type_spec",
        VarDeclaration = "var_declaration",
        VarSpec = "var_spec",
        VarSpecList = "var_spec_list",
    }
    skip ["parameter_list", "qualified_type", "pointer_type", "slice_type", "map_type", "channel_type", "function_type", "type_arguments", "interpreted_string_literal", "raw_string_literal", "rune_literal", "int_literal", "float_literal"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed Go file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Go {
        g: Grammar::get(&GRAMMAR, Language::Go),
    };
    walker::walk(Language::Go, tree, src, &mut rules).into_facts()
}

struct Go {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Go {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => {
                w.comment(node);
                false
            }
            K::FunctionDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let body = node.child_by_field_id(f.body);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::Function, node, body, doc, None, true);
                }
                true
            }
            K::MethodDeclaration => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let receiver = self.receiver_type(w, node);
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let body = node.child_by_field_id(f.body);
                    let name = w.text(name);
                    w.symbol(
                        &name,
                        SymbolKind::Method,
                        node,
                        body,
                        doc,
                        receiver.as_deref(),
                        true,
                    );
                }
                true
            }
            K::TypeSpec | K::TypeAlias => {
                let Some(name) = node.child_by_field_id(f.name) else {
                    return true;
                };
                let ty = node.child_by_field_id(f.type_);
                let (kind, body) = match ty.map(|t| self.g.kind(t)) {
                    _ if self.g.kind(node) == K::TypeAlias => (SymbolKind::TypeAlias, None),
                    Some(K::StructType) => (SymbolKind::Struct, ty.and_then(|t| t.named_child(0))),
                    Some(K::InterfaceType) => (SymbolKind::Interface, None),
                    _ => (SymbolKind::TypeAlias, None),
                };
                let doc = w.doc_comment(node, DocStyle::AnyComment);
                let span = self.sole_spec_parent(w, K::TypeDeclaration).unwrap_or(node);
                // An interface's body has no node of its own: stop the signature at `{`.
                let sig_end = body.or_else(|| {
                    (kind == SymbolKind::Interface)
                        .then_some(ty)
                        .flatten()
                        .and_then(|t| t.child(1))
                });
                let name = w.text(name);
                w.symbol(&name, kind, span, sig_end, doc, None, true);
                true
            }
            K::FieldDeclaration => {
                self.field(w, node);
                false
            }
            K::MethodElem => {
                if let Some(name) = node.child_by_field_id(f.name) {
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let name = w.text(name);
                    w.symbol(&name, SymbolKind::Method, node, None, doc, None, false);
                }
                false
            }
            K::TypeElem => {
                // An embedded interface: a lone type directly in an interface
                // body (a union like `~int | ~string` is a type set, not an embedding).
                let in_interface = w
                    .parent()
                    .is_some_and(|p| self.g.kind(p) == K::InterfaceType);
                let embedded = node.named_child(0).filter(|t| {
                    node.named_child_count() == 1
                        && matches!(
                            self.g.kind(*t),
                            K::TypeIdentifier | K::QualifiedType | K::GenericType
                        )
                });
                if let (true, Some(owner), Some(ty)) = (in_interface, w.container(), embedded) {
                    w.inherit(owner, ty);
                }
                false
            }
            K::ConstSpec | K::VarSpec => {
                if w.container().is_none() {
                    let (kind, parent) = if self.g.kind(node) == K::ConstSpec {
                        (SymbolKind::Constant, K::ConstDeclaration)
                    } else {
                        (SymbolKind::Variable, K::VarDeclaration)
                    };
                    let doc = w.doc_comment(node, DocStyle::AnyComment);
                    let span = self.sole_spec_parent(w, parent).unwrap_or(node);
                    for name in walker::field_children(node, f.name) {
                        let name = w.text(name);
                        w.symbol(&name, kind, span, None, doc.clone(), None, false);
                    }
                }
                true
            }
            K::ImportDeclaration | K::ImportSpecList => true,
            K::ImportSpec => {
                self.import(w, node);
                false
            }
            K::CallExpression => {
                self.call(w, node);
                true
            }
            K::Skip | K::QualifiedType | K::GenericType | K::TypeIdentifier => false,
            _ => true,
        }
    }
}

impl Go {
    /// The enclosing `type`/`const`/`var` declaration when it declares only
    /// the current spec, so the span and signature include the keyword.
    fn sole_spec_parent<'t>(&self, w: &Walk<'t>, parent_kind: K) -> Option<Node<'t>> {
        let parent = w.parent()?;
        (self.g.kind(parent) == parent_kind && parent.named_child_count() == 1).then_some(parent)
    }

    /// `Server` for `func (s *Server)`, `List` for `func (l *List[T])`.
    fn receiver_type(&self, w: &Walk<'_>, method: Node<'_>) -> Option<String> {
        let params = method.child_by_field_id(self.g.f.receiver)?;
        let mut cursor = params.walk();
        let param = params
            .named_children(&mut cursor)
            .find(|p| self.g.kind(*p) == K::ParameterDeclaration)?;
        let ty = param.child_by_field_id(self.g.f.type_)?;
        let text = w.text(ty);
        let name = source_text::base_name(&text);
        (!name.is_empty()).then(|| name.to_string())
    }

    /// A struct field: named fields are symbols, embedded types inheritance.
    fn field(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let f = &self.g.f;
        let mut named = false;
        for name in walker::field_children(node, f.name) {
            named = true;
            let doc = w.doc_comment(node, DocStyle::AnyComment);
            let name = w.text(name);
            w.symbol(&name, SymbolKind::Field, node, None, doc, None, false);
        }
        if !named {
            if let (Some(owner), Some(ty)) = (w.container(), node.child_by_field_id(f.type_)) {
                w.inherit(owner, ty);
            }
        }
    }

    fn import(&self, w: &mut Walk<'_>, spec: Node<'_>) {
        let f = &self.g.f;
        let Some(path) = spec.child_by_field_id(f.path) else {
            return;
        };
        let module = w.text(path).trim_matches(['"', '`']).to_string();
        let alias = spec
            .child_by_field_id(f.name)
            .map(|n| w.text(n).into_owned());
        let is_relative = module.starts_with("./") || module.starts_with("../");
        w.import(module, Vec::new(), alias, is_relative, spec);
    }

    fn call(&self, w: &mut Walk<'_>, call: Node<'_>) {
        let f = &self.g.f;
        let Some(func) = call.child_by_field_id(f.function) else {
            return;
        };
        match self.g.kind(func) {
            K::Identifier => {
                let callee = w.text(func);
                if w.calls_a_local(&crate::locals::GO, call, &callee) {
                    return;
                }
                w.call(&callee, None, call);
            }
            K::SelectorExpression => {
                let Some(field) = func.child_by_field_id(f.field) else {
                    return;
                };
                let mut receiver = func.child_by_field_id(f.operand).map(|o| {
                    self.receiver(w, o)
                        .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                });
                // A receiver name the body binds again (`for _, mx := range
                // ..`) is no longer the method's receiver: unknown.
                if let Some(r) = receiver.as_deref().filter(|r| !r.contains('.')) {
                    if w.calls_a_local(&crate::locals::GO, call, r) {
                        receiver = Some(EXPRESSION_RECEIVER.into());
                    }
                }
                let callee = w.text(field);
                w.call(&callee, receiver, call);
            }
            _ => {}
        }
    }

    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::Identifier => return Some(w.text(node).into_owned()),
                K::SelectorExpression => cur = cur.child_by_field_id(self.g.f.operand)?,
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const SERVER_GO: &str = r##"// Package server serves configuration.
package server

import (
	"context"
	"fmt"
	log "github.com/sirupsen/logrus"
	"./internal/store"
)

// DefaultAddr is used when none is configured.
const DefaultAddr = ":8080"

var (
	requests int
	errCount int
)

// Server answers config requests.
type Server struct {
	*store.Store
	Base
	// Addr to listen on.
	Addr    string
	handler Handler
}

// Handler handles one request.
type Handler interface {
	fmt.Stringer
	Handle(ctx context.Context, key string) (string, error)
}

type Key = string

// NewServer builds a server.
func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}

// Run serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	log.Infof("listening on %s", s.Addr)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
			s.handler.Handle(ctx, "k")
			requests++
		}
	}
}

func (s Server) String() string { return fmt.Sprintf("server(%s)", s.Addr) }
"##;

    #[test]
    fn go_server_symbols() {
        let f = extract_clean(Language::Go, SERVER_GO);
        let want = [
            ("DefaultAddr", S::Constant),
            ("requests", S::Variable),
            ("errCount", S::Variable),
            ("Server", S::Struct),
            ("Server.Addr", S::Field),
            ("Server.handler", S::Field),
            ("Handler", S::Interface),
            ("Handler.Handle", S::Method),
            ("Key", S::TypeAlias),
            ("NewServer", S::Function),
            ("Server.Run", S::Method),
            ("Server.String", S::Method),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "Server"), (20, 26));
        assert_eq!(lines(&f, "Server.Run"), (42, 53));
        let run = sym(&f, "Server.Run");
        assert_eq!((run.name.as_str(), run.parent), ("Run", None));
        assert_eq!(
            run.signature,
            "func (s *Server) Run(ctx context.Context) error"
        );
        assert_eq!(run.doc, "Run serves until ctx is done.");
        assert_span_text(SERVER_GO, run, "func (s *Server) Run", "}\n\t}\n}");
        let server = sym(&f, "Server");
        assert_eq!(
            (server.signature.as_str(), server.doc.as_str()),
            ("type Server struct", "Server answers config requests.")
        );
        assert_eq!(sym(&f, "Server.Addr").doc, "Addr to listen on.");
        assert_eq!(parent_of(&f, "Server.Addr"), "Server");
        assert_eq!(sym(&f, "Handler").signature, "type Handler interface");
        assert_eq!(
            sym(&f, "DefaultAddr").signature,
            "const DefaultAddr = \":8080\""
        );
        assert_eq!(
            sym(&f, "NewServer").signature,
            "func NewServer(addr string) *Server"
        );
    }

    #[test]
    fn go_server_references() {
        let f = extract_clean(Language::Go, SERVER_GO);
        assert_eq!(
            imports(&f),
            [
                "context @5",
                "fmt @6",
                "github.com/sirupsen/logrus as log @7",
                "./internal/store (rel) @8",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "Server.Run -> log.Infof @43",
                "Server.Run -> ctx.Done @46",
                "Server.Run -> ctx.Err @47",
                "Server.Run -> s.handler.Handle @49",
                "Server.String -> fmt.Sprintf @55",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "Server : Store @21",
                "Server : Base @22",
                "Handler : Stringer @30",
            ]
        );

        let log = f.imports.iter().find(|i| i.alias.is_some()).unwrap();
        assert_eq!(
            (log.module.as_str(), log.alias.as_deref()),
            ("github.com/sirupsen/logrus", Some("log"))
        );
    }

    #[test]
    fn broken_go_keeps_symbols() {
        let src =
            "package p\n\nfunc Good() { helper() }\n\nfunc Bad( {\n}\n\ntype T struct { x int }\n";
        let f = crate::extract(Language::Go, src.as_bytes());
        let names: Vec<_> = outline(&f).into_iter().map(|(q, _)| q).collect();
        assert!(
            names.contains(&"Good".to_string()) && names.contains(&"T".to_string()),
            "{names:?}"
        );
        assert!(!f.diagnostics.is_empty());
        assert!(
            f.diagnostics.iter().all(|d| (5..=6).contains(&d.line)),
            "{:?}",
            f.diagnostics
        );
        assert_eq!(calls(&f)[0], "Good -> helper @3");
    }
}
