//! A head's search parts made from nothing a file at a time, in bounded
//! memory: the lexical index, the document map, the vectors' layout and
//! the texts to embed, as the views' records come in path order. What
//! [`crate::search::Retriever`] makes from a whole state in memory, without
//! the state: on millions of lines the state alone is gigabytes.
//!
//! The caller reads the records and embeds the texts (on a thread of its
//! own, beside tantivy's); each file's text is read once, for its bodies,
//! its sections and its embedded texts.

use rustc_hash::FxHashMap;
use sno_journal::model::{FileRecord, SymbolId};

use crate::chunks::Chunk;
use crate::doc_map::{DocMap, DocMapBuilder};
use crate::lexical::{LexicalBuild, LexicalError, LexicalIndex, Source};
use crate::search::FileVectors;
use crate::semantic::Vectors;

/// Texts to embed for consecutive documents, from `first` on (an empty
/// text is a document with no vector).
pub struct TextRun {
    pub first: usize,
    pub texts: Vec<String>,
}

/// The parts of a state being made, a file at a time in path order.
pub struct PartsBuild {
    lexical: LexicalBuild,
    map: DocMapBuilder,
    layout: Vec<FileVectors>,
    sections: Vec<Chunk>,
    /// Symbol documents so far.
    symbols: usize,
    /// Whether texts to embed are wanted.
    embed: bool,
    /// Texts gathered since the last run handed out.
    run: TextRun,
}

/// What [`PartsBuild::finish`] made.
pub struct Parts {
    pub lexical: LexicalIndex,
    pub map: DocMap,
    pub layout: Vec<FileVectors>,
    /// The sections' embedded texts: the documents after the symbols'.
    pub section_texts: TextRun,
}

/// Texts handed out at a time: enough for the model to embed in one call,
/// few enough that the run in flight stays small.
const RUN_TEXTS: usize = 2048;

impl PartsBuild {
    /// Starts the parts of a state, the lexical index stored in
    /// `lexical_dir`; `embed` asks for the texts to embed.
    pub fn new(lexical_dir: &std::path::Path, embed: bool) -> Result<PartsBuild, LexicalError> {
        Ok(PartsBuild {
            lexical: LexicalIndex::build_in(lexical_dir)?,
            map: DocMapBuilder::default(),
            layout: Vec::new(),
            sections: Vec::new(),
            symbols: 0,
            embed,
            run: TextRun {
                first: 0,
                texts: Vec::new(),
            },
        })
    }

    /// Adds the next file of the state (in path order); returns texts to
    /// embed when enough have gathered.
    pub fn add(
        &mut self,
        path: &str,
        rec: &FileRecord,
        source: Source,
    ) -> Result<Option<TextRun>, LexicalError> {
        let sections = crate::chunks::of_file(path, rec, source);
        let bodies: FxHashMap<SymbolId, String> = if rec.symbols.is_empty() {
            FxHashMap::default()
        } else {
            source(rec)
                .map(|text| crate::lexical::own_bodies(rec, &text))
                .unwrap_or_default()
        };
        self.lexical.add_file(path, rec, &sections, &bodies)?;
        self.map.add(path, rec);
        self.sections.extend(sections);
        let count = rec.symbols.len();
        if self.embed {
            self.layout.push(FileVectors {
                path: path.to_string(),
                marker: crate::lexical::marker_of(rec),
                count: count as u32,
            });
            if count > 0 {
                self.run
                    .texts
                    .extend(crate::search::file_texts_with(path, rec, &bodies));
            }
        }
        self.symbols += count;
        if self.run.texts.len() >= RUN_TEXTS {
            return Ok(Some(self.take_run()));
        }
        Ok(None)
    }

    fn take_run(&mut self) -> TextRun {
        std::mem::replace(
            &mut self.run,
            TextRun {
                first: self.symbols,
                texts: Vec::new(),
            },
        )
    }

    /// The texts gathered and not handed out yet.
    pub fn pending(&mut self) -> Option<TextRun> {
        (!self.run.texts.is_empty()).then(|| self.take_run())
    }

