//! The one pre-order walk every language shares.
//!
//! A language supplies [`Rules`]: it is called once for each named node and
//! records symbols, imports, calls and inheritance through [`Walk`]. The walker
//! owns everything that is the same across languages: the container stack
//! (which symbol encloses the current node), the run of comments directly
//! above the current node (for doc comments), and syntax-error diagnostics.
//!
//! The walk uses a single [`tree_sitter::TreeCursor`] and dispatches on
//! `kind_id` through a lookup table ([`Grammar`]), so the per-node cost is a
//! few FFI calls and an array index; nothing is allocated per node.

use std::borrow::Cow;
use std::sync::OnceLock;

use sno_journal::model::{Diagnostic, Language, Span, SymbolKind};
use tree_sitter::{Node, Tree};

use crate::facts::{CallSite, ExtractedSymbol, FileFacts, Import, Inheritance};
use crate::source_text;

/// Diagnostics beyond this many per file are dropped: a badly broken (or
/// binary) file would otherwise produce one per token.
pub(crate) const MAX_DIAGNOSTICS: usize = 100;

/// Declares a language's node kinds of interest as an enum with an `Other`
/// variant, plus the grammar names that map to each variant.
///
/// Kinds listed under `skip` map to the variant `Skip`: subtrees that cannot
/// hold anything extraction records (types, literals, parameter lists), which
/// the rules leave unvisited because walking nodes is most of extraction's
/// cost.
macro_rules! node_kinds {
    (
        $vis:vis enum $name:ident { $($variant:ident = $kind:literal),* $(,)? }
        skip [$($skip:literal),* $(,)?]
    ) => {
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        $vis enum $name {
            Other,
            Skip,
            $($variant),*
        }
        impl $crate::walker::NodeKinds for $name {
            const OTHER: Self = $name::Other;
            const NAMES: &'static [(&'static str, Self)] =
                &[$(($kind, $name::$variant),)* $(($skip, $name::Skip),)*];
        }
    };
}
pub(crate) use node_kinds;

/// A language's enum of interesting node kinds (see [`node_kinds!`]).
pub(crate) trait NodeKinds: Copy + Send + Sync + 'static {
    const OTHER: Self;
    /// Named grammar kinds and the variant each one maps to.
    const NAMES: &'static [(&'static str, Self)];
}

/// Field ids resolved once per grammar; a field a grammar lacks resolves to 0,
/// for which tree-sitter returns no child.
macro_rules! field_ids {
    ($($field:ident = $name:literal),* $(,)?) => {
        /// Field ids of one grammar, by the field's name.
        #[derive(Debug)]
        pub(crate) struct Fields { $(pub $field: u16),* }
        impl Fields {
            fn resolve(lang: &tree_sitter::Language) -> Self {
                Fields { $($field: lang.field_id_for_name($name).map_or(0, |id| id.get())),* }
            }
        }
    };
}

field_ids! {
    accessors = "accessors",
    alias = "alias",
    argument = "argument",
    arguments = "arguments",
    attribute = "attribute",
    block = "block",
    body = "body",
    bound_identifier = "bound_identifier",
    bounds = "bounds",
    condition = "condition",
    constructor = "constructor",
    declaration_kind = "declaration_kind",
    declarator = "declarator",
    expression = "expression",
    extend = "extend",
    field = "field",
    function = "function",
    inherits_from = "inherits_from",
    key = "key",
    interfaces = "interfaces",
    left = "left",
    list = "list",
    macro_ = "macro",
    method = "method",
    module_name = "module_name",
    name = "name",
    object = "object",
    operand = "operand",
    operator = "operator",
    parameters = "parameters",
    path = "path",
    pattern = "pattern",
    property = "property",
    qualifier = "qualifier",
    receiver = "receiver",
    right = "right",
    scope = "scope",
    source = "source",
    suffix = "suffix",
    superclass = "superclass",
    superclasses = "superclasses",
    target = "target",
    trait_ = "trait",
    type_ = "type",
    value = "value",
}

/// A grammar's kind lookup table and field ids, built once per process.
pub(crate) struct Grammar<K> {
    kinds: Vec<K>,
    /// Field ids of this grammar.
    pub f: Fields,
}

