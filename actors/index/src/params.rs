//! Parameter names read from a function's signature line: a bare call of a
//! name that a parameter of the calling function has calls what was passed
//! (`def run(process): return process()`), not a function of that name, so
//! resolution must not call it exact.
//!
//! Read from the signature text the extractor keeps (the declaration's
//! header joined onto one line, cut at 200 characters), so a list past the
//! cut is read as far as it goes: a name missed there leaves the call as it
//! was.

use sno_journal::model::Language;

/// Whether the bare call `callee`, made inside the functions whose
/// signatures are `signatures` (innermost first), names one of their
/// parameters, in a language where a parameter hides a function of its
/// name. Java, Ruby and PHP keep the two apart (a method call, `helper()`
/// with parentheses, `$helper()`): never there.
pub fn shadowed_by_parameter<'s>(
    lang: Language,
    callee: &str,
    signatures: impl IntoIterator<Item = &'s str>,
) -> bool {
    let name_first = match lang {
        Language::Python
        | Language::JavaScript
        | Language::TypeScript
        | Language::Tsx
        | Language::Go
        | Language::Rust
        | Language::Kotlin
        | Language::Swift
        | Language::Scala => true,
        Language::C | Language::Cpp | Language::CSharp => false,
        _ => return false,
    };
    // Every bare call asks: a signature that does not hold the name is
    // not parsed.
    signatures.into_iter().any(|sig| {
        sig.contains(callee)
            && parameter_names(sig, name_first, lang == Language::Go).any(|p| p == callee)
    })
}

/// The names of the parameters in a signature's parameter list: the first
/// parenthesised group outside `<...>` (a generic bound's `Fn(Event)` is no
/// parameter) that no `@Annotation` opens, and before it Go's receiver.
/// `name_first`: `name: Type` or `name Type` (Python, TypeScript, Go,
/// Rust, Kotlin, Swift, Scala); else `Type name` (C, C++, C#), where the
/// name is the last word, or the one in a function pointer's `(*name)`.
/// With `go`, Go's named results count too (Swift's `func` returning a
/// labelled tuple names no locals).
pub fn parameter_names(signature: &str, name_first: bool, go: bool) -> impl Iterator<Item = &str> {
    let groups = groups(signature);
    // `func (r *Runner) run(..)`: the receiver, then the parameters.
    let receiver = usize::from(signature.trim_start().starts_with("func ("));
    let mut take = receiver + 1;
    // Go's named results (`func f() (helper func() int, err error)`) are
    // locals too; unnamed ones (`(int, error)`) name nothing.
    if go
        && groups.get(take).is_some_and(|results| {
            top_level_commas(results)
                .iter()
                .any(|r| r.split_whitespace().nth(1).is_some())
        })
    {
        take += 1;
    }
    groups
        .into_iter()
        .take(take)
        .flat_map(top_level_commas)
        .filter_map(move |param| one_name(param, name_first))
}

/// A Go method's receiver: its name and its type's name, from the
/// signature (`func (mx *Mux[T]) handle()` gives `mx` and `Mux`).
pub fn go_receiver(signature: &str) -> Option<(&str, &str)> {
    let rest = signature.trim_start().strip_prefix("func (")?;
    let inside = &rest[..rest.find(')')?];
    let mut words = inside.split_whitespace();
    let (name, ty) = (words.next()?, words.next()?);
    let ty = ty.trim_start_matches('*');
    let ty = ty.split('[').next().unwrap_or(ty);
    (!ty.is_empty() && words.next().is_none()).then_some((name, ty))
}

