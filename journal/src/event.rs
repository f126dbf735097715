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

/// Format version of [`Envelope`] records written by this build.
///
/// 1: magic, version, then the bincode payload. 2: magic, version, a codec
/// byte ([`Codec`]), then the payload, lz4-compressed when large. 3: as 2;
/// the events may include [`Event::RolledBack`], which a build of version 2
/// would misread, so it stops at such records with "newer than this build"
/// instead. 4: as 3, in the payload layout of [`crate::stored`]'s `current`
/// (edges carry their certainty, files their count of masked secrets).
/// 5: as 4; a large commit's payload may be an lz4 frame
/// ([`Codec::Lz4Frame`]), written as it is encoded. 6: as 5; such a
/// payload is a zstd frame instead ([`Codec::ZstdFrame`]).
/// Records of every version are read, older layouts upcast.
pub const FORMAT_VERSION: u16 = 6;

/// How a version-2 record's payload is stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Codec {
    Raw = 0,
    /// An lz4 block with its decompressed size in front (`lz4_flex`).
    Lz4 = 1,
    /// An lz4 frame (`lz4_flex::frame`): the payload compressed as it is
    /// encoded, so a first index's payload (hundreds of MB on millions of
    /// lines) is never held whole beside its compressed bytes. Written by
    /// format 5.
    Lz4Frame = 2,
    /// A zstd frame, made as an lz4 frame was. A first index's record is
    /// the largest thing in a database: on 8.4M lines 523 MB of payload
    /// were 237 MB as an lz4 frame (0.8 s of CPU), 161 MB at zstd's level
    /// 2 (1.5 s), read back in 0.5 s.
    ZstdFrame = 3,
}

/// The zstd level of [`Codec::ZstdFrame`] records.
const ZSTD_LEVEL: i32 = 2;

/// A commit with at least this many file deltas is encoded straight into
/// a zstd frame ([`Codec::ZstdFrame`]): big enough that the payload would be
/// compressed anyway, and its size is not known before it is encoded.
const STREAM_FROM_DELTAS: usize = 1024;

/// Payloads at least this large are compressed. A first index's record holds
/// every symbol and edge of the repository and shrinks to about a third:
/// writing it and syncing it to disk was most of that commit's time.
const COMPRESS_FROM: usize = 64 * 1024;

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
    /// The index was moved back to an earlier journaled commit's state
    /// (`sno rollback`). Bincode tags variants by position, so new events go
    /// last and older records keep their meaning.
    RolledBack(RolledBack),
    /// A commit of the history could not be indexed (its objects cannot be
    /// read); the run went on without it.
    CommitSkipped(CommitSkipped),
}

/// See [`Event::CommitSkipped`].
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct CommitSkipped {
    pub commit: CommitId,
    /// Why, as git said it.
    pub reason: String,
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
            Event::RolledBack(_) => "RolledBack",
            Event::CommitSkipped(_) => "CommitSkipped",
        }
    }

    /// The file deltas the event applies to the views, if any.
    pub fn deltas(&self) -> &[FileDelta] {
        match self {
            Event::CommitIndexed(c) => &c.deltas,
            Event::RolledBack(r) => &r.deltas,
            _ => &[],
        }
    }

    /// Whether the event is agent memory (checkpoint, decision, lesson).
    pub fn is_memory(&self) -> bool {
        !matches!(
            self,
            Event::CommitIndexed(_)
                | Event::BranchMoved(_)
                | Event::RolledBack(_)
                | Event::CommitSkipped(_)
        )
    }

    /// The commit (and branch) the index is at after this event, for the
    /// events that move the views.
    pub fn indexed_commit(&self) -> Option<(CommitId, Option<&str>)> {
        match self {
            Event::CommitIndexed(c) => Some((c.commit, c.branch.as_deref())),
            Event::RolledBack(r) => Some((r.to, r.branch.as_deref())),
            _ => None,
        }
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

/// See [`Event::RolledBack`]. The deltas take the views from the state
/// before the event to the state at `to`, so replay treats it like a
/// commit's deltas and nothing before it is rewritten.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct RolledBack {
    /// The commit the index was at.
    pub from: Option<CommitId>,
    /// The journaled commit whose state the index is at now.
    pub to: CommitId,
    /// The branch recorded when `to` was indexed.
    pub branch: Option<String>,
    /// The commit git's HEAD pointed to when the rollback was made: while
    /// HEAD stays there, a watcher leaves the rolled-back index alone.
    pub git_head: Option<CommitId>,
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
    /// See [`crate::model::FileRecord::masked_secrets`].
    pub masked_secrets: u32,
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

/// A record whose payload `write` encodes into a zstd frame as it is made,
/// written into `out` as it comes (the payload of a commit of many deltas
/// is never held whole, and with a sink that passes the bytes on, neither
/// is the record).
pub(crate) fn framed_record_into<W: std::io::Write>(
    mut out: W,
    write: impl FnOnce(
        &mut std::io::BufWriter<zstd::stream::write::Encoder<'static, W>>,
    ) -> Result<(), String>,
) -> Result<W, String> {
    let mut head = MAGIC.to_vec();
    head.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    head.push(Codec::ZstdFrame as u8);
    out.write_all(&head).map_err(|e| e.to_string())?;
    let mut frame =
        zstd::stream::write::Encoder::new(out, ZSTD_LEVEL).map_err(|e| e.to_string())?;
    // A cut or damaged record is then an error, never a shorter payload.
    frame.include_checksum(true).map_err(|e| e.to_string())?;
    // bincode writes a field at a time: each write into the encoder costs
    // a call into zstd (most of its time on a first index, unbuffered).
    let mut buffered = std::io::BufWriter::with_capacity(1 << 17, frame);
    write(&mut buffered)?;
    let frame = buffered.into_inner().map_err(|e| e.error().to_string())?;
    frame.finish().map_err(|e| e.to_string())
}

/// The payload of a [`Codec::ZstdFrame`] record, as it is read.
fn zstd_frame(frame: &[u8]) -> Result<impl std::io::Read + '_, DecodeError> {
    zstd::stream::read::Decoder::with_buffer(frame).map_err(|e| DecodeError::Payload(e.to_string()))
}