impl<K: NodeKinds> Grammar<K> {
    /// Builds (once) and returns the table for `lang`, stored in `cell`.
    pub(crate) fn get(cell: &'static OnceLock<Grammar<K>>, lang: Language) -> &'static Grammar<K> {
        cell.get_or_init(|| {
            let ts = crate::grammar(lang);
            // Walk every id rather than asking for each name once: a name can
            // have several ids (aliases), and all of them must map.
            let count = ts.node_kind_count();
            let mut kinds = vec![K::OTHER; count];
            for (id, slot) in kinds.iter_mut().enumerate() {
                let Ok(id) = u16::try_from(id) else { break };
                if !ts.node_kind_is_named(id) {
                    continue;
                }
                if let Some(name) = ts.node_kind_for_id(id) {
                    if let Some((_, k)) = K::NAMES.iter().find(|(n, _)| *n == name) {
                        *slot = *k;
                    }
                }
            }
            Grammar {
                kinds,
                f: Fields::resolve(&ts),
            }
        })
    }

    /// The variant for a node (anonymous and unknown kinds, and ERROR, are `Other`).
    #[inline]
    pub(crate) fn kind(&self, node: Node<'_>) -> K {
        if !node.is_named() {
            return K::OTHER;
        }
        self.kinds
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(K::OTHER)
    }
}

/// What a language does with each named node.
pub(crate) trait Rules<'t> {
    /// Called on entering a named node; returns whether to walk its children.
    /// A node that holds nothing of interest (strings, comments, imports
    /// already handled) should return `false` to save time.
    fn enter(&mut self, w: &mut Walk<'t>, node: Node<'t>) -> bool;
}

/// Which comments count as documentation in a language.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum DocStyle {
    /// Every comment directly above (Go, C, C++, Ruby).
    AnyComment,
    /// Only the last comment, and only if it is `/** ... */` (Java, JS, TS).
    JsDoc,
    /// Only `///` lines and `/** */` blocks (Rust); `//!` documents the
    /// enclosing module, not the next item.
    RustOuter,
}

/// How the walker should treat the node `enter` is looking at, for doc comments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DocRole {
    /// An ordinary node: it takes the comments above it, and ends the run.
    Item,
    /// A comment: it extends (or starts) the run.
    Comment,
    /// Sits between a doc comment and its item without breaking the link
    /// (Rust attributes, C++ template parameter lists).
    Transparent,
}

/// Per depth: the comments seen directly above the next sibling.
#[derive(Default)]
struct Level<'t> {
    /// Byte ranges of the contiguous comments above the next sibling.
    comments: Vec<(usize, usize)>,
    /// Last row (0-based) covered by the run, comments or transparent nodes.
    run_end_row: usize,
    /// The previous sibling, to tell a trailing comment (`x = 1  # note`)
    /// from one that introduces the next line.
    prev: Option<Node<'t>>,
    prev_was_comment: bool,
    /// The node whose children this level holds.
    parent: Option<Node<'t>>,
}

/// The state of one walk, handed to [`Rules::enter`].
pub(crate) struct Walk<'t> {
    /// The file's source bytes.
    pub src: &'t [u8],
    facts: FileFacts,
    /// Open containers: (symbol index, depth of the node that opened it,
    /// that node's first byte: a symbol's span may start before it, at
    /// decorators or attributes outside the node).
    scopes: Vec<(usize, u32, usize)>,
    depth: u32,
    /// Indexed by depth; entries beyond `depth` are kept only to reuse their
    /// allocations.
    levels: Vec<Level<'t>>,
    role: DocRole,
    /// Depth of the outermost ERROR node being walked, so nested ones are not
    /// reported again.
    error_depth: Option<u32>,
    /// The tree's root, once the walk starts.
    root: Option<Node<'t>>,
    /// The names bound anywhere in a function ([`crate::locals`]), by the
    /// function's bytes: made on its first bare call.
    bound: rustc_hash::FxHashMap<(usize, usize), rustc_hash::FxHashSet<String>>,
}

