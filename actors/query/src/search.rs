//! Hybrid retrieval: lexical, semantic, structural, history and memory
//! signals fused into one ranking, each signal's share kept per item.

use std::collections::{BTreeMap, HashMap, HashSet};

use sno_journal::delta::State;
use sno_journal::model::FileRecord;

use crate::chunks::Chunk;
use crate::doc_map::DocMap;
use crate::lexical::LexicalIndex;
use crate::lookup::Located;
use crate::question_intent::Asks;
use crate::semantic::{Embedder, SemanticIndex, Vectors};
use crate::served::Served;
use crate::words::words;

/// Weights of the signals in the fused score. Each signal is normalised
/// to [0, 1] over its candidates first, so a weight is what the signal's
/// best match is worth.
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    pub lexical: f32,
    pub semantic: f32,
    /// The semantic weight when the answer is files ([`Retriever::search_files`]).
    pub files_semantic: f32,
    /// An identifier-shaped query's exact name matches.
    pub name: f32,
    pub structural: f32,
    pub history: f32,
    pub memory: f32,
}

/// Semantic 0.2 is fitted (`ops/bench/quality/fit.py`, re-ranking each
/// answer's pool of 200 under other weights) on the eval's own corpora
/// and on sixteen held-out repositories in twelve languages together.
/// 0.6, chosen when the lexical signal was weaker, had become too much:
/// on the held-out repositories the hybrid was below lexical-only in
/// seven languages. Docstring -> code R@10 / MRR@10 by weight, own and
/// held-out: 0.0 0.822/0.604 and 0.786/0.549; 0.2 0.850/0.619 and
/// 0.790/0.563; 0.3 0.845/0.623 and 0.789/0.562; 0.6 0.842/0.611 and
/// 0.781/0.541; 0.9 0.826/0.595 and 0.760/0.520 (0.18 to 0.27 all
/// within 0.003 of 0.2).
///
/// Ranking files for a commit message is another task: a file is a topic
/// more than a name, and meaning helps more there. On change localization
/// (set c, 900 own and 457 held-out commits) file R@10 with 0.6 is 0.926
/// and 0.884, with 0.2 0.924 and 0.875, lexical-only 0.919 and 0.862.
impl Default for Weights {
    fn default() -> Self {
        Weights {
            lexical: 1.0,
            semantic: 0.2,
            files_semantic: 0.6,
            name: 2.0,
            structural: 0.3,
            history: 0.1,
            memory: 0.2,
        }
    }
}

/// Candidates each signal ranks: fixed, so an item's rank never depends on
/// how many items the caller asked for.
pub const POOL: usize = 200;

/// Query words past which a static embedding (a mean of word vectors)
/// drifts to the centre of everything: longer queries weigh meaning less.
pub const SEMANTIC_WORDS: usize = 12;

/// What a bodiless declaration's content match is worth in the answer to a
/// question in words, against a definition with a body. 0.7 and 0.8 gave
/// the same docstring -> code recall on the quality eval (1.0 was 0.01
/// below); the milder one is kept, since a question may well ask for a
/// constant.
const DECLARATION_PRIOR: f32 = 0.8;

/// Candidates read again for a pasted text ([`crate::verbatim`]): the
/// function that prints it is among the best BM25 ranks, if not first
/// (jsoup's two messages: 16th and 27th without it). Each is a record
/// and a file to read, which a question of eight words or more pays.
const VERBATIM_CANDIDATES: usize = 50;

/// The bytes of files read for a pasted text's candidates, best first: on
/// the 8.3M-line registry, fifty candidates' files (generated bindings of
/// megabytes among them) made a warm search 36.8 ms against 17.9 without
/// the weighing. The eval's repositories' candidates read far less.
const VERBATIM_BYTES: u64 = 4 << 20;

/// Definitions past which a candidate's file is not read for its
/// literals: generated code, whose record alone is megabytes.
const VERBATIM_MAX_SYMBOLS: usize = 2_000;

/// What a whole message held adds to a candidate's lexical signal: the
/// line that prints it comes first.
const VERBATIM_WEIGHT: f32 = 1.0;

/// The share of a message's words held from which its holder's lexical
/// signal is first raised to the best's (1): a message pasted with a
/// value or two the program filled in.
const WHOLE_MESSAGE: f32 = 0.75;

/// What an item of a test file counts in the answer to a question in words
/// that does not ask for tests ([`crate::test_files`]).
const TEST_PRIOR: f32 = 0.75;

/// What a doc or config section counts in the answer to a question that
/// asks how to work on the project ([`crate::question_intent`]): "how do
/// I run the tests" is answered by CONTRIBUTING or the CI file, which
/// otherwise lose to the many test functions named like its words.
const PROCEDURE_SECTION_PRIOR: f32 = 1.5;

/// What a doc or config section counts in the answer to any other question
/// in words: the code that does a thing answers before the docs that say
/// it (a user guide repeats the doc comments' sentences). At 0.8 against
/// 1.0 (2026-12-07, the quality eval's own corpora and 16 held-out
/// repositories): docstring -> code R@10 / MRR@10 own 0.855 / 0.632 ->
/// 0.860 / 0.639, held-out 0.803 / 0.574 -> 0.806 / 0.577, no language
/// lower; change localization 0.948 / 0.749 -> 0.948 / 0.748 and 0.932 /
/// 0.754 -> 0.934 / 0.755.
const SECTION_PRIOR: f32 = 0.8;

/// What a type's impl block counts after the best-ranked impl of the same
/// type's name: each repeats the type's name, and a question about the
/// type wants the type and its methods more than its fifth impl.
const IMPL_REPEAT_PRIOR: f32 = 0.5;

/// What a type (class, struct, interface, trait, enum, alias, module, impl
/// block) counts in the answer to a text that describes an action
/// ([`crate::question_intent::describes_an_action`]: "looks up the value
/// of a local Float64Flag"): the code that does it answers before the type
/// whose name the text mentions. At 0.8 against 1.0 (2026-12-07, the
/// quality eval, docstring -> code R@10 / MRR@10): own 0.860 / 0.639 ->
/// 0.862 / 0.643, held-out 0.805 / 0.577 -> 0.814 / 0.591 (C++ 0.726 ->
/// 0.741, Go 0.857 -> 0.886), no language lower in R@10; change
/// localization 0.948 / 0.748 -> 0.948 / 0.747. 0.6 gave more (held-out
/// MRR 0.602) but almost all of it from one repository's twenty copies of
/// one sentence, and the eval's targets are callables by construction,
/// so it favours any cut of types; own change localization fell (Rust
/// R@10 0.955 -> 0.950). A type's own doc that opens with such a verb
/// ("Creates workers on demand") still finds it by its words.
const TYPE_FOR_ACTION_PRIOR: f32 = 0.8;

/// How many times [`POOL`] a question of how to work on the project draws
/// from the lexical index, and how many sections past the pool it keeps.
const PROCEDURE_DEPTH: usize = 10;
const PROCEDURE_SECTIONS: usize = 20;

/// What a doc or config section's words count in the answer to a question
/// of how to work on the project when it does not name what the question
/// names ([`crate::question_intent::procedure_objects`]): a user guide's
/// "PreRun and PostRun Hooks" says "run" a dozen times, and the examples'
/// "Usage" says `go run`, but neither says how to run the tests, which the
/// Makefile's `test` target and CONTRIBUTING do. Such a section is hardly
/// an answer: at 0.5 cobra's guide, three times the Makefile's BM25 where
/// hundreds of test functions make "test" a common word, still came first.
const UNNAMED_OBJECT_PRIOR: f32 = 0.25;

/// What a file's proneness to change ([`HistoryFacts::proneness`]) adds
/// to its score in a file ranking of a question in words, against 1 for
/// the best file by its symbols and [`FILE_TEXT_WEIGHT`] for the best by
/// BM25 (1 when this was measured). On the quality
/// eval's change localization (900 commits of nine repositories) every
/// weight and half-life tried (0.1 and 0.3, 10 and 50 commits) gave file
/// R@10 0.927-0.928 against 0.922 without, no language lower; the mildest
/// is kept.
const CHANGE_PRONENESS: f32 = 0.1;

/// What the past changes whose messages resemble a question in words
/// ([`HistoryFacts::similar_change_votes`]) add to a file's score in a file
/// ranking, for the best such file, against 1 for the best file by its
/// symbols. Change localization file R@10 / MRR@10 on the quality eval
/// (2026-11-28), against 0.936 / 0.715 without, on the nine own
/// repositories (900 commits) it was fitted on: 0.937 / 0.724 at 0.25,
/// 0.941 / 0.726 at 0.5, 0.936 / 0.728 at 1. On five held-out ones (457
/// commits, 0.917 / 0.703 without): 0.926 / 0.717, 0.923 / 0.726 and
/// 0.910 / 0.718 (candidates only). As built (with the files of code
/// nothing else found, a test file's vote at its prior): 0.941 / 0.727 and
/// 0.923 / 0.726.
const SIMILAR_CHANGES: f32 = 0.5;

