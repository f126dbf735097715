//! Names made of a phrase's first letters. A question says "little-endian
//! byte order" or "least recently used"; the code says `put_u32_le` and
//! `LruCache`. Abbreviation-expansion studies of identifiers (AMAP, Hill et
//! al. 2008) find this acronym pattern beside the short forms of single
//! words ([`crate::abbreviations`]): a run of adjacent words spelled by
//! their initials.
//!
//! A question in words is also searched, at a lower weight, for the
//! initials of each run of two or three adjacent content words (no stop
//! word within the run: "time to live" gives none). Only runs of letters
//! count, so a number or an identifier in the question makes none.

/// Runs of this many adjacent words at most give an initialism.
const MAX_RUN: usize = 3;

/// The initialisms of `query`'s runs of adjacent words, lowercase, each
/// once, in the order the runs end, at most `limit` of them (a pasted
/// paragraph costs what a sentence does: its words are read only until
/// then). `is_stop` says whether a lowercase word is a stop word (the
/// index's analyser decides): a run never holds one. A word must be two
/// letters or more (an article or a variable name is not a word of a
/// phrase).
pub fn initialisms(query: &str, is_stop: &dyn Fn(&str) -> bool, limit: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A phrase runs over spaces and hyphens; other punctuation ends it,
    // and so does anything that is not a word of letters (a number,
    // `snake_case`, a path). Only the run's last MAX_RUN words matter.
    let mut run: Vec<char> = Vec::new();
    for clause in
        query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c.is_whitespace()))
    {
        run.clear();
        for token in clause.split(|c: char| c == '-' || c.is_whitespace()) {
            if token.is_empty() {
                continue;
            }
            if out.len() >= limit {
                return out;
            }
            let word = token.to_lowercase();
            let plain = word.chars().count() >= 2 && word.chars().all(char::is_alphabetic);
            if !plain || is_stop(&word) {
                run.clear();
                continue;
            }
            run.push(word.chars().next().expect("a word of two letters"));
            if run.len() > MAX_RUN {
                run.remove(0);
            }
            // The runs ending at this word: its last two, then three.
            for len in 2..=run.len() {
                let letters: String = run[run.len() - len..].iter().collect();
                if out.len() < limit && !out.contains(&letters) {
                    out.push(letters);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(w: &str) -> bool {
        matches!(w, "a" | "an" | "the" | "in" | "to" | "of" | "is")
    }

    #[test]
    fn adjacent_words_give_their_initials() {
        assert_eq!(
            initialisms("in little-endian byte order", &stop, 16),
            ["le", "eb", "leb", "bo", "ebo"].map(String::from)
        );
        assert!(
            initialisms("Evict the least recently used entry", &stop, 16)
                .contains(&"lru".to_string())
        );
    }

    #[test]
    fn a_stop_word_a_number_or_an_identifier_breaks_the_run() {
        // "time to live": the stop word parts the phrase.
        assert!(initialisms("time to live", &stop, 16).is_empty());
        assert!(initialisms("read 128 bits", &stop, 16).is_empty());
        assert!(initialisms("call parse_config now", &stop, 16).is_empty());
        // A one-letter word is no word of a phrase.
        assert!(initialisms("x y", &stop, 16).is_empty());
    }

    #[test]
    fn punctuation_other_than_a_hyphen_ends_the_phrase() {
        assert!(initialisms("the header. Writes", &stop, 16).is_empty());
        assert_eq!(
            initialisms("read-only view", &stop, 16),
            ["ro", "ov", "rov"].map(String::from)
        );
    }

    #[test]
    fn a_long_question_gives_at_most_the_limit_and_is_read_no_further() {
        let words = std::cell::Cell::new(0);
        let counting = |w: &str| {
            words.set(words.get() + 1);
            stop(w)
        };
        let paragraph = "alpha beta gamma delta ".repeat(200);
        let got = initialisms(&paragraph, &counting, 5);
        assert_eq!(got, ["ab", "bg", "abg", "gd", "bgd"].map(String::from));
        assert!(words.get() <= 8, "read {} words", words.get());
    }

    #[test]
    fn each_initialism_comes_once() {
        let got = initialisms("big endian, big endian", &stop, 16);
        assert_eq!(got.iter().filter(|s| *s == "be").count(), 1, "{got:?}");
    }
}
