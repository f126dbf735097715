//! Embedding vectors as signed bytes: each component over a scale (the
//! vector's largest magnitude over 127). A similarity moves by about 1e-3
//! (a component is off by at most half a step), and a vector costs a
//! quarter of its f32 bytes: on 8.6M lines the stored vectors were 783 MB
//! of f32 in redb. The journal stores them so and the searchers scan them
//! so ([`quantize`] is the one rule both use).

/// `v` as a scale and one code a component; `None` for a zero vector (no
/// direction to keep).
pub fn quantize(v: &[f32]) -> Option<(f32, Vec<i8>)> {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return None;
    }
    let scale = max / 127.0;
    let codes = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    Some((scale, codes))
}

/// Vectors in their stored form ([`to_bytes`]), by text hash, in a few
/// large buffers: what a first embedding of a whole repository gathers
/// before it writes them in one transaction (written a batch of files at a
/// time, each transaction rewrote most of a table keyed by random hashes,
/// and redb's file grew by 1.4 GB on 8.4M lines). Buffers of bounded size,
/// not one grown by doubling: growing one of 150 MB held 384 MB while it
/// was copied, at the peak of a first index.
#[derive(Clone, Debug, Default)]
pub struct VectorRows {
    parts: Vec<RowsPart>,
}

#[derive(Clone, Debug, Default)]
struct RowsPart {
    hashes: Vec<u64>,
    ends: Vec<usize>,
    bytes: Vec<u8>,
}

/// Bytes of stored vectors a part holds before the next one starts.
const PART_BYTES: usize = 4 << 20;

impl VectorRows {
    /// Adds the vector of the text whose hash is `hash`.
    pub fn push(&mut self, hash: u64, v: &[f32]) {
        self.push_stored(hash, to_bytes(v));
    }

    /// [`VectorRows::push`] of a vector already quantized ([`quantize`]'s
    /// scale and codes; a zero scale and codes for a zero vector).
    pub fn push_codes(&mut self, hash: u64, scale: f32, codes: &[i8]) {
        self.push_stored(hash, coded_bytes(scale, codes));
    }

    fn push_stored(&mut self, hash: u64, stored: Vec<u8>) {
        let part = match self.parts.last_mut() {
            Some(part) if part.bytes.len() + stored.len() <= PART_BYTES => part,
            _ => {
                self.parts.push(RowsPart::default());
                self.parts.last_mut().expect("a part was just added")
            }
        };
        part.bytes.extend_from_slice(&stored);
        part.hashes.push(hash);
        part.ends.push(part.bytes.len());
    }

    /// Adds every vector of `other`, after its own, without copying them.
    pub fn append(&mut self, other: VectorRows) {
        self.parts.extend(other.parts);
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.hashes.len()).sum()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| p.hashes.is_empty())
    }

    /// Each hash with its stored bytes.
    pub(crate) fn rows(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.parts.iter().flat_map(|part| {
            let starts = std::iter::once(0).chain(part.ends.iter().copied());
            part.hashes
                .iter()
                .zip(starts.zip(part.ends.iter().copied()))
                .map(|(h, (a, b))| (*h, &part.bytes[a..b]))
        })
    }
}

/// The stored form: a tag byte, the dimension (u16), the scale (f32), the
/// codes, and a padding byte when that would make a multiple of four bytes:
/// plain f32 (databases written before) always is one, so the two never
/// meet.
pub(crate) fn to_bytes(v: &[f32]) -> Vec<u8> {
    match quantize(v) {
        Some((scale, codes)) => coded_bytes(scale, &codes),
        // A zero vector stays zero: a zero scale and zero codes.
        None => coded_bytes(0.0, &vec![0; v.len()]),
    }
}

/// [`to_bytes`] of a vector already quantized.
fn coded_bytes(scale: f32, codes: &[i8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD + codes.len() + 1);
    out.push(TAG);
    out.extend_from_slice(&(codes.len() as u16).to_le_bytes());
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(codes.iter().map(|c| *c as u8));
    if out.len().is_multiple_of(4) {
        out.push(0);
    }
    out
}

/// A stored vector as floats, in either form.
pub(crate) fn from_bytes(bytes: &[u8]) -> Vec<f32> {
    match bytes {
        [TAG, d0, d1, s0, s1, s2, s3, rest @ ..] if !bytes.len().is_multiple_of(4) => {
            let dim = usize::from(u16::from_le_bytes([*d0, *d1])).min(rest.len());
            let scale = f32::from_le_bytes([*s0, *s1, *s2, *s3]);
            rest[..dim]
                .iter()
                .map(|c| f32::from(*c as i8) * scale)
                .collect()
        }
        _ => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    }
}

