//! Turning raw source bytes into the strings sno stores: signatures, doc
//! comments, docstrings, base names and error excerpts.

/// Signatures longer than this many characters are cut.
pub(crate) const MAX_SIGNATURE_CHARS: usize = 200;

/// A declaration header on one line: whitespace runs collapsed to one space,
/// the opening of the body (`{`, Python's `:`) and a final `;` dropped, at
/// most [`MAX_SIGNATURE_CHARS`] characters.
pub(crate) fn signature(header: &[u8]) -> String {
    let text = String::from_utf8_lossy(header);
    let mut out = String::with_capacity(text.len().min(MAX_SIGNATURE_CHARS * 2));
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    for end in ['{', ':', ';'] {
        if let Some(rest) = out.strip_suffix(end) {
            // `::` ends a C++ scope, not a Python header.
            if end == ':' && rest.ends_with(':') {
                continue;
            }
            out.truncate(rest.trim_end().len());
        }
    }
    truncate_chars(&mut out, MAX_SIGNATURE_CHARS);
    out
}

/// Where a C or C++ definition really begins inside `head`, the text the
/// grammar put before its name, when error recovery swept earlier
/// statements into it (an unknown export macro, `FMT_BEGIN_EXPORT`, makes
/// tree-sitter read the `extern template ...;` lines after it and the
/// functions after those as one definition's head): just past the last
/// `;`, `{` or `}` outside comments, strings and preprocessor lines, then
/// past blank lines, comments and preprocessor lines. A definition's own
/// head has none of those terminators, so `None` means `head` is all of it.
/// The comments right above the start (no blank line between) come back as
/// ranges of `head`: they are the definition's doc comment.
pub(crate) fn start_after_stray_head(head: &[u8]) -> Option<(usize, Vec<(usize, usize)>)> {
    let mut last_terminator = None;
    let mut i = 0;
    let mut line_start = true;
    while i < head.len() {
        let b = head[i];
        if line_start && b == b'#' {
            i = end_of_preprocessor_line(head, i);
            continue;
        }
        if !b.is_ascii_whitespace() {
            line_start = false;
        }
        match b {
            b'\n' => line_start = true,
            b'/' if head.get(i + 1) == Some(&b'/') => {
                i = head[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(head.len(), |p| i + p);
                continue;
            }
            b'/' if head.get(i + 1) == Some(&b'*') => {
                i = find(head, i + 2, b"*/").map_or(head.len(), |p| p + 2);
                continue;
            }
            b'"' | b'\'' => {
                let mut j = i + 1;
                while j < head.len() && head[j] != b && head[j] != b'\n' {
                    j += if head[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                continue;
            }
            b';' | b'{' | b'}' => last_terminator = Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    let mut i = last_terminator?;
    let mut doc: Vec<(usize, usize)> = Vec::new();
    let mut blank_since_doc = false;
    loop {
        let rest = &head[i.min(head.len())..];
        let ws = rest.iter().take_while(|c| c.is_ascii_whitespace()).count();
        if rest[..ws].iter().filter(|&&c| c == b'\n').count() > 1 {
            blank_since_doc = true;
        }
        i += ws;
        if head[i..].starts_with(b"//") {
            let end = head[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(head.len(), |p| i + p);
            take_comment(&mut doc, &mut blank_since_doc, i, end);
            i = end;
        } else if head[i..].starts_with(b"/*") {
            let end = find(head, i + 2, b"*/").map_or(head.len(), |p| p + 2);
            take_comment(&mut doc, &mut blank_since_doc, i, end);
            i = end;
        } else if head[i..].starts_with(b"#") {
            i = end_of_preprocessor_line(head, i);
            doc.clear();
        } else {
            if blank_since_doc {
                doc.clear();
            }
            return Some((past_template_clause(head, i), doc));
        }
    }
}

/// Past a `template <...>` clause at `i` and the whitespace after it: a
/// template's definition starts where the grammar starts it when it reads
/// the definition whole, at the function after the clause.
fn past_template_clause(head: &[u8], i: usize) -> usize {
    let rest = &head[i..];
    let Some(after) = rest.strip_prefix(b"template") else {
        return i;
    };
    let open = after.iter().take_while(|c| c.is_ascii_whitespace()).count();
    if after.get(open) != Some(&b'<') {
        return i;
    }
    let (mut angle, mut paren) = (0usize, 0usize);
    for (k, &b) in after.iter().enumerate().skip(open) {
        match b {
            b'(' => paren += 1,
            b')' => paren = paren.saturating_sub(1),
            b'<' if paren == 0 => angle += 1,
            b'>' if paren == 0 => {
                angle -= 1;
                if angle == 0 {
                    let end = i + b"template".len() + k + 1;
                    let ws = head[end..]
                        .iter()
                        .take_while(|c| c.is_ascii_whitespace())
                        .count();
                    return end + ws;
                }
            }
            _ => {}
        }
    }
    i
}

/// Adds a comment to the run above a definition, starting a new run after
/// a blank line.
fn take_comment(doc: &mut Vec<(usize, usize)>, blank: &mut bool, start: usize, end: usize) {
    if *blank {
        doc.clear();
        *blank = false;
    }
    doc.push((start, end));
}

/// The end of a preprocessor line starting at `i`, continuation lines
/// (`\` before the line break) included.
fn end_of_preprocessor_line(text: &[u8], mut i: usize) -> usize {
    while i < text.len() {
        if text[i] == b'\n' && (i == 0 || text[i - 1] != b'\\') {
            return i;
        }
        i += 1;
    }
    text.len()
}

fn find(text: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    text.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Cuts a string to at most `max` characters.
pub(crate) fn truncate_chars(s: &mut String, max: usize) {
    if let Some((i, _)) = s.char_indices().nth(max) {
        s.truncate(i);
    }
}

/// The text of consecutive comments without their markers (`//`, `///`,
/// `/* */`, a leading `*` on block lines, `#`), blank lines at either end
/// removed.
pub(crate) fn clean_comments<'a>(comments: impl Iterator<Item = &'a [u8]>) -> String {
    let mut lines: Vec<String> = Vec::new();
    for comment in comments {
        let text = String::from_utf8_lossy(comment);
        for line in text.lines() {
            lines.push(clean_comment_line(line).to_string());
        }
    }
    join_trimmed(lines)
}

fn clean_comment_line(line: &str) -> &str {
    let mut l = line.trim();
    let mut had_marker = false;
    for marker in ["/**", "/*!", "/*", "///", "//!", "//", "#"] {
        if let Some(rest) = l.strip_prefix(marker) {
            l = rest;
            had_marker = true;
            break;
        }
    }
    if let Some(rest) = l.strip_suffix("*/") {
        l = rest;
    }
    if !had_marker {
        // Middle lines of a block comment: ` * text`.
        if let Some(rest) = l.strip_prefix('*') {
            l = rest;
        }
    }
    l.strip_prefix(' ').unwrap_or(l).trim_end()
}

/// Drops blank lines at both ends and joins with `\n`.
fn join_trimmed(lines: Vec<String>) -> String {
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

/// A Python string literal's content as a docstring: prefix and quotes
/// removed, the common indentation of continuation lines removed (like
/// `inspect.cleandoc`).
pub(crate) fn docstring(literal: &str) -> String {
    let s = literal.trim_start_matches(['r', 'R', 'b', 'B', 'u', 'U', 'f', 'F']);
    let inner = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|q| {
            let rest = s.strip_prefix(q)?;
            Some(rest.strip_suffix(q).unwrap_or(rest))
        })
        .unwrap_or(s);
    let mut lines = inner.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = vec![first];
    out.extend(
        rest.iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end().to_string()),
    );
    join_trimmed(out)
}

/// The name of a base type as written (`pkg.Base`, `ns::Mixin<int>`,
/// `*Base`, PHP's `\App\Base`): last segment, generic arguments dropped.
pub(crate) fn base_name(text: &str) -> &str {
    let mut t = text.trim().trim_start_matches(['*', '&', ' ']);
    // `&'a mut [u8]`: past the lifetime and the qualifiers, a slice, array
    // or tuple type is named by itself (`[u8]`), not by a qualifier.
    loop {
        let word_end = t.find(char::is_whitespace).unwrap_or(t.len());
        let word = &t[..word_end];
        if word.starts_with('\'') || matches!(word, "mut" | "dyn" | "const" | "impl") {
            t = t[word_end..]
                .trim_start()
                .trim_start_matches(['*', '&', ' ']);
        } else {
            break;
        }
    }
    if let Some(close) = t
        .starts_with(['[', '('])
        .then(|| t.find([']', ')']))
        .flatten()
    {
        return &t[..=close];
    }
    let t = t.find(['<', '[', '(']).map_or(t, |i| &t[..i]).trim_end();
    let start = t.rfind(['.', ':', '\\']).map_or(0, |i| i + 1);
    // `dyn Trait`, `'a Foo`, `mut Foo`: the name is the last word.
    t[start..].split_whitespace().last().unwrap_or("")
}

/// The last segment of a dotted, `::` or `\\` path: `load` for `Config.load`.
pub(crate) fn last_segment(text: &str) -> &str {
    let start = text.rfind(['.', ':', '\\']).map_or(0, |i| i + 1);
    text[start..].trim()
}

/// A short, one-line excerpt of broken source for a diagnostic.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out = line.replace('`', "'");
    if out.chars().count() > 30 {
        truncate_chars(&mut out, 30);
        out.push_str("...");
    }
    out
}

/// A name without the backticks that let Kotlin, Swift and Scala use a
/// keyword or spaces in it: `` `default` `` is `default`.
pub(crate) fn unquoted(name: &str) -> &str {
    match name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
        Some(inner) if !inner.is_empty() => inner,
        _ => name,
    }
}

/// A C# XML doc comment's text without the `<summary>` tags that wrap
/// nearly every one; other tags are kept.
pub(crate) fn without_summary_tags(doc: String) -> String {
    if !doc.contains("summary>") {
        return doc;
    }
    // A line that held only a tag goes with it.
    let lines: Vec<String> = doc
        .lines()
        .filter_map(|l| {
            if !l.contains("summary>") {
                return Some(l.to_string());
            }
            let rest = l.replace("<summary>", "").replace("</summary>", "");
            let rest = rest.trim();
            (!rest.is_empty()).then(|| rest.to_string())
        })
        .collect();
    join_trimmed(lines)
}

/// Whether a name is written in UPPER_CASE (a constant by convention).
pub(crate) fn is_upper_case(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_head_starts_past_the_last_statement_it_swept_in() {
        let head = b"FMT_BEGIN_EXPORT\nextern template FMT_API auto f<char>(int) -> int;\n\
#endif  // FMT_HEADER_ONLY\n\ninline auto g() -> bool {\n  return x; // }\n}\n\n\
// Writes two digits.\n/* to out */\ntemplate <typename Char>\nFMT_INLINE void ";
        let (start, doc) = start_after_stray_head(head).expect("a terminator");
        assert!(head[start..].starts_with(b"FMT_INLINE void "));
        let doc: Vec<&[u8]> = doc.iter().map(|&(s, e)| &head[s..e]).collect();
        assert_eq!(doc, [&b"// Writes two digits."[..], b"/* to out */"]);

        // A comment after a blank line is no doc; a `}` in a comment, a
        // string or a preprocessor line is no terminator.
        let head = b"int a;\n// old\n\nstatic const char* s = \"}\";\n#define X }\n/* } */ void ";
        let (start, doc) = start_after_stray_head(head).expect("a terminator");
        assert!(head[start..].starts_with(b"void"));
        assert_eq!(doc.len(), 1, "the block comment right above");

        // A definition's own head has no terminator.
        assert_eq!(
            start_after_stray_head(b"template <typename T>\n[[nodiscard]] inline auto "),
            None
        );
        assert_eq!(start_after_stray_head(b"#if X\nstatic\n#endif\nint "), None);
    }

    #[test]
    fn signature_collapses_and_drops_body_openers() {
        assert_eq!(
            signature(b"def load(self,\n    path: str) -> Config:"),
            "def load(self, path: str) -> Config"
        );
        assert_eq!(signature(b"pub fn f() -> u8 {"), "pub fn f() -> u8");
        assert_eq!(signature(b"void f();\n"), "void f()");
        assert_eq!(signature(b"A::"), "A::");
        let long = "x".repeat(300);
        assert_eq!(
            signature(long.as_bytes()).chars().count(),
            MAX_SIGNATURE_CHARS
        );
        assert_eq!(
            signature("é".repeat(250).as_bytes()).chars().count(),
            MAX_SIGNATURE_CHARS
        );
    }

    #[test]
    fn comments_lose_their_markers() {
        let c: [&[u8]; 2] = [b"/// First line.\n", b"///   indented"];
        assert_eq!(clean_comments(c.into_iter()), "First line.\n  indented");
        let block: [&[u8]; 1] = [b"/**\n * Loads.\n *\n * @param x the thing\n */"];
        assert_eq!(
            clean_comments(block.into_iter()),
            "Loads.\n\n@param x the thing"
        );
        let ruby: [&[u8]; 2] = [b"# Loads config.", b"#"];
        assert_eq!(clean_comments(ruby.into_iter()), "Loads config.");
    }

    #[test]
    fn docstrings_are_dedented() {
        assert_eq!(
            docstring("\"\"\"Load it.\n\n    Details here.\n      More.\n    \"\"\""),
            "Load it.\n\nDetails here.\n  More."
        );
        assert_eq!(docstring("r'raw'"), "raw");
        assert_eq!(docstring("\"\"\"\"\"\""), "");
    }

    #[test]
    fn base_names_keep_the_last_segment() {
        assert_eq!(base_name("ns::Mixin<int>"), "Mixin");
        assert_eq!(base_name("pkg.Base"), "Base");
        assert_eq!(base_name("*Base"), "Base");
        assert_eq!(base_name("Generic[T]"), "Generic");
        assert_eq!(base_name("&'a mut Foo<T>"), "Foo");
        assert_eq!(base_name("&mut [u8]"), "[u8]");
        assert_eq!(base_name("&'a [T]"), "[T]");
        assert_eq!(base_name("dyn Buf"), "Buf");
        assert_eq!(last_segment("std::fs::read"), "read");
        assert_eq!(base_name("\\App\\Core\\Base"), "Base");
        assert_eq!(last_segment("App\\Util\\helper"), "helper");
    }

    #[test]
    fn backticks_are_dropped_from_names() {
        assert_eq!(unquoted("`default`"), "default");
        assert_eq!(unquoted("`a test`"), "a test");
        assert_eq!(unquoted("plain"), "plain");
        assert_eq!(unquoted("`"), "`");
    }

    #[test]
    fn summary_tags_are_dropped() {
        assert_eq!(
            without_summary_tags(
                "<summary>\nLoads.\n</summary>\n<param name=\"x\">X.</param>".into()
            ),
            "Loads.\n<param name=\"x\">X.</param>"
        );
        assert_eq!(
            without_summary_tags("<summary>One.</summary>".into()),
            "One."
        );
    }

    #[test]
    fn excerpts_are_short_and_single_line() {
        assert_eq!(excerpt(b"\n  def f(:\n  pass"), "def f(:");
        assert_eq!(
            excerpt("a".repeat(40).as_bytes()),
            format!("{}...", "a".repeat(30))
        );
        assert!(is_upper_case("MAX_RETRIES") && !is_upper_case("Config") && !is_upper_case("_"));
    }
}
