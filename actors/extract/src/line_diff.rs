//! Which lines changed between two versions of a file, as tree-sitter edits.
//!
//! Reparsing a file from its previous tree ([`crate::reparse`]) needs the
//! edits that turn the old text into the new one. One edit spanning the first
//! to the last changed byte is always correct but, on a release that touches
//! a file in several places, covers most of it (60% of the bytes on pip's
//! history), so tree-sitter would reuse little. A line diff gives one edit per
//! changed run of lines (6.5% of the lines there).
//!
//! The diff is Myers' O((N+M)·D) algorithm over interned lines, after the
//! common prefix and suffix are trimmed, and gives up past a budget of
//! differences: a file rewritten that much is parsed from scratch anyway.
//! (No diff crate is in this machine's offline registry; gix's blob diff needs
//! imara-diff, which is not there either.)

use rustc_hash::FxHashMap;
use tree_sitter::{InputEdit, Point};

/// A run of changed lines: old lines `old.0..old.1` became new lines
/// `new.0..new.1` (either may be empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// Old line range, half-open.
    pub old: (usize, usize),
    /// New line range, half-open.
    pub new: (usize, usize),
}

/// Byte offset where each line starts, plus the length of the text at the end.
fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 2);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
    if *starts.last().unwrap_or(&0) != text.len() {
        starts.push(text.len());
    }
    starts
}

/// Each line's id; equal lines (of either text) get equal ids.
fn intern<'t>(ids: &mut FxHashMap<&'t [u8], u32>, text: &'t [u8], starts: &[usize]) -> Vec<u32> {
    starts
        .windows(2)
        .map(|w| {
            let next = ids.len() as u32;
            *ids.entry(&text[w[0]..w[1]]).or_insert(next)
        })
        .collect()
}

/// The changed runs of lines between `old` and `new`, in order, or `None`
/// when more than `max_changes` lines would have to be inserted or deleted.
pub fn diff_lines(old: &[u8], new: &[u8], max_changes: usize) -> Option<Vec<Hunk>> {
    diff_split(old, &line_starts(old), new, &line_starts(new), max_changes)
}

/// [`diff_lines`] with each text's line starts already known.
fn diff_split(
    old: &[u8],
    a_starts: &[usize],
    new: &[u8],
    b_starts: &[usize],
    max_changes: usize,
) -> Option<Vec<Hunk>> {
    let mut ids: FxHashMap<&[u8], u32> = FxHashMap::default();
    let a = intern(&mut ids, old, a_starts);
    let b = intern(&mut ids, new, b_starts);
    diff_ids(&a, &b, max_changes)
}

/// [`diff_lines`] over already interned lines.
pub fn diff_ids(a: &[u32], b: &[u32], max_changes: usize) -> Option<Vec<Hunk>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut hunks = myers(a_mid, b_mid, max_changes)?;
    for h in &mut hunks {
        h.old = (h.old.0 + prefix, h.old.1 + prefix);
        h.new = (h.new.0 + prefix, h.new.1 + prefix);
    }
    Some(hunks)
}

/// Myers' greedy forward algorithm, keeping each round's frontier so the path
/// can be walked back. Memory is O(D²) for D differences.
fn myers(a: &[u32], b: &[u32], max_d: usize) -> Option<Vec<Hunk>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 && m == 0 {
        return Some(Vec::new());
    }
    let limit = (n + m).min(isize::try_from(max_d).unwrap_or(isize::MAX));
    let offset = limit + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    // trace[d] holds v over k in -d-1..=d+1 as it stood before round d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut end = None;
    'rounds: for d in 0..=limit {
        trace.push(v[(offset - d - 1) as usize..=(offset + d + 1) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let i = (offset + k) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) {
                v[i + 1]
            } else {
                v[i - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                end = Some(d);
                break 'rounds;
            }
            k += 2;
        }
    }
    let d_end = end?;
    // Walk back from (n, m); each round contributes one inserted or deleted
    // line, and the runs between snakes are merged into hunks.
    let mut edits: Vec<(isize, isize, isize, isize)> = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=d_end).rev() {
        let snapshot = &trace[d as usize];
        let at = |k: isize| snapshot[(k + d + 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
        }
        // One step from (prev_x, prev_y) to (x, y): a deletion or an insertion.
        edits.push((prev_x, x, prev_y, y));
        x = prev_x;
        y = prev_y;
    }
    edits.reverse();
    let mut hunks: Vec<Hunk> = Vec::new();
    for (ax, bx, ay, by) in edits {
        let (ax, bx, ay, by) = (ax as usize, bx as usize, ay as usize, by as usize);
        match hunks.last_mut() {
            Some(h) if h.old.1 == ax && h.new.1 == ay => {
                h.old.1 = bx;
                h.new.1 = by;
            }
            _ => hunks.push(Hunk {
                old: (ax, bx),
                new: (ay, by),
            }),
        }
    }
    Some(hunks)
}

/// The point just after `text` when it starts at `from`.
pub(crate) fn advance(from: Point, text: &[u8]) -> Point {
    match memchr::memrchr(b'\n', text) {
        Some(last) => Point {
            row: from.row + memchr::memchr_iter(b'\n', text).count(),
            column: text.len() - last - 1,
        },
        None => Point {
            row: from.row,
            column: from.column + text.len(),
        },
    }
}

