//! Semantic retrieval: model2vec static embeddings of each symbol's words and
//! an HNSW index (hnsw_rs) over them, cosine distance.

use std::path::Path;

use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::prelude::DistDot;
use model2vec_rs::model::StaticModel;

/// A loaded embedding model.
pub struct Embedder {
    model: StaticModel,
    /// Where it came from, as the user named it.
    pub source: String,
}

/// Why no model could be had.
#[derive(Debug, thiserror::Error)]
#[error("embedding model `{source_name}`: {reason}")]
pub struct ModelError {
    pub source_name: String,
    pub reason: String,
}

impl Embedder {
    /// Loads a model: a directory (`config.json`, `tokenizer.json`,
    /// `model.safetensors`), or a Hugging Face model id (`owner/name`),
    /// fetched once into the Hugging Face cache and read from there after.
    /// With `HF_HUB_OFFLINE=1` (or `SNO_OFFLINE=1`) ids are only read from the
    /// cache. The caller falls back to lexical + structural retrieval on error.
    pub fn load(spec: &str) -> Result<Embedder, ModelError> {
        let fail = |reason: String| ModelError {
            source_name: spec.to_string(),
            reason,
        };
        let path = Path::new(spec);
        if !path.is_dir() {
            let looks_like_id = spec.split('/').count() == 2
                && !spec.starts_with(['/', '.', '~'])
                && spec.split('/').all(|p| !p.is_empty());
            if !looks_like_id {
                return Err(fail("no such model directory".into()));
            }
            if let Some(dir) = hub_cache_dir(spec) {
                return Self::load_dir(&dir, spec);
            }
            if offline() {
                return Err(fail("offline and not in the Hugging Face cache".into()));
            }
        }
        let model = StaticModel::from_pretrained(spec, None, None, None)
            .map_err(|e| fail(format!("{e} ({})", e.root_cause())))?;
        Ok(Embedder {
            model,
            source: source_name(spec),
        })
    }

    fn load_dir(dir: &Path, source: &str) -> Result<Embedder, ModelError> {
        let model =
            StaticModel::from_pretrained(dir, None, None, None).map_err(|e| ModelError {
                source_name: source.to_string(),
                reason: format!("{e:#}"),
            })?;
        Ok(Embedder {
            model,
            source: source.to_string(),
        })
    }

    /// Unit-length embeddings of `texts` (all-zero for text the model knows
    /// no token of).
    pub fn embed(&self, texts: &[String]) -> Vec<Vec<f32>> {
        self.model.encode(texts)
    }

    /// Dimension of the vectors.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }
}

fn offline() -> bool {
    ["HF_HUB_OFFLINE", "SNO_OFFLINE"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|x| x == "1" || x == "true"))
}

/// The newest snapshot of a model in the Hugging Face cache, if any.
fn hub_cache_dir(id: &str) -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HF_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/huggingface"))
        })?;
    let snapshots = home
        .join("hub")
        .join(format!("models--{}", id.replace('/', "--")))
        .join("snapshots");
    std::fs::read_dir(snapshots)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("model.safetensors").exists())
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
}

/// Whether the model `spec` names can be loaded without the network: a
/// model directory, or a Hugging Face id already in the cache.
pub fn available_offline(spec: &str) -> bool {
    let p = Path::new(spec);
    if p.is_dir() {
        return p.join("model.safetensors").exists() || p.join("0_StaticEmbedding").is_dir();
    }
    hub_cache_dir(spec).is_some()
}

/// The name vectors made by the model `spec` names are stored under: one
/// directory named two ways (`a/../b`, a symlink) is one model.
pub fn source_name(spec: &str) -> String {
    let path = Path::new(spec);
    if path.is_dir() {
        if let Ok(p) = path.canonicalize() {
            return p.display().to_string();
        }
    }
    spec.to_string()
}

/// Up to this many vectors an exact scan serves. A scan of 256-float
/// vectors held in one contiguous block costs about 1 ms per 10,000 on one
/// core of this project's 2-core machine, while an HNSW graph costs about
/// 90 µs per vector to build before its first answer (3.6 s for
/// sqlalchemy's 40k, over a minute for the 765k embedded symbols of 8.6M
/// lines of Rust), and every CLI call is a first answer. A daemon breaks
/// even after about as many queries as the scan is milliseconds long: a
/// few hundred queries at a million vectors, past which the graph pays.
/// The scan is also exact.
pub const FLAT_MAX: usize = 1_000_000;

