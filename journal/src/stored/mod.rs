//! How the journal lays its records out on disk, apart from the domain types
//! the rest of sno works with.
//!
//! A stored record names its format version in its envelope; each version's
//! layout is defined here and frozen once released:
//!
//! - [`v1`]: format versions 1 to 3 (they differ in the envelope's codec
//!   byte and in which events may appear, not in layout);
//! - [`current`]: format version 4 ([`crate::event::FORMAT_VERSION`]), which
//!   added each edge's certainty and each file's count of masked secrets.
//!
//! `current` describes the layout as serde *remote* definitions of the
//! domain types: encoding borrows the domain values (a first index is not
//! copied to be written) and decoding builds them directly. A remote
//! definition lists every field, so a field added to a domain type stops
//! `current` from compiling until the layout is decided. Changing it means:
//! move `current`'s definitions to a frozen `vN` as owned structs with an
//! upcast into the domain types (as [`v1`] is), update `current`, and bump
//! the format version. Records of every version keep decoding, so a journal
//! written years ago still replays.

pub(crate) mod current;
pub(crate) mod v1;

use crate::event::{DecodeError, Envelope};
use crate::model::FileRecord;

pub(crate) fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes an envelope's payload in the current layout.
pub(crate) fn encode_envelope(env: &Envelope) -> Vec<u8> {
    bincode::serde::encode_to_vec(current::EnvelopeRef(env), config())
        .expect("encoding plain structs into a Vec cannot fail")
}

/// [`encode_envelope`] written into `out` as it is encoded.
pub(crate) fn encode_envelope_into(env: &Envelope, out: &mut impl std::io::Write) {
    bincode::serde::encode_into_std_write(current::EnvelopeRef(env), out, config())
        .expect("encoding plain structs into an in-memory writer cannot fail");
}

/// Decodes the payload of a record of format `version`, upcasting older
/// layouts into the domain types.
pub(crate) fn decode_envelope(version: u16, payload: &[u8]) -> Result<Envelope, DecodeError> {
    let err = |e: bincode::error::DecodeError| DecodeError::Payload(e.to_string());
    if version <= 3 {
        let (env, _): (v1::Envelope, usize) =
            bincode::serde::decode_from_slice(payload, config()).map_err(err)?;
        return Ok(env.into());
    }
    let (env, _): (current::EnvelopeOwned, usize) =
        bincode::serde::decode_from_slice(payload, config()).map_err(err)?;
    Ok(env.0)
}

pub(crate) use current::DeltasRead;

/// Decodes an envelope's payload reading it from `payload` as it goes,
/// the deltas of commits and rollbacks taken as `deltas` says (see
/// [`current::PartialEnvelope`]).
pub(crate) fn decode_envelope_partial(
    version: u16,
    payload: &mut impl std::io::Read,
    deltas: DeltasRead<'_>,
) -> Result<Envelope, DecodeError> {
    use serde::de::DeserializeSeed;
    if version <= 3 {
        let mut bytes = Vec::new();
        payload
            .read_to_end(&mut bytes)
            .map_err(|e| DecodeError::Payload(e.to_string()))?;
        return decode_envelope(version, &bytes).map(|env| cut(env, deltas));
    }
    /// bincode's own adapter for `std::io::Read` is private.
    struct Io<R>(R);
    impl<R: std::io::Read> bincode::de::read::Reader for Io<R> {
        fn read(&mut self, bytes: &mut [u8]) -> Result<(), bincode::error::DecodeError> {
            self.0
                .read_exact(bytes)
                .map_err(|inner| bincode::error::DecodeError::Io {
                    inner,
                    additional: bytes.len(),
                })
        }
    }
    // bincode reads a field at a time: straight from a zstd frame each
    // read was a call into zstd (6 s of a first index's 8.3M lines, for
    // the history facts' outline of its record, against a fraction of it
    // through a buffer).
    let buffered = std::io::BufReader::with_capacity(1 << 16, payload);
    let mut decoder = bincode::serde::OwnedSerdeDecoder::from_reader(Io(buffered), config());
    current::PartialEnvelope(deltas)
        .deserialize(decoder.as_deserializer())
        .map_err(|e| DecodeError::Payload(e.to_string()))
}