/// The tree-sitter edits that turn `old` into `new`, last first, so each one
/// is stated in the coordinates of the text as it stands when it is applied
/// (the part before it still old, the part after it already new). `None`
/// when the texts differ in more than `max_changes` lines.
pub fn edits(old: &[u8], new: &[u8], max_changes: usize) -> Option<Vec<InputEdit>> {
    let (a_starts, b_starts) = (line_starts(old), line_starts(new));
    let hunks = diff_split(old, &a_starts, new, &b_starts, max_changes)?;
    let byte = |starts: &[usize], line: usize| {
        starts
            .get(line)
            .copied()
            .unwrap_or(*starts.last().unwrap_or(&0))
    };
    Some(
        hunks
            .iter()
            .rev()
            .map(|h| {
                let start_byte = byte(&a_starts, h.old.0);
                let old_end_byte = byte(&a_starts, h.old.1);
                let (new_from, new_to) = (byte(&b_starts, h.new.0), byte(&b_starts, h.new.1));
                // Hunks start at a line start, and the lines above it are
                // untouched so far: its row is its old line number.
                let start_position = Point {
                    row: h.old.0,
                    column: 0,
                };
                InputEdit {
                    start_byte,
                    old_end_byte,
                    new_end_byte: start_byte + (new_to - new_from),
                    start_position,
                    old_end_position: advance(start_position, &old[start_byte..old_end_byte]),
                    new_end_position: advance(start_position, &new[new_from..new_to]),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies hunks to `a`, taking inserted lines from `b`.
    fn apply(a: &[u32], b: &[u32], hunks: &[Hunk]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = 0;
        for h in hunks {
            out.extend_from_slice(&a[at..h.old.0]);
            out.extend_from_slice(&b[h.new.0..h.new.1]);
            at = h.old.1;
        }
        out.extend_from_slice(&a[at..]);
        out
    }

    /// Length of the longest common subsequence, by dynamic programming.
    fn lcs(a: &[u32], b: &[u32]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for &x in a {
            let mut diag = 0;
            for (j, &y) in b.iter().enumerate() {
                let up = row[j + 1];
                row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
                diag = up;
            }
        }
        row[b.len()]
    }

    /// A small deterministic generator so failures reproduce.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: u32) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % u64::from(bound)) as u32
        }
    }

    #[test]
    fn hunks_rebuild_the_new_text_with_a_minimal_number_of_changes() {
        let mut rng = Lcg(7);
        for case in 0..2000 {
            let alphabet = 2 + rng.next(6);
            let a: Vec<u32> = (0..rng.next(25)).map(|_| rng.next(alphabet)).collect();
            let b: Vec<u32> = (0..rng.next(25)).map(|_| rng.next(alphabet)).collect();
            let hunks = diff_ids(&a, &b, usize::MAX).expect("no budget");
            assert_eq!(apply(&a, &b, &hunks), b, "case {case}: {a:?} -> {b:?}");
            let changed: usize = hunks
                .iter()
                .map(|h| (h.old.1 - h.old.0) + (h.new.1 - h.new.0))
                .sum();
            assert_eq!(
                changed,
                a.len() + b.len() - 2 * lcs(&a, &b),
                "case {case}: not minimal"
            );
            for w in hunks.windows(2) {
                assert!(w[0].old.1 < w[1].old.0, "case {case}: hunks touch");
            }
        }
    }

    #[test]
    fn a_diff_over_budget_gives_up() {
        let a: Vec<u32> = (0..100).collect();
        let b: Vec<u32> = (100..200).collect();
        assert!(diff_ids(&a, &b, 50).is_none());
        assert_eq!(diff_ids(&a, &b, 200).map(|h| h.len()), Some(1));
    }

    #[test]
    fn edits_are_stated_last_first_in_the_coordinates_of_the_moment() {
        let old = b"a\nb\nc\nd\ne";
        let new = b"a\nB\nB2\nc\nd\nE!";
        let edits = edits(old, new, 100).expect("within budget");
        assert_eq!(edits.len(), 2);
        // The last line has no newline: its end is a column, not a row.
        let last = edits[0];
        assert_eq!((last.start_byte, last.old_end_byte), (8, 9));
        assert_eq!(last.new_end_byte, 10);
        assert_eq!(last.start_position, Point { row: 4, column: 0 });
        assert_eq!(last.old_end_position, Point { row: 4, column: 1 });
        assert_eq!(last.new_end_position, Point { row: 4, column: 2 });
        let first = edits[1];
        assert_eq!((first.start_byte, first.old_end_byte), (2, 4));
        assert_eq!(first.new_end_byte, 2 + 5);
        assert_eq!(first.old_end_position, Point { row: 2, column: 0 });
        assert_eq!(first.new_end_position, Point { row: 3, column: 0 });
        // Applying them to the bytes, in order, gives the new text.
        let mut text = old.to_vec();
        let mut new_at = Vec::new();
        for h in diff_lines(old, new, 100).unwrap().iter().rev() {
            new_at.push(*h);
        }
        for (e, h) in edits.iter().zip(&new_at) {
            let starts = line_starts(new);
            let seg = &new[starts[h.new.0]..starts.get(h.new.1).copied().unwrap_or(new.len())];
            text.splice(e.start_byte..e.old_end_byte, seg.iter().copied());
        }
        assert_eq!(text, new);
    }
}