/// The contents of each top-level `( ... )` group outside angle brackets
/// and not an annotation's arguments.
fn groups(sig: &str) -> Vec<&str> {
    let mut depth = 0usize;
    let mut angles = 0i32;
    let mut start = 0;
    let mut skip = false;
    let mut prev = ' ';
    let mut out = Vec::new();
    for (i, c) in sig.char_indices() {
        let arrow = c == '>' && matches!(prev, '=' | '-');
        prev = c;
        match c {
            '<' if depth == 0 => angles += 1,
            '>' if depth == 0 && !arrow => angles -= 1,
            '(' => {
                if depth == 0 {
                    start = i + 1;
                    skip = angles > 0 || annotated(&sig[..i]);
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 && !skip {
                    out.push(&sig[start..i]);
                }
            }
            _ => {}
        }
    }
    // A list the signature cuts off still names its first parameters.
    if depth > 0 && !skip {
        out.push(&sig[start..]);
    }
    out
}

/// Whether the text before a `(` ends in an annotation's name (`@Throws`).
fn annotated(before: &str) -> bool {
    let word = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.');
    word.ends_with('@')
}

/// The pieces of a parameter list between top-level commas.
fn top_level_commas(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut prev = ' ';
    for (i, c) in list.char_indices() {
        let arrow = c == '>' && matches!(prev, '=' | '-');
        prev = c;
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' if !arrow => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out
}

/// Words that stand before a parameter's name without being it.
const MODIFIERS: &[&str] = &[
    "mut",
    "ref",
    "in",
    "out",
    "params",
    "this",
    "const",
    "let",
    "var",
    "val",
    "inout",
    "vararg",
    "readonly",
    "public",
    "private",
    "protected",
    "override",
    "final",
    "_",
];

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
}

/// The name one parameter declares.
fn one_name(param: &str, name_first: bool) -> Option<&str> {
    // A default value is not part of the declaration.
    let decl = param.split('=').next().unwrap_or(param).trim();
    if decl.is_empty() {
        return None;
    }
    if name_first {
        // `name: Type` (the name is the last word before the colon: a Swift
        // label or a modifier comes first), or `name Type` (Go), or a bare
        // `name` / `*args` / `...rest`.
        let head = decl.split(':').next().unwrap_or(decl);
        let head_words: Vec<&str> = words(head).filter(|w| !MODIFIERS.contains(w)).collect();
        return if decl.contains(':') {
            head_words.last().copied()
        } else {
            head_words.first().copied()
        };
    }
    // `int (*name)(int)`: the name is the pointer's.
    if let Some(p) = decl.find("(*") {
        return words(&decl[p + 2..]).next();
    }
    words(decl).filter(|w| !MODIFIERS.contains(w)).last()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sig: &str, name_first: bool) -> Vec<&str> {
        parameter_names(sig, name_first, sig.starts_with("func")).collect()
    }

    #[test]
    fn each_languages_parameter_names_are_read() {
        assert_eq!(
            names("def run(process, *args, key: str = 'x', **kw):", true),
            ["process", "args", "key", "kw"]
        );
        assert_eq!(
            names(
                "func (r *Runner) run(process func() int, a, b int) int",
                true
            ),
            ["r", "process", "a", "b"]
        );
        assert_eq!(
            go_receiver("func (mx *Mux[T]) handle() int"),
            Some(("mx", "Mux"))
        );
        assert_eq!(go_receiver("func (Mux) handle() int"), None);
        assert_eq!(go_receiver("func handle() int"), None);
        // Go's named results are locals; unnamed ones name nothing.
        assert_eq!(
            names("func useNamed() (helper func() int, err error)", true),
            ["helper", "err"]
        );
        assert_eq!(
            names("func (s *S) parse(text string) (int, error)", true),
            ["s", "text"]
        );
        // Swift's labelled tuple result names no locals.
        let swift: Vec<&str> =
            parameter_names("func minMax(a: [Int]) -> (min: Int, max: Int)", true, false).collect();
        assert_eq!(swift, ["a"]);
        assert_eq!(
            names(
                "pub fn run<F: Fn() -> u8>(&self, mut f: F, g: impl Fn(u8, u8) -> u8) -> u8",
                true
            ),
            ["self", "f", "g"]
        );
        assert_eq!(
            names(
                "function run(process: () => number, opts: Map<string, number>, ...rest) {",
                true
            ),
            ["process", "opts", "rest"]
        );
        assert_eq!(
            names("fun run(process: () -> Int, vararg xs: Int): Int", true),
            ["process", "xs"]
        );
        assert_eq!(
            names(
                "func run(with process: () -> Int, _ other: Int) -> Int",
                true
            ),
            ["process", "other"]
        );
        assert_eq!(
            names(
                "int run(int (*process)(void), const char *name, size_t n)",
                false
            ),
            ["process", "name", "n"]
        );
        assert_eq!(
            names(
                "public int Run(Func<int, int> process, ref int count)",
                false
            ),
            ["process", "count"]
        );
        // A list cut off by the end of the line still names its first.
        assert_eq!(names("def run(process,", true), ["process"]);
        // Generic bounds, results and annotations are no parameters.
        assert_eq!(names("fn on<F: Fn(Event)>(f: F) -> u8", true), ["f"]);
        assert_eq!(
            names("func (c *Client) Do(req *Request) (Duration, error)", true),
            ["c", "req"]
        );
        assert_eq!(
            names(
                "@Throws(ParseException::class) fun parse(text: String)",
                true
            ),
            ["text"]
        );
    }

    #[test]
    fn a_parameter_shadows_a_function_only_where_the_language_says_so() {
        let sig = vec!["def run(process):"];
        assert!(shadowed_by_parameter(
            Language::Python,
            "process",
            sig.clone()
        ));
        assert!(!shadowed_by_parameter(Language::Python, "helper", sig));
        // Java calls the method `helper()` whatever its parameters are.
        assert!(!shadowed_by_parameter(
            Language::Java,
            "helper",
            vec!["void run(Runnable helper)"]
        ));
        // A type named in a parameter is no parameter.
        assert!(!shadowed_by_parameter(
            Language::Python,
            "Path",
            vec!["def open(p: Path = Path('.')):"]
        ));
        // The enclosing function's parameters count too.
        assert!(shadowed_by_parameter(
            Language::Go,
            "visit",
            vec!["func()", "func walk(visit func(n Node))"]
        ));
    }
}
