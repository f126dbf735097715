//! Local variables that hide a function of their name. A bare call of a
//! name bound in a block around it (`load := newLoader()` in Go, `let load
//! = || 2;` in Rust, `for (const load of loaders)` in JavaScript) calls
//! that variable's value, not the file's or the package's `load`: it is no
//! call of any definition, and recording it would make resolution call it
//! exact. Go, Rust, JavaScript/TypeScript, Kotlin, Swift, C# and Scala.
//!
//! Block-scoped languages only: a binding counts for the statements after
//! it in its block, and a loop, closure, `if let` or `catch` binds for the
//! part of it the call is in. The search walks up from the call and stops
//! at the named function around it (its parameters are read from its
//! signature at resolution, `sno_index::params`). Python decides per
//! function and is handled in its extractor.

use tree_sitter::Node;

/// How a language binds local names.
pub(crate) struct Scoping {
    /// Named definitions: the walk ends at them.
    pub stops: &'static [&'static str],
    /// Statements that bind names for the statements after them, each
    /// with the fields holding its targets (none listed: the whole
    /// statement, less [`Scoping::not_bound`] fields).
    pub declarations: &'static [(&'static str, &'static [&'static str])],
    /// Constructs that bind names for one part of themselves (the part is
    /// the field named second; `""`: any part but the binding's own), with
    /// the fields holding the targets (none: the construct itself, less
    /// [`Scoping::not_bound`] fields), and the kind a name must be inside
    /// to be bound there (Rust's `let` in an `if` condition).
    pub around: &'static [Around],
    /// The kinds of a bound name inside a target.
    pub names: &'static [&'static str],
    /// Fields inside a target that bind nothing (a pattern's type, a
    /// default value, a key).
    pub not_bound: &'static [&'static str],
    /// Kinds a target is not looked into (a path of names in a pattern).
    pub opaque: &'static [&'static str],
    /// A declaration of a value of these kinds is a definition the
    /// extractor recorded (a JavaScript `const f = () => ...`): resolution
    /// reaches it, so it hides nothing here.
    pub defined: &'static [&'static str],
    /// Where a variable and a function of one name live apart (Kotlin),
    /// the kinds of value that make a declared variable callable; empty:
    /// any declared variable hides the function.
    pub function_values: &'static [&'static str],
}

/// A construct binding names for a part of itself: (kind, part, fields,
/// only inside).
pub(crate) type Around = (
    &'static str,
    &'static str,
    &'static [&'static str],
    Option<&'static str>,
);

/// Whether the bare call of `name` at `call` calls a local variable.
pub(crate) fn bound_locally(s: &Scoping, src: &[u8], call: Node<'_>, name: &str) -> bool {
    let text = |n: Node<'_>| n.utf8_text(src).unwrap_or_default();
    let mut child = call;
    while let Some(parent) = child.parent() {
        if s.stops.contains(&parent.kind()) {
            return false;
        }
        for &(kind, part, fields, under) in s.around {
            if parent.kind() != kind {
                continue;
            }
            let on_part = part.is_empty()
                || parent
                    .child_by_field_name(part)
                    .is_some_and(|p| p.id() == child.id());
            if !on_part {
                continue;
            }
            for t in targets_of(parent, fields) {
                if t.id() != child.id() && binds(s, t, name, under, &text) {
                    return true;
                }
            }
        }
        let mut cursor = parent.walk();
        for sib in parent.named_children(&mut cursor) {
            if sib.start_byte() >= child.start_byte() {
                break;
            }
            if declares(s, sib, name, &text) {
                return true;
            }
        }
        child = parent;
    }
    false
}

/// Whether statement `stmt` declares `name` for the statements after it.
fn declares<'t>(
    s: &Scoping,
    stmt: Node<'t>,
    name: &str,
    text: &dyn Fn(Node<'t>) -> &'t str,
) -> bool {
    let Some(&(_, fields)) = s.declarations.iter().find(|(k, _)| *k == stmt.kind()) else {
        return false;
    };
    if !holds_function_value(s, stmt) {
        return false;
    }
    targets_of(stmt, fields)
        .into_iter()
        .any(|t| binds(s, t, name, None, text))
}

/// A binding construct's targets: the nodes at `fields`, or the construct
/// itself when none are listed.
fn targets_of<'t>(node: Node<'t>, fields: &[&str]) -> Vec<Node<'t>> {
    if fields.is_empty() {
        return vec![node];
    }
    fields.iter().flat_map(|f| children_at(node, f)).collect()
}