impl Envelope {
    /// Encodes the record: magic, version (LE u16), a codec byte, then the
    /// bincode payload, lz4-compressed if it is large.
    pub fn encode(&self) -> Vec<u8> {
        if self.event.deltas().len() >= STREAM_FROM_DELTAS {
            return self.encode_streamed();
        }
        let payload = crate::stored::encode_envelope(self);
        // lz4_flex stores the size as a u32: larger payloads stay raw.
        let (codec, body) = if (COMPRESS_FROM..u32::MAX as usize).contains(&payload.len()) {
            (Codec::Lz4, lz4_flex::block::compress_prepend_size(&payload))
        } else {
            (Codec::Raw, payload)
        };
        let mut out = Vec::with_capacity(7 + body.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.push(codec as u8);
        out.extend_from_slice(&body);
        out
    }

    /// The record with its payload encoded into a zstd frame as it is made.
    fn encode_streamed(&self) -> Vec<u8> {
        framed_record_into(Vec::new(), |frame| {
            crate::stored::encode_envelope_into(self, frame);
            Ok(())
        })
        .expect("compressing into a Vec cannot fail")
    }

    /// Decodes a stored record of any version this build knows.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, DecodeError> {
        if bytes.len() < 6 || bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version > FORMAT_VERSION {
            return Err(DecodeError::UnknownVersion(version));
        }
        let inflated;
        let payload = match (version, bytes.get(6)) {
            (0 | 1, _) => &bytes[6..],
            (_, Some(&c)) if c == Codec::Raw as u8 => &bytes[7..],
            (_, Some(&c)) if c == Codec::Lz4 as u8 => {
                inflated = inflate(&bytes[7..])?;
                &inflated[..]
            }
            (5.., Some(&c)) if c == Codec::Lz4Frame as u8 => {
                let mut out = Vec::new();
                std::io::Read::read_to_end(
                    &mut lz4_flex::frame::FrameDecoder::new(&bytes[7..]),
                    &mut out,
                )
                .map_err(|e| DecodeError::Payload(e.to_string()))?;
                inflated = out;
                &inflated[..]
            }
            (6.., Some(&c)) if c == Codec::ZstdFrame as u8 => {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut zstd_frame(&bytes[7..])?, &mut out)
                    .map_err(|e| DecodeError::Payload(e.to_string()))?;
                inflated = out;
                &inflated[..]
            }
            (_, c) => return Err(DecodeError::Payload(format!("unknown payload codec {c:?}"))),
        };
        crate::stored::decode_envelope(version, payload)
    }
}

impl Envelope {
    /// Decodes a stored record as [`Envelope::decode`] does, with the
    /// deltas of commits and rollbacks cut to their outlines (path and
    /// change; what they added and removed left empty). A commit of a whole
    /// repository is read a delta at a time, never held whole or inflated:
    /// what lineage and history facts need.
    pub fn decode_outline(bytes: &[u8]) -> Result<Envelope, DecodeError> {
        Self::decode_partial(bytes, crate::stored::DeltasRead::Outlines)
    }

