//! Which lines changed between two versions of a file, as tree-sitter edits.
//!
//! Reparsing a file from its previous tree ([`crate::reparse`]) needs the
//! edits that turn the old text into the new one. One edit spanning the first
//! to the last changed byte is always correct but, on a release that touches
//! a file in several places, covers most of it (60% of the bytes on pip's
//! history), so tree-sitter would reuse little. A line diff gives one edit per
//! changed run of lines (6.5% of the lines there).
//!
//! The diff is imara-diff's minimal Myers (the diff gitoxide uses). On 631 edited
//! Python files of click's history it took 35 ms where the hand-written
//! Myers it replaced took 55 ms, with as few changed lines. A file
//! changed in more than a budget of lines is parsed from scratch instead.

use imara_diff::{Algorithm, Diff, InternedInput};
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

/// The changed runs of lines between `old` and `new`, in order, or `None`
/// when more than `max_changes` lines would have to be inserted or deleted.
pub fn diff_lines(old: &[u8], new: &[u8], max_changes: usize) -> Option<Vec<Hunk>> {
    let input = InternedInput::new(old, new);
    let diff = Diff::compute(Algorithm::MyersMinimal, &input);
    if (diff.count_additions() + diff.count_removals()) as usize > max_changes {
        return None;
    }
    Some(
        diff.hunks()
            .map(|h| Hunk {
                old: (h.before.start as usize, h.before.end as usize),
                new: (h.after.start as usize, h.after.end as usize),
            })
            .collect(),
    )
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
    let hunks = diff_lines(old, new, max_changes)?;
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

    /// Applies hunks to `a`'s lines, taking inserted lines from `b`'s.
    fn apply(a: &[&[u8]], b: &[&[u8]], hunks: &[Hunk]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        for h in hunks {
            a[at..h.old.0].iter().for_each(|l| out.extend_from_slice(l));
            b[h.new.0..h.new.1]
                .iter()
                .for_each(|l| out.extend_from_slice(l));
            at = h.old.1;
        }
        a[at..].iter().for_each(|l| out.extend_from_slice(l));
        out
    }

    fn lines(text: &[u8]) -> Vec<&[u8]> {
        text.split_inclusive(|&c| c == b'\n').collect()
    }

    /// Length of the longest common subsequence, by dynamic programming.
    fn lcs(a: &[&[u8]], b: &[&[u8]]) -> usize {
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
    fn hunks_rebuild_the_new_text_with_nearly_the_fewest_changes() {
        let mut rng = Lcg(7);
        // imara-diff prunes lines that repeat often before its Myers, so
        // on tiny alphabets it is not always minimal; over many cases it
        // must stay close.
        let (mut changed, mut minimal) = (0, 0);
        for case in 0..2000 {
            let alphabet = 2 + rng.next(6);
            let text = |rng: &mut Lcg| {
                let n = rng.next(25);
                let mut t = Vec::new();
                for _ in 0..n {
                    t.extend_from_slice(format!("line {}\n", rng.next(alphabet)).as_bytes());
                }
                // Sometimes the last line has no newline.
                if rng.next(3) == 0 {
                    t.pop();
                }
                t
            };
            let (old, new) = (text(&mut rng), text(&mut rng));
            let hunks = diff_lines(&old, &new, usize::MAX).expect("no budget");
            let (a, b) = (lines(&old), lines(&new));
            assert_eq!(apply(&a, &b, &hunks), new, "case {case}");
            changed += hunks
                .iter()
                .map(|h| (h.old.1 - h.old.0) + (h.new.1 - h.new.0))
                .sum::<usize>();
            minimal += a.len() + b.len() - 2 * lcs(&a, &b);
            for w in hunks.windows(2) {
                assert!(w[0].old.1 < w[1].old.0, "case {case}: hunks touch");
            }
        }
        assert!(
            changed as f64 <= minimal as f64 * 1.01,
            "{changed} lines changed where {minimal} would do"
        );
    }

    #[test]
    fn a_diff_over_budget_gives_up() {
        let old: String = (0..100).map(|i| format!("{i}\n")).collect();
        let new: String = (100..200).map(|i| format!("{i}\n")).collect();
        assert!(diff_lines(old.as_bytes(), new.as_bytes(), 50).is_none());
        assert_eq!(
            diff_lines(old.as_bytes(), new.as_bytes(), 200).map(|h| h.len()),
            Some(1)
        );
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
