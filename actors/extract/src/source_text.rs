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