/// What the files of the past changes a question names by number or hash
/// ([`HistoryFacts::referenced_change_votes`]) add to a file's score in a
/// file ranking, for the best such file: as much as the best file by its
/// symbols, since a number or a hash names the change, where a like
/// message only resembles one. Change localization file R@10 / MRR@10 on
/// the quality eval (2026-11-29), own nine repositories (900 commits)
/// 0.941 / 0.727 without, 0.944 / 0.732 at 1, 0.944 / 0.735 at 2;
/// held-out five (457 commits) 0.923 / 0.726, 0.926 / 0.729, 0.926 /
/// 0.728; no language lower.
const REFERENCED_CHANGES: f32 = 1.0;

/// Commits back at which a change counts half in a file's proneness.
const PRONENESS_HALF_LIFE: f32 = 50.0;

/// What BM25 over a whole file weighs in a file ranking of a question in
/// words, against 1 for the file's ranked symbols: a commit message, the
/// question a change asks, names a file's words more often than one
/// symbol's. On the quality eval's change localization (900 commits of
/// nine repositories, with [`FILE_TEST_PRIOR`]) file R@10 / MRR@10 was
/// 0.933 / 0.698 at 1, 0.933 / 0.711 at 1.5, 0.934 / 0.714 at 2 and 0.934 /
/// 0.711 at 3; halving a file's k-th symbol's share (the decay below) beat
/// 0.35 and 0.7.
const FILE_TEXT_WEIGHT: f32 = 2.0;

/// What a test file's score counts in a file ranking of a question in
/// words that does not ask for tests, on top of its symbols' and its text's
/// [`TEST_PRIOR`]: "where does this change go" is answered by the code, and
/// a test that repeats the change's words follows the code it tests. Change
/// localization file R@10 0.926 -> 0.931 at 0.5, 0.933 at 0.25 (leaving
/// tests out altogether: 0.936), no language lower.
const FILE_TEST_PRIOR: f32 = 0.25;

/// Symbols that declare data rather than define behaviour or a type.
fn is_declaration(kind: sno_journal::model::SymbolKind) -> bool {
    use sno_journal::model::SymbolKind as K;
    matches!(kind, K::Field | K::Constant | K::Variable | K::EnumMember)
}

/// Whether a symbol of `kind` is a type, or a scope of definitions.
fn is_type(kind: sno_journal::model::SymbolKind) -> bool {
    use sno_journal::model::SymbolKind as K;
    matches!(
        kind,
        K::Module
            | K::Namespace
            | K::Class
            | K::Struct
            | K::Interface
            | K::Trait
            | K::Enum
            | K::Union
            | K::TypeAlias
            | K::Impl
    )
}

/// Whether a symbol's meaning is embedded for the semantic signal. A
/// declaration (field, constant, variable, enum member) is one line its
/// name and type already say to the lexical signal, and an impl block's
/// meaning is in its methods, embedded on their own; on a large Rust
/// code base they are three symbols in four (1.9M of 2.56M on 8.6M
/// lines), and embedding them multiplied the vectors to hold and scan
/// for little: questions in words ask what code does.
pub fn is_embedded(kind: sno_journal::model::SymbolKind) -> bool {
    !is_declaration(kind) && kind != sno_journal::model::SymbolKind::Impl
}

/// Whether a query is one name-like token (`Config`, `parse_config`,
/// `Config.load`, `flags::defs`, `loadConfig`): its exact name matches
/// rank first.
pub fn name_shaped(query: &str) -> bool {
    let q = query.trim();
    !q.is_empty()
        && !q.contains(char::is_whitespace)
        // `$` starts names in JavaScript and TypeScript (`$ZodType`) and
        // PHP variables.
        && q.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '$'))
        && q.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$'))
}

/// Whether a name-shaped query is spelled as code rather than as a word
/// (`parse_config`, `Config.load`, `loadConfig`, but not `car`): meaning
/// then adds little to the letters.
pub fn identifier_shaped(query: &str) -> bool {
    let q = query.trim();
    name_shaped(q)
        && (q.contains(['_', '.', ':', '$'])
            || q.chars().skip(1).any(char::is_uppercase)
            || q.chars().any(|c| c.is_ascii_digit()))
}

/// Each signal's contribution to an item's score (already weighted). An
/// exact name match counts as lexical.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signals {
    pub lexical: f32,
    pub semantic: f32,
    pub structural: f32,
    pub history: f32,
    pub memory: f32,
}

impl Signals {
    /// The fused score.
    pub fn total(&self) -> f32 {
        self.lexical + self.semantic + self.structural + self.history + self.memory
    }

    /// Every signal times `f` (a prior on the item as a whole).
    pub fn scale(&mut self, f: f32) {
        for s in [
            &mut self.lexical,
            &mut self.semantic,
            &mut self.structural,
            &mut self.history,
            &mut self.memory,
        ] {
            *s *= f;
        }
    }
}

/// `pkg.Func`, `module.func`, `crate::module::item`: the last segment is
/// the symbol's name (or the tail of its qualified name) and the segments
/// before it name directories or the file of its path.
fn module_qualified(l: &Located, q: &str) -> bool {
    let Some((module, item)) = q.rsplit_once('.') else {
        return false;
    };
    let s = l.symbol;
    if s.name != item && !s.qualified_name.ends_with(&format!(".{item}")) {
        return false;
    }
    let parts: Vec<&str> = l
        .path
        .split('/')
        .map(|p| p.rsplit_once('.').map_or(p, |(stem, _)| stem))
        .collect();
    module
        .split('.')
        .filter(|m| !matches!(*m, "crate" | "self" | "super"))
        .all(|m| parts.contains(&m))
}

/// Whether `l` is what an identifier-shaped `query` names: its name, or its
/// qualified name or a dotted tail of it (`Config.load`, `flags::defs` as
/// `flags.defs`), compared case-sensitively, then ignoring case.
fn name_match(l: &Located, query: &str) -> Option<u8> {
    let q = query.replace("::", ".");
    let s = l.symbol;
    let qualified = s.qualified_name.replace("::", ".");
    let tail = |full: &str, q: &str| full == q || full.ends_with(&format!(".{q}"));
    // An impl block (a Rust impl, a Swift extension) bears its type's
    // name but is not its definition, nor is a C or C++ prototype: they
    // come after the definitions. Between them comes a C or C++ function
    // of a header not known to be either: an index written before
    // prototypes were marked holds the prototypes of a source file's
    // functions that way (where nothing else matches, every match comes
    // after alike and the order holds).
    let after = if s.kind == sno_journal::model::SymbolKind::Impl || s.is_declaration() {
        2
    } else {
        u8::from(header_function(l))
    };
    if tail(&qualified, &q) || s.name == q || module_qualified(l, &q) {
        return Some(after);
    }
    let (ql, fl) = (q.to_lowercase(), qualified.to_lowercase());
    if tail(&fl, &ql) || s.name.to_lowercase() == ql {
        return Some(3 + after);
    }
    None
}

/// A function or method of a C or C++ header.
fn header_function(l: &Located) -> bool {
    use sno_journal::model::SymbolKind as K;
    matches!(l.symbol.kind, K::Function | K::Method | K::Constructor)
        && l.path
            .rsplit_once('.')
            .is_some_and(|(_, ext)| matches!(ext, "h" | "hh" | "hpp" | "hxx" | "h++"))
}

/// A ranked symbol.
#[derive(Clone, Debug)]
pub struct Hit {
    /// Index into the document list.
    pub doc: usize,
    pub signals: Signals,
}

/// Per-file facts from the journal: which commits touched each file.
#[derive(Debug, Default)]
pub struct HistoryFacts {
    /// path -> indices (0 = oldest) of the indexed commits whose content
    /// changes touched it. Commits touching more than [`HistoryFacts::WIDE`]
    /// files (initial imports, mass renames) say nothing about coupling and
    /// are left out.
    pub touches: HashMap<String, Vec<usize>>,
    pub commits: usize,
    /// Each commit's message (its first line), by index.
    pub messages: Vec<String>,
    /// Each commit's id, by index.
    pub ids: Vec<sno_journal::model::CommitId>,
    /// The messages as terms and the files of each commit, made on the
    /// first question that needs them.
    pub(crate) changes: std::sync::OnceLock<crate::similar_changes::ChangeIndex>,
}

impl HistoryFacts {
    /// Commits wider than this are not evidence of coupling.
    pub const WIDE: usize = 50;

    /// Reads the journal up to and including `upto`.
    pub fn from_journal(
        journal: &sno_journal::Journal,
        upto: sno_journal::model::Seq,
    ) -> Result<HistoryFacts, sno_journal::JournalError> {
        use sno_journal::event::Event;
        let mut h = HistoryFacts::default();
        let events = journal.event_outlines(
            sno_journal::model::Seq(0),
            Some(sno_journal::model::Seq(upto.0 + 1)),
        )?;
        // Only the commits behind this state: not those a rollback or a
        // reset left behind.
        for i in sno_journal::replay::lineage(&events) {
            if let Event::CommitIndexed(c) = &events[i].1.event {
                h.add_commit(c);
            }
        }
        Ok(h)
    }