impl<'t> Walk<'t> {
    fn new(lang: Language, src: &'t [u8]) -> Self {
        Walk {
            src,
            facts: FileFacts {
                language: lang,
                symbols: Vec::new(),
                imports: Vec::new(),
                calls: Vec::new(),
                inherits: Vec::new(),
                diagnostics: Vec::new(),
            },
            scopes: Vec::new(),
            depth: 0,
            levels: vec![Level::default()],
            role: DocRole::Item,
            error_depth: None,
            root: None,
            bound: Default::default(),
        }
    }

    /// Whether the bare call of `name` at `call` calls a local variable
    /// ([`crate::locals`]): a name bound somewhere in the function around
    /// it, then bound in a block or construct around the call.
    pub(crate) fn calls_a_local(
        &mut self,
        s: &crate::locals::Scoping,
        call: Node<'_>,
        name: &str,
    ) -> bool {
        self.may_call_a_local(s, name, false)
            && crate::locals::bound_locally(s, self.src, call, name)
    }

    /// Whether `name` is bound anywhere in the outermost function open at
    /// this point of the walk (with `in_function_only` false, else in the
    /// outermost definition, else in the file): the set of such names is
    /// made once per function, so the calls of other names, most of them,
    /// need no look up the tree.
    pub(crate) fn may_call_a_local(
        &mut self,
        s: &crate::locals::Scoping,
        name: &str,
        in_function_only: bool,
    ) -> bool {
        let Some(scope) = self.outer_scope(in_function_only) else {
            return false;
        };
        let (src, root) = (self.src, self.root);
        let names = self
            .bound
            .entry((scope.start, scope.end))
            .or_insert_with(|| {
                root.and_then(|r| r.descendant_for_byte_range(scope.start, scope.end))
                    .map(|f| crate::locals::names_bound_in(s, src, f))
                    .unwrap_or_default()
            });
        names.contains(name)
    }

    /// The bytes of the outermost function open at this point of the walk
    /// (else, unless `function_only`, the outermost definition, else the
    /// whole file): where a local variable of the code being walked can be
    /// bound.
    pub(crate) fn outer_scope(&self, function_only: bool) -> Option<std::ops::Range<usize>> {
        let function = self.scopes.iter().find(|&&(i, _, _)| {
            matches!(
                self.facts.symbols[i].kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            )
        });
        if function_only && function.is_none() {
            return None;
        }
        Some(match function.or(self.scopes.first()) {
            // The node's own range: the function's node, found again from
            // it, not its parent (a span from an attribute outside it).
            Some(&(i, _, start)) => {
                let span = &self.facts.symbols[i].span;
                start..(span.end_byte as usize).min(self.src.len())
            }
            None => 0..self.src.len(),
        })
    }

