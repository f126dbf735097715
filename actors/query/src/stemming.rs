//! English stemming for the lexical index and its questions, each word's
//! stem remembered by the analyzer that made it: a repository spells its
//! identifiers with the same few words again and again, and stemming each
//! occurrence anew was a sixth of building a head's lexical index (8.4M
//! lines). The stems are tantivy's own (`Stemmer`, the same `frostem`
//! algorithm), so indexes made before read the same.

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words remembered per analyzer before it forgets them all and starts
/// again: about 13 MB, and the common words come back first.
const REMEMBERED: usize = 1 << 17;

/// A [`TokenFilter`] that stems lowercase English words as tantivy's
/// `Stemmer::new(Language::English)` does, remembering each word's stem.
#[derive(Clone, Copy, Debug, Default)]
pub struct RememberedStemmer;

impl TokenFilter for RememberedStemmer {
    type Tokenizer<T: Tokenizer> = RememberedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> RememberedStemmerFilter<T> {
        RememberedStemmerFilter {
            inner: tokenizer,
            stems: Stems::default(),
        }
    }
}

/// The tokenizer [`RememberedStemmer`] makes: each clone (tantivy clones
/// an analyzer per indexing thread) remembers its own stems.
#[derive(Clone)]
pub struct RememberedStemmerFilter<T> {
    inner: T,
    stems: Stems,
}

impl<T: Tokenizer> Tokenizer for RememberedStemmerFilter<T> {
    type TokenStream<'a> = RememberedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        RememberedStemmerStream {
            tail: self.inner.token_stream(text),
            stems: &mut self.stems,
            stemmed: String::new(),
        }
    }
}

/// Each word's stem, remembered: what [`RememberedStemmer`] gives a token,
/// and a caller that splits the words itself asks directly.
#[derive(Clone)]
pub(crate) struct Stems {
    stems: FxHashMap<String, String>,
    stemmer: frostem::Stemmer,
}

impl Default for Stems {
    fn default() -> Stems {
        Stems {
            stems: FxHashMap::default(),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        }
    }
}

impl Stems {
    /// Appends the stem of `word` (lowercase) to `out`.
    pub(crate) fn push_stem(&mut self, word: &str, out: &mut String) {
        if let Some(stem) = self.stems.get(word) {
            out.push_str(stem);
            return;
        }
        let stem = self.stemmer.stem(word).into_owned();
        out.push_str(&stem);
        if self.stems.len() >= REMEMBERED {
            self.stems.clear();
        }
        self.stems.insert(word.to_string(), stem);
    }
}

/// The token stream of [`RememberedStemmerFilter`].
pub struct RememberedStemmerStream<'a, T> {
    tail: T,
    stems: &'a mut Stems,
    /// The stem being made, swapped with the token's text.
    stemmed: String,
}

impl<T: TokenStream> TokenStream for RememberedStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        self.stemmed.clear();
        self.stems.push_stem(&token.text, &mut self.stemmed);
        std::mem::swap(&mut token.text, &mut self.stemmed);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, Stemmer, TextAnalyzer};

    fn tokens(mut a: TextAnalyzer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = a.token_stream(text);
        while s.advance() {
            out.push(s.token().text.clone());
        }
        out
    }

    /// The remembered stems are tantivy's, a word seen before or not,
    /// and after the analyzer has forgotten them all.
    #[test]
    fn remembered_stems_are_tantivys_stems() {
        let words: Vec<String> = (0..REMEMBERED + 500)
            .map(|i| format!("running connections configured parsing{i} flies"))
            .collect();
        let text = format!(
            "Running runs ran easily fairly {} generously connection the_config",
            words.join(" ")
        );
        let theirs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build();
        let ours = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(RememberedStemmer)
            .build();
        let expected = tokens(theirs, &text);
        assert!(expected.contains(&"run".to_string()));
        assert!(expected.len() > REMEMBERED);
        assert_eq!(tokens(ours, &text), expected);
    }
}