    /// Counts the next commit of the lineage, and the files it touched
    /// when it is narrow enough to say something of coupling.
    fn add_commit(&mut self, c: &sno_journal::event::CommitIndexed) {
        use sno_journal::event::FileChange;
        let k = self.commits;
        self.commits += 1;
        // Made again, with this commit, on the next question that asks.
        self.changes.take();
        self.messages.push(c.summary.clone());
        self.ids.push(c.commit);
        let touched: Vec<&str> = c
            .deltas
            .iter()
            .filter(|d| d.change != FileChange::Reresolved)
            .map(|d| d.path.as_str())
            .collect();
        if touched.len() > Self::WIDE {
            return;
        }
        for p in touched {
            self.touches.entry(p.to_string()).or_default().push(k);
        }
    }

    /// These facts (of the head `commit`, journaled at `seq`) carried on to
    /// `upto`, reading only the events after `seq`: the facts a whole read
    /// would give when those events only index commits on top of each
    /// other, starting from `commit`. `None` otherwise (a rollback, a branch
    /// move, a commit on another line): the caller reads the whole journal.
    pub fn extended(
        mut self,
        journal: &sno_journal::Journal,
        commit: sno_journal::model::CommitId,
        seq: sno_journal::model::Seq,
        upto: sno_journal::model::Seq,
    ) -> Result<Option<HistoryFacts>, sno_journal::JournalError> {
        use sno_journal::event::Event;
        let mut head = commit;
        for (_, env) in journal.event_outlines(
            sno_journal::model::Seq(seq.0 + 1),
            Some(sno_journal::model::Seq(upto.0 + 1)),
        )? {
            match &env.event {
                Event::CommitIndexed(c) => {
                    if c.parents.first() != Some(&head) {
                        return Ok(None);
                    }
                    head = c.commit;
                    self.add_commit(c);
                }
                Event::RolledBack(_) | Event::BranchMoved(_) => return Ok(None),
                _ => {}
            }
        }
        Ok(Some(self))
    }

    /// Recency of a file's last change in [0, 1] (1 = the newest commit).
    pub fn recency(&self, path: &str) -> f32 {
        match self.touches.get(path).and_then(|v| v.last()) {
            Some(&k) => (k + 1) as f32 / self.commits.max(1) as f32,
            None => 0.0,
        }
    }

    /// How prone `path` is to change now, in [0, 1): its touches counted
    /// with a weight that halves every `half_life` commits back, squashed.
    pub fn proneness(&self, path: &str, half_life: f32) -> f32 {
        let Some(v) = self.touches.get(path) else {
            return 0.0;
        };
        let last = self.commits.saturating_sub(1);
        // Past eight half-lives a touch weighs under 1/256: a file changed
        // in every commit of a long history costs no more than that.
        let horizon = 8.0 * half_life;
        let x: f32 = v
            .iter()
            .rev()
            .map(|&k| (last - k.min(last)) as f32)
            .take_while(|age| *age <= horizon)
            .map(|age| 0.5f32.powf(age / half_life))
            .sum();
        x / (1.0 + x)
    }

    /// The files of the past changes whose messages resemble `query`
    /// ([`crate::similar_changes`]), best first, unscaled.
    pub fn similar_change_votes(&self, query: &str) -> Vec<(&str, f32)> {
        self.change_index()
            .votes(&crate::lexical::text_terms(query))
    }

    fn change_index(&self) -> &crate::similar_changes::ChangeIndex {
        self.changes.get_or_init(|| {
            crate::similar_changes::ChangeIndex::new(
                &self.messages,
                &self.touches,
                crate::lexical::text_terms,
            )
        })
    }

    /// The files of the past changes `query` names by number or hash
    /// ([`crate::references`]), each change's vote of 1 shared among the
    /// files it touched, best first.
    pub fn referenced_change_votes(&self, query: &str) -> Vec<(&str, f32)> {
        let refs = crate::references::references(query);
        if refs.is_empty() {
            return Vec::new();
        }
        // Every way these facts are made (a journal's lineage, a head's
        // stored facts) keeps an id per message.
        debug_assert_eq!(self.ids.len(), self.messages.len());
        let mut by_file: HashMap<&str, f32> = HashMap::new();
        for (k, (message, id)) in self.messages.iter().zip(&self.ids).enumerate() {
            if !refs.iter().any(|r| r.names(message, &id.0)) {
                continue;
            }
            let files: Vec<&str> = self.change_index().files_of(k).collect();
            for f in &files {
                *by_file.entry(f).or_default() += 1.0 / files.len() as f32;
            }
        }
        let mut out: Vec<(&str, f32)> = by_file.into_iter().collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// `query` without the commit hashes in it: those that name a commit
    /// of this lineage, and any whole one (40 digits; a commit reverted on
    /// a branch, one of another repository in a link). Such a word names a
    /// change, not words of code, and split at its digits it would match
    /// numbers anywhere. A short hash-shaped word no commit starts with
    /// (`ed25519`, a colour) is kept.
    pub fn without_named_hashes<'q>(&self, query: &'q str) -> std::borrow::Cow<'q, str> {
        use crate::references::{id_starts_with, is_hash};
        let names_a_commit = |w: &str| {
            is_hash(w)
                && (w.len() == 40 || {
                    let w = w.to_ascii_lowercase();
                    self.ids.iter().any(|id| id_starts_with(&id.0, &w))
                })
        };
        match crate::references::without_words(query, names_a_commit) {
            Some(q) => std::borrow::Cow::Owned(q),
            None => std::borrow::Cow::Borrowed(query),
        }
    }

    /// Share of `seed`'s commits that also changed `path`, in [0, 1].
    pub fn co_change(&self, seed: &str, path: &str) -> f32 {
        let (Some(a), Some(b)) = (self.touches.get(seed), self.touches.get(path)) else {
            return 0.0;
        };
        let both = a.iter().filter(|k| b.binary_search(k).is_ok()).count();
        both as f32 / a.len().max(1) as f32
    }
}

/// Words of a body embedded with its symbol: the head says what the code
/// does, and more would average the vector towards every other body's.
const BODY_HEAD_WORDS: usize = 48;

/// Words every body has, which say nothing of what it does.
const KEYWORDS: &[&str] = &[
    "return", "self", "this", "def", "fn", "func", "function", "let", "const", "var", "if", "else",
    "elif", "for", "while", "in", "pub", "new", "none", "null", "nil", "true", "false", "mut",
    "str", "int", "err", "end", "do", "then", "is", "not", "and", "or", "the", "to", "of",
];

/// The text embedded for a symbol: its qualified name, signature, doc,
/// path, and, when it has no doc comment, the first words of its own body
/// (identifiers split, comments and strings).
pub fn symbol_text(l: &Located, body: Option<&str>) -> String {
    let s = l.symbol;
    let mut text = format!(
        "{} {} {} {}",
        words(&s.qualified_name),
        words(&s.signature),
        words(&s.doc),
        words(l.path)
    );
    // A doc comment says what the code is for; without one, the head of
    // the body stands in for it.
    if let Some(b) = body.filter(|_| s.doc.trim().is_empty()) {
        // The signature opens the body: skip what was said already.
        let b = b.strip_prefix(s.signature.as_str()).unwrap_or(b);
        for w in crate::words::split_words(b)
            .into_iter()
            .filter(|w| w.len() > 1 && !KEYWORDS.contains(&w.as_str()))
            .take(BODY_HEAD_WORDS)
        {
            text.push(' ');
            text.push_str(&w);
        }
    }
    text
}

/// The embedded texts of a file's symbols, in order (empty for a symbol
/// that is not embedded, see [`is_embedded`]); `text` is the file as
/// served, when it could be read.
pub fn file_texts(path: &str, rec: &FileRecord, text: Option<&Served>) -> Vec<String> {
    let bodies = text
        .map(|t| crate::lexical::own_bodies(rec, t))
        .unwrap_or_default();
    file_texts_with(path, rec, &bodies)
}

/// [`file_texts`] with the symbols' own bodies at hand.
pub fn file_texts_with(
    path: &str,
    rec: &FileRecord,
    bodies: &rustc_hash::FxHashMap<sno_journal::model::SymbolId, String>,
) -> Vec<String> {
    rec.symbols
        .iter()
        .map(|symbol| {
            if !is_embedded(symbol.kind) {
                return String::new();
            }
            symbol_text(
                &Located { path, symbol },
                bodies.get(&symbol.id).map(String::as_str),
            )
        })
        .collect()
}

/// The embedded texts of every symbol of `state`, in document order.
pub fn doc_texts(state: &State, source: crate::lexical::Source) -> Vec<String> {
    state
        .iter()
        .flat_map(|(path, rec)| {
            let text = if rec.symbols.is_empty() {
                None
            } else {
                source(rec)
            };
            file_texts(path, rec, text.as_ref())
        })
        .collect()
}

/// What to search for.
#[derive(Clone, Copy, Debug)]
pub struct SearchRequest<'q> {
    pub query: &'q str,
    pub limit: usize,
    /// Only paths under this prefix.
    pub scope: Option<&'q str>,
    /// Turn the semantic signal off (for comparison).
    pub lexical_only: bool,
    pub weights: Weights,
    /// The files' text, for pasted text in the candidates' string
    /// literals ([`crate::verbatim`]); without it, the index's words alone
    /// rank.
    pub text: Option<TextSource<'q>>,
}

