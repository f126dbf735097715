//! Event records larger than a part are stored in parts.
//!
//! redb gives a value that spans pages a run of pages rounded up to a power
//! of two: a first index's record of 272 MB (8.6M lines) took 512 MB of
//! the file. In parts of just under 1 MiB, each rounds to exactly 1 MiB.
//! The `events` row of such a record is a stub (its own magic, the
//! record's length and its number of parts); everything that reads events
//! gets the record's bytes back whole, so the hash chain, decoding and
//! verification never see the difference.

use std::borrow::Cow;

use redb::{ReadableTable, TableDefinition};

use crate::JournalError;

/// The parts of spilled records: (sequence number, part number) -> bytes.
pub(crate) const EVENT_PARTS: TableDefinition<(u64, u32), &[u8]> =
    TableDefinition::new("event_parts");

/// A part's bytes: a MiB less room for the leaf page's header and key.
const PART: usize = (1 << 20) - 4096;

/// What opens a stub; a record opens with [`crate::event::MAGIC`].
const STUB_MAGIC: [u8; 4] = *b"SNOP";

/// Stores `record` as event `seq`: as it is, or in parts behind a stub.
pub(crate) fn put(
    events: &mut redb::Table<u64, &[u8]>,
    parts: &mut redb::Table<(u64, u32), &[u8]>,
    seq: u64,
    record: &[u8],
) -> Result<(), JournalError> {
    if record.len() <= PART {
        events.insert(seq, record)?;
        return Ok(());
    }
    let mut n = 0u32;
    for chunk in record.chunks(PART) {
        parts.insert((seq, n), chunk)?;
        n += 1;
    }
    put_stub(events, seq, record.len(), n)
}

/// A record's bytes cut into parts as they are written: each part is sent
/// on as soon as it is full, so a record of hundreds of MB (a first
/// index's) is never held whole.
pub(crate) struct PartSink {
    buf: Vec<u8>,
    parts: std::sync::mpsc::Sender<Vec<u8>>,
    len: usize,
}

impl PartSink {
    pub(crate) fn new(parts: std::sync::mpsc::Sender<Vec<u8>>) -> PartSink {
        PartSink {
            buf: Vec::new(),
            parts,
            len: 0,
        }
    }

    /// Sends what is left and gives the record's length.
    pub(crate) fn close(self) -> std::io::Result<usize> {
        if !self.buf.is_empty() {
            self.parts.send(self.buf).map_err(stopped)?;
        }
        Ok(self.len)
    }
}

fn stopped<T>(_: std::sync::mpsc::SendError<T>) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the record's writer stopped",
    )
}

impl std::io::Write for PartSink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut rest = bytes;
        while !rest.is_empty() {
            let take = (PART - self.buf.len()).min(rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.buf.len() == PART {
                let full = std::mem::replace(&mut self.buf, Vec::with_capacity(PART));
                self.parts.send(full).map_err(stopped)?;
            }
        }
        self.len += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes the parts a [`PartSink`] sends as event `seq`'s, ahead of the
/// transaction that makes them an event: the last part is held back, so a
/// record that fits a row of its own is written as one
/// ([`PartsAhead::finish`]). Parts with no event row are no record: a
/// crash before it leaves them to [`drop_from`].
pub(crate) struct PartsAhead {
    seq: u64,
    written: u32,
    last: Option<Vec<u8>>,
}

/// How a record comes to its event row.
pub(crate) enum RecordRows<'a> {
    /// Its bytes, written now.
    Whole(&'a [u8]),
    /// All parts but the last written already: the last, and the stub.
    Tail {
        len: usize,
        parts: u32,
        last: &'a [u8],
    },
}

impl PartsAhead {
    pub(crate) fn new(seq: u64) -> PartsAhead {
        PartsAhead {
            seq,
            written: 0,
            last: None,
        }
    }

    fn take(
        &mut self,
        parts: &mut redb::Table<(u64, u32), &[u8]>,
        part: Vec<u8>,
    ) -> Result<(), JournalError> {
        if let Some(before) = self.last.replace(part) {
            parts.insert((self.seq, self.written), before.as_slice())?;
            self.written += 1;
        }
        Ok(())
    }

    /// Writes the parts that came so far.
    pub(crate) fn drain(
        &mut self,
        parts: &mut redb::Table<(u64, u32), &[u8]>,
        from: &std::sync::mpsc::Receiver<Vec<u8>>,
    ) -> Result<(), JournalError> {
        while let Ok(part) = from.try_recv() {
            self.take(parts, part)?;
        }
        Ok(())
    }

    /// Waits for up to `n` parts and writes them; `true` when no more come.
    pub(crate) fn wait(
        &mut self,
        parts: &mut redb::Table<(u64, u32), &[u8]>,
        from: &std::sync::mpsc::Receiver<Vec<u8>>,
        n: usize,
    ) -> Result<bool, JournalError> {
        for _ in 0..n {
            match from.recv() {
                Ok(part) => self.take(parts, part)?,
                Err(_) => return Ok(true),
            }
        }
        Ok(false)
    }

    /// The rows still to write for a record of `len` bytes.
    pub(crate) fn finish(&self, len: usize) -> RecordRows<'_> {
        let last = self.last.as_deref().unwrap_or_default();
        match self.written {
            0 => RecordRows::Whole(last),
            n => RecordRows::Tail {
                len,
                parts: n + 1,
                last,
            },
        }
    }
}

