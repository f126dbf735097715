//! Lexical retrieval: BM25 (tantivy) over identifier-split names, qualified
//! names, signatures, doc comments and paths of every symbol.

use sno_journal::delta::State;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, NumericOptions, Schema, Value, TEXT};
use tantivy::{Index, IndexReader, TantivyDocument};

use crate::lookup::{all_symbols, Located};
use crate::words::words;

/// Errors building or querying the lexical index.
#[derive(Debug, thiserror::Error)]
#[error("lexical index: {0}")]
pub struct LexicalError(String);

fn err(e: impl std::fmt::Display) -> LexicalError {
    LexicalError(e.to_string())
}

fn fields(index: &Index) -> Result<Fields, LexicalError> {
    let s = index.schema();
    let get = |n: &str| s.get_field(n).map_err(err);
    Ok(Fields {
        name: get("name")?,
        signature: get("signature")?,
        doc: get("doc")?,
        path: get("path")?,
        ord: get("ord")?,
    })
}

/// An in-memory BM25 index of a state's symbols. Documents are numbered in
/// [`all_symbols`] order, so a hit's number finds its symbol again.
pub struct LexicalIndex {
    reader: IndexReader,
    parser: QueryParser,
    ord: Field,
}

/// The schema's fields.
struct Fields {
    name: Field,
    signature: Field,
    doc: Field,
    path: Field,
    ord: Field,
}

fn schema() -> (Schema, Fields) {
    let mut sb = Schema::builder();
    let fields = Fields {
        name: sb.add_text_field("name", TEXT),
        signature: sb.add_text_field("signature", TEXT),
        doc: sb.add_text_field("doc", TEXT),
        path: sb.add_text_field("path", TEXT),
        ord: sb.add_u64_field("ord", NumericOptions::default().set_stored()),
    };
    (sb.build(), fields)
}

impl LexicalIndex {
    /// Indexes every symbol of `state` in memory.
    pub fn build(state: &State) -> Result<LexicalIndex, LexicalError> {
        let (schema, _) = schema();
        Self::fill(Index::create_in_ram(schema), state)
    }

    /// Opens the index stored in `dir` for this very state, or builds it
    /// there (into a temporary directory renamed into place, so a crash
    /// never leaves a half-written index under `dir`'s name). The caller
    /// names `dir` after the state, e.g. its commit and journal position:
    /// an index is derived data and may be deleted at any time.
    pub fn open_or_build(
        dir: &std::path::Path,
        state: &State,
    ) -> Result<LexicalIndex, LexicalError> {
        if dir.is_dir() {
            match Index::open_in_dir(dir)
                .map_err(err)
                .and_then(Self::reader_for)
            {
                Ok(ix) => return Ok(ix),
                Err(e) => {
                    tracing::warn!(error = %e, dir = %dir.display(), "rebuilding an unreadable lexical index");
                    std::fs::remove_dir_all(dir).map_err(err)?;
                }
            }
        }
        let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(err)?;
        let (schema, _) = schema();
        let index = Index::create_in_dir(&tmp, schema).map_err(err)?;
        Self::fill(index, state)?;
        if std::fs::rename(&tmp, dir).is_err() {
            // Another process stored the same index first: use theirs.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Index::open_in_dir(dir)
            .map_err(err)
            .and_then(Self::reader_for)
    }

    /// Opens an index stored by [`LexicalIndex::open_or_build`], if `dir`
    /// holds a readable one.
    pub fn open(dir: &std::path::Path) -> Option<LexicalIndex> {
        if !dir.is_dir() {
            return None;
        }
        Index::open_in_dir(dir)
            .map_err(err)
            .and_then(Self::reader_for)
            .ok()
    }

    fn fill(index: Index, state: &State) -> Result<LexicalIndex, LexicalError> {
        let f = fields(&index)?;
        // One thread: the index is small and the other core is parsing or serving.
        let mut writer: tantivy::IndexWriter =
            index.writer_with_num_threads(1, 30_000_000).map_err(err)?;
        for (i, l) in all_symbols(state).enumerate() {
            let s = l.symbol;
            let mut d = TantivyDocument::default();
            d.add_text(
                f.name,
                format!("{} {}", words(&s.name), words(&s.qualified_name)),
            );
            d.add_text(f.signature, words(&s.signature));
            d.add_text(f.doc, words(&s.doc));
            d.add_text(f.path, words(l.path));
            d.add_u64(f.ord, i as u64);
            writer.add_document(d).map_err(err)?;
        }
        writer.commit().map_err(err)?;
        writer.wait_merging_threads().map_err(err)?;
        Self::reader_for(index)
    }

    fn reader_for(index: Index) -> Result<LexicalIndex, LexicalError> {
        let f = fields(&index)?;
        let reader = index.reader().map_err(err)?;
        let mut parser = QueryParser::for_index(&index, vec![f.name, f.signature, f.doc, f.path]);
        parser.set_field_boost(f.name, 3.0);
        parser.set_field_boost(f.signature, 1.5);
        parser.set_field_boost(f.path, 0.7);
        Ok(LexicalIndex {
            reader,
            parser,
            ord: f.ord,
        })
    }

    /// The best `limit` symbols for `query` with their BM25 scores, best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<(usize, f32)>, LexicalError> {
        let text = words(query);
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let (q, _) = self.parser.parse_query_lenient(&text);
        let searcher = self.reader.searcher();
        let hits = searcher
            .search(&q, &TopDocs::with_limit(limit).order_by_score())
            .map_err(err)?;
        let mut out = Vec::with_capacity(hits.len());
        for (score, addr) in hits {
            let d: TantivyDocument = searcher.doc(addr).map_err(err)?;
            if let Some(o) = d.get_first(self.ord).and_then(|v| v.as_u64()) {
                out.push((o as usize, score));
            }
        }
        Ok(out)
    }
}