/// A file's text as served, for [`SearchRequest::text`].
#[derive(Clone, Copy)]
pub struct TextSource<'q>(pub &'q dyn Fn(&FileRecord) -> Option<Served>);

impl std::fmt::Debug for TextSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextSource")
    }
}

/// The key a symbol's vector is stored under: a hash of the text embedded,
/// so a symbol whose name, signature, doc and path are unchanged is never
/// embedded twice.
pub fn text_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// A vector as stored: the hash of its text, and the vector.
pub type StoredVector = (u64, Vec<f32>);

/// Vectors for `texts` (one a document): stored ones from `cached` (by
/// [`text_hash`]), the rest embedded now. Returns the vectors by document
/// and the newly made ones, for the caller to store. An empty text is a
/// document not embedded: it gets no vector and is never looked up.
pub fn doc_vectors(
    texts: &[String],
    embedder: &Embedder,
    cached: impl FnOnce(&[u64]) -> Vec<Option<Vec<f32>>>,
) -> (Vectors, Vec<StoredVector>) {
    let wanted: Vec<usize> = (0..texts.len()).filter(|i| !texts[*i].is_empty()).collect();
    let hashes: Vec<u64> = wanted.iter().map(|i| text_hash(&texts[*i])).collect();
    let mut found = cached(&hashes);
    found.resize(wanted.len(), None);
    let missing: Vec<usize> = (0..wanted.len()).filter(|k| found[*k].is_none()).collect();
    let fresh = embedder.embed(
        &missing
            .iter()
            .map(|k| texts[wanted[*k]].clone())
            .collect::<Vec<_>>(),
    );
    let mut new = Vec::with_capacity(missing.len());
    for (k, v) in missing.into_iter().zip(fresh) {
        new.push((hashes[k], v.clone()));
        found[k] = Some(v);
    }
    let mut vectors = Vectors::with_count(texts.len());
    for (doc, v) in wanted.into_iter().zip(found) {
        if let Some(v) = v {
            vectors.push(doc, &v);
        }
    }
    (vectors, new)
}

/// Where a file's vectors are among a state's documents: what its symbols
/// were made from (the lexical index's marker: blob, count and a digest of
/// names, signatures and docs) and how many documents it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVectors {
    pub path: String,
    pub marker: String,
    pub count: u32,
}

/// What [`carried_vectors`] made.
pub struct Carried {
    pub vectors: Vectors,
    /// The vectors made now, for the caller to store by text hash.
    pub new: Vec<StoredVector>,
    /// The state's files in document order, to store beside the vectors.
    pub layout: Vec<FileVectors>,
    /// Files whose vectors were taken from the previous head.
    pub files_carried: usize,
}

/// Where a document's vector comes from in a [`CarriedPlan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorFrom {
    /// The previous vectors' `k`th (in their order, not a document number).
    Previous(u32),
    /// The `k`th of the vectors made now ([`CarriedPlan::fresh`]).
    Fresh(u32),
}

/// The vectors of a new state as a plan over the previous ones and those
/// made now: the caller either builds them in memory
/// ([`CarriedPlan::vectors`]) or writes them to disk straight from the
/// previous head's file ([`crate::head_cache::HeadCache::write_carried`]),
/// so a large head's commit never holds two copies of its vectors.
pub struct CarriedPlan {
    /// Documents in all, with a vector or not.
    pub count: usize,
    /// (document, where its vector comes from), documents increasing.
    pub rows: Vec<(u32, VectorFrom)>,
    /// The vectors made now, by their texts' order.
    pub fresh: Vectors,
    /// The vectors made now, for the caller to store by text hash.
    pub new: Vec<StoredVector>,
    /// The state's files in document order, to store beside the vectors.
    pub layout: Vec<FileVectors>,
    /// Files whose vectors were taken from the previous head.
    pub files_carried: usize,
}

impl CarriedPlan {
    /// The planned vectors, in memory: `previous` is the vectors the plan
    /// was made over.
    pub fn vectors(&self, previous: Option<&Vectors>) -> Vectors {
        let mut vectors = Vectors::with_count(self.count);
        let (fdim, pdim) = (
            self.fresh.dim().max(1),
            previous.map_or(1, |p| p.dim().max(1)),
        );
        for &(doc, from) in &self.rows {
            match from {
                VectorFrom::Fresh(k) => {
                    let k = k as usize;
                    let codes = &self.fresh.codes()[k * fdim..(k + 1) * fdim];
                    vectors.push_codes(doc as usize, codes, self.fresh.scales()[k]);
                }
                VectorFrom::Previous(k) => {
                    let (Some(p), k) = (previous, k as usize) else {
                        continue;
                    };
                    vectors.push_codes(
                        doc as usize,
                        &p.codes()[k * pdim..(k + 1) * pdim],
                        p.scales()[k],
                    );
                }
            }
        }
        vectors
    }
}

/// Vectors for `state`'s symbols and then the sections whose texts are
/// `section_texts`: see [`carried_plan`].
pub fn carried_vectors(
    state: &State,
    previous: Option<(&Vectors, &[FileVectors])>,
    source: crate::lexical::Source,
    section_texts: Vec<String>,
    gather: impl FnOnce(&[String]) -> (Vectors, Vec<StoredVector>),
) -> Carried {
    let plan = carried_plan(
        state.iter().map(|(p, r)| (p.as_str(), FileAt::Record(r))),
        previous.map(|(v, l)| (v.ids(), l)),
        source,
        section_texts.into_iter().map(SectionAt::New).collect(),
        gather,
    );
    Carried {
        vectors: plan.vectors(previous.map(|p| p.0)),
        new: plan.new,
        layout: plan.layout,
        files_carried: plan.files_carried,
    }
}

/// A file of the state vectors are gathered for.
pub enum FileAt<'r> {
    /// Its record, read.
    Record(&'r FileRecord),
    /// Not read: unchanged since the previous vectors, which hold it with
    /// this marker and symbol count.
    Unchanged { marker: &'r str, count: u32 },
}

/// A section of the state vectors are gathered for.
pub enum SectionAt {
    /// Unchanged: the previous vectors' document.
    Carried(usize),
    /// Its embedded text.
    New(String),
}

/// The vectors for the symbols of `files` (in document order) and then
/// `sections`, planned over the previous vectors (the documents that have
/// one, `ids`, and their files' layout): a file whose marker and symbol
/// count are those the previous layout holds takes its vectors from
/// there; the other files' texts are read through `source` and, with the
/// new sections', given to `gather` in one batch (which embeds them, or
/// finds them stored).
pub fn carried_plan<'r>(
    files: impl Iterator<Item = (&'r str, FileAt<'r>)>,
    previous: Option<(&[u32], &[FileVectors])>,
    source: crate::lexical::Source,
    sections: Vec<SectionAt>,
    gather: impl FnOnce(&[String]) -> (Vectors, Vec<StoredVector>),
) -> CarriedPlan {
    let mut old: HashMap<&str, (&str, usize, u32)> = HashMap::new();
    if let Some((_, layout)) = previous {
        let mut first = 0usize;
        for f in layout {
            old.insert(f.path.as_str(), (f.marker.as_str(), first, f.count));
            first += f.count as usize;
        }
    }
    // (new first document, old first document, count) of each carried run.
    let mut carried: Vec<(usize, usize, usize)> = Vec::new();
    let mut files_carried = 0usize;
    let mut texts: Vec<String> = Vec::new();
    let mut text_docs: Vec<usize> = Vec::new();
    let mut layout: Vec<FileVectors> = Vec::new();
    let mut first = 0usize;
    for (path, at) in files {
        let (marker, count, rec) = match at {
            FileAt::Record(rec) => (crate::lexical::marker_of(rec), rec.symbols.len(), Some(rec)),
            FileAt::Unchanged { marker, count } => (marker.to_string(), count as usize, None),
        };
        let unchanged = old.get(path).and_then(|&(m, old_first, old_count)| {
            (old_count as usize == count && m == marker).then_some(old_first)
        });
        layout.push(FileVectors {
            path: path.to_string(),
            marker,
            count: count as u32,
        });
        match (unchanged, rec) {
            (Some(old_first), _) => {
                carried.push((first, old_first, count));
                files_carried += 1;
            }
            (None, Some(rec)) if count > 0 => {
                let text = source(rec);
                texts.extend(file_texts(path, rec, text.as_ref()));
                text_docs.extend(first..first + count);
            }
            _ => {}
        }
        first += count;
    }
    let total = first + sections.len();
    for (k, s) in sections.into_iter().enumerate() {
        match s {
            SectionAt::Carried(old_doc) => carried.push((first + k, old_doc, 1)),
            SectionAt::New(text) => {
                texts.push(text);
                text_docs.push(first + k);
            }
        }
    }
    let (fresh, new) = gather(&texts);
    let mut rows: Vec<(u32, VectorFrom)> = fresh
        .ids()
        .iter()
        .enumerate()
        .map(|(k, t)| (text_docs[*t as usize] as u32, VectorFrom::Fresh(k as u32)))
        .collect();
    if let Some((ids, _)) = previous {
        for &(new_first, old_first, count) in &carried {
            let from = ids.partition_point(|i| (*i as usize) < old_first);
            let to = ids.partition_point(|i| (*i as usize) < old_first + count);
            for (k, id) in ids.iter().enumerate().take(to).skip(from) {
                let doc = new_first + *id as usize - old_first;
                rows.push((doc as u32, VectorFrom::Previous(k as u32)));
            }
        }
    }
    rows.sort_unstable_by_key(|r| r.0);
    // One vector a document: as `Vectors::push_codes` kept the first.
    rows.dedup_by_key(|r| r.0);
    CarriedPlan {
        count: total,
        rows,
        fresh,
        new,
        layout,
        files_carried,
    }
}

