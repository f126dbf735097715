//! The blocks of a markdown package: ranked spans of one file that meet
//! (or nearly: a blank line or two between) are quoted as one block under
//! one title. Small neighbouring methods then cost one title and one fence
//! instead of one each, and a method inside a class already quoted is not
//! quoted twice.

use crate::pack::{CUT_IN_LINE, CUT_MARKER};

/// A ranked item's place: its file, byte span and lines (1-based, the
/// last included). Lines, not bytes, say what a quote shows: masking a
/// secret changes a quote's length but never its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span<'a> {
    pub path: &'a str,
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub end_line: u32,
}

/// Items quoted together: the best-ranked first, then those it absorbed,
/// in rank order; and the span of the file quoted, from its first line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub members: Vec<usize>,
    pub start: usize,
    pub end: usize,
    pub line: u32,
}

/// Lines a gap between two spans may hold for them to meet: the end of
/// one's last line, a blank line or two (or a decorator), the next one's
/// first line.
pub const GAP_NEWLINES: usize = 3;

/// Whether a span starting at `start` meets a block: it starts inside the
/// block or within [`GAP_NEWLINES`] after its end, or it starts at most
/// that many lines above the block's best item (`lead`: a class whose
/// method leads the block). The best item's head so stays within a few
/// lines of the block's top, where a cut keeps it.
fn meets(
    block: &Block,
    lead: usize,
    start: usize,
    path: &str,
    newlines: &dyn Fn(&str, usize, usize) -> usize,
) -> bool {
    // Far apart in bytes is far apart in lines: not counted.
    if start >= block.start {
        start <= block.end
            || (start - block.end <= GAP_BYTES && newlines(path, block.end, start) <= GAP_NEWLINES)
    } else {
        lead.saturating_sub(start) <= GAP_BYTES && newlines(path, start, lead) <= GAP_NEWLINES
    }
}

/// The most bytes a gap between spans that meet may hold: a few lines,
/// however long. Gaps longer are not read.
const GAP_BYTES: usize = 2048;

/// Groups `spans` (in rank order) into blocks. An item joins the first
/// block of its file it meets (see [`meets`]; `newlines(path, from, to)`
/// counts newlines in the file); blocks that come to meet become one.
pub fn group(spans: &[Span], newlines: &dyn Fn(&str, usize, usize) -> usize) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut of_path: rustc_hash::FxHashMap<&str, Vec<usize>> = Default::default();
    for (i, s) in spans.iter().enumerate() {
        let joined = of_path.get(s.path).and_then(|bs| {
            bs.iter().copied().find(|&b| {
                let lead = spans[blocks[b].members[0]].start;
                meets(&blocks[b], lead, s.start, s.path, newlines)
            })
        });
        match joined {
            Some(b) => {
                let b = &mut blocks[b];
                if s.start < b.start {
                    b.start = s.start;
                    b.line = s.line;
                }
                b.end = b.end.max(s.end);
                b.members.push(i);
            }
            None => {
                // Blocks of better-ranked items inside this one's span (a
                // method quoted before its impl or class): its quote stops
                // where the first of them starts, and its lines after each
                // go to the end of that block, so no line is quoted twice.
                let mut inside: Vec<usize> = of_path
                    .get(s.path)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&b| s.start < blocks[b].start && blocks[b].start < s.end)
                    .collect();
                inside.sort_unstable_by_key(|&b| blocks[b].start);
                for (k, &b) in inside.iter().enumerate() {
                    let upto = inside.get(k + 1).map_or(s.end, |&next| blocks[next].start);
                    if blocks[b].end < upto {
                        blocks[b].end = upto;
                    }
                }
                let end = inside.first().map_or(s.end, |&b| blocks[b].start);
                of_path.entry(s.path).or_default().push(blocks.len());
                blocks.push(Block {
                    members: vec![i],
                    start: s.start,
                    end,
                    line: s.line,
                });
            }
        }
    }
    // A block grown by later items may now meet another: the two become
    // one (the better-led one takes the other in).
    let mut merged = true;
    while merged {
        merged = false;
        'outer: for a in 0..blocks.len() {
            for b in 0..blocks.len() {
                let path = spans[blocks[a].members[0]].path;
                if a == b
                    || spans[blocks[b].members[0]].path != path
                    || blocks[a].members[0] > blocks[b].members[0]
                    || !meets(
                        &blocks[a],
                        spans[blocks[a].members[0]].start,
                        blocks[b].start,
                        path,
                        newlines,
                    )
                {
                    continue;
                }
                let taken = blocks.remove(b);
                let into = &mut blocks[if b < a { a - 1 } else { a }];
                if taken.start < into.start {
                    into.start = taken.start;
                    into.line = taken.line;
                }
                into.end = into.end.max(taken.end);
                into.members.extend(taken.members);
                into.members.sort_unstable();
                merged = true;
                break 'outer;
            }
        }
    }
    // A block whose top moved up after a container's quote was stopped at
    // it (a member joining from above, a merge) starts inside that quote:
    // the container's quote stops where the block now starts, so no line
    // is quoted twice.
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&b| (spans[blocks[b].members[0]].path, blocks[b].start));
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let same_file = spans[blocks[a].members[0]].path == spans[blocks[b].members[0]].path;
        if same_file && blocks[a].end > blocks[b].start && blocks[a].end <= blocks[b].end {
            blocks[a].end = blocks[b].start.max(blocks[a].start);
        }
    }
    blocks
}