/// The symbols of a state in document order (what hit numbers index).
pub fn documents(state: &State) -> Vec<Located<'_>> {
    all_symbols(state).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::model::*;

    fn state(names: &[&str]) -> State {
        let symbols = names
            .iter()
            .map(|n| Symbol {
                id: SymbolId::derive("a.py", n, SymbolKind::Function, 0),
                name: n.to_string(),
                qualified_name: n.to_string(),
                kind: SymbolKind::Function,
                parent: None,
                span: Span::default(),
                signature: format!("def {n}()"),
                doc: String::new(),
                content_hash: 0,
            })
            .collect();
        let rec = FileRecord {
            path: "a.py".into(),
            blob: BlobId::default(),
            language: Some(Language::Python),
            size: 0,
            lines: 0,
            state: FileState::Parsed,
            diagnostics: vec![],
            symbols,
            edges: vec![],
            refs: FileRefs::default(),
            masked_secrets: 0,
        };
        State::from([("a.py".to_string(), rec)])
    }

    #[test]
    fn a_stored_index_reopens_with_the_same_answers_and_a_broken_one_is_rebuilt() {
        let st = state(&["load_config", "parse_args", "read_file"]);
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("lexical-1");
        let built = LexicalIndex::open_or_build(&at, &st).unwrap();
        let want = built.search("parse arguments", 3).unwrap();
        assert_eq!(want[0].0, 1, "parse_args is document 1");
        assert!(at.is_dir());
        let reopened = LexicalIndex::open_or_build(&at, &st).unwrap();
        assert_eq!(reopened.search("parse arguments", 3).unwrap(), want);
        // Damage it: every file replaced by an empty one. Replaced, not
        // truncated in place: the files are memory-mapped, and a mapping
        // tantivy still holds for a moment after the readers are dropped
        // would fault (SIGBUS) on a file that shrank under it.
        drop((built, reopened));
        for f in std::fs::read_dir(&at).unwrap() {
            let path = f.unwrap().path();
            let empty = path.with_extension("emptied");
            std::fs::write(&empty, b"").unwrap();
            std::fs::rename(&empty, &path).unwrap();
        }
        let rebuilt = LexicalIndex::open_or_build(&at, &st).unwrap();
        assert_eq!(rebuilt.search("parse arguments", 3).unwrap(), want);
        assert_eq!(
            LexicalIndex::build(&st).unwrap().search("read", 3).unwrap()[0].0,
            2
        );
    }
}
