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
    // Appended: earlier records never hold it, and their positions stand.
    Shadowed,
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
/// in `EVENT_VARIANTS`, which partial reads match tags with.
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

/// How a partial read takes the deltas of commits and rollbacks.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DeltasRead<'k> {
    /// Each delta's path and change; what it added and removed is read
    /// past.
    Outlines,
    /// The deltas of one path whole; the others not at all.
    Of(&'k str),
}

/// An envelope read as its [`DeltasRead`] says, a delta at a time: what a
/// delta added and removed is never held unless it is kept (bincode's
/// layout is not self-describing: an element is decoded to be skipped,
/// and dropped at once). Every other field is read as stored.
pub(crate) struct PartialEnvelope<'k>(pub DeltasRead<'k>);

/// The [`EventDef`] variants in order: a variant's position is its tag.
const EVENT_VARIANTS: &[&str] = &[
    "CommitIndexed",
    "BranchMoved",
    "CheckpointCreated",
    "DecisionLogged",
    "LessonProposed",
    "LessonAnalysisSubmitted",
    "LessonReviewed",
    "RolledBack",
    "CommitSkipped",
];
wrap!(
    BranchMovedRef,
    BranchMovedOwned,
    BranchMoved,
    BranchMovedDef
);
wrap!(
    CheckpointRef,
    CheckpointOwned,
    CheckpointCreated,
    CheckpointCreatedDef
);
wrap!(
    DecisionRef,
    DecisionOwned,
    DecisionLogged,
    DecisionLoggedDef
);
wrap!(LessonRef, LessonOwned, LessonProposed, LessonProposedDef);
wrap!(
    AnalysisRef,
    AnalysisOwned,
    LessonAnalysisSubmitted,
    LessonAnalysisSubmittedDef
);
wrap!(ReviewRef, ReviewOwned, LessonReviewed, LessonReviewedDef);
wrap!(SkippedRef, SkippedOwned, CommitSkipped, CommitSkippedDef);

/// [`FileChange`] read in its stored layout.
struct FileChangeOwned(FileChange);
impl<'de> Deserialize<'de> for FileChangeOwned {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileChangeDef::deserialize(d).map(FileChangeOwned)
    }
}

/// A sequence of `T` decoded past, each element dropped at once.
struct Past<T>(std::marker::PhantomData<T>);
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Past<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Past::<T>(std::marker::PhantomData))
    }
}
impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Past<T> {
    type Value = Past<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Past<T>, A::Error> {
        while seq.next_element::<T>()?.is_some() {}
        Ok(self)
    }
}

/// The next field of a struct read as a sequence (bincode's layout).
fn next<'de, A: serde::de::SeqAccess<'de>, T: Deserialize<'de>>(
    seq: &mut A,
    what: &'static str,
) -> Result<T, A::Error> {
    seq.next_element::<T>()?
        .ok_or_else(|| serde::de::Error::custom(format!("missing {what}")))
}

/// The next field, read by `seed`.
fn next_seeded<'de, A: serde::de::SeqAccess<'de>, S: serde::de::DeserializeSeed<'de>>(
    seq: &mut A,
    seed: S,
    what: &'static str,
) -> Result<S::Value, A::Error> {
    seq.next_element_seed(seed)?
        .ok_or_else(|| serde::de::Error::custom(format!("missing {what}")))
}

/// The seed of one step of a [`PartialEnvelope`] read: how its part of
/// the layout is asked of the deserializer (its visitor reads it).
macro_rules! partial_step {
    ($seed:ident, $value:ty, |$d:ident, $me:ident| $start:expr) => {
        impl<'de> serde::de::DeserializeSeed<'de> for $seed<'_> {
            type Value = $value;
            fn deserialize<D: Deserializer<'de>>(self, $d: D) -> Result<$value, D::Error> {
                let $me = self;
                $start
            }
        }
    };
}

partial_step!(PartialEnvelope, Envelope, |d, me| {
    d.deserialize_struct(
        "EnvelopeDef",
        &["version", "prev_hash", "written_ms", "event"],
        me,
    )
});

