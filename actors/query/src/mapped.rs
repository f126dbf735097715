//! Read-only files mapped into memory, for the search parts a question
//! reads a little of.
//!
//! A head's vectors are most of what a semantic answer needs on disk (200
//! MB of codes on 8.4M lines), yet an answer reads their signs and a few
//! hundred rows of codes. Read into memory, every cold `sno search` paid
//! for zeroing and copying all of them (about half its 0.46 s), and a
//! daemon kept them resident. Mapped, the kernel brings in the pages an
//! answer touches, from the page cache that other processes share.
//!
//! Mapping is sound here because sno never changes a part file in place:
//! each is written aside and renamed over (`HeadCache::write_aside_with`),
//! so a mapped file keeps its bytes for as long as it is mapped, even after
//! it is replaced or removed. Another program truncating a file under
//! `.sno/cache/` while sno maps it would fault the reader, as it would
//! tantivy's own memory-mapped segments beside it.

// The one other place sno touches `unsafe`: mapping a file.
#![allow(unsafe_code)]

use std::path::Path;
use std::sync::Arc;

/// A whole file mapped read-only.
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    /// Maps `path`, shared by the readers that slice it.
    pub fn open(path: &Path) -> std::io::Result<Arc<MappedFile>> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the part files are never modified in place (see the
        // module's documentation), so the mapped bytes do not change.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(Arc::new(MappedFile { map }))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}

/// A range of a mapped file, owned with the mapping.
#[derive(Clone)]
pub struct Region {
    file: Arc<MappedFile>,
    start: usize,
    len: usize,
}

impl Region {
    /// `len` bytes of `file` from `start`, if inside it.
    pub fn of(file: &Arc<MappedFile>, start: usize, len: usize) -> Option<Region> {
        let end = start.checked_add(len)?;
        (end <= file.bytes().len()).then(|| Region {
            file: Arc::clone(file),
            start,
            len,
        })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.file.bytes()[self.start..self.start + self.len]
    }

    /// The bytes as signed bytes.
    pub fn as_i8(&self) -> &[i8] {
        bytemuck::cast_slice(self.bytes())
    }

    /// The bytes as little-endian 64-bit words, if aligned and whole (the
    /// map starts on a page, so a region at a multiple of 8 is aligned).
    pub fn as_u64(&self) -> Option<&[u64]> {
        if cfg!(target_endian = "big") {
            return None;
        }
        bytemuck::try_cast_slice(self.bytes()).ok()
    }

    /// Advises the kernel that the region will be read soon, from start
    /// to end (read-ahead): a scan over it then faults far less.
    pub fn will_scan(&self) {
        let _ = self.file.map.advise_range(
            memmap2::Advice::WillNeed,
            self.start - self.start % 4096,
            self.len + self.start % 4096,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region reads the file's bytes; one past the end is refused, and
    /// words are given only where aligned.
    #[test]
    fn a_region_reads_the_file_and_stays_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut bytes: Vec<u8> = (0..64u8).collect();
        bytes[8] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let file = MappedFile::open(&path).unwrap();
        let r = Region::of(&file, 8, 16).unwrap();
        assert_eq!(r.bytes(), &bytes[8..24]);
        assert_eq!(r.as_i8()[0], -1);
        assert_eq!(
            r.as_u64().unwrap()[1],
            u64::from_le_bytes(bytes[16..24].try_into().unwrap())
        );
        assert!(Region::of(&file, 3, 8).unwrap().as_u64().is_none());
        assert!(Region::of(&file, 60, 5).is_none());
        assert!(Region::of(&file, usize::MAX, 2).is_none());
        // Replaced by a rename, the mapped bytes stay the old ones.
        let new = dir.path().join("g");
        std::fs::write(&new, [7u8; 64]).unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert_eq!(r.bytes(), &bytes[8..24]);
    }
}
