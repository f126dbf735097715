//! Lexical retrieval: BM25 (tantivy) over what a symbol says. Fields, each
//! with its weight: the name (and qualified name), the signature, the doc
//! comment, the body (its own text, without nested symbols: identifiers,
//! string literals and comments) and the path.
//!
//! Text and queries go through one analysis ([`analyzed`] then the
//! `sno_code` analyzer): identifiers are split (`loadConfig`, `load_config`
//! -> `load config`) and also kept whole (`loadconfig`), so an identifier
//! query matches its own name first; words are lowercased, English stop
//! words dropped, and the rest stemmed, so "parsing" finds `parse`. The
//! documents' texts are analysed by the thread that makes them ([`Terms`],
//! the same terms in one pass) and the fields only split them, so
//! tantivy's indexing thread does not analyse; an index made before keeps
//! its fields' analyzer.
//!
//! A document is keyed by its file's path and its place in that file (the
//! symbol's ordinal, or the section's), and each file has a marker document
//! holding its blob: an index stored for one state is brought to the next
//! by replacing the documents of the files whose blob changed
//! ([`LexicalIndex::open_or_update`]), not by a rebuild.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::best_field::BestFieldQuery;
use crate::compounds::Compounds;
use sno_journal::delta::State;
use sno_journal::model::{FileRecord, Symbol, SymbolId};
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::columnar::{Column, StrColumn};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value, FAST,
    STORED, STRING,
};
use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, StopWordFilter, TextAnalyzer, TokenStream,
    WhitespaceTokenizer,
};
use tantivy::Directory as _;
use tantivy::Term;
use tantivy::{DocAddress, Index, IndexReader, Searcher, TantivyDocument};

use crate::chunks::Chunk;
use crate::lookup::{all_symbols, Located};
use crate::served::Served;

/// The analyzer of queries, and of the text fields of indexes made before
/// [`TERMS`].
pub(crate) const ANALYZER: &str = "sno_code";

/// The tokenizer of the text fields: their texts come as the index's
/// terms already ([`Terms`]), made by [`ANALYZER`]'s analysis on the
/// thread that makes the documents. tantivy's one indexing thread was the
/// bottleneck of a first index's search parts (58% of that phase's CPU
/// on 8.3M lines, a quarter of it analysis, while the caller's thread
/// waited for it).
const TERMS: &str = "sno_terms";

/// How much of a body is indexed: its head says what it does, and a
/// generated table would otherwise weigh like real code.
const BODY_BYTES: usize = 16 * 1024;

/// Distinct query terms kept: a pasted paragraph costs what a sentence does.
const QUERY_TERMS: usize = 32;

/// Field weights (BM25 per field, summed) for a query that names
/// something (`parse_config`, `Config`).
const BOOSTS: [(&str, f32); 5] = [
    ("name", 3.0),
    ("signature", 1.2),
    ("doc", 1.0),
    ("body", 0.8),
    ("path", 0.5),
];

/// What a query term's matches in a document's other fields add to its
/// best field's score (a disjunction-max's tie-breaker; 1.0 would sum the
/// fields, as a query parser over them does). A name's words are mostly
/// its signature's and its body's too, so summed fields counted a name
/// match two or three times over, and a definition whose body says what
/// the question says lost to one that shares a word of its name. On the
/// quality eval (docstring -> code R@10 / MRR@10, own 847 queries and 16
/// held-out repositories' 977): summed 0.862 / 0.643 and 0.814 / 0.591;
/// 0.5 0.862 / 0.657 and 0.820 / 0.597; 0.7 0.864 / 0.654 and 0.819 /
/// 0.596; 0.3 0.865 / 0.656 and 0.820 / 0.598, but held-out Go 0.886 ->
/// 0.829 (names that are the answer, such as urfave/cli's `Command.Float`
/// for "looks up the value of a local FloatFlag", weigh less).
const OTHER_FIELDS: f32 = 0.5;

/// Field weights for a question in words: it says what code does, which
/// its body and doc say more than a name's word or two. Refitted with the
/// semantic weight at 0.2 (2026-11-27), docstring -> code R@10 / MRR@10 on
/// the eval's own corpora and on 16 held-out repositories: these 0.849 /
/// 0.616 and 0.790 / 0.562; name 1.5 0.843 / 0.622 and 0.793 / 0.568; name
/// 2.6 0.836 / 0.610 and 0.781 / 0.557; body 1.6 0.842 / 0.619 and 0.793 /
/// 0.567; body 0.9 0.837 / 0.610 and 0.780 / 0.555; signature 0.8 0.843 /
/// 0.614 and 0.786 / 0.559; path 1.0 0.847 / 0.616 and 0.790 / 0.559.
const PROSE_BOOSTS: [(&str, f32); 5] = [
    ("name", 2.0),
    ("signature", 1.2),
    ("doc", 1.0),
    ("body", 1.2),
    ("path", 0.5),
];

pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_TERM))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            STOP_WORDS.iter().map(|w| w.to_string()),
        ))
        .filter(crate::stemming::RememberedStemmer)
        .build()
}

/// Code and prose as words: each identifier split into its words, and
/// kept whole (lowercase, without separators) when it has several.
pub fn analyzed(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut whole = String::new();
    for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if ident.is_empty() {
            continue;
        }
        let mut parts = 0;
        whole.clear();
        crate::words::for_each_word(ident, |w| {
            out.push_str(w);
            out.push(' ');
            whole.push_str(w);
            parts += 1;
        });
        if parts > 1 {
            out.push_str(&whole);
            out.push(' ');
        }
    }
    out
}

/// `text`'s terms as the index makes them: identifiers split (and kept
/// whole), lowercased, stop words out, stemmed.
pub(crate) fn text_terms(text: &str) -> Vec<String> {
    static ANALYZER: std::sync::OnceLock<TextAnalyzer> = std::sync::OnceLock::new();
    let mut analyzer = ANALYZER.get_or_init(analyzer).clone();
    let mut out = Vec::new();
    push_tokens(&mut analyzer, &analyzed(text), &mut out);
    out
}

/// Registers the index's tokenizers: [`TERMS`] for its fields, and
/// [`ANALYZER`] for the fields of an index made before it.
fn register_tokenizers(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
    index
        .tokenizers()
        .register(TERMS, TextAnalyzer::from(WhitespaceTokenizer::default()));
}

/// Texts made into an index's terms, separated by spaces, for fields that
/// take them as they are ([`TERMS`]): the terms a field of [`ANALYZER`]
/// makes of [`analyzed`] text, made on the caller's thread in one pass
/// over the words (no intermediate text, no second split). Its stems are
/// remembered, so one is kept per index being written.
pub(crate) struct Terms {
    stems: crate::stemming::Stems,
    /// Each identifier's terms, remembered: a repository spells the same
    /// identifiers again and again (`self`, `uint32_t`, a type's name in
    /// every signature), and splitting, lowercasing and stemming each
    /// occurrence anew was a fifth of building a head's parts on 8.3M
    /// lines.
    idents: FxHashMap<Box<str>, Box<str>>,
    /// A word of several pieces, whole.
    whole: String,
    /// Whether the index's fields take terms; `false` for an index made
    /// before [`TERMS`], whose fields analyse the text themselves.
    made_here: bool,
}

/// The indexing memory of a stored index made from nothing: fewer, larger
/// segments to write and merge than the 50 MB of an update. On 8.3M lines
/// (2.58M documents) the parts took 36.7 / 39.7 s against 44.1 / 43.9 s at
/// 50 MB, alternated, 17 s less CPU; that phase's RSS stays far under a
/// first index's write before it (about 0.9 GB against 1.5).
const FIRST_BUILD_MEMORY: usize = 200_000_000;

/// The stop words of [`analyzer`] and [`Terms`]: tantivy's English list
/// (Lucene's), which indexes made before held.
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Whether `word` (lowercase) is one of the stop words queries and
/// documents drop.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Identifiers [`Terms`] remembers before it forgets them all and starts
/// again: about 10 MB, and the common ones come back first.
const REMEMBERED_IDENTS: usize = 1 << 17;

/// [`analyzer`]'s and [`Terms`]'s limit: a token of this many bytes or
/// more is dropped.
const LONGEST_TERM: usize = 48;

impl Terms {
    fn for_fields(f: &Fields) -> Terms {
        Terms {
            stems: Default::default(),
            idents: FxHashMap::default(),
            whole: String::new(),
            made_here: f.terms,
        }
    }

    /// `text` as the fields want it: its terms, or [`analyzed`] text.
    fn of(&mut self, text: &str) -> String {
        if !self.made_here {
            return analyzed(text);
        }
        let mut out = String::with_capacity(text.len());
        for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if ident.is_empty() {
                continue;
            }
            let made = match self.idents.get(ident) {
                Some(made) => made,
                None => {
                    let made = self.of_ident(ident);
                    if self.idents.len() >= REMEMBERED_IDENTS {
                        self.idents.clear();
                    }
                    self.idents.entry(ident.into()).or_insert(made)
                }
            };
            if !made.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(made);
            }
        }
        out
    }

    /// The terms of one identifier, space-separated: its words, and the
    /// words joined when there are several.
    fn of_ident(&mut self, ident: &str) -> Box<str> {
        let mut out = String::new();
        let mut parts = 0;
        self.whole.clear();
        let (stems, whole) = (&mut self.stems, &mut self.whole);
        crate::words::for_each_word(ident, |w| {
            push_term(stems, w, &mut out);
            whole.push_str(w);
            parts += 1;
        });
        if parts > 1 {
            push_term(&mut self.stems, &self.whole, &mut out);
        }
        out.into_boxed_str()
    }
}

