//! The layout of format version 4, as serde remote definitions of the domain
//! types (see the [module above](super) for how a layout changes).
//!
//! Ids (`CommitId`, `BlobId`, `SymbolId`, `MemoryId`) and the field-less
//! enums (`Language`, `SymbolKind`, `EdgeKind`, `SkipReason`) are stored
//! through their own serde implementations: an id is its bytes, and an enum
//! is its variant's position, which only ever grows at the end (a test below
//! pins the positions).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::event::{
    BranchMoved, CommitIndexed, CommitSkipped, Envelope, Event, FileChange, FileDelta, FileMeta,
    RolledBack,
};
use crate::memory::{
    Binding, CheckpointCreated, DecisionLogged, LessonAnalysisSubmitted, LessonProposed,
    LessonReviewed,
};
use crate::model::{
    Certainty, Diagnostic, Edge, EdgeTarget, FileRecord, FileRefs, FileState, Guess, RawCall,
    RawImport, RawInherit, Span, Symbol,
};

/// A borrowed value written in its stored layout, and an owned one read
/// from it.
macro_rules! wrap {
    ($r:ident, $o:ident, $ty:ty, $def:ty) => {
        #[allow(dead_code)] // not every layout is written or read whole
        pub(crate) struct $r<'a>(pub &'a $ty);
        impl Serialize for $r<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$def>::serialize(self.0, s)
            }
        }
        #[allow(dead_code)]
        pub(crate) struct $o(pub $ty);
        impl<'de> Deserialize<'de> for $o {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$def>::deserialize(d).map($o)
            }
        }
    };
}