/// A whole envelope's deltas cut as `deltas` says.
pub(crate) fn cut(mut env: Envelope, deltas: DeltasRead<'_>) -> Envelope {
    let all = match &mut env.event {
        crate::event::Event::CommitIndexed(c) => &mut c.deltas,
        crate::event::Event::RolledBack(r) => &mut r.deltas,
        _ => return env,
    };
    match deltas {
        DeltasRead::Of(path) => all.retain(|d| d.path == path),
        DeltasRead::Outlines => {
            for d in all {
                d.symbols_removed = Vec::new();
                d.symbols_added = Vec::new();
                d.edges_removed = Vec::new();
                d.edges_added = Vec::new();
            }
        }
    }
    env
}

/// Encodes a file's view row (the `files` table) in the current layout.
pub(crate) fn encode_view(rec: &FileRecord) -> Vec<u8> {
    bincode::serde::encode_to_vec(current::FileViewRef::of(rec), config())
        .expect("encoding plain structs into a Vec cannot fail")
}

/// A `files` table row: an encoded view ([`encode_view`]) as a zstd frame
/// (level [`VIEW_LEVEL`]) with its size in front. Views are most of a
/// database; on 8.4M lines their 602 MB encoded took 260 MB as lz4
/// blocks and take 175 MB so. A point query decodes a few rows; reading
/// every row (a head's first search parts, `status`) took 0.98 s against
/// 0.57 s for lz4 to decompress, beside the decoding of the records it
/// feeds, which costs more than either.
pub(crate) fn view_row(encoded: &[u8]) -> Vec<u8> {
    let mut row = (encoded.len() as u32).to_le_bytes().to_vec();
    VIEW_CODER.with(|c| {
        let frame = c
            .borrow_mut()
            .compress(encoded)
            .expect("compressing a buffer into a Vec cannot fail");
        row.extend_from_slice(&frame);
    });
    row
}

/// The zstd level of view rows: level 9 gave 4% less.
const VIEW_LEVEL: i32 = 3;

thread_local! {
    /// A zstd context per thread, a cache: making one per row cost more
    /// than compressing a small row.
    static VIEW_CODER: std::cell::RefCell<zstd::bulk::Compressor<'static>> =
        std::cell::RefCell::new(
            zstd::bulk::Compressor::new(VIEW_LEVEL).expect("a zstd context at a valid level"),
        );
    static VIEW_DECODER: std::cell::RefCell<zstd::bulk::Decompressor<'static>> =
        std::cell::RefCell::new(zstd::bulk::Decompressor::new().expect("a zstd context"));
}

/// The encoded view a row written by [`view_row`] holds.
fn view_bytes(row: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let bad = |e: String| DecodeError::Payload(format!("view row: {e}"));
    let (len, frame) = row
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("shorter than its size".into()))?;
    let len = u32::from_le_bytes(*len) as usize;
    let bytes = VIEW_DECODER
        .with(|d| d.borrow_mut().decompress(frame, len))
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() != len {
        return Err(bad(format!("{} bytes, not {len}", bytes.len())));
    }
    Ok(bytes)
}

/// A file's record as a `files` table row.
pub(crate) fn encode_view_row(rec: &FileRecord) -> Vec<u8> {
    view_row(&encode_view(rec))
}

/// Decodes a row written by [`view_row`].
pub(crate) fn decode_view(row: &[u8]) -> Result<FileRecord, DecodeError> {
    let bytes = view_bytes(row)?;
    bincode::serde::decode_from_slice::<current::FileViewOwned, _>(&bytes, config())
        .map(|(v, _)| v.0)
        .map_err(|e| DecodeError::Payload(e.to_string()))
}

/// Decodes a row written by [`view_row`] through its symbols
/// ([`current::FileHeadDef`]): the record's edges and references are left
/// empty.
pub(crate) fn decode_view_head(row: &[u8]) -> Result<FileRecord, DecodeError> {
    let bytes = view_bytes(row)?;
    bincode::serde::decode_from_slice::<current::FileHeadDef, _>(&bytes, config())
        .map(|(v, _)| v.into_record())
        .map_err(|e| DecodeError::Payload(e.to_string()))
}

/// The layout version of view rows and of the tables derived with them
/// (5: the names and referrers tables; 6: rows as lz4 blocks; 7: rows
/// longer than a page in pieces, [`crate::view_rows`]; 8: names used and
/// importers in the referrers table, each row's blob id before it, and
/// rows as zstd frames); views of another
/// version are rebuilt from the journal when the database is opened.
pub(crate) const VIEWS_VERSION: u16 = 8;

