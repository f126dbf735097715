//! Journal events and the versioned envelope they are stored in.
//!
//! The envelope is what makes the journal shippable: every record names its
//! format version, the hash of the record before it (a chain a verifier can
//! check) and when it was written.

use serde::{Deserialize, Serialize};

use crate::memory::{
    CheckpointCreated, DecisionLogged, LessonAnalysisSubmitted, LessonProposed, LessonReviewed,
};
use crate::model::{
    BlobId, CommitId, Diagnostic, Edge, FileRefs, FileState, Language, Symbol, SymbolId,
};

/// Format version of [`Envelope`] payloads written by this build.
pub const FORMAT_VERSION: u16 = 1;

/// Magic bytes that open every stored record.
pub const MAGIC: [u8; 4] = *b"SNOE";

/// One journal event. Events are facts about the past; they are never edited.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub enum Event {
    /// A commit's state was indexed; `deltas` move the views from the previous
    /// indexed state to this commit's.
    CommitIndexed(CommitIndexed),
    /// The branch the index follows pointed somewhere else.
    BranchMoved(BranchMoved),
    /// An agent saved where it is.
    CheckpointCreated(CheckpointCreated),
    /// An agent or a human recorded a design decision.
    DecisionLogged(DecisionLogged),
    /// A commit reverted another: a lesson candidate.
    LessonProposed(LessonProposed),
    /// An agent analysed a proposed lesson.
    LessonAnalysisSubmitted(LessonAnalysisSubmitted),
    /// A human approved or rejected a lesson.
    LessonReviewed(LessonReviewed),
}

impl Event {
    /// A short name of the event kind, as shown in logs.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Event::CommitIndexed(_) => "CommitIndexed",
            Event::BranchMoved(_) => "BranchMoved",
            Event::CheckpointCreated(_) => "CheckpointCreated",
            Event::DecisionLogged(_) => "DecisionLogged",
            Event::LessonProposed(_) => "LessonProposed",
            Event::LessonAnalysisSubmitted(_) => "LessonAnalysisSubmitted",
            Event::LessonReviewed(_) => "LessonReviewed",
        }
    }

    /// The file deltas the event applies to the views, if any.
    pub fn deltas(&self) -> &[FileDelta] {
        match self {
            Event::CommitIndexed(c) => &c.deltas,
            _ => &[],
        }
    }

    /// Whether the event is agent memory (checkpoint, decision, lesson).
    pub fn is_memory(&self) -> bool {
        !matches!(self, Event::CommitIndexed(_) | Event::BranchMoved(_))
    }
}

/// See [`Event::CommitIndexed`].
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct CommitIndexed {
    pub commit: CommitId,
    pub parents: Vec<CommitId>,
    /// The branch HEAD was on, `None` when detached.
    pub branch: Option<String>,
    /// The first line of the commit message.
    pub summary: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    /// The indexed commit these deltas apply on top of (`None` for the first).
    pub base: Option<CommitId>,
    pub deltas: Vec<FileDelta>,
}

/// See [`Event::BranchMoved`].
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct BranchMoved {
    pub branch: Option<String>,
    pub from: Option<CommitId>,
    pub to: CommitId,
}

/// Per-file metadata, replaced whole when a file's content changes.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct FileMeta {
    pub blob: BlobId,
    pub language: Option<Language>,
    pub size: u64,
    pub lines: u32,
    pub state: FileState,
    pub diagnostics: Vec<Diagnostic>,
    pub refs: FileRefs,
}

/// What changed in one file between two indexed states.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct FileDelta {
    pub path: String,
    pub change: FileChange,
    pub symbols_removed: Vec<SymbolId>,
    pub symbols_added: Vec<Symbol>,
    pub edges_removed: Vec<Edge>,
    pub edges_added: Vec<Edge>,
}

/// The kind of change a [`FileDelta`] records.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub enum FileChange {
    /// The file appeared.
    Added(FileMeta),
    /// The file's content (or how it was indexed) changed.
    Modified(FileMeta),
    /// The file is gone; its symbols and edges are all removed.
    Deleted,
    /// Only edges changed, because something they resolve against changed.
    Reresolved,
}

/// A stored record: an event in its envelope.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct Envelope {
    pub version: u16,
    /// xxh3-64 of the previous record's bytes (0 for the first record).
    pub prev_hash: u64,
    /// Wall-clock time of writing, milliseconds since the epoch.
    pub written_ms: u64,
    pub event: Event,
}

/// Errors decoding a stored record.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("record does not start with the SNOE magic bytes")]
    BadMagic,
    #[error("record format version {0} is newer than this build understands ({FORMAT_VERSION})")]
    UnknownVersion(u16),
    #[error("record payload does not decode: {0}")]
    Payload(String),
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

impl Envelope {
    /// Encodes the record: magic, version (LE u16), then the bincode payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        bincode::serde::encode_into_std_write(self, &mut out, bincode_config())
            .expect("encoding plain structs into a Vec cannot fail");
        out
    }

    /// Decodes a stored record.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, DecodeError> {
        if bytes.len() < 6 || bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version > FORMAT_VERSION {
            return Err(DecodeError::UnknownVersion(version));
        }
        let (env, _): (Envelope, usize) =
            bincode::serde::decode_from_slice(&bytes[6..], bincode_config())
                .map_err(|e| DecodeError::Payload(e.to_string()))?;
        Ok(env)
    }
}

/// Hash of a stored record's bytes, chained into the next record.
pub fn record_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Encodes any plain value the journal stores in a view.
pub(crate) fn encode_value<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, bincode_config()).expect("encoding plain structs cannot fail")
}

/// Decodes a value stored with [`encode_value`].
pub(crate) fn decode_value<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    bincode::serde::decode_from_slice(bytes, bincode_config())
        .map(|(v, _)| v)
        .map_err(|e| DecodeError::Payload(e.to_string()))
}
