//! The `files` table: each file's view row, whole when it is shorter than
//! a page, else in pieces of a little under a page in `file_pieces`.
//!
//! redb stores a value longer than a page on a run of pages of a
//! power-of-two size, so a 9 KB row takes 16 KB: on 8.4M lines the rows
//! longer than a page held 213 MB on 308 MB of pages. A piece that leaves
//! room for its key and the leaf's header takes one page, and only a
//! row's last piece leaves part of one unused.

use std::borrow::Cow;

use redb::{ReadableTable, Table, TableDefinition, WriteTransaction};

use crate::error::JournalError;
use crate::model::{BlobId, FileRecord};

/// Path → a tag byte ([`WHOLE`] or [`IN_PIECES`]), the file's blob id
/// (so a listing of the views' blobs reads no row), and for [`WHOLE`] the
/// row.
pub(crate) const FILES: TableDefinition<&str, &[u8]> = TableDefinition::new("files");
/// (path, piece number) → the row's bytes, in order, for rows stored in pieces.
pub(crate) const FILE_PIECES: TableDefinition<(&str, u32), &[u8]> =
    TableDefinition::new("file_pieces");

/// The tag and the blob id before a row.
const HEADER: usize = 1 + 20;
/// The row follows the tag and blob id.
const WHOLE: u8 = 0;
/// The row is the file's pieces, concatenated.
const IN_PIECES: u8 = 1;

/// redb's page size (its default, which sno keeps).
const PAGE: usize = 4096;
/// What a leaf page holds beside one entry's key and value (its header and
/// the entry's two offsets take 12 bytes; a tuple key's lengths a few more),
/// with room to spare.
const LEAF_OVERHEAD: usize = 64;

/// The length of `path`'s pieces: one piece and its key fill a page.
fn piece_len(path: &str) -> usize {
    PAGE.saturating_sub(LEAF_OVERHEAD + path.len()).max(1024)
}

/// The `files` table and its rows' pieces, as one table of rows.
pub(crate) struct FileRows<F, P> {
    files: F,
    pieces: P,
}