/// Where a retriever reads the records its answers quote.
pub enum Records<'a> {
    /// The whole state, in memory.
    State(&'a State),
    /// Files read when an answer needs them: a head searched from its
    /// stored indexes and the views.
    Stored(&'a dyn StoredRecords),
}

/// The records of the state a stored [`DocMap`] numbers.
pub trait StoredRecords: Send + Sync {
    /// The records of `paths` (those the state has); `None` once that state
    /// is no longer the one the views hold (the head moved) and they were
    /// not read before. An answer quotes symbols and text: a record's
    /// `edges` and `refs` may be left empty.
    fn read(&self, paths: &[&str]) -> Option<HashMap<String, std::sync::Arc<FileRecord>>>;
}

/// Retrieval over one state.
pub struct Retriever<'a> {
    map: DocMap,
    lexical: LexicalIndex,
    records: Records<'a>,
    semantic: Option<(&'a Embedder, SemanticIndex)>,
}

impl<'a> Retriever<'a> {
    /// Builds the indexes for `state`; `embedder` adds the semantic signal,
    /// with `vectors` (in document order) when they are already at hand.
    pub fn new(
        state: &'a State,
        embedder: Option<&'a Embedder>,
        vectors: Option<Vectors>,
        source: crate::lexical::Source,
    ) -> Result<Retriever<'a>, crate::lexical::LexicalError> {
        let chunks = crate::chunks::of_state(state, source);
        let vectors = match (embedder, vectors) {
            (Some(e), None) => {
                let mut texts = doc_texts(state, source);
                texts.extend(chunks.iter().map(Chunk::embedded_text));
                Some(doc_vectors(&texts, e, |_| Vec::new()).0)
            }
            (_, v) => v,
        };
        let lexical = LexicalIndex::build(state, &chunks, source)?;
        Ok(Self::with_lexical(
            state, &chunks, embedder, vectors, lexical,
        ))
    }

    /// [`Retriever::new`] with a lexical index already at hand (one stored
    /// on disk by [`LexicalIndex::open_or_build`]) and the vectors, in
    /// document order, when there is an embedder.
    pub fn with_lexical(
        state: &'a State,
        chunks: &[Chunk],
        embedder: Option<&'a Embedder>,
        vectors: Option<Vectors>,
        lexical: LexicalIndex,
    ) -> Retriever<'a> {
        let t = std::time::Instant::now();
        let map = DocMap::of(state, chunks);
        tracing::debug!(
            docs = map.len(),
            ms = t.elapsed().as_millis() as u64,
            "documents mapped"
        );
        Self::stored(map, Records::State(state), embedder, vectors, lexical)
    }

    /// A retriever over a state's stored parts: its document map, lexical
    /// index and vectors, reading records from `records`.
    pub fn stored(
        map: DocMap,
        records: Records<'a>,
        embedder: Option<&'a Embedder>,
        vectors: Option<Vectors>,
        lexical: LexicalIndex,
    ) -> Retriever<'a> {
        let semantic = embedder
            .zip(vectors)
            .map(|(e, vectors)| (e, SemanticIndex::build(vectors)));
        Retriever {
            map,
            lexical,
            records,
            semantic,
        }
    }

    /// What each document number is.
    pub fn map(&self) -> &DocMap {
        &self.map
    }

    /// Ranked documents: symbols, then sections of docs and config files.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there is nothing to rank.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records of the files of `docs`, to quote them; `None` when the
    /// state they were numbered in is gone (the head moved: ask again).
    pub fn load(&self, docs: impl IntoIterator<Item = usize>) -> Option<Loaded<'_>> {
        let records = match self.records {
            Records::State(s) => LoadedRecords::State(s),
            Records::Stored(r) => {
                let paths: std::collections::BTreeSet<&str> =
                    docs.into_iter().map(|d| self.map.path(d)).collect();
                let paths: Vec<&str> = paths.into_iter().filter(|p| !p.is_empty()).collect();
                let state = r.read(&paths)?;
                // The records must be those the map numbered.
                let same = paths.iter().all(|p| {
                    state
                        .get(*p)
                        .is_some_and(|rec| rec.symbols.len() == self.map.symbols_in(p))
                });
                if !same {
                    return None;
                }
                LoadedRecords::Read(state)
            }
        };
        Some(Loaded {
            map: &self.map,
            records,
        })
    }

    /// Whether the semantic signal is available.
    pub fn has_semantic(&self) -> bool {
        self.semantic.is_some()
    }

    /// Exact and near-exact name matches of `query`, with their rank (0
    /// first). Only the files of the documents with the name's hash are
    /// read.
    fn name_matches(&self, query: &str) -> Vec<(usize, u8)> {
        let candidates = self.map.named(query);
        if candidates.is_empty() {
            return Vec::new();
        }
        let Some(loaded) = self.load(candidates.iter().copied()) else {
            return Vec::new();
        };
        candidates
            .into_iter()
            .filter_map(|doc| {
                let (path, k) = self.map.symbol(doc)?;
                let symbol = loaded.record(path)?.symbols.get(k)?;
                Some((doc, name_match(&Located { path, symbol }, query)?))
            })
            .collect()
    }

    /// Ranks symbols for a request, using the journal's history and the
    /// files approved lessons touch.
    pub fn search(
        &self,
        req: &SearchRequest,
        history: &HistoryFacts,
        lesson_paths: &HashSet<String>,
    ) -> Vec<Hit> {
        // A hash naming a commit is left out of the words searched, unless
        // the question is nothing else.
        let stripped = history.without_named_hashes(req.query);
        let (query, limit, scope, lexical_only, w) = (
            if stripped.trim().is_empty() {
                req.query
            } else {
                &stripped
            },
            req.limit,
            req.scope,
            req.lexical_only,
            req.weights,
        );
        let map = &self.map;
        let mut signals: BTreeMap<usize, Signals> = BTreeMap::new();
        let ident = identifier_shaped(query);
        let named = name_shaped(query);
        // Each signal is normalised over its own candidates (its best is
        // 1, BM25 by its top score, similarity min-max over the pool), so
        // a weak match stays weak: ranks alone would make a lone path-word
        // match worth as much as a name match.
        // The two pools are independent: each on its own core (on a
        // large repository each is a few milliseconds, the semantic one a
        // scan of every vector).
        // A question of how to work on the project is answered by docs
        // and configuration, which the many names sharing its words ("run",
        // "test") push out of the pool: it draws deeper, and its sections
        // are normalised among themselves, so the best one competes with
        // the best code.
        let asks = match named {
            true => Asks::Code,
            false => crate::question_intent::asks(query),
        };
        let procedure = asks == Asks::Procedure;
        let lexical = || {
            let depth = if procedure {
                POOL * PROCEDURE_DEPTH
            } else {
                POOL
            };
            let mut hits = self
                .lexical
                .search(query, depth, &|path, place| match place {
                    crate::lexical::Place::Symbol(k) => map.symbol_doc(path, k as usize),
                    crate::lexical::Place::Section(k) => map.section_doc(path, k as usize),
                })
                .unwrap_or_default();
            if procedure {
                let mut kept = 0;
                let mut sections = 0;
                hits.retain(|(doc, _)| {
                    kept += 1;
                    let section = map.kind(*doc).is_none();
                    sections += usize::from(section && kept > POOL);
                    kept <= POOL || (section && sections <= PROCEDURE_SECTIONS)
                });
            }
            hits
        };
        let semantic = || {
            let (embedder, index) = self.semantic.as_ref().filter(|_| !lexical_only)?;
            let q = embedder.embed(&[words(query)]).pop().unwrap_or_default();
            Some(index.search(&q, POOL))
        };
        // The lexical pool is made on this thread while a worker of the
        // pool makes the semantic one: `rayon::join` from outside the pool
        // hands both to the pool and sleeps until they are done, so a
        // search waited for two workers rather than one, and for both
        // when the pool is busy (a commit's index run). On an idle pool
        // the two take the same time; the debug event below says where
        // a search's time went.
        let t0 = std::time::Instant::now();
        let mut sem = None;
        let mut t_sem = std::time::Duration::ZERO;
        let (mut lex, t_lex) = rayon::in_place_scope(|s| {
            s.spawn(|_| {
                let t = std::time::Instant::now();
                sem = semantic();
                t_sem = t.elapsed();
            });
            let t = std::time::Instant::now();
            let lex = lexical();
            (lex, t.elapsed())
        });
        tracing::debug!(
            lex_us = t_lex.as_micros() as u64,
            sem_us = t_sem.as_micros() as u64,
            both_us = t0.elapsed().as_micros() as u64,
            "signals timed"
        );
        // The best score, taken before sections are weighed below: code is
        // normalised by it, and a section weighed down that came first
        // must not raise every definition's signal.
        let top_lex = lex.first().map(|x| x.1).unwrap_or(1.0).max(1e-6);
        // A question of how to work on the project names what it acts on
        // ("the tests"): the sections that do not say it weigh less.
        if procedure {
            self.weigh_unnamed_objects(query, &mut lex);
        }
        let top_section = lex
            .iter()
            .filter(|(doc, _)| procedure && map.kind(*doc).is_none())
            .map(|x| x.1)
            .reduce(f32::max)
            .map_or(top_lex, |x| x.max(1e-6));
        for (doc, score) in lex {
            let top = if map.kind(doc).is_none() {
                top_section
            } else {
                top_lex
            };
            signals.entry(doc).or_default().lexical = w.lexical * score / top;
        }
        if named {
            // A name is a question with one right answer: its definitions
            // first, exact spelling before any case.
            for (doc, m) in self.name_matches(query) {
                signals.entry(doc).or_default().lexical += w.name / f32::from(1 + m);
            }
        } else if let Some(asked) = crate::question_intent::kind_named(query) {
            // So is a question that names a definition with its kind ("where
            // is the Value enum defined"): its words are common ("value" is
            // in hundreds of names), its name and kind are not.
            for (doc, m) in self.name_matches(&asked.name) {
                if map.kind(doc).is_some_and(|k| asked.kinds.contains(&k)) {
                    signals.entry(doc).or_default().lexical += w.name / f32::from(1 + m);
                }
            }
        }
        if let Some(ranked) = sem {
            // Names are matched by their letters; meaning adds less there.
            // A long query's mean vector says less than a short one's.
            let n = crate::words::split_words(query).len().max(1);
            let length = (SEMANTIC_WORDS as f32 / n as f32).clamp(0.25, 1.0);
            let weight = if ident {
                w.semantic / 3.0
            } else {
                w.semantic * length
            };
            let hi = ranked.iter().map(|x| x.1).fold(f32::MIN, f32::max);
            let lo = ranked.iter().map(|x| x.1).fold(f32::MAX, f32::min);
            let span = hi - lo;
            for (doc, sim) in ranked.into_iter().filter(|(_, sim)| *sim > 0.0) {
                // A pool of one (or of equals) has nothing to spread.
                let norm = if span > 1e-4 { (sim - lo) / span } else { 1.0 };
                signals.entry(doc).or_default().semantic = weight * norm;
            }
        }
        // A C or C++ prototype and its definition are one function, which
        // the definition answers: it takes the better of the two's signals
        // (the header's doc comment finds the source file's code), and in a
        // question in words the prototype counts as a declaration (below).
        let docs: Vec<usize> = signals.keys().copied().collect();
        let folded = map.definitions_of(&docs);
        for (proto, def) in &folded {
            let p = signals.get(proto).copied().unwrap_or_default();
            let d = signals.entry(*def).or_default();
            d.lexical = d.lexical.max(p.lexical);
            d.semantic = d.semantic.max(p.semantic);
        }
        // Structural: neighbours of the strongest seeds, decaying per hop.
        let mut seeds: Vec<(usize, f32)> = signals
            .iter()
            .map(|(d, s)| (*d, s.lexical + s.semantic))
            .collect();
        seeds.sort_by(|a, b| b.1.total_cmp(&a.1));
        seeds.truncate(10);
        // A neighbour's share is relative to the best seed's strength.
        let best = seeds.first().map(|s| s.1).unwrap_or(1.0).max(1e-6);
        for s in &mut seeds {
            s.1 /= best;
        }
        for (seed, strength) in seeds {
            let mut frontier = vec![seed];
            let mut seen: HashSet<usize> = HashSet::from([seed]);
            for hop in 1..=2 {
                let decay = 0.5f32.powi(hop);
                let mut next = Vec::new();
                for d in frontier {
                    for n in map.neighbours(d) {
                        if seen.insert(n) {
                            let s = signals.entry(n).or_default();
                            s.structural = s.structural.max(w.structural * strength * decay);
                            next.push(n);
                        }
                    }
                }
                frontier = next;
            }
        }
        let seed_files: Vec<&str> = {
            let mut v: Vec<(&str, f32)> = signals
                .iter()
                .map(|(d, s)| (map.path(*d), s.lexical + s.semantic))
                .collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1));
            let mut files: Vec<&str> = v.into_iter().map(|(p, _)| p).collect();
            files.dedup();
            files.truncate(3);
            files
        };
        for (doc, s) in signals.iter_mut() {
            let path = map.path(*doc);
            let coupling = seed_files
                .iter()
                .filter(|f| **f != path)
                .map(|f| history.co_change(f, path))
                .fold(0.0f32, f32::max);
            s.history = w.history * (0.5 * history.recency(path) + 0.5 * coupling);
            if lesson_paths.contains(path) {
                s.memory = w.memory;
            }
        }
        if !named {
            let action = crate::question_intent::describes_an_action(query);
            // A question in words asks what code does. A declaration with no
            // body of its own (a field, a variable, a constant) matches its
            // one line's words at full BM25 strength, since short documents
            // weigh each word most: its match counts for less.
            // So does a prototype whose definition took its signals.
            for (doc, s) in signals.iter_mut() {
                if map.kind(*doc).is_some_and(is_declaration)
                    || folded.iter().any(|(proto, _)| proto == doc)
                {
                    s.lexical *= DECLARATION_PRIOR;
                    s.semantic *= DECLARATION_PRIOR;
                }
            }
            // It is answered by the code that does it, not by the tests
            // that repeat its words; a question for tests is answered by
            // them, before the code they test (whose names hold the words
            // the question names it by: "where are the tests for
            // HeaderMap" put `impl HeaderMap` and its methods above every
            // test); one that asks how to run, build or install the
            // project by the docs and configuration that say so.
            let (test_prior, code_prior) = match asks {
                Asks::Tests => (1.0 / TEST_PRIOR, TEST_PRIOR),
                Asks::AboutTests => (1.0, 1.0),
                Asks::Code | Asks::Procedure => (TEST_PRIOR, 1.0),
            };
            // Candidates share files: each path is judged once.
            let mut judged: rustc_hash::FxHashMap<&str, bool> = Default::default();
            for (doc, s) in signals.iter_mut() {
                let path = map.path(*doc);
                let test = *judged
                    .entry(path)
                    .or_insert_with(|| crate::test_files::is_test_file(path));
                s.scale(if test { test_prior } else { code_prior });
                if action && map.kind(*doc).is_some_and(is_type) {
                    s.scale(TYPE_FOR_ACTION_PRIOR);
                }
                if map.kind(*doc).is_none() {
                    s.scale(match asks {
                        Asks::Procedure => PROCEDURE_SECTION_PRIOR,
                        _ => SECTION_PRIOR,
                    });
                }
            }
        }
        let mut hits: Vec<Hit> = signals
            .into_iter()
            .filter(|(doc, _)| scope.is_none_or(|p| map.path(*doc).starts_with(p)))
            .filter(|(_, s)| s.lexical + s.semantic + s.structural > 0.0)
            .map(|(doc, signals)| Hit { doc, signals })
            .collect();
        let order = |hits: &mut Vec<Hit>| {
            hits.sort_by(|a, b| {
                b.signals
                    .total()
                    .total_cmp(&a.signals.total())
                    .then(a.doc.cmp(&b.doc))
            })
        };
        order(&mut hits);
        // A type's impl blocks each match its name: after the best of
        // them, the others weigh less, so six `impl HeaderMap` blocks do
        // not fill an answer's top ten.
        let mut seen_impls: HashSet<u32> = HashSet::new();
        let mut repeated = false;
        for h in hits.iter_mut() {
            if map.kind(h.doc) == Some(sno_journal::model::SymbolKind::Impl) {
                if let Some(name) = map.name_hash_of(h.doc) {
                    if !seen_impls.insert(name) {
                        h.signals.scale(IMPL_REPEAT_PRIOR);
                        repeated = true;
                    }
                }
            }
        }
        if repeated {
            order(&mut hits);
        }
        let phrases = match named {
            true => Vec::new(),
            false => crate::verbatim::phrases_of(query),
        };
        if let (false, Some(text)) = (phrases.is_empty(), req.text) {
            if self.weigh_verbatim(&mut hits, &phrases, text) {
                order(&mut hits);
            }
        }
        hits.truncate(limit);
        hits
    }

    /// Weighs down, among a procedure question's lexical hits, the doc and
    /// config sections that do not name what it acts on ("the tests",
    /// [`crate::question_intent::procedure_objects`]), before they are
    /// normalised among themselves.
    fn weigh_unnamed_objects(&self, query: &str, lex: &mut [(usize, f32)]) {
        let objects = crate::question_intent::procedure_objects(query);
        if objects.is_empty() {
            return;
        }
        let map = &self.map;
        let mut paths: Vec<&str> = lex
            .iter()
            .filter(|(doc, _)| map.kind(*doc).is_none())
            .map(|(doc, _)| map.path(*doc))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let naming: HashSet<usize> = self
            .lexical
            .naming(&objects.join(" "), &paths, &|path, place| match place {
                crate::lexical::Place::Section(k) => map.section_doc(path, k as usize),
                crate::lexical::Place::Symbol(_) => None,
            })
            .unwrap_or_default()
            .into_iter()
            .collect();
        for (doc, score) in lex.iter_mut() {
            if map.kind(*doc).is_none() && !naming.contains(doc) {
                *score *= UNNAMED_OBJECT_PRIOR;
            }
        }
    }

    /// Adds to the best `hits`' lexical signal the share of a string
    /// literal of their own text that one of `phrases` holds
    /// ([`crate::verbatim`]); whether any did.
    fn weigh_verbatim(
        &self,
        hits: &mut [Hit],
        phrases: &[crate::verbatim::Phrase],
        text: TextSource,
    ) -> bool {
        let k = hits.len().min(VERBATIM_CANDIDATES);
        // A literal that counts holds two of the text's content words, so
        // its body matched them: a candidate of no lexical match (the
        // semantic signal's alone) holds none, and its file is not read.
        // A file of thousands of definitions (generated bindings) is a
        // record and a text of megabytes to read for one candidate.
        let map = &self.map;
        let worded = |h: &Hit| {
            h.signals.lexical > 0.0 && map.symbols_in(map.path(h.doc)) <= VERBATIM_MAX_SYMBOLS
        };
        let Some(loaded) = self.load(hits[..k].iter().filter(|h| worded(h)).map(|h| h.doc)) else {
            return false;
        };
        let mut texts: HashMap<&str, Option<Served>> = HashMap::new();
        let mut read: u64 = 0;
        let mut any = false;
        for h in hits[..k].iter_mut().filter(|h| worded(h)) {
            let e = loaded.entry(h.doc);
            // Docs quote the code's messages and doc comments too: the
            // code that says it is the answer, and its tests after it.
            let (Some(symbol), Some(rec)) = (e.symbol, loaded.record(e.path)) else {
                continue;
            };
            // Files are read best candidate first within a budget of
            // bytes (their sizes, whether cached or not, so an answer
            // does not depend on what an earlier one read).
            if !texts.contains_key(e.path) {
                if read + rec.size > VERBATIM_BYTES {
                    continue;
                }
                read += rec.size;
            }
            let Some(served) = texts
                .entry(e.path)
                .or_insert_with(|| (text.0)(rec))
                .as_ref()
            else {
                continue;
            };
            let own = crate::lexical::own_body(rec, symbol, served);
            let share = phrases
                .iter()
                .map(|p| crate::verbatim::share_in_literals(p, &own))
                .fold(0.0f32, f32::max);
            if share > 0.0 {
                let prior = if crate::test_files::is_test_file(e.path) {
                    TEST_PRIOR
                } else {
                    1.0
                };
                // Holding nearly all of a message is at least the best
                // match of its words; how much of it, and where, orders
                // those that hold it.
                if share >= WHOLE_MESSAGE {
                    h.signals.lexical = h.signals.lexical.max(1.0);
                }
                h.signals.lexical += VERBATIM_WEIGHT * share * prior;
                any = true;
            }
        }
        any
    }

    /// Ranks files for a request by two lists fused: the symbols of each
    /// file that rank (the best counting most, the k-th best half the one
    /// before), and BM25 over whole files (`files`, the state's
    /// [`crate::file_index::FileIndex`]). Each is normalised by its best.
    pub fn search_files<'s>(
        &'s self,
        req: &SearchRequest,
        history: &HistoryFacts,
        lesson_paths: &HashSet<String>,
        files: Option<&'s crate::file_index::FileIndex>,
    ) -> Vec<FileHit<'s>> {
        // A commit message asks with its subject and the code its body
        // names ([`crate::commit_message`]); a number or hash it names
        // anywhere still points at that change (below).
        let named_changes = history.referenced_change_votes(req.query);
        let asked = crate::commit_message::as_question(req.query);
        let req = &SearchRequest {
            query: &asked,
            ..*req
        };
        let all = self.search(
            &SearchRequest {
                limit: POOL,
                weights: Weights {
                    semantic: req.weights.files_semantic,
                    ..req.weights
                },
                // A commit message is no program's output: its words in a
                // string literal ("update dev dependencies") say nothing
                // of where the change goes.
                text: None,
                ..*req
            },
            history,
            lesson_paths,
        );
        let mut by_file: HashMap<&str, FileHit> = HashMap::new();
        for h in &all {
            let path = self.map.path(h.doc);
            let f = by_file.entry(path).or_insert_with(|| FileHit {
                path,
                score: 0.0,
                docs: Vec::new(),
            });
            f.score += h.signals.total() * 0.5f32.powi(f.docs.len() as i32);
            f.docs.push(h.doc);
        }
        let best = by_file
            .values()
            .map(|f| f.score)
            .fold(0.0f32, f32::max)
            .max(1e-6);
        for f in by_file.values_mut() {
            f.score /= best;
        }
        // A question that names a commit by its hash alone asks where
        // that change went, as one in words does.
        let words = history.without_named_hashes(req.query);
        let prose = !name_shaped(req.query) || words != req.query;
        let tests_weigh_less = prose
            && !matches!(
                crate::question_intent::asks(&words),
                Asks::Tests | Asks::AboutTests
            );
        if let Some(index) = files {
            let hits = index.search(&words, POOL).unwrap_or_default();
            let top = hits.first().map(|h| h.1).unwrap_or(1.0).max(1e-6);
            let weight = if prose { FILE_TEXT_WEIGHT } else { 1.0 };
            for (path, mut score) in hits {
                if req.scope.is_some_and(|p| !path.starts_with(p)) {
                    continue;
                }
                if tests_weigh_less && crate::test_files::is_test_file(path) {
                    score *= TEST_PRIOR;
                }
                let f = by_file.entry(path).or_insert_with(|| FileHit {
                    path,
                    score: 0.0,
                    docs: Vec::new(),
                });
                f.score += weight * req.weights.lexical * score / top;
            }
        }
        if tests_weigh_less {
            for f in by_file.values_mut() {
                if crate::test_files::is_test_file(f.path) {
                    f.score *= FILE_TEST_PRIOR;
                }
            }
        }
        // A question in words about files asks, more often than not,
        // where a change goes: the files recent commits changed are where
        // the next one goes too. Among the candidates only, so it orders
        // matches and never brings in a file that matched nothing.
        if prose {
            for f in by_file.values_mut() {
                f.score += CHANGE_PRONENESS * history.proneness(f.path, PRONENESS_HALF_LIFE);
            }
            // And the files of the past changes whose messages are like
            // the question, and of those it names, among them files
            // nothing else found (those of this state only), each list
            // scaled by its best file; a test file counts as its other
            // scores do.
            for (votes, weight) in [
                (history.similar_change_votes(&words), SIMILAR_CHANGES),
                (named_changes, REFERENCED_CHANGES),
            ] {
                let mut here: Vec<(&'s str, f32)> = Vec::new();
                for (path, v) in votes {
                    if req.scope.is_some_and(|x| !path.starts_with(x)) {
                        continue;
                    }
                    // A file nothing else found is brought in when it holds
                    // code (a source file, whether or not it defines a
                    // symbol: a package's index that re-exports its
                    // modules is where a new one is added): a changelog or
                    // a docs page touched by every release would otherwise
                    // take the best vote and scale the others down
                    // (held-out change localization 0.921 with them, 0.923
                    // without, measured with files of symbols only; with
                    // source files without symbols let in too: 0.923, and
                    // own 0.941, as before).
                    let known = by_file
                        .get_key_value(path)
                        .map(|(k, _)| *k)
                        .or_else(|| self.map.symbol_doc(path, 0).map(|d| self.map.path(d)))
                        .or_else(|| files.and_then(|i| i.path(path)));
                    if let Some(p) = known {
                        let prior = if tests_weigh_less && crate::test_files::is_test_file(p) {
                            FILE_TEST_PRIOR
                        } else {
                            1.0
                        };
                        here.push((p, v * prior));
                    }
                }
                let best = here.iter().map(|v| v.1).fold(0.0f32, f32::max);
                for (path, v) in here {
                    let f = by_file.entry(path).or_insert_with(|| FileHit {
                        path,
                        score: 0.0,
                        docs: Vec::new(),
                    });
                    f.score += weight * v / best;
                }
            }
        }
        let mut files: Vec<FileHit> = by_file.into_values().collect();
        files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(b.path)));
        files.truncate(req.limit);
        files
    }
}