    /// The source text of a node (lossy for invalid UTF-8).
    pub(crate) fn text(&self, node: Node<'_>) -> Cow<'t, str> {
        let bytes = self
            .src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or_default();
        String::from_utf8_lossy(bytes)
    }

    /// The source bytes of a node.
    pub(crate) fn bytes(&self, node: Node<'_>) -> &'t [u8] {
        self.src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or_default()
    }

    /// Puts `prefix` (a decorator that changes what the symbol is, such as
    /// Python's `@overload`) before symbol `index`'s signature.
    pub(crate) fn prefix_signature(&mut self, index: usize, prefix: &str) {
        let s = &mut self.facts.symbols[index].signature;
        *s = format!("{prefix} {s}");
    }

    /// The symbols recorded so far.
    pub(crate) fn symbols(&self) -> &[ExtractedSymbol] {
        &self.facts.symbols
    }

    /// The parent of the current node (`None` for the root).
    pub(crate) fn parent(&self) -> Option<Node<'t>> {
        self.levels[self.depth as usize].parent
    }

    /// The innermost open container, if any.
    pub(crate) fn container(&self) -> Option<usize> {
        self.scopes.last().map(|&(s, _, _)| s)
    }

    /// The kind of the innermost open container, if any.
    pub(crate) fn container_kind(&self) -> Option<SymbolKind> {
        self.container().map(|i| self.facts.symbols[i].kind)
    }

    /// Marks the current node as a comment, possibly documenting what follows.
    pub(crate) fn comment(&mut self, node: Node<'t>) {
        self.role = DocRole::Comment;
        let level = &mut self.levels[self.depth as usize];
        let start_row = node.start_position().row;
        let trailing = !level.prev_was_comment
            && level
                .prev
                .is_some_and(|p| p.end_position().row == start_row);
        if trailing {
            level.comments.clear();
            return;
        }
        if level.comments.is_empty() || level.run_end_row + 1 < start_row {
            level.comments.clear();
        }
        level.comments.push((node.start_byte(), node.end_byte()));
        level.run_end_row = last_row(node);
    }

    /// Marks the current node as sitting between a doc comment and its item.
    pub(crate) fn doc_transparent(&mut self) {
        self.role = DocRole::Transparent;
    }

    /// The doc comment directly above the current node, cleaned.
    pub(crate) fn doc_comment(&self, node: Node<'_>, style: DocStyle) -> String {
        let level = &self.levels[self.depth as usize];
        if level.comments.is_empty() || level.run_end_row + 1 < node.start_position().row {
            return String::new();
        }
        let text_of = |&(s, e): &(usize, usize)| self.src.get(s..e).unwrap_or_default();
        match style {
            DocStyle::AnyComment => source_text::clean_comments(level.comments.iter().map(text_of)),
            DocStyle::JsDoc => match level.comments.last().map(text_of) {
                Some(c) if c.starts_with(b"/**") && !c.starts_with(b"/**/") => {
                    source_text::clean_comments(std::iter::once(c))
                }
                _ => String::new(),
            },
            DocStyle::RustOuter => source_text::clean_comments(
                level
                    .comments
                    .iter()
                    .map(text_of)
                    .filter(|c| is_rust_outer_doc(c)),
            ),
        }
    }

    /// Records a symbol found at the current node and returns its index.
    /// A name quoted in backticks (Kotlin's `` `a test` ``, Swift's
    /// `` `default` ``, Scala's) is recorded without them.
    ///
    /// `span` covers the whole definition; the signature runs from its start
    /// to `body` (or its end). `qualifier` is put between the container's
    /// qualified name and the symbol's name (Go receivers, `A::f` in C++).
    /// With `opens_scope`, the symbol becomes the container of everything
    /// below the current node.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        span: Node<'_>,
        body: Option<Node<'_>>,
        doc: String,
        qualifier: Option<&str>,
        opens_scope: bool,
    ) -> usize {
        let name = source_text::unquoted(name);
        let parent = self.container();
        let mut qualified_name = String::new();
        if let Some(p) = parent {
            qualified_name.push_str(&self.facts.symbols[p].qualified_name);
            qualified_name.push('.');
        }
        if let Some(q) = qualifier.filter(|q| !q.is_empty()) {
            qualified_name.push_str(q);
            qualified_name.push('.');
        }
        qualified_name.push_str(name);
        let span = self.span_of(span);
        let (start, end) = (span.start_byte as usize, span.end_byte as usize);
        let sig_end = body.map_or(end, |b| b.start_byte().clamp(start, end));
        let signature = source_text::signature(self.src.get(start..sig_end).unwrap_or_default());
        let content_hash = xxhash_rust::xxh3::xxh3_64(self.src.get(start..end).unwrap_or_default());
        let index = self.facts.symbols.len();
        self.facts.symbols.push(ExtractedSymbol {
            name: name.to_string(),
            kind,
            parent,
            qualified_name,
            span,
            signature,
            doc,
            content_hash,
        });
        if opens_scope {
            self.scopes
                .push((index, self.depth, span.start_byte as usize));
        }
        index
    }

    /// Closes the scope `index` opened before the walk leaves its node: for
    /// definitions read off a macro's tokens, which have no nodes of their
    /// own to leave.
    pub(crate) fn close_scope(&mut self, index: usize) {
        if self.scopes.last().is_some_and(|&(s, _, _)| s == index) {
            self.scopes.pop();
        }
    }

    /// Marks a symbol as a declaration whose body is elsewhere (a C or C++
    /// prototype): its signature keeps the declaration's `;`, as the source
    /// writes it, which is how a reader tells it from the definition
    /// ([`sno_journal::model::Symbol::is_declaration`]).
    pub(crate) fn mark_declaration(&mut self, index: usize) {
        if let Some(s) = self.facts.symbols.get_mut(index) {
            if !s.signature.ends_with(';') {
                s.signature.push(';');
            }
        }
    }

