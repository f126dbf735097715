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

/// An in-memory BM25 index of a state's symbols. Documents are numbered in
/// [`all_symbols`] order, so a hit's number finds its symbol again.
pub struct LexicalIndex {
    reader: IndexReader,
    parser: QueryParser,
    ord: Field,
}

impl LexicalIndex {
    /// Indexes every symbol of `state`.
    pub fn build(state: &State) -> Result<LexicalIndex, LexicalError> {
        let mut sb = Schema::builder();
        let name = sb.add_text_field("name", TEXT);
        let signature = sb.add_text_field("signature", TEXT);
        let doc = sb.add_text_field("doc", TEXT);
        let path = sb.add_text_field("path", TEXT);
        let ord = sb.add_u64_field("ord", NumericOptions::default().set_stored());
        let index = Index::create_in_ram(sb.build());
        // One thread: the index is small and the other core is parsing or serving.
        let mut writer: tantivy::IndexWriter =
            index.writer_with_num_threads(1, 30_000_000).map_err(err)?;
        for (i, l) in all_symbols(state).enumerate() {
            let s = l.symbol;
            let mut d = TantivyDocument::default();
            d.add_text(
                name,
                format!("{} {}", words(&s.name), words(&s.qualified_name)),
            );
            d.add_text(signature, words(&s.signature));
            d.add_text(doc, words(&s.doc));
            d.add_text(path, words(l.path));
            d.add_u64(ord, i as u64);
            writer.add_document(d).map_err(err)?;
        }
        writer.commit().map_err(err)?;
        let reader = index.reader().map_err(err)?;
        let mut parser = QueryParser::for_index(&index, vec![name, signature, doc, path]);
        parser.set_field_boost(name, 3.0);
        parser.set_field_boost(signature, 1.5);
        parser.set_field_boost(path, 0.7);
        Ok(LexicalIndex {
            reader,
            parser,
            ord,
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