/// The records an answer quotes: the whole state, or the files of its
/// documents read for it ([`Retriever::load`]).
pub struct Loaded<'r> {
    map: &'r DocMap,
    records: LoadedRecords<'r>,
}

enum LoadedRecords<'r> {
    State(&'r State),
    Read(HashMap<String, std::sync::Arc<FileRecord>>),
}

impl Loaded<'_> {
    /// A file's record, if loaded (read from a store, without its graph:
    /// [`StoredRecords::read`]).
    pub fn record(&self, path: &str) -> Option<&FileRecord> {
        match &self.records {
            LoadedRecords::State(s) => s.get(path),
            LoadedRecords::Read(m) => m.get(path).map(|r| &**r),
        }
    }

    /// What document `doc` is. A symbol whose file was not loaded shows
    /// its path alone ([`Retriever::load`] loads every file it is asked
    /// for, or nothing).
    pub fn entry(&self, doc: usize) -> Entry<'_> {
        if let Some((path, k)) = self.map.symbol(doc) {
            if let Some(symbol) = self.record(path).and_then(|r| r.symbols.get(k)) {
                return Entry {
                    path,
                    name: &symbol.qualified_name,
                    kind: symbol.kind.name(),
                    line: symbol.span.start_line,
                    end_line: symbol.span.end_line,
                    bytes: (
                        symbol.span.start_byte as usize,
                        symbol.span.end_byte as usize,
                    ),
                    symbol: Some(symbol),
                };
            }
        }
        match self.map.section(doc) {
            Some(c) => Entry {
                path: &c.path,
                name: &c.title,
                kind: c.kind.name(),
                line: c.start_line,
                end_line: c.end_line,
                bytes: (c.start_byte, c.end_byte),
                symbol: None,
            },
            None => Entry {
                path: self.map.path(doc),
                name: "",
                kind: "",
                line: 0,
                end_line: 0,
                bytes: (0, 0),
                symbol: None,
            },
        }
    }
}

