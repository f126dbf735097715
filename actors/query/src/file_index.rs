//! Whole source files as BM25 documents, for questions whose answer is a
//! file ("which files does this change touch"): each file's path and text
//! (its first 64 KiB), analysed like the symbols.
//!
//! The index lives on disk beside the state's other search parts (a head's
//! or a past state's cache directory), so a files answer never needs the
//! whole state in memory: it is made once, from the state when one is at
//! hand or from the views a batch at a time, opened by every later
//! question, and a new head's is the previous head's with the touched
//! files' documents replaced ([`FileIndex::advanced`]). Like every cache,
//! it is written aside and renamed into place, and may be deleted at any
//! time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sno_journal::delta::State;
use sno_journal::model::FileRecord;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING,
};
use tantivy::{Index, IndexReader, TantivyDocument, Term};

use crate::lexical::{analyzed, query_terms, LexicalError, Source, ANALYZER};

/// How much of a file its document holds.
const FILE_BYTES: usize = 64 * 1024;

/// The sorted paths the index holds, beside it, each ended by a NUL (the
/// one byte a git path never holds).
const PATHS: &str = "paths";

fn read_paths(file: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(file).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let body = text.strip_suffix('\0').unwrap_or(&text);
    if body.is_empty() {
        return Some(Vec::new());
    }
    Some(body.split('\0').map(String::from).collect())
}

/// BM25 over whole files.
pub struct FileIndex {
    reader: IndexReader,
    parser: QueryParser,
    key: Field,
    /// Sorted: what a hit's stored path is matched to, so answers borrow
    /// their paths from the index.
    paths: Vec<String>,
}

struct Fields {
    path: Field,
    text: Field,
    key: Field,
}

fn schema() -> Schema {
    let mut sb = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    sb.add_text_field("path", text.clone());
    sb.add_text_field("text", text);
    // The path as it is, to delete a file's document by and to answer with.
    sb.add_text_field("key", STRING | STORED);
    sb.build()
}

fn fields(index: &Index) -> Result<Fields, LexicalError> {
    let s = index.schema();
    let get = |n: &str| s.get_field(n).map_err(crate::lexical::err);
    Ok(Fields {
        path: get("path")?,
        text: get("text")?,
        key: get("key")?,
    })
}

fn err(e: impl std::fmt::Display) -> LexicalError {
    crate::lexical::err(e)
}

/// Whether a file is a document: a source file, with a language.
fn indexed(rec: &FileRecord) -> bool {
    rec.language.is_some()
}

impl FileIndex {
    /// The index stored in `dir`, if it is there and readable.
    pub fn open(dir: &Path) -> Option<FileIndex> {
        let paths = read_paths(&dir.join(PATHS))?;
        if !paths.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        let index = Index::open_in_dir(dir)
            .map_err(
                |e| tracing::warn!(error = %e, dir = %dir.display(), "an unreadable file index"),
            )
            .ok()?;
        Self::reader_for(index, paths).ok()
    }

    fn reader_for(index: Index, paths: Vec<String>) -> Result<FileIndex, LexicalError> {
        index
            .tokenizers()
            .register(ANALYZER, crate::lexical::analyzer());
        let f = fields(&index)?;
        let reader = crate::lexical::fixed_reader(&index).map_err(err)?;
        let parser = QueryParser::for_index(&index, vec![f.path, f.text]);
        Ok(FileIndex {
            reader,
            parser,
            key: f.key,
            paths,
        })
    }