    /// Decodes a stored record as [`Envelope::decode`] does, except that
    /// the deltas of commits and rollbacks are those of `path` alone, whole:
    /// one file's history in the memory of one delta.
    pub fn decode_keeping(bytes: &[u8], path: &str) -> Result<Envelope, DecodeError> {
        Self::decode_partial(bytes, crate::stored::DeltasRead::Of(path))
    }

    fn decode_partial(
        bytes: &[u8],
        deltas: crate::stored::DeltasRead<'_>,
    ) -> Result<Envelope, DecodeError> {
        if bytes.len() < 6 || bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        match (version, bytes.get(6)) {
            (5.., Some(&c)) if c == Codec::Lz4Frame as u8 => {
                let mut frame = lz4_flex::frame::FrameDecoder::new(&bytes[7..]);
                crate::stored::decode_envelope_partial(version, &mut frame, deltas)
            }
            (6.., Some(&c)) if c == Codec::ZstdFrame as u8 => {
                let mut frame = zstd_frame(&bytes[7..])?;
                crate::stored::decode_envelope_partial(version, &mut frame, deltas)
            }
            (4.., Some(&c)) if c == Codec::Raw as u8 => {
                crate::stored::decode_envelope_partial(version, &mut &bytes[7..], deltas)
            }
            // An older layout or an lz4 block: a record of at most a few
            // MB, read whole and cut.
            _ => Envelope::decode(bytes).map(|env| crate::stored::cut(env, deltas)),
        }
    }
}