impl<'de> serde::de::Visitor<'de> for PartialEnvelope<'_> {
    type Value = Envelope;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Envelope, A::Error> {
        Ok(Envelope {
            version: next(&mut seq, "version")?,
            prev_hash: next(&mut seq, "prev_hash")?,
            written_ms: next(&mut seq, "written_ms")?,
            event: next_seeded(&mut seq, PartialEvent(self.0), "event")?,
        })
    }
}

struct PartialEvent<'k>(DeltasRead<'k>);

partial_step!(PartialEvent, Event, |d, me| {
    d.deserialize_enum("EventDef", EVENT_VARIANTS, me)
});

impl<'de> serde::de::Visitor<'de> for PartialEvent<'_> {
    type Value = Event;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Event, A::Error> {
        use serde::de::VariantAccess;
        let (tag, v) = data.variant::<u32>()?;
        Ok(match EVENT_VARIANTS.get(tag as usize).copied() {
            Some("CommitIndexed") => {
                Event::CommitIndexed(v.newtype_variant_seed(PartialCommit(self.0))?)
            }
            Some("BranchMoved") => Event::BranchMoved(v.newtype_variant::<BranchMovedOwned>()?.0),
            Some("CheckpointCreated") => {
                Event::CheckpointCreated(v.newtype_variant::<CheckpointOwned>()?.0)
            }
            Some("DecisionLogged") => {
                Event::DecisionLogged(v.newtype_variant::<DecisionOwned>()?.0)
            }
            Some("LessonProposed") => Event::LessonProposed(v.newtype_variant::<LessonOwned>()?.0),
            Some("LessonAnalysisSubmitted") => {
                Event::LessonAnalysisSubmitted(v.newtype_variant::<AnalysisOwned>()?.0)
            }
            Some("LessonReviewed") => Event::LessonReviewed(v.newtype_variant::<ReviewOwned>()?.0),
            Some("RolledBack") => {
                Event::RolledBack(v.newtype_variant_seed(PartialRollback(self.0))?)
            }
            Some("CommitSkipped") => Event::CommitSkipped(v.newtype_variant::<SkippedOwned>()?.0),
            _ => return Err(serde::de::Error::custom(format!("unknown event tag {tag}"))),
        })
    }
}

struct PartialCommit<'k>(DeltasRead<'k>);

partial_step!(PartialCommit, CommitIndexed, |d, me| {
    d.deserialize_struct(
        "CommitIndexedDef",
        &[
            "commit", "parents", "branch", "summary", "time", "base", "deltas",
        ],
        me,
    )
});

impl<'de> serde::de::Visitor<'de> for PartialCommit<'_> {
    type Value = CommitIndexed;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
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
            deltas: next_seeded(&mut seq, PartialDeltas(self.0), "deltas")?,
        })
    }
}

struct PartialRollback<'k>(DeltasRead<'k>);

partial_step!(PartialRollback, RolledBack, |d, me| {
    d.deserialize_struct(
        "RolledBackDef",
        &["from", "to", "branch", "git_head", "deltas"],
        me,
    )
});

impl<'de> serde::de::Visitor<'de> for PartialRollback<'_> {
    type Value = RolledBack;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RolledBack, A::Error> {
        Ok(RolledBack {
            from: next(&mut seq, "from")?,
            to: next(&mut seq, "to")?,
            branch: next(&mut seq, "branch")?,
            git_head: next(&mut seq, "git_head")?,
            deltas: next_seeded(&mut seq, PartialDeltas(self.0), "deltas")?,
        })
    }
}

struct PartialDeltas<'k>(DeltasRead<'k>);

partial_step!(PartialDeltas, Vec<FileDelta>, |d, me| d.deserialize_seq(me));

impl<'de> serde::de::Visitor<'de> for PartialDeltas<'_> {
    type Value = Vec<FileDelta>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Vec<FileDelta>, A::Error> {
        let mut out = Vec::new();
        while let Some(kept) = seq.next_element_seed(PartialDelta(self.0))? {
            out.extend(kept);
        }
        Ok(out)
    }
}

