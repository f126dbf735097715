//! What the parser is shown of a file: the file itself, except where a
//! pinned grammar misreads valid code that moving one line break avoids,
//! blanking a statement that defines nothing, or spelling a keyword it
//! does not know as one it does, of the same length. The length stays the
//! same and no definition or call moves, so every node's byte range holds
//! the same names in the real text, which is what extraction reads.

use std::borrow::Cow;

use sno_journal::model::Language;

/// The bytes to parse for `source`.
pub(crate) fn parser_view(lang: Language, source: &[u8]) -> Cow<'_, [u8]> {
    match lang {
        Language::Kotlin => in_turn(source, &[kotlin_annotation_classes, kotlin_constructors]),
        Language::C | Language::Cpp => in_turn(
            source,
            &[c_statement_macros, c_trailing_macros, c_class_macros],
        ),
        Language::Sql => sql_unread_statements(source),
        Language::Gleam => gleam_assert(source),
        Language::CSharp => csharp_app_directives(source),
        _ => Cow::Borrowed(source),
    }
}

/// The directives of a .NET 10 file-based app (`#:sdk Cake.Sdk`, `#:package
/// Newtonsoft.Json`, and a `#!` line to run it), which the C# compiler
/// ignores and tree-sitter-c-sharp 0.23 does not know: its recovery lost
/// every definition of Polly's `cake.cs` after them. They are shown blank;
/// they come before any code, so the view only looks at the file's head.
fn csharp_app_directives(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    let mut at = 0;
    while at < source.len() {
        let end = memchr::memchr(b'\n', &source[at..]).map_or(source.len(), |p| at + p);
        let line = &source[at..end];
        let text = line.trim_ascii_start();
        if text.starts_with(b"#:") || (at == 0 && text.starts_with(b"#!")) {
            blank_keeping_lines(&mut view.get_or_insert_with(|| source.to_vec())[at..end]);
        } else if !(text.is_empty() || text.starts_with(b"//")) {
            break;
        }
        at = end + 1;
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// Gleam 1.11's `assert` statement (`assert list.length([]) == 0`), which
/// tree-sitter-gleam 1.1 does not know: its recovery then loses the
/// functions after it (gleam-lang/stdlib's `list_test.gleam` lost lines 21
/// to 1386). The keyword is shown as a discarded `let` of the same length
/// (`let _= list.length([]) == 0`): the expression, its calls and every
/// byte after it stay where they are. `let assert` is the grammar's own.
fn gleam_assert(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    for at in memchr::memmem::find_iter(source, b"assert ") {
        let line_start = source[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        if source[line_start..at]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t'))
        {
            let v = view.get_or_insert_with(|| source.to_vec());
            v[at..at + 6].copy_from_slice(b"let _=");
        }
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// Spaces in place of every byte but line ends, so every line keeps its
/// number and length.
fn blank_keeping_lines(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

const VISIBILITY: [&[u8]; 4] = [b"private", b"internal", b"public", b"protected"];

/// A view made by each of `steps` in turn, each shown the one before's;
/// the source itself while none changes anything.
fn in_turn<'a>(source: &'a [u8], steps: &[View]) -> Cow<'a, [u8]> {
    steps
        .iter()
        .fold(Cow::Borrowed(source), |view, step| match view {
            Cow::Borrowed(s) => step(s),
            Cow::Owned(v) => Cow::Owned(step(&v).into_owned()),
        })
}

/// One change to what the parser is shown.
type View = fn(&[u8]) -> Cow<'_, [u8]>;

/// tree-sitter-kotlin-ng 1.1.0 reads an annotation class without a body
/// after annotations (`@Target(FUNCTION) annotation class FromJson`, how
/// moshi and most libraries declare theirs) as an expression, and the
/// class is lost; without the annotations it reads it. The annotations
/// before `annotation class` define nothing and are shown blank (line
/// breaks kept): the class, its modifiers and its name stay where they are.
fn kotlin_annotation_classes(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    for at in memchr::memmem::find_iter(source, b"annotation") {
        let word_start = at == 0 || !is_word(source[at - 1]);
        let rest = &source[at + b"annotation".len()..];
        let gap = rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        let class = gap > 0
            && rest[gap..].starts_with(b"class")
            && rest.get(gap + 5).is_none_or(|b| !is_word(*b));
        if !(word_start && class) {
            continue;
        }
        for (from, to) in kotlin_annotations_before(source, at) {
            blank_keeping_lines(&mut view.get_or_insert_with(|| source.to_vec())[from..to]);
        }
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// The byte ranges of the annotations (`@Name`, `@a.b.Name(..)`,
/// `@file:Name`) before the modifiers (`public`, `internal`, ...) that
/// precede `at`, nearest first.
fn kotlin_annotations_before(source: &[u8], at: usize) -> Vec<(usize, usize)> {
    const MODIFIERS: [&[u8]; 6] = [
        b"public",
        b"internal",
        b"private",
        b"protected",
        b"expect",
        b"actual",
    ];
    let name_char = |b: u8| is_word(b) || b == b'.' || b == b':';
    let mut found = Vec::new();
    let mut i = at;
    loop {
        let mut end = i;
        while end > 0 && source[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let Some(&last) = end.checked_sub(1).and_then(|e| source.get(e)) else {
            break;
        };
        // Where the annotation's name ends: before its arguments, if any.
        let name_end = if last == b')' {
            let mut depth = 0usize;
            let mut k = end;
            let open = loop {
                if k == 0 {
                    break None;
                }
                k -= 1;
                match source[k] {
                    b')' => depth += 1,
                    b'(' => {
                        depth -= 1;
                        if depth == 0 {
                            break Some(k);
                        }
                    }
                    _ => {}
                }
            };
            match open {
                Some(open) => open,
                None => break,
            }
        } else if is_word(last) {
            end
        } else {
            break;
        };
        let mut start = name_end;
        while start > 0 && name_char(source[start - 1]) {
            start -= 1;
        }
        if start > 0 && source[start - 1] == b'@' && start < name_end {
            found.push((start - 1, end));
            i = start - 1;
        } else if last != b')' && MODIFIERS.contains(&&source[start..end]) {
            i = start;
        } else {
            break;
        }
    }
    found
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// tree-sitter-kotlin-ng 1.1.0 reads a nested class whose primary
/// constructor starts on the next line with a visibility modifier
/// (`class Builder\n  internal constructor(`) as broken, and loses the class
/// and the rest of its enclosing one; kotlinpoet declares every builder so.
/// With the break after the modifier (`class Builder   internal\nconstructor(`)
/// the same declaration parses. The modifier is then one row early, and
/// nothing else moves.
fn kotlin_constructors(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    for at in memchr::memmem::find_iter(source, b"constructor") {
        if let Some((newline, space)) = kotlin_break(source, at) {
            let v = view.get_or_insert_with(|| source.to_vec());
            v[newline] = b' ';
            v[space] = b'\n';
        }
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// For `constructor` at `at`: the line break before its modifiers and the
/// space after them, when the line above declares a class.
fn kotlin_break(source: &[u8], at: usize) -> Option<(usize, usize)> {
    let after = source.get(at + b"constructor".len()..)?;
    let opens = after.iter().find(|b| !matches!(b, b' ' | b'\t'));
    if opens != Some(&b'(') {
        return None;
    }
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    // Back over ` <modifier>` (at least one) to the line break.
    let mut i = at;
    let space = at.checked_sub(1).filter(|&s| source[s] == b' ')?;
    let mut modifiers = 0;
    loop {
        while i > 0 && blank(&source[i - 1]) {
            i -= 1;
        }
        if i > 0 && source[i - 1] == b'\n' {
            break;
        }
        let word = VISIBILITY
            .iter()
            .find(|w| i >= w.len() && source[..i].ends_with(w))?;
        i -= word.len();
        modifiers += 1;
    }
    let newline = i - 1;
    if modifiers == 0 || (newline > 0 && source[newline - 1] == b'\r') {
        return None;
    }
    // The line above ends a class header: `class Name` or `class Name<T>`.
    let line_start = source[..newline]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line = &source[line_start..newline];
    let ends_name = line
        .last()
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'>'));
    let declares = memchr::memmem::find(line, b"class ").is_some();
    (ends_name && declares).then_some((newline, space))
}

/// A macro between a function's parameters and its body or `;`
/// (spdlog's `bool is_color_terminal() SPDLOG_NOEXCEPT {`, an export or
/// attribute macro) makes tree-sitter-c++ lose the function and the ones
/// after it, up to a dozen (spdlog's `os-inl.h` lost 14 of 28). Only
/// keywords (`const`, `noexcept`, `override`, ...) may stand there, so an
/// all-capitals name there is a macro: it is shown blank.
fn c_trailing_macros(source: &[u8]) -> Cow<'_, [u8]> {
    const QUALIFIERS: [&[u8]; 6] = [
        b"const",
        b"volatile",
        b"noexcept",
        b"override",
        b"final",
        b"mutable",
    ];
    let mut view: Option<Vec<u8>> = None;
    for close in memchr::memchr_iter(b')', source) {
        let mut i = close + 1;
        let mut macros: Vec<(usize, usize)> = Vec::new();
        let ends_head = loop {
            while i < source.len() && source[i].is_ascii_whitespace() {
                i += 1;
            }
            let start = i;
            while i < source.len() && is_word(source[i]) {
                i += 1;
            }
            let word = &source[start..i];
            if word.is_empty() {
                break matches!(source.get(i), Some(b'{' | b';'));
            }
            if is_macro_name(word) {
                macros.push((start, i));
            } else if !QUALIFIERS.contains(&word) {
                break false;
            }
        };
        if ends_head {
            for (from, to) in macros {
                view.get_or_insert_with(|| source.to_vec())[from..to].fill(b' ');
            }
        }
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// An export or attribute macro between `class` or `struct` and the name
/// (`class SPDLOG_API file_helper {`, `class Q_CORE_EXPORT QObject`) makes
/// tree-sitter-c++ take the macro for the name, and the class's members
/// lose their class. A name can follow `class` only once, so an
/// all-capitals one followed by another name is a macro: it is shown
/// blank.
fn c_class_macros(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    for keyword in [&b"class"[..], &b"struct"[..]] {
        for at in memchr::memmem::find_iter(source, keyword) {
            if at > 0 && is_word(source[at - 1]) {
                continue;
            }
            let words = |from: usize| {
                let mut i = from;
                let gap = source[i..]
                    .iter()
                    .take_while(|b| matches!(b, b' ' | b'\t'))
                    .count();
                i += gap;
                let start = i;
                while i < source.len() && is_word(source[i]) {
                    i += 1;
                }
                (gap > 0).then_some((start, i))
            };
            let Some((m_start, m_end)) = words(at + keyword.len()) else {
                continue;
            };
            let Some((n_start, n_end)) = words(m_end) else {
                continue;
            };
            // Only where a class is defined (`{`, a base clause, `final`):
            // `struct STAT buf;` declares a variable of a capitals tag.
            let rest = &source[n_end..];
            let next = rest.iter().position(|b| !b.is_ascii_whitespace());
            let defines = next.is_some_and(|k| {
                let r = &rest[k..];
                r.starts_with(b"{")
                    || (r.starts_with(b":") && !r.starts_with(b"::"))
                    || r.starts_with(b"final")
            });
            let name = &source[n_start..n_end];
            if is_macro_name(&source[m_start..m_end])
                && n_end > n_start
                && name != b"final"
                && defines
            {
                view.get_or_insert_with(|| source.to_vec())[m_start..m_end].fill(b' ');
            }
        }
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// An all-capitals name of three characters or more (`SPDLOG_NOEXCEPT`,
/// `VERIFY_FAILS_END`): a macro, by every C code base's convention.
fn is_macro_name(t: &[u8]) -> bool {
    t.len() >= 3
        && t.iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        && t[0] != b'_'
        && !t[0].is_ascii_digit()
}

/// A macro used as a statement without a `;` (Unity's
/// `EXPECT_ABORT_BEGIN` and `VERIFY_FAILS_END` on lines of their own) costs
/// tree-sitter-c an error each; past a few hundred of them its recovery
/// gives up and reads the whole file as one error, losing every function
/// (Unity's own tests: 106 functions in one file). Such a line is shown to
/// the parser as blank: it holds no definition and no call.
fn c_statement_macros(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    let lines: Vec<(usize, &[u8])> = {
        let mut at = 0;
        source
            .split(|&b| b == b'\n')
            .map(|l| {
                let start = at;
                at += l.len() + 1;
                (start, l)
            })
            .collect()
    };
    // Comments say nothing of where the line stands (`}  // namespace
    // detail` ends a block), nor does a macro line above, which stands
    // where this one does (`FMT_BEGIN_NAMESPACE` over `FMT_BEGIN_EXPORT`).
    let nonblank_before = |i: usize| {
        lines[..i]
            .iter()
            .rev()
            .map(|l| without_line_comment(l.1).trim_ascii())
            .find(|t| !t.is_empty() && !is_comment_line(t) && !is_macro_name(t))
    };
    let nonblank_after = |i: usize| {
        lines[i + 1..]
            .iter()
            .map(|l| l.1.trim_ascii())
            .find(|t| !t.is_empty())
    };
    for (i, &(start, line)) in lines.iter().enumerate() {
        let t = line.trim_ascii();
        if !is_macro_name(t) {
            continue;
        }
        // After a statement, a block's opening or closing or a directive
        // (not an enum's or an initialiser's opening, whose last item may
        // stand alone), and not part of an expression going on to the
        // next line. At a file's top level too: fmt's `FMT_BEGIN_EXPORT`
        // before `template <typename Char> class basic_string_view {`
        // made tree-sitter-c++ read the class as a function named after
        // the macro, and its members as functions of their own.
        let prev = nonblank_before(i);
        let opens_list = prev.is_some_and(|prev| {
            prev.ends_with(b"{")
                && (memchr::memmem::find(prev, b"enum").is_some() || prev.contains(&b'='))
        });
        let after_statement = prev.is_none_or(|prev| {
            matches!(prev.last(), Some(b';' | b'{' | b'}' | b')'))
                || (prev.starts_with(b"#") && !prev.ends_with(b"\\"))
        });
        let prev = prev.unwrap_or_default();
        let continues = nonblank_after(i).is_some_and(|n| {
            matches!(
                n[0],
                b'(' | b'=' | b',' | b'.' | b'-' | b'+' | b'[' | b'?' | b':' | b'*' | b'&' | b'|'
            )
        });
        if !after_statement || opens_list || continues || prev.ends_with(b"\\") {
            continue;
        }
        let v = view.get_or_insert_with(|| source.to_vec());
        let from = start + (line.len() - line.trim_ascii_start().len());
        v[from..from + t.len()].fill(b' ');
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// `line` before a `//` comment that follows code on it.
fn without_line_comment(line: &[u8]) -> &[u8] {
    match memchr::memmem::find(line, b"//") {
        Some(at) if at > 0 && line[..at].iter().any(|b| !b.is_ascii_whitespace()) => &line[..at],
        _ => line,
    }
}

/// Whether a trimmed line is a comment's, whole or in part (`//`, a
/// block's first, inner or last line).
fn is_comment_line(t: &[u8]) -> bool {
    // A block's inner line is `*` and a space or nothing (`*p = 0;` is
    // code).
    t.starts_with(b"//")
        || t.starts_with(b"/*")
        || t == b"*"
        || t.starts_with(b"* ")
        || t.ends_with(b"*/")
}

/// Statements tree-sitter-sequel 0.3 has no rule for, which it reads as a
/// function definition running on and swallowing the statements after
/// (pgvector's `vector.sql` lost 140 functions after its first `CREATE
/// CAST`). They define nothing sno records.
const SQL_UNREAD: [&[u8]; 2] = [b"create cast", b"create operator"];

/// Shows the statements of [`SQL_UNREAD`] to the parser as blank, line
/// breaks kept, up to their `;` outside quotes.
fn sql_unread_statements(source: &[u8]) -> Cow<'_, [u8]> {
    let mut view: Option<Vec<u8>> = None;
    let mut line_start = 0;
    while line_start < source.len() {
        let line_end =
            memchr::memchr(b'\n', &source[line_start..]).map_or(source.len(), |i| line_start + i);
        let line = &source[line_start..line_end];
        let indent = line.len() - line.trim_ascii_start().len();
        let head = &line[indent..];
        let unread = SQL_UNREAD.iter().any(|kw| {
            head.len() > kw.len()
                && head[..kw.len()].eq_ignore_ascii_case(kw)
                && head[kw.len()].is_ascii_whitespace()
        });
        if !unread {
            line_start = line_end + 1;
            continue;
        }
        let start = line_start + indent;
        let end = sql_statement_end(source, start);
        let v = view.get_or_insert_with(|| source.to_vec());
        for b in &mut v[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        line_start = memchr::memchr(b'\n', &source[end..]).map_or(source.len(), |i| end + i + 1);
    }
    view.map_or(Cow::Borrowed(source), Cow::Owned)
}

/// The end of the statement starting at `start`: just past its `;` outside
/// single quotes, or the end of the file.
fn sql_statement_end(source: &[u8], start: usize) -> usize {
    let mut quoted = false;
    for (i, &b) in source.iter().enumerate().skip(start) {
        match b {
            b'\'' => quoted = !quoted,
            b';' if !quoted => return i + 1,
            _ => {}
        }
    }
    source.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_based_apps_directives_are_blank_to_the_csharp_parser() {
        let src = "#!/usr/bin/env dotnet\n#:sdk Cake.Sdk\n#:package Newtonsoft.Json\n\n// ARGS\nvar target = Argument(\"target\");\n\nstring Patch(string path)\n{\n    return path;\n}\n\n#:not-a-directive-here\n";
        let v =
            String::from_utf8(parser_view(Language::CSharp, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        assert!(
            v.starts_with(&format!("{}\n{}\n", " ".repeat(21), " ".repeat(14))),
            "{v}"
        );
        // Only the head: a `#:` line after code is the grammar's business.
        assert!(v.ends_with("#:not-a-directive-here\n"), "{v}");
        let f = crate::extract(Language::CSharp, src.as_bytes());
        let names: Vec<&str> = f
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect();
        assert!(names.contains(&"Patch"), "{names:?}");
        assert!(matches!(
            parser_view(Language::CSharp, b"namespace A;\nclass B {}\n"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_gleam_assert_statement_is_shown_as_a_discarded_let() {
        let src = "pub fn length_test() {\n  assert list.length([]) == 0\n  let assert Ok(x) = f()\n  x\n}\n";
        let v =
            String::from_utf8(parser_view(Language::Gleam, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        assert!(v.contains("\n  let _= list.length([]) == 0\n"), "{v}");
        assert!(v.contains("\n  let assert Ok(x) = f()\n"), "{v}");
        assert!(matches!(
            parser_view(Language::Gleam, b"fn f() { \"assert me\" }\n"),
            Cow::Borrowed(_)
        ));
    }

    fn view(s: &str) -> String {
        String::from_utf8(parser_view(Language::Kotlin, s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn a_constructor_modifier_moves_the_line_break_and_nothing_else() {
        let src = "class A {\n  public class Builder<T>\n  internal constructor(val n: String) {\n  }\n}\n";
        let v = view(src);
        assert_eq!(
            v,
            "class A {\n  public class Builder<T>   internal\nconstructor(val n: String) {\n  }\n}\n"
        );
        assert_eq!(v.len(), src.len());
        assert_eq!(v.matches('\n').count(), src.matches('\n').count());
        // Every token stays at its bytes.
        let tokens = |s: &str| {
            s.char_indices()
                .filter(|(_, c)| !c.is_whitespace())
                .collect::<Vec<_>>()
        };
        assert_eq!(tokens(&v), tokens(src));
    }

    #[test]
    fn a_statement_macro_is_blank_to_the_c_parser() {
        let src =
            "void t(void)\n{\n    EXPECT_ABORT_BEGIN\n    check(1);\n    VERIFY_FAILS_END\n}\n";
        let v = String::from_utf8(parser_view(Language::C, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(
            v,
            "void t(void)\n{\n                      \n    check(1);\n                    \n}\n"
        );
        // Enumerators, initialisers, expressions going on and a macro's
        // body are left as they are.
        for src in [
            "enum e {\n    ONLY\n};\n",
            "int a[] = {\n    VALUE\n};\n",
            "int f(void)\n{\n    return x;\n    LEFT\n        + 1;\n}\n",
            "int f(void)\n{\n    return x;  // the sum\n    LEFT\n        + 1;\n}\n",
            "#define M \\\n    BODY\n",
        ] {
            assert!(
                matches!(parser_view(Language::C, src.as_bytes()), Cow::Borrowed(_)),
                "{src}"
            );
        }
    }

    #[test]
    fn file_level_macros_are_blank_to_the_cpp_parser_and_the_class_after_them_is_read() {
        // fmt's headers: namespace and export macros on lines of their
        // own, after a directive, a block's end with a comment, a comment,
        // or one another.
        let src = "#include \"format.h\"\nFMT_BEGIN_NAMESPACE\nnamespace detail {\nint helper();\n}  // namespace detail\n\n// Public API.\nFMT_BEGIN_EXPORT\n\n/**\n * A view.\n */\ntemplate <typename Char> class basic_string_view {\n public:\n  constexpr basic_string_view() noexcept : data_(nullptr) {}\n  constexpr auto size() const noexcept -> size_t { return size_; }\n private:\n  const Char* data_;\n};\nFMT_END_EXPORT\nFMT_END_NAMESPACE\n";
        let v = String::from_utf8(parser_view(Language::Cpp, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        for m in [
            "FMT_BEGIN_NAMESPACE",
            "FMT_BEGIN_EXPORT",
            "FMT_END_EXPORT",
            "FMT_END_NAMESPACE",
        ] {
            assert!(!v.contains(m), "{m} in {v}");
        }
        // A comment's lines are looked past, a dereference is not one.
        for comment in [
            &b"// x"[..],
            b"/**",
            b"* A view.",
            b"*",
            b"*/",
            b"x; /* y */",
        ] {
            assert!(is_comment_line(comment));
        }
        assert!(!is_comment_line(b"*p = 0;"));
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let q: Vec<&str> = f
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect();
        for want in [
            "basic_string_view",
            "basic_string_view.basic_string_view",
            "basic_string_view.size",
            "basic_string_view.data_",
        ] {
            assert!(q.contains(&want), "{want}: {q:?}");
        }
    }

    #[test]
    fn sql_statements_the_grammar_cannot_read_are_blank_to_it() {
        let src = "CREATE FUNCTION a(integer) RETURNS integer AS 'M' LANGUAGE C;\n\nCREATE CAST (v AS w)\n\tWITH FUNCTION a(v) AS 'x;y';\n\ncreate operator <-> (LEFTARG = v, PROCEDURE = d);\nCREATE FUNCTION b(integer) RETURNS integer AS 'M' LANGUAGE C;\n";
        let v = String::from_utf8(parser_view(Language::Sql, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        assert_eq!(v.matches('\n').count(), src.matches('\n').count());
        assert!(
            !v.contains("CAST") && !v.contains("operator") && !v.contains("x;y"),
            "{v}"
        );
        assert!(
            v.contains("CREATE FUNCTION a(") && v.contains("CREATE FUNCTION b("),
            "{v}"
        );
        // The function after them is found.
        let f = crate::extract(Language::Sql, src.as_bytes());
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(
            parser_view(Language::Sql, b"CREATE TABLE t (castle int);\n"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn an_annotation_class_after_an_annotation_is_read_as_a_class() {
        let src = "@Retention(RUNTIME) @Target(FUNCTION) public annotation class FromJson\n\n@Target(FUNCTION)\nannotation class ToJson\n\nval annotationClass = 1 // annotation classes\n";
        let v = view(src);
        assert_eq!(v.len(), src.len());
        assert_eq!(v.matches('@').count(), 0, "{v}");
        assert_eq!(v.lines().count(), src.lines().count(), "{v}");
        assert!(v.contains("public annotation class FromJson\n"), "{v}");
        assert!(
            v.contains("val annotationClass = 1 // annotation classes"),
            "{v}"
        );
        // Annotations of anything else stay.
        let other = "@Target(FUNCTION)\nclass Plain\n";
        assert_eq!(view(other), other);
        let f = crate::extract(Language::Kotlin, src.as_bytes());
        let found: Vec<(&str, sno_journal::model::SymbolKind)> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind))
            .collect();
        use sno_journal::model::SymbolKind as S;
        assert!(found.contains(&("FromJson", S::Interface)), "{found:?}");
        assert!(found.contains(&("ToJson", S::Interface)), "{found:?}");
        let from_json = f.symbols.iter().find(|s| s.name == "FromJson").unwrap();
        assert_eq!(from_json.span.start_line, 1);
        assert_eq!(from_json.signature, "public annotation class FromJson");
    }

    #[test]
    fn a_macro_between_parameters_and_body_is_blank_to_the_cpp_parser() {
        let src = "namespace os {\nSPDLOG_INLINE std::tm localtime() SPDLOG_NOEXCEPT\n{\n    return std::tm{};\n}\n\nSPDLOG_INLINE bool is_color_terminal() SPDLOG_NOEXCEPT {\n    return f(x) ? OK : BAD;\n}\n\nvoid size() const FMT_OVERRIDE;\nint g() const { return h(A) + B; }\n}\n";
        let v = String::from_utf8(parser_view(Language::Cpp, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        assert_eq!(v.matches("SPDLOG_NOEXCEPT").count(), 0, "{v}");
        assert!(!v.contains("FMT_OVERRIDE"), "{v}");
        // Macros anywhere else stay: in expressions, and before the type.
        assert!(
            v.contains("f(x) ? OK : BAD;") && v.contains("h(A) + B;"),
            "{v}"
        );
        assert_eq!(v.matches("SPDLOG_INLINE").count(), 2, "{v}");
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        for n in ["localtime", "is_color_terminal", "g"] {
            assert!(names.contains(&n), "{n} in {names:?}");
        }
        let t = f
            .symbols
            .iter()
            .find(|s| s.name == "is_color_terminal")
            .unwrap();
        assert_eq!(t.span.start_line, 7);
    }

    #[test]
    fn an_export_macro_before_a_class_name_is_blank_to_the_cpp_parser() {
        let src = "namespace d {\nclass SPDLOG_API file_helper {\npublic:\n    void reopen(bool truncate);\n};\nstruct FMT_API  Spec : Base { int w; };\nclass Plain { int x; };\nclass NAMED;\nclass RGB final { int r; };\nstruct STAT buf;\n}\n";
        let v = String::from_utf8(parser_view(Language::Cpp, src.as_bytes()).into_owned()).unwrap();
        assert_eq!(v.len(), src.len());
        assert!(!v.contains("SPDLOG_API") && !v.contains("FMT_API"), "{v}");
        // A class named in capitals keeps its name, and so does a tag a
        // variable is declared with.
        assert!(v.contains("class NAMED;"), "{v}");
        assert!(v.contains("class RGB final {"), "{v}");
        assert!(v.contains("struct STAT buf;"), "{v}");
        let f = crate::extract(Language::Cpp, src.as_bytes());
        let names: Vec<&str> = f
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect();
        for n in ["d.file_helper", "d.file_helper.reopen", "d.Spec", "d.Plain"] {
            assert!(names.contains(&n), "{n} in {names:?}");
        }
    }

    #[test]
    fn other_constructors_are_left_alone() {
        for src in [
            "class A(val n: Int) {\n  constructor(n: String) : this(1)\n}\n",
            "class A\n  @Inject constructor(val n: Int)\n",
            "val x = 1\nprivate constructor(\n",
            "class A private constructor(val n: Int)\n",
            "class A\r\n  private constructor(val n: Int)\n",
        ] {
            assert!(matches!(
                parser_view(Language::Kotlin, src.as_bytes()),
                Cow::Borrowed(_)
            ));
        }
    }

    #[test]
    fn the_kotlin_grammar_reads_the_view_of_a_nested_builder() {
        let src = "class Spec {\n  fun build() {}\n\n  public class Builder\n  internal constructor(val n: String) {\n    fun add() {}\n  }\n}\n";
        let f = crate::extract(Language::Kotlin, src.as_bytes());
        assert!(f.diagnostics.is_empty(), "{:?}", f.diagnostics);
        let names: Vec<(&str, u32)> = f
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.span.start_line))
            .collect();
        assert!(names.contains(&("Spec.Builder", 4)), "{names:?}");
        assert!(names.contains(&("Spec.Builder.add", 6)), "{names:?}");
    }
}