/// Embeddings numbered like the documents they embed, in one block: the
/// documents that have a vector, and their vectors one after the other,
/// each as `dim` signed bytes and a scale (its largest magnitude over 127).
/// A document without one (not embedded, or nothing the model knew) costs
/// nothing; on millions of documents a vector each as its own allocation
/// cost seconds and gigabytes, and f32 four times the bytes. A scan reads
/// every vector, so its time is the bytes it reads: 765k vectors are 196
/// MB this way against 783 MB. A similarity moves by about 1e-3 (each
/// component is off by at most half a step of 1/127 of the vector's
/// largest), and the quality eval's figures were those of f32 vectors.
#[derive(Clone, Debug, Default)]
pub struct Vectors {
    count: usize,
    dim: usize,
    ids: Vec<u32>,
    codes: Codes,
    scales: Vec<f32>,
    /// Their signs as stored beside them, when read from a file that has
    /// them ([`Vectors::with_stored_signs`]); dropped by any change.
    signs: Option<StoredSigns>,
}

/// The codes of a set of vectors: made in memory, or mapped from the file
/// that stores them (a search reads a few hundred of their rows).
#[derive(Clone)]
enum Codes {
    Owned(Vec<i8>),
    Mapped(crate::mapped::Region),
}

impl Default for Codes {
    fn default() -> Codes {
        Codes::Owned(Vec::new())
    }
}

impl std::ops::Deref for Codes {
    type Target = [i8];

    fn deref(&self) -> &[i8] {
        match self {
            Codes::Owned(v) => v,
            Codes::Mapped(r) => r.as_i8(),
        }
    }
}

impl Codes {
    /// The codes to change: mapped ones are copied first.
    fn to_mut(&mut self) -> &mut Vec<i8> {
        if let Codes::Mapped(r) = self {
            *self = Codes::Owned(r.as_i8().to_vec());
        }
        match self {
            Codes::Owned(v) => v,
            Codes::Mapped(_) => unreachable!("made owned above"),
        }
    }
}

impl PartialEq for Codes {
    fn eq(&self, other: &Codes) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Codes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self {
            Codes::Owned(_) => "owned",
            Codes::Mapped(_) => "mapped",
        };
        write!(f, "{} codes ({how})", self.len())
    }
}

impl PartialEq for Vectors {
    /// The same vectors of the same documents, however held: signs are
    /// derived from the codes, so never what makes two sets differ.
    fn eq(&self, other: &Vectors) -> bool {
        self.count == other.count
            && self.dim == other.dim
            && self.ids == other.ids
            && self.codes == other.codes
            && self.scales == other.scales
    }
}

/// Signs read from beside the vectors, a row of words a vector.
#[derive(Clone)]
struct StoredSigns(crate::mapped::Region);

impl std::fmt::Debug for StoredSigns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes of stored signs", self.0.bytes().len())
    }
}

impl Vectors {
    /// No vectors yet, for `count` documents.
    pub fn with_count(count: usize) -> Vectors {
        Vectors {
            count,
            ..Vectors::default()
        }
    }

    /// One vector a document, in order; empty or zero ones are left out.
    pub fn from_rows(rows: &[Vec<f32>]) -> Vectors {
        let mut v = Vectors::with_count(rows.len());
        for (doc, row) in rows.iter().enumerate() {
            v.push(doc, row);
        }
        v
    }

    /// Checked parts as a file stores them: `ids` increasing and below
    /// `count`, `dim` codes and one scale each.
    pub fn from_parts(
        count: usize,
        dim: usize,
        ids: Vec<u32>,
        codes: Vec<i8>,
        scales: Vec<f32>,
    ) -> Option<Vectors> {
        Self::checked(count, dim, ids, Codes::Owned(codes), scales)
    }

    /// [`Vectors::from_parts`] with the codes mapped from their file.
    pub fn from_mapped(
        count: usize,
        dim: usize,
        ids: Vec<u32>,
        codes: crate::mapped::Region,
        scales: Vec<f32>,
    ) -> Option<Vectors> {
        Self::checked(count, dim, ids, Codes::Mapped(codes), scales)
    }

    fn checked(
        count: usize,
        dim: usize,
        ids: Vec<u32>,
        codes: Codes,
        scales: Vec<f32>,
    ) -> Option<Vectors> {
        let ordered = ids.windows(2).all(|w| w[0] < w[1]);
        let inside = ids.last().is_none_or(|l| (*l as usize) < count);
        let sized = codes.len() == ids.len() * dim
            && scales.len() == ids.len()
            && (dim > 0 || ids.is_empty());
        (ordered && inside && sized).then_some(Vectors {
            count,
            dim,
            ids,
            codes,
            scales,
            signs: None,
        })
    }

    /// These vectors with their signs as stored beside them: `signs`
    /// holds a row of `dim.div_ceil(64)` little-endian words a vector, as
    /// [`Vectors::sign_words`] gives them. Refused (`None` kept) unless
    /// it is exactly that size and aligned; the caller checks that the
    /// file was made from these vectors.
    pub fn with_stored_signs(mut self, signs: crate::mapped::Region) -> Vectors {
        let words = self.dim.div_ceil(64);
        let whole = signs
            .as_u64()
            .is_some_and(|b| b.len() == self.ids.len() * words);
        if whole && self.dim > 0 {
            self.signs = Some(StoredSigns(signs));
        }
        self
    }