/// The view rows of a write transaction.
pub(crate) type FileRowsMut<'t> =
    FileRows<Table<'t, &'static str, &'static [u8]>, Table<'t, (&'static str, u32), &'static [u8]>>;

/// The view rows of a read transaction.
pub(crate) type FileRowsRead = FileRows<
    redb::ReadOnlyTable<&'static str, &'static [u8]>,
    redb::ReadOnlyTable<(&'static str, u32), &'static [u8]>,
>;

impl FileRowsRead {
    /// The view rows `r` reads.
    pub(crate) fn read(r: &redb::ReadTransaction) -> Result<FileRowsRead, JournalError> {
        Ok(FileRows {
            files: r.open_table(FILES)?,
            pieces: r.open_table(FILE_PIECES)?,
        })
    }
}

impl<'t> FileRowsMut<'t> {
    /// The view rows `tx` writes.
    pub(crate) fn write(tx: &'t WriteTransaction) -> Result<FileRowsMut<'t>, JournalError> {
        Ok(FileRows {
            files: tx.open_table(FILES)?,
            pieces: tx.open_table(FILE_PIECES)?,
        })
    }

    /// Stores `row` as `path`'s row, in place of any it had.
    pub(crate) fn put(&mut self, path: &str, blob: BlobId, row: &[u8]) -> Result<(), JournalError> {
        let len = piece_len(path);
        let whole = row.len() + HEADER <= len;
        let mut value = Vec::with_capacity(HEADER + if whole { row.len() } else { 0 });
        value.push(if whole { WHOLE } else { IN_PIECES });
        value.extend_from_slice(&blob.0);
        if whole {
            value.extend_from_slice(row);
        }
        let had_pieces = self
            .files
            .insert(path, value.as_slice())?
            .is_some_and(|old| old.value().first() == Some(&IN_PIECES));
        if had_pieces {
            self.remove_pieces(path)?;
        }
        if !whole {
            for (n, piece) in row.chunks(len).enumerate() {
                self.pieces.insert((path, n as u32), piece)?;
            }
        }
        Ok(())
    }

    /// Removes `path`'s row.
    pub(crate) fn remove(&mut self, path: &str) -> Result<(), JournalError> {
        let had_pieces = self
            .files
            .remove(path)?
            .is_some_and(|old| old.value().first() == Some(&IN_PIECES));
        if had_pieces {
            self.remove_pieces(path)?;
        }
        Ok(())
    }

    fn remove_pieces(&mut self, path: &str) -> Result<(), JournalError> {
        self.pieces
            .retain_in((path, 0)..=(path, u32::MAX), |_, _| false)?;
        Ok(())
    }
}

impl<F, P> FileRows<F, P>
where
    F: ReadableTable<&'static str, &'static [u8]>,
    P: ReadableTable<(&'static str, u32), &'static [u8]>,
{
    /// `path`'s record, if the views have the file.
    pub(crate) fn get(&self, path: &str) -> Result<Option<FileRecord>, JournalError> {
        self.get_decoded(path, crate::stored::decode_view)
    }

    /// `path`'s record without its graph ([`crate::stored::decode_view_head`]:
    /// no edges, no references), if the view has the file.
    pub(crate) fn get_without_graph(&self, path: &str) -> Result<Option<FileRecord>, JournalError> {
        self.get_decoded(path, crate::stored::decode_view_head)
    }

    /// `path`'s row, joined and decoded by `decode`, if the view has it.
    fn get_decoded(
        &self,
        path: &str,
        decode: fn(&[u8]) -> Result<FileRecord, crate::event::DecodeError>,
    ) -> Result<Option<FileRecord>, JournalError> {
        match self.files.get(path)? {
            Some(v) => decode(&self.joined(path, v.value())?)
                .map(Some)
                .map_err(bad_row),
            None => Ok(None),
        }
    }

    /// Every file's path and record, in path order, until `each` returns
    /// `false`.
    pub(crate) fn for_each(
        &self,
        mut each: impl FnMut(String, FileRecord) -> bool,
    ) -> Result<(), JournalError> {
        for row in self.files.iter()? {
            let (k, v) = row?;
            let path = k.value();
            let rec = self.decode(path, v.value())?;
            if !each(path.to_string(), rec) {
                break;
            }
        }
        Ok(())
    }

    /// Every file's path and blob id, in path order, without decoding a
    /// row.
    pub(crate) fn blobs(&self) -> Result<Vec<(String, BlobId)>, JournalError> {
        let mut out = Vec::with_capacity(self.files.len()? as usize);
        for row in self.files.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), blob_of(v.value())?));
        }
        Ok(out)
    }

    /// How many files the views hold.
    pub(crate) fn len(&self) -> Result<u64, JournalError> {
        Ok(self.files.len()?)
    }

    /// Every file's path and encoded row (its pieces joined), in path
    /// order, until `each` returns `false`: for a caller that decodes
    /// them apart ([`decode_row`]).
    pub(crate) fn for_each_row(
        &self,
        mut each: impl FnMut(&str, Cow<'_, [u8]>) -> bool,
    ) -> Result<(), JournalError> {
        for row in self.files.iter()? {
            let (k, v) = row?;
            let path = k.value();
            if !each(path, self.joined(path, v.value())?) {
                break;
            }
        }
        Ok(())
    }

    fn decode(&self, path: &str, stored: &[u8]) -> Result<FileRecord, JournalError> {
        decode_row(&self.joined(path, stored)?)
    }

    /// A row's encoded view, its pieces joined when it is in pieces.
    fn joined<'a>(&self, path: &str, stored: &'a [u8]) -> Result<Cow<'a, [u8]>, JournalError> {
        match (stored.first(), stored.get(HEADER..)) {
            (Some(&WHOLE), Some(row)) => Ok(Cow::Borrowed(row)),
            (Some(&IN_PIECES), Some(_)) => {
                let mut row = Vec::new();
                for piece in self.pieces.range((path, 0)..=(path, u32::MAX))? {
                    row.extend_from_slice(piece?.1.value());
                }
                Ok(Cow::Owned(row))
            }
            _ => Err(bad_row(crate::event::DecodeError::Payload(
                "an empty or unknown view row".into(),
            ))),
        }
    }
}

/// The blob id a `files` value names.
fn blob_of(stored: &[u8]) -> Result<BlobId, JournalError> {
    match stored.get(1..HEADER) {
        Some(id) => Ok(BlobId(id.try_into().expect("HEADER - 1 bytes"))),
        None => Err(bad_row(crate::event::DecodeError::Payload(
            "a view row without its blob id".into(),
        ))),
    }
}

/// The record an encoded view row ([`FileRows::for_each_row`]) holds.
pub(crate) fn decode_row(row: &[u8]) -> Result<FileRecord, JournalError> {
    crate::stored::decode_view(row).map_err(bad_row)
}

