//! PHP: classes, interfaces, traits, enums (with cases), functions, methods
//! (`__construct` as the constructor), class and top-level constants, and
//! properties (named without `$`). Namespaces are not symbols, like Java
//! packages. HTML around `<?php` is read by the grammar and skipped.
//!
//! Imports: every `use` names one class, function or constant by its full
//! name as written without the leading `\` (`use App\Core\Base;` is module
//! `App\Core\Base`; a group `use App\{A, B as C};` gives `App\A` and
//! `App\B` with alias `C`); `require`/`include` (and their `_once` forms) of
//! a string, or of `__DIR__ . '/x.php'`, are relative imports of the path.
//! Calls: functions, `$obj->m()` and `$obj?->m()` (receiver as written, so
//! `$this`), `A::m()` / `self::m()` / `parent::m()`, and `new A()`.
//! Inheritance: `extends`, `implements`, and traits a class `use`s.

use std::sync::OnceLock;

use sno_journal::model::{Language, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::FileFacts;
use crate::facts::EXPRESSION_RECEIVER;
use crate::source_text;
use crate::walker::{self, node_kinds, DocStyle, Grammar, Rules, Walk};

node_kinds! {
    enum K {
        BaseClause = "base_clause",
        BinaryExpression = "binary_expression",
        ClassConstantAccessExpression = "class_constant_access_expression",
        ClassDeclaration = "class_declaration",
        ClassInterfaceClause = "class_interface_clause",
        Comment = "comment",
        ConstDeclaration = "const_declaration",
        ConstElement = "const_element",
        EnumCase = "enum_case",
        EnumDeclaration = "enum_declaration",
        FunctionCallExpression = "function_call_expression",
        FunctionDefinition = "function_definition",
        IncludeExpression = "include_expression",
        IncludeOnceExpression = "include_once_expression",
        InterfaceDeclaration = "interface_declaration",
        MemberAccessExpression = "member_access_expression",
        MemberCallExpression = "member_call_expression",
        MethodDeclaration = "method_declaration",
        Name = "name",
        NamespaceName = "namespace_name",
        NamespaceUseClause = "namespace_use_clause",
        NamespaceUseDeclaration = "namespace_use_declaration",
        NamespaceUseGroup = "namespace_use_group",
        NullsafeMemberAccessExpression = "nullsafe_member_access_expression",
        NullsafeMemberCallExpression = "nullsafe_member_call_expression",
        ObjectCreationExpression = "object_creation_expression",
        PropertyDeclaration = "property_declaration",
        PropertyElement = "property_element",
        QualifiedName = "qualified_name",
        RelativeScope = "relative_scope",
        RequireExpression = "require_expression",
        RequireOnceExpression = "require_once_expression",
        ScopedCallExpression = "scoped_call_expression",
        ScopedPropertyAccessExpression = "scoped_property_access_expression",
        String = "string",
        StringContent = "string_content",
        TraitDeclaration = "trait_declaration",
        UseDeclaration = "use_declaration",
        VariableName = "variable_name",
    }
    skip ["text", "integer", "float", "boolean", "null", "formal_parameters", "attribute_list", "named_type", "primitive_type", "union_type", "intersection_type", "optional_type", "nowdoc", "php_tag", "text_interpolation", "declare_statement"]
}

static GRAMMAR: OnceLock<Grammar<K>> = OnceLock::new();

/// Extracts the facts of a parsed PHP file.
pub(crate) fn extract(tree: &Tree, src: &[u8]) -> FileFacts {
    let mut rules = Php {
        g: Grammar::get(&GRAMMAR, Language::Php),
    };
    walker::walk(Language::Php, tree, src, &mut rules).into_facts()
}

struct Php {
    g: &'static Grammar<K>,
}

impl<'t> Rules<'t> for Php {
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool {
        let f = &self.g.f;
        match self.g.kind(node) {
            K::Comment => {
                w.comment(node);
                false
            }
            K::NamespaceUseDeclaration => {
                self.use_declaration(w, node);
                false
            }
            K::RequireExpression
            | K::RequireOnceExpression
            | K::IncludeExpression
            | K::IncludeOnceExpression => {
                if let Some(path) = node.named_child(0).and_then(|p| self.path(w, p)) {
                    w.import(path, Vec::new(), None, true, node);
                }
                false
            }
            K::ClassDeclaration => {
                self.type_decl(w, node, SymbolKind::Class);
                true
            }
            K::InterfaceDeclaration => {
                self.type_decl(w, node, SymbolKind::Interface);
                true
            }
            K::TraitDeclaration => {
                self.type_decl(w, node, SymbolKind::Trait);
                true
            }
            K::EnumDeclaration => {
                self.type_decl(w, node, SymbolKind::Enum);
                true
            }
            K::EnumCase => {
                self.named(w, node, SymbolKind::EnumMember);
                true
            }
            K::FunctionDefinition => {
                self.named(w, node, SymbolKind::Function);
                true
            }
            K::MethodDeclaration => {
                let is_constructor = node
                    .child_by_field_id(f.name)
                    .is_some_and(|n| w.bytes(n).eq_ignore_ascii_case(b"__construct"));
                let kind = if is_constructor {
                    SymbolKind::Constructor
                } else {
                    SymbolKind::Method
                };
                self.named(w, node, kind);
                true
            }
            K::ConstDeclaration => {
                self.elements(w, node, K::ConstElement, SymbolKind::Constant);
                true
            }
            K::PropertyDeclaration => {
                self.elements(w, node, K::PropertyElement, SymbolKind::Field);
                true
            }
            K::UseDeclaration => {
                // `use SomeTrait;` in a class body.
                let owner = w.container().filter(|_| {
                    w.container_kind().is_some_and(|k| {
                        matches!(k, SymbolKind::Class | SymbolKind::Trait | SymbolKind::Enum)
                    })
                });
                if let Some(owner) = owner {
                    let mut cursor = node.walk();
                    for t in node.named_children(&mut cursor) {
                        if matches!(self.g.kind(t), K::Name | K::QualifiedName) {
                            w.inherit(owner, t);
                        }
                    }
                }
                false
            }
            K::FunctionCallExpression => {
                if let Some(func) = node.child_by_field_id(f.function) {
                    if matches!(self.g.kind(func), K::Name | K::QualifiedName) {
                        let text = w.text(func);
                        w.call(source_text::last_segment(&text), None, node);
                    }
                }
                true
            }
            K::MemberCallExpression | K::NullsafeMemberCallExpression => {
                let name = node.child_by_field_id(f.name);
                if let Some(name) = name.filter(|n| self.g.kind(*n) == K::Name) {
                    let receiver = node.child_by_field_id(f.object).map(|o| {
                        self.receiver(w, o)
                            .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                    });
                    let name = w.text(name);
                    w.call(&name, receiver, node);
                }
                true
            }
            K::ScopedCallExpression => {
                let name = node.child_by_field_id(f.name);
                if let Some(name) = name.filter(|n| self.g.kind(*n) == K::Name) {
                    let receiver = node.child_by_field_id(f.scope).map(|o| {
                        self.receiver(w, o)
                            .unwrap_or_else(|| EXPRESSION_RECEIVER.into())
                    });
                    let name = w.text(name);
                    w.call(&name, receiver, node);
                }
                true
            }
            K::ObjectCreationExpression => {
                // `new static()`, `new self()` and anonymous classes name no
                // class of their own.
                let class = node.named_child(0);
                if let Some(class) =
                    class.filter(|c| matches!(self.g.kind(*c), K::Name | K::QualifiedName))
                {
                    let text = w.text(class);
                    let name = source_text::base_name(&text);
                    if !matches!(name, "static" | "self" | "parent") {
                        w.call(name, None, node);
                    }
                }
                true
            }
            K::Skip => false,
            _ => true,
        }
    }
}

impl Php {
    fn named(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) -> Option<usize> {
        let name = node.child_by_field_id(self.g.f.name)?;
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let body = node.child_by_field_id(self.g.f.body);
        let name = w.text(name);
        Some(w.symbol(&name, kind, node, body, doc, None, true))
    }

    fn type_decl(&self, w: &mut Walk<'_>, node: Node<'_>, kind: SymbolKind) {
        let Some(sym) = self.named(w, node, kind) else {
            return;
        };
        let mut cursor = node.walk();
        for clause in node.named_children(&mut cursor) {
            if !matches!(self.g.kind(clause), K::BaseClause | K::ClassInterfaceClause) {
                continue;
            }
            let mut cursor = clause.walk();
            for base in clause.named_children(&mut cursor) {
                if matches!(self.g.kind(base), K::Name | K::QualifiedName) {
                    w.inherit(sym, base);
                }
            }
        }
    }

    /// `const A = 1, B = 2;` and `public $a, $b;`: one symbol per element.
    fn elements(&self, w: &mut Walk<'_>, node: Node<'_>, element: K, kind: SymbolKind) {
        let doc = w.doc_comment(node, DocStyle::JsDoc);
        let mut cursor = node.walk();
        let elements: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|e| self.g.kind(*e) == element)
            .collect();
        let single = elements.len() == 1;
        for e in elements {
            // A constant's name is its first child; a property's is the
            // `$name` in its `name` field, named without the `$`.
            let name = match element {
                K::PropertyElement => e
                    .child_by_field_id(self.g.f.name)
                    .and_then(|v| v.named_child(0)),
                _ => e.named_child(0),
            };
            if let Some(name) = name.filter(|n| self.g.kind(*n) == K::Name) {
                let name = w.text(name);
                w.symbol(&name, kind, node, None, doc.clone(), None, single);
            }
        }
    }

    /// A receiver made of variables, names and property accesses: `$this`,
    /// `$this->client`, `self`, `parent`, `Parser`, `\App\Parser`.
    fn receiver(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        let mut cur = node;
        loop {
            match self.g.kind(cur) {
                K::VariableName | K::Name | K::QualifiedName | K::RelativeScope => {
                    return Some(w.text(node).into_owned())
                }
                K::MemberAccessExpression | K::NullsafeMemberAccessExpression => {
                    cur = cur.child_by_field_id(self.g.f.object)?
                }
                K::ScopedPropertyAccessExpression | K::ClassConstantAccessExpression => {
                    cur = cur
                        .child_by_field_id(self.g.f.scope)
                        .or_else(|| cur.named_child(0))?
                }
                _ => return None,
            }
        }
    }

    /// The path a `require` or `include` names: a string, or a string
    /// appended to `__DIR__` (then relative to the file's directory).
    fn path(&self, w: &Walk<'_>, node: Node<'_>) -> Option<String> {
        match self.g.kind(node) {
            K::String => {
                let mut cursor = node.walk();
                let content = node
                    .named_children(&mut cursor)
                    .find(|c| self.g.kind(*c) == K::StringContent)?;
                Some(w.text(content).into_owned()).filter(|p| !p.is_empty())
            }
            K::BinaryExpression => {
                let right = node.child_by_field_id(self.g.f.right)?;
                let path = self.path(w, right)?;
                Some(path.trim_start_matches('/').to_string())
            }
            _ => None,
        }
    }

    fn use_declaration(&self, w: &mut Walk<'_>, node: Node<'_>) {
        let mut prefix = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match self.g.kind(child) {
                K::NamespaceName => prefix = Some(w.text(child).into_owned()),
                K::NamespaceUseClause => self.use_clause(w, child, None, node),
                K::NamespaceUseGroup => {
                    let mut cursor = child.walk();
                    for clause in child.named_children(&mut cursor) {
                        if self.g.kind(clause) == K::NamespaceUseClause {
                            self.use_clause(w, clause, prefix.as_deref(), node);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn use_clause(&self, w: &mut Walk<'_>, clause: Node<'_>, prefix: Option<&str>, at: Node<'_>) {
        let alias = clause.child_by_field_id(self.g.f.alias);
        let mut cursor = clause.walk();
        let Some(name) = clause
            .named_children(&mut cursor)
            .find(|c| Some(*c) != alias && matches!(self.g.kind(*c), K::Name | K::QualifiedName))
        else {
            return;
        };
        let name = w.text(name);
        let name = name.trim_start_matches('\\');
        let module = match prefix {
            Some(p) => format!("{}\\{name}", p.trim_start_matches('\\')),
            None => name.to_string(),
        };
        let alias = alias.map(|a| w.text(a).into_owned());
        w.import(module, Vec::new(), alias, false, at);
    }
}

#[cfg(test)]
mod tests {
    use sno_journal::model::{Language, SymbolKind as S};

    use crate::lang::test_support::*;

    const LOADER_PHP: &str = r##"<?php
declare(strict_types=1);

namespace App\Config;

use App\Core\BaseLoader;
use App\Contracts\{Loader, Closeable as Close};
use function App\Util\helper;
require_once __DIR__ . '/bootstrap.php';

/**
 * Loads configuration files.
 */
final class ConfigLoader extends BaseLoader implements Loader, \Countable
{
    use LoggerTrait;

    /** Default file name. */
    public const DEFAULT = 'app.conf';
    private array $cache = [], $seen = [];

    public function __construct(private string $root)
    {
        parent::__construct($root);
    }

    /**
     * Loads one file.
     */
    public function load(string $name): Config
    {
        $cfg = Parser::parse($this->root . $name);
        $this->validate($cfg);
        helper($cfg);
        $this->items[0]->run();
        self::make();
        return new Config($cfg?->check());
    }

    public static function make(): static { return new static(); }
}

interface Loader extends Base { public function load(string $name): Config; }
trait LoggerTrait { function log($m) { echo $m; } }
enum Suit: string implements HasLabel { case Hearts = 'H'; }

function helper($x) { return \strlen($x); }
const LIMIT = 10;
?>
<p>Not code: <?= $title ?></p>
"##;

    #[test]
    fn php_loader_symbols() {
        let f = extract_clean(Language::Php, LOADER_PHP);
        let want = [
            ("ConfigLoader", S::Class),
            ("ConfigLoader.DEFAULT", S::Constant),
            ("ConfigLoader.cache", S::Field),
            ("ConfigLoader.seen", S::Field),
            ("ConfigLoader.__construct", S::Constructor),
            ("ConfigLoader.load", S::Method),
            ("ConfigLoader.make", S::Method),
            ("Loader", S::Interface),
            ("Loader.load", S::Method),
            ("LoggerTrait", S::Trait),
            ("LoggerTrait.log", S::Method),
            ("Suit", S::Enum),
            ("Suit.Hearts", S::EnumMember),
            ("helper", S::Function),
            ("LIMIT", S::Constant),
        ];
        assert_eq!(outline(&f), want.map(|(q, k)| (q.to_string(), k)));

        assert_eq!(lines(&f, "ConfigLoader"), (14, 41));
        assert_eq!(lines(&f, "ConfigLoader.load"), (30, 38));
        let class = sym(&f, "ConfigLoader");
        assert_eq!(class.doc, "Loads configuration files.");
        assert_eq!(
            class.signature,
            "final class ConfigLoader extends BaseLoader implements Loader, \\Countable"
        );
        let load = sym(&f, "ConfigLoader.load");
        assert_eq!(load.signature, "public function load(string $name): Config");
        assert_eq!(load.doc, "Loads one file.");
        assert_span_text(LOADER_PHP, load, "public function load", "}");
        assert_eq!(sym(&f, "ConfigLoader.DEFAULT").doc, "Default file name.");
        assert_eq!(
            sym(&f, "ConfigLoader.__construct").signature,
            "public function __construct(private string $root)"
        );
        assert_eq!(
            sym(&f, "Suit").signature,
            "enum Suit: string implements HasLabel"
        );
        assert_eq!(sym(&f, "helper").signature, "function helper($x)");
    }

    #[test]
    fn php_loader_references() {
        let f = extract_clean(Language::Php, LOADER_PHP);
        assert_eq!(
            imports(&f),
            [
                "App\\Core\\BaseLoader @6",
                "App\\Contracts\\Loader @7",
                "App\\Contracts\\Closeable as Close @7",
                "App\\Util\\helper @8",
                "bootstrap.php (rel) @9",
            ]
        );
        assert_eq!(
            calls(&f),
            [
                "ConfigLoader.__construct -> parent.__construct @24",
                "ConfigLoader.load -> Parser.parse @32",
                "ConfigLoader.load -> $this.validate @33",
                "ConfigLoader.load -> helper @34",
                "ConfigLoader.load -> (expr).run @35",
                "ConfigLoader.load -> self.make @36",
                "ConfigLoader.load -> Config @37",
                "ConfigLoader.load -> $cfg.check @37",
                "helper -> strlen @47",
            ]
        );
        assert_eq!(
            inherits(&f),
            [
                "ConfigLoader : BaseLoader @14",
                "ConfigLoader : Loader @14",
                "ConfigLoader : Countable @14",
                "ConfigLoader : LoggerTrait @16",
                "Loader : Base @43",
                "Suit : HasLabel @45",
            ]
        );
    }

    #[test]
    fn php_receivers_through_properties_and_includes() {
        let src = "<?php\ninclude 'lib/util.php';\nrequire dirname(__FILE__) . '/x.php';\nclass A {\n  function f() { $this->client->send(); static::g(); $x::h(); }\n}\n";
        let f = extract_clean(Language::Php, src);
        assert_eq!(imports(&f), ["lib/util.php (rel) @2", "x.php (rel) @3"]);
        assert_eq!(
            calls(&f),
            [
                "A.f -> $this->client.send @5",
                "A.f -> static.g @5",
                "A.f -> $x.h @5",
            ]
        );
    }
}