/// Parts a transaction of a first index writes once its views are done
/// (64 MiB).
pub(crate) const PARTS_PER_TRANSACTION: usize = 64;

/// Stores the rows `rows` stand for as event `seq`'s.
pub(crate) fn put_rows(
    events: &mut redb::Table<u64, &[u8]>,
    parts: &mut redb::Table<(u64, u32), &[u8]>,
    seq: u64,
    rows: RecordRows<'_>,
) -> Result<(), JournalError> {
    match rows {
        RecordRows::Whole(record) => put(events, parts, seq, record),
        RecordRows::Tail {
            len,
            parts: n,
            last,
        } => {
            parts.insert((seq, n - 1), last)?;
            put_stub(events, seq, len, n)
        }
    }
}

/// The `events` row standing for a record of `len` bytes in `n` parts.
fn put_stub(
    events: &mut redb::Table<u64, &[u8]>,
    seq: u64,
    len: usize,
    n: u32,
) -> Result<(), JournalError> {
    let mut stub = STUB_MAGIC.to_vec();
    stub.extend_from_slice(&(len as u64).to_le_bytes());
    stub.extend_from_slice(&n.to_le_bytes());
    events.insert(seq, stub.as_slice())?;
    Ok(())
}

/// Drops parts of events from `seq` on: what [`put_ahead`] wrote for an
/// event whose own row was never written.
pub(crate) fn drop_from(
    parts: &mut redb::Table<(u64, u32), &[u8]>,
    seq: u64,
) -> Result<(), JournalError> {
    parts.retain_in((seq, 0)..=(u64::MAX, u32::MAX), |_, _| false)?;
    Ok(())
}

/// Event `seq`'s record from its `events` row: the row itself, or the
/// parts it stands for, joined.
pub(crate) fn record<'a>(
    parts: &impl ReadableTable<(u64, u32), &'static [u8]>,
    seq: u64,
    row: &'a [u8],
) -> Result<Cow<'a, [u8]>, JournalError> {
    let Some((len, n)) = stub(row) else {
        return Ok(Cow::Borrowed(row));
    };
    let mut out = Vec::with_capacity(len);
    each_part(parts, seq, len, n, |p| out.extend_from_slice(p))?;
    Ok(Cow::Owned(out))
}

/// [`crate::event::record_hash`] of the record `row` stands for, its parts
/// hashed as they are read: the next event's link to a first index's
/// record (hundreds of MB on millions of lines) must not put it together
/// (a daemon's first commit after `sno init` took 520 MB more and 0.3 s
/// for it).
pub(crate) fn record_hash(
    parts: &impl ReadableTable<(u64, u32), &'static [u8]>,
    seq: u64,
    row: &[u8],
) -> Result<u64, JournalError> {
    let Some((len, n)) = stub(row) else {
        return Ok(crate::event::record_hash(row));
    };
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    each_part(parts, seq, len, n, |p| hasher.update(p))?;
    Ok(hasher.digest())
}