    /// Moves the start of a symbol's span back to `head`'s, for a definition
    /// the grammar split in two (a macro call heading a block), and takes
    /// its signature from there to the body.
    pub(crate) fn widen_start(&mut self, index: usize, head: Node<'_>) {
        let Some(s) = self.facts.symbols.get_mut(index) else {
            return;
        };
        let old_start = s.span.start_byte as usize;
        let start = head.start_byte().min(old_start);
        let p = head.start_position();
        move_start(s, self.src, start, p.row, p.column);
        s.signature = source_text::signature(self.src.get(start..old_start).unwrap_or_default());
    }

    /// Moves the start of a symbol's span back to `head`'s and keeps its
    /// signature: a definition's decorators or attributes are part of it
    /// (`@click.option(...)` is a command's interface, `@property` says how
    /// it is used), not part of its signature line.
    pub(crate) fn extend_start(&mut self, index: usize, head: Node<'_>) {
        let Some(s) = self.facts.symbols.get_mut(index) else {
            return;
        };
        if head.start_byte() >= s.span.start_byte as usize {
            return;
        }
        let p = head.start_position();
        move_start(s, self.src, head.start_byte(), p.row, p.column);
    }

    /// Moves the start of a C or C++ definition's span forward past the
    /// statements error recovery swept into its head (see
    /// [`source_text::start_after_stray_head`]), when a child of `node`
    /// before `name` is an error: its signature, hash and doc comment are
    /// taken from the real start.
    pub(crate) fn drop_stray_head(
        &mut self,
        index: usize,
        node: Node<'_>,
        name: Node<'_>,
        body: Option<Node<'_>>,
    ) {
        let mut cursor = node.walk();
        let swept = node
            .children(&mut cursor)
            .take_while(|c| c.start_byte() < name.start_byte())
            .any(|c| c.is_error());
        if !swept {
            return;
        }
        let head_start = node.start_byte();
        let Some(head) = self.src.get(head_start..name.start_byte()) else {
            return;
        };
        let Some((offset, doc)) = source_text::start_after_stray_head(head) else {
            return;
        };
        let start = head_start + offset;
        let doc = source_text::clean_comments(doc.iter().map(|&(s, e)| &head[s..e]));
        let before = &head[..offset];
        let rows = before.iter().filter(|&&b| b == b'\n').count();
        let col = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
        let col = if rows == 0 {
            node.start_position().column + col
        } else {
            col
        };
        let Some(s) = self.facts.symbols.get_mut(index) else {
            return;
        };
        move_start(s, self.src, start, node.start_position().row + rows, col);
        let end = s.span.end_byte as usize;
        let sig_end = body.map_or(end, |b| b.start_byte().clamp(start, end));
        s.signature = source_text::signature(self.src.get(start..sig_end).unwrap_or_default());
        s.doc = doc;
    }