/// Appends the terms [`analyzer`] makes of `word` (lowercase, as
/// [`crate::words::for_each_word`] gives it) to `out`: its alphanumeric
/// pieces (lowercasing may have made others) not too long, lowercased,
/// not stop words, stemmed.
fn push_term(stems: &mut crate::stemming::Stems, word: &str, out: &mut String) {
    let mut one = |piece: &str, out: &mut String| {
        if piece.len() >= LONGEST_TERM {
            return;
        }
        let lower;
        let piece = if piece.is_ascii() {
            piece
        } else {
            // As tantivy's `LowerCaser`: a char at a time.
            lower = piece
                .chars()
                .flat_map(char::to_lowercase)
                .collect::<String>();
            lower.as_str()
        };
        if STOP_WORDS.contains(&piece) {
            return;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        stems.push_stem(piece, out);
    };
    if word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        one(word, out);
    } else {
        for piece in word.split(|c: char| !c.is_alphanumeric()) {
            if !piece.is_empty() {
                one(piece, out);
            }
        }
    }
}

/// Appends the tokens `analyzer` makes of `text` to `out`.
fn push_tokens(analyzer: &mut TextAnalyzer, text: &str, out: &mut Vec<String>) {
    let mut tokens = analyzer.token_stream(text);
    while let Some(t) = tokens.next() {
        out.push(t.text.clone());
    }
}

/// Errors building or querying the lexical index.
#[derive(Debug, thiserror::Error)]
#[error("lexical index: {0}")]
pub struct LexicalError(String);

