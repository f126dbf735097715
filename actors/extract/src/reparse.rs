//! Parsing a new version of a file from the syntax tree of the previous one.
//!
//! Indexing history parses every file a commit changes, and a release that
//! re-vendors its dependencies changes most files a little: on pip's history
//! that is 5.2x the bytes of HEAD, of which 6.5% of the lines differ. Given
//! the old tree and the edits between the versions ([`crate::line_diff`]),
//! tree-sitter re-reads only the changed regions and reuses the rest.
//!
//! The result must be the tree a fresh parse would build, because replaying
//! the journal has to equal a fresh index. Tree-sitter guarantees that for
//! text that parses cleanly; error recovery, though, may settle differently
//! when it starts from an old tree, so a version with a syntax error on either
//! side is parsed from scratch.

use sno_journal::model::Language;
use tree_sitter::Tree;

use crate::{extract_tree, line_diff, literal_runs, parse_ranges, FileFacts};

/// A parsed version of a file, kept so that its next version can be parsed
/// from it.
pub struct ParsedVersion {
    language: Language,
    source: Vec<u8>,
    tree: Tree,
}

impl ParsedVersion {
    /// The bytes of this version.
    pub fn source(&self) -> &[u8] {
        &self.source
    }
}

impl std::fmt::Debug for ParsedVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedVersion")
            .field("language", &self.language)
            .field("bytes", &self.source.len())
            .finish_non_exhaustive()
    }
}

/// How a file's tree was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parse {
    /// From scratch.
    Fresh,
    /// From the previous version's tree.
    Incremental,
}

/// The most changed lines worth diffing for: past it, reusing the old tree
/// saves little and the diff itself (O(lines × changes)) starts to cost.
fn change_budget(old: &[u8], new: &[u8]) -> usize {
    let lines = bytecount_newlines(old) + bytecount_newlines(new);
    (lines / 4 + 16).min(2000)
}

fn bytecount_newlines(text: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', text).count()
}

/// Parses `source`, from `previous` where that is safe, and extracts its
/// facts. With `keep`, the new version is returned for the next one.
pub fn extract_after(
    lang: Language,
    source: &[u8],
    previous: Option<&ParsedVersion>,
    keep: bool,
) -> (FileFacts, Parse, Option<ParsedVersion>) {
    if previous.is_none() && !keep {
        return (crate::extract(lang, source), Parse::Fresh, None);
    }
    // A file with literal tables left out is always parsed afresh and never
    // kept: its tree does not cover every byte, so it is no base to edit.
    let tables = literal_runs::tables(lang, source);
    let reused = previous.filter(|_| tables.is_empty());
    let (tree, how) = match reused.and_then(|p| reparse(lang, source, p)) {
        Some(tree) => (Some(tree), Parse::Incremental),
        None => (parse_ranges(lang, source, None, &tables), Parse::Fresh),
    };
    let Some(tree) = tree else {
        return (crate::failed(lang, "parser failed"), how, None);
    };
    let facts = extract_tree(lang, &tree, source);
    let kept =
        (keep && tables.is_empty() && !tree.root_node().has_error()).then(|| ParsedVersion {
            language: lang,
            source: source.to_vec(),
            tree,
        });
    (facts, how, kept)
}

