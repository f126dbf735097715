//! File records held compressed: what a first index keeps of each parsed
//! file between parsing it and resolving it against the whole repository.
//! A record in memory is mostly small heap strings (names, signatures,
//! docs, callees); packed as its view row (bincode, then a zstd frame) it
//! takes about a fifth of the room, which is what lets `sno init` hold a
//! repository of millions of lines in bounded memory.

use crate::event::DecodeError;
use crate::model::FileRecord;

/// A file record packed as its `files` view row.
#[derive(Clone, Debug)]
pub struct PackedRecord(Vec<u8>);

impl PackedRecord {
    /// Packs `rec`.
    pub fn pack(rec: &FileRecord) -> PackedRecord {
        PackedRecord(crate::stored::encode_view_row(rec))
    }

    /// The record back, as it was packed.
    pub fn unpack(&self) -> Result<FileRecord, DecodeError> {
        crate::stored::decode_view(&self.0)
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is held (never, for a packed record).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_unpacks_to_what_was_packed() {
        let rec = crate::test_support::record("src/app.py", 7, &["load", "save", "Config"]);
        let packed = PackedRecord::pack(&rec);
        assert_eq!(packed.unpack().unwrap(), rec);
        assert!(!packed.is_empty());
    }
}