/// `#[serde(with = ...)]` for a sequence of a type with a stored layout.
macro_rules! seq {
    ($m:ident, $r:ident, $o:ident, $ty:ty) => {
        pub(crate) mod $m {
            use super::*;
            pub fn serialize<S: Serializer>(v: &[$ty], s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(v.iter().map($r))
            }
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$ty>, D::Error> {
                Ok(Vec::<$o>::deserialize(d)?
                    .into_iter()
                    .map(|w| w.0)
                    .collect())
            }
            /// A borrowed sequence written in its stored layout.
            #[allow(dead_code)]
            pub(crate) struct Slice<'a>(pub &'a [$ty]);
            impl Serialize for Slice<'_> {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    serialize(self.0, s)
                }
            }
        }
    };
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Span")]
pub(crate) struct SpanDef {
    start_line: u32,
    start_col: u32,
    end_line: u32,
    end_col: u32,
    start_byte: u32,
    end_byte: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Diagnostic")]
pub(crate) struct DiagnosticDef {
    line: u32,
    column: u32,
    message: String,
}
wrap!(DiagnosticRef, DiagnosticOwned, Diagnostic, DiagnosticDef);
seq!(diagnostics, DiagnosticRef, DiagnosticOwned, Diagnostic);

#[derive(Serialize, Deserialize)]
#[serde(remote = "Symbol")]
pub(crate) struct SymbolDef {
    id: crate::model::SymbolId,
    name: String,
    qualified_name: String,
    kind: crate::model::SymbolKind,
    parent: Option<crate::model::SymbolId>,
    #[serde(with = "SpanDef")]
    span: Span,
    signature: String,
    doc: String,
    content_hash: u64,
}
wrap!(SymbolRef, SymbolOwned, Symbol, SymbolDef);
seq!(symbols, SymbolRef, SymbolOwned, Symbol);

#[derive(Serialize, Deserialize)]
#[serde(remote = "EdgeTarget")]
pub(crate) enum EdgeTargetDef {
    Symbol(crate::model::SymbolId),
    File(String),
    Module(String),
    Unresolved(String),
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Guess")]
pub(crate) enum GuessDef {
    UniqueName,
    UnknownReceiver,
    Overloaded,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Certainty")]
pub(crate) enum CertaintyDef {
    Exact,
    Heuristic(#[serde(with = "GuessDef")] Guess),
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Edge")]
pub(crate) struct EdgeDef {
    kind: crate::model::EdgeKind,
    from: Option<crate::model::SymbolId>,
    #[serde(with = "EdgeTargetDef")]
    to: EdgeTarget,
    name: String,
    line: u32,
    #[serde(with = "CertaintyDef")]
    certainty: Certainty,
}
wrap!(EdgeRef, EdgeOwned, Edge, EdgeDef);
seq!(edges, EdgeRef, EdgeOwned, Edge);

#[derive(Serialize, Deserialize)]
#[serde(remote = "FileState")]
pub(crate) enum FileStateDef {
    Parsed,
    ParsedWithErrors,
    Skipped(crate::model::SkipReason),
    Failed(String),
}
wrap!(FileStateRef, FileStateOwned, FileState, FileStateDef);

#[derive(Serialize, Deserialize)]
#[serde(remote = "RawImport")]
pub(crate) struct RawImportDef {
    module: String,
    names: Vec<String>,
    alias: Option<String>,
    is_relative: bool,
    line: u32,
}
wrap!(RawImportRef, RawImportOwned, RawImport, RawImportDef);
seq!(imports, RawImportRef, RawImportOwned, RawImport);

#[derive(Serialize, Deserialize)]
#[serde(remote = "RawCall")]
pub(crate) struct RawCallDef {
    caller: Option<crate::model::SymbolId>,
    callee: String,
    receiver: Option<String>,
    line: u32,
}
wrap!(RawCallRef, RawCallOwned, RawCall, RawCallDef);
seq!(calls, RawCallRef, RawCallOwned, RawCall);

#[derive(Serialize, Deserialize)]
#[serde(remote = "RawInherit")]
pub(crate) struct RawInheritDef {
    symbol: crate::model::SymbolId,
    base: String,
    line: u32,
}
wrap!(RawInheritRef, RawInheritOwned, RawInherit, RawInheritDef);
seq!(inherits, RawInheritRef, RawInheritOwned, RawInherit);

#[derive(Serialize, Deserialize)]
#[serde(remote = "FileRefs")]
pub(crate) struct FileRefsDef {
    #[serde(with = "imports")]
    imports: Vec<RawImport>,
    #[serde(with = "calls")]
    calls: Vec<RawCall>,
    #[serde(with = "inherits")]
    inherits: Vec<RawInherit>,
}
wrap!(FileRefsRef, FileRefsOwned, FileRefs, FileRefsDef);

#[derive(Serialize, Deserialize)]
#[serde(remote = "FileMeta")]
pub(crate) struct FileMetaDef {
    blob: crate::model::BlobId,
    language: Option<crate::model::Language>,
    size: u64,
    lines: u32,
    #[serde(with = "FileStateDef")]
    state: FileState,
    #[serde(with = "diagnostics")]
    diagnostics: Vec<Diagnostic>,
    #[serde(with = "FileRefsDef")]
    refs: FileRefs,
    masked_secrets: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "FileChange")]
pub(crate) enum FileChangeDef {
    Added(#[serde(with = "FileMetaDef")] FileMeta),
    Modified(#[serde(with = "FileMetaDef")] FileMeta),
    Deleted,
    Reresolved,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "FileDelta")]
pub(crate) struct FileDeltaDef {
    path: String,
    #[serde(with = "FileChangeDef")]
    change: FileChange,
    symbols_removed: Vec<crate::model::SymbolId>,
    #[serde(with = "symbols")]
    symbols_added: Vec<Symbol>,
    #[serde(with = "edges")]
    edges_removed: Vec<Edge>,
    #[serde(with = "edges")]
    edges_added: Vec<Edge>,
}
wrap!(FileDeltaRef, FileDeltaOwned, FileDelta, FileDeltaDef);
seq!(deltas, FileDeltaRef, FileDeltaOwned, FileDelta);

#[derive(Serialize, Deserialize)]
#[serde(remote = "CommitIndexed")]
pub(crate) struct CommitIndexedDef {
    commit: crate::model::CommitId,
    parents: Vec<crate::model::CommitId>,
    branch: Option<String>,
    summary: String,
    time: i64,
    base: Option<crate::model::CommitId>,
    #[serde(with = "deltas")]
    deltas: Vec<FileDelta>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "RolledBack")]
pub(crate) struct RolledBackDef {
    from: Option<crate::model::CommitId>,
    to: crate::model::CommitId,
    branch: Option<String>,
    git_head: Option<crate::model::CommitId>,
    #[serde(with = "deltas")]
    deltas: Vec<FileDelta>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "BranchMoved")]
pub(crate) struct BranchMovedDef {
    branch: Option<String>,
    from: Option<crate::model::CommitId>,
    to: crate::model::CommitId,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Binding")]
pub(crate) struct BindingDef {
    branch: Option<String>,
    commit: Option<crate::model::CommitId>,
    session: String,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "CheckpointCreated")]
pub(crate) struct CheckpointCreatedDef {
    id: crate::memory::MemoryId,
    #[serde(with = "BindingDef")]
    bound: Binding,
    name: String,
    summary: String,
    files: Vec<String>,
    tokens_used: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "DecisionLogged")]
pub(crate) struct DecisionLoggedDef {
    id: crate::memory::MemoryId,
    #[serde(with = "BindingDef")]
    bound: Binding,
    title: String,
    rationale: String,
    files: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "LessonProposed")]
pub(crate) struct LessonProposedDef {
    id: crate::memory::MemoryId,
    #[serde(with = "BindingDef")]
    bound: Binding,
    reverted: Option<crate::model::CommitId>,
    summary: String,
    files: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "LessonAnalysisSubmitted")]
