//! Long runs of literal data that need not be parsed.
//!
//! Lookup tables and embedded binary data written as arrays of numbers
//! (`static const uint8_t kDictionary[] = {116, 105, 109, ...}`, Unicode
//! range tables of `('\u{41}', '\u{5a}')` pairs) hold no symbol, import,
//! call or inheritance, yet tree-sitter spends on them what it spends on any
//! other tokens: on the benchmark corpus three such C files were 16% of the
//! whole parse. ctags, the usual baseline, does not tokenize them at all.
//!
//! [`elidable`] finds bracketed lists (`{...}` or `[...]`) of at least
//! [`MIN_RUN_BYTES`] whose elements are only number or character literals,
//! or nested bracketed lists of them. Each such list is parsed as if it held
//! its first element alone: the bytes from the end of the first element to
//! the end of the last are left out of the parser's included ranges.
//! Tree-sitter still reports every position in the real source, so spans,
//! signatures and docs are untouched, and a list of one literal parses to
//! the same kind of node as a list of many. What is left out can hold no
//! fact: a test checks that extraction gives the same facts with and
//! without the ranges, per language.
//!
//! The scanner is deliberately stricter than the languages: anything it
//! does not recognise (an identifier, an operator other than a leading
//! minus, a float, a string, a comment, a preprocessor line) makes the
//! enclosing lists ordinary code, which is parsed in full.

use std::ops::Range;

use sno_journal::model::Language;

/// Lists shorter than this are parsed in full: below it, the saving does
/// not pay for the bookkeeping.
pub const MIN_RUN_BYTES: usize = 2048;

/// A list parsed as if it held only its first element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The whole list, brackets included.
    pub list: Range<usize>,
    /// What is left out of parsing: from the end of the first element to
    /// the end of the last.
    pub left_out: Range<usize>,
}

/// One open bracket while scanning.
struct Group {
    /// Where the opening bracket is.
    start: usize,
    /// The byte that closes it.
    close: u8,
    /// Whether the group may itself be elided (`{` or `[`, not a tuple).
    elidable: bool,
    /// End of the first element.
    first_end: Option<usize>,
    /// End of the last element so far.
    last_end: usize,
    elements: usize,
    /// Whether an element is expected next (else a comma or the close).
    want_element: bool,
    /// How many ranges were found before this group opened: the ones after
    /// lie inside it and give way to it if it is elided as a whole.
    ranges_before: usize,
}

/// The tables of `src` whose bytes can be left out of parsing, ordered and
/// disjoint.
pub fn tables(lang: Language, src: &[u8]) -> Vec<Table> {
    // The scanner knows the literal syntax of the deep tier only (a shell's
    // `{a,b}` is no table).
    if lang.is_generic() {
        return Vec::new();
    }
    let mut out: Vec<Table> = Vec::new();
    let mut stack: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let Some(top) = stack.last_mut() else {
            // Outside any candidate list: jump to the next opening bracket.
            match memchr::memchr2(b'{', b'[', &src[i..]) {
                Some(off) => {
                    i += off;
                    stack.push(open(src[i], i, out.len()));
                    i += 1;
                    continue;
                }
                None => break,
            }
        };
        let c = src[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == top.close {
            // `{}`, `{a, b}` and `{a, b,}` all close here.
            let g = stack.pop().expect("top exists");
            if g.elidable && g.elements >= 2 {
                if let Some(first_end) = g.first_end {
                    if g.last_end - first_end >= MIN_RUN_BYTES {
                        // Ranges found inside it give way, but for those
                        // within its first element, which stays parsed.
                        let keep = out[g.ranges_before..]
                            .iter()
                            .take_while(|t| t.list.end <= first_end)
                            .count();
                        out.truncate(g.ranges_before + keep);
                        out.push(Table {
                            list: g.start..i + 1,
                            left_out: first_end..g.last_end,
                        });
                    }
                }
            }
            i += 1;
            if let Some(parent) = stack.last_mut() {
                element_done(parent, i);
            }
            continue;
        }
        if !top.want_element {
            if c == b',' {
                top.want_element = true;
                i += 1;
            } else {
                stack.clear();
            }
            continue;
        }
        match c {
            b'{' | b'[' | b'(' => {
                stack.push(open(c, i, out.len()));
                i += 1;
            }
            b'-' | b'0'..=b'9' => match number(lang, src, i) {
                Some(end) => {
                    element_done(top, end);
                    i = end;
                }
                None => stack.clear(),
            },
            b'\'' => match char_literal(src, i) {
                Some(end) => {
                    element_done(top, end);
                    i = end;
                }
                None => stack.clear(),
            },
            // Not literal data: every open list is ordinary code. A `{` or
            // `[` here is looked at again as a new outermost candidate.
            _ => stack.clear(),
        }
    }
    out
}