/// The tagged form's bytes before its codes.
const HEAD: usize = 7;

/// Marks the tagged form.
const TAG: u8 = 0xB8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_comes_back_within_half_a_step_and_requantizes_to_its_codes() {
        let v: Vec<f32> = (0..256)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 61.0)
            .collect();
        let bytes = to_bytes(&v);
        assert_eq!(bytes.len(), 7 + 256, "a quarter of the f32 bytes");
        let back = from_bytes(&bytes);
        let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        for (a, b) in v.iter().zip(&back) {
            assert!((a - b).abs() <= max / 254.0 + 1e-6, "{a} {b}");
        }
        // What a searcher quantizes again is what was stored.
        assert_eq!(quantize(&back).unwrap().1, quantize(&v).unwrap().1);
    }

    #[test]
    fn plain_f32_of_older_databases_and_zero_vectors_are_read() {
        let v = [0.5f32, -1.0, 2.0, 0.25];
        let old: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        assert_eq!(from_bytes(&old), v);
        assert_eq!(from_bytes(&to_bytes(&[0.0; 4])), vec![0.0; 4]);
        // Every dimension keeps its length, padded or not.
        for dim in 1..9 {
            let v: Vec<f32> = (0..dim).map(|i| i as f32 - 2.5).collect();
            let bytes = to_bytes(&v);
            assert!(!bytes.len().is_multiple_of(4), "never taken for f32");
            assert_eq!(from_bytes(&bytes).len(), dim);
        }
        assert_eq!(quantize(&[0.0; 3]), None);
    }

    #[test]
    fn vector_rows_give_back_each_hash_with_its_stored_bytes_in_order() {
        let vs: Vec<(u64, Vec<f32>)> = vec![
            (7, vec![0.5, -1.0, 2.0]),
            (3, vec![0.0; 3]),
            (9, vec![1.0, 1.0, -0.25, 4.0, 0.5]),
        ];
        let mut rows = VectorRows::default();
        assert!(rows.is_empty());
        for (h, v) in &vs {
            rows.push(*h, v);
        }
        assert_eq!(rows.len(), 3);
        let back: Vec<(u64, Vec<u8>)> = rows.rows().map(|(h, b)| (h, b.to_vec())).collect();
        let want: Vec<(u64, Vec<u8>)> = vs.iter().map(|(h, v)| (*h, to_bytes(v))).collect();
        assert_eq!(back, want);
        // Rows gathered apart (by the embedding workers) and appended are
        // the same rows.
        let (mut first, mut second) = (VectorRows::default(), VectorRows::default());
        first.push(vs[0].0, &vs[0].1);
        for (h, v) in &vs[1..] {
            second.push(*h, v);
        }
        first.append(second);
        assert_eq!(first.len(), 3);
        let appended: Vec<(u64, Vec<u8>)> = first.rows().map(|(h, b)| (h, b.to_vec())).collect();
        assert_eq!(appended, want);
        // Past a part's bytes the next part starts, and order is kept.
        let many: Vec<(u64, Vec<f32>)> = (0..20_000u64)
            .map(|h| (h, (0..256).map(|i| (i as f32) - (h % 7) as f32).collect()))
            .collect();
        let mut rows = VectorRows::default();
        for (h, v) in &many {
            rows.push(*h, v);
        }
        assert!(rows.parts.len() > 1, "{} parts", rows.parts.len());
        assert!(rows.parts.iter().all(|p| p.bytes.len() <= PART_BYTES));
        let back: Vec<(u64, Vec<u8>)> = rows.rows().map(|(h, b)| (h, b.to_vec())).collect();
        let want: Vec<(u64, Vec<u8>)> = many.iter().map(|(h, v)| (*h, to_bytes(v))).collect();
        assert_eq!(back, want);
    }

    #[test]
    fn a_vector_pushed_as_codes_is_stored_as_when_pushed_whole() {
        for v in [vec![0.5f32, -1.25, 3.0, 0.0], vec![0.0; 4], vec![1.0; 7]] {
            let mut whole = VectorRows::default();
            whole.push(7, &v);
            let mut coded = VectorRows::default();
            match quantize(&v) {
                Some((scale, codes)) => coded.push_codes(7, scale, &codes),
                None => coded.push_codes(7, 0.0, &vec![0; v.len()]),
            }
            let a: Vec<(u64, Vec<u8>)> = whole.rows().map(|(h, b)| (h, b.to_vec())).collect();
            let b: Vec<(u64, Vec<u8>)> = coded.rows().map(|(h, b)| (h, b.to_vec())).collect();
            assert_eq!(a, b, "{v:?}");
        }
    }
}