    /// Whether the codes are mapped from their file (rather than held).
    pub fn is_mapped(&self) -> bool {
        matches!(self.codes, Codes::Mapped(_))
    }

    /// Whether signs stored beside the vectors came with them.
    pub fn has_stored_signs(&self) -> bool {
        self.signs.is_some()
    }

    /// The signs of every vector, a row of `dim.div_ceil(64)` words each
    /// (what a scan over many vectors compares first), to store beside
    /// them.
    pub fn sign_words(&self) -> Vec<u64> {
        use rayon::prelude::*;
        let words = self.dim.div_ceil(64);
        let mut bits = vec![0u64; self.ids.len() * words];
        if self.dim > 0 {
            // Bit `j` of a row is set when component `j` is positive.
            bits.par_chunks_exact_mut(words)
                .zip(self.codes.par_chunks_exact(self.dim))
                .for_each(|(row, codes)| {
                    for (w, chunk) in row.iter_mut().zip(codes.chunks(64)) {
                        // A mask of a run of bytes, which compiles to byte
                        // compares and mask moves.
                        *w = chunk
                            .iter()
                            .enumerate()
                            .fold(0u64, |m, (j, c)| m | (u64::from(*c > 0) << j));
                    }
                });
        }
        bits
    }

    /// Sets document `doc`'s vector; documents come in increasing order.
    /// A zero vector, or one of another length than the first, is left out.
    pub fn push(&mut self, doc: usize, v: &[f32]) {
        if is_zero(v) {
            return;
        }
        if let Some((scale, codes)) = sno_journal::int8::quantize(v) {
            self.push_codes(doc, &codes, scale);
        }
    }

    /// [`Vectors::push`] for a vector already in codes (another head's).
    pub fn push_codes(&mut self, doc: usize, codes: &[i8], scale: f32) {
        if self.ids.last().is_some_and(|l| *l as usize >= doc) || doc >= self.count {
            return;
        }
        if self.ids.is_empty() {
            self.dim = codes.len();
        }
        if codes.len() == self.dim && self.dim > 0 {
            self.ids.push(doc as u32);
            self.codes.to_mut().extend_from_slice(codes);
            self.scales.push(scale);
            self.signs = None;
        }
    }

    /// Documents in all, with a vector or not.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The length of each vector (0 when there is none).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The documents that have a vector, in order.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Their codes, one vector after the other.
    pub fn codes(&self) -> &[i8] {
        &self.codes
    }

    /// Their scales, one a vector.
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// (document, codes, scale) of each document that has a vector.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[i8], f32)> {
        self.ids
            .iter()
            .zip(self.codes.chunks_exact(self.dim.max(1)))
            .zip(&self.scales)
            .map(|((i, c), s)| (*i as usize, c, *s))
    }

    /// Document `doc`'s vector as floats (codes times scale), if it has one.
    #[cfg(test)]
    fn get(&self, doc: usize) -> Option<Vec<f32>> {
        let k = self.ids.binary_search(&(doc as u32)).ok()?;
        let dim = self.dim;
        Some(
            self.codes[k * dim..(k + 1) * dim]
                .iter()
                .map(|c| f32::from(*c) * self.scales[k])
                .collect(),
        )
    }
}

/// Vectors past which the exact scan runs on every core.
const PARALLEL_SCAN: usize = 50_000;

/// Vectors past which a scan first compares signs: the scan reads every
/// vector, so its time is the bytes it reads (196 MB, 20-30 ms on 2 cores,
/// for 765k vectors), and a vector's signs are an eighth of its codes.
/// Below, the exact scan costs a few milliseconds at most.
pub const SIGNS_MIN: usize = 200_000;

/// Candidates the signs keep per answer asked for, scored exactly after.
const SIGNS_KEEP: usize = 50;

/// Each vector's signs, a bit per component: the Hamming distance of two
/// such rows estimates the angle between the vectors (random-hyperplane
/// hashing, with the coordinate axes as the planes), so the nearest by
/// signs hold the nearest by cosine, which the codes then rank exactly.
struct Signs {
    words: usize,
    bits: SignBits,
}

/// The sign rows: computed, or mapped from beside the vectors.
enum SignBits {
    Owned(Vec<u64>),
    Stored(StoredSigns),
}

impl Signs {
    /// The vectors' signs: the stored ones if they came with them, else
    /// computed (165 ms of CPU for 780k vectors).
    fn for_vectors(v: &Vectors) -> Signs {
        match &v.signs {
            Some(stored) => {
                stored.0.will_scan();
                Signs {
                    words: v.dim.div_ceil(64),
                    bits: SignBits::Stored(stored.clone()),
                }
            }
            None => Signs::of(v),
        }
    }

    fn bits(&self) -> &[u64] {
        match &self.bits {
            SignBits::Owned(b) => b,
            SignBits::Stored(s) => s.0.as_u64().expect("checked when read"),
        }
    }

    fn of(v: &Vectors) -> Signs {
        Signs {
            words: v.dim.div_ceil(64),
            bits: SignBits::Owned(v.sign_words()),
        }
    }