impl LexicalError {
    /// An error of what feeds an index (the journal it is read from).
    pub fn new(what: impl Into<String>) -> LexicalError {
        LexicalError(what.into())
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> LexicalError {
    LexicalError(e.to_string())
}

fn fields(index: &Index) -> Result<Fields, LexicalError> {
    let s = index.schema();
    let get = |n: &str| s.get_field(n).map_err(err);
    let name = get("name")?;
    let terms = match s.get_field_entry(name).field_type() {
        tantivy::schema::FieldType::Str(o) => o
            .get_indexing_options()
            .is_some_and(|i| i.tokenizer() == TERMS),
        _ => false,
    };
    Ok(Fields {
        terms,
        name,
        signature: get("signature")?,
        doc: get("doc")?,
        body: get("body")?,
        path: get("path")?,
        file: get("file")?,
        local: get("local")?,
        marker: get("marker")?,
    })
}

/// A BM25 index of a state's symbols and sections, in memory or stored.
pub struct LexicalIndex {
    reader: IndexReader,
    /// Field weights for a query that names something, and for one in
    /// words.
    named: [(Field, f32); 5],
    prose: [(Field, f32); 5],
    analyzer: TextAnalyzer,
    file: Field,
    local: Field,
    /// The name field, whose words may be compounds, and the fields whose
    /// words may be their pieces.
    name: Field,
    worded: [Field; 4],
    /// Where the compounds are kept for the next process: the index's own
    /// directory (on disk for a stored index).
    index: Index,
    /// The compounds of the searcher generation they were made for,
    /// made on the first question in words that generation answers.
    compounds: std::sync::Mutex<Option<(u64, std::sync::Arc<Compounds>)>>,
    /// The place columns of the searcher generation they were opened for.
    columns: std::sync::Mutex<Option<(u64, std::sync::Arc<PlaceColumns>)>>,
}

/// The file of an index's directory that keeps its compounds: the
/// segments they were read from on the first line, then a compound and
/// its pieces a line. One file, rewritten when the segments change.
const COMPOUNDS_FILE: &str = "sno-compounds";

/// The version of how [`COMPOUNDS_FILE`]'s compounds are made.
const COMPOUNDS_VERSION: &str = "compounds-1";

/// Name words past which compounds are not looked for: reading the term
/// dictionaries and splitting costs about a second per 100k name words
/// (3.6 s on 8.6M lines, 343k), once per index change. Counted per
/// segment, so a word in several segments counts in each: an index of
/// many segments stops a little sooner.
const MAX_NAME_WORDS: usize = 100_000;

/// A stored index being made from nothing, file by file, in the bounded
/// memory of tantivy's writer: what [`LexicalIndex::build`] makes from a
/// whole state, without the state. It is written under a temporary name
/// and put in place by [`LexicalBuild::finish`]; dropped unfinished, it
/// leaves nothing under the index's name.
pub struct LexicalBuild {
    tmp: std::path::PathBuf,
    dir: std::path::PathBuf,
    /// `None` once finished.
    writer: Option<tantivy::IndexWriter>,
    fields: Fields,
    terms: Terms,
}

impl Drop for LexicalBuild {
    fn drop(&mut self) {
        // Unfinished (an error, or the head moved): nothing is left behind.
        if let Some(writer) = self.writer.take() {
            drop(writer);
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

impl LexicalBuild {
    /// Adds a file's documents: its symbols (with their own `bodies`), its
    /// `sections` and its marker.
    pub fn add_file(
        &mut self,
        path: &str,
        rec: &FileRecord,
        sections: &[Chunk],
        bodies: &FxHashMap<SymbolId, String>,
    ) -> Result<(), LexicalError> {
        let writer = self.writer.as_ref().ok_or_else(|| err("finished"))?;
        let terms = &mut self.terms;
        LexicalIndex::add_file_with(writer, &self.fields, terms, path, rec, sections, bodies)
    }

    /// Commits the documents, puts the index in place and opens it.
    pub fn finish(mut self) -> Result<LexicalIndex, LexicalError> {
        let Some(mut writer) = self.writer.take() else {
            return Err(err("finished"));
        };
        let committed = writer
            .commit()
            .map_err(err)
            .and_then(|_| writer.wait_merging_threads().map_err(err));
        if let Err(e) = committed {
            let _ = std::fs::remove_dir_all(&self.tmp);
            return Err(e);
        }
        LexicalIndex::put_in_place(&self.tmp, &self.dir);
        Index::open_in_dir(&self.dir)
            .map_err(err)
            .and_then(LexicalIndex::reader_for)
    }
}

/// Where a hit is: its file, and its place there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The file's `n`th symbol (its order in the record).
    Symbol(u32),
    /// The file's `n`th section of a doc or config file.
    Section(u32),
}

/// `local` values from this one on are sections.
const SECTION: u64 = 1 << 32;

/// The schema's fields.
struct Fields {
    name: Field,
    signature: Field,
    doc: Field,
    body: Field,
    path: Field,
    /// The path as one term: every document of a file, for deleting them.
    file: Field,
    /// The [`Place`] in the file.
    local: Field,
    /// On a file's marker document: its blob and symbol count, which say
    /// whether the file's documents still hold for a state.
    marker: Field,
    /// Whether the text fields take their terms made ([`TERMS`]).
    terms: bool,
}

fn schema() -> (Schema, Fields) {
    schema_with(TERMS)
}

/// The schema with `tokenizer` for its text fields: [`TERMS`], or
/// [`ANALYZER`] as indexes made before it have.
fn schema_with(tokenizer: &str) -> (Schema, Fields) {
    let mut sb = Schema::builder();
    // Term frequencies, no positions: no phrase queries are asked.
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        name: sb.add_text_field("name", text.clone()),
        signature: sb.add_text_field("signature", text.clone()),
        doc: sb.add_text_field("doc", text.clone()),
        body: sb.add_text_field("body", text.clone()),
        path: sb.add_text_field("path", text),
        // Also columns: a search reads its hits' file and place from them,
        // not from the document store (a block decompressed per hit).
        file: sb.add_text_field("file", STRING | STORED | FAST),
        local: sb.add_u64_field("local", NumericOptions::default().set_stored().set_fast()),
        marker: sb.add_text_field("marker", STORED),
        terms: tokenizer == TERMS,
    };
    (sb.build(), fields)
}

/// A file's text, for bodies; `None` when it cannot be read (its symbols
/// are then found by their names, signatures and docs alone).
pub type Source<'a> = &'a dyn Fn(&FileRecord) -> Option<Served>;

/// Each symbol's own text: its span without the spans of the symbols
/// nested in it (a class's body is its attributes, not its methods').
pub(crate) fn own_bodies(rec: &FileRecord, text: &Served) -> FxHashMap<SymbolId, String> {
    let mut children: FxHashMap<SymbolId, Vec<(usize, usize)>> = FxHashMap::default();
    for s in &rec.symbols {
        if let Some(p) = s.parent {
            children
                .entry(p)
                .or_default()
                .push((s.span.start_byte as usize, s.span.end_byte as usize));
        }
    }
    rec.symbols
        .iter()
        .map(|s| {
            let holes = children.remove(&s.id).unwrap_or_default();
            (s.id, own_text(s, holes, text))
        })
        .collect()
}

/// [`own_bodies`] of one symbol of `rec`, its secret values not masked:
/// for ranking alone (a candidate's string literals weighed against a
/// pasted message), never quoted. Masking is found per file, and most of
/// the files a search weighs it for are not quoted.
pub(crate) fn own_body(rec: &FileRecord, symbol: &Symbol, text: &Served) -> String {
    let holes = rec
        .symbols
        .iter()
        .filter(|s| s.parent == Some(symbol.id))
        .map(|s| (s.span.start_byte as usize, s.span.end_byte as usize))
        .collect();
    own_text_by(symbol, holes, |r| text.unmasked_slice(r))
}

/// `symbol`'s span of `text` without `holes`, at most [`BODY_BYTES`],
/// masked.
fn own_text(symbol: &Symbol, holes: Vec<(usize, usize)>, text: &Served) -> String {
    own_text_by(symbol, holes, |r| std::borrow::Cow::Owned(text.slice(r)))
}

/// `symbol`'s span without `holes`, at most [`BODY_BYTES`], each piece
/// as `slice` reads it.
fn own_text_by<'t>(
    symbol: &Symbol,
    mut holes: Vec<(usize, usize)>,
    slice: impl Fn(std::ops::Range<usize>) -> std::borrow::Cow<'t, str>,
) -> String {
    let (start, end) = (
        symbol.span.start_byte as usize,
        symbol.span.end_byte as usize,
    );
    let mut own = String::new();
    let mut at = start;
    holes.sort_unstable();
    for (a, b) in holes.into_iter().chain([(end, end)]) {
        if a > at && own.len() < BODY_BYTES {
            own.push_str(&slice(at..a.min(end)));
            own.push('\n');
        }
        at = at.max(b);
    }
    if own.len() > BODY_BYTES {
        let mut cut = BODY_BYTES;
        while !own.is_char_boundary(cut) {
            cut -= 1;
        }
        own.truncate(cut);
    }
    own
}

impl LexicalIndex {
    /// Indexes every symbol of `state` in memory, bodies read through
    /// `source`.
    pub fn build(
        state: &State,
        chunks: &[Chunk],
        source: Source,
    ) -> Result<LexicalIndex, LexicalError> {
        let (schema, _) = schema();
        Self::fill(Index::create_in_ram(schema), state, chunks, source)
    }

    /// Opens the index stored in `dir` for this very state, or makes it
    /// there: from `previous`, an index stored for another state, moved
    /// and brought up to this one (the documents of changed, added and
    /// removed files replaced), else from nothing. It is written under a
    /// temporary name renamed into place, so a crash never leaves a
    /// half-written index under `dir`'s name. The caller names `dir` after
    /// the state, e.g. its commit and journal position: an index is derived
    /// data and may be deleted at any time.
    pub fn open_or_update(
        dir: &std::path::Path,
        previous: Option<&std::path::Path>,
        state: &State,
        chunks: &[Chunk],
        source: Source,
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
        let made = Self::moved_and_updated(dir, previous, |tmp| {
            Self::update(tmp, state, None, chunks, source)
        })?;
        if !made {
            let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::create_dir_all(&tmp).map_err(err)?;
            let (schema, _) = schema();
            let index = Index::create_in_dir(&tmp, schema).map_err(err)?;
            Self::fill(index, state, chunks, source)?;
            Self::put_in_place(&tmp, dir);
        }
        Index::open_in_dir(dir)
            .map_err(err)
            .and_then(Self::reader_for)
    }

    /// Moves `previous` aside (not copied: it belongs to a state no answer
    /// is made from any more), applies `update` there and renames it to
    /// `dir`; `false` (and nothing left aside) when there is no previous
    /// index or the update failed.
    fn moved_and_updated(
        dir: &std::path::Path,
        previous: Option<&std::path::Path>,
        update: impl FnOnce(&std::path::Path) -> Result<(), LexicalError>,
    ) -> Result<bool, LexicalError> {
        let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        if let Some(dir) = tmp.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let moved = previous.is_some_and(|p| p.is_dir() && std::fs::rename(p, &tmp).is_ok());
        if !moved {
            return Ok(false);
        }
        if let Err(e) = update(&tmp) {
            tracing::warn!(error = %e, "the lexical index could not be updated");
            let _ = std::fs::remove_dir_all(&tmp);
            return Ok(false);
        }
        Self::put_in_place(&tmp, dir);
        Ok(true)
    }

    fn put_in_place(tmp: &std::path::Path, dir: &std::path::Path) {
        if std::fs::rename(tmp, dir).is_err() {
            // Another process stored the same index first: use theirs.
            let _ = std::fs::remove_dir_all(tmp);
        }
    }

    /// The index of a new state stored in `dir`, made from `previous`'s
    /// by the files `touched` since: their documents replaced by those of
    /// their records in `changed` (with `sections`, theirs), or deleted
    /// when `changed` lacks them. `None` when there is no previous index
    /// to start from or it could not be updated.
    pub fn advanced(
        dir: &std::path::Path,
        previous: &std::path::Path,
        changed: &State,
        touched: &std::collections::BTreeSet<String>,
        sections: &[Chunk],
        source: Source,
    ) -> Option<LexicalIndex> {
        let made = Self::moved_and_updated(dir, Some(previous), |tmp| {
            Self::update(tmp, changed, Some(touched), sections, source)
        })
        .ok()?;
        if !made {
            return None;
        }
        Self::open(dir)
    }

    /// [`LexicalIndex::open_or_update`] without a previous index.
    pub fn open_or_build(
        dir: &std::path::Path,
        state: &State,
        chunks: &[Chunk],
        source: Source,
    ) -> Result<LexicalIndex, LexicalError> {
        Self::open_or_update(dir, None, state, chunks, source)
    }

    /// Brings the index stored in `dir` to `state`, over the files of
    /// `only` (when the rest is known unchanged) or every file of either:
    /// each whose marker is missing or names another blob or symbol count
    /// gets its documents replaced; those not in `state` lose theirs.
    fn update(
        dir: &std::path::Path,
        state: &State,
        only: Option<&std::collections::BTreeSet<String>>,
        chunks: &[Chunk],
        source: Source,
    ) -> Result<(), LexicalError> {
        let index = Index::open_in_dir(dir).map_err(err)?;
        register_tokenizers(&index);
        let f = fields(&index)?;
        let stored = Self::markers(&index, &f)?;
        let sections = sections_by_path(chunks);
        let mut writer = update_writer(&index)?;
        let paths: std::collections::BTreeSet<&str> = match only {
            Some(only) => only.iter().map(String::as_str).collect(),
            None => state
                .keys()
                .chain(stored.keys())
                .map(String::as_str)
                .collect(),
        };
        let (mut replaced, mut removed) = (0usize, 0usize);
        let mut terms = Terms::for_fields(&f);
        for path in paths {
            let was = stored.get(path);
            match state.get(path) {
                // The same documents (a file only resolved again, or not
                // changed): left as they are.
                Some(rec) if was.map(String::as_str) == Some(marker_of(rec).as_str()) => {}
                Some(rec) => {
                    if was.is_some() {
                        writer.delete_term(Term::from_field_text(f.file, path));
                    }
                    replaced += 1;
                    let own = sections.get(path).copied().unwrap_or_default();
                    Self::add_file(&writer, &f, &mut terms, path, rec, own, source)?;
                }
                None if was.is_some() => {
                    writer.delete_term(Term::from_field_text(f.file, path));
                    removed += 1;
                }
                None => {}
            }
        }
        writer.commit().map_err(err)?;
        writer.wait_merging_threads().map_err(err)?;
        tracing::debug!(replaced, removed, "lexical index updated");
        Ok(())
    }

    /// Each file's marker in a stored index.
    fn markers(
        index: &Index,
        f: &Fields,
    ) -> Result<std::collections::HashMap<String, String>, LexicalError> {
        let searcher = fixed_reader(index).map_err(err)?.searcher();
        let q = TermQuery::new(
            Term::from_field_text(f.file, MARKER_KEY),
            IndexRecordOption::Basic,
        );
        let mut out = std::collections::HashMap::new();
        for addr in searcher.search(&q, &DocSetCollector).map_err(err)? {
            let d: TantivyDocument = searcher.doc(addr).map_err(err)?;
            let text = d.get_first(f.marker).and_then(|v| v.as_str()).unwrap_or("");
            if let Some((path, marker)) = text.split_once('\n') {
                out.insert(path.to_string(), marker.to_string());
            }
        }
        Ok(out)
    }

    /// Starts an index stored in `dir` made from nothing, a file at a time
    /// ([`LexicalBuild`]).
    pub fn build_in(dir: &std::path::Path) -> Result<LexicalBuild, LexicalError> {
        let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(err)?;
        let (schema, _) = schema();
        let index = Index::create_in_dir(&tmp, schema).map_err(err)?;
        register_tokenizers(&index);
        let fields = fields(&index)?;
        // One indexing thread beside the caller's, which prepares the
        // documents. Two made the parts of 8.3M lines 5-6 s faster but
        // left twice the segments: 223 MB of index against 200 (6
        // segments and 214 MB with twice the memory), past the disk the
        // scale targets allow.
        let writer = index
            .writer_with_num_threads(1, FIRST_BUILD_MEMORY)
            .map_err(err)?;
        Ok(LexicalBuild {
            tmp,
            dir: dir.to_path_buf(),
            writer: Some(writer),
            terms: Terms::for_fields(&fields),
            fields,
        })
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

    fn fill(
        index: Index,
        state: &State,
        chunks: &[Chunk],
        source: Source,
    ) -> Result<LexicalIndex, LexicalError> {
        register_tokenizers(&index);
        let f = fields(&index)?;
        let mut writer = update_writer(&index)?;
        let sections = sections_by_path(chunks);
        let mut terms = Terms::for_fields(&f);
        for (path, rec) in state.iter() {
            let own = sections.get(path.as_str()).copied().unwrap_or_default();
            Self::add_file(&writer, &f, &mut terms, path, rec, own, source)?;
        }
        writer.commit().map_err(err)?;
        writer.wait_merging_threads().map_err(err)?;
        Self::reader_for(index)
    }

    /// Adds one file's documents: its symbols, its sections and its marker.
    fn add_file(
        writer: &tantivy::IndexWriter,
        f: &Fields,
        terms: &mut Terms,
        path: &str,
        rec: &FileRecord,
        sections: &[Chunk],
        source: Source,
    ) -> Result<(), LexicalError> {
        let bodies = match source(rec) {
            Some(text) if !rec.symbols.is_empty() => own_bodies(rec, &text),
            _ => FxHashMap::default(),
        };
        Self::add_file_with(writer, f, terms, path, rec, sections, &bodies)
    }

    /// [`LexicalIndex::add_file`] with the symbols' own bodies at hand.
    fn add_file_with(
        writer: &tantivy::IndexWriter,
        f: &Fields,
        terms: &mut Terms,
        path: &str,
        rec: &FileRecord,
        sections: &[Chunk],
        bodies: &FxHashMap<SymbolId, String>,
    ) -> Result<(), LexicalError> {
        // Every document of the file has its path's words: made once.
        let path_terms = terms.of(path);
        for (k, s) in rec.symbols.iter().enumerate() {
            let mut d = TantivyDocument::default();
            let mut name = terms.of(&s.name);
            name.push(' ');
            name.push_str(&terms.of(&s.qualified_name));
            d.add_text(f.name, name);
            d.add_text(f.signature, terms.of(&s.signature));
            d.add_text(f.doc, terms.of(&s.doc));
            if let Some(b) = bodies.get(&s.id) {
                d.add_text(f.body, terms.of(b));
            }
            d.add_text(f.path, &path_terms);
            d.add_text(f.file, path);
            d.add_u64(f.local, k as u64);
            writer.add_document(d).map_err(err)?;
        }
        for (k, c) in sections.iter().enumerate() {
            let mut d = TantivyDocument::default();
            d.add_text(f.name, terms.of(&c.title));
            d.add_text(f.body, terms.of(&c.text));
            d.add_text(f.path, terms.of(&c.path));
            d.add_text(f.file, path);
            d.add_u64(f.local, SECTION + k as u64);
            writer.add_document(d).map_err(err)?;
        }
        // The marker: found by its own key, deleted with the file's path.
        let mut d = TantivyDocument::default();
        d.add_text(f.file, MARKER_KEY);
        d.add_text(f.file, path);
        d.add_text(f.marker, format!("{path}\n{}", marker_of(rec)));
        writer.add_document(d).map_err(err)?;
        Ok(())
    }

    fn reader_for(index: Index) -> Result<LexicalIndex, LexicalError> {
        register_tokenizers(&index);
        let f = fields(&index)?;
        let reader = fixed_reader(&index).map_err(err)?;
        let index = index.clone();
        let weighted = |boosts: [(&str, f32); 5]| boosts.map(|(n, b)| (fields_by_name(&f, n), b));
        Ok(LexicalIndex {
            reader,
            named: weighted(BOOSTS),
            prose: weighted(PROSE_BOOSTS),
            analyzer: analyzer(),
            file: f.file,
            local: f.local,
            name: f.name,
            worded: [f.name, f.signature, f.doc, f.body],
            index,
            compounds: Default::default(),
            columns: Default::default(),
        })
    }

    /// `searcher`'s place columns, opened once per generation.
    fn place_columns(&self, searcher: &Searcher) -> std::sync::Arc<PlaceColumns> {
        per_generation(&self.columns, searcher, || {
            open_place_columns(searcher, self.file, self.local)
        })
    }

    /// The compounds of the index's name words ([`crate::compounds`]) as
    /// `searcher` sees it: made once per searcher generation, and kept in
    /// the index's directory for the processes after this one.
    fn compounds(&self, searcher: &tantivy::Searcher) -> std::sync::Arc<Compounds> {
        per_generation(&self.compounds, searcher, || {
            self.read_or_make_compounds(searcher)
        })
    }

    /// The compounds kept in the index's directory for `searcher`'s
    /// segments, or made now and kept there.
    fn read_or_make_compounds(&self, searcher: &tantivy::Searcher) -> Compounds {
        let mut segments: Vec<String> = searcher
            .segment_readers()
            .iter()
            .map(|s| s.segment_id().uuid_string())
            .collect();
        segments.sort_unstable();
        // The way compounds are made is part of the key: a file an older
        // sno kept for the same segments is made again.
        let key = format!("{COMPOUNDS_VERSION} {}", segments.join(" "));
        let path = std::path::Path::new(COMPOUNDS_FILE);
        let kept = self
            .index
            .directory()
            .atomic_read(path)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                let (first, rest) = text.split_once('\n')?;
                (first == key).then(|| Compounds::from_lines(rest))
            });
        match kept {
            Some(c) => c,
            None => {
                let c = self.make_compounds(searcher).unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "compound names not read; searching without them");
                    Compounds::default()
                });
                let text = format!("{key}\n{}", c.to_lines());
                // A read-only or full disk only costs the next process
                // the same work again.
                if let Err(e) = self.index.directory().atomic_write(path, text.as_bytes()) {
                    tracing::debug!(error = %e, "compound names not kept");
                }
                c
            }
        }
    }

    /// Reads the term dictionaries: every name word, and each word's
    /// document count over the worded fields. None past
    /// [`MAX_NAME_WORDS`].
    fn make_compounds(&self, searcher: &tantivy::Searcher) -> Result<Compounds, LexicalError> {
        let name_words: u64 = searcher
            .segment_readers()
            .iter()
            .map(|s| {
                s.inverted_index(self.name)
                    .map(|i| i.terms().num_terms() as u64)
            })
            .sum::<tantivy::Result<u64>>()
            .map_err(err)?;
        if name_words > MAX_NAME_WORDS as u64 {
            return Ok(Compounds::default());
        }
        let mut counts: FxHashMap<String, u32> = FxHashMap::default();
        let mut names: FxHashSet<String> = FxHashSet::default();
        for segment in searcher.segment_readers() {
            for field in self.worded {
                let inverted = segment.inverted_index(field).map_err(err)?;
                let mut terms = inverted.terms().stream().map_err(err)?;
                while terms.advance() {
                    let key = terms.key();
                    if key.len() < crate::compounds::MIN_PIECE
                        || !key.iter().all(u8::is_ascii_lowercase)
                    {
                        continue;
                    }
                    // ASCII letters alone: valid UTF-8.
                    let word = std::str::from_utf8(key).map_err(err)?;
                    match counts.get_mut(word) {
                        Some(c) => *c += terms.value().doc_freq,
                        None => {
                            counts.insert(word.to_string(), terms.value().doc_freq);
                        }
                    }
                    if field == self.name && !names.contains(word) {
                        names.insert(word.to_string());
                    }
                }
            }
        }
        let words: FxHashSet<&str> = counts
            .iter()
            .filter(|(_, c)| **c >= 2)
            .map(|(w, _)| w.as_str())
            .collect();
        let mut compounds = Compounds::new(names.iter().map(String::as_str), &words);
        // A name split at case or underscores is also indexed whole
        // (`sds_empty` as `sdsempti` too, for a query naming it): that
        // whole is no compound to expand to, its pieces are the name's own
        // words already. It is told by a start of it being a name word of
        // the same document (`sds`, or `ffc` of `ffc_bigint_empty`).
        let mut joined: FxHashSet<String> = FxHashSet::default();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.name).map_err(err)?;
            let postings = |t: &str| {
                inverted.read_postings(
                    &Term::from_field_text(self.name, t),
                    IndexRecordOption::Basic,
                )
            };
            for name in compounds.names() {
                if joined.contains(name) {
                    continue;
                }
                let Some(whole) = postings(name).map_err(err)? else {
                    continue;
                };
                let first = tantivy::DocSet::doc(&whole);
                // A start is looked up only where it can be a word: short,
                // or one the dictionaries hold.
                let starts = (1..name.len()).filter(|&end| {
                    end < crate::compounds::MIN_PIECE || counts.contains_key(&name[..end])
                });
                for end in starts {
                    if let Some(mut start) = postings(&name[..end]).map_err(err)? {
                        // Seeking back is not allowed: a list that starts
                        // past the document does not hold it.
                        if tantivy::DocSet::doc(&start) <= first
                            && tantivy::DocSet::seek(&mut start, first) == first
                        {
                            joined.insert(name.to_string());
                            break;
                        }
                    }
                }
            }
        }
        compounds.retain(|name| !joined.contains(name));
        Ok(compounds)
    }

    /// The query for analysed `terms`: for each term, its best field's
    /// BM25 at the field's weight plus [`OTHER_FIELDS`] of the others', and
    /// the terms summed ([`OTHER_FIELDS`] explains why not every field in
    /// full).
    fn query(&self, terms: &[(String, f32)], fields: &[(Field, f32)]) -> BooleanQuery {
        let clauses = terms
            .iter()
            .map(|(t, weight)| {
                let per_field = fields
                    .iter()
                    .map(|&(field, boost)| {
                        let term = TermQuery::new(
                            Term::from_field_text(field, t),
                            IndexRecordOption::WithFreqs,
                        );
                        (term, boost * weight)
                    })
                    .collect();
                let term: Box<dyn Query> = Box::new(BestFieldQuery::new(per_field, OTHER_FIELDS));
                (Occur::Should, term)
            })
            .collect();
        BooleanQuery::new(clauses)
    }

    /// The terms of the words code uses for the question's `asked` terms
    /// ([`crate::synonyms`]), each once and never one of `have` (the
    /// terms the query already holds). Compared stemmed, as the index
    /// holds words: "writes" finds the group of "write".
    fn related_terms<'h>(
        &self,
        asked: &[&str],
        have: impl IntoIterator<Item = &'h str>,
    ) -> Vec<String> {
        // Each word of the groups as the index's terms, with the terms of
        // the words it is related to: the same for every index (one
        // analyser), so made once.
        static TABLE: std::sync::OnceLock<Vec<(Vec<String>, Vec<String>)>> =
            std::sync::OnceLock::new();
        let table = TABLE.get_or_init(|| {
            crate::synonyms::all_words()
                .map(|w| {
                    let related = crate::synonyms::related(w)
                        .into_iter()
                        .flat_map(|r| self.terms(r))
                        .collect();
                    (self.terms(w), related)
                })
                .collect()
        });
        let mut seen: std::collections::HashSet<&str> = have.into_iter().collect();
        table
            .iter()
            .filter(|(stems, _)| stems.iter().any(|t| asked.contains(&t.as_str())))
            .flat_map(|(_, related)| related.iter())
            .filter(|t| seen.insert(String::as_str(t)))
            .cloned()
            .collect()
    }

    /// The terms of the short forms of `text`'s words ([`short_forms`]),
    /// none of `have`, each weighed as its word but never above it: a
    /// short form rarer than its word ("val" for "value") would otherwise
    /// count more than the word the question says, and one seven-line
    /// function that repeats it would answer every question with the word.
    /// The weight is the word's inverse document frequency over the short
    /// form's (at most 1).
    fn short_form_terms(&self, text: &str, have: &[(String, f32)]) -> Vec<(String, f32)> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f32;
        // Documents holding a term in any field a question searches.
        let df = |t: &str| -> u64 {
            self.prose
                .iter()
                .map(|&(f, _)| searcher.doc_freq(&Term::from_field_text(f, t)).unwrap_or(0))
                .sum()
        };
        let idf = |df: u64| {
            let df = (df as f32).min(n);
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        };
        let mut seen: std::collections::HashSet<String> =
            have.iter().map(|(t, _)| t.clone()).collect();
        let mut out = Vec::new();
        for (word, alt) in short_forms(text) {
            // A short form no document holds adds nothing but clauses: a
            // long question has dozens.
            let alt_terms: Vec<(String, u64)> = self
                .terms(alt)
                .into_iter()
                .filter(|t| !seen.contains(t))
                .map(|t| {
                    let d = df(&t);
                    (t, d)
                })
                .filter(|(_, d)| *d > 0)
                .collect();
            let Some(alt_idf) = alt_terms.iter().map(|(_, d)| idf(*d)).reduce(f32::max) else {
                continue;
            };
            let word_idf = self
                .terms(word)
                .iter()
                .map(|t| idf(df(t)))
                .fold(0.0f32, f32::max);
            let weight = if alt_idf > word_idf && alt_idf > 0.0 {
                word_idf / alt_idf
            } else {
                1.0
            };
            for (t, _) in alt_terms {
                if seen.insert(t.clone()) {
                    out.push((t, weight));
                }
            }
        }
        out
    }

    /// `text`'s words as the index's terms (analysed: lowercased, stop
    /// words out, stemmed). Two words of one stem are two terms, as a
    /// query parser makes them.
    fn terms(&self, text: &str) -> Vec<String> {
        let mut analyzer = self.analyzer.clone();
        let mut out: Vec<String> = Vec::new();
        for word in text.split(' ') {
            push_tokens(&mut analyzer, word, &mut out);
        }
        out
    }

    /// The documents of `paths`' files whose text holds a term of
    /// `words` (as the index analyses them), located by `locate`: which
    /// of a few files' sections say a word, whatever their rank.
    pub fn naming(
        &self,
        words: &str,
        paths: &[&str],
        locate: &dyn Fn(&str, Place) -> Option<usize>,
    ) -> Result<Vec<usize>, LexicalError> {
        let terms: Vec<(String, f32)> = self
            .terms(&query_terms(words))
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        if terms.is_empty() || paths.is_empty() {
            return Ok(Vec::new());
        }
        let files: Vec<(Occur, Box<dyn Query>)> = paths
            .iter()
            .map(|p| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.file, p),
                    IndexRecordOption::Basic,
                ));
                (Occur::Should, q)
            })
            .collect();
        let q = BooleanQuery::new(vec![
            (Occur::Must, Box::new(self.query(&terms, &self.prose))),
            (Occur::Must, Box::new(BooleanQuery::new(files))),
        ]);
        let searcher = self.reader.searcher();
        let found = searcher
            .search(&q, &tantivy::collector::DocSetCollector)
            .map_err(err)?;
        let addrs: Vec<DocAddress> = found.into_iter().collect();
        let columns = self.place_columns(&searcher);
        let places = places_of(&searcher, &columns, self.file, self.local, &addrs)?;
        Ok(places
            .into_iter()
            .flatten()
            .filter_map(|(path, place)| locate(&path, place))
            .collect())
    }

    /// The best `limit` documents for `query` with their BM25 scores, best
    /// first, each as `locate` numbers it from its file and place (`None`:
    /// not in the caller's state, left out).
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        locate: &dyn Fn(&str, Place) -> Option<usize>,
    ) -> Result<Vec<(usize, f32)>, LexicalError> {
        let named = crate::search::name_shaped(query);
        let text = query_terms(query);
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let mut terms: Vec<(String, f32)> =
            self.terms(&text).into_iter().map(|t| (t, 1.0)).collect();
        if !named {
            terms.extend(self.short_form_terms(&text, &terms));
        }
        if !named {
            // A question in words also asks for the names its words make
            // up (`sdsdup` for "duplicate an sds string").
            let compounds = self.compounds(&self.reader.searcher());
            let asked: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
            let mut more: Vec<(String, f32)> = compounds
                .expand(&asked)
                .into_iter()
                .map(|(t, w)| (t.to_string(), w))
                .collect();
            // And, at a lower weight, for the words code uses for its
            // words (of the question, not of the compounds).
            let related =
                self.related_terms(&asked, terms.iter().chain(&more).map(|(t, _)| t.as_str()));
            more.extend(related.into_iter().map(|t| (t, RELATED_WEIGHT)));
            // And for the initials of its phrases (`le` for
            // "little-endian"), as the index's terms.
            let mut have: std::collections::HashSet<String> =
                terms.iter().chain(&more).map(|(t, _)| t.clone()).collect();
            let is_stop = |w: &str| self.terms(w).is_empty();
            for short in crate::initialisms::initialisms(query, &is_stop, INITIALISMS) {
                for t in self.terms(&short) {
                    if have.insert(t.clone()) {
                        more.push((t, INITIALISM_WEIGHT));
                    }
                }
            }
            terms.extend(more);
        }
        let q = self.query(&terms, if named { &self.named } else { &self.prose });
        let searcher = self.reader.searcher();
        let hits = top_docs(&searcher, &q, limit)?;
        let mut out = Vec::with_capacity(hits.len());
        let addrs: Vec<DocAddress> = hits.iter().map(|h| h.1).collect();
        let columns = self.place_columns(&searcher);
        let places = places_of(&searcher, &columns, self.file, self.local, &addrs)?;
        for ((score, _), place) in hits.into_iter().zip(places) {
            if let Some(doc) = place.and_then(|(path, place)| locate(&path, place)) {
                out.push((doc, score));
            }
        }
        Ok(out)
    }
}

