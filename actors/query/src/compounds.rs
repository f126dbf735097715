//! Names spelled as one lowercase word made of several: C's `sdsdup`,
//! `sdsnew` and `strlen`, Python's `getattr` and `readline`. Splitting at
//! case and underscores leaves them whole, so "Duplicate an sds string"
//! shares no word with `sdsdup`. Identifier-splitting studies (Samurai and
//! its successors) split such a token where its pieces are words the same
//! program uses on their own; so does this, with the index's own words:
//! a name word is a compound of pieces when each piece is a word the index
//! holds in at least two documents.
//!
//! The words are the index's analysed terms (lowercased and stemmed), so a
//! piece is matched as the question's words are. A question in words is
//! then also searched for the compounds its words make up, each weighed by
//! the share of its pieces the question has: `sdsdup` counts whole for
//! "sds ... dup", a quarter for "sds" alone.

use rustc_hash::{FxHashMap, FxHashSet};

/// Shortest piece: two letters make too many chance pieces.
pub const MIN_PIECE: usize = 3;

/// Shortest compound: two pieces of [`MIN_PIECE`] letters.
const MIN_COMPOUND: usize = 2 * MIN_PIECE;

/// Longest compound looked at: longer words are seldom compounds of
/// words, and each costs its length squared to split.
const MAX_COMPOUND: usize = 32;

/// Compounds added to one question: the best covered first.
pub const MAX_EXPANSIONS: usize = 48;

/// The compounds of an index's name words, and the pieces each is made
/// of.
#[derive(Debug, Default)]
pub struct Compounds {
    /// Each compound and its pieces.
    compounds: Vec<(String, Vec<String>)>,
    /// A piece -> the compounds holding it.
    by_piece: FxHashMap<String, Vec<u32>>,
}

/// Whether `term` may be a compound or a piece: lowercase ASCII letters
/// alone (digits and other scripts are split at already, or not words).
fn letters(term: &str) -> bool {
    !term.is_empty() && term.bytes().all(|b| b.is_ascii_lowercase())
}