    fn of_query(&self, q: &[f32]) -> Vec<u64> {
        let mut row = vec![0u64; self.words];
        for (j, x) in q.iter().enumerate() {
            if *x > 0.0 {
                row[j / 64] |= 1 << (j % 64);
            }
        }
        row
    }

    /// The positions (among the vectors) of the `keep` rows nearest to
    /// `q` by Hamming distance, ties to the lower position: the `keep`
    /// smallest (distance, position) pairs, in position order.
    fn nearest(&self, q: &[u64], keep: usize) -> Vec<usize> {
        use rayon::prelude::*;
        let bits = self.bits();
        let rows = bits.len() / self.words.max(1);
        let keep = keep.min(rows);
        if keep == 0 {
            return Vec::new();
        }
        // Distances are small integers (at most the dimension): one pass
        // writes each row's as two bytes and counts them by value, the
        // counts give the cut, and a pass over the distances (a sixteenth
        // of the signs' bytes) takes the rows under it. Pairs of every
        // distance and row, selected, cost a fresh allocation of eight
        // bytes a row and a selection over them: a third of a warm search
        // over 2.5M vectors.
        let bins = self.words * 64 + 1;
        let mut d = vec![0u16; rows];
        let counts = d
            .par_chunks_mut(CHUNK_ROWS)
            .zip(bits.par_chunks(CHUNK_ROWS * self.words))
            .map(|(out, bits)| {
                let mut counts = vec![0u32; bins];
                hamming_rows(bits, self.words, q, out, &mut counts);
                counts
            })
            .reduce(
                || vec![0u32; bins],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        // The cut: every row nearer than `cut` is kept, and those at `cut`
        // in position order while room is left.
        let mut below = 0usize;
        let mut cut = 0usize;
        while below + counts[cut] as usize <= keep && cut + 1 < bins {
            below += counts[cut] as usize;
            cut += 1;
        }
        // The loop never passes `keep`.
        let mut at_cut = keep - below;
        let cut = cut as u16;
        let mut out = Vec::with_capacity(keep);
        for (i, h) in d.iter().enumerate() {
            if *h < cut {
                out.push(i);
            } else if *h == cut && at_cut > 0 {
                at_cut -= 1;
                out.push(i);
            }
        }
        out
    }
}

/// The Hamming distance of each row of `bits` (`words` each) to `q`, into
/// `out`, counted by value in `counts`. Built for the `popcnt` instruction
/// as well as the baseline, chosen at run time: x86-64's baseline has
/// none, and counting a word's bits by shifts and masks made the scan
/// over 780k rows take twice as long.
#[multiversion::multiversion(targets("x86_64+popcnt"))]
fn hamming_rows(bits: &[u64], words: usize, q: &[u64], out: &mut [u16], counts: &mut [u32]) {
    for (h, row) in out.iter_mut().zip(bits.chunks_exact(words)) {
        let x: u32 = row.iter().zip(q).map(|(a, b)| (a ^ b).count_ones()).sum();
        *h = x as u16;
        counts[x as usize] += 1;
    }
}

/// Rows of signs one task of the scan takes.
const CHUNK_ROWS: usize = 16 * 1024;

/// Nearest-neighbour search over unit-length embeddings, numbered like the
/// documents they embed: an exact scan for small sets, HNSW for large ones.
pub struct SemanticIndex {
    kind: IndexKind,
    len: usize,
}

enum IndexKind {
    /// Every vector, scanned; past [`SIGNS_MIN`] vectors, through their
    /// signs first.
    Flat(Vectors, Option<Signs>),
    Hnsw(Box<Hnsw<'static, f32, DistDot>>),
}

/// A query as the scan reads it: 16-bit codes and their scale. The codes
/// of the vectors are signed bytes, so the dot product is integer
/// multiply-adds (which the compiler vectorises two to four times wider
/// than the same in f32, with no conversions); a 16-bit query is off by
/// at most 1/65534 of its largest component, a hundred times below the
/// stored vectors' own rounding.
struct QueryCodes {
    scale: f32,
    codes: Vec<i16>,
}

impl QueryCodes {
    fn of(query: &[f32]) -> QueryCodes {
        let max = query.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 32767.0 } else { 1.0 };
        QueryCodes {
            scale,
            codes: query
                .iter()
                .map(|x| (x / scale).round().clamp(-32767.0, 32767.0) as i16)
                .collect(),
        }
    }
}

/// `query` against one vector's codes (the vector's scale applied by the
/// caller): an integer dot product, the same sum whichever way it runs.
fn dot_codes(query: &QueryCodes, codes: &[i8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if query.codes.len() <= MADD_MAX_DIM {
        if let Some(simd) = pulp::x86::V3::try_new() {
            return query.scale * dot_madd(simd, &query.codes, codes) as f32;
        }
    }
    query.scale * dot_lanes(&query.codes, codes) as f32
}

/// Dimensions up to which [`dot_madd`]'s 32-bit lanes cannot overflow:
/// each sums dim/8 products of at most 2^15 * 2^7.
#[cfg(target_arch = "x86_64")]
const MADD_MAX_DIM: usize = 4096;

/// The dot product with AVX2's multiply-add of 16-bit pairs (`vpmaddwd`):
/// sixteen bytes widened in one instruction and multiplied and summed in
/// pairs in another. The compiler does not find that pairing in
/// [`dot_lanes`], which multiplies in 32 bits (`vpmulld`); this runs in
/// half its time (the scan of 35k vectors, 3.3 -> 1.6 ms).
#[cfg(target_arch = "x86_64")]
fn dot_madd(simd: pulp::x86::V3, query: &[i16], codes: &[i8]) -> i64 {
    use std::arch::x86_64::{__m128i, __m256i};
    struct Madd<'a> {
        simd: pulp::x86::V3,
        query: &'a [i16],
        codes: &'a [i8],
    }
    impl pulp::NullaryFnOnce for Madd<'_> {
        type Output = i64;
        #[inline(always)]
        fn call(self) -> i64 {
            let Madd { simd, query, codes } = self;
            let (qs, q_rest) = pulp::as_arrays::<16, i16>(query);
            let (cs, c_rest) = pulp::as_arrays::<16, i8>(codes);
            let mut acc: __m256i = simd.avx._mm256_setzero_si256();
            for (q, c) in qs.iter().zip(cs) {
                let q: __m256i = pulp::cast(*q);
                let c: __m128i = pulp::cast(*c);
                let products = simd
                    .avx2
                    ._mm256_madd_epi16(q, simd.avx2._mm256_cvtepi8_epi16(c));
                acc = simd.avx2._mm256_add_epi32(acc, products);
            }
            let lanes: [i32; 8] = pulp::cast(acc);
            summed(&lanes, q_rest, c_rest)
        }
    }
    simd.vectorize(Madd { simd, query, codes })
}