/// Decompresses an lz4 block with its size in front, refusing a size the
/// block could not hold (lz4 expands at most about 255 times), so a damaged
/// record is an error and not a huge allocation.
fn inflate(block: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let size = block
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| DecodeError::Payload("truncated compressed payload".into()))?;
    if size > block.len().saturating_mul(255) {
        return Err(DecodeError::Payload(format!(
            "compressed payload claims {size} bytes from {}",
            block.len()
        )));
    }
    lz4_flex::block::decompress_size_prepended(block)
        .map_err(|e| DecodeError::Payload(e.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(summary: String) -> Envelope {
        Envelope {
            version: FORMAT_VERSION,
            prev_hash: 7,
            written_ms: 1,
            event: Event::CommitIndexed(CommitIndexed {
                commit: CommitId([3; 20]),
                parents: vec![CommitId([2; 20])],
                branch: Some("main".into()),
                summary,
                time: 1_700_000_000,
                base: None,
                deltas: Vec::new(),
            }),
        }
    }

    #[test]
    fn small_records_are_stored_raw_and_large_ones_compressed() {
        let small = commit("fix".into());
        let bytes = small.encode();
        assert_eq!(bytes[6], Codec::Raw as u8);
        assert_eq!(Envelope::decode(&bytes).unwrap(), small);

        let text: String = (0..20_000)
            .map(|i| format!("symbol_{} ", i % 500))
            .collect();
        let large = commit(text.clone());
        let bytes = large.encode();
        assert_eq!(bytes[6], Codec::Lz4 as u8);
        assert!(
            bytes.len() * 3 < text.len(),
            "{} of {}",
            bytes.len(),
            text.len()
        );
        assert_eq!(Envelope::decode(&bytes).unwrap(), large);
    }

    /// A first index's record is compressed as it is encoded (a zstd
    /// frame), and reads back as the event; a version-5 record cannot
    /// claim that codec, and a cut frame is an error. Records of format 5,
    /// in an lz4 frame, still read back.
    #[test]
    fn a_commit_of_many_files_is_compressed_as_it_is_encoded() {
        let deltas: Vec<FileDelta> = (0..STREAM_FROM_DELTAS + 3)
            .map(|i| {
                let rec = crate::test_support::record(
                    &format!("src/module_{i}.py"),
                    (i % 251) as u8,
                    &["load", "save", "parse_config"],
                );
                crate::delta::diff(&rec.path.clone(), None, Some(&rec)).unwrap()
            })
            .collect();
        let mut env = commit("first index".into());
        let Event::CommitIndexed(c) = &mut env.event else {
            unreachable!()
        };
        c.deltas = deltas;
        let bytes = env.encode();
        assert_eq!(bytes[6], Codec::ZstdFrame as u8);
        let payload = crate::stored::encode_envelope(&env);
        assert!(
            bytes.len() * 3 < payload.len(),
            "{} of {}",
            bytes.len(),
            payload.len()
        );
        assert_eq!(Envelope::decode(&bytes).unwrap(), env);
        assert!(Envelope::decode(&bytes[..bytes.len() / 2]).is_err());
        assert!(Envelope::decode(&bytes[..bytes.len() - 2]).is_err());
        let mut older = bytes.clone();
        older[4..6].copy_from_slice(&5u16.to_le_bytes());
        assert!(matches!(
            Envelope::decode(&older),
            Err(DecodeError::Payload(_))
        ));
        // What format 5 wrote: the same payload in an lz4 frame.
        let mut v5 = Envelope {
            version: 5,
            ..env.clone()
        };
        let mut lz4 = MAGIC.to_vec();
        lz4.extend_from_slice(&5u16.to_le_bytes());
        lz4.push(Codec::Lz4Frame as u8);
        let mut frame = lz4_flex::frame::FrameEncoder::new(lz4);
        crate::stored::encode_envelope_into(&v5, &mut frame);
        let lz4 = frame.finish().unwrap();
        assert_eq!(Envelope::decode(&lz4).unwrap(), v5);
        let outline = Envelope::decode_outline(&lz4).unwrap();
        assert_eq!(outline.event.deltas().len(), v5.event.deltas().len());
        v5.version = FORMAT_VERSION;
        assert_eq!(v5, env);
    }

    #[test]
    fn an_outline_holds_every_field_but_what_deltas_added_and_removed() {
        let outline_of = |env: &Envelope| {
            let mut o = env.clone();
            if let Event::CommitIndexed(c) = &mut o.event {
                for d in &mut c.deltas {
                    d.symbols_removed.clear();
                    d.symbols_added.clear();
                    d.edges_removed.clear();
                    d.edges_added.clear();
                }
            }
            o
        };
        let deltas = |n: usize| -> Vec<FileDelta> {
            (0..n)
                .map(|i| {
                    let old = crate::test_support::record(
                        &format!("src/m_{i}.py"),
                        (i % 251) as u8,
                        &["load"],
                    );
                    let new = crate::test_support::record(
                        &format!("src/m_{i}.py"),
                        (i % 251) as u8 + 1,
                        &["load", "save"],
                    );
                    crate::delta::diff(&old.path.clone(), Some(&old), Some(&new)).unwrap()
                })
                .collect()
        };
        // Raw (small), an lz4 block (large), a zstd frame (many files).
        for n in [1, 900, STREAM_FROM_DELTAS + 3] {
            let mut env = commit("edit".into());
            let Event::CommitIndexed(c) = &mut env.event else {
                unreachable!()
            };
            c.deltas = deltas(n);
            assert!(c.deltas.iter().all(|d| !d.symbols_added.is_empty()));
            let bytes = env.encode();
            let outline = Envelope::decode_outline(&bytes).unwrap();
            assert_eq!(outline, outline_of(&env), "{n} deltas");
            assert_ne!(outline, env);
            assert!(Envelope::decode_outline(&bytes[..bytes.len() - 9]).is_err());
        }
        // Events without deltas come whole.
        let moved = Envelope {
            version: FORMAT_VERSION,
            prev_hash: 1,
            written_ms: 2,
            event: Event::BranchMoved(crate::event::BranchMoved {
                branch: Some("dev".into()),
                from: Some(CommitId([1; 20])),
                to: CommitId([2; 20]),
            }),
        };
        assert_eq!(Envelope::decode_outline(&moved.encode()).unwrap(), moved);
    }

    /// Every event reads partially as it reads whole, its deltas cut: a
    /// partial read matches tags with the layout's variants by position,
    /// so an event added to one and not the other fails here.
    #[test]
    fn every_event_reads_partially_as_it_reads_whole() {
        use crate::memory::*;
        let bound = Binding {
            branch: Some("main".into()),
            commit: Some(CommitId([4; 20])),
            session: "s1".into(),
        };
        let id = || MemoryId("dec_1".into());
        let rec = crate::test_support::record("src/a.py", 3, &["load"]);
        let delta = crate::delta::diff("src/a.py", None, Some(&rec)).unwrap();
        let mut events = vec![
            commit("c".into()).event,
            Event::BranchMoved(BranchMoved {
                branch: None,
                from: None,
                to: CommitId([2; 20]),
            }),
            Event::CheckpointCreated(CheckpointCreated {
                id: id(),
                bound: bound.clone(),
                name: "n".into(),
                summary: "s".into(),
                files: vec!["a.py".into()],
                tokens_used: Some(3),
            }),
            Event::DecisionLogged(DecisionLogged {
                id: id(),
                bound: bound.clone(),
                title: "t".into(),
                rationale: "r".into(),
                files: vec![],
            }),
            Event::LessonProposed(LessonProposed {
                id: id(),
                bound: bound.clone(),
                reverted: Some(CommitId([5; 20])),
                summary: "s".into(),
                files: vec![],
            }),
            Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
                lesson: id(),
                bound,
                analysis: "a".into(),
                rule: "r".into(),
            }),
            Event::LessonReviewed(LessonReviewed {
                lesson: id(),
                approved: true,
                reviewer: "me".into(),
                note: "ok".into(),
            }),
            Event::RolledBack(RolledBack {
                from: Some(CommitId([3; 20])),
                to: CommitId([2; 20]),
                branch: None,
                git_head: None,
                deltas: vec![delta.clone()],
            }),
            Event::CommitSkipped(CommitSkipped {
                commit: CommitId([6; 20]),
                reason: "gone".into(),
            }),
        ];
        if let Event::CommitIndexed(c) = &mut events[0] {
            c.deltas = vec![delta];
        }
        for event in events {
            let env = Envelope {
                version: FORMAT_VERSION,
                prev_hash: 9,
                written_ms: 8,
                event,
            };
            let bytes = env.encode();
            let outline = crate::stored::cut(env.clone(), crate::stored::DeltasRead::Outlines);
            assert_eq!(Envelope::decode_outline(&bytes).unwrap(), outline);
            let kept = Envelope::decode_keeping(&bytes, "src/a.py").unwrap();
            assert_eq!(kept, env, "{}", env.event.kind_name());
        }
    }

    #[test]
    fn a_record_kept_for_one_path_holds_that_path_s_deltas_whole_and_no_other() {
        for n in [1, 900, STREAM_FROM_DELTAS + 3] {
            let mut env = commit("edit".into());
            let Event::CommitIndexed(c) = &mut env.event else {
                unreachable!()
            };
            c.deltas = (0..n)
                .map(|i| {
                    let rec = crate::test_support::record(
                        &format!("src/k_{i}.py"),
                        (i % 251) as u8,
                        &["load", "save"],
                    );
                    crate::delta::diff(&rec.path.clone(), None, Some(&rec)).unwrap()
                })
                .collect();
            let bytes = env.encode();
            let path = format!("src/k_{}.py", n / 2);
            let kept = Envelope::decode_keeping(&bytes, &path).unwrap();
            let mut expected = env.clone();
            if let Event::CommitIndexed(c) = &mut expected.event {
                c.deltas.retain(|d| d.path == path);
                assert_eq!(c.deltas.len(), 1);
                assert_eq!(c.deltas[0].symbols_added.len(), 2);
            }
            assert_eq!(kept, expected, "{n} deltas");
            let none = Envelope::decode_keeping(&bytes, "elsewhere.py").unwrap();
            let Event::CommitIndexed(c) = &none.event else {
                panic!("{none:?}")
            };
            assert!(c.deltas.is_empty());
            assert!(Envelope::decode_keeping(&bytes[..bytes.len() - 9], &path).is_err());
        }
    }

    #[test]
    fn version_one_records_still_decode() {
        let mut env = commit("written by an older sno".into());
        env.version = 1;
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&1u16.to_le_bytes());
        bytes.extend(bincode::serde::encode_to_vec(&env, bincode_config()).unwrap());
        assert_eq!(Envelope::decode(&bytes).unwrap(), env);
    }

    #[test]
    fn version_two_records_still_decode() {
        // Version 2's layout is version 3's; only the events it may hold grew.
        for text in ["small".to_string(), "w ".repeat(50_000)] {
            let mut env = commit(text);
            env.version = 2;
            let mut bytes = env.encode();
            bytes[4..6].copy_from_slice(&2u16.to_le_bytes());
            assert_eq!(Envelope::decode(&bytes).unwrap(), env);
        }
    }

    #[test]
    fn damaged_records_are_errors() {
        let text: String = (0..20_000).map(|i| format!("w{} ", i % 300)).collect();
        let bytes = commit(text).encode();
        // A claimed size the block cannot hold.
        let mut huge = bytes.clone();
        huge[7..11].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            Envelope::decode(&huge),
            Err(DecodeError::Payload(_))
        ));
        // A cut-off block, an unknown codec, a future version.
        assert!(Envelope::decode(&bytes[..bytes.len() / 2]).is_err());
        let mut codec = bytes.clone();
        codec[6] = 9;
        assert!(matches!(
            Envelope::decode(&codec),
            Err(DecodeError::Payload(_))
        ));
        let mut future = bytes;
        future[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert!(matches!(
            Envelope::decode(&future),
            Err(DecodeError::UnknownVersion(_))
        ));
    }
}