/// The tree of `source` built from `previous`, or `None` where a fresh parse
/// is needed (another language, a syntax error, too many changes).
fn reparse(lang: Language, source: &[u8], previous: &ParsedVersion) -> Option<Tree> {
    if previous.language != lang || previous.tree.root_node().has_error() {
        return None;
    }
    let edits = line_diff::edits(
        &previous.source,
        source,
        change_budget(&previous.source, source),
    )?;
    let mut old = previous.tree.clone();
    for edit in &edits {
        old.edit(edit);
    }
    let tree = parse_ranges(lang, source, Some(&old), &[])?;
    (!tree.root_node().has_error()).then_some(tree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;

    /// Top-level blocks of a valid file per language; any sequence of them
    /// (with renamed identifiers) is a valid file too.
    fn blocks(lang: Language) -> Vec<&'static str> {
        match lang {
            Language::Python => vec![
                "import os\nfrom pkg.mod import helper as h\n",
                "def NAME(a, b=1):\n    \"\"\"Doc.\"\"\"\n    x = helper(a)\n    return os.path.join(x, b)\n",
                "class NAME(Base):\n    def method(self):\n        return self.other()\n\n    def other(self):\n        return h(1)\n",
                "VALUE_NAME = compute(3)\n",
                "# a comment\n",
                "\n",
            ],
            Language::Go => vec![
                "func NAME(a int) int {\n\treturn helper(a) + 1\n}\n",
                "type NAME struct {\n\tx int\n}\n",
                "func (s *S) NAME() {\n\ts.other()\n}\n",
                "// NAME documents.\nvar NAME = compute()\n",
                "\n",
            ],
            Language::Rust => vec![
                "use std::collections::HashMap;\n",
                "/// Doc.\npub fn NAME(a: u32) -> u32 {\n    helper(a) + 1\n}\n",
                "struct NAME {\n    x: u32,\n}\n",
                "impl Tr for S {\n    fn NAME(&self) {\n        self.other();\n    }\n}\n",
                "\n",
            ],
            Language::JavaScript => vec![
                "import { a } from './a.js';\n",
                "function NAME(x) {\n  return a(x) + 1;\n}\n",
                "class NAME extends Base {\n  m() {\n    return this.o();\n  }\n}\n",
                "const NAME = (y) => y * 2;\n",
                "\n",
            ],
            _ => unreachable!("the test covers the languages above"),
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % bound as u64) as usize
        }
    }

    /// Builds the next version: blocks inserted, dropped, renamed or moved.
    fn mutate(rng: &mut Lcg, lang: Language, file: &mut Vec<String>) {
        let pool = blocks(lang);
        for _ in 0..1 + rng.next(3) {
            match rng.next(4) {
                0 | 1 => {
                    let at = rng.next(file.len() + 1);
                    let name = format!("n{}", rng.next(1000));
                    file.insert(at, pool[rng.next(pool.len())].replace("NAME", &name));
                }
                2 if !file.is_empty() => {
                    file.remove(rng.next(file.len()));
                }
                _ if file.len() > 1 => {
                    let from = rng.next(file.len());
                    let block = file.remove(from);
                    file.insert(rng.next(file.len() + 1), block);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_reparsed_version_yields_the_facts_of_a_fresh_parse() {
        for lang in [
            Language::Python,
            Language::Go,
            Language::Rust,
            Language::JavaScript,
        ] {
            let mut rng = Lcg(lang as u64 + 1);
            let mut file: Vec<String> = Vec::new();
            for _ in 0..40 {
                mutate(&mut rng, lang, &mut file);
            }
            let mut previous: Option<ParsedVersion> = None;
            let mut incremental = 0;
            for version in 0..60 {
                mutate(&mut rng, lang, &mut file);
                let source = file.concat();
                let (facts, how, kept) =
                    extract_after(lang, source.as_bytes(), previous.as_ref(), true);
                assert_eq!(
                    facts,
                    extract(lang, source.as_bytes()),
                    "{lang:?} version {version}:\n{source}"
                );
                if how == Parse::Incremental {
                    incremental += 1;
                }
                previous = Some(kept.expect("clean files are kept"));
            }
            assert!(
                incremental > 40,
                "{lang:?}: only {incremental} of 60 versions were reparsed"
            );
        }
    }

    #[test]
    fn a_version_with_a_syntax_error_is_parsed_afresh_and_not_kept() {
        let lang = Language::Python;
        let v1 = b"def f():\n    return 1\n\ndef g():\n    return f()\n";
        let (_, how, kept) = extract_after(lang, v1, None, true);
        assert_eq!(how, Parse::Fresh);
        let kept = kept.expect("clean");
        let broken = b"def f():\n    return (1\n\ndef g():\n    return f()\n";
        let (facts, how, kept_broken) = extract_after(lang, broken, Some(&kept), true);
        assert_eq!(how, Parse::Fresh);
        assert!(kept_broken.is_none());
        assert_eq!(facts, extract(lang, broken));
        assert!(!facts.diagnostics.is_empty());
        // A different language never reuses the tree.
        let (_, how, _) = extract_after(Language::Ruby, v1, Some(&kept), false);
        assert_eq!(how, Parse::Fresh);
    }
}