    /// Moves the end of a symbol's span back over trailing whitespace, for
    /// grammars whose indented blocks run on to the next token (Scala 3), and
    /// hashes what is left.
    pub(crate) fn trim_span_end(&mut self, index: usize) {
        let Some(s) = self.facts.symbols.get_mut(index) else {
            return;
        };
        let (start, old_end) = (s.span.start_byte as usize, s.span.end_byte as usize);
        let mut end = old_end;
        while end > start && self.src.get(end - 1).is_some_and(u8::is_ascii_whitespace) {
            end -= 1;
        }
        if end == old_end {
            return;
        }
        let lines_dropped = memchr::memchr_iter(b'\n', &self.src[end..old_end]).count();
        let line_start = self.src[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        s.span.end_line = s.span.end_line.saturating_sub(to_u32(lines_dropped));
        s.span.end_col = to_u32(end - line_start + 1);
        s.span.end_byte = to_u32(end);
        s.content_hash = xxhash_rust::xxh3::xxh3_64(&self.src[start..end]);
    }

    /// A node's span, without a trailing line break some grammars include
    /// (`#define`, `#include`), so a one-line definition ends on its own line.
    fn span_of(&self, node: Node<'_>) -> Span {
        let (s, e) = (node.start_position(), node.end_position());
        let (start_byte, mut end_byte) = (node.start_byte(), node.end_byte());
        let mut end = (e.row, e.column);
        if e.column == 0 && e.row > s.row && end_byte > start_byte {
            while end_byte > start_byte && matches!(self.src.get(end_byte - 1), Some(b'\n' | b'\r'))
            {
                end_byte -= 1;
            }
            let line_start = self.src[..end_byte]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            end = (e.row - 1, end_byte - line_start);
        }
        Span {
            start_line: to_u32(s.row + 1),
            start_col: to_u32(s.column + 1),
            end_line: to_u32(end.0 + 1),
            end_col: to_u32(end.1 + 1),
            start_byte: to_u32(start_byte),
            end_byte: to_u32(end_byte),
        }
    }

    /// Records an import.
    pub(crate) fn import(
        &mut self,
        module: String,
        names: Vec<String>,
        alias: Option<String>,
        is_relative: bool,
        at: Node<'_>,
    ) {
        self.facts.imports.push(Import {
            module,
            names,
            alias,
            is_relative,
            line: line_of(at),
        });
    }

    /// Records a call of `callee` at `at`, from the innermost container.
    pub(crate) fn call(&mut self, callee: &str, receiver: Option<String>, at: Node<'_>) {
        let callee = source_text::unquoted(callee.trim());
        if callee.is_empty() {
            return;
        }
        let p = at.start_position();
        self.facts.calls.push(CallSite {
            caller: self.container(),
            callee: callee.to_string(),
            receiver,
            line: to_u32(p.row + 1),
            column: to_u32(p.column + 1),
        });
    }

    /// Records that `symbol` inherits from (implements, embeds) the type
    /// written at `base`.
    pub(crate) fn inherit(&mut self, symbol: usize, base: Node<'_>) {
        let text = self.text(base);
        let name = source_text::base_name(&text);
        if !name.is_empty() {
            self.facts.inherits.push(Inheritance {
                symbol,
                base: name.to_string(),
                line: line_of(base),
            });
        }
    }

    fn diagnose(&mut self, node: Node<'t>) {
        if self.facts.diagnostics.len() >= MAX_DIAGNOSTICS {
            return;
        }
        let p = node.start_position();
        let message = if node.is_missing() {
            format!("missing `{}`", node.kind())
        } else if node.is_error() {
            if self.error_depth.is_some() {
                return;
            }
            self.error_depth = Some(self.depth);
            let excerpt = source_text::excerpt(self.bytes(node));
            if excerpt.is_empty() {
                "syntax error".to_string()
            } else {
                format!("syntax error near `{excerpt}`")
            }
        } else {
            return;
        };
        self.facts.diagnostics.push(Diagnostic {
            line: to_u32(p.row + 1),
            column: to_u32(p.column + 1),
            message,
        });
    }

    /// Called for every node after `enter` (named or not) to keep the
    /// comment run of its level up to date; returns the run to hand to the
    /// node's children, if it documents this node.
    fn after_enter(&mut self, node: Node<'t>, named: bool) -> bool {
        let d = self.depth as usize;
        let level = &mut self.levels[d];
        let pass_down;
        if !named {
            // Punctuation and keywords neither take nor break a run.
            pass_down = false;
        } else {
            match self.role {
                DocRole::Comment => pass_down = false,
                DocRole::Transparent => {
                    if level.run_end_row + 1 >= node.start_position().row {
                        level.run_end_row = last_row(node);
                    } else {
                        level.comments.clear();
                    }
                    pass_down = false;
                }
                DocRole::Item => {
                    // A wrapper (`export`, `template <..>`, Go's `type (..)`)
                    // passes the comments above it to what it wraps.
                    pass_down = !level.comments.is_empty()
                        && level.run_end_row + 1 >= node.start_position().row;
                    if !pass_down {
                        level.comments.clear();
                    }
                }
            }
        }
        level.prev = Some(node);
        level.prev_was_comment = named && self.role == DocRole::Comment;
        pass_down
    }

    fn enter_children(&mut self, parent_node: Node<'t>, pass_down: bool) {
        let d = self.depth as usize;
        if self.levels.len() <= d + 1 {
            self.levels.push(Level::default());
        }
        let (upper, lower) = self.levels.split_at_mut(d + 1);
        let parent = &mut upper[d];
        let child = &mut lower[0];
        child.comments.clear();
        child.prev = None;
        child.prev_was_comment = false;
        child.parent = Some(parent_node);
        if pass_down {
            child.comments.extend_from_slice(&parent.comments);
            child.run_end_row = parent.run_end_row;
            parent.comments.clear();
        }
        self.depth += 1;
    }

    fn leave(&mut self) {
        while self.scopes.last().is_some_and(|&(_, d, _)| d >= self.depth) {
            self.scopes.pop();
        }
        if self.error_depth.is_some_and(|d| d >= self.depth) {
            self.error_depth = None;
        }
    }
}

/// Walks `tree` once in pre-order, calling `rules` on every named node.
pub(crate) fn walk<'t, R: Rules<'t>>(
    lang: Language,
    tree: &'t Tree,
    src: &'t [u8],
    rules: &mut R,
) -> Walk<'t> {
    let mut w = Walk::new(lang, src);
    w.root = Some(tree.root_node());
    let check_errors = tree.root_node().has_error();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        let named = node.is_named();
        if check_errors && (node.is_error() || node.is_missing()) {
            w.diagnose(node);
        }
        w.role = DocRole::Item;
        // A node whose children are all leaves holds nothing to record
        // (every fact sits on a node with children of its own), and a node
        // the rules skip holds nothing either; both are still walked when
        // they contain a syntax error, so it gets reported. Not stepping
        // through leaves no one looks at spares a good part of the walk.
        let descend = named && rules.enter(&mut w, node) && has_grandchildren(node)
            || check_errors && node.has_error();
        let pass_down = w.after_enter(node, named);
        if descend && cursor.goto_first_child() {
            w.enter_children(node, pass_down);
            continue;
        }
        if pass_down {
            w.levels[w.depth as usize].comments.clear();
        }
        loop {
            w.leave();
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return w;
            }
            w.depth -= 1;
        }
    }
}