/// Every name `function` binds anywhere in it (in any block, by any
/// declaration or construct): a call of a name not among them calls no
/// local, whatever the blocks.
pub(crate) fn names_bound_in(
    s: &Scoping,
    src: &[u8],
    function: Node<'_>,
) -> rustc_hash::FxHashSet<String> {
    let text = |n: Node<'_>| n.utf8_text(src).unwrap_or_default().to_string();
    let mut out = rustc_hash::FxHashSet::default();
    let mut targets = Vec::new();
    let mut stack = vec![function];
    while let Some(n) = stack.pop() {
        #[cfg(test)]
        WALKED.with(|w| w.set(w.get() + 1));
        let kind = n.kind();
        let declared = s.declarations.iter().find(|(k, _)| *k == kind);
        if let Some(&(_, fields)) = declared.filter(|_| holds_function_value(s, n)) {
            targets.extend(targets_of(n, fields).into_iter().map(|t| (t, None)));
        }
        for &(_, _, fields, under) in s.around.iter().filter(|a| a.0 == kind) {
            targets.extend(targets_of(n, fields).into_iter().map(|t| (t, under)));
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    for (t, under) in targets {
        names_in(s, t, under, &mut |n| {
            out.insert(text(n));
            false
        });
    }
    out
}

#[cfg(test)]
thread_local! {
    /// Nodes [`names_bound_in`] walked on this thread: what tests bound.
    pub(crate) static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a declaration can make its names callable
/// ([`Scoping::function_values`]).
fn holds_function_value(s: &Scoping, declaration: Node<'_>) -> bool {
    if s.function_values.is_empty() {
        return true;
    }
    let mut cursor = declaration.walk();
    let found = declaration
        .named_children(&mut cursor)
        .any(|c| s.function_values.contains(&c.kind()));
    found
}

/// The children of `node` in field `at`, or of kind `k` for `#k` (for
/// grammars that name few fields, such as Kotlin's); steps joined by `/`
/// go down from each child found (`#variable_declarator/name`).
fn children_at<'t>(node: Node<'t>, at: &str) -> Vec<Node<'t>> {
    let mut found = vec![node];
    for step in at.split('/') {
        let mut next = Vec::new();
        for n in found {
            let mut cursor = n.walk();
            match step.strip_prefix('#') {
                Some(kind) => {
                    next.extend(n.named_children(&mut cursor).filter(|c| c.kind() == kind))
                }
                None => next.extend(n.children_by_field_name(step, &mut cursor)),
            }
        }
        found = next;
    }
    found
}

/// Whether `target` (a pattern, a list of names, a declaration) binds
/// `name`; with `under`, only a name inside a node of that kind does.
fn binds<'t>(
    s: &Scoping,
    target: Node<'t>,
    name: &str,
    under: Option<&str>,
    text: &dyn Fn(Node<'t>) -> &'t str,
) -> bool {
    names_in(s, target, under, &mut |n| text(n) == name)
}

/// Calls `each` with every name `target` binds, until it returns true
/// (and then returns true); with `under`, only names inside a node of
/// that kind.
fn names_in<'t>(
    s: &Scoping,
    target: Node<'t>,
    under: Option<&str>,
    each: &mut dyn FnMut(Node<'t>) -> bool,
) -> bool {
    let mut stack = vec![(target, under.is_none())];
    while let Some((n, inside)) = stack.pop() {
        let inside = inside || under == Some(n.kind());
        if s.names.contains(&n.kind()) {
            if inside && !is_defined(s, n) && each(n) {
                return true;
            }
            continue;
        }
        if s.opaque.contains(&n.kind()) {
            continue;
        }
        let mut cursor = n.walk();
        if cursor.goto_first_child() {
            loop {
                let skip = cursor
                    .field_name()
                    .is_some_and(|f| s.not_bound.contains(&f));
                let c = cursor.node();
                if !skip && c.is_named() {
                    stack.push((c, inside));
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }
    false
}

/// Whether the name `n` is declared with a value the extractor recorded as
/// a definition of its own.
fn is_defined(s: &Scoping, n: Node<'_>) -> bool {
    n.parent()
        .and_then(|p| p.child_by_field_name("value"))
        .is_some_and(|v| s.defined.contains(&v.kind()))
}

/// Kotlin: `val`/`var`, a `for` variable, a lambda's or an anonymous
/// function's parameters, `catch (e: E)`.
pub(crate) const KOTLIN: Scoping = Scoping {
    stops: &["function_declaration", "class_body", "source_file"],
    // Kotlin keeps a property and a function of one name apart: `val
    // total = total()` then `total()` calls the function. Only a value
    // that is a function (a lambda, an anonymous function, a reference)
    // is called by the name, as is a lambda's parameter.
    declarations: &[(
        "property_declaration",
        &["#variable_declaration", "#multi_variable_declaration"],
    )],
    around: &[
        ("lambda_literal", "", &["#lambda_parameters"], None),
        (
            "anonymous_function",
            "",
            &["#function_value_parameters"],
            None,
        ),
    ],
    names: &["identifier"],
    not_bound: &[],
    opaque: &["block", "function_body"],
    defined: &[],
    function_values: &["lambda_literal", "anonymous_function", "callable_reference"],
};

/// Swift: `let`/`var`, `guard let` (for the rest of its block), `if let`,
/// a `for` item, a closure's parameters, `catch let e`.
pub(crate) const SWIFT: Scoping = Scoping {
    stops: &[
        "function_declaration",
        "class_body",
        "protocol_body",
        "source_file",
    ],
    declarations: &[
        ("property_declaration", &["name"]),
        ("guard_statement", &["bound_identifier", "name"]),
    ],
    around: &[
        ("for_statement", "", &["item"], None),
        ("if_statement", "", &["bound_identifier", "name"], None),
        ("lambda_literal", "", &["type"], None),
        ("catch_block", "", &["error"], None),
    ],
    names: &["simple_identifier"],
    not_bound: &[
        "type",
        "value",
        "computed_value",
        "external_name",
        "return_type",
    ],
    opaque: &["statements"],
    defined: &[],
    function_values: &[],
};

/// Python, for the names a function binds anywhere (a superset: nested
/// scopes too); which call they hide is decided per function in
/// `lang/python.rs`, as Python decides it.
pub(crate) const PYTHON: Scoping = Scoping {
    stops: &[],
    declarations: &[
        ("assignment", &["left"]),
        ("augmented_assignment", &["left"]),
        ("for_statement", &["left"]),
        ("named_expression", &["name"]),
    ],
    around: &[
        ("for_in_clause", "", &["left"], None),
        ("as_pattern", "", &["alias"], None),
        ("except_clause", "", &["alias"], None),
        ("lambda", "", &["parameters"], None),
    ],
    names: &["identifier"],
    not_bound: &["value", "type"],
    opaque: &[],
    defined: &[],
    function_values: &[],
};

/// C#: a local variable (a delegate when called), `foreach`, a `for` or
/// `using` declaration, a lambda's parameters, `catch (E e)`. Locals hide
/// members of their name.
pub(crate) const CSHARP: Scoping = Scoping {
    stops: &[
        "method_declaration",
        "constructor_declaration",
        "operator_declaration",
        "accessor_declaration",
        "class_declaration",
        "struct_declaration",
        "record_declaration",
        "compilation_unit",
    ],
    declarations: &[(
        "local_declaration_statement",
        &["#variable_declaration/#variable_declarator/name"],
    )],
    around: &[
        ("foreach_statement", "body", &["left"], None),
        (
            "for_statement",
            "body",
            &["initializer/#variable_declarator/name"],
            None,
        ),
        (
            "using_statement",
            "body",
            &["#variable_declaration/#variable_declarator/name"],
            None,
        ),
        ("lambda_expression", "body", &["parameters"], None),
        ("catch_clause", "body", &["#catch_declaration/name"], None),
    ],
    names: &["identifier"],
    not_bound: &["type"],
    opaque: &["block"],
    defined: &[],
    function_values: &[],
};

/// Scala: `val`/`var` (one namespace for values and methods), a lambda's
/// parameters, a `case` pattern.
pub(crate) const SCALA: Scoping = Scoping {
    stops: &["function_definition", "template_body", "compilation_unit"],
    declarations: &[
        ("val_definition", &["pattern"]),
        ("var_definition", &["pattern"]),
    ],
    around: &[
        ("lambda_expression", "", &["parameters"], None),
        ("case_clause", "body", &["pattern"], None),
    ],
    names: &["identifier"],
    not_bound: &["type", "value", "return_type"],
    opaque: &["block", "indented_block"],
    defined: &[],
    function_values: &[],
};

/// Go: `x := ...`, `var x = ...`, a `for`/`if`/`switch` initializer, a
/// `range`, a function literal's parameters.
pub(crate) const GO: Scoping = Scoping {
    stops: &["function_declaration", "method_declaration", "source_file"],
    declarations: &[
        ("short_var_declaration", &["left"]),
        ("var_declaration", &[]),
    ],
    around: &[
        ("func_literal", "body", &["parameters"], None),
        (
            "for_statement",
            "body",
            &["#range_clause", "#for_clause"],
            None,
        ),
        ("if_statement", "", &["initializer"], None),
        ("expression_switch_statement", "", &["initializer"], None),
        ("type_switch_statement", "", &["alias", "initializer"], None),
        // `case v := <-ch:` binds `v` for the case's statements.
        ("communication_case", "", &["communication/left"], None),
    ],
    names: &["identifier"],
    not_bound: &[
        "type",
        "value",
        "right",
        "condition",
        "update",
        "body",
        "result",
    ],
    opaque: &["block"],
    defined: &[],
    function_values: &[],
};

/// Rust: `let`, `for`, closure parameters, `if let` / `while let`, a match
/// arm's pattern.
pub(crate) const RUST: Scoping = Scoping {
    stops: &["function_item", "function_signature_item", "source_file"],
    // A `static` or `const` inside a function is a local name too.
    declarations: &[
        ("let_declaration", &["pattern"]),
        ("static_item", &["name"]),
        ("const_item", &["name"]),
    ],
    around: &[
        ("closure_expression", "body", &["parameters"], None),
        ("for_expression", "body", &["pattern"], None),
        ("match_arm", "value", &["pattern"], None),
        (
            "if_expression",
            "consequence",
            &["condition"],
            Some("let_condition"),
        ),
        (
            "while_expression",
            "body",
            &["condition"],
            Some("let_condition"),
        ),
    ],
    names: &["identifier", "shorthand_field_identifier"],
    // A match arm's guard (`s if s > max()`) is no pattern.
    not_bound: &["type", "value", "alternative", "return_type", "condition"],
    opaque: &[
        "scoped_identifier",
        "scoped_type_identifier",
        "generic_type",
        "block",
    ],
    defined: &[],
    function_values: &[],
};

/// JavaScript and TypeScript: `let`/`const`/`var`, `for ... of/in`, a
/// `for` initializer, `catch (e)`, an anonymous function's parameters. A
/// `const f = () => ...` is a definition the extractor recorded.
pub(crate) const JAVASCRIPT: Scoping = Scoping {
    stops: &[
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "class_body",
        "program",
    ],
    declarations: &[("lexical_declaration", &[]), ("variable_declaration", &[])],
    around: &[
        ("for_in_statement", "body", &["left"], None),
        ("for_statement", "body", &["initializer"], None),
        ("catch_clause", "body", &["parameter"], None),
        ("arrow_function", "body", &["parameter", "parameters"], None),
        ("function_expression", "body", &["parameters"], None),
    ],
    names: &["identifier", "shorthand_property_identifier_pattern"],
    not_bound: &["value", "right", "key", "type", "return_type", "body"],
    opaque: &["statement_block"],
    defined: &[
        "arrow_function",
        "function_expression",
        "function",
        "class",
        "generator_function",
    ],
    function_values: &[],
};

#[cfg(test)]
mod tests {
    use sno_journal::model::Language;

    use crate::lang::test_support::calls;

    /// The calls of `load` recorded in `src`, as "caller @line".
    fn loads(lang: Language, src: &str) -> Vec<String> {
        let f = crate::extract(lang, src.as_bytes());
        calls(&f)
            .into_iter()
            .filter(|c| c.contains("-> load @"))
            .collect()
    }

    #[test]
    fn go_locals_hide_the_package_function() {
        let src = "package p

func load() int { return 1 }

func short() int {
	load := func() int { return 2 }
	return load()
}

func ranged(fs []func()) {
	for _, load := range fs {
		load()
	}
}

func declared() int {
	var load func() int
	return load()
}

func literal() func(func() int) int {
	return func(load func() int) int { return load() }
}

func before() int {
	x := load()
	load := 3
	return x + load
}

func elsewhere() int {
	if load := 2; load > 1 {
		return 0
	}
	return load()
}

func condition() {
	for load() > 0 {
		load()
	}
}

func selected(ch chan func() int) {
	select {
	case load := <-ch:
		load()
	default:
		load()
	}
}
";
        assert_eq!(
            loads(Language::Go, src),
            [
                "before -> load @26",
                "elsewhere -> load @35",
                "condition -> load @39",
                "condition -> load @40",
                "selected -> load @49"
            ]
        );
    }

    #[test]
    fn rust_locals_hide_the_function() {
        let src = "fn load() -> i32 { 1 }

fn closure() -> i32 {
    let load = || 2;
    load()
}

fn looped(fs: Vec<fn() -> i32>) {
    for load in fs {
        load();
    }
}

fn matched(f: Option<fn() -> i32>) -> i32 {
    if let Some(load) = f {
        return load();
    }
    match f {
        Some(load) => load(),
        None => load(),
    }
}

fn param() -> i32 {
    let g = |load: fn() -> i32| load();
    g(load)
}

fn after() -> i32 {
    let x = load();
    let load = 3;
    x + load
}

fn guarded(s: i32) -> i32 {
    match s {
        s if s > load() => load(),
        _ => 0,
    }
}

fn held() -> i32 {
    static load: fn() -> i32 = other;
    load()
}
";
        assert_eq!(
            loads(Language::Rust, src),
            [
                "matched -> load @20",
                "after -> load @30",
                "guarded -> load @37",
                "guarded -> load @37"
            ]
        );
    }

    #[test]
    fn javascript_locals_hide_the_function_but_a_function_value_is_a_definition() {
        let src = "function load() { return 1; }

function looped(xs) {
  for (const load of xs) { load(); }
}

function declared() {
  let load = make();
  return load();
}

function destructured({ load }, [a, b]) {
  const { other: load2 } = a;
  return load();
}

function callback(xs) {
  return xs.map((load) => load());
}

function caught() {
  try { return 1; } catch (load) { return load(); }
}

function arrow() {
  const load = () => 2;
  return load();
}

function plain() {
  return load();
}
";
        let got = loads(Language::JavaScript, src);
        // `destructured`'s `load` is a parameter: resolution reads it from
        // the signature. `arrow`'s is a definition: resolution reaches it.
        assert_eq!(
            got,
            [
                "destructured -> load @14",
                "arrow -> load @27",
                "plain -> load @31"
            ]
        );
    }

    #[test]
    fn kotlin_and_swift_locals_hide_the_function() {
        let kt = "fun load(): Int = 1

fun a(): Int {
    val load = { 2 }
    return load()
}

fun looped(fs: List<() -> Int>) {
    for (load in fs) {
        load()
    }
}

fun lambda(): Int = run { { load: () -> Int -> load() }({ 3 }) }

fun b(): Int = load()

fun before(): Int {
    val x = load()
    val load = { 4 }
    return x + load()
}

fun value(): Int {
    val load = load()
    return load + load()
}
";
        assert_eq!(
            loads(Language::Kotlin, kt),
            // A loop variable's type is unknown (a function, or a value
            // beside the function of its name): its call is kept; a
            // value that is no function hides nothing (`value`).
            [
                "looped -> load @10",
                "b -> load @16",
                "before -> load @19",
                "value -> load @25",
                "value -> load @26"
            ]
        );
        let swift = "func load() -> Int { 1 }

func a() -> Int {
    let load = { 2 }
    return load()
}

func guarded(f: (() -> Int)?) -> Int {
    guard let load = f else { return 0 }
    return load()
}

func looped(fs: [() -> Int]) {
    for load in fs {
        load()
    }
}

func b() -> Int { load() }
";
        assert_eq!(loads(Language::Swift, swift), ["b -> load @19"]);
    }

    #[test]
    fn csharp_and_scala_locals_hide_the_method() {
        let cs = "class A {
    int load() { return 1; }

    int Local() {
        Func<int> load = () => 2;
        return load();
    }

    void Each(List<Func<int>> fs) {
        foreach (var load in fs) { load(); }
    }

    int Before() {
        var x = load();
        Func<int> load = () => 3;
        return x;
    }
}
";
        assert_eq!(loads(Language::CSharp, cs), ["A.Before -> load @14"]);
        let scala = "object A {
  def load(): Int = 1

  def local(): Int = {
    val load = () => 2
    load()
  }

  def lambda(): Int = ((load: () => Int) => load())(() => 3)

  def matched(f: Option[() => Int]): Int = f match {
    case Some(load) => load()
    case None => load()
  }

  def plain(): Int = load()
}
";
        assert_eq!(
            loads(Language::Scala, scala),
            ["A.matched -> load @13", "A.plain -> load @16"]
        );
    }
}
