//! Identifier splitting: what lexical and semantic search see of code.
//! `loadConfigFile`, `load_config_file` and `src/load-config/file.py` all
//! become `load config file ...`.

/// Splits identifiers, paths and prose into lowercase words.
pub fn split_words(text: &str) -> Vec<String> {
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
            // camelCase, HTTPServer -> HTTP Server, and letter/digit boundaries.
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
}