#[cfg(test)]
mod tests {
    //! A journal written before format 4, by the layout of versions 1 to 3,
    //! must still open, verify and replay to the state the same facts
    //! written today give.

    use serde::Serialize;

    use super::current::{symbols, FileRefsDef, FileStateDef};
    use super::v1;
    use crate::delta::digest;
    use crate::event::{record_hash, CommitIndexed, Envelope, Event, FileChange, MAGIC};
    use crate::model::*;
    use crate::store::{COMMITS, EVENTS, FILES, META, META_HEAD};
    use crate::Journal;

    fn sym(path: &str, name: &str, line: u32) -> Symbol {
        Symbol {
            id: SymbolId::derive(path, name, SymbolKind::Function, 0),
            name: name.into(),
            qualified_name: name.into(),
            kind: SymbolKind::Function,
            parent: None,
            span: Span {
                start_line: line,
                end_line: line + 1,
                start_byte: line * 10,
                end_byte: line * 10 + 9,
                ..Default::default()
            },
            signature: format!("def {name}():"),
            doc: "Does it.".into(),
            content_hash: line as u64,
        }
    }

    /// Two commits: a file with a call edge, then an edit of it.
    fn facts() -> Vec<CommitIndexed> {
        let (f, g) = (sym("a.py", "f", 1), sym("a.py", "g", 5));
        let call = Edge {
            kind: EdgeKind::Calls,
            from: Some(g.id),
            to: EdgeTarget::Symbol(f.id),
            name: "f".into(),
            line: 6,
            certainty: Certainty::Exact,
        };
        let mut rec = FileRecord {
            path: "a.py".into(),
            blob: BlobId([1; 20]),
            language: Some(Language::Python),
            size: 90,
            lines: 9,
            state: FileState::Parsed,
            diagnostics: vec![],
            masked_secrets: 0,
            symbols: vec![f.clone(), g],
            edges: vec![call],
            refs: FileRefs::default(),
        };
        rec.canonicalize();
        let first = crate::delta::added(rec.clone());
        let mut edited = rec.clone();
        edited.blob = BlobId([2; 20]);
        edited.symbols.push(sym("a.py", "h", 8));
        edited.canonicalize();
        let second = crate::delta::diff("a.py", Some(&rec), Some(&edited)).unwrap();
        [first, second]
            .into_iter()
            .enumerate()
            .map(|(i, d)| CommitIndexed {
                commit: CommitId([i as u8 + 1; 20]),
                parents: vec![],
                branch: Some("main".into()),
                summary: format!("c{i}"),
                time: 0,
                base: (i > 0).then_some(CommitId([i as u8; 20])),
                deltas: vec![d],
            })
            .collect()
    }

    fn to_v1(c: &CommitIndexed) -> v1::CommitIndexed {
        let edge = |e: &Edge| {
            assert_eq!(e.certainty, Certainty::Exact, "format 3 could not say more");
            v1::Edge {
                kind: e.kind,
                from: e.from,
                to: e.to.clone(),
                name: e.name.clone(),
                line: e.line,
            }
        };
        let meta = |m: &crate::event::FileMeta| v1::FileMeta {
            blob: m.blob,
            language: m.language,
            size: m.size,
            lines: m.lines,
            state: m.state.clone(),
            diagnostics: m.diagnostics.clone(),
            refs: m.refs.clone(),
        };
        v1::CommitIndexed {
            commit: c.commit,
            parents: c.parents.clone(),
            branch: c.branch.clone(),
            summary: c.summary.clone(),
            time: c.time,
            base: c.base,
            deltas: c
                .deltas
                .iter()
                .map(|d| v1::FileDelta {
                    path: d.path.clone(),
                    change: match &d.change {
                        FileChange::Added(m) => v1::FileChange::Added(meta(m)),
                        FileChange::Modified(m) => v1::FileChange::Modified(meta(m)),
                        FileChange::Deleted => v1::FileChange::Deleted,
                        FileChange::Reresolved => v1::FileChange::Reresolved,
                    },
                    symbols_removed: d.symbols_removed.clone(),
                    symbols_added: d.symbols_added.clone(),
                    edges_removed: d.edges_removed.iter().map(edge).collect(),
                    edges_added: d.edges_added.iter().map(edge).collect(),
                })
                .collect(),
        }
    }