/// The share of a segment's documents deleted past which tantivy merges
/// it (which drops them). Until then BM25 counts deleted documents in its
/// statistics, so a head's index advanced by a commit scored otherwise
/// than the same head's made from nothing: enough to swap two items on a
/// small repository whose commit replaced a third of its documents.
/// tantivy's default never merges for deletes.
const DELETED_BEFORE_MERGE: f32 = 0.1;

/// A writer of a stored index that a state's changes update: one thread
/// (the other core is parsing or serving), 50 MB, and segments merged
/// once [`DELETED_BEFORE_MERGE`] of them is deleted.
pub(crate) fn update_writer(index: &Index) -> Result<tantivy::IndexWriter, LexicalError> {
    let writer = index.writer_with_num_threads(1, 50_000_000).map_err(err)?;
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_del_docs_ratio_before_merge(DELETED_BEFORE_MERGE);
    writer.set_merge_policy(Box::new(policy));
    Ok(writer)
}

/// A reader of an index that never changes once opened: sno writes every
/// stored index aside and renames it into place, and a new state's index
/// is another directory. Tantivy's default reader watches the index's
/// `meta.json` on a thread of its own, twice a second, for commits that
/// never come, and warned twice a second for as long as a daemon held a
/// reader of a head whose directory a newer head's had replaced.
pub(crate) fn fixed_reader(index: &Index) -> tantivy::Result<IndexReader> {
    index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()
}