/// A ranked document as answers show it: a symbol, or a section of a doc
/// or config file (kind `doc` or `config`, no symbol).
#[derive(Clone, Copy, Debug)]
pub struct Entry<'r> {
    pub path: &'r str,
    /// Qualified name, or the section's heading.
    pub name: &'r str,
    pub kind: &'r str,
    pub line: u32,
    pub end_line: u32,
    /// Byte range in the file.
    pub bytes: (usize, usize),
    pub symbol: Option<&'r sno_journal::model::Symbol>,
}

/// A ranked file: its score and its symbols that rank, best first.
#[derive(Clone, Debug)]
pub struct FileHit<'a> {
    pub path: &'a str,
    pub score: f32,
    pub docs: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::event::{CommitIndexed, FileDelta, RolledBack};
    use sno_journal::model::CommitId;
    use sno_journal::test_support::add;

    /// Commit `[n; 20]` on top of `[parent; 20]`.
    fn commit(n: u8, parent: Option<u8>, deltas: Vec<FileDelta>) -> CommitIndexed {
        let mut c = sno_journal::test_support::commit(n, deltas);
        c.parents = parent.map(|p| CommitId([p; 20])).into_iter().collect();
        c
    }

    #[test]
    fn a_file_changed_lately_and_often_is_more_prone_to_change() {
        let mut h = HistoryFacts {
            commits: 1000,
            ..Default::default()
        };
        h.touches.insert("ancient.rs".into(), vec![10]);
        h.touches.insert("old.rs".into(), vec![900]);
        h.touches.insert("recent.rs".into(), vec![999]);
        h.touches.insert("often.rs".into(), vec![990, 995, 999]);
        let p = |path: &str| h.proneness(path, 50.0);
        assert_eq!(p("never.rs"), 0.0);
        assert!(0.0 < p("old.rs") && p("old.rs") < p("recent.rs"));
        assert!(p("recent.rs") < p("often.rs"));
        assert!(p("often.rs") < 1.0);
        // A touch past the horizon counts nothing.
        assert_eq!(p("ancient.rs"), 0.0);
    }

    #[test]
    fn hashes_naming_commits_are_not_searched_as_words() {
        let mut id = [0u8; 20];
        id[..4].copy_from_slice(&[0x89, 0x47, 0x14, 0xa0]);
        let h = HistoryFacts {
            commits: 1,
            messages: vec!["Speed up the cache".into()],
            ids: vec![sno_journal::model::CommitId(id)],
            ..Default::default()
        };
        // A commit of the lineage, abbreviated; a whole hash of any commit.
        assert_eq!(h.without_named_hashes("revert 894714A now"), "revert   now");
        let whole = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(h.without_named_hashes(&format!("see {whole}")), "see  ");
        // A short hash-shaped word no commit starts with is a word of code.
        let kept = "ed25519 signature of parse_894714a";
        assert!(matches!(h.without_named_hashes(kept), std::borrow::Cow::Borrowed(k) if k == kept));
    }

    #[test]
    fn history_carried_from_a_previous_head_equals_a_whole_read() {
        let dir = tempfile::tempdir().unwrap();
        let j = sno_journal::Journal::open_or_create(&dir.path().join("j.redb")).unwrap();
        let s1 = j
            .append_commit(commit(1, None, vec![add("a.py", 1), add("b.py", 1)]))
            .unwrap();
        j.append_commit(commit(2, Some(1), vec![add("c.py", 2)]))
            .unwrap();
        let s3 = j
            .append_commit(commit(3, Some(2), vec![add("d.py", 3)]))
            .unwrap();
        let whole = HistoryFacts::from_journal(&j, s3).unwrap();
        let carried = HistoryFacts::from_journal(&j, s1)
            .unwrap()
            .extended(&j, CommitId([1; 20]), s1, s3)
            .unwrap()
            .expect("a linear history is carried on");
        assert_eq!(
            (carried.commits, &carried.touches),
            (whole.commits, &whole.touches)
        );
        assert_eq!(carried.commits, 3);
        assert_eq!(
            carried.touches["d.py"],
            [2],
            "the third commit touched d.py"
        );
        // From a head the events do not continue (not the parent of the
        // next commit), or across a rollback: not carried.
        assert!(HistoryFacts::from_journal(&j, s1)
            .unwrap()
            .extended(&j, CommitId([9; 20]), s1, s3)
            .unwrap()
            .is_none());
        let s4 = j
            .append_rollback(RolledBack {
                from: Some(CommitId([3; 20])),
                to: CommitId([2; 20]),
                branch: None,
                git_head: None,
                deltas: vec![],
            })
            .unwrap();
        assert!(HistoryFacts::from_journal(&j, s3)
            .unwrap()
            .extended(&j, CommitId([3; 20]), s3, s4)
            .unwrap()
            .is_none());
    }

    /// Vectors as a stand-in model makes them: one a text, from its hash.
    fn fake_gather(texts: &[String], log: &mut Vec<String>) -> (Vectors, Vec<StoredVector>) {
        log.extend(texts.iter().cloned());
        let rows: Vec<Vec<f32>> = texts
            .iter()
            .map(|t| {
                let h = text_hash(t);
                vec![(h & 0xffff) as f32 + 1.0, (h >> 48) as f32 + 1.0]
            })
            .collect();
        (Vectors::from_rows(&rows), Vec::new())
    }

    #[test]
    fn vectors_carried_from_a_previous_head_equal_vectors_made_from_nothing() {
        use sno_journal::test_support::record;
        let none = |_: &FileRecord| -> Option<Served> { None };
        let one: State = [
            ("a.py", record("a.py", 1, &["alpha", "beta"])),
            ("b.py", record("b.py", 2, &["gamma"])),
            ("d.py", record("d.py", 4, &["delta"])),
        ]
        .into_iter()
        .map(|(p, r)| (p.to_string(), r))
        .collect();
        let mut log = Vec::new();
        let first = carried_vectors(&one, None, &none, vec!["section".into()], |t| {
            fake_gather(t, &mut log)
        });
        assert_eq!((first.vectors.count(), first.files_carried), (5, 0));
        // The next head: a file before them all (every number moves), b.py
        // changed, d.py removed, a new e.py.
        let two: State = [
            ("0.py", record("0.py", 9, &["zero"])),
            ("a.py", record("a.py", 1, &["alpha", "beta"])),
            ("b.py", record("b.py", 3, &["gamma", "epsilon"])),
            ("e.py", record("e.py", 5, &["eta"])),
        ]
        .into_iter()
        .map(|(p, r)| (p.to_string(), r))
        .collect();
        let mut log = Vec::new();
        let next = carried_vectors(
            &two,
            Some((&first.vectors, &first.layout)),
            &none,
            vec!["section".into()],
            |t| fake_gather(t, &mut log),
        );
        let whole = carried_vectors(&two, None, &none, vec!["section".into()], |t| {
            fake_gather(t, &mut Vec::new())
        });
        assert_eq!(next.vectors, whole.vectors);
        assert_eq!(next.layout, whole.layout);
        assert_eq!(next.files_carried, 1, "a.py alone is unchanged");
        // Only the changed and new files' texts (and the sections) were made.
        assert_eq!(log.len(), 1 + 2 + 1 + 1, "{log:?}");
        assert!(log
            .iter()
            .all(|t| !t.contains("alpha") && !t.contains("beta")));
    }
}