/// The dot product in sixteen lanes the compiler keeps in registers: each
/// sums at most dim/16 products of 2^15 * 2^7, within i32 up to 8,000
/// dimensions. Built for AVX2 as well as the baseline, and chosen at run
/// time: the baseline (SSE2) widens bytes to 16 bits in several steps
/// where AVX2 does sixteen in one.
#[multiversion::multiversion(targets("x86_64+avx2", "x86_64+sse4.1"))]
fn dot_lanes(query: &[i16], codes: &[i8]) -> i64 {
    let mut acc = [0i32; 16];
    let (cq, cc) = (query.chunks_exact(16), codes.chunks_exact(16));
    let (rq, rc) = (cq.remainder(), cc.remainder());
    for (x, y) in cq.zip(cc) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    summed(&acc, rq, rc)
}

/// A dot product's lanes added up, with the products of the components
/// past the last whole chunk.
#[inline(always)]
fn summed(lanes: &[i32], query_rest: &[i16], codes_rest: &[i8]) -> i64 {
    let tail: i64 = query_rest
        .iter()
        .zip(codes_rest)
        .map(|(x, y)| i64::from(*x) * i64::from(*y))
        .sum();
    lanes.iter().map(|l| i64::from(*l)).sum::<i64>() + tail
}

/// The `k` highest scores offered, in a min-heap.
struct Best {
    k: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<Scored>>,
}

