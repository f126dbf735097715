//! Where a change goes, from the changes made before it. A commit message
//! names what a change is about ("add the Turkmen locale", "fix the
//! timeout of the pool"); the files earlier commits with a message like it
//! changed are where this one goes too. Bug localization calls this the
//! similar-report signal (Zhou et al.'s BugLocator, Wang and Lo's version
//! history and similar reports): each past change votes for its files by
//! how much its message resembles the question, shared among the files it
//! touched.
//!
//! The messages are the first lines the journal keeps of the indexed
//! commits (up to the state asked about, never after it), scored with
//! BM25 over their terms, analysed as the lexical index analyses text.

use rustc_hash::FxHashMap;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// The commit messages of a lineage as terms, for BM25.
#[derive(Debug, Default)]
pub struct MessageIndex {
    /// term -> (commit, occurrences in its message).
    postings: FxHashMap<String, Vec<(u32, u16)>>,
    /// Terms in each commit's message.
    lengths: Vec<u16>,
    /// Mean of `lengths`.
    mean: f32,
}

impl MessageIndex {
    /// The index of `messages` (commit `k`'s at `k`), each analysed by
    /// `terms`.
    pub fn new(messages: &[String], terms: impl Fn(&str) -> Vec<String>) -> MessageIndex {
        let mut out = MessageIndex::default();
        let mut total = 0u64;
        for (k, m) in messages.iter().enumerate() {
            let words = terms(m);
            let len = words.len().min(u16::MAX as usize) as u16;
            out.lengths.push(len);
            total += u64::from(len);
            let mut counts: FxHashMap<String, u16> = FxHashMap::default();
            for w in words {
                *counts.entry(w).or_default() += 1;
            }
            for (w, n) in counts {
                out.postings.entry(w).or_default().push((k as u32, n));
            }
        }
        out.mean = total as f32 / out.lengths.len().max(1) as f32;
        out
    }

    /// Each commit whose message shares a term with `query` (analysed
    /// terms, each counted once), with its BM25 score.
    pub fn scores(&self, query: &[String]) -> FxHashMap<u32, f32> {
        let n = self.lengths.len() as f32;
        let mut out: FxHashMap<u32, f32> = FxHashMap::default();
        let mut seen = std::collections::HashSet::new();
        for t in query.iter().filter(|t| seen.insert(t.as_str())) {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(k, tf) in list {
                let tf = f32::from(tf);
                let len = f32::from(self.lengths[k as usize]);
                let norm = K1 * (1.0 - B + B * len / self.mean.max(1.0));
                *out.entry(k).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        out
    }
}

/// The messages of a lineage's commits and the files each touched: what
/// [`ChangeIndex::votes`] reads.
#[derive(Debug, Default)]
pub struct ChangeIndex {
    messages: MessageIndex,
    /// Each commit's files, as indices into `paths` (none for a commit
    /// too wide to say where a change goes).
    files: Vec<Vec<u32>>,
    paths: Vec<String>,
}

impl ChangeIndex {
    /// The index of `messages` (commit `k`'s at `k`) and `touches` (a
    /// path -> the commits that touched it), the messages analysed by
    /// `terms`.
    pub fn new<'a>(
        messages: &[String],
        touches: impl IntoIterator<Item = (&'a String, &'a Vec<usize>)>,
        terms: impl Fn(&str) -> Vec<String>,
    ) -> ChangeIndex {
        let mut files = vec![Vec::new(); messages.len()];
        let mut paths = Vec::new();
        for (path, ks) in touches {
            let at = paths.len() as u32;
            paths.push(path.clone());
            for &k in ks {
                if let Some(f) = files.get_mut(k) {
                    f.push(at);
                }
            }
        }
        ChangeIndex {
            messages: MessageIndex::new(messages, terms),
            files,
            paths,
        }
    }

    /// The files commit `k` touched (none when it was too wide to say
    /// where a change goes).
    pub fn files_of(&self, k: usize) -> impl Iterator<Item = &str> {
        self.files
            .get(k)
            .into_iter()
            .flatten()
            .map(|&f| self.paths[f as usize].as_str())
    }

    /// The files of the past changes whose messages share terms with
    /// `query`, each with the sum of those changes' scores, a change's
    /// score shared among the files it touched (a change of one file says
    /// more of that file than one of thirty). Unscaled.
    pub fn votes(&self, query: &[String]) -> Vec<(&str, f32)> {
        let mut by_file: FxHashMap<u32, f32> = FxHashMap::default();
        for (k, score) in self.messages.scores(query) {
            let files = &self.files[k as usize];
            for &f in files {
                *by_file.entry(f).or_default() += score / files.len() as f32;
            }
        }
        let mut out: Vec<(&str, f32)> = by_file
            .into_iter()
            .map(|(f, v)| (self.paths[f as usize].as_str(), v))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_lowercase).collect()
    }

    #[test]
    fn a_message_sharing_rarer_words_scores_higher() {
        let m: Vec<String> = [
            "fix the pool timeout",
            "add turkmen locale",
            "fix typo",
            "add hindi locale",
        ]
        .map(String::from)
        .to_vec();
        let idx = MessageIndex::new(&m, words);
        let s = idx.scores(&words("add kannada locale"));
        // Both locale commits match, the others share no word.
        assert!(s.contains_key(&1) && s.contains_key(&3));
        assert!(!s.contains_key(&0) && !s.contains_key(&2));
        // "fix" is in two of four messages, "pool" in one: a message
        // sharing the rarer word scores higher.
        let s = idx.scores(&words("fix pool"));
        assert!(s[&0] > s[&2], "{s:?}");
        // A word asked twice counts once.
        assert_eq!(
            idx.scores(&words("pool pool"))[&0],
            idx.scores(&words("pool"))[&0]
        );
    }

    #[test]
    fn a_change_votes_for_its_files_shared_among_them() {
        let messages: Vec<String> = ["add hindi locale", "add bengali locale", "fix typo", "bulk"]
            .map(String::from)
            .to_vec();
        let touches: std::collections::HashMap<String, Vec<usize>> = [
            ("locales/index.ts".to_string(), vec![0, 1]),
            ("locales/hi.ts".to_string(), vec![0]),
            ("locales/bn.ts".to_string(), vec![1]),
            ("other.ts".to_string(), vec![2]),
        ]
        .into_iter()
        .collect();
        let idx = ChangeIndex::new(&messages, &touches, words);
        let v = idx.votes(&words("add kannada locale"));
        // index.ts has both changes' halves; each new file one half.
        assert_eq!(v[0].0, "locales/index.ts");
        assert!((v[0].1 - 2.0 * v[1].1).abs() < 1e-4, "{v:?}");
        let mut rest: Vec<&str> = v[1..].iter().map(|(p, _)| *p).collect();
        rest.sort_unstable();
        assert_eq!(rest, ["locales/bn.ts", "locales/hi.ts"]);
        // No message like it, no vote; a commit without files votes for none.
        assert!(idx.votes(&words("unrelated")).is_empty());
        assert!(idx.votes(&words("bulk")).is_empty());
    }
}