    /// A `files` row as builds before format 4 wrote it.
    #[derive(Serialize)]
    struct OldView<'a> {
        path: &'a str,
        blob: BlobId,
        language: Option<Language>,
        size: u64,
        lines: u32,
        #[serde(with = "FileStateDef")]
        state: FileState,
        #[serde(with = "super::current::diagnostics")]
        diagnostics: Vec<Diagnostic>,
        #[serde(with = "symbols")]
        symbols: Vec<Symbol>,
        edges: Vec<v1::Edge>,
        #[serde(with = "FileRefsDef")]
        refs: FileRefs,
    }

    #[test]
    fn a_journal_of_format_3_upcasts_and_replays_to_todays_digest() {
        let dir = tempfile::tempdir().unwrap();
        let today = Journal::open_or_create(&dir.path().join("today.redb")).unwrap();
        for c in facts() {
            today.append_commit(c).unwrap();
        }
        let want = today.load_state().unwrap();

        // The same facts as a format-3 build stored them: records, chain,
        // commits, head and view rows in the old layouts.
        let old_path = dir.path().join("old.redb");
        let old = Journal::open_or_create(&old_path).unwrap();
        old.write_raw(|tx| {
            let mut events = tx.open_table(EVENTS).unwrap();
            let mut prev = 0;
            for (seq, c) in facts().iter().enumerate() {
                let env = v1::Envelope {
                    version: 3,
                    prev_hash: prev,
                    written_ms: 1,
                    event: v1::Event::CommitIndexed(to_v1(c)),
                };
                let mut bytes = MAGIC.to_vec();
                bytes.extend_from_slice(&3u16.to_le_bytes());
                bytes.push(0); // raw codec
                bytes.extend(bincode::serde::encode_to_vec(&env, super::config()).unwrap());
                prev = record_hash(&bytes);
                events.insert(seq as u64, bytes.as_slice()).unwrap();
                tx.open_table(COMMITS)
                    .unwrap()
                    .insert(c.commit.0.as_slice(), seq as u64)
                    .unwrap();
            }
            let rec = &want["a.py"];
            let view = OldView {
                path: &rec.path,
                blob: rec.blob,
                language: rec.language,
                size: rec.size,
                lines: rec.lines,
                state: rec.state.clone(),
                diagnostics: rec.diagnostics.clone(),
                symbols: rec.symbols.clone(),
                edges: to_v1(&facts()[0]).deltas.remove(0).edges_added,
                refs: rec.refs.clone(),
            };
            tx.open_table(FILES)
                .unwrap()
                .insert(
                    "a.py",
                    bincode::serde::encode_to_vec(&view, super::config())
                        .unwrap()
                        .as_slice(),
                )
                .unwrap();
            let head = crate::IndexedHead {
                commit: CommitId([2; 20]),
                branch: Some("main".into()),
                seq: Seq(1),
            };
            tx.open_table(META)
                .unwrap()
                .insert(META_HEAD, crate::event::encode_value(&head).as_slice())
                .unwrap();
            // No views version: written before there was one.
            tx.open_table(META)
                .unwrap()
                .remove("views_version")
                .unwrap();
        });
        drop(old);

        let reopened = Journal::open_existing(&old_path).unwrap();
        let report = crate::verify::verify(&reopened);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert_eq!(reopened.load_state().unwrap(), want, "views rebuilt");
        assert_eq!(digest(&reopened.load_state().unwrap()), digest(&want));
        let (replayed, head) = crate::replay::replay_all(&reopened).unwrap();
        assert_eq!(digest(&replayed), digest(&want));
        assert_eq!(head.unwrap().commit, CommitId([2; 20]));
        // The old records are read, never rewritten.
        let events = reopened.events(Seq(0), None).unwrap();
        assert!(events.iter().all(|(_, e)| e.version == 3));
        assert!(matches!(events[1].1.event, Event::CommitIndexed(_)));
        // New records are written in today's format.
        let env = Envelope::decode(
            &Envelope {
                version: crate::event::FORMAT_VERSION,
                prev_hash: 0,
                written_ms: 0,
                event: Event::CommitIndexed(facts().remove(0)),
            }
            .encode(),
        )
        .unwrap();
        assert_eq!(env.event, Event::CommitIndexed(facts().remove(0)));
    }
}
