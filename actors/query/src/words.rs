//! Identifier splitting: what lexical and semantic search see of code.
//! `loadConfigFile`, `load_config_file` and `src/load-config/file.py` all
//! become `load config file ...`.

/// Splits identifiers, paths and prose into lowercase words.
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

/// Calls `each` with every word [`split_words`] gives, in order, without
/// a string or a vector per word: building a head's lexical index splits
/// every identifier of the repository, and the allocations were most of
/// that work.
pub fn for_each_word(text: &str, mut each: impl FnMut(&str)) {
    let mut lower = String::new();
    let mut emit = |word: &str| {
        lower.clear();
        if word.is_ascii() {
            lower.push_str(word);
            lower.make_ascii_lowercase();
        } else {
            // Whole, as `str::to_lowercase` reads a word (a final sigma).
            lower.push_str(&word.to_lowercase());
        }
        each(&lower);
    };
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        if chunk.is_empty() {
            continue;
        }
        let mut start = 0;
        let mut prev: Option<char> = None;
        let mut chars = chunk.char_indices().peekable();
        while let Some((i, cur)) = chars.next() {
            if let Some(prev) = prev {
                let next_lower = chars.peek().is_some_and(|(_, c)| c.is_lowercase());
                // camelCase, HTTPServer -> HTTP Server, and letter/digit boundaries.
                let boundary = (prev.is_lowercase() && cur.is_uppercase())
                    || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                    || (prev.is_alphabetic() != cur.is_alphabetic());
                if boundary {
                    emit(&chunk[start..i]);
                    start = i;
                }
            }
            prev = Some(cur);
        }
        emit(&chunk[start..]);
    }
}

/// [`split_words`] joined by spaces.
pub fn words(text: &str) -> String {
    split_words(text).join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_every_identifier_style() {
        assert_eq!(split_words("loadConfigFile"), ["load", "config", "file"]);
        assert_eq!(split_words("load_config_file"), ["load", "config", "file"]);
        assert_eq!(
            split_words("HTTPServer.run2"),
            ["http", "server", "run", "2"]
        );
        assert_eq!(
            split_words("src/load-config/file.py"),
            ["src", "load", "config", "file", "py"]
        );
        assert_eq!(
            split_words("Where do we parse?"),
            ["where", "do", "we", "parse"]
        );
        assert!(split_words("").is_empty());
    }

    /// The splitting as it was written first (a vector of characters per
    /// chunk, a string per word): the words are the same.
    fn split_words_by_chars(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for chunk in text.split(|c: char| !c.is_alphanumeric()) {
            if chunk.is_empty() {
                continue;
            }
            let chars: Vec<char> = chunk.chars().collect();
            let mut start = 0;
            for i in 1..chars.len() {
                let (prev, cur) = (chars[i - 1], chars[i]);
                let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
                let boundary = (prev.is_lowercase() && cur.is_uppercase())
                    || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                    || (prev.is_alphabetic() != cur.is_alphabetic());
                if boundary {
                    out.push(chars[start..i].iter().collect::<String>().to_lowercase());
                    start = i;
                }
            }
            out.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
        out
    }

    #[test]
    fn words_are_those_of_the_splitting_by_characters() {
        let pieces = [
            "loadConfigFile",
            "HTTPServer",
            "run2x",
            "ΣΟΦΟΣ",
            "ὈΔΥΣΣΕΎΣ",
            "Straße",
            "İstanbul",
            "getÜberView",
            "x86_64",
            "αβΓδ",
            "日本語Text",
            "ǅungla",
            "MAXValue",
            "a",
            "ẞIG",
            "__init__",
            "éÉé",
            "Ωmega9Ω",
            "parseURLs",
            "c++/h.hpp",
        ];
        let mut texts = Vec::new();
        for (i, a) in pieces.iter().enumerate() {
            for b in pieces.iter().skip(i % 5).step_by(3) {
                texts.push(format!("{a}{b}"));
                texts.push(format!("{a}_{b} {b}.{a}"));
            }
        }
        for text in &texts {
            assert_eq!(split_words(text), split_words_by_chars(text), "{text}");
        }
    }
}