struct PartialDelta<'k>(DeltasRead<'k>);

partial_step!(PartialDelta, Option<FileDelta>, |d, me| {
    d.deserialize_struct(
        "FileDeltaDef",
        &[
            "path",
            "change",
            "symbols_removed",
            "symbols_added",
            "edges_removed",
            "edges_added",
        ],
        me,
    )
});

impl<'de> serde::de::Visitor<'de> for PartialDelta<'_> {
    type Value = Option<FileDelta>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record in the current layout")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Option<FileDelta>, A::Error> {
        let path: String = next(&mut seq, "path")?;
        let change = next::<A, FileChangeOwned>(&mut seq, "change")?.0;
        if matches!(self.0, DeltasRead::Of(p) if p == path) {
            // In the layout's order.
            let symbols_removed = next(&mut seq, "symbols_removed")?;
            let symbols_added: Vec<SymbolOwned> = next(&mut seq, "symbols_added")?;
            let edges_removed: Vec<EdgeOwned> = next(&mut seq, "edges_removed")?;
            let edges_added: Vec<EdgeOwned> = next(&mut seq, "edges_added")?;
            return Ok(Some(FileDelta {
                path,
                change,
                symbols_removed,
                symbols_added: symbols_added.into_iter().map(|s| s.0).collect(),
                edges_removed: edges_removed.into_iter().map(|e| e.0).collect(),
                edges_added: edges_added.into_iter().map(|e| e.0).collect(),
            }));
        }
        next::<A, Past<crate::model::SymbolId>>(&mut seq, "symbols_removed")?;
        next::<A, Past<SymbolOwned>>(&mut seq, "symbols_added")?;
        next::<A, Past<EdgeOwned>>(&mut seq, "edges_removed")?;
        next::<A, Past<EdgeOwned>>(&mut seq, "edges_added")?;
        Ok(match self.0 {
            DeltasRead::Outlines => Some(FileDelta {
                path,
                change,
                symbols_removed: Vec::new(),
                symbols_added: Vec::new(),
                edges_removed: Vec::new(),
                edges_added: Vec::new(),
            }),
            DeltasRead::Of(_) => None,
        })
    }
}

/// A file's row in the `files` view ([`FileRecordDef`]) and its leading
/// fields through the symbols ([`FileHeadDef`]), from one list: the head
/// must stay a prefix of the row, since bincode reads fields in order.
macro_rules! file_record_layouts {
    ($($head:tt)*) => {
        /// A file's row in the `files` view.
        #[derive(Serialize, Deserialize)]
        #[serde(remote = "FileRecord")]
        pub(crate) struct FileRecordDef {
            $($head)*
            #[serde(with = "edges")]
            edges: Vec<Edge>,
            #[serde(with = "FileRefsDef")]
            refs: FileRefs,
        }

        /// The leading fields of a [`FileRecordDef`] row, through its
        /// symbols: what an answer quotes of a file. The edges and
        /// references that follow are most of a row's decoding (22 of 26
        /// bincode samples in a profile of a cold search over a registry's
        /// sources), and bincode reads the fields in order, so
        /// decoding stops before them.
        #[derive(Deserialize)]
        pub(crate) struct FileHeadDef {
            $($head)*
        }
    };
}

file_record_layouts! {
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
}
wrap!(FileViewRecordRef, FileViewOwned, FileRecord, FileRecordDef);

impl FileHeadDef {
    /// The record, with no edges and no references.
    pub(crate) fn into_record(self) -> FileRecord {
        FileRecord {
            path: self.path,
            blob: self.blob,
            language: self.language,
            size: self.size,
            lines: self.lines,
            state: self.state,
            diagnostics: self.diagnostics,
            masked_secrets: self.masked_secrets,
            symbols: self.symbols,
            edges: Vec::new(),
            refs: FileRefs::default(),
        }
    }
}

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
