//! Text an agent pastes from the program's output: an error message, a
//! log line, a string the program prints. It is a string literal of the
//! code (`"Too many redirects occurred trying to load URL %s"`), and the
//! code that holds it is the answer, however long the function around it.
//!
//! The lexical index holds each body's words without positions (a phrase
//! index would cost a third more disk), and BM25 over a long body weighs
//! each of them little: a one-line declaration whose name holds one of
//! the words outranks it. So the best candidates are read again, and the
//! share of a string literal's words the query holds in their order
//! counts. Literals, not comments: comments say again what doc comments
//! and docs say, which a description of the code matches too.

/// Words of a pasted text at least: fewer are a name or a question's
/// keywords, not a line of output.
const LEAST_WORDS: usize = 3;

/// What a query asks to find in the code's string literals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phrase {
    /// Its words, lowercase.
    pub words: Vec<String>,
    /// Quoted by a question (`where is "No such option" raised`): found
    /// only whole, in a literal that holds every word in order.
    pub quoted: bool,
}

/// What to look for: the quoted part of a question, else the whole query
/// when it is not a question (a question's words are not the code's). A
/// sentence that is no question quotes what it is about (`True for URLs
/// such as "http://a.b/path"`): all of it is looked for. Text of several
/// lines (a traceback, a log) is looked for a line at a time, its first
/// and last ([`EDGE_LINES`]): the message is the first line of a Java or
/// Go trace and the last of a Python one.
pub fn phrases_of(query: &str) -> Vec<Phrase> {
    // A message may end in a question mark ("Did you mean --color?"):
    // only a question word at its head makes it a question.
    if crate::question_intent::opens_with_question_word(query) {
        // Double quotes and backticks: a single quote is as often an
        // apostrophe ("the user's").
        return ['"', '`']
            .into_iter()
            .flat_map(|quote| {
                let parts: Vec<&str> = query.split(quote).collect();
                // Text between a pair of quotes: the odd parts of a split.
                let pairs = parts.len().saturating_sub(1) / 2;
                parts
                    .into_iter()
                    .skip(1)
                    .step_by(2)
                    .take(pairs)
                    .map(words)
                    .collect::<Vec<_>>()
            })
            .filter(|w| w.len() >= 2)
            .max_by_key(Vec::len)
            .map(|words| Phrase {
                words,
                quoted: true,
            })
            .into_iter()
            .collect();
    }
    let lines: Vec<&str> = query.lines().filter(|l| !l.trim().is_empty()).collect();
    let edges: Vec<&str> = if lines.len() <= 2 * EDGE_LINES {
        lines
    } else {
        lines[..EDGE_LINES]
            .iter()
            .chain(&lines[lines.len() - EDGE_LINES..])
            .copied()
            .collect()
    };
    let texts = if edges.len() > 1 { edges } else { vec![query] };
    texts
        .into_iter()
        .filter_map(|text| {
            let mut words = words(text);
            words.truncate(MOST_WORDS);
            (words.len() >= LEAST_WORDS).then_some(Phrase {
                words,
                quoted: false,
            })
        })
        .collect()
}

/// Lines of each end of a text of many looked for: the lines between are
/// a trace's frames, which quote the code that called on the way (a
/// caller's `read('/etc/app.toml')` holds all of its literal).
const EDGE_LINES: usize = 1;

/// Words of a pasted text looked for: a message is a sentence or two, and
/// matching a pasted page word by word against every literal would cost
/// what its length does.
const MOST_WORDS: usize = 32;