    /// Documents in all: the symbols', then the sections'.
    pub fn documents(&self) -> usize {
        self.symbols + self.sections.len()
    }

    /// Commits the lexical index and makes the map. Call
    /// [`PartsBuild::pending`] first: texts still gathered are dropped.
    pub fn finish(self) -> Result<Parts, LexicalError> {
        let section_texts = TextRun {
            first: self.symbols,
            texts: if self.embed {
                self.sections.iter().map(Chunk::embedded_text).collect()
            } else {
                Vec::new()
            },
        };
        let map = self.map.finish(&self.sections);
        Ok(Parts {
            lexical: self.lexical.finish()?,
            map,
            layout: self.layout,
            section_texts,
        })
    }
}

/// Vectors gathered run by run, in document order.
#[derive(Default)]
pub struct VectorsBuild {
    dim: usize,
    ids: Vec<u32>,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl VectorsBuild {
    /// Adds a run's vectors: `made` numbers its texts from 0, the run's
    /// documents from `first`. Runs come in document order.
    pub fn add(&mut self, first: usize, made: &Vectors) {
        if made.ids().is_empty() {
            return;
        }
        if self.ids.is_empty() {
            self.dim = made.dim();
        }
        if made.dim() != self.dim {
            return;
        }
        self.ids
            .extend(made.ids().iter().map(|k| (first + *k as usize) as u32));
        self.codes.extend_from_slice(made.codes());
        self.scales.extend_from_slice(made.scales());
    }

    /// The vectors of `count` documents.
    pub fn finish(self, count: usize) -> Option<Vectors> {
        Vectors::from_parts(count, self.dim, self.ids, self.codes, self.scales)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::delta::State;
    use sno_journal::model::{Edge, EdgeKind, EdgeTarget, FileState, SkipReason, SymbolKind};
    use sno_journal::test_support::record;

    fn state() -> State {
        let mut a = record("a.py", 1, &["Config", "load"]);
        a.symbols[0].kind = SymbolKind::Class;
        a.symbols[1].kind = SymbolKind::Method;
        a.symbols[1].qualified_name = "Config.load".into();
        let edge = |kind, from: SymbolId, to: SymbolId, line| Edge {
            kind,
            from: Some(from),
            to: EdgeTarget::Symbol(to),
            name: String::new(),
            line,
            certainty: sno_journal::model::Certainty::Exact,
        };
        a.edges = vec![edge(
            EdgeKind::Contains,
            a.symbols[0].id,
            a.symbols[1].id,
            1,
        )];
        let mut b = record("b.py", 2, &["main", "helper"]);
        // A call to a later file's symbol, and one to nothing numbered.
        let c = record("c.py", 3, &["later"]);
        b.edges = vec![
            edge(EdgeKind::Calls, b.symbols[0].id, c.symbols[0].id, 2),
            edge(EdgeKind::Calls, b.symbols[1].id, a.symbols[1].id, 3),
            edge(EdgeKind::Calls, b.symbols[0].id, SymbolId(99), 4),
        ];
        let mut doc = record("docs/guide.md", 4, &[]);
        doc.state = FileState::Skipped(SkipReason::UnsupportedLanguage);
        let mut s = State::new();
        for (p, r) in [
            ("a.py", a),
            ("b.py", b),
            ("c.py", c),
            ("docs/guide.md", doc),
        ] {
            s.insert(p.to_string(), r);
        }
        s
    }

    fn text_of(rec: &FileRecord) -> Option<crate::served::Served> {
        let text = if rec.symbols.is_empty() {
            "# Guide\n\nHow to load settings.\n\n## Running\n\nStart the server.\n".to_string()
        } else {
            rec.symbols
                .iter()
                .map(|s| format!("def {}():\n    return 1\n", s.name))
                .collect()
        };
        Some(crate::served::Served::new(text.as_bytes(), false))
    }

    #[test]
    fn parts_made_a_file_at_a_time_are_those_of_the_whole_state() {
        let state = state();
        let chunks = crate::chunks::of_state(&state, &text_of);
        assert!(!chunks.is_empty(), "the guide has sections");
        let dir = tempfile::tempdir().unwrap();
        let mut build = PartsBuild::new(&dir.path().join("lexical"), true).unwrap();
        let mut runs = Vec::new();
        for (path, rec) in &state {
            runs.extend(build.add(path, rec, &text_of).unwrap());
        }
        runs.extend(build.pending());
        assert_eq!(build.documents(), 5 + chunks.len());
        let parts = build.finish().unwrap();
        // The map equals the whole state's, edges to later files included.
        let whole = DocMap::of(&state, &chunks);
        assert_eq!(parts.map.to_bytes(), whole.to_bytes());
        assert_eq!(parts.map, whole);
        // Edges numbered once every file is in: b.main -> c.later (a later
        // file), b.helper -> a.load, a.Config contains a.load; the edge to
        // an id no file has is dropped.
        let near = |d: usize| parts.map.neighbours(d).collect::<Vec<_>>();
        assert_eq!(near(2), [4]);
        assert_eq!(near(3), [1]);
        assert_eq!(near(0), [1]);
        assert_eq!(near(1), [0, 3]);
        assert_eq!(near(4), [2]);
        // The texts are the whole state's, in document order.
        let texts: Vec<String> = runs
            .iter()
            .flat_map(|r| {
                assert_eq!(r.first, 0);
                r.texts.clone()
            })
            .chain(parts.section_texts.texts.clone())
            .collect();
        let mut expected = crate::search::doc_texts(&state, &text_of);
        expected.extend(chunks.iter().map(Chunk::embedded_text));
        assert_eq!(texts, expected);
        assert_eq!(parts.section_texts.first, 5);
        // The layout names every file with its marker and count.
        let counts: Vec<(String, u32)> = parts
            .layout
            .iter()
            .map(|f| (f.path.clone(), f.count))
            .collect();
        assert_eq!(
            counts,
            [("a.py", 2), ("b.py", 2), ("c.py", 1), ("docs/guide.md", 0)]
                .map(|(p, c)| (p.to_string(), c))
        );
        // The lexical index finds what one built from the state finds.
        let from_state = LexicalIndex::build(&state, &chunks, &text_of).unwrap();
        let locate = |p: &str, place: crate::lexical::Place| match place {
            crate::lexical::Place::Symbol(k) => whole.symbol_doc(p, k as usize),
            crate::lexical::Place::Section(k) => whole.section_doc(p, k as usize),
        };
        for q in ["load", "config", "server", "helper", "later"] {
            let hits = parts.lexical.search(q, 10, &locate).unwrap();
            assert!(!hits.is_empty(), "{q}");
            assert_eq!(hits, from_state.search(q, 10, &locate).unwrap(), "{q}");
        }
        assert!(dir.path().join("lexical").is_dir());
    }

    #[test]
    fn a_build_left_unfinished_leaves_nothing_behind() {
        let state = state();
        let dir = tempfile::tempdir().unwrap();
        let mut build = PartsBuild::new(&dir.path().join("lexical"), false).unwrap();
        for (path, rec) in state.iter().take(2) {
            assert!(build.add(path, rec, &text_of).unwrap().is_none());
        }
        assert!(std::fs::read_dir(dir.path()).unwrap().count() > 0);
        drop(build);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn runs_of_vectors_land_on_their_documents() {
        let mut v = VectorsBuild::default();
        let mut one = Vectors::with_count(3);
        one.push(0, &[1.0, 0.0]);
        one.push(2, &[0.0, 1.0]);
        let mut two = Vectors::with_count(2);
        two.push(1, &[0.5, 0.5]);
        v.add(0, &one);
        v.add(3, &two);
        let all = v.finish(6).unwrap();
        assert_eq!(all.ids(), &[0, 2, 4]);
        assert_eq!(all.count(), 6);
        // Beyond the count: refused, not cut.
        let mut v = VectorsBuild::default();
        v.add(5, &one);
        assert!(v.finish(6).is_none());
    }
}