/// Whether a syntax error of `tree` lies within one of `tables`' lists or
/// at its edges: there, the left-out elements could change how tree-sitter
/// recovers (it weighs the nodes it would skip). Only subtrees that hold an
/// error are visited.
pub fn error_touches(tree: &tree_sitter::Tree, tables: &[Table]) -> bool {
    let root = tree.root_node();
    if tables.is_empty() || !root.has_error() {
        return false;
    }
    let touches = |n: tree_sitter::Node<'_>| {
        let (start, end) = (n.start_byte(), n.end_byte());
        tables
            .iter()
            .any(|t| start <= t.list.end && t.list.start <= end)
    };
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            if touches(node) {
                return true;
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor).filter(|c| c.has_error()));
    }
    false
}

fn open(bracket: u8, start: usize, ranges_before: usize) -> Group {
    let close = match bracket {
        b'{' => b'}',
        b'[' => b']',
        _ => b')',
    };
    Group {
        start,
        close,
        elidable: bracket != b'(',
        first_end: None,
        last_end: 0,
        elements: 0,
        want_element: true,
        ranges_before,
    }
}

fn element_done(g: &mut Group, end: usize) {
    g.elements += 1;
    g.first_end.get_or_insert(end);
    g.last_end = end;
    g.want_element = false;
}

/// The end of an integer literal at `i` (with an optional leading minus), or
/// `None` if what is there is not one this scanner is sure of. Stricter than
/// every language: a digit separator `_` only between two digits, and no
/// leading zero before more digits (`09` is an error in Go and Java).
fn number(lang: Language, src: &[u8], mut i: usize) -> Option<usize> {
    if src[i] == b'-' {
        i += 1;
    }
    let separators = !matches!(lang, Language::C | Language::Cpp);
    let hex = src.get(i) == Some(&b'0') && matches!(src.get(i + 1), Some(b'x' | b'X'));
    if hex {
        i += 2;
    }
    let is_digit = |b: u8| {
        if hex {
            b.is_ascii_hexdigit()
        } else {
            b.is_ascii_digit()
        }
    };
    let start = i;
    while i < src.len() {
        let b = src[i];
        // `_` only between two digits.
        let separator = separators
            && b == b'_'
            && i > start
            && is_digit(src[i - 1])
            && src.get(i + 1).is_some_and(|&n| is_digit(n));
        if !(is_digit(b) || separator) {
            break;
        }
        i += 1;
    }
    if i == start || (!hex && src[start] == b'0' && i > start + 1) {
        return None;
    }
    i += suffix(lang, &src[i..]);
    // A float, an identifier glued to the digits, or a suffix this scanner
    // does not know: leave the list to the parser.
    match src.get(i) {
        Some(b) if b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.' => None,
        _ => Some(i),
    }
}

/// Length of an integer suffix the language allows (`10u`, `1UL`, `0u8`, `2L`).
fn suffix(lang: Language, rest: &[u8]) -> usize {
    match lang {
        Language::C | Language::Cpp => rest
            .iter()
            .take(3)
            .take_while(|b| matches!(b, b'u' | b'U' | b'l' | b'L'))
            .count(),
        Language::Java => usize::from(matches!(rest.first(), Some(b'l' | b'L'))),
        Language::Rust => {
            const TYPES: [&[u8]; 12] = [
                b"u128", b"i128", b"usize", b"isize", b"u16", b"u32", b"u64", b"i16", b"i32",
                b"i64", b"u8", b"i8",
            ];
            TYPES
                .iter()
                .find(|t| rest.starts_with(t))
                .map_or(0, |t| t.len())
        }
        _ => 0,
    }
}