/// A document's score, ordered by score and then by document (lower
/// first), so that equal scores rank the same on every run.
#[derive(PartialEq)]
struct Scored(f32, usize);

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl Best {
    fn new(k: usize) -> Best {
        Best {
            k,
            heap: std::collections::BinaryHeap::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, doc: usize, score: f32) {
        if self.k == 0 {
            return;
        }
        let s = Scored(score, doc);
        if self.heap.len() < self.k {
            self.heap.push(std::cmp::Reverse(s));
        } else if self.heap.peek().is_some_and(|min| s > min.0) {
            self.heap.pop();
            self.heap.push(std::cmp::Reverse(s));
        }
    }

    fn merged(mut self, other: Best) -> Best {
        for std::cmp::Reverse(Scored(score, doc)) in other.heap {
            self.offer(doc, score);
        }
        self
    }

    /// Best first.
    fn ranked(self) -> Vec<(usize, f32)> {
        let mut v: Vec<Scored> = self.heap.into_iter().map(|r| r.0).collect();
        v.sort_by(|a, b| b.cmp(a));
        v.into_iter().map(|Scored(s, d)| (d, s)).collect()
    }
}

fn is_zero(v: &[f32]) -> bool {
    v.iter().all(|x| *x == 0.0)
}

/// The exact similarity, which the tests hold the scanned one to.
#[cfg(test)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl SemanticIndex {
    /// Indexes `vectors` (zero ones were left out when they were gathered,
    /// since cosine distance is undefined for them).
    pub fn build(vectors: Vectors) -> SemanticIndex {
        Self::build_with(vectors, FLAT_MAX, SIGNS_MIN)
    }

    /// [`SemanticIndex::build`] with the sizes above which HNSW is used and
    /// a scan compares signs first.
    pub fn build_with(vectors: Vectors, flat_max: usize, signs_min: usize) -> SemanticIndex {
        let len = vectors.ids.len();
        if len <= flat_max {
            let signs = (len > signs_min).then(|| Signs::for_vectors(&vectors));
            return SemanticIndex {
                kind: IndexKind::Flat(vectors, signs),
                len,
            };
        }
        // Unit vectors (model2vec normalizes): 1 - dot is the cosine distance,
        // without the norms DistCosine recomputes on every comparison.
        let hnsw = Hnsw::new(16, len.max(1), 16, 64, DistDot {});
        // Back to floats, unit length again (DistDot asserts it, and the
        // codes' rounding moves the norm by a little).
        let floats: Vec<(usize, Vec<f32>)> = vectors
            .iter()
            .map(|(i, c, _)| {
                let v: Vec<f32> = c.iter().map(|x| f32::from(*x)).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                (i, v.into_iter().map(|x| x / norm).collect())
            })
            .collect();
        let data: Vec<(&[f32], usize)> = floats.iter().map(|(i, v)| (v.as_slice(), *i)).collect();
        hnsw.parallel_insert_slice(&data);
        SemanticIndex {
            kind: IndexKind::Hnsw(Box::new(hnsw)),
            len,
        }
    }

    /// Whether the index is an HNSW graph (rather than an exact scan).
    pub fn is_graph(&self) -> bool {
        matches!(self.kind, IndexKind::Hnsw(_))
    }

    /// The `limit` nearest documents to `query` with cosine similarity.
    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(usize, f32)> {
        if self.len == 0 || is_zero(query) {
            return Vec::new();
        }
        match &self.kind {
            IndexKind::Flat(flat, Some(signs)) => {
                if query.len() != flat.dim {
                    return Vec::new();
                }
                let q = QueryCodes::of(query);
                let near = signs.nearest(&signs.of_query(query), limit * SIGNS_KEEP);
                let mut scored: Vec<(usize, f32)> = near
                    .into_iter()
                    .map(|k| {
                        let codes = &flat.codes[k * flat.dim..(k + 1) * flat.dim];
                        (flat.ids[k] as usize, flat.scales[k] * dot_codes(&q, codes))
                    })
                    .collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                scored.truncate(limit);
                scored
            }
            IndexKind::Flat(flat, None) => {
                if query.len() != flat.dim {
                    return Vec::new();
                }
                // Past a few tens of thousands of vectors the scan is worth
                // spreading over the cores; below, the hand-off costs more
                // than it saves.
                // The best `limit` kept as the scan goes: collecting every
                // score first cost a fresh half-megabyte (and the kernel's
                // zeroing of its pages) per query.
                let q = QueryCodes::of(query);
                let best = if flat.ids.len() > PARALLEL_SCAN {
                    use rayon::prelude::*;
                    flat.ids
                        .par_iter()
                        .zip(flat.codes.par_chunks_exact(flat.dim))
                        .zip(flat.scales.par_iter())
                        .fold(
                            || Best::new(limit),
                            |mut b, ((i, c), s)| {
                                b.offer(*i as usize, s * dot_codes(&q, c));
                                b
                            },
                        )
                        .reduce(|| Best::new(limit), Best::merged)
                } else {
                    let mut b = Best::new(limit);
                    for (i, c, s) in flat.iter() {
                        b.offer(i, s * dot_codes(&q, c));
                    }
                    b
                };
                best.ranked()
            }
            IndexKind::Hnsw(hnsw) => hnsw
                .search(query, limit, limit + 16)
                .into_iter()
                .map(|n| (n.d_id, 1.0 - n.distance))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        // A small xorshift: deterministic vectors without a rand dependency.
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = dot(&v, &v).sqrt();
        v.into_iter().map(|f| f / n).collect()
    }

    #[test]
    fn exact_scan_and_hnsw_agree_on_the_nearest_and_zero_vectors_are_skipped() {
        let mut vs: Vec<Vec<f32>> = (0..600).map(|i| unit(i + 1, 32)).collect();
        vs[7] = vec![0.0; 32];
        let flat = SemanticIndex::build_with(Vectors::from_rows(&vs), usize::MAX, usize::MAX);
        let graph = SemanticIndex::build_with(Vectors::from_rows(&vs), 0, usize::MAX);
        assert!(!flat.is_graph() && graph.is_graph());
        for probe in [3usize, 100, 599] {
            let f = flat.search(&vs[probe], 5);
            assert_eq!(f[0].0, probe, "a vector is its own nearest neighbour");
            assert!((f[0].1 - 1.0).abs() < 1e-2);
            assert!(f.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
            assert_eq!(graph.search(&vs[probe], 5)[0].0, probe);
        }
        assert!(flat
            .search(&unit(9999, 32), 600)
            .iter()
            .all(|(i, _)| *i != 7));
    }

    #[test]
    fn vectors_keep_document_numbers_and_leave_out_zero_and_misfit_rows() {
        let rows = vec![
            vec![],
            vec![1.0, 0.0],
            vec![0.0, 0.0],
            vec![0.3, -0.6],
            vec![1.0],
        ];
        let v = Vectors::from_rows(&rows);
        assert_eq!((v.count(), v.dim()), (5, 2));
        assert_eq!(v.ids(), [1, 3]);
        assert_eq!(v.get(1), Some(vec![1.0, 0.0]));
        let back = v.get(3).unwrap();
        assert!(
            (back[0] - 0.3).abs() < 0.6 / 254.0 && (back[1] + 0.6).abs() < 1e-6,
            "{back:?}"
        );
        assert_eq!(v.get(2), None);
        let parts = Vectors::from_parts(
            5,
            2,
            v.ids().to_vec(),
            v.codes().to_vec(),
            v.scales().to_vec(),
        );
        assert_eq!(parts.as_ref(), Some(&v));
        // Parts that do not fit together are refused.
        assert!(Vectors::from_parts(3, 2, vec![1, 3], vec![0; 4], vec![1.0; 2]).is_none());
        assert!(Vectors::from_parts(5, 2, vec![3, 1], vec![0; 4], vec![1.0; 2]).is_none());
        assert!(Vectors::from_parts(5, 2, vec![1, 3], vec![0; 3], vec![1.0; 2]).is_none());
        assert!(Vectors::from_parts(5, 2, vec![1, 3], vec![0; 4], vec![1.0]).is_none());
        assert!(Vectors::from_parts(5, 0, vec![1, 3], vec![], vec![1.0; 2]).is_none());
    }

    #[test]
    fn quantized_similarities_stay_within_a_hundredth_of_exact_ones() {
        let rows: Vec<Vec<f32>> = (0..200u64).map(|i| unit(i + 7, 256)).collect();
        let v = Vectors::from_rows(&rows);
        let index = SemanticIndex::build(v);
        for probe in [0usize, 99, 199] {
            for (doc, sim) in index.search(&rows[probe], 200) {
                let exact = dot(&rows[probe], &rows[doc]);
                assert!((sim - exact).abs() < 1e-2, "{sim} against {exact}");
            }
        }
    }

    #[test]
    fn a_scan_spread_over_the_cores_finds_what_one_core_finds() {
        let n = PARALLEL_SCAN + 5_000;
        let rows: Vec<Vec<f32>> = (0..n as u64).map(|i| unit(i + 1, 8)).collect();
        let index = SemanticIndex::build(Vectors::from_rows(&rows));
        assert!(!index.is_graph());
        for probe in [0usize, 12_345, n - 1] {
            let hits = index.search(&rows[probe], 10);
            assert_eq!(hits[0].0, probe);
            assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
            // The best ten are the best of an exhaustive sequential look.
            let mut all: Vec<f32> = rows.iter().map(|r| dot(&rows[probe], r)).collect();
            all.sort_by(|a, b| b.total_cmp(a));
            for (h, best) in hits.iter().zip(&all) {
                assert!((h.1 - best).abs() < 1e-2, "{} against {best}", h.1);
            }
        }
    }

    #[test]
    fn the_nearest_signs_are_the_smallest_distances_ties_to_the_lower_row() {
        // Rows over several of the scan's tasks, few distinct distances
        // (so ties at the cut), and one and two words a row.
        for words in [1usize, 2] {
            let rows = 2 * CHUNK_ROWS + 777;
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            // Sparse rows: distances to a sparse query are small.
            let bits: Vec<u64> = (0..rows * words)
                .map(|_| next() & next() & next())
                .collect();
            let signs = Signs {
                words,
                bits: SignBits::Owned(bits),
            };
            let q: Vec<u64> = (0..words).map(|_| next() & next() & next()).collect();
            let mut pairs: Vec<(u32, usize)> = signs
                .bits()
                .chunks_exact(words)
                .enumerate()
                .map(|(i, r)| (r.iter().zip(&q).map(|(a, b)| (a ^ b).count_ones()).sum(), i))
                .collect();
            pairs.sort();
            for keep in [0usize, 1, 10, 500, 4_321, rows, rows + 5] {
                let mut want: Vec<usize> = pairs.iter().take(keep).map(|p| p.1).collect();
                want.sort();
                assert_eq!(signs.nearest(&q, keep), want, "words {words}, keep {keep}");
            }
        }
    }

    #[test]
    fn a_scan_through_signs_keeps_the_exact_nearest_and_their_exact_scores() {
        // Clustered vectors, as embeddings are: a topic direction each,
        // with noise.
        let dim = 64;
        let topics: Vec<Vec<f32>> = (0..20).map(|t| unit(1000 + t, dim)).collect();
        let rows: Vec<Vec<f32>> = (0..4000u64)
            .map(|i| {
                let t = &topics[(i % 20) as usize];
                let n = unit(i, dim);
                let v: Vec<f32> = t.iter().zip(&n).map(|(a, b)| a + 0.6 * b).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect();
        let exact = SemanticIndex::build_with(Vectors::from_rows(&rows), usize::MAX, usize::MAX);
        let signs = SemanticIndex::build_with(Vectors::from_rows(&rows), usize::MAX, 0);
        let (mut kept, mut asked) = (0usize, 0usize);
        for q in 0..20u64 {
            let query = &rows[(q * 37) as usize];
            let want = exact.search(query, 20);
            let got = signs.search(query, 20);
            assert_eq!(got.len(), 20);
            // The query's own vector is found, with its exact score.
            assert_eq!(got[0], want[0]);
            let want_ids: std::collections::HashSet<usize> = want.iter().map(|x| x.0).collect();
            kept += got.iter().filter(|x| want_ids.contains(&x.0)).count();
            asked += want.len();
            // Whatever is returned is scored exactly.
            for (doc, score) in &got {
                let exact_score = exact.search(&rows[*doc], 1)[0].1;
                assert!((exact_score - 1.0).abs() < 2e-2, "{doc}: {exact_score}");
                let direct: f32 = dot(query, &rows[*doc]);
                assert!((score - direct).abs() < 1e-2, "{doc}: {score} vs {direct}");
            }
        }
        let recall = kept as f32 / asked as f32;
        assert!(recall >= 0.95, "signs kept {recall} of the exact nearest");
    }

    #[test]
    fn the_best_kept_while_scanning_are_those_a_full_sort_gives_ties_by_document() {
        let scores: Vec<f32> = (0..500u64)
            .map(|i| ((i * 7919) % 97) as f32 / 97.0)
            .collect();
        let mut all: Vec<(usize, f32)> = scores.iter().copied().enumerate().collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(20);
        let mut one = Best::new(20);
        for (d, s) in scores.iter().enumerate() {
            one.offer(d, *s);
        }
        assert_eq!(one.ranked(), all);
        // Split in two and merged, as the cores do.
        let (mut a, mut b) = (Best::new(20), Best::new(20));
        for (d, s) in scores.iter().enumerate() {
            if d % 2 == 0 {
                a.offer(d, *s)
            } else {
                b.offer(d, *s)
            }
        }
        assert_eq!(a.merged(b).ranked(), all);
        assert!(Best::new(0).ranked().is_empty());
    }

    #[test]
    fn the_integer_dot_product_is_the_float_one_to_the_query_rounding() {
        for dim in [1usize, 7, 15, 16, 17, 33, 256, 300] {
            let query: Vec<f32> = (0..dim)
                .map(|i| ((i * 37 % 23) as f32 - 11.0) / 9.0)
                .collect();
            let codes: Vec<i8> = (0..dim)
                .map(|i| ((i * 53 % 255) as i32 - 127) as i8)
                .collect();
            let exact: f32 = query
                .iter()
                .zip(&codes)
                .map(|(q, c)| q * f32::from(*c))
                .sum();
            let got = dot_codes(&QueryCodes::of(&query), &codes);
            let bound = 127.0 * dim as f32 * (11.0 / 9.0) / 32767.0 + 1e-3;
            assert!((got - exact).abs() <= bound, "{dim}: {got} vs {exact}");
        }
        assert_eq!(dot_codes(&QueryCodes::of(&[0.0; 8]), &[5; 8]), 0.0);
    }

    #[test]
    fn both_integer_dot_products_make_the_same_sum() {
        // Extremes included: the largest query codes against -128 and 127.
        for dim in [1usize, 15, 16, 17, 255, 256, 300, 1024, 4096] {
            let query: Vec<i16> = (0..dim)
                .map(|i| match i % 5 {
                    0 => 32767,
                    1 => -32767,
                    _ => (i as i32 * 7919 % 65535 - 32767) as i16,
                })
                .collect();
            let codes: Vec<i8> = (0..dim)
                .map(|i| match i % 7 {
                    0 => -128,
                    1 => 127,
                    _ => (i as i32 * 53 % 255 - 127) as i8,
                })
                .collect();
            let want: i64 = query
                .iter()
                .zip(&codes)
                .map(|(q, c)| i64::from(*q) * i64::from(*c))
                .sum();
            assert_eq!(dot_lanes(&query, &codes), want, "{dim}");
            #[cfg(target_arch = "x86_64")]
            if let Some(simd) = pulp::x86::V3::try_new() {
                assert_eq!(dot_madd(simd, &query, &codes), want, "{dim}");
            }
        }
        // The bound: every product at its largest, of one sign.
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V3::try_new() {
            let (query, codes) = (vec![32767i16; MADD_MAX_DIM], vec![-128i8; MADD_MAX_DIM]);
            let want = -32767 * 128 * MADD_MAX_DIM as i64;
            assert_eq!(dot_madd(simd, &query, &codes), want);
        }
    }
}
