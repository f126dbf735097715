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

/// Changes a question names that are looked for at most: each is matched
/// against every commit of the history, and a pasted changelog of hundreds
/// of numbers should cost what a sentence does.
const MAX_REFERENCES: usize = 16;

/// The changes `query` names, each once, in order, at most
/// [`MAX_REFERENCES`] of them (its `#N` first).
pub fn references(query: &str) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    let mut push = |r: Reference| {
        if out.len() < MAX_REFERENCES && !out.contains(&r) {
            out.push(r);
        }
    };
    for n in hash_numbers(query) {
        push(Reference::Number(n));
    }
    // "PR 1306", "pull request 1306": a number after those words.
    let words: Vec<&str> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
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

/// The numbers written `#N` in `text`, where `#` starts a word (at the
/// start, after a space or an opening bracket): `rust-lang/rust#123` is
/// another repository's, `C#7` a language and `&#39;` an entity. A
/// number with a leading zero is no pull request's (a colour's `#000`).
pub fn hash_numbers(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.match_indices('#').filter_map(move |(at, _)| {
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '['));
        let rest = &text[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        // `#12abc` is no number; `#12.` and `#12)` are.
        let ends = rest[digits..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        (starts_word && digits > 0 && !rest.starts_with('0') && ends)
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

/// `text` with the words `drop` says are not words of code blanked out,
/// a word being what the index splits text into (letters, digits and
/// `_`); `None` when it drops none.
pub fn without_words(text: &str, drop: impl Fn(&str) -> bool) -> Option<String> {
    // Every search asks, and most questions drop nothing: the text is
    // copied only from the first word dropped.
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut start = None;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (is_word(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                if drop(&text[s..i]) {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    o.push_str(&text[copied..s]);
                    o.push(' ');
                    copied = i;
                }
            }
            _ => {}
        }
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// Whether the commit `id` starts with the hexadecimal digits `prefix`
/// (lowercase), compared digit by digit: a question's hash is matched to
/// every commit of a history, and a string per commit was most of that.
pub fn id_starts_with(id: &[u8; 20], prefix: &str) -> bool {
    prefix.len() <= 40
        && prefix.bytes().enumerate().all(|(i, c)| {
            let nibble = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                _ => return false,
            };
            let byte = id[i / 2];
            nibble == if i % 2 == 0 { byte >> 4 } else { byte & 0xf }
        })
}

impl Reference {
    /// Whether the commit `id` with `message` is the change this names.
    pub fn names(&self, message: &str, id: &[u8; 20]) -> bool {
        match self {
            Reference::Number(n) => hash_numbers(message).any(|m| m == *n),
            Reference::Hash(h) => id_starts_with(id, h),
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
        // Another repository's, a language, an entity, a colour.
        assert!(references("see rust-lang/rust#123, C#7, &#39;, #000").is_empty());
        // A pasted changelog: its first numbers only.
        let changelog: String = (100..400).map(|n| format!("- fixed #{n}\n")).collect();
        let refs = references(&changelog);
        assert_eq!(refs.len(), MAX_REFERENCES);
        assert_eq!(refs[0], Number(100));
    }

    #[test]
    fn words_are_dropped_whole_at_the_index_s_word_boundaries() {
        let hashes = |t: &str| without_words(t, is_hash);
        assert_eq!(
            hashes("Revert 894714a: the café (#12)").as_deref(),
            Some("Revert  : the café (#12)")
        );
        // A name holding hex digits is one word, and not a hash.
        assert_eq!(hashes("parse_ed25519_key and the café"), None);
        assert_eq!(hashes("nothing to drop"), None);
        // A word that starts or ends the text.
        assert_eq!(hashes("894714a").as_deref(), Some(" "));
        assert_eq!(hashes("see 894714a").as_deref(), Some("see  "));
    }

    #[test]
    fn an_id_starts_with_the_hex_digits_of_its_hash() {
        let mut id = [0u8; 20];
        id[0] = 0x89;
        id[1] = 0x47;
        id[2] = 0x14;
        id[3] = 0xa0;
        assert!(id_starts_with(&id, "894714a"));
        assert!(id_starts_with(&id, "8"));
        assert!(!id_starts_with(&id, "894714b"));
        assert!(!id_starts_with(&id, "89x"));
        // The whole id; one digit more than an id has is no prefix of it.
        assert!(id_starts_with(&id, &format!("{:0<40}", "894714a0")));
        assert!(!id_starts_with(&id, &format!("{:0<41}", "894714a0")));
    }

    #[test]
    fn a_reference_names_the_change_whose_message_or_id_it_cites() {
        let id = [0u8; 20];
        let n = Reference::Number(1306);
        assert!(n.names("Merge pull request #1306 from b41sh/fix", &id));
        assert!(n.names("Align number strings (#1306)", &id));
        assert!(!n.names("Merge pull request #13060 from x", &id));
        assert!(!n.names("Release 1.0.1306", &id));
        assert!(!n.names("Bump rust-lang/rust#1306", &id));
        let mut named = [0u8; 20];
        named[..4].copy_from_slice(&[0x89, 0x47, 0x14, 0xa0]);
        let h = Reference::Hash("894714a".into());
        assert!(h.names("anything", &named));
        assert!(!h.names("894714a", &id));
    }
}
