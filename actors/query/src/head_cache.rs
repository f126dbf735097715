//! What a server keeps on disk about the indexed head, so the next server
//! starts fast: the lexical index and the symbol vectors in document order.
//! Both are derived data in `.sno/cache/<commit>-<seq>-v4/`, named after the
//! state they were made from, so a stale one is never read; they may be
//! deleted at any time and are rebuilt when missing or unreadable. A new
//! head's lexical index starts from the previous head's, moved over and
//! updated ([`HeadCache::previous_lexical`]); the other heads' caches go
//! once the new one is made ([`HeadCache::remove_others`]).

use crate::search::FileVectors;
use crate::semantic::{Vectors, SIGNS_MIN};
use std::path::{Path, PathBuf};

use sno_journal::IndexedHead;

/// The cache directory of one indexed head.
pub struct HeadCache {
    dir: PathBuf,
}

/// Vectors file: magic, dimension, count, a bit per document (whether it
/// has a vector), then the scales of the vectors that are there (f32
/// little-endian), then their codes (`dim` signed bytes each), as
/// [`Vectors`] holds them. Most documents of a large code base have none
/// (declarations are not embedded), so they take a bit.
/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const MAGIC: &[u8; 8] = b"SNOVEC03";
/// A vectors file's signs ([`HeadCache::write_signs`]): this magic, the
/// rows and dimension, and the length and scales' xxh3 of the vectors
/// file they were made from, then the rows.
const SIGNS_MAGIC: &[u8; 8] = b"SNOSGN01";
const SIGNS_HEAD: usize = 32;

/// The cache format, in each head's directory name: the lexical index's
/// documents are keyed by file since v3.
const VERSION: &str = "-v4";

/// Where past states' caches live, under `.sno/`.
const PAST: &str = "past";

/// Bytes the past states' caches may take on disk before the least
/// recently used go: on a 600k-line repository one takes about 60 MB, so
/// a dozen or so past states stay ready.
pub const PAST_CACHE_BYTES: u64 = 1 << 30;

/// Bytes of the files under `dir`, recursively.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// Which of `caches` (last used, bytes, directory) go so that the rest
/// take at most `budget` bytes: the least recently used first, never
/// `keep`.
fn past_to_evict(
    caches: &[(std::time::SystemTime, u64, PathBuf)],
    keep: &Path,
    budget: u64,
) -> Vec<PathBuf> {
    let mut newest_first: Vec<&(std::time::SystemTime, u64, PathBuf)> = caches.iter().collect();
    newest_first.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    let mut used: u64 = caches.iter().filter(|c| c.2 == keep).map(|c| c.1).sum();
    let mut out = Vec::new();
    for (_, bytes, dir) in newest_first.into_iter().filter(|c| c.2 != keep) {
        // Once one goes, every one used before it goes too.
        if out.is_empty() && used.saturating_add(*bytes) <= budget {
            used += bytes;
        } else {
            out.push(dir.clone());
        }
    }
    out
}

impl HeadCache {
    /// The cache of `head`.
    pub fn for_head(sno_dir: &Path, head: &IndexedHead) -> HeadCache {
        let root = sno_dir.join("cache");
        let name = format!("{}-{}{VERSION}", head.commit.to_hex(), head.seq.0);
        HeadCache {
            dir: root.join(name),
        }
    }

    /// The cache of a past state (`--at`, the `at` argument): the state
    /// after `commit` was indexed at journal position `seq`, in
    /// `.sno/past/<commit>-<seq>-v4/`. A past state never changes (the
    /// journal is append-only), so its parts, once made, serve every later
    /// question about it, from any process, until [`HeadCache::evict_past`]
    /// drops them.
    pub fn for_past(
        sno_dir: &Path,
        commit: &sno_journal::model::CommitId,
        seq: sno_journal::model::Seq,
    ) -> HeadCache {
        let name = format!("{}-{}{VERSION}", commit.to_hex(), seq.0);
        HeadCache {
            dir: sno_dir.join(PAST).join(name),
        }
    }

    /// Whether this cache has parts stored.
    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// Whether this cache holds a head's search parts (its document map
    /// and lexical index), not only its history.
    pub fn has_parts(&self) -> bool {
        self.doc_map_file().is_file() && self.lexical_dir().is_dir()
    }