pub(crate) struct LessonAnalysisSubmittedDef {
    lesson: crate::memory::MemoryId,
    #[serde(with = "BindingDef")]
    bound: Binding,
    analysis: String,
    rule: String,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "LessonReviewed")]
pub(crate) struct LessonReviewedDef {
    lesson: crate::memory::MemoryId,
    approved: bool,
    reviewer: String,
    note: String,
}

/// The position of each variant is its tag: new events go last, here and
/// in `EventOutlineDef`, which mirrors this layout for outlines.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Event")]
pub(crate) enum EventDef {
    CommitIndexed(#[serde(with = "CommitIndexedDef")] CommitIndexed),
    BranchMoved(#[serde(with = "BranchMovedDef")] BranchMoved),
    CheckpointCreated(#[serde(with = "CheckpointCreatedDef")] CheckpointCreated),
    DecisionLogged(#[serde(with = "DecisionLoggedDef")] DecisionLogged),
    LessonProposed(#[serde(with = "LessonProposedDef")] LessonProposed),
    LessonAnalysisSubmitted(#[serde(with = "LessonAnalysisSubmittedDef")] LessonAnalysisSubmitted),
    LessonReviewed(#[serde(with = "LessonReviewedDef")] LessonReviewed),
    RolledBack(#[serde(with = "RolledBackDef")] RolledBack),
    CommitSkipped(#[serde(with = "CommitSkippedDef")] CommitSkipped),
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "CommitSkipped")]
pub(crate) struct CommitSkippedDef {
    commit: crate::model::CommitId,
    reason: String,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Envelope")]
pub(crate) struct EnvelopeDef {
    version: u16,
    prev_hash: u64,
    written_ms: u64,
    #[serde(with = "EventDef")]
    event: Event,
}
wrap!(EnvelopeRef, EnvelopeOwned, Envelope, EnvelopeDef);

/// A sequence read past: each element decoded and dropped at once, so a
/// delta's symbols and edges are never held (bincode's layout is not
/// self-describing: an element must be decoded to be skipped).
fn read_past<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<(), D::Error> {
    struct Past<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Past<T> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element::<T>()?.is_some() {}
            Ok(())
        }
    }
    d.deserialize_seq(Past::<T>(std::marker::PhantomData))
}

fn past_ids<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    read_past::<D, crate::model::SymbolId>(d)
}
fn past_symbols<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    read_past::<D, SymbolOwned>(d)
}
fn past_edges<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    read_past::<D, EdgeOwned>(d)
}

/// A delta's outline: its path and change, what it added and removed read
/// past.
#[derive(Deserialize)]
struct FileDeltaOutline {
    path: String,
    #[serde(with = "FileChangeDef")]
    change: FileChange,
    #[serde(deserialize_with = "past_ids")]
    _symbols_removed: (),
    #[serde(deserialize_with = "past_symbols")]
    _symbols_added: (),
    #[serde(deserialize_with = "past_edges")]
    _edges_removed: (),
    #[serde(deserialize_with = "past_edges")]
    _edges_added: (),
}

impl From<FileDeltaOutline> for FileDelta {
    fn from(d: FileDeltaOutline) -> FileDelta {
        FileDelta {
            path: d.path,
            change: d.change,
            symbols_removed: Vec::new(),
            symbols_added: Vec::new(),
            edges_removed: Vec::new(),
            edges_added: Vec::new(),
        }
    }
}

fn delta_outlines<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<FileDelta>, D::Error> {
    struct Outlines;
    impl<'de> serde::de::Visitor<'de> for Outlines {
        type Value = Vec<FileDelta>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence of deltas")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<FileDelta>, A::Error> {
            let mut out = Vec::new();
            while let Some(d) = seq.next_element::<FileDeltaOutline>()? {
                out.push(d.into());
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Outlines)
}

#[derive(Deserialize)]
#[serde(remote = "CommitIndexed")]
struct CommitIndexedOutlineDef {
    commit: crate::model::CommitId,
    parents: Vec<crate::model::CommitId>,
    branch: Option<String>,
    summary: String,
    time: i64,
    base: Option<crate::model::CommitId>,
    #[serde(deserialize_with = "delta_outlines")]
    deltas: Vec<FileDelta>,
}

#[derive(Deserialize)]
#[serde(remote = "RolledBack")]
struct RolledBackOutlineDef {
    from: Option<crate::model::CommitId>,
    to: crate::model::CommitId,
    branch: Option<String>,
    git_head: Option<crate::model::CommitId>,
    #[serde(deserialize_with = "delta_outlines")]
    deltas: Vec<FileDelta>,
}

/// [`EventDef`] with the deltas of commits and rollbacks as outlines. The
/// variants are [`EventDef`]'s, in its order.
#[derive(Deserialize)]
#[serde(remote = "Event")]
enum EventOutlineDef {
    CommitIndexed(#[serde(with = "CommitIndexedOutlineDef")] CommitIndexed),
    BranchMoved(#[serde(with = "BranchMovedDef")] BranchMoved),
    CheckpointCreated(#[serde(with = "CheckpointCreatedDef")] CheckpointCreated),
    DecisionLogged(#[serde(with = "DecisionLoggedDef")] DecisionLogged),
    LessonProposed(#[serde(with = "LessonProposedDef")] LessonProposed),
    LessonAnalysisSubmitted(#[serde(with = "LessonAnalysisSubmittedDef")] LessonAnalysisSubmitted),
    LessonReviewed(#[serde(with = "LessonReviewedDef")] LessonReviewed),
    RolledBack(#[serde(with = "RolledBackOutlineDef")] RolledBack),
    CommitSkipped(#[serde(with = "CommitSkippedDef")] CommitSkipped),
}

#[derive(Deserialize)]
#[serde(remote = "Envelope")]
struct EnvelopeOutlineDef {
    version: u16,
    prev_hash: u64,
    written_ms: u64,
    #[serde(with = "EventOutlineDef")]
    event: Event,
}

/// An envelope read with its deltas as outlines (path and change): what
/// lineage and history need, in the memory of one delta at a time.
pub(crate) struct EnvelopeOutline(pub Envelope);
impl<'de> Deserialize<'de> for EnvelopeOutline {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        EnvelopeOutlineDef::deserialize(d).map(EnvelopeOutline)
    }
}

/// [`FileChange`] read in its stored layout.
struct FileChangeOwned(FileChange);
impl<'de> Deserialize<'de> for FileChangeOwned {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileChangeDef::deserialize(d).map(FileChangeOwned)
    }
}

/// Reads a commit's envelope keeping only the deltas of one path, whole;
/// the others are decoded past a delta at a time. Any other event is an
/// error (the caller reads it as an outline).
pub(crate) struct CommitKeeping<'k> {
    pub path: &'k str,
}

impl<'de> serde::de::DeserializeSeed<'de> for CommitKeeping<'_> {
    type Value = Envelope;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Envelope, D::Error> {
        const FIELDS: &[&str] = &["version", "prev_hash", "written_ms", "event"];
        d.deserialize_struct("EnvelopeDef", FIELDS, self)
    }
}

/// What each step of [`CommitKeeping`] reads: the envelope, its event, the
/// commit, its deltas, one delta.
macro_rules! expecting {
    ($what:literal) => {
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str($what)
        }
    };
}

fn next<'de, A: serde::de::SeqAccess<'de>, T: Deserialize<'de>>(
    seq: &mut A,
    what: &'static str,
) -> Result<T, A::Error> {
    seq.next_element::<T>()?
        .ok_or_else(|| serde::de::Error::custom(format!("missing {what}")))
}

impl<'de> serde::de::Visitor<'de> for CommitKeeping<'_> {
    type Value = Envelope;
    expecting!("an envelope");
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Envelope, A::Error> {
        let version = next::<A, u16>(&mut seq, "version")?;
        let prev_hash = next::<A, u64>(&mut seq, "prev_hash")?;
        let written_ms = next::<A, u64>(&mut seq, "written_ms")?;
        let commit = seq
            .next_element_seed(KeptEvent(self.path))?
            .ok_or_else(|| serde::de::Error::custom("missing event"))?;
        Ok(Envelope {
            version,
            prev_hash,
            written_ms,
            event: Event::CommitIndexed(commit),
        })
    }
}

struct KeptEvent<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for KeptEvent<'_> {
    type Value = CommitIndexed;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CommitIndexed, D::Error> {
        d.deserialize_enum("EventDef", &["CommitIndexed"], self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeptEvent<'_> {
    type Value = CommitIndexed;
    expecting!("an event");
    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<CommitIndexed, A::Error> {
        use serde::de::VariantAccess;
        let (tag, variant) = data.variant::<u32>()?;
        // `EventDef::CommitIndexed` is the first variant.
        if tag != 0 {
            return Err(serde::de::Error::custom("not a commit"));
        }
        variant.newtype_variant_seed(KeptCommit(self.0))
    }
}

struct KeptCommit<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for KeptCommit<'_> {
    type Value = CommitIndexed;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CommitIndexed, D::Error> {
        const FIELDS: &[&str] = &[
            "commit", "parents", "branch", "summary", "time", "base", "deltas",
        ];
        d.deserialize_struct("CommitIndexedDef", FIELDS, self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeptCommit<'_> {
    type Value = CommitIndexed;
    expecting!("a commit");
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<CommitIndexed, A::Error> {
        Ok(CommitIndexed {
            commit: next(&mut seq, "commit")?,
            parents: next(&mut seq, "parents")?,
            branch: next(&mut seq, "branch")?,
            summary: next(&mut seq, "summary")?,
            time: next(&mut seq, "time")?,
            base: next(&mut seq, "base")?,
            deltas: seq
                .next_element_seed(KeptDeltas(self.0))?
                .ok_or_else(|| serde::de::Error::custom("missing deltas"))?,
        })
    }
}

struct KeptDeltas<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for KeptDeltas<'_> {
    type Value = Vec<FileDelta>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<FileDelta>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeptDeltas<'_> {
    type Value = Vec<FileDelta>;
    expecting!("deltas");
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Vec<FileDelta>, A::Error> {
        let mut out = Vec::new();
        while let Some(kept) = seq.next_element_seed(KeptDelta(self.0))? {
            out.extend(kept);
        }
        Ok(out)
    }
}

struct KeptDelta<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for KeptDelta<'_> {
    type Value = Option<FileDelta>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<FileDelta>, D::Error> {
        const FIELDS: &[&str] = &[
            "path",
            "change",
            "symbols_removed",
            "symbols_added",
            "edges_removed",
            "edges_added",
        ];
        d.deserialize_struct("FileDeltaDef", FIELDS, self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeptDelta<'_> {
    type Value = Option<FileDelta>;
    expecting!("a delta");
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Option<FileDelta>, A::Error> {
        let path: String = next(&mut seq, "path")?;
        let change = next::<A, FileChangeOwned>(&mut seq, "change")?.0;
        if path != self.0 {
            next::<A, Past<crate::model::SymbolId>>(&mut seq, "symbols_removed")?;
            next::<A, Past<SymbolOwned>>(&mut seq, "symbols_added")?;
            next::<A, Past<EdgeOwned>>(&mut seq, "edges_removed")?;
            next::<A, Past<EdgeOwned>>(&mut seq, "edges_added")?;
            return Ok(None);
        }
        let symbols_removed = next(&mut seq, "symbols_removed")?;
        let symbols_added = next::<A, Vec<SymbolOwned>>(&mut seq, "symbols_added")?;
        let edges_removed = next::<A, Vec<EdgeOwned>>(&mut seq, "edges_removed")?;
        let edges_added = next::<A, Vec<EdgeOwned>>(&mut seq, "edges_added")?;
        Ok(Some(FileDelta {
            path,
            change,
            symbols_removed,
            symbols_added: symbols_added.into_iter().map(|s| s.0).collect(),
            edges_removed: edges_removed.into_iter().map(|e| e.0).collect(),
            edges_added: edges_added.into_iter().map(|e| e.0).collect(),
        }))
    }
}

/// A sequence of `T` decoded past (see [`read_past`]).
struct Past<T>(std::marker::PhantomData<T>);
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Past<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_past::<D, T>(d).map(|()| Past(std::marker::PhantomData))
    }
}

/// A file's row in the `files` view.
#[derive(Serialize, Deserialize)]
#[serde(remote = "FileRecord")]
pub(crate) struct FileRecordDef {
    path: String,
    blob: crate::model::BlobId,
    language: Option<crate::model::Language>,
    size: u64,
    lines: u32,
    #[serde(with = "FileStateDef")]
    state: FileState,
    #[serde(with = "diagnostics")]
    diagnostics: Vec<Diagnostic>,
    masked_secrets: u32,
    #[serde(with = "symbols")]
    symbols: Vec<Symbol>,
    #[serde(with = "edges")]
    edges: Vec<Edge>,
    #[serde(with = "FileRefsDef")]
    refs: FileRefs,
}
wrap!(FileViewRecordRef, FileViewOwned, FileRecord, FileRecordDef);

/// A view row made of borrowed parts, written exactly as [`FileRecordDef`]
/// writes a whole record: the same fields in the same order.
pub(crate) enum FileViewRef<'a> {
    Record(&'a FileRecord),
    Parts(ViewParts<'a>),
}

/// The parts of a view row, borrowed from where they already are (a first
/// index's deltas), so they are not copied to be written.
pub(crate) struct ViewParts<'a> {
    pub path: &'a str,
    pub meta: &'a FileMeta,
    pub symbols: &'a [Symbol],
    pub edges: &'a [Edge],
}

impl<'a> FileViewRef<'a> {
    pub(crate) fn of(rec: &'a FileRecord) -> Self {
        FileViewRef::Record(rec)
    }
}

impl Serialize for FileViewRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let p = match self {
            FileViewRef::Record(r) => return FileViewRecordRef(r).serialize(s),
            FileViewRef::Parts(p) => p,
        };
        let m = p.meta;
        let mut st = s.serialize_struct("FileRecordDef", 11)?;
        st.serialize_field("path", p.path)?;
        st.serialize_field("blob", &m.blob)?;
        st.serialize_field("language", &m.language)?;
        st.serialize_field("size", &m.size)?;
        st.serialize_field("lines", &m.lines)?;
        st.serialize_field("state", &FileStateRef(&m.state))?;
        st.serialize_field("diagnostics", &diagnostics::Slice(&m.diagnostics))?;
        st.serialize_field("masked_secrets", &m.masked_secrets)?;
        st.serialize_field("symbols", &symbols::Slice(p.symbols))?;
        st.serialize_field("edges", &edges::Slice(p.edges))?;
        st.serialize_field("refs", &FileRefsRef(&m.refs))?;
        st.end()
    }
}

/// A first index's record written as its deltas arrive: the bytes
/// [`EnvelopeDef`] writes for an `Event::CommitIndexed` holding them all
/// (the header's fields, then the deltas as a sequence of known length),
/// without the deltas ever being held together.
pub(crate) struct StreamedCommitRecord<'a, I> {
    pub version: u16,
    pub prev_hash: u64,
    pub written_ms: u64,
    /// The commit, its `deltas` empty: they come from `deltas`.
    pub commit: &'a CommitIndexed,
    pub len: usize,
    pub deltas: std::cell::RefCell<I>,
}

impl<I: Iterator<Item = FileDelta>> Serialize for StreamedCommitRecord<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("EnvelopeDef", 4)?;
        st.serialize_field("version", &self.version)?;
        st.serialize_field("prev_hash", &self.prev_hash)?;
        st.serialize_field("written_ms", &self.written_ms)?;
        st.serialize_field("event", &StreamedEvent(self))?;
        st.end()
    }
}

struct StreamedEvent<'r, 'a, I>(&'r StreamedCommitRecord<'a, I>);

impl<I: Iterator<Item = FileDelta>> Serialize for StreamedEvent<'_, '_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // `EventDef::CommitIndexed` is the first variant (pinned by the
        // byte-for-byte test in `store`).
        s.serialize_newtype_variant("EventDef", 0, "CommitIndexed", &StreamedCommit(self.0))
    }
}

