//! The earlier changes a question names. A commit message says "Touch up
//! PR 1306", "Further to #2377" or "fix #587 by reverting 894714a": the
//! change it continues is named, by its pull request's number (which the
//! merge's or the squashed commit's message carries, "Merge pull request
//! #1306 from ..." or "... (#1306)") or by its hash. Linking commits by
//! the issue and pull request numbers their messages cite is how
//! repository-mining studies recover which changes belong together; the
//! files of a named change are where its follow-up goes.

/// An earlier change named in a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A pull request's or an issue's number: `#1306`, `PR 1306`.
    Number(u64),
    /// A commit's abbreviated or full hash, lowercase.
    Hash(String),
}

/// Shortest abbreviated hash taken for one: git's default abbreviation.
const MIN_HASH: usize = 7;

/// The changes `query` names, each once, in order.
pub fn references(query: &str) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    let mut push = |r: Reference| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    for n in hash_numbers(query) {
        push(Reference::Number(n));
    }
    // "PR 1306", "pull request 1306": a number after those words.
    let words: Vec<&str> = query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let after_pr = i > 0
            && (words[i - 1].eq_ignore_ascii_case("pr")
                || (words[i - 1].eq_ignore_ascii_case("request")
                    && i > 1
                    && words[i - 2].eq_ignore_ascii_case("pull")));
        if after_pr && w.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = w.parse() {
                push(Reference::Number(n));
            }
        }
        if is_hash(w) {
            push(Reference::Hash(w.to_ascii_lowercase()));
        }
    }
    out
}

/// The numbers written `#N` in `text`.
pub fn hash_numbers(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.split('#').skip(1).filter_map(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        // `#12abc` is no number; `#12.` and `#12)` are.
        let ends = rest[digits..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        (digits > 0 && ends)
            .then(|| rest[..digits].parse().ok())
            .flatten()
    })
}

/// Whether `word` reads as a commit hash: hexadecimal digits, at least
/// [`MIN_HASH`] of them, with a letter and a digit among them (a number or
/// a word such as "defaced" is not one).
pub(crate) fn is_hash(word: &str) -> bool {
    (MIN_HASH..=40).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_hexdigit())
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// `text` without the commit hashes it holds among other words: a hash
/// is a name of a change, not words of code, and split at its digits it
/// would match numbers and letters anywhere. A text of hashes alone is
/// kept as it is.
pub fn without_hashes(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let (mut dropped, mut kept) = (false, false);
    let mut rest = text;
    while !rest.is_empty() {
        let run = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        let (word, after) = rest.split_at(run);
        if is_hash(word) {
            dropped = true;
            out.push(' ');
        } else {
            kept |= !word.is_empty();
            out.push_str(word);
        }
        let sep = after.chars().next().map_or(0, char::len_utf8);
        out.push_str(&after[..sep]);
        rest = &after[sep..];
    }
    if dropped && kept {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

impl Reference {
    /// Whether the commit `id` (lowercase hex) with `message` is the
    /// change this names.
    pub fn names(&self, message: &str, id: &str) -> bool {
        match self {
            Reference::Number(n) => hash_numbers(message).any(|m| m == *n),
            Reference::Hash(h) => id.starts_with(h.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_hashes_a_message_names() {
        use Reference::*;
        assert_eq!(references("Touch up PR 1306"), [Number(1306)]);
        assert_eq!(
            references("fix #587 by reverting 894714a and 00cc734 (#606)"),
            [
                Number(587),
                Number(606),
                Hash("894714a".into()),
                Hash("00cc734".into())
            ]
        );
        assert_eq!(references("Merge pull request 12 from a/b"), [Number(12)]);
        // Words and numbers that are neither.
        assert!(references("Version 0.27.0, 2024 release of 1234567").is_empty());
        assert!(references("a defaced decade; issue#12abc").is_empty());
    }

    #[test]
    fn hashes_are_left_out_of_the_words_of_a_text_that_has_others() {
        assert_eq!(
            without_hashes("Revert 894714a: the café (#12)"),
            "Revert  : the café (#12)"
        );
        assert_eq!(without_hashes("894714a"), "894714a");
        assert_eq!(
            without_hashes("parse 1234567 deadbeef"),
            "parse 1234567 deadbeef"
        );
    }

    #[test]
    fn a_reference_names_the_change_whose_message_or_id_it_cites() {
        let n = Reference::Number(1306);
        assert!(n.names("Merge pull request #1306 from b41sh/fix", "ab"));
        assert!(n.names("Align number strings (#1306)", "ab"));
        assert!(!n.names("Merge pull request #13060 from x", "ab"));
        assert!(!n.names("Release 1.0.1306", "ab"));
        let h = Reference::Hash("894714a".into());
        assert!(h.names("anything", "894714a0c1d2"));
        assert!(!h.names("894714a", "00cc734"));
    }
}