fn bad_row(source: crate::event::DecodeError) -> JournalError {
    // A view row is not an event: it has no sequence number.
    JournalError::Decode {
        seq: u64::MAX,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::{Database, ReadableDatabase, ReadableTableMetadata};

    fn record(path: &str, names: usize) -> FileRecord {
        // Names zstd finds little to compress in.
        let names: Vec<String> = crate::test_support::scattered_names("g", names as u64);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut r = crate::test_support::record(path, 1, &names);
        r.canonicalize();
        r
    }

    /// A record read without its graph is the record with no edges and
    /// no references, whole or in pieces; read whole, it has them.
    #[test]
    fn a_row_read_without_its_graph_is_the_record_up_to_its_symbols() {
        use crate::model::{Certainty, Edge, EdgeKind, EdgeTarget, RawCall};
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join("t.redb")).unwrap();
        let with_graph = |path: &str, names: usize| {
            let mut r = record(path, names);
            let from = r.symbols.first().map(|s| s.id);
            r.edges = vec![Edge {
                kind: EdgeKind::Calls,
                from,
                to: EdgeTarget::Unresolved("helper".into()),
                name: "helper".into(),
                line: 3,
                certainty: Certainty::Exact,
            }];
            r.refs.calls = vec![RawCall {
                caller: from,
                callee: "helper".into(),
                receiver: Some("self".into()),
                line: 3,
            }];
            r.diagnostics = vec![crate::model::Diagnostic {
                line: 2,
                column: 5,
                message: "unexpected token".into(),
            }];
            r.masked_secrets = 2;
            r.size = 1234;
            r.lines = 56;
            r
        };
        let big = with_graph("src/big.rs", 2000);
        let small = with_graph("src/small.rs", 3);
        let tx = db.begin_write().unwrap();
        {
            let mut rows = FileRowsMut::write(&tx).unwrap();
            for r in [&big, &small] {
                rows.put(&r.path, r.blob, &crate::stored::encode_view_row(r))
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        let r = db.begin_read().unwrap();
        let rows = FileRowsRead::read(&r).unwrap();
        assert!(rows.pieces.len().unwrap() > 0, "the big row is in pieces");
        for rec in [&big, &small] {
            let mut expected = rec.clone();
            expected.edges.clear();
            expected.refs = crate::model::FileRefs::default();
            let read = rows.get_without_graph(&rec.path).unwrap().unwrap();
            assert!(read == expected, "{}", rec.path);
            assert!(rows.get(&rec.path).unwrap().as_ref() == Some(rec));
        }
        assert_eq!(rows.get_without_graph("src/none.rs").unwrap(), None);
    }

    /// Rows longer than a piece are stored in pieces of one page each, read
    /// back whole, and replaced or removed with their pieces; short rows
    /// stay whole.
    #[test]
    fn rows_in_pieces_read_back_whole_and_leave_no_piece_behind() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join("t.redb")).unwrap();
        let big = record("src/big.rs", 2000);
        let mut small = record("src/small.rs", 2);
        // A blob of its own: the blobs read back must be each row's.
        small.blob = crate::model::BlobId([7; 20]);
        let row = |r: &FileRecord| crate::stored::encode_view_row(r);
        assert!(row(&big).len() > 3 * PAGE);
        assert!(row(&small).len() < piece_len("src/small.rs"));
        let tx = db.begin_write().unwrap();
        {
            let mut rows = FileRowsMut::write(&tx).unwrap();
            rows.put("src/big.rs", big.blob, &row(&big)).unwrap();
            rows.put("src/small.rs", small.blob, &row(&small)).unwrap();
            assert!(rows.get("src/big.rs").unwrap() == Some(big.clone()));
            assert!(rows.get("src/small.rs").unwrap() == Some(small.clone()));
        }
        tx.commit().unwrap();
        {
            let r = db.begin_read().unwrap();
            let pieces = r.open_table(FILE_PIECES).unwrap();
            assert_eq!(
                pieces.len().unwrap() as usize,
                row(&big).len().div_ceil(piece_len("src/big.rs"))
            );
            let stats = pieces.stats().unwrap();
            // Every piece takes one page, and all but the last fill it:
            // what is left unused is about one page (a piece a little
            // over a page would take two, half of it unused).
            assert_eq!(stats.leaf_pages(), pieces.len().unwrap());
            assert!(
                stats.fragmented_bytes() < 2 * PAGE as u64,
                "{} bytes unused",
                stats.fragmented_bytes()
            );
            let rows = FileRowsRead::read(&r).unwrap();
            let mut seen = Vec::new();
            rows.for_each(|p, rec| {
                seen.push((p, rec));
                true
            })
            .unwrap();
            assert!(
                seen == vec![
                    ("src/big.rs".into(), big.clone()),
                    ("src/small.rs".into(), small.clone())
                ]
            );
            // Each row's blob id is read without its row.
            assert_eq!(
                rows.blobs().unwrap(),
                vec![
                    ("src/big.rs".into(), big.blob),
                    ("src/small.rs".into(), small.blob)
                ]
            );
        }
        // The big file becomes small (its pieces go), then is removed.
        let tx = db.begin_write().unwrap();
        {
            let mut rows = FileRowsMut::write(&tx).unwrap();
            rows.put("src/big.rs", small.blob, &row(&small)).unwrap();
            assert!(rows.get("src/big.rs").unwrap() == Some(small.clone()));
            assert_eq!(rows.pieces.len().unwrap(), 0);
            rows.put("src/big.rs", big.blob, &row(&big)).unwrap();
            assert!(rows.pieces.len().unwrap() > 0);
            rows.remove("src/big.rs").unwrap();
            assert_eq!(rows.pieces.len().unwrap(), 0);
            assert_eq!(rows.get("src/big.rs").unwrap(), None);
            assert_eq!(rows.len().unwrap(), 1);
        }
        tx.commit().unwrap();
    }
}