struct StreamedCommit<'r, 'a, I>(&'r StreamedCommitRecord<'a, I>);

impl<I: Iterator<Item = FileDelta>> Serialize for StreamedCommit<'_, '_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let c = self.0.commit;
        let mut st = s.serialize_struct("CommitIndexedDef", 7)?;
        st.serialize_field("commit", &c.commit)?;
        st.serialize_field("parents", &c.parents)?;
        st.serialize_field("branch", &c.branch)?;
        st.serialize_field("summary", &c.summary)?;
        st.serialize_field("time", &c.time)?;
        st.serialize_field("base", &c.base)?;
        st.serialize_field("deltas", &StreamedDeltas(self.0))?;
        st.end()
    }
}

struct StreamedDeltas<'r, 'a, I>(&'r StreamedCommitRecord<'a, I>);

impl<I: Iterator<Item = FileDelta>> Serialize for StreamedDeltas<'_, '_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let len = self.0.len;
        let mut seq = s.serialize_seq(Some(len))?;
        let mut deltas = self.0.deltas.borrow_mut();
        for k in 0..len {
            let Some(d) = deltas.next() else {
                return Err(S::Error::custom(format!(
                    "{k} deltas of the {len} announced came"
                )));
            };
            seq.serialize_element(&FileDeltaRef(&d))?;
        }
        if deltas.next().is_some() {
            return Err(S::Error::custom(format!(
                "more than the {len} deltas announced came"
            )));
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EdgeKind, Language, SkipReason, SymbolKind};

    fn bytes<T: Serialize>(v: T) -> Vec<u8> {
        bincode::serde::encode_to_vec(v, super::super::config()).unwrap()
    }

    /// The field-less enums are stored by position: these positions are
    /// part of the format, so a reordering must fail here.
    #[test]
    fn enum_positions_are_pinned() {
        assert_eq!(bytes(Language::Python), [0]);
        assert_eq!(bytes(Language::Ruby), [9]);
        assert_eq!(bytes(Language::CSharp), [10]);
        assert_eq!(bytes(Language::Scala), [14]);
        assert_eq!(bytes(Language::Bash), [15]);
        assert_eq!(bytes(Language::Pascal), [33]);
        assert_eq!(bytes(SymbolKind::Module), [0]);
        assert_eq!(bytes(SymbolKind::EnumMember), [17]);
        assert_eq!(bytes(EdgeKind::Inherits), [3]);
        assert_eq!(bytes(SkipReason::UnsupportedLanguage), [2]);
    }
}