/// Whole lines of a (possibly cut) quote's code: a last line cut short
/// ([`CUT_IN_LINE`]) is not one.
fn quoted_lines(quoted: &str) -> u32 {
    if let Some(code) = quoted.strip_suffix(CUT_IN_LINE) {
        return code.matches('\n').count() as u32;
    }
    let code = quoted.strip_suffix(CUT_MARKER).unwrap_or(quoted);
    code.matches('\n').count() as u32 + 1
}

/// Which of a block's members a (possibly cut) quote of it shows: the first
/// always, the others when their first line is quoted.
pub fn shown<'s>(
    block: &'s Block,
    spans: &'s [Span],
    quoted: &str,
) -> impl Iterator<Item = usize> + 's {
    let lines = quoted_lines(quoted);
    block
        .members
        .iter()
        .copied()
        .enumerate()
        .filter(move |(k, m)| *k == 0 || spans[*m].line.saturating_sub(block.line) < lines)
        .map(|(_, m)| m)
}

/// The members a block's title names: those shown, less those inside a
/// better-ranked one shown (a class's methods under the class: the code
/// shows them).
pub fn titled(block: &Block, spans: &[Span], quoted: &str) -> Vec<usize> {
    let shown: Vec<usize> = shown(block, spans, quoted).collect();
    shown
        .iter()
        .copied()
        .filter(|&m| {
            let s = &spans[m];
            !shown.iter().any(|&o| {
                let inside = &spans[o];
                o < m && inside.start <= s.start && s.end <= inside.end
            })
        })
        .collect()
}