/// Gives `f` each of the `n` parts of record `seq` in order, checking
/// they hold its `len` bytes.
fn each_part(
    parts: &impl ReadableTable<(u64, u32), &'static [u8]>,
    seq: u64,
    len: usize,
    n: u32,
    mut f: impl FnMut(&[u8]),
) -> Result<(), JournalError> {
    let mut read = 0usize;
    for part in 0..n {
        match parts.get((seq, part))? {
            Some(p) => {
                f(p.value());
                read += p.value().len();
            }
            None => break,
        }
    }
    if read != len {
        return Err(JournalError::Decode {
            seq,
            source: crate::event::DecodeError::Payload(format!(
                "record of {len} bytes in {n} parts: {read} bytes found"
            )),
        });
    }
    Ok(())
}

/// (length, parts) of a stub row.
fn stub(row: &[u8]) -> Option<(usize, u32)> {
    match row {
        [m0, m1, m2, m3, rest @ ..] if [*m0, *m1, *m2, *m3] == STUB_MAGIC && rest.len() == 12 => {
            let len = u64::from_le_bytes(rest[..8].try_into().ok()?);
            let n = u32::from_le_bytes(rest[8..].try_into().ok()?);
            Some((usize::try_from(len).ok()?, n))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::EVENTS;
    use redb::{ReadableDatabase, ReadableTableMetadata};

    #[test]
    fn a_record_comes_back_whole_from_its_parts_and_a_missing_part_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
        let big: Vec<u8> = (0..PART * 2 + 77).map(|i| (i * 31 % 251) as u8).collect();
        let small = b"SNOE a small record".to_vec();
        let tx = db.begin_write().unwrap();
        {
            let mut e = tx.open_table(EVENTS).unwrap();
            let mut p = tx.open_table(EVENT_PARTS).unwrap();
            put(&mut e, &mut p, 0, &small).unwrap();
            put(&mut e, &mut p, 1, &big).unwrap();
            assert_eq!(p.len().unwrap(), 3, "two whole parts and a tail");
            assert!(e.get(1).unwrap().unwrap().value().len() < 32, "a stub");
        }
        tx.commit().unwrap();
        let r = db.begin_read().unwrap();
        let (e, p) = (
            r.open_table(EVENTS).unwrap(),
            r.open_table(EVENT_PARTS).unwrap(),
        );
        for (seq, want) in [(0u64, &small), (1, &big)] {
            let row = e.get(seq).unwrap().unwrap();
            assert_eq!(
                record(&p, seq, row.value()).unwrap().as_ref(),
                want.as_slice()
            );
            // Hashed part by part as the whole record hashes.
            assert_eq!(
                record_hash(&p, seq, row.value()).unwrap(),
                crate::event::record_hash(want)
            );
        }
        drop((e, p, r));
        let tx = db.begin_write().unwrap();
        tx.open_table(EVENT_PARTS).unwrap().remove((1, 1)).unwrap();
        tx.commit().unwrap();
        let r = db.begin_read().unwrap();
        let (e, p) = (
            r.open_table(EVENTS).unwrap(),
            r.open_table(EVENT_PARTS).unwrap(),
        );
        let row = e.get(1).unwrap().unwrap();
        assert!(matches!(
            record(&p, 1, row.value()),
            Err(JournalError::Decode { seq: 1, .. })
        ));
        assert!(matches!(
            record_hash(&p, 1, row.value()),
            Err(JournalError::Decode { seq: 1, .. })
        ));
    }
}

#[cfg(test)]
mod journal_tests {
    use crate::delta::diff;
    use crate::test_support::{commit, record};
    use crate::Journal;

    /// A first index bigger than a part (names nothing compresses well),
    /// then a commit after it: both read back, replay and verify.
    #[test]
    fn a_record_in_parts_replays_and_verifies_and_the_chain_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let names: Vec<String> = crate::test_support::scattered_names("f", 60_000);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut big = record("big.py", 1, &names);
        big.canonicalize();
        let first = commit(1, vec![diff("big.py", None, Some(&big)).unwrap()]);
        j.append_commit(first.clone()).unwrap();
        let rows = j.event_parts();
        assert!(rows >= 2, "stored in parts: {rows}");
        let small = record("small.py", 2, &["g"]);
        j.append_commit(commit(
            2,
            vec![diff("small.py", None, Some(&small)).unwrap()],
        ))
        .unwrap();
        let events = j.events(crate::model::Seq(0), None).unwrap();
        assert_eq!(events.len(), 2);
        assert!(events[0].1.event == crate::event::Event::CommitIndexed(first));
        let report = crate::verify::verify(&j);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert_eq!(report.events, 2);
        let (state, _) = crate::replay::replay_all(&j).unwrap();
        assert!(state.get("big.py") == Some(&big), "replayed whole");
        assert!(j.file("big.py").unwrap().as_ref() == Some(&big), "its view");
    }

    /// A first index past the batching bound is written in several
    /// transactions: its views, derived rows and replay are those of the
    /// same commit written in one.
    #[test]
    fn a_first_index_written_in_batches_equals_one_written_at_once() {
        let recs: Vec<_> = (0..4200u32)
            .map(|i| {
                let mut r = record(&format!("src/f{i}.py"), (i % 250) as u8, &["run", "stop"]);
                r.canonicalize();
                r
            })
            .collect();
        let deltas = |n: usize| -> Vec<_> {
            recs[..n]
                .iter()
                .map(|r| diff(&r.path, None, Some(r)).unwrap())
                .collect()
        };
        let dir = tempfile::tempdir().unwrap();
        let batched = Journal::open_or_create(&dir.path().join("a.redb")).unwrap();
        batched
            .append_commit(commit(1, deltas(recs.len())))
            .unwrap();
        // The same files, the first index below the bound and the rest in
        // a second commit: one transaction each.
        let at_once = Journal::open_or_create(&dir.path().join("b.redb")).unwrap();
        at_once.append_commit(commit(1, deltas(100))).unwrap();
        let rest = recs[100..]
            .iter()
            .map(|r| diff(&r.path, None, Some(r)).unwrap())
            .collect();
        at_once.append_commit(commit(2, rest)).unwrap();
        assert!(batched.load_state().unwrap() == at_once.load_state().unwrap());
        assert_eq!(
            batched.derived_rows().unwrap(),
            at_once.derived_rows().unwrap()
        );
        let (replayed, head) = crate::replay::replay_all(&batched).unwrap();
        assert!(replayed == batched.load_state().unwrap());
        assert_eq!(head.unwrap().seq, batched.head().unwrap().unwrap().seq);
        let report = crate::verify::verify(&batched);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }

    /// A first index killed between its transactions leaves views with no
    /// head: opening the database drops them.
    #[test]
    fn views_a_killed_first_index_left_without_its_commit_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        {
            let j = Journal::open_or_create(&path).unwrap();
            let mut r = record("orphan.py", 1, &["left_behind"]);
            r.canonicalize();
            // What the first batch of a first index writes.
            let tx = j.db.begin_write().unwrap();
            {
                let mut files = crate::view_rows::FileRowsMut::write(&tx).unwrap();
                let mut derived = crate::store::DerivedMut::write(&tx).unwrap();
                let d = diff("orphan.py", None, Some(&r)).unwrap();
                crate::store::put_view(&mut files, &mut derived, None, &d).unwrap();
            }
            tx.commit().unwrap();
            assert!(j.file("orphan.py").unwrap().is_some());
            assert!(!j.derived_rows().unwrap().names.is_empty());
        }
        let j = Journal::open_or_create(&path).unwrap();
        assert!(j.head().unwrap().is_none());
        assert!(j.file("orphan.py").unwrap().is_none());
        assert_eq!(j.derived_rows().unwrap(), Default::default());
    }

    /// A first index of many files (its payload compressed as it is
    /// encoded) replays to its views and verifies, and reopening the
    /// database reads it the same.
    #[test]
    fn a_first_index_of_many_files_replays_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        let recs: Vec<_> = (0..1500u32)
            .map(|i| {
                let mut r = record(&format!("pkg/m{i}.py"), (i % 250) as u8, &["load", "save"]);
                r.canonicalize();
                r
            })
            .collect();
        let deltas = recs
            .iter()
            .map(|r| diff(&r.path, None, Some(r)).unwrap())
            .collect();
        {
            let j = Journal::open_or_create(&path).unwrap();
            j.append_commit(commit(1, deltas)).unwrap();
        }
        let j = Journal::open_or_create(&path).unwrap();
        let report = crate::verify::verify(&j);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        let (state, _) = crate::replay::replay_all(&j).unwrap();
        assert_eq!(state.len(), recs.len());
        for r in [&recs[0], &recs[777], &recs[1499]] {
            assert!(state.get(&r.path) == Some(r), "{}", r.path);
            assert!(j.file(&r.path).unwrap().as_ref() == Some(r), "{}", r.path);
        }
    }

    fn records(n: u32) -> Vec<crate::model::FileRecord> {
        (0..n)
            .map(|i| {
                let mut r = record(&format!("lib/s{i}.py"), (i % 250) as u8, &["open", "close"]);
                r.canonicalize();
                r
            })
            .collect()
    }

    /// The streamed record is byte for byte the one a commit holding all
    /// its deltas encodes to (what pins its layout to `EnvelopeDef`'s).
    #[test]
    fn a_streamed_record_is_the_record_of_the_whole_commit() {
        let deltas: Vec<_> = records(1100)
            .iter()
            .map(|r| diff(&r.path, None, Some(r)).unwrap())
            .collect();
        let whole = commit(1, deltas.clone());
        let env = crate::event::Envelope {
            version: crate::event::FORMAT_VERSION,
            prev_hash: 42,
            written_ms: 1_700_000_000_000,
            event: crate::event::Event::CommitIndexed(whole.clone()),
        };
        let header = crate::event::CommitIndexed {
            deltas: Vec::new(),
            ..whole
        };
        let streamed = crate::stored::current::StreamedCommitRecord {
            version: env.version,
            prev_hash: env.prev_hash,
            written_ms: env.written_ms,
            commit: &header,
            len: deltas.len(),
            deltas: std::cell::RefCell::new(deltas.into_iter()),
        };
        // Through the sink that cuts a record into parts, as it is written.
        let (tx, rx) = std::sync::mpsc::channel();
        let len = crate::event::framed_record_into(super::PartSink::new(tx), |f| {
            bincode::serde::encode_into_std_write(&streamed, f, crate::stored::config())
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .unwrap()
        .close()
        .unwrap();
        let parts: Vec<Vec<u8>> = rx.into_iter().collect();
        assert!(parts[..parts.len() - 1]
            .iter()
            .all(|p| p.len() == super::PART));
        let bytes = parts.concat();
        assert_eq!(len, bytes.len());
        assert_eq!(bytes, env.encode());
        assert!(crate::event::Envelope::decode(&bytes).unwrap() == env);
    }

    /// A first index streamed through its views holds what its deltas
    /// say, by itself and by the views' own rules: the views are the
    /// records, the derived rows those the records imply, the event holds
    /// every delta, its record (past a part, with one file of 60,000 names
    /// nothing compresses) is in parts, and it replays and verifies.
    #[test]
    fn a_streamed_first_index_holds_what_its_deltas_say() {
        let mut recs = records(4500);
        let names: Vec<String> = crate::test_support::scattered_names("g", 60_000);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut big = record("lib/big.py", 9, &names);
        big.canonicalize();
        recs.push(big);
        recs.sort_by(|a, b| a.path.cmp(&b.path));
        let deltas: Vec<_> = recs
            .iter()
            .map(|r| diff(&r.path, None, Some(r)).unwrap())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let header = commit(1, Vec::new());
        let seq = j
            .append_first_index_streamed(
                header,
                deltas.len(),
                deltas.clone().into_iter(),
                Vec::new(),
                crate::Flush::Durable,
            )
            .unwrap();
        assert_eq!(Some(seq), j.head().unwrap().map(|h| h.seq));
        let expected: crate::delta::State =
            recs.iter().map(|r| (r.path.clone(), r.clone())).collect();
        assert!(j.load_state().unwrap() == expected);
        assert_eq!(
            j.derived_rows().unwrap(),
            crate::store::expected_derived_rows(&expected)
        );
        let events = j.events(crate::model::Seq(0), None).unwrap();
        assert!(events[0].1.event.deltas() == deltas.as_slice());
        {
            use redb::{ReadableDatabase, ReadableTableMetadata};
            let r = j.db.begin_read().unwrap();
            assert!(r.open_table(super::EVENT_PARTS).unwrap().len().unwrap() > 1);
            // The derived rows came in key order, in several transactions,
            // and fill their leaves.
            let names = r.open_table(crate::store::NAMES).unwrap();
            assert!(names.len().unwrap() > 2 * crate::store::DERIVED_BATCH as u64);
            let s = names.stats().unwrap();
            assert!(s.fragmented_bytes() * 20 < s.stored_bytes());
        }
        let (replayed, _) = crate::replay::replay_all(&j).unwrap();
        assert!(replayed == expected);
        let report = crate::verify::verify(&j);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }

    /// Fewer deltas than announced: an error, no head, and the views the
    /// batches wrote are dropped when the database is opened again.
    #[test]
    fn a_streamed_first_index_that_falls_short_writes_no_state() {
        let recs = records(3000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        {
            let j = Journal::open_or_create(&path).unwrap();
            let header = commit(1, Vec::new());
            let short = recs
                .iter()
                .take(2500)
                .map(|r| diff(&r.path, None, Some(r)).unwrap());
            let err = j
                .append_first_index_streamed(
                    header,
                    recs.len(),
                    short,
                    Vec::new(),
                    crate::Flush::Durable,
                )
                .unwrap_err();
            assert!(err.to_string().contains("2500 deltas of the 3000"), "{err}");
            assert!(j.head().unwrap().is_none());
            assert!(j.events(crate::model::Seq(0), None).unwrap().is_empty());
        }
        let j = Journal::open_or_create(&path).unwrap();
        assert!(j.file(&recs[0].path).unwrap().is_none());
        assert_eq!(j.derived_rows().unwrap(), Default::default());
    }

    /// Parts written ahead of an event row that never came (a kill between
    /// the transactions) are dropped when the database is opened again.
    #[test]
    fn parts_written_ahead_of_an_event_that_never_came_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sno.redb");
        let big: Vec<u8> = (0..super::PART * 3).map(|i| (i * 7 % 253) as u8).collect();
        let parts_held = |j: &Journal| {
            use redb::{ReadableDatabase, ReadableTableMetadata};
            let r = j.db.begin_read().unwrap();
            r.open_table(super::EVENT_PARTS).unwrap().len().unwrap()
        };
        {
            let j = Journal::open_or_create(&path).unwrap();
            // What a first index writes of its record before its event row.
            let (tx, rx) = std::sync::mpsc::channel();
            let mut sink = super::PartSink::new(tx);
            std::io::Write::write_all(&mut sink, &big).unwrap();
            assert_eq!(sink.close().unwrap(), big.len());
            let mut ahead = super::PartsAhead::new(0);
            let w = j.db.begin_write().unwrap();
            let done = ahead
                .wait(&mut w.open_table(super::EVENT_PARTS).unwrap(), &rx, 10)
                .unwrap();
            w.commit().unwrap();
            assert!(done);
            // The last part is held back for the event's own transaction.
            assert_eq!(parts_held(&j), 2);
        }
        let j = Journal::open_or_create(&path).unwrap();
        assert_eq!(parts_held(&j), 0);
        assert!(j.events(crate::model::Seq(0), None).unwrap().is_empty());
    }
}