/// The best `limit` documents of `searcher`'s index for `q`, best first,
/// with their BM25 scores and addresses (valid in that searcher alone).
pub(crate) fn top_docs(
    searcher: &Searcher,
    q: &dyn Query,
    limit: usize,
) -> Result<Vec<(f32, DocAddress)>, LexicalError> {
    searcher
        .search(q, &Exhaustive(TopDocs::with_limit(limit).order_by_score()))
        .map_err(err)
}

/// The place a stored local number stands for.
fn place_of_local(local: u64) -> Place {
    if local >= SECTION {
        Place::Section((local - SECTION) as u32)
    } else {
        Place::Symbol(local as u32)
    }
}

/// What `slot` holds for `searcher`'s generation, made by `make` when it
/// holds another generation's or nothing: a searcher's segments do not
/// change while its generation stands.
fn per_generation<T>(
    slot: &std::sync::Mutex<Option<(u64, std::sync::Arc<T>)>>,
    searcher: &Searcher,
    make: impl FnOnce() -> T,
) -> std::sync::Arc<T> {
    let generation = searcher.generation().generation_id();
    let mut held = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match held.as_ref() {
        Some((g, made)) if *g == generation => made.clone(),
        _ => {
            let made = std::sync::Arc::new(make());
            *held = Some((generation, made.clone()));
            made
        }
    }
}