    /// Makes the index of the files `fill` hands over (it calls `add` with
    /// each record, in any order, each path once) in `dir`, and opens it.
    pub fn build_in(
        dir: &Path,
        source: Source,
        fill: impl FnOnce(&mut dyn FnMut(&FileRecord)) -> Result<(), LexicalError>,
    ) -> Result<FileIndex, LexicalError> {
        let tmp = aside(dir);
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(err)?;
        let index = Index::create_in_dir(&tmp, schema()).map_err(err)?;
        let (f, mut writer) = writer_for(&index)?;
        let mut paths = Vec::new();
        let mut failed = None;
        fill(&mut |rec| {
            if failed.is_some() || !indexed(rec) {
                return;
            }
            match add(&writer, &f, rec, source) {
                Ok(true) => paths.push(rec.path.clone()),
                Ok(false) => {}
                Err(e) => failed = Some(e),
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        writer.commit().map_err(err)?;
        writer.wait_merging_threads().map_err(err)?;
        paths.sort();
        paths.dedup();
        Self::finish(&tmp, dir, &paths)?;
        Self::open(dir).ok_or_else(|| err("the file index just made does not open"))
    }

    /// The index of a state in memory, made in `dir`.
    pub fn build_from_state(
        dir: &Path,
        state: &State,
        source: Source,
    ) -> Result<FileIndex, LexicalError> {
        Self::build_in(dir, source, |add| {
            state.values().for_each(add);
            Ok(())
        })
    }

    /// The index of a new state in `dir`: `previous`'s (moved, not
    /// copied: it belongs to a head no answer is made from any more) with
    /// the documents of the `touched` files replaced by those of `changed`
    /// (the touched files the new state still has). `None`, and nothing
    /// left aside, when `previous` cannot be moved or updated.
    pub fn advanced(
        dir: &Path,
        previous: &Path,
        changed: &State,
        touched: &BTreeSet<String>,
        source: Source,
    ) -> Option<FileIndex> {
        let old = read_paths(&previous.join(PATHS))?;
        let tmp = aside(dir);
        let _ = std::fs::remove_dir_all(&tmp);
        if let Some(parent) = tmp.parent() {
            std::fs::create_dir_all(parent).ok()?;
        }
        std::fs::rename(previous, &tmp).ok()?;
        let updated = (|| -> Result<Vec<String>, LexicalError> {
            let index = Index::open_in_dir(&tmp).map_err(err)?;
            let (f, mut writer) = writer_for(&index)?;
            let mut paths: BTreeSet<String> =
                old.into_iter().filter(|p| !touched.contains(p)).collect();
            for p in touched {
                writer.delete_term(Term::from_field_text(f.key, p));
            }
            for rec in changed.values().filter(|r| indexed(r)) {
                if touched.contains(&rec.path) && add(&writer, &f, rec, source)? {
                    paths.insert(rec.path.clone());
                }
            }
            writer.commit().map_err(err)?;
            writer.wait_merging_threads().map_err(err)?;
            Ok(paths.into_iter().collect())
        })();
        match updated.and_then(|paths| Self::finish(&tmp, dir, &paths)) {
            Ok(()) => Self::open(dir),
            Err(e) => {
                tracing::warn!(error = %e, "the file index could not be advanced");
                let _ = std::fs::remove_dir_all(&tmp);
                None
            }
        }
    }

    /// Writes the path list into `tmp` and renames it to `dir`.
    fn finish(tmp: &Path, dir: &Path, paths: &[String]) -> Result<(), LexicalError> {
        let mut list = String::new();
        for p in paths {
            list.push_str(p);
            list.push('\0');
        }
        std::fs::write(tmp.join(PATHS), list).map_err(err)?;
        if std::fs::rename(tmp, dir).is_err() {
            // Another process stored the same index first: use theirs.
            let _ = std::fs::remove_dir_all(tmp);
        }
        Ok(())
    }

    /// Files indexed.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// `path` as the index holds it, when it holds that file: a source
    /// file of the state, whether or not it defines a symbol.
    /// Whether some indexed file's path starts with `prefix`.
    pub fn holds_under(&self, prefix: &str) -> bool {
        let i = self.paths.partition_point(|p| p.as_str() < prefix);
        self.paths.get(i).is_some_and(|p| p.starts_with(prefix))
    }

    pub fn path(&self, path: &str) -> Option<&str> {
        self.paths
            .binary_search_by(|p| p.as_str().cmp(path))
            .ok()
            .map(|i| self.paths[i].as_str())
    }

    /// The best `limit` files for `query` with their BM25 scores.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<(&str, f32)>, LexicalError> {
        let text = query_terms(query);
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let (q, _) = self.parser.parse_query_lenient(&text);
        let searcher = self.reader.searcher();
        let hits = crate::lexical::top_docs(&searcher, &q, limit)?;
        let mut out = Vec::with_capacity(hits.len());
        for (score, addr) in hits {
            let d: tantivy::TantivyDocument = searcher.doc(addr).map_err(crate::lexical::err)?;
            let key = d.get_first(self.key).and_then(|v| {
                use tantivy::schema::Value;
                v.as_str()
            });
            if let Some(i) =
                key.and_then(|k| self.paths.binary_search_by(|p| p.as_str().cmp(k)).ok())
            {
                out.push((self.paths[i].as_str(), score));
            }
        }
        Ok(out)
    }
}

/// The fields of `index` and a writer of it, its analyzer registered.
fn writer_for(index: &Index) -> Result<(Fields, tantivy::IndexWriter), LexicalError> {
    index
        .tokenizers()
        .register(ANALYZER, crate::lexical::analyzer());
    let f = fields(index)?;
    let writer = crate::lexical::update_writer(index)?;
    Ok((f, writer))
}

/// Adds `rec`'s document; `false` when its text cannot be read.
fn add(
    writer: &tantivy::IndexWriter,
    f: &Fields,
    rec: &FileRecord,
    source: Source,
) -> Result<bool, LexicalError> {
    let Some(served) = source(rec) else {
        return Ok(false);
    };
    let full = served.text();
    let mut cut = full.len().min(FILE_BYTES);
    while !full.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut d = TantivyDocument::default();
    d.add_text(f.path, analyzed(&rec.path));
    d.add_text(f.text, analyzed(&full[..cut]));
    d.add_text(f.key, &rec.path);
    writer.add_document(d).map_err(err)?;
    Ok(true)
}

/// Where an index for `dir` is made before it is renamed into place.
fn aside(dir: &Path) -> PathBuf {
    dir.with_extension(format!("tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::test_support::record;

    fn texts(state: &State) -> impl Fn(&FileRecord) -> Option<crate::served::Served> + '_ {
        move |rec| {
            let names: Vec<String> = state
                .get(&rec.path)?
                .symbols
                .iter()
                .map(|s| s.name.clone())
                .collect();
            let text = format!("{} {}", names.join(" "), rec.path);
            Some(crate::served::Served::new(text.as_bytes(), false))
        }
    }

    fn state(files: &[(&str, u8, &[&str])]) -> State {
        files
            .iter()
            .map(|(p, b, names)| (p.to_string(), record(p, *b, names)))
            .collect()
    }

    fn ranked(ix: &FileIndex, q: &str) -> Vec<String> {
        ix.search(q, 10)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.to_string())
            .collect()
    }

    /// Stored, opened again, and advanced by a commit that changes one
    /// file, adds one and deletes one, the index answers as one made from
    /// nothing for the new state.
    #[test]
    fn an_advanced_index_answers_as_one_made_from_the_new_state() {
        let dir = tempfile::tempdir().unwrap();
        let before = state(&[
            ("src/config.py", 1, &["load_config", "parse"]),
            ("src/server.py", 2, &["serve", "listen"]),
            ("src/old.py", 3, &["obsolete_helper"]),
        ]);
        let src = texts(&before);
        let made = FileIndex::build_from_state(&dir.path().join("a"), &before, &src).unwrap();
        assert_eq!(made.len(), 3);
        assert_eq!(ranked(&made, "load config"), ["src/config.py"]);
        drop(made);
        let opened = FileIndex::open(&dir.path().join("a")).unwrap();
        assert_eq!(ranked(&opened, "obsolete helper"), ["src/old.py"]);
        drop(opened);

        let after = state(&[
            ("src/config.py", 4, &["load_settings"]),
            ("src/server.py", 2, &["serve", "listen"]),
            ("src/cache.py", 5, &["cache_config"]),
        ]);
        let touched: BTreeSet<String> = ["src/config.py", "src/old.py", "src/cache.py"]
            .into_iter()
            .map(String::from)
            .collect();
        let changed: State = after
            .iter()
            .filter(|(p, _)| touched.contains(*p))
            .map(|(p, r)| (p.clone(), r.clone()))
            .collect();
        let src = texts(&after);
        let advanced = FileIndex::advanced(
            &dir.path().join("b"),
            &dir.path().join("a"),
            &changed,
            &touched,
            &src,
        )
        .expect("advanced");
        assert!(!dir.path().join("a").exists(), "moved, not copied");
        let fresh = FileIndex::build_from_state(&dir.path().join("c"), &after, &src).unwrap();
        assert_eq!(advanced.paths, fresh.paths);
        for q in [
            "load config",
            "load settings",
            "obsolete helper",
            "cache",
            "serve listen",
        ] {
            assert_eq!(ranked(&advanced, q), ranked(&fresh, q), "{q}");
        }
        assert!(ranked(&advanced, "obsolete helper").is_empty());
        assert_eq!(ranked(&advanced, "cache"), ["src/cache.py"]);
    }

    /// A missing or damaged index is not opened, and one that cannot be
    /// advanced from leaves nothing behind.
    #[test]
    fn a_missing_or_damaged_index_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        assert!(FileIndex::open(&dir.path().join("none")).is_none());
        let st = state(&[("a.py", 1, &["f"])]);
        let src = texts(&st);
        FileIndex::build_from_state(&dir.path().join("a"), &st, &src).unwrap();
        std::fs::write(dir.path().join("a").join(PATHS), b"b.py\0a.py\0").unwrap();
        assert!(FileIndex::open(&dir.path().join("a")).is_none());
        // Its index files gone, it is moved aside, fails, and is dropped.
        for e in std::fs::read_dir(dir.path().join("a")).unwrap().flatten() {
            if e.file_name() != PATHS {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let none = FileIndex::advanced(
            &dir.path().join("b"),
            &dir.path().join("a"),
            &State::default(),
            &BTreeSet::new(),
            &src,
        );
        assert!(none.is_none());
        assert!(!dir.path().join("b").exists());
        assert!(!aside(&dir.path().join("b")).exists(), "nothing left aside");
        // Nothing to advance from.
        let st = State::default();
        assert!(FileIndex::advanced(
            &dir.path().join("c"),
            &dir.path().join("x"),
            &st,
            &BTreeSet::new(),
            &src
        )
        .is_none());
    }
}