/// Whether a quote of its block shows a member whole.
pub fn whole_in(block: &Block, span: &Span, quoted: &str) -> bool {
    !quoted.ends_with(CUT_MARKER) || span.end_line.saturating_sub(block.line) < quoted_lines(quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\n\n\n\n    def h(self):\n        return 3\n";

    fn span(path: &'static str, needle: &str, upto: &str) -> Span<'static> {
        let start = FILE.find(needle).unwrap();
        let end = start + FILE[start..].find(upto).unwrap() + upto.len();
        let line = |at: usize| FILE[..at].matches('\n').count() as u32 + 1;
        Span {
            path,
            start,
            end,
            line: line(start),
            end_line: line(end),
        }
    }

    fn lines(_: &str, from: usize, to: usize) -> usize {
        FILE[from..to].matches('\n').count()
    }

    #[test]
    fn neighbours_meet_and_far_ones_do_not() {
        let f = span("a.py", "def f", "return 1");
        let g = span("a.py", "def g", "return 2");
        let h = span("a.py", "def h", "return 3");
        let other = Span { path: "b.py", ..g };
        let blocks = group(&[f, h, g, other], &lines);
        // g follows f after one blank line; h is four blank lines further.
        assert_eq!(blocks.len(), 3, "{blocks:?}");
        assert_eq!(blocks[0].members, [0, 2]);
        assert_eq!((blocks[0].start, blocks[0].end), (f.start, g.end));
        assert_eq!(blocks[1].members, [1]);
        assert_eq!(blocks[2].members, [3], "another file never joins");
    }

    /// The span of `def <name>` in `file`, up to its `pass`.
    fn def_in(file: &str, def: &str) -> Span<'static> {
        let start = file.find(def).unwrap();
        let end = start + file[start..].find("pass").unwrap() + 4;
        let line = |x: usize| file[..x].matches('\n').count() as u32 + 1;
        Span {
            path: "m.py",
            start,
            end,
            line: line(start),
            end_line: line(end),
        }
    }

    #[test]
    fn a_gap_of_few_but_long_lines_is_not_a_meeting() {
        let pad = "x".repeat(GAP_BYTES + 1);
        let file = format!("def a():\n    pass\n{pad}\ndef b():\n    pass\n");
        let at = |n: &str| def_in(&file, n);
        let counted = std::cell::Cell::new(0);
        let count = |_: &str, from: usize, to: usize| {
            counted.set(counted.get() + 1);
            file[from..to].matches('\n').count()
        };
        // Two newlines apart, but further than GAP_BYTES: apart, and the
        // gap is not even read.
        let blocks = group(&[at("def a"), at("def b")], &count);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(counted.get(), 0);
    }

    #[test]
    fn blocks_that_come_to_meet_become_one() {
        let file = "def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n";
        let at = |n: &str| def_in(file, n);
        let count = |_: &str, from: usize, to: usize| file[from..to].matches('\n').count();
        // a, then c (too far from a alone), then b, which a's block takes
        // in: now it meets c's block, which it takes in too.
        let blocks = group(&[at("def a"), at("def c"), at("def b")], &count);
        assert_eq!(blocks.len(), 1, "{blocks:?}");
        assert_eq!(blocks[0].members, [0, 1, 2]);
        assert_eq!(blocks[0].end, at("def c").end);
    }

    #[test]
    fn a_block_tops_out_near_its_best_item_and_absorbs_what_it_contains() {
        let class = span("a.py", "class A", "return 2");
        let f = span("a.py", "def f", "return 1");
        let g = span("a.py", "def g", "return 2");
        // The class quoted first contains f: f is not quoted again, nor
        // named in the title.
        let spans = [class, f];
        let blocks = group(&spans, &lines);
        assert_eq!(blocks.len(), 1);
        assert_eq!((blocks[0].start, blocks[0].end), (class.start, class.end));
        let quoted = &FILE[class.start..class.end];
        assert_eq!(shown(&blocks[0], &spans, quoted).count(), 2);
        assert_eq!(titled(&blocks[0], &spans, quoted), [0]);
        // g ranked first: f, starting three lines above it, joins (the
        // block's top moves up to f); the class, four lines above g, does
        // not, so g's head stays near the top of the block it leads.
        let spans = [g, f, class];
        let blocks = group(&spans, &lines);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(blocks[0].members, [0, 1]);
        assert_eq!((blocks[0].start, blocks[0].line), (f.start, f.line));
        assert_eq!(blocks[1].members, [2]);
        // The class's quote stops where f's block starts: f and g are
        // quoted once.
        assert_eq!((blocks[1].start, blocks[1].end), (class.start, f.start));
        let quoted = &FILE[blocks[0].start..blocks[0].end];
        assert_eq!(titled(&blocks[0], &spans, quoted), [0, 1]);
    }

    #[test]
    fn a_member_joining_from_above_after_its_container_is_quoted_once() {
        // g, then the class (its quote stops at g's block), then f, which
        // joins g's block from above: the class's quote stops at f now.
        let class = span("a.py", "class A", "return 2");
        let f = span("a.py", "def f", "return 1");
        let g = span("a.py", "def g", "return 2");
        let blocks = group(&[g, class, f], &lines);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(blocks[0].members, [0, 2]);
        assert_eq!(blocks[0].start, f.start);
        assert_eq!((blocks[1].start, blocks[1].end), (class.start, f.start));
    }

    #[test]
    fn a_container_ranked_after_its_members_quotes_only_the_rest() {
        let file = "impl A {\n    fn head() {}\n\n\n\n\n    fn f() { pass }\n\n\n\n\n    fn mid() {}\n\n\n\n\n    fn g() { pass }\n    fn tail() {}\n}\n";
        let at = |needle: &str, upto: &str| {
            let start = file.find(needle).unwrap();
            let end = start + file[start..].find(upto).unwrap() + upto.len();
            let line = |x: usize| file[..x].matches('\n').count() as u32 + 1;
            Span {
                path: "m.rs",
                start,
                end,
                line: line(start),
                end_line: line(end),
            }
        };
        let count = |_: &str, from: usize, to: usize| file[from..to].matches('\n').count();
        let (f, g) = (at("fn f", "pass }"), at("fn g", "pass }"));
        let whole = at("impl A", "}\n}");
        let blocks = group(&[f, g, whole], &count);
        // f's block runs on to where g's starts, g's to the impl's end (and
        // the two, now meeting, are one), the impl's own quote is its head
        // above f: every line once.
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!((blocks[0].start, blocks[0].end), (f.start, whole.end));
        assert_eq!(blocks[0].members, [0, 1]);
        assert_eq!((blocks[1].start, blocks[1].end), (whole.start, f.start));
        assert_eq!(blocks[1].members, [2]);
        let mut covered: Vec<(usize, usize)> = blocks.iter().map(|b| (b.start, b.end)).collect();
        covered.sort_unstable();
        assert!(covered.windows(2).all(|w| w[0].1 <= w[1].0), "{covered:?}");
    }

    #[test]
    fn a_cut_quote_shows_the_members_it_reaches() {
        let f = span("a.py", "def f", "return 1");
        let g = span("a.py", "def g", "return 2");
        let spans = [f, g];
        let blocks = group(&spans, &lines);
        let b = &blocks[0];
        let whole = &FILE[b.start..b.end];
        assert_eq!(shown(b, &spans, whole).collect::<Vec<_>>(), [0, 1]);
        assert!(whole_in(b, &g, whole));
        let upto_f = format!("{}{CUT_MARKER}", &FILE[b.start..f.end]);
        assert_eq!(shown(b, &spans, &upto_f).collect::<Vec<_>>(), [0]);
        assert!(whole_in(b, &f, &upto_f));
        assert!(!whole_in(b, &g, &upto_f));
        let into_g = format!("{}{CUT_MARKER}", &FILE[b.start..g.start + 5]);
        assert_eq!(shown(b, &spans, &into_g).collect::<Vec<_>>(), [0, 1]);
        assert!(!whole_in(b, &g, &into_g));
    }

    #[test]
    fn a_line_cut_short_is_not_a_quoted_line() {
        let f = span("a.py", "def f", "return 1");
        let g = span("a.py", "def g", "return 2");
        let spans = [f, g];
        let blocks = group(&spans, &lines);
        let b = &blocks[0];
        // Into g's last line: g is shown, not whole.
        let in_last = format!("{}{CUT_IN_LINE}", &FILE[b.start..g.end - 3]);
        assert_eq!(shown(b, &spans, &in_last).collect::<Vec<_>>(), [0, 1]);
        assert!(!whole_in(b, &g, &in_last));
        assert!(whole_in(b, &f, &in_last));
        // Into g's first line: g is not shown at all.
        let in_first = format!("{}{CUT_IN_LINE}", &FILE[b.start..g.start + 5]);
        assert_eq!(shown(b, &spans, &in_first).collect::<Vec<_>>(), [0]);
    }
}