/// Each segment's `file` and `local` columns, by segment ordinal (`None`
/// for a segment of an index made before the columns).
type PlaceColumns = Vec<Option<(StrColumn, Column<u64>)>>;

/// Opens `searcher`'s place columns. Opening a column reads its segment's
/// column directory and dictionary index, which do not change while the
/// searcher's generation stands: they are opened once per generation
/// (the saving not measured apart from the change that came with it).
fn open_place_columns(searcher: &Searcher, file: Field, local: Field) -> PlaceColumns {
    let schema = searcher.schema();
    let (file_name, local_name) = (schema.get_field_name(file), schema.get_field_name(local));
    searcher
        .segment_readers()
        .iter()
        .map(|segment| {
            let fast = segment.fast_fields();
            fast.str(file_name)
                .ok()
                .flatten()
                .zip(fast.u64(local_name).ok())
        })
        .collect()
}

/// Where a searcher's hits are (their file and place, `None` for a
/// document of neither), in the order of `addrs`: read from each
/// segment's columns, the file paths from its dictionary in the order of
/// their ordinals (each block of it decoded once), or from the stored
/// documents of an index made before the columns were. Read from the
/// store, the 200 hits of a question decompressed a block each: a quarter
/// of the lexical search on a 600k-line repository.
fn places_of(
    searcher: &Searcher,
    columns: &PlaceColumns,
    file: Field,
    local: Field,
    addrs: &[DocAddress],
) -> Result<Vec<Option<(String, Place)>>, LexicalError> {
    let mut out = vec![None; addrs.len()];
    let mut by_segment: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (i, a) in addrs.iter().enumerate() {
        by_segment.entry(a.segment_ord).or_default().push(i);
    }
    for (segment, hits) in by_segment {
        let Some(Some((paths, locals))) = columns.get(segment as usize) else {
            for i in hits {
                let d: TantivyDocument = searcher.doc(addrs[i]).map_err(err)?;
                let path = d.get_first(file).and_then(|v| v.as_str());
                let at = d.get_first(local).and_then(|v| v.as_u64());
                out[i] = path
                    .zip(at)
                    .map(|(p, l)| (p.to_string(), place_of_local(l)));
            }
            continue;
        };
        let mut ords: Vec<(u64, usize, u64)> = hits
            .iter()
            .filter_map(|&i| {
                let doc = addrs[i].doc_id;
                Some((paths.term_ords(doc).next()?, i, locals.first(doc)?))
            })
            .collect();
        ords.sort_unstable();
        let sorted: Vec<u64> = ords.iter().map(|o| o.0).collect();
        let mut next = ords.iter();
        paths
            .dictionary()
            .sorted_ords_to_term_cb(&sorted, |bytes| {
                if let Some(&(_, i, at)) = next.next() {
                    out[i] = std::str::from_utf8(bytes)
                        .ok()
                        .map(|p| (p.to_string(), place_of_local(at)));
                }
            })
            .map_err(err)?;
    }
    Ok(out)
}

/// A collector that scores every matching document rather than skipping
/// the ones that cannot make its top (tantivy's block-max WAND, which its
/// top-docs collector uses otherwise).
///
/// A question is a disjunction of a term per field for each of its words
/// and their related words, compounds and initials: hundreds of clauses
/// for a long one, and block-max WAND sorts its clauses at every step (a
/// third of a long question's time in `perf`). Warm MCP `search`, markdown,
/// alternated: on the 8.3M-line corpus 40-word questions took 124-126 ms
/// with WAND and 20.0-20.1 ms scoring every match, the bench's short
/// questions 9.7-11.0 ms and 9.9 ms; on a held-out repository (fmt) 32 to
/// 512 words 5.1-8.2 ms against 3.7-4.6, two words 1.5-2.0 ms either way.
/// The answers are the same, but that documents of equal scores may come
/// in another order (the two add a document's term scores in different
/// orders). Those figures are of the flat query of a term per field; a
/// word's fields are now one clause ([`BestFieldQuery`]), a union tantivy
/// does not prune, and this collector keeps the scoring of every match
/// whatever the query's shape.
struct Exhaustive<C>(C);

impl<C: tantivy::collector::Collector> tantivy::collector::Collector for Exhaustive<C> {
    type Fruit = C::Fruit;
    type Child = C::Child;

    fn check_schema(&self, schema: &tantivy::schema::Schema) -> tantivy::Result<()> {
        self.0.check_schema(schema)
    }

    fn for_segment(
        &self,
        segment_local_id: tantivy::SegmentOrdinal,
        segment: &tantivy::SegmentReader,
    ) -> tantivy::Result<Self::Child> {
        self.0.for_segment(segment_local_id, segment)
    }

    fn requires_scoring(&self) -> bool {
        self.0.requires_scoring()
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<Self::Child as tantivy::collector::SegmentCollector>::Fruit>,
    ) -> tantivy::Result<Self::Fruit> {
        self.0.merge_fruits(fruits)
    }
}

/// The `file` term of marker documents. A path never holds a NUL.
const MARKER_KEY: &str = "\0marker";

/// What a file's documents were made from: its blob, and what its
/// symbols say (a record re-extracted from the same blob by a newer sno
/// gets its documents made again).
pub(crate) fn marker_of(rec: &FileRecord) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for s in &rec.symbols {
        for part in [&s.qualified_name, &s.signature, &s.doc] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        h.update(&s.content_hash.to_le_bytes());
    }
    format!(
        "{} {} {:016x}",
        rec.blob.to_hex(),
        rec.symbols.len(),
        h.digest()
    )
}

/// Each path's run of sections in `chunks` (which come in path order).
fn sections_by_path(chunks: &[Chunk]) -> std::collections::HashMap<&str, &[Chunk]> {
    chunks
        .chunk_by(|a, b| a.path == b.path)
        .map(|run| (run[0].path.as_str(), run))
        .collect()
}

fn fields_by_name(f: &Fields, name: &str) -> Field {
    match name {
        "name" => f.name,
        "signature" => f.signature,
        "doc" => f.doc,
        "body" => f.body,
        _ => f.path,
    }
}

/// What a related word ([`crate::synonyms`]) weighs against a word of the
/// question. On the quality eval, docstring -> code R@10 / MRR@10 went
/// 0.849 / 0.614 -> 0.848 / 0.617 at 0.5 (own, 847 queries) and 0.791 ->
/// 0.794 (0.792 at 0.3) on a held-out set of 16 repositories (977
/// queries: Rust +0.056, TypeScript +0.026, C -0.008, C++ -0.005);
/// identifiers and change localization were unchanged. The lead from
/// "returns" to `get` then gave 0.849 / 0.622 and 0.795 / 0.564 (held-out
/// Python +0.025, Ruby +0.019, Go -0.014).
const RELATED_WEIGHT: f32 = 0.5;

/// What an initialism of a question's phrase ([`crate::initialisms`])
/// weighs against a word of the question: a guess at a name, lower than a
/// related word. Docstring -> code R@10 / MRR@10 on the quality eval
/// (2026-11-28), without them, at 0.5 and at 0.3: own corpora 0.849 /
/// 0.622, 0.850 / 0.623, 0.850 / 0.623; 16 held-out repositories 0.797 /
/// 0.568, 0.800 / 0.571 (Ruby -0.019), 0.801 / 0.570 (Rust 0.593 -> 0.667,
/// most of it `bytes`' `put_*_le` / `put_*_ne`; no language lower).
/// Identifiers unchanged; change localization +0.001 own, +0.000 held-out.
const INITIALISM_WEIGHT: f32 = 0.3;

/// Initialisms a question is searched for at most: those of its first
/// phrases, as [`QUERY_TERMS`] keeps its first words (a 512-word question
/// made a thousand, and took twice a short one's time).
const INITIALISMS: usize = QUERY_TERMS;