impl Compounds {
    /// The compounds among `names` (the name field's terms) made of
    /// `words` (terms held by at least two documents), each split into the
    /// fewest pieces, of the longest first piece among those.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>, words: &FxHashSet<&str>) -> Compounds {
        let mut out = Compounds::default();
        for name in names {
            if name.len() < MIN_COMPOUND || name.len() > MAX_COMPOUND || !letters(name) {
                continue;
            }
            if let Some(pieces) = split(name, words) {
                out.push(name.to_string(), pieces);
            }
        }
        out
    }

    fn push(&mut self, name: String, pieces: Vec<String>) {
        let k = self.compounds.len() as u32;
        for p in &pieces {
            let holders = self.by_piece.entry(p.clone()).or_default();
            // A piece twice in one compound (`dupdup`) counts once.
            if holders.last() != Some(&k) {
                holders.push(k);
            }
        }
        self.compounds.push((name, pieces));
    }

    /// The compounds as text, a compound then its pieces a line
    /// ([`Compounds::from_lines`] reads it back).
    pub fn to_lines(&self) -> String {
        let mut out = String::new();
        for (name, pieces) in &self.compounds {
            out.push_str(name);
            for p in pieces {
                out.push(' ');
                out.push_str(p);
            }
            out.push('\n');
        }
        out
    }

    /// Reads [`Compounds::to_lines`]' text; a line that is not a compound
    /// of two pieces or more is skipped.
    pub fn from_lines(text: &str) -> Compounds {
        let mut out = Compounds::default();
        for line in text.lines() {
            let mut words = line.split(' ');
            let Some(name) = words.next() else { continue };
            let pieces: Vec<String> = words.map(str::to_string).collect();
            if pieces.len() >= 2 && letters(name) && pieces.iter().all(|p| letters(p)) {
                out.push(name.to_string(), pieces);
            }
        }
        out
    }

    /// The compounds' names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.compounds.iter().map(|(n, _)| n.as_str())
    }

    /// Keeps the compounds `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let mut kept = Compounds::default();
        for (name, pieces) in std::mem::take(&mut self.compounds) {
            if keep(&name) {
                kept.push(name, pieces);
            }
        }
        *self = kept;
    }

    /// How many compounds there are.
    pub fn len(&self) -> usize {
        self.compounds.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.compounds.is_empty()
    }

    /// The compounds `terms` (a question's analysed terms) make up, with
    /// the weight each counts at: the share of its pieces among the terms,
    /// squared. At most [`MAX_EXPANSIONS`], best covered first; never one
    /// of the terms itself.
    pub fn expand(&self, terms: &[&str]) -> Vec<(&str, f32)> {
        let have: FxHashSet<&str> = terms.iter().copied().collect();
        let mut touched: Vec<u32> = terms
            .iter()
            .filter_map(|t| self.by_piece.get(*t))
            .flatten()
            .copied()
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut out: Vec<(&str, f32)> = touched
            .into_iter()
            .filter_map(|k| {
                let (name, pieces) = &self.compounds[k as usize];
                if have.contains(name.as_str()) {
                    return None;
                }
                let covered = pieces.iter().filter(|p| have.contains(p.as_str())).count();
                let share = covered as f32 / pieces.len() as f32;
                Some((name.as_str(), share * share))
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out.truncate(MAX_EXPANSIONS);
        out
    }
}

/// `name` split into the fewest pieces that are all `words` (and not
/// `name` itself), at least two; among splits of as few pieces, the one
/// whose first piece is longest. `None` when there is no such split.
fn split(name: &str, words: &FxHashSet<&str>) -> Option<Vec<String>> {
    let n = name.len();
    // best[i]: the fewest pieces covering name[i..], and where the first
    // of them ends.
    let mut best: Vec<Option<(u32, usize)>> = vec![None; n + 1];
    best[n] = Some((0, n));
    for i in (0..n).rev() {
        for j in (i + MIN_PIECE..=n).rev() {
            let piece = &name[i..j];
            if (i == 0 && j == n) || !words.contains(piece) {
                continue;
            }
            if let Some((count, _)) = best[j] {
                if best[i].is_none_or(|(c, _)| count + 1 < c) {
                    best[i] = Some((count + 1, j));
                }
            }
        }
    }
    let (count, _) = best[0]?;
    if count < 2 {
        return None;
    }
    let mut pieces = Vec::with_capacity(count as usize);
    let mut at = 0;
    while at < n {
        let (_, end) = best[at]?;
        pieces.push(name[at..end].to_string());
        at = end;
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&'static str]) -> FxHashSet<&'static str> {
        list.iter().copied().collect()
    }

    #[test]
    fn a_name_of_known_words_is_split_into_the_fewest() {
        let w = words(&["sds", "dup", "cat", "len", "catlen", "new", "free"]);
        assert_eq!(split("sdsdup", &w).unwrap(), ["sds", "dup"]);
        // `catlen` is a word: two pieces, not three.
        assert_eq!(split("sdscatlen", &w).unwrap(), ["sds", "catlen"]);
        // A word of its own is no compound, nor one with an unknown piece.
        assert_eq!(split("sds", &w), None);
        assert_eq!(split("sdsxyz", &w), None);
    }

    #[test]
    fn a_question_finds_the_compounds_of_its_words_by_their_share() {
        let w = words(&["sds", "dup", "new", "free", "get", "attr"]);
        let c = Compounds::new(["sdsdup", "sdsnew", "getattr", "sds", "dup", "x2"], &w);
        assert_eq!(c.len(), 3);
        let got = c.expand(&["dup", "sds", "string"]);
        assert_eq!(got[0], ("sdsdup", 1.0));
        assert_eq!(got[1], ("sdsnew", 0.25));
        assert_eq!(got.len(), 2, "{got:?}");
        // Kept as text and read back, they answer the same.
        let again = Compounds::from_lines(&c.to_lines());
        assert_eq!(again.expand(&["dup", "sds", "string"]), got);
        // A compound the question names itself is not added again.
        assert!(c
            .expand(&["sdsdup", "sds"])
            .iter()
            .all(|(t, _)| *t != "sdsdup"));
        assert!(c.expand(&["unrelated"]).is_empty());
    }
}
