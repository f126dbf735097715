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
/// once, in the order the runs start. `is_stop` says whether a lowercase
/// word is a stop word (the index's analyser decides): a run never holds
/// one. A word must be two letters or more (an article or a variable name
/// is not a word of a phrase).
pub fn initialisms(query: &str, is_stop: &dyn Fn(&str) -> bool) -> Vec<String> {
    // Words as the query spells them, in order. A phrase runs over spaces
    // and hyphens; other punctuation ends it, and so does anything that
    // is not a word of letters (a number, `snake_case`, a path).
    let mut runs: Vec<Vec<String>> = Vec::new();
    for clause in
        query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c.is_whitespace()))
    {
        runs.push(Vec::new());
        for token in clause.split(|c: char| c == '-' || c.is_whitespace()) {
            if token.is_empty() {
                continue;
            }
            let word = token.to_lowercase();
            let plain = word.chars().count() >= 2 && word.chars().all(char::is_alphabetic);
            if plain && !is_stop(&word) {
                runs.last_mut().expect("a run per clause").push(word);
            } else if !runs.last().is_some_and(Vec::is_empty) {
                runs.push(Vec::new());
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for run in &runs {
        for start in 0..run.len() {
            for len in 2..=MAX_RUN.min(run.len() - start) {
                let letters: String = run[start..start + len]
                    .iter()
                    .filter_map(|w| w.chars().next())
                    .collect();
                if !out.contains(&letters) {
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
            initialisms("in little-endian byte order", &stop),
            ["le", "leb", "eb", "ebo", "bo"].map(String::from)
        );
        assert!(
            initialisms("Evict the least recently used entry", &stop).contains(&"lru".to_string())
        );
    }

    #[test]
    fn a_stop_word_a_number_or_an_identifier_breaks_the_run() {
        // "time to live": the stop word parts the phrase.
        assert!(initialisms("time to live", &stop).is_empty());
        assert!(initialisms("read 128 bits", &stop).is_empty());
        assert!(initialisms("call parse_config now", &stop).is_empty());
        // A one-letter word is no word of a phrase.
        assert!(initialisms("x y", &stop).is_empty());
    }

    #[test]
    fn punctuation_other_than_a_hyphen_ends_the_phrase() {
        assert!(initialisms("the header. Writes", &stop).is_empty());
        assert_eq!(
            initialisms("read-only view", &stop),
            ["ro", "rov", "ov"].map(String::from)
        );
    }

    #[test]
    fn each_initialism_comes_once() {
        let got = initialisms("big endian, big endian", &stop);
        assert_eq!(got.iter().filter(|s| *s == "be").count(), 1, "{got:?}");
    }
}