/// A query as terms: analysed like the documents, each term once, at most
/// [`QUERY_TERMS`] of them. Only letters, digits and spaces remain, so
/// nothing in it is query syntax.
pub(crate) fn query_terms(query: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    analyzed(query)
        .split(' ')
        .filter(|t| !t.is_empty() && seen.insert(*t))
        .take(QUERY_TERMS)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The other spellings of a question's words ([`crate::abbreviations`]),
/// each with its word, each once and never one the query has. A short
/// form is the same word to the reader, so it weighs what the word does
/// (a uniform weight of 0.25, 0.5, 1.0 and 1.5 was tried on the quality
/// eval; 1.0 was best, see `ops/bench/quality/fit.py`), never more
/// ([`LexicalIndex::short_form_terms`]).
fn short_forms(terms: &str) -> Vec<(&str, &'static str)> {
    let have: std::collections::HashSet<&str> = terms.split(' ').collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for t in terms.split(' ') {
        for alt in crate::abbreviations::alternatives(t) {
            if !have.contains(alt) && seen.insert(alt) {
                out.push((t, alt));
            }
        }
    }
    out
}

/// The symbols of a state in document order (what hit numbers index).
pub fn documents(state: &State) -> Vec<Located<'_>> {
    all_symbols(state).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(names: &[&str]) -> State {
        State::from([file("a.py", 0, names)])
    }

    /// Numbers hits as the retriever does: symbols in state order.
    fn search(ix: &LexicalIndex, st: &State, q: &str) -> Vec<(usize, f32)> {
        let docs = documents(st);
        ix.search(q, 10, &|path, place| match place {
            Place::Symbol(k) => docs
                .iter()
                .position(|l| l.path == path)
                .map(|first| first + k as usize),
            Place::Section(_) => None,
        })
        .unwrap()
    }

    /// Every document of an index as (file, place), sorted; a marker's
    /// place is `u64::MAX`.
    fn contents(ix: &LexicalIndex) -> Vec<(String, u64)> {
        let searcher = ix.reader.searcher();
        let mut out = Vec::new();
        for seg in searcher.segment_readers() {
            let store = seg.get_store_reader(1).unwrap();
            for id in seg.doc_ids_alive() {
                let d: TantivyDocument = store.get(id).unwrap();
                let file = d
                    .get_all(ix.file)
                    .filter_map(|v| v.as_str())
                    .filter(|f| *f != MARKER_KEY)
                    .collect::<Vec<_>>()
                    .join(",");
                let local = d
                    .get_first(ix.local)
                    .and_then(|v| v.as_u64())
                    .unwrap_or(u64::MAX);
                out.push((file, local));
            }
        }
        out.sort();
        out
    }

    fn file(path: &str, blob: u8, names: &[&str]) -> (String, FileRecord) {
        let rec = sno_journal::test_support::record(path, blob, names);
        (path.to_string(), rec)
    }

    /// A query term scores a document by its best field plus
    /// [`OTHER_FIELDS`] of its other fields, each field as tantivy's query
    /// parser scores the term in that field alone at its weight (so the
    /// terms are made as the parser's analysis would make them).
    #[test]
    fn a_term_counts_its_best_field_and_part_of_the_others() {
        let st: State = [
            file(
                "app/config.py",
                1,
                &["load_config", "parse_args", "ConfigLoader"],
            ),
            file("app/io.py", 2, &["read_file", "write_file", "parse_path"]),
            file("src/parsing/args.py", 3, &["parsing_helper", "the_loader"]),
        ]
        .into_iter()
        .collect();
        let ix = LexicalIndex::build(&st, &[], &|_| None).unwrap();
        let searcher = ix.reader.searcher();
        let index = searcher.index();
        let f = fields(index).unwrap();
        let all = |query: &dyn Query| -> std::collections::HashMap<tantivy::DocAddress, f32> {
            searcher
                .search(query, &TopDocs::with_limit(1000).order_by_score())
                .unwrap()
                .into_iter()
                .map(|(score, d)| (d, score))
                .collect()
        };
        for (boosts, weighted) in [(BOOSTS, &ix.named), (PROSE_BOOSTS, &ix.prose)] {
            for q in [
                "parse config",
                "load the config loader",
                "parsing args path",
                "write",
            ] {
                let made = ix.terms(&query_terms(q));
                let mut expected: std::collections::HashMap<tantivy::DocAddress, f32> =
                    Default::default();
                // Whether a document holds a term in several fields: without
                // one the test says nothing about the other fields' share.
                let mut several = false;
                for term in &made {
                    let mut per_doc: std::collections::HashMap<_, Vec<f32>> = Default::default();
                    for (name, boost) in boosts {
                        let field = fields_by_name(&f, name);
                        let mut parser = tantivy::query::QueryParser::for_index(index, vec![field]);
                        parser.set_field_boost(field, boost);
                        for (d, score) in all(&parser.parse_query_lenient(term).0) {
                            per_doc.entry(d).or_default().push(score);
                        }
                    }
                    for (d, scores) in per_doc {
                        several |= scores.len() > 1;
                        let best = scores.iter().cloned().fold(0.0, f32::max);
                        let rest: f32 = scores.iter().sum::<f32>() - best;
                        *expected.entry(d).or_default() += best + OTHER_FIELDS * rest;
                    }
                }
                let terms: Vec<(String, f32)> = made.iter().map(|t| (t.clone(), 1.0)).collect();
                let ours = all(&ix.query(&terms, weighted));
                assert!(!ours.is_empty(), "{q}");
                assert_eq!(ours.len(), expected.len(), "{q}");
                assert!(several, "{q}");
                for (d, e) in &expected {
                    let a = ours[d];
                    assert!((a - e).abs() <= 1e-4 * e.abs(), "{q}: {a} vs {e}");
                }
            }
        }
    }

    /// Scoring every match gives the top that block-max WAND gives: the
    /// same scores rank by rank and the same documents above the cut, for
    /// questions of one to many words over a few hundred documents whose
    /// words repeat (documents of equal scores may come in another order).
    #[test]
    fn every_match_scored_gives_the_top_wand_gives() {
        let words = [
            "parse", "load", "config", "read", "write", "file", "path", "args", "cache", "token",
            "stream", "buffer", "encode", "decode", "open", "close",
        ];
        let st: State = (0..60u32)
            .map(|i| {
                let names: Vec<String> = (0..5u32)
                    .map(|j| {
                        let a = words[((i * 7 + j * 3) % 16) as usize];
                        let b = words[((i * 5 + j * 11) % 16) as usize];
                        format!("{a}_{b}_{j}")
                    })
                    .collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                file(&format!("pkg{}/m{i}.py", i % 4), (i % 250) as u8, &names)
            })
            .collect();
        let ix = LexicalIndex::build(&st, &[], &|_| None).unwrap();
        let searcher = ix.reader.searcher();
        for n in [1, 2, 5, 9, 16] {
            let terms: Vec<(String, f32)> = ix
                .terms(&words[..n].join(" "))
                .into_iter()
                .enumerate()
                .map(|(k, t)| (t, if k % 3 == 2 { 0.5 } else { 1.0 }))
                .collect();
            let q = ix.query(&terms, &ix.prose);
            for limit in [3, 10, 50] {
                let wand = searcher
                    .search(&q, &TopDocs::with_limit(limit).order_by_score())
                    .unwrap();
                let all = searcher
                    .search(&q, &Exhaustive(TopDocs::with_limit(limit).order_by_score()))
                    .unwrap();
                assert!(!wand.is_empty(), "{n} words");
                assert_eq!(all.len(), wand.len(), "{n} words, top {limit}");
                // The same scores rank by rank; the two add a document's
                // term scores in different orders, so documents of equal
                // scores may swap, and only those.
                let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * b.abs().max(1e-6);
                for ((a, _), (b, _)) in all.iter().zip(&wand) {
                    assert!(close(*a, *b), "{n} words, top {limit}: {a} vs {b}");
                }
                let cut = wand.last().unwrap().0;
                let above = |v: &[(f32, tantivy::DocAddress)]| -> std::collections::BTreeSet<_> {
                    v.iter()
                        .filter(|(s, _)| !close(*s, cut))
                        .map(|(s, d)| (d.doc_id, (s * 1e3).round() as i64))
                        .collect()
                };
                assert_eq!(above(&all), above(&wand), "{n} words, top {limit}");
            }
        }
    }

    /// Every (field, term) of an index with its document frequency.
    fn dictionary(ix: &LexicalIndex) -> std::collections::BTreeMap<(u32, String), u32> {
        let searcher = ix.reader.searcher();
        let mut out = std::collections::BTreeMap::new();
        for seg in searcher.segment_readers() {
            for field in [ix.name]
                .into_iter()
                .chain(ix.worded)
                .chain([ix.prose[4].0])
            {
                let inv = seg.inverted_index(field).unwrap();
                let mut terms = inv.terms().stream().unwrap();
                while terms.advance() {
                    let term = String::from_utf8(terms.key().to_vec()).unwrap();
                    *out.entry((field.field_id(), term)).or_insert(0) += terms.value().doc_freq;
                }
            }
        }
        out
    }

    /// Symbols whose names, qualified names, signatures, docs and bodies
    /// hold what the analysis treats apart: cases, stop words, stems,
    /// digits, non-ASCII words and words too long to index.
    fn worded_state() -> (State, Vec<Chunk>) {
        let long = "x".repeat(60);
        let mut rec = sno_journal::test_support::record(
            "src/ConfigLoader/parsing_utils.py",
            1,
            &["loadConfigFromEnv", "HTTPServer2", "the_reader", "größe"],
        );
        for (k, s) in rec.symbols.iter_mut().enumerate() {
            s.qualified_name = format!("Loader.{}", s.name);
            s.doc = format!("Loads the running configurations from {long} and parses values {k}.");
            s.span = sno_journal::model::Span {
                start_byte: (k * 40) as u32,
                end_byte: (k * 40 + 40) as u32,
                ..Default::default()
            };
        }
        let doc = "docs/Running Tests.md";
        let text = "Use cargo test; the fixtures are generated.";
        let chunks = vec![Chunk {
            path: doc.into(),
            title: "Running the tests".into(),
            kind: crate::chunks::ChunkKind::Doc,
            start_line: 1,
            end_line: 1,
            start_byte: 0,
            end_byte: text.len(),
            text: text.into(),
        }];
        let state = State::from([
            ("src/ConfigLoader/parsing_utils.py".into(), rec),
            file(doc, 2, &[]),
        ]);
        (state, chunks)
    }

    fn worded_source(_: &FileRecord) -> Option<Served> {
        let body = "def f(userName, maxRetries=3):\n    # retrying connections to the server\n    return \"Connecting…\"\n";
        Some(Served::new(body.repeat(4).as_bytes(), false))
    }

    #[test]
    fn terms_are_the_analyzers_tokens_of_the_analyzed_text() {
        let long = "y".repeat(47);
        let mut texts: Vec<String> = [
            "loadConfigFromEnv HTTPServer2 the_reader parse_args",
            "İstanbul ΣΑΣ Straße größe ﬁle naïveCafé ǅemal Ⅻclock",
            "x\u{301}y e\u{0307}x a_b__c 123abc abc123def ___ _x_ 日本語テキスト",
            "Running connections configured flies easily, generously: the and of",
            &format!("{long}z {long}zz {long}Ab ÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀ"),
            "emoji🙂mid tab\there  two  spaces\nnew\r\nlines",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        // This crate's sources: every style of identifier, comment and
        // string literal a repository holds, in thousands of words.
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for e in std::fs::read_dir(src).unwrap() {
            texts.push(std::fs::read_to_string(e.unwrap().path()).unwrap());
        }
        let (_, f) = schema();
        let mut terms = Terms::for_fields(&f);
        let mut a = analyzer();
        let mut words = 0;
        for t in &texts {
            let mut want = Vec::new();
            push_tokens(&mut a, &analyzed(t), &mut want);
            let made = terms.of(t);
            let got: Vec<&str> = made.split(' ').filter(|w| !w.is_empty()).collect();
            assert_eq!(got, want, "{}", &t[..t.len().min(80)]);
            words += got.len();
        }
        assert!(words > 10_000, "{words}");
        // An index of the analyzer's fields gets the text, not terms.
        let (_, before) = schema_with(ANALYZER);
        assert_eq!(
            Terms::for_fields(&before).of("loadConfig"),
            analyzed("loadConfig")
        );
    }

    #[test]
    fn the_stop_words_are_tantivys_english_ones() {
        // Indexes made before analysed with tantivy's list: ours must drop
        // what it dropped.
        let mut theirs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(StopWordFilter::new(tantivy::tokenizer::Language::English).unwrap())
            .build();
        let mut kept = Vec::new();
        push_tokens(&mut theirs, &STOP_WORDS.join(" "), &mut kept);
        assert!(kept.is_empty(), "{kept:?}");
        push_tokens(&mut theirs, "parse the config", &mut kept);
        assert_eq!(kept, ["parse", "config"]);
    }

    #[test]
    fn terms_made_by_the_caller_index_as_the_fields_analyzer_did() {
        let (st, chunks) = worded_state();
        let made = LexicalIndex::build(&st, &chunks, &worded_source).unwrap();
        // An index as made before the terms: its fields analyse the text.
        let before = Index::create_in_ram(schema_with(ANALYZER).0);
        let before = LexicalIndex::fill(before, &st, &chunks, &worded_source).unwrap();
        assert!(fields(&made.index).unwrap().terms);
        assert!(!fields(&before.index).unwrap().terms);
        let words = dictionary(&made);
        assert_eq!(words, dictionary(&before));
        // The analysis happened: split, kept whole, stemmed, stop words
        // and overlong words out.
        let has = |t: &str| words.keys().any(|(_, w)| w == t);
        for t in [
            "load",
            "loadconfigfromenv",
            "config",
            "pars",
            "größe",
            "retri",
        ] {
            assert!(has(t), "{t} missing from {words:?}");
        }
        for t in ["the", "loads", "running", &"x".repeat(60)] {
            assert!(!has(t), "{t} indexed");
        }
        for q in [
            "load configuration from env",
            "retry connecting",
            "running tests",
        ] {
            assert_eq!(search(&made, &st, q), search(&before, &st, q), "{q}");
        }
        assert!(!search(&made, &st, "load configuration from env").is_empty());
    }

    /// The schema of indexes made before hits were read from columns:
    /// file and place stored only.
    fn schema_without_columns() -> Schema {
        let mut sb = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TERMS)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        for name in ["name", "signature", "doc", "body", "path"] {
            sb.add_text_field(name, text.clone());
        }
        sb.add_text_field("file", STRING | STORED);
        sb.add_u64_field("local", NumericOptions::default().set_stored());
        sb.add_text_field("marker", STORED);
        sb.build()
    }

    #[test]
    fn hits_are_placed_from_columns_as_from_stored_documents() {
        let (st, chunks) = worded_state();
        let made = LexicalIndex::build(&st, &chunks, &worded_source).unwrap();
        let before = Index::create_in_ram(schema_without_columns());
        let before = LexicalIndex::fill(before, &st, &chunks, &worded_source).unwrap();
        let has_columns = |i: &LexicalIndex| {
            let searcher = i.reader.searcher();
            let fast = searcher.segment_reader(0).fast_fields();
            fast.str("file").ok().flatten().is_some() && fast.u64("local").is_ok()
        };
        assert!(has_columns(&made));
        assert!(!has_columns(&before));
        for q in [
            "load configuration from env",
            "retry connecting",
            "running tests",
        ] {
            let found = search(&made, &st, q);
            assert!(!found.is_empty(), "{q}");
            assert_eq!(found, search(&before, &st, q), "{q}");
        }
    }

    #[test]
    fn an_index_made_before_the_terms_is_updated_in_its_own_analysis() {
        let (st, chunks) = worded_state();
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old");
        std::fs::create_dir_all(&old).unwrap();
        let index = Index::create_in_dir(&old, schema_with(ANALYZER).0).unwrap();
        drop(LexicalIndex::fill(index, &State::new(), &[], &worded_source).unwrap());
        // Brought to the state by the update path, as a new head would be.
        let updated = LexicalIndex::open_or_update(
            &dir.path().join("new"),
            Some(&old),
            &st,
            &chunks,
            &worded_source,
        )
        .unwrap();
        assert!(!fields(&updated.index).unwrap().terms);
        let rebuilt = LexicalIndex::build(&st, &chunks, &worded_source).unwrap();
        assert_eq!(dictionary(&updated), dictionary(&rebuilt));
    }

    #[test]
    fn an_index_updated_across_edits_renames_and_deletions_equals_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let v1: State = [
            file("app/config.py", 1, &["load_config", "parse_args"]),
            file("app/io.py", 2, &["read_file", "write_file"]),
            file("app/old.py", 3, &["legacy_helper"]),
        ]
        .into_iter()
        .collect();
        let first = dir.path().join("head-1");
        let built = LexicalIndex::open_or_update(&first, None, &v1, &[], &|_| None).unwrap();
        assert_eq!(search(&built, &v1, "legacy helper")[0].0, 4);
        drop(built);
        // An edit (new blob, one symbol more), a rename (same blob, new
        // path), a deletion and a new file.
        let v2: State = [
            file(
                "app/config.py",
                9,
                &["load_config", "parse_args", "merge_env"],
            ),
            file("app/files.py", 2, &["read_file", "write_file"]),
            file("app/net.py", 4, &["open_socket"]),
        ]
        .into_iter()
        .collect();
        let second = dir.path().join("head-2");
        let updated =
            LexicalIndex::open_or_update(&second, Some(&first), &v2, &[], &|_| None).unwrap();
        assert!(!first.exists(), "the previous index was moved, not copied");
        let rebuilt = LexicalIndex::build(&v2, &[], &|_| None).unwrap();
        assert_eq!(contents(&updated), contents(&rebuilt));
        for q in ["merge env", "read file", "open socket", "parse args"] {
            let (a, b) = (search(&updated, &v2, q), search(&rebuilt, &v2, q));
            assert_eq!(a.first().map(|h| h.0), b.first().map(|h| h.0), "{q}");
            let docs = |h: &[(usize, f32)]| {
                let mut v: Vec<usize> = h.iter().map(|x| x.0).collect();
                v.sort();
                v
            };
            assert_eq!(docs(&a), docs(&b), "{q}");
        }
        assert!(search(&updated, &v2, "legacy helper").is_empty());
        drop((updated, rebuilt));
        // The same blob extracted anew (a newer sno reads more of it): its
        // documents are made again.
        let mut v3 = v2.clone();
        v3.insert(
            "app/net.py".into(),
            file("app/net.py", 4, &["close_socket"]).1,
        );
        let third = dir.path().join("head-3");
        let updated =
            LexicalIndex::open_or_update(&third, Some(&second), &v3, &[], &|_| None).unwrap();
        let rebuilt = LexicalIndex::build(&v3, &[], &|_| None).unwrap();
        assert_eq!(contents(&updated), contents(&rebuilt));
        assert!(!search(&updated, &v3, "close socket").is_empty());
        assert!(search(&updated, &v3, "open").is_empty());
    }

    #[test]
    fn a_stored_index_reopens_with_the_same_answers_and_a_broken_one_is_rebuilt() {
        let st = state(&["load_config", "parse_args", "read_file"]);
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("lexical-1");
        let built = LexicalIndex::open_or_build(&at, &st, &[], &|_| None).unwrap();
        let want = search(&built, &st, "parse arguments");
        assert_eq!(want[0].0, 1, "parse_args is document 1");
        assert!(at.is_dir());
        let reopened = LexicalIndex::open_or_build(&at, &st, &[], &|_| None).unwrap();
        assert_eq!(search(&reopened, &st, "parse arguments"), want);
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
        let rebuilt = LexicalIndex::open_or_build(&at, &st, &[], &|_| None).unwrap();
        assert_eq!(search(&rebuilt, &st, "parse arguments"), want);
        assert_eq!(
            search(
                &LexicalIndex::build(&st, &[], &|_| None).unwrap(),
                &st,
                "read"
            )[0]
            .0,
            2
        );
    }
}