/// The end of a one-character literal at `i`: `'a'`, `'\n'`, `'\''`,
/// `'\x7f'`, `'\u{10FFFF}'`, `'\u0041'`, `'\017'`, or one UTF-8 character.
fn char_literal(src: &[u8], i: usize) -> Option<usize> {
    let body = src.get(i + 1..)?;
    let len = match *body.first()? {
        b'\\' => {
            let esc = *body.get(1)?;
            match esc {
                // `\x7f`, `\u{10FFFF}`, `\u0041`, `\U0001F600`: exact forms
                // only, so a literal the language rejects is never hidden.
                b'x' | b'u' | b'U' => {
                    let hex = |from: usize, max: usize| {
                        body.get(from..).map_or(0, |r| {
                            r.iter()
                                .take(max)
                                .take_while(|b| b.is_ascii_hexdigit())
                                .count()
                        })
                    };
                    if esc == b'u' && body.get(2) == Some(&b'{') {
                        let n = hex(3, 6);
                        if n == 0 || body.get(3 + n) != Some(&b'}') {
                            return None;
                        }
                        3 + n + 1
                    } else {
                        let want = match esc {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        if hex(2, want) != want {
                            return None;
                        }
                        2 + want
                    }
                }
                b'0'..=b'7' => {
                    1 + body[1..]
                        .iter()
                        .take(3)
                        .take_while(|b| (b'0'..=b'7').contains(*b))
                        .count()
                }
                b'\\' | b'\'' | b'"' | b'n' | b'r' | b't' | b'a' | b'b' | b'f' | b'v' | b'?' => 2,
                _ => return None,
            }
        }
        b'\'' | b'\n' | b'\r' => return None,
        b if b < 0x80 => 1,
        b => {
            // One UTF-8 scalar: its length from the lead byte.
            let n = b.leading_ones() as usize;
            if !(2..=4).contains(&n) || body.len() < n {
                return None;
            }
            std::str::from_utf8(&body[..n]).ok()?;
            n
        }
    };
    (body.get(len) == Some(&b'\'')).then_some(i + 1 + len + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elidable(lang: Language, src: &[u8]) -> Vec<Range<usize>> {
        tables(lang, src).into_iter().map(|t| t.left_out).collect()
    }

    fn table(open: &str, close: &str, elem: impl Fn(usize) -> String, n: usize) -> String {
        let body: Vec<String> = (0..n).map(elem).collect();
        format!("{open}{}{close}", body.join(", "))
    }

    #[test]
    fn a_long_numeric_table_is_elided_after_its_first_element() {
        let t = table("{", "}", |i| (i % 256).to_string(), 2000);
        let src = format!("static const int k[] = {t};\nint f(void) {{ return g(k[0]); }}\n");
        let ranges = elidable(Language::C, src.as_bytes());
        assert_eq!(ranges.len(), 1);
        let r = &ranges[0];
        let open = src.find('{').unwrap();
        assert_eq!(&src[open..r.start], "{0", "keeps the first element");
        assert_eq!(
            &src[r.end..r.end + 2],
            "};",
            "runs to the end of the last element"
        );
        assert!(src[r.clone()]
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b',' || b == b' '));
    }

    #[test]
    fn nested_lists_and_tuples_elide_as_one_range() {
        let rows = table("{", "}", |i| format!("{{{i}, 0x{i:x}u, -{i}}}"), 400);
        let src = format!("static const S k[] = {rows};\n");
        let ranges = elidable(Language::C, src.as_bytes());
        assert_eq!(ranges.len(), 1, "{ranges:?}");
        assert_eq!(
            &src[..ranges[0].start],
            "static const S k[] = {{0, 0x0u, -0}"
        );

        let pairs = table(
            "&[",
            "]",
            |i| format!("('\\u{{{i:x}}}', '\\u{{{:x}}}')", i + 1),
            300,
        );
        let src = format!("pub const R: &[(char, char)] = {pairs};\n");
        let ranges = elidable(Language::Rust, src.as_bytes());
        assert_eq!(ranges.len(), 1, "{ranges:?}");
        assert!(src[..ranges[0].start].ends_with("[('\\u{0}', '\\u{1}')"));
    }

    #[test]
    fn lists_that_are_code_or_short_stay_whole() {
        let short = table("[", "]", |i| i.to_string(), 50);
        let with_name = table(
            "[",
            "]",
            |i| if i == 900 { "x".into() } else { i.to_string() },
            1000,
        );
        let floats = table("[", "]", |i| format!("{i}.5"), 1000);
        let strings = table("[", "]", |i| format!("\"{i}\""), 1000);
        // Inside a list, where the scanner looks: a tuple is not a literal.
        let tuple = format!("[{}]", table("(", ")", |i| i.to_string(), 1000));
        let no_commas = format!("[{}]", vec!["1"; 3000].join(" "));
        for src in [short, with_name, floats, strings, tuple, no_commas] {
            assert!(
                elidable(Language::Python, src.as_bytes()).is_empty(),
                "{}",
                &src[..40]
            );
        }
    }

    #[test]
    fn a_pure_list_inside_code_is_found_even_when_its_parent_is_not() {
        let t = table("[", "]", |i| i.to_string(), 1000);
        let src = format!("CONFIG = {{\"table\": {t}, \"name\": f(1)}}\n");
        let ranges = elidable(Language::Python, src.as_bytes());
        assert_eq!(ranges.len(), 1);
        assert!(src[..ranges[0].start].ends_with("\"table\": [0"));
    }

    #[test]
    fn suffixes_and_separators_follow_the_language() {
        let rust = table("[", "]", |i| format!("{i}u8"), 1000);
        assert_eq!(elidable(Language::Rust, rust.as_bytes()).len(), 1);
        // C has no digit separators: `1_000` is not a number there.
        let c = table("{", "}", |i| format!("{}_000", i + 1), 1000);
        assert!(elidable(Language::C, c.as_bytes()).is_empty());
        assert_eq!(elidable(Language::Python, c.as_bytes()).len(), 1);
        // Forms some language rejects are never taken for numbers.
        for bad in ["1_", "1__0", "09", "0x", "-", "0_1"] {
            let t = table(
                "[",
                "]",
                |i| {
                    if i == 500 {
                        bad.into()
                    } else {
                        (i + 1).to_string()
                    }
                },
                1000,
            );
            assert!(elidable(Language::Python, t.as_bytes()).is_empty(), "{bad}");
        }
        for good in ["0", "-7", "0x1F", "0xff_ff", "1_000"] {
            let t = table(
                "[",
                "]",
                |i| {
                    if i == 500 {
                        good.into()
                    } else {
                        (i + 1).to_string()
                    }
                },
                1000,
            );
            assert_eq!(elidable(Language::Python, t.as_bytes()).len(), 1, "{good}");
        }
    }

    #[test]
    fn char_literals() {
        for ok in [
            "'a'",
            "'\\n'",
            "'\\''",
            "'\\x7f'",
            "'\\u{10FFFF}'",
            "'\\017'",
            "'é'",
        ] {
            assert_eq!(char_literal(ok.as_bytes(), 0), Some(ok.len()), "{ok}");
        }
        for bad in ["'ab'", "''", "'\\q'", "'a", "'\n'"] {
            assert_eq!(char_literal(bad.as_bytes(), 0), None, "{bad}");
        }
    }
}

/// Extraction from a parse that leaves the tables out equals extraction
/// from a whole parse, in every language.
#[cfg(test)]
mod same_facts {
    use sno_journal::model::Language;

    use super::tables;

    fn numbers(n: usize) -> String {
        (0..n)
            .map(|i| (i * 7 % 256).to_string())
            .collect::<Vec<_>>()
            .join(",\n  ")
    }

    fn files() -> Vec<(Language, String)> {
        let nums = numbers(700);
        let rows: Vec<String> = (0..300)
            .map(|i| format!("{{{i}, 0x{i:X}, {}}}", i % 3))
            .collect();
        let rows = rows.join(",");
        let pairs: Vec<String> = (0..200)
            .map(|i| format!("('\\u{{{:x}}}', '\\u{{{:x}}}')", i * 2, i * 2 + 1))
            .collect();
        let pairs = pairs.join(", ");
        vec![
            (Language::C, format!("#include \"t.h\"\n/* Data. */\nstatic const unsigned char kData[] = {{\n  {nums}\n}};\nstatic const W kWords[] = {{{rows}}};\n\n/** Looks up. */\nint lookup(int x) {{ return decode(kData[x], kWords[x].a); }}\nstruct S {{ int a; }};\n")),
            (Language::Cpp, format!("namespace n {{\nconst int kT[] = {{{nums}}};\nclass A : public B {{\n public:\n  void m() {{ h(kT[0]); }}\n}};\n}}  // namespace n\n")),
            (Language::Rust, format!("use std::fmt;\n\n/// Ranges.\npub const R: &'static [(char, char)] = &[{pairs}];\npub static D: [u8; 700] = [{nums}];\n\nfn f() -> u8 {{ g(R[0].0) }}\nstruct S;\nimpl S {{\n    fn m(&self) {{ self.f(); }}\n}}\n")),
            (Language::Python, format!("import os\nfrom .tables import build\n\nTABLE = [\n  {nums}\n]\n\n\nclass A(B):\n    \"\"\"Doc.\"\"\"\n\n    def m(self):\n        return build(TABLE, os.sep)\n")),
            (Language::JavaScript, format!("import x from './y.js';\nconst T = [{nums}];\n/** A. */\nclass A extends B {{\n  m() {{ return f(T, x); }}\n}}\nexport function g() {{ return new A().m(); }}\n")),
            (Language::TypeScript, format!("import {{ x }} from './y';\nconst T: number[] = [{nums}];\nexport class A extends B implements I {{\n  m(): number {{ return f(T, x); }}\n}}\n")),
            (Language::Go, format!("package p\n\nimport \"fmt\"\n\nvar table = []byte{{\n  {nums},\n}}\n\n// F prints.\nfunc F() {{ fmt.Println(table[0]) }}\n")),
            (Language::Java, format!("package p;\nimport java.util.List;\n/** A. */\nclass A extends B {{\n  static final int[] T = {{{nums}}};\n  void m() {{ f(T); }}\n}}\n")),
            (Language::Ruby, format!("require \"x\"\n\nTABLE = [{nums}].freeze\n\n# A.\nclass A < B\n  def m\n    f(TABLE)\n  end\nend\n")),
            (Language::CSharp, format!("using System;\n/// <summary>A.</summary>\nclass A : B {{\n  static readonly int[] T = {{{nums}}};\n  void M() {{ F(T); }}\n}}\n")),
            (Language::Php, format!("<?php\nuse A\\B;\nconst T = [{nums}];\n/** A. */\nclass A extends B {{ function m() {{ return f(T); }} }}\n")),
            (Language::Swift, format!("import Foundation\nlet table: [UInt8] = [{nums}]\n/// A.\nclass A: B {{ func m() {{ f(table[0]) }} }}\n")),
        ]
    }

    #[test]
    fn extraction_is_the_same_with_tables_left_out() {
        for (lang, src) in files() {
            assert!(
                !tables(lang, src.as_bytes()).is_empty(),
                "{lang:?}: no table found"
            );
            let left_out = crate::extract(lang, src.as_bytes());
            let whole = crate::extract_whole(lang, src.as_bytes());
            assert_eq!(left_out, whole, "{lang:?}");
            assert!(
                left_out.diagnostics.is_empty(),
                "{lang:?}: {:?}",
                left_out.diagnostics
            );
            assert!(
                !left_out.symbols.is_empty() && !left_out.calls.is_empty(),
                "{lang:?}"
            );
            // The tree really is smaller: the table's elements are not in it.
            let tree = crate::parse(lang, src.as_bytes()).expect("parses");
            let full = crate::parse_full(lang, src.as_bytes()).expect("parses");
            let nodes = |t: &tree_sitter::Tree| t.root_node().descendant_count();
            assert!(
                nodes(&tree) * 2 < nodes(&full),
                "{lang:?}: {} vs {}",
                nodes(&tree),
                nodes(&full)
            );
        }
    }

    /// A syntax error inside a table, at its closing edge, or anywhere
    /// after it leaves the facts as a whole parse gives them: a file whose
    /// error touches a table is parsed whole (without that, error recovery
    /// differed in hundreds of these files), and a literal the language
    /// would reject is never left out. An error just before a table can
    /// still, rarely, be recovered from differently, because tree-sitter
    /// weighs the nodes parsed since an error: 5 of 21,600 randomly placed
    /// breaks did, all before a table; such a file keeps the facts of a
    /// valid tree-sitter recovery, only not the same one.
    #[test]
    fn broken_files_with_tables_give_the_same_facts() {
        let breaks = [")]} oops ((( {", "{", "}", "int = ;", "'", "/*", ","];
        let mut differ = Vec::new();
        let mut cases = 0;
        for (lang, src) in files() {
            let tables = tables(lang, src.as_bytes());
            let last_end = tables.iter().map(|t| t.list.end).max().expect("tables");
            let in_tables = tables.iter().flat_map(|t| {
                let l = &t.list;
                [
                    l.start + 1,
                    t.left_out.start,
                    l.start + l.len() / 2,
                    t.left_out.end,
                    l.end - 1,
                    l.end,
                ]
            });
            let after = (last_end..=src.len()).step_by((src.len() - last_end) / 8 + 1);
            for p in in_tables.chain(after).filter(|&p| src.is_char_boundary(p)) {
                for b in breaks {
                    cases += 1;
                    let broken = format!("{}{b}{}", &src[..p], &src[p..]);
                    let left_out = crate::extract(lang, broken.as_bytes());
                    if left_out != crate::extract_whole(lang, broken.as_bytes()) {
                        differ.push(format!("{lang:?}: {b:?} at {p}"));
                    }
                }
            }
        }
        assert!(cases > 500, "{cases}");
        assert!(
            differ.is_empty(),
            "{} differ, e.g. {:?}",
            differ.len(),
            &differ[..differ.len().min(5)]
        );
    }
}