/// `text`'s words, lowercase, split at anything but letters and digits:
/// `%s`, `{}` and punctuation between a message's words do not break its
/// run. Not the index's [`crate::words::split_words`], which splits names
/// (`JsonNull` -> `json null`): a message compared word for word then
/// matched literals that merely spell a name the query names (held-out
/// docstring -> code MRR@10 0.577 -> 0.575, gson's "Creates a new JsonNull
/// object" 1 -> 3).
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The string literals of code `text`, in order: what a program prints is
/// in them, where comments say again what the docs say. Quoted on one
/// line with `"` or `'` (a backslash escapes), or with backticks over
/// several; comments (`//`, `# `, `/* */`) and triple-quoted strings (a
/// Python docstring) are skipped.
pub fn string_literals(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let line_end = |from: usize| {
        b[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| from + p)
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(i),
            // A comment in Python, Ruby or a shell; `#define`, `#include`
            // and JavaScript's `#private` are code.
            b'#' if !b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) => i = line_end(i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            }
            q @ (b'"' | b'\'') if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) => {
                let triple = &text[i..i + 3];
                i = text[i + 3..]
                    .find(triple)
                    .map_or(b.len(), |p| i + 3 + p + 3);
            }
            q @ (b'"' | b'\'' | b'`') => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != q && (q == b'`' || b[j] != b'\n') {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j < b.len() && b[j] == q {
                    out.push(&text[start..j]);
                    i = j + 1;
                } else {
                    // Unterminated on its line: an apostrophe, not a quote.
                    i = start;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The longest common subsequence of `phrase` and `words`, in words: a
/// message's words in their order, with the values the program filled
/// in (`%s`, `{name}`) and those the query has in their place skipped.
fn common_words(phrase: &[&str], words: &[&str]) -> usize {
    let mut row = vec![0usize; words.len() + 1];
    for p in phrase {
        let mut diagonal = 0;
        for (j, w) in words.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if p == w {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[words.len()]
}

/// Words that say little alone: a message held only through them ("for
/// the command") is no quotation.
fn is_content(word: &str) -> bool {
    word.chars().count() > 1 && !crate::lexical::is_stop_word(word)
}

/// How much of one of `text`'s string literals `phrase` holds, in order,
/// as a share of the literal's words: a message pasted with the values
/// the program filled in holds all of its template. Nothing unless at
/// least [`LEAST_WORDS`] words (two of them more than stop words) are
/// held and they are half the phrase and half the literal: a short
/// literal ("is not a valid") inside a long sentence, or a sentence's
/// few words inside a long help text, is no quotation. A quoted phrase
/// counts whole (1) in a literal that holds all of it, else not at all.
pub fn share_in_literals(phrase: &Phrase, text: &str) -> f32 {
    let asked: Vec<&str> = phrase.words.iter().map(String::as_str).collect();
    let asked_content: Vec<&str> = asked.iter().copied().filter(|w| is_content(w)).collect();
    let least = LEAST_WORDS.min(asked.len());
    let vocabulary: std::collections::HashSet<&str> = asked.iter().copied().collect();
    let mut best = 0.0f32;
    for literal in string_literals(text) {
        let words = words(literal);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        // Most literals share too few words to be worth the alignment.
        if words.iter().filter(|w| vocabulary.contains(*w)).count() < least {
            continue;
        }
        let common = common_words(&asked, &words);
        if phrase.quoted {
            if common == asked.len() {
                return 1.0;
            }
            continue;
        }
        if common < least || 2 * common < asked.len() || 2 * common < words.len() {
            continue;
        }
        let content: Vec<&str> = words.iter().copied().filter(|w| is_content(w)).collect();
        if common_words(&asked_content, &content) < 2.min(asked_content.len()) {
            continue;
        }
        best = best.max(common as f32 / words.len() as f32);
    }
    best.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one phrase of `query`.
    fn one(query: &str) -> Phrase {
        let mut phrases = phrases_of(query);
        assert_eq!(phrases.len(), 1, "{query}");
        phrases.pop().unwrap()
    }

    #[test]
    fn a_trace_is_looked_for_at_its_first_and_last_lines() {
        let trace = "Traceback (most recent call last):\n  File \"app.py\", line 9, in <module>\n    main()\n  File \"app.py\", line 5, in load_config\n    raise ValueError(f\"config file {path} has no [server] section\")\nValueError: config file /etc/app.toml has no [server] section\n";
        let phrases = phrases_of(trace);
        let code = r#"raise ValueError(f"config file {path} has no [server] section")"#;
        let best = phrases
            .iter()
            .map(|p| share_in_literals(p, code))
            .fold(0.0f32, f32::max);
        // Its last line, the message, holds all of the literal but the
        // value; its first says nothing.
        assert_eq!(best, 6.0 / 7.0);
        assert_eq!(phrases.len(), 2);
        // The whole trace as one phrase holds the message in under half
        // its words.
        let whole = Phrase {
            words: words(trace),
            quoted: false,
        };
        assert_eq!(share_in_literals(&whole, code), 0.0);
        // Only the ends of a long log.
        let log: String = (0..20).map(|i| format!("line {i} of the log\n")).collect();
        let phrases = phrases_of(&log);
        assert_eq!(phrases.len(), 2);
        assert_eq!(phrases[1].words, ["line", "19", "of", "the", "log"]);
    }

    #[test]
    fn a_pasted_message_is_found_with_the_values_filled_in() {
        let phrase = one("Too many redirects occurred trying to load URL https://example.com/a");
        let code = r#"// enforce too many redirects:
        if (numRedirects >= MAX_REDIRECTS)
            throw new IOException(String.format("Too many redirects occurred trying to load URL %s", url));"#;
        // Every word of the message but the value's placeholder.
        assert_eq!(share_in_literals(&phrase, code), 8.0 / 9.0);
        // A value in the middle of the message.
        let phrase = one("No such option: --colour. Did you mean --color?");
        let code = r#"raise NoSuchOption(f"No such option: {name}. Did you mean {best}?")"#;
        assert_eq!(share_in_literals(&phrase, code), 6.0 / 8.0);
    }

    #[test]
    fn comments_docstrings_and_short_literals_count_for_nothing() {
        let pasted = |text: &str| Phrase {
            words: words(text),
            quoted: false,
        };
        let phrase = pasted("Returns the number of bytes written to the buffer so far");
        // A comment or a docstring says what the doc says.
        for code in [
            "// the number of bytes written to the buffer so far\nreturn n;",
            "# the number of bytes written to the buffer so far\nreturn n",
            "/* the number of bytes written\n to the buffer so far */ return n;",
            "\"\"\"Returns the number of bytes written to the buffer so far.\"\"\"\nreturn n",
        ] {
            assert_eq!(share_in_literals(&phrase, code), 0.0, "{code}");
        }
        // A short literal inside a long sentence, a sentence's few words
        // inside a long help text, stop words alone.
        assert_eq!(share_in_literals(&phrase, r#"log("the number of");"#), 0.0);
        let phrase = pasted("Check if the client being closed");
        let help = r#"raise RuntimeError("Cannot send a request, as the client has been closed.")"#;
        assert_eq!(share_in_literals(&phrase, help), 0.0);
        let phrase = pasted("sets arguments for the command");
        assert_eq!(
            share_in_literals(&phrase, r#"use("run for the command")"#),
            0.0
        );
        // Lifetimes and apostrophes make short fragments at most; the
        // string after them is read whole.
        let literals = string_literals("fn f<'a>(x: &'a str) -> &'a str { \"no such option\" }");
        assert!(literals.contains(&"no such option"), "{literals:?}");
    }

    #[test]
    fn a_directive_or_a_private_field_is_code_and_its_literal_is_read() {
        assert_eq!(
            string_literals("#define MSG \"out of memory\"\nthis.#n = 'a b c'; # 'no'"),
            ["out of memory", "a b c"]
        );
    }

    #[test]
    fn any_text_is_scanned_without_a_panic() {
        // Escapes before multi-byte characters, quotes and comments left
        // open at the end, every prefix of them.
        let text = "f(\"\\é\", '\\ü', `\\ß`) /* é \"x\" \\\"'''é";
        for end in (0..=text.len()).filter(|e| text.is_char_boundary(*e)) {
            for literal in string_literals(&text[..end]) {
                assert!(text.contains(literal));
            }
        }
        assert_eq!(string_literals("\"é\" '\\ü'"), ["é", "\\ü"]);
    }

    #[test]
    fn literals_are_read_in_each_quote_and_across_lines_in_backticks() {
        assert_eq!(
            string_literals("f(\"a \\\" b\", 'c d', `e\nf`) // \"no\""),
            ["a \\\" b", "c d", "e\nf"]
        );
    }

    #[test]
    fn a_question_looks_for_its_quoted_part_only() {
        let quoted = one(r#"where is "No such option" raised"#);
        assert_eq!(quoted.words, ["no", "such", "option"]);
        assert!(quoted.quoted);
        // Found whole in a longer literal, and not in part.
        let code = r#"raise NoSuchOption(f"No such option: {name}")"#;
        assert_eq!(share_in_literals(&quoted, code), 1.0);
        assert_eq!(share_in_literals(&quoted, r#"f("No option")"#), 0.0);
        assert_eq!(phrases_of("where is the config loaded"), []);
        assert_eq!(phrases_of("how are redirects followed?"), []);
        assert_eq!(phrases_of("parse config"), []);
        // A lone quoted word is a name, not a message; a single quote
        // is an apostrophe as often as a quote.
        assert_eq!(phrases_of("where is `parse` called"), []);
        assert_eq!(
            phrases_of("where is the user's config and the app's name"),
            []
        );
        // A sentence that is no question is looked for whole, its
        // quoted example among its words (a name such as "URLs" is one).
        let whole = one("Return True for URLs such as 'http://a.b/path'");
        assert_eq!(whole.words.len(), 10, "{:?}", whole.words);
        assert!(whole
            .words
            .ends_with(&["http", "a", "b", "path"].map(String::from)));
    }
}