impl Walk<'_> {
    /// The facts gathered by the walk.
    pub(crate) fn into_facts(self) -> FileFacts {
        self.facts
    }
}

/// Whether some child of `node` has children: the node's descendants
/// (counted with itself) outnumber it and its children. Both counts are
/// stored in the tree.
fn has_grandchildren(node: Node<'_>) -> bool {
    node.descendant_count() > node.child_count() as usize + 1
}

/// Starts a symbol's span at byte `start`, on 0-based `row` and `column`,
/// and hashes its content from there.
fn move_start(s: &mut ExtractedSymbol, src: &[u8], start: usize, row: usize, column: usize) {
    s.span.start_line = to_u32(row + 1);
    s.span.start_col = to_u32(column + 1);
    s.span.start_byte = to_u32(start);
    let end = s.span.end_byte as usize;
    s.content_hash = xxhash_rust::xxh3::xxh3_64(src.get(start..end).unwrap_or_default());
}

/// The last row a node covers, not counting a trailing line break (line
/// comments in some grammars end at column 0 of the next row).
fn last_row(node: Node<'_>) -> usize {
    let (s, e) = (node.start_position(), node.end_position());
    if e.column == 0 && e.row > s.row {
        e.row - 1
    } else {
        e.row
    }
}

/// Whether a comment is a Rust outer doc comment (`///`, `/** */`), not a
/// plain one (`////`, `/***`, `/**/`).
pub(crate) fn is_rust_outer_doc(c: &[u8]) -> bool {
    (c.starts_with(b"///") && !c.starts_with(b"////"))
        || (c.starts_with(b"/**") && !c.starts_with(b"/***") && c != b"/**/")
}

/// The children of `node` in field `field` (a field can repeat: Go's
/// `a, b int`, C's `int x, y;`).
pub(crate) fn field_children(node: Node<'_>, field: u16) -> Vec<Node<'_>> {
    let Some(field) = std::num::NonZeroU16::new(field) else {
        return Vec::new();
    };
    let mut cursor = node.walk();
    node.children_by_field_id(field, &mut cursor).collect()
}

/// The 1-based line a node starts on.
pub(crate) fn line_of(node: Node<'_>) -> u32 {
    to_u32(node.start_position().row + 1)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