    /// Marks this cache as just used: eviction drops the least recently
    /// used first.
    pub fn mark_used(&self) {
        let used = self.dir.join("used");
        let now = std::time::SystemTime::now();
        let marked = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&used)
            .and_then(|f| f.set_modified(now));
        if let Err(err) = marked {
            tracing::debug!(error = %err, "could not mark a past cache as used");
        }
    }

    /// Drops the least recently used past caches until those left take at
    /// most `budget` bytes on disk, never `keep` (the one just used, even
    /// when it alone is larger). Caches being written (`.tmp-`) are left
    /// alone. Returns the directories removed.
    pub fn evict_past(sno_dir: &Path, keep: &HeadCache, budget: u64) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(sno_dir.join(PAST)) else {
            return Vec::new();
        };
        let caches: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| !e.file_name().to_string_lossy().contains(".tmp-"))
            .map(|e| {
                let dir = e.path();
                let used = std::fs::metadata(dir.join("used"))
                    .or_else(|_| e.metadata())
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (used, dir_bytes(&dir), dir)
            })
            .collect();
        let drop = past_to_evict(&caches, &keep.dir, budget);
        for d in &drop {
            if let Err(err) = std::fs::remove_dir_all(d) {
                tracing::warn!(error = %err, dir = %d.display(), "could not evict a past cache");
            }
        }
        drop
    }

    /// The caches of other heads: directories beside this one, not being
    /// written (`.tmp-`), newest first. Files are left alone (the token
    /// table lives beside the head caches).
    fn others(&self) -> Vec<PathBuf> {
        let Some(root) = self.dir.parent() else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        let mut out: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.path() != self.dir)
            .filter(|e| !e.file_name().to_string_lossy().contains(".tmp-"))
            .map(|e| {
                let when = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (when, e.path())
            })
            .collect();
        out.sort_by_key(|b| std::cmp::Reverse(b.0));
        out.into_iter().map(|(_, p)| p).collect()
    }

    /// The lexical index of another head of this cache format, newest
    /// first: the start for this head's, which updates it rather than
    /// indexing every file again.
    pub fn previous_lexical(&self) -> Option<PathBuf> {
        self.others()
            .into_iter()
            .filter(|d| d.to_string_lossy().ends_with(VERSION))
            .map(|d| d.join("lexical"))
            .find(|l| l.is_dir())
    }

    /// The newest other head's cache of this format, with that head's
    /// journal position: where a new head's parts are advanced from.
    pub fn previous_head(&self) -> Option<(HeadCache, sno_journal::model::Seq)> {
        self.others().into_iter().find_map(|d| {
            let name = d.file_name()?.to_string_lossy().into_owned();
            let rest = name.strip_suffix(VERSION)?;
            let (_, seq) = rest.split_once('-')?;
            let seq = sno_journal::model::Seq(seq.parse().ok()?);
            Some((HeadCache { dir: d }, seq))
        })
    }

    /// The history facts stored for another head of this cache format,
    /// newest first, with that head's commit and journal position.
    pub fn previous_history(
        &self,
    ) -> Option<(
        sno_journal::model::CommitId,
        sno_journal::model::Seq,
        crate::search::HistoryFacts,
    )> {
        self.others().into_iter().find_map(|d| {
            let name = d.file_name()?.to_string_lossy().into_owned();
            let rest = name.strip_suffix(VERSION)?;
            let (hex, seq) = rest.split_once('-')?;
            let commit = sno_journal::model::CommitId::from_hex(hex)?;
            let seq = sno_journal::model::Seq(seq.parse().ok()?);
            let facts = HeadCache { dir: d }.read_history()?;
            Some((commit, seq, facts))
        })
    }

    /// Removes the caches of other heads (the disk holds one head's).
    pub fn remove_others(&self) {
        for d in self.others() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    /// Where the lexical index lives.
    pub fn lexical_dir(&self) -> PathBuf {
        self.dir.join("lexical")
    }

    /// Where the whole-file index lives ([`crate::file_index::FileIndex`]).
    pub fn files_dir(&self) -> PathBuf {
        self.dir.join("files")
    }

    fn vectors_file(&self, model: &str) -> PathBuf {
        let h = xxhash_rust::xxh3::xxh3_64(model.as_bytes());
        self.dir.join(format!("vectors-{h:016x}.i8"))
    }

    fn signs_file(&self, model: &str) -> PathBuf {
        signs_beside(&self.vectors_file(model))
    }

    /// The stored vectors made by `model`, in document order, if present
    /// and intact (`expected` documents).
    pub fn read_vectors(&self, model: &str, expected: Option<usize>) -> Option<Vectors> {
        read_vectors_file(&self.vectors_file(model), expected)
    }

    /// [`HeadCache::read_vectors`] for a search: with their signs, which
    /// are stored first if a search compares them and they are missing
    /// (parts made before signs were stored), so that only the first
    /// search over a head computes them.
    pub fn read_vectors_to_search(&self, model: &str, expected: Option<usize>) -> Option<Vectors> {
        let vectors = self.read_vectors(model, expected)?;
        if vectors.ids().len() <= SIGNS_MIN || vectors.has_stored_signs() {
            return Some(vectors);
        }
        match self.write_signs(model, &vectors) {
            Ok(()) => self.read_vectors(model, expected),
            Err(e) => {
                // A read-only `.sno/`: the search computes them itself.
                tracing::debug!(error = %e, "signs not stored");
                Some(vectors)
            }
        }
    }

    /// Which documents have a vector of `model`, read from the stored
    /// vectors' head alone (not their codes), if the file is there and of
    /// `expected` documents.
    pub fn read_vector_ids(&self, model: &str, expected: usize) -> Option<Vec<u32>> {
        let mut file = std::fs::File::open(self.vectors_file(model)).ok()?;
        let head = VectorsHead::read(&mut file)?;
        let bytes = file.metadata().ok()?.len();
        (head.count == expected && bytes == head.file_len()).then_some(head.ids)
    }

    fn layout_file(&self, model: &str) -> PathBuf {
        let mut name = self.vectors_file(model).into_os_string();
        name.push(".files");
        PathBuf::from(name)
    }

    /// Which file's documents the vectors of `model` hold, in order, if
    /// stored and intact.
    pub fn read_layout(&self, model: &str) -> Option<Vec<FileVectors>> {
        let text = std::fs::read_to_string(self.layout_file(model)).ok()?;
        let body = text.strip_prefix("SNOLAY01\n")?.strip_suffix("END\n")?;
        body.lines()
            .map(|l| {
                let mut parts = l.splitn(3, '\t');
                let count = parts.next()?.parse().ok()?;
                let marker = parts.next()?.to_string();
                let path = parts.next()?.to_string();
                Some(FileVectors {
                    path,
                    marker,
                    count,
                })
            })
            .collect()
    }

    /// The vectors of `model` stored for another head, newest first, with
    /// their layout: the start for this head's, which takes the vectors of
    /// its unchanged files from there.
    pub fn previous_vectors(&self, model: &str) -> Option<(Vectors, Vec<FileVectors>)> {
        self.others()
            .into_iter()
            .filter(|d| d.to_string_lossy().ends_with(VERSION))
            .find_map(|d| {
                let other = HeadCache { dir: d };
                let layout = other.read_layout(model)?;
                let count: usize = layout.iter().map(|f| f.count as usize).sum();
                let vectors = other.read_vectors(model, None)?;
                // The symbols' documents come first; sections follow them.
                (vectors.count() >= count).then_some((vectors, layout))
            })
    }

    fn doc_map_file(&self) -> PathBuf {
        self.dir.join("docs.map")
    }

    /// What this head's document numbers are, if stored and intact (as a
    /// zstd frame, or bare as builds before it wrote them).
    pub fn read_doc_map(&self) -> Option<crate::doc_map::DocMap> {
        let stored = std::fs::read(self.doc_map_file()).ok()?;
        let bytes = match stored.starts_with(&ZSTD_MAGIC) {
            // Into a buffer of the frame's length: decoding into a growing
            // one copied it over and over (a third of a cold search over
            // 8.4M lines, whose map is 72 MB).
            true => match zstd::zstd_safe::get_frame_content_size(&stored) {
                Ok(Some(len)) => {
                    zstd::bulk::decompress(&stored, usize::try_from(len).ok()?).ok()?
                }
                _ => zstd::stream::decode_all(stored.as_slice()).ok()?,
            },
            false => stored,
        };
        crate::doc_map::DocMap::from_bytes(&bytes)
    }

    /// Stores this head's document map (aside and renamed) as a zstd
    /// frame: on 8.4M lines 72 MB bare, 39 MB so, read back in 0.13 s.
    pub fn write_doc_map(&self, map: &crate::doc_map::DocMap) -> std::io::Result<()> {
        let bytes = map.to_bytes();
        self.write_aside_with(&self.doc_map_file(), |w| {
            let mut z = zstd::stream::Encoder::new(w, 3)?;
            // The frame then says how long it reads back, and the reader
            // decompresses into one buffer of that length.
            z.set_pledged_src_size(Some(bytes.len() as u64))?;
            std::io::Write::write_all(&mut z, &bytes)?;
            z.finish().map(|_| ())
        })
    }

    fn history_file(&self) -> PathBuf {
        self.dir.join("history.txt")
    }

    /// The history facts of this head, if stored and intact.
    pub fn read_history(&self) -> Option<crate::search::HistoryFacts> {
        let text = std::fs::read_to_string(self.history_file()).ok()?;
        let mut lines = text.split('\n');
        // An older sno's facts (`SNOHIST1` without the messages, `SNOHIST2`
        // without the commits' ids) read as missing: they are made again
        // from the journal.
        let commits: usize = lines.next()?.strip_prefix("SNOHIST3 ")?.parse().ok()?;
        let mut h = crate::search::HistoryFacts {
            commits,
            ..Default::default()
        };
        let mut complete = false;
        for line in lines.by_ref() {
            if line == "MESSAGES" {
                complete = true;
                break;
            }
            let (ks, path) = line.split_once('\t')?;
            let ks = ks
                .split(' ')
                .map(|k| k.parse().ok().filter(|&k: &usize| k < commits))
                .collect::<Option<Vec<usize>>>()?;
            h.touches.insert(path.to_string(), ks);
        }
        if !complete {
            return None;
        }
        for _ in 0..commits {
            let (id, message) = lines.next()?.split_once(' ')?;
            h.ids.push(sno_journal::model::CommitId::from_hex(id)?);
            h.messages.push(message.to_string());
        }
        (lines.next() == Some("END")).then_some(h)
    }

    /// Stores the history facts of this head (aside and renamed). Paths
    /// holding a line break or a tab are not stored: the facts are then
    /// recomputed each time.
    pub fn write_history(&self, h: &crate::search::HistoryFacts) -> std::io::Result<()> {
        if h.touches.keys().any(|p| p.contains(['\n', '\t'])) {
            return Ok(());
        }
        if h.messages.len() != h.commits || h.ids.len() != h.commits {
            return Ok(());
        }
        let mut out = format!("SNOHIST3 {}\n", h.commits);
        for (path, ks) in &h.touches {
            let ks: Vec<String> = ks.iter().map(usize::to_string).collect();
            out.push_str(&ks.join(" "));
            out.push('\t');
            out.push_str(path);
            out.push('\n');
        }
        out.push_str("MESSAGES\n");
        for (id, message) in h.ids.iter().zip(&h.messages) {
            out.push_str(&id.to_hex());
            out.push(' ');
            // A message is one line; a stray break would end it early.
            out.push_str(&message.replace(['\n', '\r'], " "));
            out.push('\n');
        }
        out.push_str("END\n");
        self.write_aside(&self.history_file(), out.as_bytes())
    }

    /// Writes `bytes` to `file` aside and renames it: a reader never sees
    /// half a file.
    fn write_aside(&self, file: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.write_aside_with(file, |w| w.write_all(bytes))
    }

    /// Writes `file` aside through `write` and renames it into place.
    fn write_aside_with(
        &self,
        file: &Path,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.dir)?;
        let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        let written = write(&mut w).and_then(|_| w.flush());
        drop(w);
        if let Err(e) = written {
            // Nothing half-written is left behind.
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(tmp, file)
    }

    /// Stores vectors (aside and renamed). They are written as they are
    /// read, never copied whole: on 8.4M lines the copy was 200 MB more
    /// over a commit, beside the previous head's vectors and the new ones.
    pub fn write_vectors(
        &self,
        model: &str,
        vectors: &Vectors,
        layout: &[FileVectors],
    ) -> std::io::Result<()> {
        let count = vectors.count();
        self.write_aside_with(&self.vectors_file(model), |out| {
            out.write_all(MAGIC)?;
            out.write_all(&(vectors.dim() as u32).to_le_bytes())?;
            out.write_all(&(count as u32).to_le_bytes())?;
            let mut bits = vec![0u8; count.div_ceil(8)];
            for i in vectors.ids() {
                bits[*i as usize / 8] |= 1 << (i % 8);
            }
            out.write_all(&bits)?;
            for f in vectors.scales() {
                out.write_all(&f.to_le_bytes())?;
            }
            let mut bytes = Vec::with_capacity(1 << 16);
            for chunk in vectors.codes().chunks(1 << 16) {
                bytes.clear();
                bytes.extend(chunk.iter().map(|c| *c as u8));
                out.write_all(&bytes)?;
            }
            Ok(())
        })?;
        self.write_signs(model, vectors)?;
        self.write_layout(model, layout)
    }

    /// Stores the signs of `model`'s vectors beside them when a search
    /// compares signs first (past [`SIGNS_MIN`] vectors): computing them
    /// took a cold `sno search` on 8.4M lines 165 ms of CPU, and their
    /// 25 MB are mapped instead. Signs of other vectors are removed.
    pub fn write_signs(&self, model: &str, vectors: &Vectors) -> std::io::Result<()> {
        let file = self.signs_file(model);
        if vectors.ids().len() <= SIGNS_MIN {
            return self.remove_signs(model);
        }
        let words = vectors.sign_words();
        let scales: Vec<u8> = vectors
            .scales()
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let head = signs_head(vectors.count(), vectors.ids().len(), vectors.dim(), &scales);
        self.write_aside_with(&file, |out| {
            out.write_all(&head)?;
            for chunk in words.chunks(1 << 13) {
                let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
                out.write_all(&bytes)?;
            }
            Ok(())
        })
    }

    fn remove_signs(&self, model: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.signs_file(model)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Stores the vectors `plan` makes over `previous`'s vectors of
    /// `model`, read from its file a run at a time and written as they are
    /// read: neither the previous vectors nor the new ones are ever held
    /// whole (on 8.4M lines each is 200 MB).
    pub fn write_carried(
        &self,
        model: &str,
        previous: &HeadCache,
        plan: &crate::search::CarriedPlan,
    ) -> std::io::Result<()> {
        use crate::search::VectorFrom;
        use std::io::{Read, Seek, SeekFrom};
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let mut old = std::fs::File::open(previous.vectors_file(model))?;
        let head = VectorsHead::read(&mut old)
            .ok_or_else(|| bad("the previous vectors are unreadable"))?;
        if old.metadata()?.len() != head.file_len() {
            return Err(bad("the previous vectors file is cut"));
        }
        let fresh = &plan.fresh;
        let dim = match (head.ids.is_empty(), fresh.ids().is_empty()) {
            (false, false) if head.dim != fresh.dim() => {
                return Err(bad("the previous vectors have another length"));
            }
            (false, _) => head.dim,
            (true, _) => fresh.dim(),
        };
        let n_old = head.ids.len();
        let in_range = plan.rows.iter().all(|(doc, from)| {
            (*doc as usize) < plan.count
                && match from {
                    VectorFrom::Previous(k) => (*k as usize) < n_old,
                    VectorFrom::Fresh(k) => (*k as usize) < fresh.ids().len(),
                }
        });
        if !in_range {
            return Err(bad("a vector planned from outside the vectors"));
        }
        let mut scales = vec![0u8; n_old * 4];
        old.read_exact(&mut scales)?;
        let old_scale =
            |k: usize| f32::from_le_bytes(scales[k * 4..k * 4 + 4].try_into().expect("4 bytes"));
        let codes_at = head.codes_at();
        self.write_aside_with(&self.vectors_file(model), |out| {
            out.write_all(MAGIC)?;
            out.write_all(&(dim as u32).to_le_bytes())?;
            out.write_all(&(plan.count as u32).to_le_bytes())?;
            let mut bits = vec![0u8; plan.count.div_ceil(8)];
            for (doc, _) in &plan.rows {
                bits[*doc as usize / 8] |= 1 << (doc % 8);
            }
            out.write_all(&bits)?;
            for (_, from) in &plan.rows {
                let scale = match from {
                    VectorFrom::Previous(k) => old_scale(*k as usize),
                    VectorFrom::Fresh(k) => fresh.scales()[*k as usize],
                };
                out.write_all(&scale.to_le_bytes())?;
            }
            // Runs of consecutive previous vectors are read at once, a
            // bounded buffer at a time.
            let per_read = ((1usize << 20) / dim.max(1)).max(1);
            let mut buf: Vec<u8> = Vec::with_capacity(per_read * dim);
            let mut at: Option<u64> = None;
            let mut i = 0;
            while i < plan.rows.len() {
                match plan.rows[i].1 {
                    VectorFrom::Fresh(k) => {
                        let k = k as usize;
                        let codes = &fresh.codes()[k * dim..(k + 1) * dim];
                        buf.clear();
                        buf.extend(codes.iter().map(|c| *c as u8));
                        out.write_all(&buf)?;
                        i += 1;
                    }
                    VectorFrom::Previous(k) => {
                        let mut run = 1;
                        while run < per_read
                            && plan
                                .rows
                                .get(i + run)
                                .is_some_and(|r| r.1 == VectorFrom::Previous(k + run as u32))
                        {
                            run += 1;
                        }
                        let offset = codes_at + k as u64 * dim as u64;
                        if at != Some(offset) {
                            old.seek(SeekFrom::Start(offset))?;
                        }
                        buf.resize(run * dim, 0);
                        old.read_exact(&mut buf)?;
                        at = Some(offset + buf.len() as u64);
                        out.write_all(&buf)?;
                        i += run;
                    }
                }
            }
            Ok(())
        })?;
        if plan.rows.len() > SIGNS_MIN {
            // Read back mapped: nothing of the codes is held to sign them.
            let written = self
                .read_vectors(model, Some(plan.count))
                .ok_or_else(|| bad("the written vectors do not read back"))?;
            self.write_signs(model, &written)?;
        } else {
            self.remove_signs(model)?;
        }
        self.write_layout(model, &plan.layout)
    }

    /// Stores which files' documents the vectors of `model` hold.
    fn write_layout(&self, model: &str, layout: &[FileVectors]) -> std::io::Result<()> {
        // Paths hold no tab or newline that git would let through unquoted
        // here: a path that does is left out, and its file's vectors are
        // made again at the next head.
        let mut text = String::from("SNOLAY01\n");
        for f in layout {
            if f.path.contains(['\t', '\n']) || f.marker.contains(['\t', '\n']) {
                text.push_str(&format!("{}\t-\t-\n", f.count));
                continue;
            }
            text.push_str(&format!("{}\t{}\t{}\n", f.count, f.marker, f.path));
        }
        text.push_str("END\n");
        self.write_aside(&self.layout_file(model), text.as_bytes())
    }
}

/// The head of a vectors file: what precedes its scales and codes.
struct VectorsHead {
    dim: usize,
    count: usize,
    /// The documents that have a vector (the file's bits).
    ids: Vec<u32>,
}

impl VectorsHead {
    /// Reads the magic, dimension, count and bits, leaving `file` at the
    /// scales.
    fn read(file: &mut impl std::io::Read) -> Option<VectorsHead> {
        let mut head = [0u8; 16];
        file.read_exact(&mut head).ok()?;
        if &head[..8] != MAGIC {
            return None;
        }
        let dim = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
        let count = u32::from_le_bytes(head[12..16].try_into().ok()?) as usize;
        let mut bits = vec![0u8; count.div_ceil(8)];
        file.read_exact(&mut bits).ok()?;
        let ids: Vec<u32> = (0..count as u32)
            .filter(|i| bits[*i as usize / 8] & (1 << (i % 8)) != 0)
            .collect();
        Some(VectorsHead { dim, count, ids })
    }

    /// Where the scales start (after the magic, dimension, count and bits).
    fn scales_at(&self) -> u64 {
        scales_at(self.count)
    }

    /// Where the codes start.
    fn codes_at(&self) -> u64 {
        self.scales_at() + self.ids.len() as u64 * 4
    }

    /// The length of the whole file.
    fn file_len(&self) -> u64 {
        self.codes_at() + self.ids.len() as u64 * self.dim as u64
    }
}

/// Vectors stored by [`HeadCache::write_vectors`] in `path`, if intact
/// (`expected` documents): past [`SIGNS_MIN`] of them, with their codes
/// mapped rather than read (a search compares their signs and reads a few
/// hundred rows of codes) and their signs if stored beside them for
/// exactly these vectors.
pub fn read_vectors_file(path: &Path, expected: Option<usize>) -> Option<Vectors> {
    let map = crate::mapped::MappedFile::open(path).ok()?;
    let bytes = map.bytes();
    let head = VectorsHead::read(&mut &bytes[..])?;
    if expected.is_some_and(|e| e != head.count) || bytes.len() as u64 != head.file_len() {
        return None;
    }
    let (scales_at, codes_at) = (head.scales_at() as usize, head.codes_at() as usize);
    let scale_bytes = &bytes[scales_at..codes_at];
    let scales = scale_bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let VectorsHead { dim, count, ids } = head;
    let n = ids.len();
    let codes = crate::mapped::Region::of(&map, codes_at, n * dim)?;
    // Up to SIGNS_MIN vectors a search scans every code and compares no
    // signs: the codes are read into memory (a few MB), where the
    // allocator may back them with huge pages.
    if n <= SIGNS_MIN {
        return Vectors::from_parts(count, dim, ids, codes.as_i8().to_vec(), scales);
    }
    let want = signs_head(count, n, dim, scale_bytes);
    let vectors = Vectors::from_mapped(count, dim, ids, codes, scales)?;
    let signs = crate::mapped::MappedFile::open(&signs_beside(path))
        .ok()
        .filter(|s| s.bytes().get(..SIGNS_HEAD) == Some(&want[..]))
        .and_then(|s| {
            let len = s.bytes().len() - SIGNS_HEAD;
            crate::mapped::Region::of(&s, SIGNS_HEAD, len)
        });
    Some(match signs {
        Some(signs) => vectors.with_stored_signs(signs),
        None => vectors,
    })
}

/// Where a vectors file of `count` documents has its scales: after the
/// magic, the dimension, the count and a bit a document.
fn scales_at(count: usize) -> u64 {
    16 + count.div_ceil(8) as u64
}

/// Where the signs of the vectors in `vectors_file` are stored.
fn signs_beside(vectors_file: &Path) -> PathBuf {
    let name = vectors_file
        .file_name()
        .map(|n| n.to_string_lossy().replace("vectors-", "signs-"))
        .unwrap_or_default();
    vectors_file.with_file_name(name).with_extension("bits")
}

/// The head of a signs file made from vectors of `count` documents, `n`
/// of them with a vector of `dim` components scaled by `scales` (as the
/// vectors file stores them): it names them by their rows, dimension,
/// file length and scales, so signs of other vectors (an earlier file of
/// the same name) are never taken for theirs.
fn signs_head(count: usize, n: usize, dim: usize, scales: &[u8]) -> [u8; SIGNS_HEAD] {
    let file_len = scales_at(count) + n as u64 * (4 + dim as u64);
    let mut head = [0u8; SIGNS_HEAD];
    head[..8].copy_from_slice(SIGNS_MAGIC);
    head[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    head[12..16].copy_from_slice(&(dim as u32).to_le_bytes());
    head[16..24].copy_from_slice(&file_len.to_le_bytes());
    head[24..32].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(scales).to_le_bytes());
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::model::{CommitId, Seq};

    fn head(commit: u8, seq: u64) -> IndexedHead {
        IndexedHead {
            commit: CommitId([commit; 20]),
            branch: None,
            seq: Seq(seq),
        }
    }

    /// The document map is stored as a zstd frame and read back equal; a
    /// bare one, as builds before wrote them, is read too.
    #[test]
    fn a_document_map_is_stored_compressed_and_a_bare_one_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HeadCache::for_head(dir.path(), &head(1, 3));
        let mut state = sno_journal::delta::State::new();
        for i in 0..200 {
            let names = [format!("load_{i}"), format!("Config{i}")];
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let path = format!("src/m{i}.py");
            state.insert(
                path.clone(),
                sno_journal::test_support::record(&path, 1, &names),
            );
        }
        let map = crate::doc_map::DocMap::of(&state, &[]);
        cache.write_doc_map(&map).unwrap();
        let stored = std::fs::read(cache.doc_map_file()).unwrap();
        assert!(stored.starts_with(&ZSTD_MAGIC));
        assert!(
            stored.len() * 2 < map.to_bytes().len(),
            "{} bytes",
            stored.len()
        );
        assert!(cache.read_doc_map() == Some(map.clone()));
        // The frame says its length, which the reader decompresses into.
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&stored).unwrap(),
            Some(map.to_bytes().len() as u64)
        );
        // A frame that does not (as builds before wrote them) still reads.
        let streamed = zstd::stream::encode_all(map.to_bytes().as_slice(), 3).unwrap();
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&streamed).unwrap(),
            None
        );
        std::fs::write(cache.doc_map_file(), streamed).unwrap();
        assert!(cache.read_doc_map() == Some(map.clone()));
        std::fs::write(cache.doc_map_file(), map.to_bytes()).unwrap();
        assert!(cache.read_doc_map() == Some(map));
    }

    #[test]
    fn past_caches_go_least_recently_used_first_and_never_the_one_in_use() {
        let t = |s: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s);
        let p = |n: &str| PathBuf::from(n);
        let caches = vec![
            (t(10), 40, p("old")),
            (t(30), 40, p("new")),
            (t(20), 40, p("mid")),
            (t(5), 5, p("oldest-small")),
            (t(1), 500, p("in-use")),
        ];
        // The one in use counts first, even when it alone is over budget.
        assert_eq!(
            past_to_evict(&caches, Path::new("in-use"), 100),
            vec![p("new"), p("mid"), p("old"), p("oldest-small")]
        );
        // 40 + 40 + 5 in use fit 90; "old" does not, nor anything older,
        // small as it is.
        let caches: Vec<_> = caches.into_iter().filter(|c| c.2 != p("in-use")).collect();
        assert_eq!(
            past_to_evict(&caches, Path::new("mid"), 90),
            vec![p("old"), p("oldest-small")]
        );
        assert!(past_to_evict(&caches, Path::new("mid"), 1000).is_empty());
    }

    #[test]
    fn past_caches_are_evicted_on_disk_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let cache = |c: u8| HeadCache::for_past(dir.path(), &CommitId([c; 20]), Seq(u64::from(c)));
        let (a, b, c) = (cache(1), cache(2), cache(3));
        for (k, x) in [&a, &b, &c].into_iter().enumerate() {
            std::fs::create_dir_all(x.lexical_dir()).unwrap();
            std::fs::write(x.lexical_dir().join("segment"), vec![0u8; 1000]).unwrap();
            x.mark_used();
            // Distinct use times, a used with the oldest.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(100 + k as u64);
            std::fs::File::options()
                .write(true)
                .open(x.dir.join("used"))
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        assert!(a.exists() && b.exists() && c.exists());
        // Room for two: the least recently used (a) goes.
        let gone = HeadCache::evict_past(dir.path(), &c, 2100);
        assert_eq!(gone, vec![a.dir.clone()]);
        assert!(!a.exists() && b.exists() && c.exists());
        // Marking b used keeps it over c.
        b.mark_used();
        HeadCache::evict_past(dir.path(), &b, 1500);
        assert!(b.exists() && !c.exists());
        // A head cache is not a past one: they live apart.
        let h = HeadCache::for_head(dir.path(), &head(3, 3));
        assert_ne!(h.dir.parent(), c.dir.parent());
    }

    #[test]
    fn history_round_trips_and_a_cut_file_reads_as_missing() {
        let dir = tempfile::tempdir().unwrap();
        let c = HeadCache::for_head(dir.path(), &head(2, 5));
        assert!(c.read_history().is_none());
        let mut h = crate::search::HistoryFacts {
            commits: 3,
            ..Default::default()
        };
        h.touches.insert("a b.py".into(), vec![0, 2]);
        h.touches.insert("src/x.rs".into(), vec![1]);
        h.messages = vec![
            "first\twith a tab".into(),
            "fix: x\r\nbroken".into(),
            "".into(),
        ];
        h.ids = vec![CommitId([7; 20]), CommitId([8; 20]), CommitId([9; 20])];
        c.write_history(&h).unwrap();
        let back = c.read_history().unwrap();
        assert_eq!(back.commits, 3);
        assert_eq!(back.touches, h.touches);
        assert_eq!(back.ids, h.ids);
        // A message is kept on its line, whatever it holds.
        assert_eq!(back.messages, ["first\twith a tab", "fix: x  broken", ""]);
        // The next head finds them, with the head they were made for.
        let (commit, seq, prev) = HeadCache::for_head(dir.path(), &head(3, 6))
            .previous_history()
            .unwrap();
        assert_eq!(
            (commit, seq, prev.touches),
            (CommitId([2; 20]), Seq(5), h.touches)
        );
        let f = c.history_file();
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, text.trim_end_matches("END\n")).unwrap();
        assert!(c.read_history().is_none());
        // An older sno's facts, without the messages, are made again.
        std::fs::write(&f, "SNOHIST1 3\n0 2\ta b.py\nEND\n").unwrap();
        assert!(c.read_history().is_none());
        // And without the commits' ids.
        std::fs::write(&f, "SNOHIST2 1\n0\ta b.py\nMESSAGES\nfirst\nEND\n").unwrap();
        assert!(c.read_history().is_none());
    }

    #[test]
    fn vectors_round_trip_and_damage_or_a_count_mismatch_reads_as_missing() {
        let dir = tempfile::tempdir().unwrap();
        let c = HeadCache::for_head(dir.path(), &head(1, 3));
        assert!(c.read_vectors("m", None).is_none());
        let vs = Vectors::from_rows(&[vec![0.5, -1.0], vec![], vec![0.0, 2.0], vec![0.0, 0.0]]);
        c.write_vectors("m", &vs, &[]).unwrap();
        // A document without a vector (or a zero one) reads back without.
        let back = c.read_vectors("m", Some(4)).unwrap();
        assert_eq!(back, vs);
        assert!(!back.is_mapped(), "a few vectors are read, not mapped");
        assert_eq!(back.ids(), [0, 2]);
        // And takes a bit, not a vector; a vector its scale and codes.
        assert_eq!(
            std::fs::metadata(c.vectors_file("m")).unwrap().len(),
            16 + 1 + 2 * (4 + 2)
        );
        assert!(c.read_vectors("other model", Some(3)).is_none());
        assert!(c.read_vectors("m", Some(3)).is_none());
        let f = c.vectors_file("m");
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() - 1]).unwrap();
        assert!(
            c.read_vectors("m", None).is_none(),
            "a cut file is not trusted"
        );
        // Another head's cache takes over this one's lexical index, and
        // removes the rest.
        std::fs::create_dir_all(c.lexical_dir()).unwrap();
        let next = HeadCache::for_head(dir.path(), &head(1, 4));
        assert_eq!(next.previous_lexical(), Some(c.lexical_dir()));
        next.remove_others();
        assert!(!c.dir.exists());
        assert_eq!(next.previous_lexical(), None);
    }

    #[test]
    fn vectors_carried_on_disk_equal_those_carried_in_memory() {
        use crate::search::{CarriedPlan, VectorFrom};
        let dir = tempfile::tempdir().unwrap();
        let prev = HeadCache::for_head(dir.path(), &head(1, 3));
        let old = Vectors::from_rows(&[
            vec![0.5, -1.0],
            vec![],
            vec![0.0, 2.0],
            vec![3.0, 1.0],
            vec![-1.0, -0.5],
        ]);
        prev.write_vectors("m", &old, &[]).unwrap();
        assert_eq!(
            prev.read_vector_ids("m", 5).as_deref(),
            Some(&[0, 2, 3, 4][..])
        );
        assert!(prev.read_vector_ids("m", 4).is_none(), "another count");
        let plan = CarriedPlan {
            count: 7,
            rows: vec![
                (0, VectorFrom::Previous(2)),
                (1, VectorFrom::Fresh(1)),
                (3, VectorFrom::Previous(0)),
                (4, VectorFrom::Previous(1)),
                (5, VectorFrom::Fresh(0)),
                (6, VectorFrom::Previous(3)),
            ],
            fresh: Vectors::from_rows(&[vec![1.0, 1.0], vec![-2.0, 0.25]]),
            new: Vec::new(),
            layout: vec![FileVectors {
                path: "a.py".into(),
                marker: "m1".into(),
                count: 7,
            }],
            files_carried: 1,
        };
        let next = HeadCache::for_head(dir.path(), &head(1, 4));
        // Signs left by an earlier file of the name: a few vectors have none.
        std::fs::create_dir_all(&next.dir).unwrap();
        std::fs::write(next.signs_file("m"), b"stale").unwrap();
        next.write_carried("m", &prev, &plan).unwrap();
        assert!(!next.signs_file("m").exists());
        let in_memory = plan.vectors(Some(&old));
        assert_eq!(in_memory.ids(), [0, 1, 3, 4, 5, 6]);
        assert_eq!(next.read_vectors("m", Some(7)).unwrap(), in_memory);
        assert_eq!(next.read_layout("m").unwrap(), plan.layout);
        // Byte for byte the file the in-memory vectors make.
        let whole = HeadCache::for_head(dir.path(), &head(1, 5));
        whole.write_vectors("m", &in_memory, &plan.layout).unwrap();
        assert_eq!(
            std::fs::read(next.vectors_file("m")).unwrap(),
            std::fs::read(whole.vectors_file("m")).unwrap()
        );

        // A plan reaching past the previous vectors, or a cut previous
        // file, writes nothing.
        let other = HeadCache::for_head(dir.path(), &head(1, 6));
        let mut beyond = CarriedPlan {
            rows: vec![(0, VectorFrom::Previous(4))],
            fresh: Vectors::default(),
            ..plan
        };
        assert!(other.write_carried("m", &prev, &beyond).is_err());
        beyond.rows = vec![(0, VectorFrom::Previous(3))];
        let f = prev.vectors_file("m");
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() - 1]).unwrap();
        assert!(other.write_carried("m", &prev, &beyond).is_err());
        assert!(!other.vectors_file("m").exists());
        std::fs::write(&f, &bytes).unwrap();
        other.write_carried("m", &prev, &beyond).unwrap();
        let back = other.read_vectors("m", Some(7)).unwrap();
        assert_eq!(back.ids(), [0]);
        assert_eq!(back.codes(), &old.codes()[6..8]);
    }

    /// Past [`SIGNS_MIN`] vectors their signs are stored beside them and
    /// read back with them, mapped; a search over them answers as one over
    /// signs computed afresh. Signs made from other vectors, or cut, are
    /// not taken; fewer vectors remove them.
    #[test]
    fn signs_are_stored_beside_many_vectors_and_only_taken_for_them() {
        use crate::search::{CarriedPlan, VectorFrom};
        use crate::semantic::SemanticIndex;
        let dir = tempfile::tempdir().unwrap();
        let mut seed = 7u64;
        let mut rows = |n: usize| -> Vec<Vec<f32>> {
            (0..n)
                .map(|_| {
                    (0..8)
                        .map(|_| {
                            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                        })
                        .collect()
                })
                .collect()
        };
        let n = SIGNS_MIN + 10;
        let vs = Vectors::from_rows(&rows(n));
        let c = HeadCache::for_head(dir.path(), &head(1, 3));
        c.write_vectors("m", &vs, &[]).unwrap();
        assert!(c.signs_file("m").exists());
        let back = c.read_vectors("m", Some(n)).unwrap();
        assert!(back.has_stored_signs());
        assert!(back.is_mapped());
        // (Not assert_eq: a failure would print 200k vectors.)
        assert!(back == vs);
        let stored = SemanticIndex::build(back);
        let computed = SemanticIndex::build(vs.clone());
        for q in rows(5) {
            assert_eq!(stored.search(&q, 10), computed.search(&q, 10));
            assert_eq!(stored.search(&q, 10).len(), 10);
        }

        // Other vectors of the same count under another head: the first
        // head's signs copied over theirs are refused.
        let other = Vectors::from_rows(&rows(n));
        let o = HeadCache::for_head(dir.path(), &head(2, 3));
        o.write_vectors("m", &other, &[]).unwrap();
        assert!(o.read_vectors("m", None).unwrap().has_stored_signs());
        std::fs::copy(c.signs_file("m"), o.signs_file("m")).unwrap();
        let read = o.read_vectors("m", None).unwrap();
        assert!(!read.has_stored_signs(), "signs of other vectors");
        assert!(read == other, "the vectors themselves still read");
        // Cut, they are not taken either.
        let bytes = std::fs::read(c.signs_file("m")).unwrap();
        std::fs::write(o.signs_file("m"), &bytes[..bytes.len() - 8]).unwrap();
        assert!(!o.read_vectors("m", None).unwrap().has_stored_signs());
        std::fs::write(c.signs_file("m"), &bytes[..bytes.len() - 8]).unwrap();
        assert!(!c.read_vectors("m", None).unwrap().has_stored_signs());
        std::fs::write(c.signs_file("m"), &bytes).unwrap();

        // Vectors carried from a head's file get their signs too.
        let plan = CarriedPlan {
            count: n,
            rows: (0..n as u32)
                .map(|d| (d, VectorFrom::Previous(n as u32 - 1 - d)))
                .collect(),
            fresh: Vectors::default(),
            new: Vec::new(),
            layout: Vec::new(),
            files_carried: 0,
        };
        let next = HeadCache::for_head(dir.path(), &head(1, 4));
        next.write_carried("m", &c, &plan).unwrap();
        let carried = next.read_vectors("m", Some(n)).unwrap();
        assert!(carried.has_stored_signs());
        assert!(carried == plan.vectors(Some(&vs)));

        // Few vectors: no signs, and stale ones are removed.
        c.write_vectors("m", &Vectors::from_rows(&rows(3)), &[])
            .unwrap();
        assert!(!c.signs_file("m").exists());
    }
}
