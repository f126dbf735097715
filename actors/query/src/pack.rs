//! Packing ranked items into a token budget (cl100k_base): in rank order,
//! each whole or, when it is big, its first lines, and saying exactly what
//! did not fit.

/// Loads the cl100k_base tables and the tokens' lengths, then compiles
/// the secret rules every served text is searched with, now (tens of
/// milliseconds each) rather than in the first answer that packs.
pub fn warm() {
    let _ = crate::cl100k::token_len(0);
    sno_redact::Redactor::global().warm();
}

/// Starts [`warm`] on a thread of its own, once:
/// a caller with other work before its first count overlaps the two.
pub fn warm_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(warm);
    });
}

/// Tokens of a text, as cl100k_base counts them. Longer texts' counts are
/// remembered by their hash: answers quote the same sources again and
/// again, and counting is a regex pass and merges over every byte.
pub fn count_tokens(text: &str) -> usize {
    if text.len() < REMEMBERED_FROM {
        return crate::cl100k::counter().encode_ordinary(text).len();
    }
    let key = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    let counts = COUNTS.get_or_init(Default::default);
    if let Some(n) = counts.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return *n as usize;
    }
    let n = crate::cl100k::counter().encode_ordinary(text).len();
    let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= REMEMBERED {
        c.clear();
    }
    c.insert(key, n as u32);
    n
}

/// Texts shorter than this are counted each time.
const REMEMBERED_FROM: usize = 256;

/// Counts remembered at most (dropped wholesale past it).
const REMEMBERED: usize = 1 << 16;

/// A cache, like the token table: counts by text hash.
static COUNTS: std::sync::OnceLock<std::sync::Mutex<rustc_hash::FxHashMap<u64, u32>>> =
    std::sync::OnceLock::new();

/// The token count an answer states of itself: the answer is measured
/// (`measure`) with a guess of the count, then with what that gave, until
/// the two agree; a digit more or less moves the count by a token at most,
/// so a few rounds settle it.
pub fn settled_count(mut measure: impl FnMut(usize) -> usize) -> usize {
    let mut total = 0;
    for _ in 0..4 {
        let measured = measure(total);
        if measured == total {
            break;
        }
        total = measured;
    }
    total
}

/// How an item ended up in the package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packed {
    Whole,
    /// Cut to fit: only the first lines of its source are included.
    Truncated,
    /// Left out: no room.
    Omitted,
}

/// What is appended to a cut source.
pub const CUT_MARKER: &str = "\n… [cut]";

/// What ends a cut whose last line is itself cut short (the room a cut
/// at a line's end left went to the next line's head): its last line is
/// not one of the source's whole lines.
pub const CUT_IN_LINE: &str = "…\n… [cut]";

/// Renders candidate `i` around a source (its own, or a cut of it).
pub type Render<'a> = dyn Fn(usize, &str) -> String + 'a;

/// Where the candidates were quoted from, for an answer whose framing
/// share is spent: what follows and what precedes each quote in its file.
pub trait Surroundings {
    /// Candidate `i`'s source with what follows it where it was quoted
    /// from (the next lines of its file, at most about `bytes`, up to
    /// where a quote of one of `quoted` starts), as a [`Gap`] whose
    /// `first` is the number of the source's first line: `None` when
    /// nothing follows.
    fn after(&self, i: usize, bytes: usize, quoted: &Reach) -> Option<Gap>;

    /// The whole lines before candidate `i`'s quote (at most about
    /// `bytes`, back to where its file starts or a quote of one of
    /// `quoted` ends), with the number of the first: `None` when nothing
    /// precedes it.
    fn before(&self, _i: usize, _bytes: usize, _quoted: &Reach) -> Option<Gap> {
        None
    }

    /// Whether candidate `i` is quoted under another's title (a later
    /// piece of a file already quoted): it costs a line, not a title, and
    /// comes in before the lines preceding the quotes do.
    fn continues(&self, _i: usize) -> bool {
        false
    }
}

/// The candidates quoted so far and how far their quotes reach: the
/// quotes of one file never share a line.
#[derive(Clone, Copy, Debug)]
pub struct Reach<'a> {
    /// Candidates below this one are quoted (or found no room).
    pub below: usize,
    /// By candidate: the first line its quote reaches back to, when it
    /// was widened backwards.
    pub from: &'a [Option<usize>],
    /// By candidate: the last line its quote reaches to, when it was
    /// widened forwards.
    pub to: &'a [Option<usize>],
}

/// Lines around a quote: those before it ([`Surroundings::before`]), or
/// its source and what follows it ([`Surroundings::after`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gap {
    /// The number of its first line.
    pub first: usize,
    /// Whole lines.
    pub text: String,
    /// The candidates not yet quoted that lie in it, each as (candidate,
    /// its first line's index in `text`, or `None` when it starts before
    /// `text` does, and its last line's): a quote of the gap that shows
    /// any of such a candidate's lines is the only quote of them.
    pub inner: Vec<(usize, Option<usize>, usize)>,
}

/// A function of the candidate and the bytes is what follows the quotes,
/// nothing preceding them.
impl<F: Fn(usize, usize) -> Option<String>> Surroundings for F {
    fn after(&self, i: usize, bytes: usize, _: &Reach) -> Option<Gap> {
        self(i, bytes).map(|text| Gap {
            text,
            ..Gap::default()
        })
    }
}

/// The surroundings `pack` widens whole items into.
pub type Widen<'a> = dyn Surroundings + 'a;

/// Bytes a token of code takes at most, in all but rare text: what a
/// widened quote is read for a room of tokens.
const WIDEN_BYTES_PER_TOKEN: usize = 8;

/// Windows a widened quote is read through at most, each twice the one
/// before.
const WIDEN_WINDOWS: usize = 3;

/// The result of packing.
#[derive(Clone, Debug)]
pub struct Packing {
    /// The included blocks, in rank order.
    pub body: String,
    pub outcome: Vec<Packed>,
    /// The source each included candidate was rendered with (cut ones end
    /// with [`CUT_MARKER`]; one quoted with the lines before it starts
    /// with the line it starts at, `⋮ line n`).
    pub sources: Vec<Option<String>>,
    /// Each included candidate's rendering: the pieces of `body`.
    pub rendered: Vec<Option<String>>,
    /// By candidate: the included one whose widened quote shows it whole,
    /// in the lines around that one's own (it has no rendering of its own
    /// and its outcome is [`Packed::Omitted`]).
    pub inside: Vec<Option<usize>>,
    pub tokens: usize,
}

/// The least room worth filling with a cut item: a few lines of code.
const MIN_CUT: usize = 40;

/// The share of the budget one item may take while others wait: a big
/// definition shows its first lines rather than crowding out the items
/// ranked after it.
const ITEM_SHARE: usize = 3;

/// Fills `budget` tokens with `sources` rendered by `render`, in rank
/// order: each whole if it fits in its share (a third of the budget, or
/// all that is left for the last one), else cut to the lines that do.
/// Packing stops at the first item that cannot show even a few lines, so
/// what is included is always the ranking's head, never a low-ranked small
/// item in the place of a better one.
///
/// `framing` bounds what the items' framing (what `render` adds around a
/// source: a title line, fences) may take in all: past it, the room goes
/// first to the items that were cut, best first, and only what they leave
/// to further items. A reader asked for code gets code, not a list of
/// titles with a few lines under each. With `widen`, room the cut items
/// cannot take goes next to the whole items' surroundings (best first:
/// what follows each in its file, under the title it already has, then
/// what precedes it), and only then to further items, each a title more
/// (an item that [`Surroundings::continues`] a quote comes in before the
/// lines preceding the quotes: it costs a line, not a title).
///
/// With `additive`, the renderings' counts add up to the body's (each ends
/// in a newline and starts with a character cl100k never joins to it: see
/// [`clean_seam`]), so the body is never counted whole.
pub fn pack(
    sources: &[String],
    render: &Render,
    budget: usize,
    framing: usize,
    widen: Option<&Widen>,
    additive: bool,
    counts: &Counts,
) -> Packing {
    let n = sources.len();
    let mut placed = Placed {
        outcome: vec![Packed::Omitted; n],
        texts: vec![None; n],
        widen_tried: vec![false; n],
        preceded: vec![false; n],
        inside: vec![None; n],
        cut_off: vec![false; n],
        from: vec![None; n],
        to: vec![None; n],
        used: 0,
    };
    let share = (budget / ITEM_SHARE).max(MIN_CUT);
    let mut framed = 0;
    let capped = framing != usize::MAX;
    let mut i = 0;
    while i < n {
        // Shown (whole or in part) in the lines around a better one's
        // quote.
        if placed.inside[i].is_some() || placed.cut_off[i] {
            i += 1;
            continue;
        }
        let frame = if capped {
            *counts
                .frame
                .borrow_mut()
                .entry(i)
                .or_insert_with(|| count_tokens(&render(i, "")))
        } else {
            0
        };
        // Past the bound, an item comes in only with what the cut items,
        // grown first, leave: when every item before it is whole.
        if capped && i > 0 && framed + frame > framing {
            placed.grow_cut(sources, render, budget, counts);
            if let Some(widen) = widen {
                placed.widen(widen, render, budget, !widen.continues(i), i);
            }
            if placed.inside[i].is_some() || placed.cut_off[i] {
                i += 1;
                continue;
            }
        }
        let room = budget.saturating_sub(placed.used);
        let limit = if i + 1 == n { room } else { room.min(share) };
        let text = render(i, &sources[i]);
        let fit = |limit: usize| match counts.fits_whole(i, &text, limit) {
            Some(t) => Some((Packed::Whole, (sources[i].clone(), text.clone(), t))),
            None => (limit >= MIN_CUT)
                .then(|| cut_to_fit(&sources[i], i, render, limit))
                .flatten()
                .map(|cut| {
                    let outcome = if cut.0 == sources[i] {
                        Packed::Whole
                    } else {
                        Packed::Truncated
                    };
                    (outcome, cut)
                }),
        };
        // The share keeps room for the items after this one; with nothing
        // placed yet, an answer of no item would keep it for nobody: the
        // head of the ranking takes what it needs of the whole room.
        let got = fit(limit).or_else(|| {
            (placed.texts.iter().all(Option::is_none) && limit < room)
                .then(|| fit(room))
                .flatten()
        });
        let Some((outcome, text)) = got else { break };
        placed.used += text.2;
        placed.outcome[i] = outcome;
        placed.texts[i] = Some(text);
        framed += frame;
        i += 1;
    }
    placed.grow_cut(sources, render, budget, counts);
    if let Some(widen) = widen.filter(|_| capped && i < n) {
        placed.widen(widen, render, budget, true, i);
    }
    let Placed {
        mut outcome,
        mut texts,
        mut inside,
        ..
    } = placed;
    // Pieces are counted one by one; token boundaries can merge across
    // them, so the whole is counted once and trimmed if it overshoots.
    loop {
        let body: String = texts.iter().flatten().map(|(_, t, _)| t.as_str()).collect();
        let tokens = if additive {
            texts.iter().flatten().map(|(_, _, t)| t).sum()
        } else {
            count_tokens(&body)
        };
        let last = texts.iter().rposition(Option::is_some);
        match last {
            Some(l) if tokens > budget => {
                texts[l] = None;
                outcome[l] = Packed::Omitted;
                for x in inside.iter_mut().filter(|x| **x == Some(l)) {
                    *x = None;
                }
            }
            _ => {
                let (sources, rendered) = texts
                    .into_iter()
                    .map(|t| t.map_or((None, None), |(s, r, _)| (Some(s), Some(r))))
                    .unzip();
                return Packing {
                    body,
                    outcome,
                    sources,
                    rendered,
                    inside,
                    tokens,
                };
            }
        }
    }
}

/// Token counts of the candidates' whole renderings and of their framing
/// (a rendering around nothing), by candidate, kept across the packings
/// of one answer: a package is packed twice, the second time with what
/// its header left, and its items rendered whole are the same texts.
/// Only for the one `render` of one answer.
#[derive(Default)]
pub struct Counts {
    whole: std::cell::RefCell<rustc_hash::FxHashMap<usize, usize>>,
    frame: std::cell::RefCell<rustc_hash::FxHashMap<usize, usize>>,
}

impl Counts {
    /// [`fits`] for candidate `i` rendered whole as `text`.
    fn fits_whole(&self, i: usize, text: &str, limit: usize) -> Option<usize> {
        if text.len() / 32 > limit {
            return None;
        }
        let t = *self
            .whole
            .borrow_mut()
            .entry(i)
            .or_insert_with(|| count_tokens(text));
        (t <= limit).then_some(t)
    }
}

/// The items placed so far: how each went in, its source, rendering and
/// tokens, and the tokens used.
struct Placed {
    outcome: Vec<Packed>,
    texts: Vec<Option<(String, String, usize)>>,
    /// Items [`Placed::widen`] has tried (the room only shrinks after,
    /// so once is enough: a packing past its framing share tries again
    /// at every further item).
    widen_tried: Vec<bool>,
    /// Items [`Placed::precede`] has tried.
    preceded: Vec<bool>,
    /// Items shown whole in the lines around another's quote.
    inside: Vec<Option<usize>>,
    /// Items shown in part there: never placed.
    cut_off: Vec<bool>,
    /// The first line a widened quote reaches back to, and the last one
    /// it reaches to.
    from: Vec<Option<usize>>,
    to: Vec<Option<usize>>,
    used: usize,
}

impl Placed {
    /// What the shares held back and nothing took goes to the cut items,
    /// best first.
    fn grow_cut(&mut self, sources: &[String], render: &Render, budget: usize, counts: &Counts) {
        for (i, source) in sources.iter().enumerate() {
            let room = budget.saturating_sub(self.used);
            if self.outcome[i] != Packed::Truncated || room == 0 {
                continue;
            }
            let had = self.texts[i].as_ref().map_or(0, |t| t.2);
            let text = render(i, source);
            let grown = match counts.fits_whole(i, &text, had + room) {
                Some(t) => Some((source.clone(), text, t)),
                None => cut_to_fit(source, i, render, had + room).filter(|c| c.2 > had),
            };
            if let Some(g) = grown {
                self.used = self.used - had + g.2;
                if g.0 == *source {
                    self.outcome[i] = Packed::Whole;
                }
                self.texts[i] = Some(g);
            }
        }
    }

    /// What is left goes to the whole items' surroundings, best first:
    /// each quoted with what follows it, as much as fits, and then, with
    /// `before`, with what precedes it.
    /// Items below `placed` have been placed (or found no room).
    fn widen(
        &mut self,
        widen: &Widen,
        render: &Render,
        budget: usize,
        before: bool,
        placed: usize,
    ) {
        for k in 0..self.outcome.len() {
            let room = budget.saturating_sub(self.used);
            if room == 0 {
                return;
            }
            // A widened item stays `Whole` (every ranked line of it is
            // shown), which the cut items' growth leaves alone.
            if self.outcome[k] != Packed::Whole {
                continue;
            }
            self.follow(k, widen, render, budget, placed);
            // A file's later piece has its first piece's surroundings.
            if before && !self.preceded[k] && !widen.continues(k) {
                self.preceded[k] = true;
                self.precede(k, widen, render, budget, placed);
            }
        }
    }

    /// Whole item `k` quoted with what follows it, as much as fits (once).
    fn follow(&mut self, k: usize, widen: &Widen, render: &Render, budget: usize, placed: usize) {
        let room = budget.saturating_sub(self.used);
        if self.widen_tried[k] || room == 0 {
            return;
        }
        self.widen_tried[k] = true;
        let had = self.texts[k].as_ref().map_or(0, |t| t.2);
        // The window asked for is a power of two: the same for rooms
        // alike, so its line counts are remembered across answers.
        let mut bytes = (had + room)
            .saturating_mul(WIDEN_BYTES_PER_TOKEN)
            .next_power_of_two();
        let mut grown: Option<(String, String, usize)> = None;
        let mut inner = Vec::new();
        let mut first = 0;
        // A quote that fits whole with room to spare ended where its
        // window did (indented, blank-lined code takes more bytes a
        // token than the window allows for), or where its file or the
        // next block does: a wider window tells which.
        for _ in 0..WIDEN_WINDOWS {
            let reach = Reach {
                below: placed,
                from: &self.from,
                to: &self.to,
            };
            let Some(Gap {
                first: top,
                text: wide,
                inner: within,
            }) = widen.after(k, bytes, &reach)
            else {
                break;
            };
            if grown.as_ref().is_some_and(|g| g.0.len() >= wide.len()) {
                break;
            }
            // Counted whole only when it may fit (code takes three to
            // four bytes a token): the cut counts its head anyway.
            let whole = (wide.len() <= 4 * (had + room))
                .then(|| {
                    let text = render(k, &wide);
                    fits(&text, had + room).map(|t| (text, t))
                })
                .flatten();
            let Some(g) = (match whole {
                Some((text, t)) => Some((wide, text, t)),
                None => cut_to_fit(&wide, k, render, had + room),
            })
            .filter(|g| g.2 > had) else {
                break;
            };
            let spare = had + room - g.2;
            let cut = g.0.ends_with(CUT_MARKER);
            grown = Some(g);
            inner = within;
            first = top;
            if cut || spare < MIN_FILL {
                break;
            }
            bytes = bytes.saturating_mul(2);
        }
        if let Some(g) = grown {
            // Lines shown whole, and shown at all (a cut's last line may
            // be its head only).
            let (whole, any) = match g.0.strip_suffix(CUT_IN_LINE) {
                Some(code) => {
                    let n = code.matches('\n').count();
                    (n, n + 1)
                }
                None => {
                    let n =
                        g.0.strip_suffix(CUT_MARKER)
                            .unwrap_or(&g.0)
                            .matches('\n')
                            .count()
                            + 1;
                    (n, n)
                }
            };
            self.shown_in(k, &inner, |top, end| (end < whole, top < any));
            self.to[k] = Some(first + any - 1);
            self.used = self.used - had + g.2;
            self.texts[k] = Some(g);
        }
    }

    /// The candidates of `inner` a quote of `k` shows: whole (`shows`
    /// gives (whole, any line) for a candidate's first and last line's
    /// indices) they are quoted there; in part, they are not quoted
    /// again (their other lines would repeat these) and are listed as
    /// left out.
    fn shown_in(
        &mut self,
        k: usize,
        inner: &[(usize, Option<usize>, usize)],
        shows: impl Fn(usize, usize) -> (bool, bool),
    ) {
        for &(j, top, end) in inner {
            if self.outcome[j] != Packed::Omitted || self.inside[j].is_some() {
                continue;
            }
            match top.map(|top| shows(top, end)) {
                Some((true, _)) => self.inside[j] = Some(k),
                Some((false, true)) => self.cut_off[j] = true,
                Some((false, false)) => {}
                // It starts before the gap: any line of it shown is its
                // end.
                None => self.cut_off[j] |= shows(0, end).1,
            }
        }
    }

    /// What the lines after whole item `k` left goes to the lines before
    /// it: a definition that its file's end (or the next quote) stops shows
    /// what leads to it (its doc comment, the head of what holds it)
    /// rather than the room going to another title. The quote then starts
    /// with the line it starts at (`⋮ line n`), its title keeping the
    /// item's own line; its own lines are never cut for this.
    /// A candidate not yet quoted that the quote shows whole is quoted
    /// there only; one it shows the end of is not quoted again.
    fn precede(&mut self, k: usize, around: &Widen, render: &Render, budget: usize, placed: usize) {
        let room = budget.saturating_sub(self.used);
        let Some((source, _, had)) = self.texts[k].clone() else {
            return;
        };
        if room < MIN_FILL || source.ends_with(CUT_MARKER) {
            return;
        }
        let reach = Reach {
            below: placed,
            from: &self.from,
            to: &self.to,
        };
        let Some(Gap {
            first,
            text: gap,
            inner,
        }) = around.before(
            k,
            (had + room).saturating_mul(WIDEN_BYTES_PER_TOKEN),
            &reach,
        )
        else {
            return;
        };
        let lines: Vec<&str> = gap.split_inclusive('\n').collect();
        // The last `t` lines of the gap before the source, less the blank
        // ones they start with, rendered and counted: `Err` when they do
        // not fit, nothing when they are all blank.
        type Quote = Option<((String, String, usize), usize)>;
        let with = |t: usize| -> Result<Quote, ()> {
            let Some(from) = (lines.len() - t..lines.len()).find(|&l| !lines[l].trim().is_empty())
            else {
                return Ok(None);
            };
            let quote = format!(
                "{} line {}\n{}{source}",
                crate::context::CONTINUED,
                first + from,
                lines[from..].concat()
            );
            let text = render(k, &quote);
            let t = fits(&text, had + room).ok_or(())?;
            Ok(Some(((quote, text, t), from)))
        };
        // The most lines that fit: their count only grows with them.
        let (mut lo, mut hi, mut best) = (0, lines.len(), None);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match with(mid) {
                Ok(g) => {
                    best = g.or(best);
                    lo = mid;
                }
                Err(()) => hi = mid - 1,
            }
        }
        if let Some((g, from)) = best.filter(|(g, _)| g.2 > had) {
            // The quote shows the gap's lines from `from` on.
            self.shown_in(k, &inner, |top, end| (top >= from, end >= from));
            self.from[k] = Some(first + from);
            self.used = self.used - had + g.2;
            self.texts[k] = Some(g);
        }
    }
}

/// Whether cl100k counts `left + right` as `left` and `right` apart: its
/// pre-tokenizer never joins a newline to a following non-space character
/// (a piece that takes a newline either ends with it or is all
/// whitespace), so text ending in a newline meets text starting with a
/// non-space character at a piece boundary.
pub fn clean_seam(left: &str, right: &str) -> bool {
    (left.is_empty() || left.ends_with('\n'))
        && right.chars().next().is_none_or(|c| !c.is_whitespace())
}

/// `text`'s tokens if they are at most `limit`. A cl100k token covers at
/// most a few dozen bytes of code: when even that bound cannot fit, the
/// (costly) exact count is skipped.
fn fits(text: &str, limit: usize) -> Option<usize> {
    (text.len() / 32 <= limit)
        .then(|| count_tokens(text))
        .filter(|t| *t <= limit)
}

/// The longest head of `source` (whole lines) whose rendering fits `room`
/// tokens: the source cut, its rendering and the rendering's tokens.
///
/// Counting a rendering is a pass of cl100k over it, and a search over the
/// number of lines counted one per step. So the source's head is counted
/// once, token by token, which gives what each line's end has cost so far;
/// the cut that estimate picks is then counted exactly, and moved a line at
/// a time while the exact count says so (token boundaries differ across a
/// cut by a token or two, so it moves little).
fn cut_to_fit(
    source: &str,
    i: usize,
    render: &Render,
    room: usize,
) -> Option<(String, String, usize)> {
    let ends: Vec<usize> = source
        .match_indices('\n')
        .map(|(at, _)| at)
        .chain([source.len()])
        .collect();
    // The head counted: a few bytes a token (code runs 3 to 4), doubled
    // until it holds more than `room` tokens or is the whole source.
    let mut span = room.saturating_mul(6);
    let key = xxhash_rust::xxh3::xxh3_64(source.as_bytes());
    let costs = loop {
        let reach = ends.partition_point(|e| *e <= span).clamp(1, ends.len());
        let costs = head_costs(key, source, &ends[..reach]);
        if reach == ends.len() || costs.last().is_some_and(|c| c.estimate > room) {
            break costs;
        }
        span = span.saturating_mul(2);
    };
    // A cut rendered is what `render` puts before it, the source's lines
    // up to a newline, and the marker with what `render` puts after it.
    // Where all three meet at boundaries of cl100k's pieces (before: a
    // newline; at the cut: a newline no newline follows, see
    // [`LineEnd::exact`]), its count is theirs added up, and only the
    // small parts around the source are counted.
    let by_parts = |lines: usize, cut: &str, text: &str| -> Option<usize> {
        let end = *ends.get(lines - 1).filter(|_| lines < ends.len())?;
        let head = costs.get(lines - 1)?.exact?;
        let at = text.find(cut)?;
        let before = &text[..at];
        let after = &text[at + end + 1..];
        (before.ends_with('\n') && !source.starts_with(['\n', '\r']))
            .then(|| count_tokens(before) + head + count_tokens(after))
    };
    // A cut after the source's first `lines` lines (and what follows them
    // in `cut`: the marker, or the head of the next line and its marker),
    // rendered and counted.
    let counted = |lines: usize, cut: String| {
        let text = render(i, &cut);
        let t = match by_parts(lines, &cut, &text) {
            Some(t) => {
                debug_assert_eq!(t, count_tokens(&text), "{text:?}");
                t
            }
            None => count_tokens(&text),
        };
        (cut, text, t)
    };
    let attempt =
        |lines: usize| counted(lines, format!("{}{CUT_MARKER}", &source[..ends[lines - 1]]));
    let frame = count_tokens(&render(i, CUT_MARKER));
    let estimate = costs.partition_point(|c| frame + c.estimate <= room).max(1);
    let mut lines = estimate;
    // Down while the exact count is over.
    let mut best = loop {
        let a = attempt(lines);
        if a.2 <= room {
            break a;
        }
        if lines == 1 {
            return None;
        }
        lines -= 1;
    };
    // Up while the next line still fits: counted only when the estimate
    // says it might (a cut's count differs from its estimate by a token
    // or two; past that, the count would only confirm it).
    while lines < ends.len() {
        if costs
            .get(lines)
            .is_some_and(|c| frame + c.estimate > room + CUT_SLOP)
        {
            break;
        }
        let a = attempt(lines + 1);
        if a.2 > room {
            break;
        }
        best = a;
        lines += 1;
    }
    // Every line kept is no cut: the source whole, without the marker,
    // when it fits (a widened quote, counted whole only when it may fit,
    // can end where its file or the next block does).
    if lines == ends.len() {
        let text = render(i, source);
        let t = count_tokens(&text);
        if t <= room {
            return Some((source.to_string(), text, t));
        }
        return Some(best);
    }
    // What a cut at a line's end leaves (a line of code is a dozen tokens
    // or so, a long one many more) goes to the next line's head: at 300
    // tokens that is a twentieth of the answer. Blank lines before it come
    // with it (a blank line is a token).
    let head = &source[..ends[lines - 1]];
    let Some(last) =
        (lines..ends.len()).find(|&k| !source[ends[k - 1] + 1..ends[k]].trim().is_empty())
    else {
        return Some(best);
    };
    let left = room.saturating_sub(best.2);
    if left < MIN_FILL {
        return Some(best);
    }
    // Of a long line (minified code is one), only what the room could
    // take is read: a token of it is rarely more than 32 bytes.
    let whole_next = &source[ends[lines - 1] + 1..ends[last]];
    let mut reach = whole_next.len().min(left.saturating_mul(32));
    while !whole_next.is_char_boundary(reach) {
        reach -= 1;
    }
    let next = &whole_next[..reach];
    // The next line's tokens, each a place to stop: what the marker of a
    // line cut short adds (a token) comes out of what is left.
    let mut stops: Vec<usize> = Vec::new();
    let mut at = 0usize;
    for t in crate::cl100k::counter().encode_ordinary(next) {
        at += crate::cl100k::token_len(t);
        if next.is_char_boundary(at.min(next.len())) && at < whole_next.len() {
            stops.push(at);
        }
    }
    let marker = count_tokens(CUT_IN_LINE) - count_tokens(CUT_MARKER);
    let mut take = (left.saturating_sub(marker + 1)).min(stops.len());
    // The estimate is the line's tokens counted alone: in place they may
    // merge differently by a token or two, so a few tries settle it.
    for _ in 0..4 {
        if take == 0 {
            break;
        }
        let prefix = &next[..stops[take - 1]];
        if prefix.trim().is_empty() {
            break;
        }
        let a = counted(lines, format!("{head}\n{prefix}{CUT_IN_LINE}"));
        if a.2 <= room {
            return Some(if a.2 > best.2 { a } else { best });
        }
        take -= 1;
    }
    Some(best)
}

/// The least room after a cut at a line's end worth cutting into the next
/// line for: the marker of a cut line takes a token, and a word or two of
/// code is worth less than the line's end it leaves to the reader.
const MIN_FILL: usize = 4;

/// Tokens by which a cut's exact count may exceed its estimate.
const CUT_SLOP: usize = 2;

/// [`line_end_tokens`] of `source`'s head up to the last of `ends`,
/// remembered by the source's hash (`key`): one answer cuts the same
/// source again as the room for it grows, and a package is packed twice
/// (the second time with what the header did not take), so the same head
/// would be encoded up to four times. A longer head's counts serve a
/// shorter one: they are estimates, which the cut checks exactly.
fn head_costs(key: u64, source: &str, ends: &[usize]) -> Vec<LineEnd> {
    let heads = HEADS.get_or_init(Default::default);
    let known = heads
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .filter(|c| c.len() >= ends.len())
        .map(|c| c[..ends.len()].to_vec());
    if let Some(costs) = known {
        return costs;
    }
    let Some(&last) = ends.last() else {
        return Vec::new();
    };
    let costs = line_end_tokens(source, (last + 1).min(source.len()), ends);
    let mut h = heads.lock().unwrap_or_else(|e| e.into_inner());
    if h.len() >= REMEMBERED_HEADS {
        h.clear();
    }
    h.insert(key, costs.clone());
    costs
}

/// Heads' line-end counts remembered at most (dropped wholesale past it):
/// an answer cuts a few dozen sources, and a head's counts are a few
/// kilobytes (a line each, up to the lines the largest budget cuts).
const REMEMBERED_HEADS: usize = 1 << 9;

/// Line-end counts of sources' heads, by source hash.
#[allow(clippy::type_complexity)]
static HEADS: std::sync::OnceLock<std::sync::Mutex<rustc_hash::FxHashMap<u64, Vec<LineEnd>>>> =
    std::sync::OnceLock::new();

/// What a source's head costs up to one of its line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LineEnd {
    /// Tokens of one encoding of the head up to the end, a token that
    /// spans it counted in: an estimate of a cut there.
    estimate: usize,
    /// The exact count of the source up to and with the newline at the
    /// end, when cl100k's pre-tokenizer starts a piece right after it:
    /// when no newline follows it, the piece holding it ends with it
    /// (only its `[\r\n]+` and `[\r\n]*` pieces hold newlines, and both
    /// take every newline that follows), and pieces are encoded alone, so
    /// the head up to it encodes as the whole does.
    exact: Option<usize>,
}

/// For each of `ends` (byte offsets in `source`, ascending, each a
/// newline or the source's end) what `source`'s head up to it costs, from
/// one encoding of the first `upto` bytes.
fn line_end_tokens(source: &str, upto: usize, ends: &[usize]) -> Vec<LineEnd> {
    let mut covered = 0usize;
    let offsets: Vec<usize> = crate::cl100k::counter()
        .encode_ordinary(&source[..upto])
        .into_iter()
        .map(|t| {
            covered += crate::cl100k::token_len(t);
            covered
        })
        .collect();
    let bytes = source.as_bytes();
    ends.iter()
        .map(|&end| LineEnd {
            estimate: match end {
                0 => 0,
                _ => (offsets.partition_point(|&o| o < end) + 1).min(offsets.len()),
            },
            exact: (bytes.get(end) == Some(&b'\n')
                && !matches!(bytes.get(end + 1), Some(b'\n' | b'\r')))
            .then(|| offsets.binary_search(&(end + 1)).ok().map(|k| k + 1))
            .flatten(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line number {i} of the body"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A rendering with a title line, as a markdown package's.
    fn titled(i: usize, s: &str) -> String {
        format!("\n`item_{i}` some/path/to/file_{i}.py:{i}\n```\n{s}\n```\n")
    }

    /// Titled renderings within a framing share, widened by `widen`.
    fn widened(sources: &[String], budget: usize, framing: usize, widen: &Widen) -> Packing {
        pack(
            sources,
            &titled,
            budget,
            framing,
            Some(widen),
            false,
            &Counts::default(),
        )
    }

    /// The best item whole and every other left out: the room went to it.
    fn only_the_first_whole(p: &Packing) {
        assert_eq!(p.outcome[0], Packed::Whole);
        assert!(
            p.outcome[1..].iter().all(|o| *o == Packed::Omitted),
            "{:?}",
            p.outcome
        );
    }

    fn plain(_: usize, s: &str) -> String {
        format!("\n```\n{s}\n```\n")
    }

    /// Plain renderings, no framing bound, nothing to widen.
    fn plainly(sources: &[String], budget: usize) -> Packing {
        pack(
            sources,
            &plain,
            budget,
            usize::MAX,
            None,
            false,
            &Counts::default(),
        )
    }

    #[test]
    fn items_come_in_rank_order_each_whole_or_its_first_lines() {
        let sources = [src(3), src(60), src(2)];
        let p = plainly(&sources, 120);
        assert_eq!(
            p.outcome,
            [Packed::Whole, Packed::Truncated, Packed::Whole],
            "the big one shows its head and leaves room for the next"
        );
        assert!(p.sources[1].as_deref().unwrap().ends_with(CUT_MARKER));
        assert!(p.tokens <= 120, "{}", p.tokens);
        assert!(
            p.tokens >= 120 - 12,
            "what the share held back went to the cut item: {}",
            p.tokens
        );
        assert_eq!(p.tokens, count_tokens(&p.body));
    }

    #[test]
    fn a_cut_is_the_same_whatever_was_cut_before() {
        // Counts of a longer head, remembered from a larger room, serve
        // the smaller one as estimates: the cut itself is counted exactly.
        let source = format!("{}\n// only this test's source", src(300));
        let before = cut_to_fit(&source, 0, &plain, 90).unwrap();
        cut_to_fit(&source, 0, &plain, 2000).unwrap();
        let after = cut_to_fit(&source, 0, &plain, 90).unwrap();
        assert_eq!(before, after);
        assert!(after.2 <= 90 && after.2 > 90 - 12, "{}", after.2);
    }

    #[test]
    fn a_cut_goes_into_the_next_line_with_what_a_line_end_leaves() {
        // Long lines: a cut at a line's end leaves up to a line's tokens.
        let source: String = (0..40)
            .map(|i| format!("let value_{i} = compute(alpha_{i}, beta_{i}, gamma_{i}, delta_{i}, epsilon_{i});"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut partial = 0;
        for room in 60..140 {
            let (cut, text, t) = cut_to_fit(&source, 0, &plain, room).unwrap();
            assert!(t <= room, "{t} > {room}");
            assert_eq!(t, count_tokens(&text));
            assert!(cut.ends_with(CUT_MARKER));
            let Some(code) = cut.strip_suffix(CUT_IN_LINE) else {
                continue;
            };
            partial += 1;
            // Whole lines of the source, then the head of the next one.
            let (lines, head) = code.rsplit_once('\n').unwrap();
            assert!(source.starts_with(&format!("{lines}\n{head}")));
            let next = source[lines.len() + 1..].lines().next().unwrap();
            assert!(
                next.len() > head.len() && !head.trim().is_empty(),
                "{head:?}"
            );
            // Less than a cut at a line's end would have left.
            assert!(room - t < 2 * MIN_FILL, "{room}: {t}\n{text}");
        }
        assert!(partial > 40, "most rooms end inside a line: {partial}");
        // A minified line of 360 kB, of two-byte characters: only its head is
        // read, cut at a character boundary, and to fit.
        let long = format!("let first = 1;\n{}", "é=ü+ç;".repeat(40_000));
        let (cut, _, t) = cut_to_fit(&long, 0, &plain, 60).unwrap();
        assert!(t <= 60, "{t}");
        assert!(
            cut.ends_with(CUT_IN_LINE) && cut.len() < 60 * 32,
            "{}",
            cut.len()
        );
    }

    #[test]
    fn a_big_item_does_not_crowd_out_those_ranked_after_it() {
        let sources = [src(500), src(3), src(3), src(400)];
        let p = plainly(&sources, 300);
        assert_eq!(
            p.outcome[..3],
            [Packed::Truncated, Packed::Whole, Packed::Whole]
        );
        assert!(p.tokens <= 300 && p.tokens >= 300 - MIN_CUT, "{}", p.tokens);
    }

    #[test]
    fn nothing_ranked_lower_takes_the_place_of_an_item_that_did_not_fit() {
        // The third would fit whole in what is left; the second cannot show
        // a useful head there, and packing stops at it.
        let p = plainly(&[src(2), src(400), src(1)], 40);
        assert_eq!(p.outcome, [Packed::Whole, Packed::Omitted, Packed::Omitted]);
    }

    #[test]
    fn an_oversized_first_item_is_cut_and_says_so() {
        let p = plainly(&[src(500)], 80);
        assert_eq!(p.outcome, [Packed::Truncated]);
        assert!(p.body.contains(CUT_MARKER));
        assert!(p.tokens <= 80, "{}", p.tokens);
    }

    #[test]
    fn no_room_for_a_useful_cut_leaves_it_out() {
        let p = plainly(&[src(2), src(400)], 40);
        assert_eq!(p.outcome, [Packed::Whole, Packed::Omitted]);
    }

    #[test]
    fn past_the_framing_share_the_room_goes_to_code() {
        let frame = count_tokens(&titled(1, ""));
        let big = [src(500), src(500), src(500), src(500)];
        // Framing for two: two items, the room left going to the cut ones.
        let p = pack(
            &big,
            &titled,
            600,
            2 * frame + 1,
            None,
            false,
            &Counts::default(),
        );
        assert_eq!(
            p.outcome,
            [
                Packed::Truncated,
                Packed::Truncated,
                Packed::Omitted,
                Packed::Omitted
            ]
        );
        assert!(p.tokens >= 600 - 20, "{}", p.tokens);
        let unbounded = pack(
            &big,
            &titled,
            600,
            usize::MAX,
            None,
            false,
            &Counts::default(),
        );
        assert_eq!(
            unbounded.outcome[2],
            Packed::Truncated,
            "three shares without the bound"
        );
        // Past the bound, a cut item grows before another comes in, even
        // when the bound was reached by an item that is whole.
        let mixed = [src(2), src(500), src(2)];
        let p = pack(&mixed, &titled, 600, frame, None, false, &Counts::default());
        assert_eq!(
            p.outcome,
            [Packed::Whole, Packed::Truncated, Packed::Omitted]
        );
        assert!(p.tokens >= 600 - 20, "{}", p.tokens);
        // Small whole items leave room the cut ones cannot take: more items
        // come in past the bound rather than leaving it empty.
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        let p = pack(&small, &titled, 600, frame, None, false, &Counts::default());
        assert!(
            p.outcome.iter().all(|o| *o == Packed::Whole),
            "{:?}",
            p.outcome
        );
    }

    #[test]
    fn a_widened_quote_is_read_through_a_wider_window_while_it_fits_whole() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        // Deeply indented, blank-lined code: many more bytes a token than
        // a window of WIDEN_BYTES_PER_TOKEN a token holds.
        let tail: String = (0..400)
            .map(|i| format!("{}x{i}\n", " ".repeat(120)))
            .collect();
        let file: Vec<String> = small.iter().map(|s| format!("{s}\n{tail}")).collect();
        let windows = std::cell::RefCell::new(Vec::new());
        let widen = |i: usize, bytes: usize| {
            windows.borrow_mut().push(bytes);
            let f = &file[i];
            let end = f.len().min(bytes);
            let text = &f[..f[..end].rfind('\n').unwrap_or(end)];
            Some(text.trim_end().to_string())
        };
        let p = widened(&small, 600, frame, &widen);
        let shown = p.sources[0].as_deref().unwrap();
        let first = windows.borrow()[0];
        assert!(shown.len() > first, "{} <= {first}", shown.len());
        assert!(windows.borrow().iter().any(|w| *w == 2 * first));
        assert!(p.tokens <= 600 && p.tokens >= 600 - 20, "{}", p.tokens);
    }

    #[test]
    fn past_the_framing_share_whole_items_show_what_follows_them() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        // Each source followed by 300 more lines of its file.
        let around: Vec<String> = small.iter().map(|s| format!("{s}\n{}", src(300))).collect();
        let widen = |i: usize, _: usize| Some(around[i].clone());
        let p = widened(&small, 600, frame, &widen);
        // The best item, whole, grows into its file rather than a second
        // title coming in; what it shows starts with its own source.
        only_the_first_whole(&p);
        let shown = p.sources[0].as_deref().unwrap();
        assert!(shown.starts_with(&small[0]) && shown.len() > small[0].len());
        assert!(shown.ends_with(CUT_MARKER));
        assert!(p.tokens <= 600 && p.tokens >= 600 - 20, "{}", p.tokens);
        // Nothing follows: the next items come in, as without it.
        let none = |_: usize, _: usize| None;
        let p = pack(
            &small,
            &titled,
            600,
            frame,
            Some(&none),
            false,
            &Counts::default(),
        );
        assert!(p.outcome.iter().all(|o| *o == Packed::Whole));
        // Within the framing share nothing is widened.
        let p = pack(
            &small,
            &titled,
            600,
            usize::MAX,
            Some(&widen),
            false,
            &Counts::default(),
        );
        assert!(p.outcome.iter().all(|o| *o == Packed::Whole));
        assert_eq!(p.sources[0].as_deref(), Some(small[0].as_str()));
    }

    /// Surroundings with nothing after the quotes and `before[i]` before
    /// candidate `i`'s, starting at line `first`.
    struct Preceded<'a> {
        before: &'a [String],
        first: usize,
        continued: Option<usize>,
        inner: Vec<(usize, Option<usize>, usize)>,
    }

    impl Surroundings for Preceded<'_> {
        fn after(&self, _: usize, _: usize, _: &Reach) -> Option<Gap> {
            None
        }

        fn before(&self, i: usize, _: usize, _: &Reach) -> Option<Gap> {
            Some(Gap {
                first: self.first,
                text: self.before[i].clone(),
                inner: self.inner.clone(),
            })
        }

        fn continues(&self, i: usize) -> bool {
            self.continued == Some(i)
        }
    }

    #[test]
    fn a_whole_item_nothing_follows_shows_the_lines_before_it_rather_than_another_title() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        // 300 lines, then blank ones, before each source.
        let gap = format!("{}\n\n\n\n", src(300));
        let before = vec![gap.clone(); 8];
        let around = Preceded {
            before: &before,
            first: 10,
            continued: None,
            inner: Vec::new(),
        };
        let p = widened(&small, 600, frame, &around);
        only_the_first_whole(&p);
        // The quote says the line it starts at, then the gap's last lines
        // (the blank ones at their head dropped), then the source whole.
        let shown = p.sources[0].as_deref().unwrap();
        let (marker, rest) = shown.split_once('\n').unwrap();
        let from: usize = marker
            .strip_prefix(&format!("{} line ", crate::context::CONTINUED))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{marker:?}"));
        let quoted = rest
            .strip_suffix(small[0].as_str())
            .expect("the source whole");
        assert!(quoted.starts_with("line number ") && gap.ends_with(quoted));
        let skipped = gap[..gap.len() - quoted.len()].matches('\n').count();
        assert_eq!(from, 10 + skipped, "the number of its first line");
        assert!(!shown.ends_with(CUT_MARKER));
        assert!(p.tokens <= 600 && p.tokens >= 600 - 20, "{}", p.tokens);
        // A later piece of a file already quoted costs a line, not a title:
        // it comes in first, and what is left goes to the lines before.
        let around = Preceded {
            continued: Some(1),
            ..around
        };
        let p = widened(&small, 600, frame, &around);
        assert_eq!(p.outcome[..2], [Packed::Whole, Packed::Whole]);
        assert!(p.outcome[2..].iter().all(|o| *o == Packed::Omitted));
        let shown = p.sources[0].as_deref().unwrap();
        assert!(shown.starts_with(&format!("{} line ", crate::context::CONTINUED)));
        assert!(p.tokens <= 600 && p.tokens >= 600 - 20, "{}", p.tokens);
        // Only blank lines before it: nothing is added.
        let blank = vec!["\n\n\n".to_string(); 8];
        let around = Preceded {
            before: &blank,
            first: 1,
            continued: None,
            inner: Vec::new(),
        };
        let p = widened(&small, 600, frame, &around);
        assert_eq!(p.sources[0].as_deref(), Some(small[0].as_str()));
    }

    /// A lower-ranked candidate in the lines before a quote that they
    /// show whole is quoted there only; one they show in part is not
    /// quoted.
    #[test]
    fn a_candidate_in_the_lines_before_a_quote_is_shown_whole_there_once() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        // 40 lines before each source; candidate 5 is lines 30-34 of
        // them, candidate 6 lines 2-6.
        let gap = format!("{}\n", src(40));
        let before = vec![gap.clone(); 8];
        let around = Preceded {
            before: &before,
            first: 100,
            continued: None,
            inner: vec![(5, Some(30), 34), (6, Some(2), 6), (7, None, 0)],
        };
        // Room for the last 8 lines before (32-39): they show candidate
        // 5's last lines, so it is not quoted again, and listed as left
        // out.
        let last8: String = gap.split_inclusive('\n').skip(32).collect();
        let room = count_tokens(&titled(
            0,
            &format!(
                "{} line 132\n{last8}{}",
                crate::context::CONTINUED,
                small[0]
            ),
        ));
        let p = widened(&small, room, frame, &around);
        let shown = p.sources[0].as_deref().unwrap();
        let from: usize = shown
            .strip_prefix(&format!("{} line ", crate::context::CONTINUED))
            .and_then(|r| r.split('\n').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{shown}"));
        assert_eq!(from, 100 + 32, "{shown}");
        assert_eq!(p.inside[5], None);
        assert_eq!(p.outcome[5], Packed::Omitted);
        assert!(p.sources[5].is_none());
        // Room for every line before: both are shown, once, and count as
        // quoted where the quote is.
        let room = count_tokens(&titled(0, &format!("{gap}{}", small[0]))) + 20;
        let p = widened(&small, room, frame, &around);
        assert!(p.sources[0].as_deref().unwrap().contains(&src(40)));
        assert_eq!(p.inside[5], Some(0));
        assert_eq!(p.inside[6], Some(0));
        // One whose head is before the gap: its end is shown, not it.
        assert_eq!(p.inside[7], None);
        assert_eq!(p.outcome[7], Packed::Omitted);
        assert_eq!(p.outcome[5], Packed::Omitted);
        assert!(p.sources[5].is_none() && p.sources[6].is_none());
        assert!(p
            .inside
            .iter()
            .enumerate()
            .all(|(k, x)| x.is_none() || k == 5 || k == 6));
    }

    /// A candidate whose end only the lines before a quote show is never
    /// quoted after, though room is left for it (its head would come
    /// under its own title and its end again).
    #[test]
    fn a_candidate_shown_in_part_before_a_quote_is_not_quoted_again() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        let before = vec![format!("{}\n", src(10)); 8];
        let packed = |inner: Vec<(usize, Option<usize>, usize)>| {
            let around = Preceded {
                before: &before,
                first: 100,
                continued: None,
                inner,
            };
            widened(&small, 4000, frame, &around)
        };
        // Candidate 7 ends in the gap's first 4 lines and starts above it.
        let p = packed(vec![(7, None, 3)]);
        assert!(p.sources[0].as_deref().unwrap().contains(&src(10)));
        assert_eq!(p.outcome[..7], [Packed::Whole; 7], "{:?}", p.outcome);
        assert_eq!(p.outcome[7], Packed::Omitted);
        assert_eq!(p.inside[7], None);
        // Not in the gap: it comes in with the rest.
        let p = packed(Vec::new());
        assert_eq!(p.outcome, [Packed::Whole; 8], "{:?}", p.outcome);
    }

    /// Surroundings with `after` lines after candidate 0's quote only,
    /// holding `inner` candidates.
    struct Followed {
        after: String,
        inner: Vec<(usize, Option<usize>, usize)>,
    }

    impl Surroundings for Followed {
        fn after(&self, i: usize, _: usize, _: &Reach) -> Option<Gap> {
            (i == 0).then(|| Gap {
                first: 10,
                text: format!("{}\n{}", src(2), self.after),
                inner: self.inner.clone(),
            })
        }
    }

    /// A lower-ranked candidate in the lines after a quote is shown there
    /// whole and counted as shown; one whose head only is shown is not.
    #[test]
    fn a_candidate_in_the_lines_after_a_quote_is_shown_there_once() {
        let frame = count_tokens(&titled(1, ""));
        let small: Vec<String> = (0..8).map(|_| src(2)).collect();
        // Candidate 5 is lines 3-6 after the source's two, 6 lines 14-30.
        let around = Followed {
            after: src(40),
            inner: vec![(5, Some(5), 8), (6, Some(16), 32)],
        };
        // Room for about 20 lines: 5 whole, 6's head.
        let room = count_tokens(&titled(0, &src(22))) + 8;
        let p = widened(&small, room, frame, &around);
        assert_eq!(p.outcome[0], Packed::Whole, "{:?}", p.outcome);
        assert!(p.sources[0].as_deref().unwrap().ends_with(CUT_MARKER));
        assert_eq!(p.inside[5], Some(0));
        assert_eq!(p.inside[6], None);
        assert!(
            p.outcome[1..].iter().all(|o| *o == Packed::Omitted),
            "{:?}",
            p.outcome
        );
    }

    #[test]
    fn a_cut_counted_by_parts_counts_as_a_whole() {
        let titled = |i: usize, s: &str| format!("`item_{i}` a/b.py:{i}\n```python\n{s}\n```\n\n");
        // Blank lines, runs of them, CRLF, tabs, indentation, trailing
        // spaces, non-ASCII, punctuation ending lines: where cl100k's
        // pieces may or may not end at a newline.
        let sources = [
            "def f(x):\n    return x\n\n\n\n    # done\n\tpass\n".repeat(30),
            "    fn g() {\r\n        let a = 1;  \r\n\r\n    }\r\n".repeat(30),
            "class K:\n  \n    \"ünï — cödé\"\n    x = {\n}\n\n\n\n\n\n\n\ny = (1,\n)\n".repeat(20),
        ];
        let mut cuts = 0;
        for source in &sources {
            for room in (30..600).step_by(7) {
                if let Some((cut, text, t)) = cut_to_fit(source, 1, &titled, room) {
                    assert_eq!(t, count_tokens(&text), "{cut:?}");
                    assert!(t <= room);
                    cuts += 1;
                }
            }
        }
        assert!(cuts > 200, "{cuts} cuts");
    }

    #[test]
    fn a_cut_that_keeps_every_line_is_the_source_whole() {
        let titled = |i: usize, s: &str| format!("`item_{i}` a.py:{i}\n```\n{s}\n```\n\n");
        let source = src(5);
        let whole = count_tokens(&titled(0, &source));
        let (shown, _, t) = cut_to_fit(&source, 0, &titled, whole + 10).unwrap();
        assert_eq!(shown, source, "no cut marker on a source shown whole");
        assert_eq!(t, whole);
        let (shown, _, _) = cut_to_fit(&source, 0, &titled, whole - 3).unwrap();
        assert!(shown.ends_with(CUT_MARKER));
    }

    #[test]
    fn a_cut_is_the_longest_head_that_fits() {
        let source: String = (0..120)
            .map(|i| match i % 4 {
                0 => format!("    def method_{i}(self, value: int) -> str:"),
                1 => format!("        return f\"{{value}} × {i} — ünïcödé\""),
                2 => String::new(),
                _ => format!("\t# a comment about {i}    with  spaces"),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let titled =
            |_: usize, s: &str| format!("\n`Thing.method` a/b.py:1\n```python\n{s}\n```\n");
        let lines: Vec<&str> = source.split('\n').collect();
        for room in (60..600).step_by(23) {
            let (cut, text, t) = cut_to_fit(&source, 0, &titled, room).expect("room for a line");
            assert!(t <= room && t == count_tokens(&text), "{room}: {t}");
            let kept = cut.strip_suffix(CUT_MARKER).unwrap().split('\n').count();
            if kept < lines.len() {
                let longer = format!("{}{CUT_MARKER}", lines[..kept + 1].join("\n"));
                assert!(
                    count_tokens(&titled(0, &longer)) > room,
                    "{room}: one line more fits"
                );
            }
        }
    }

    #[test]
    fn counts_add_up_across_a_clean_seam() {
        let lefts = [
            "```\n\n",
            "def f():\n    return 1\n```\n\n",
            "> sno 0123456 (main) · 3 of 9 items · 290/300 tokens\n\n",
            "trailing spaces   \n",
            "tabs\t\n\n\n",
            "punctuation!!!\n",
            "12345\n",
            "ünïcödé\n\n",
            "\n",
            "",
        ];
        let rights = [
            "`Config.load` app/config.py:13\n```python\n",
            "> not included: `a` b.py:1\n",
            "### src/lib.rs\n- `f:1`\n\n",
            "'s contraction",
            "123 digits",
            "éclair",
            "!!! punctuation",
            "",
        ];
        for l in lefts {
            for r in rights {
                assert!(clean_seam(l, r));
                let whole = count_tokens(&format!("{l}{r}"));
                assert_eq!(whole, count_tokens(l) + count_tokens(r), "{l:?} + {r:?}");
            }
        }
        assert!(!clean_seam("x\n", "\nmore"));
        assert!(!clean_seam("x", "y"));
    }

    #[test]
    fn a_remembered_count_is_the_count() {
        let long: String = (0..200)
            .map(|i| format!("fn f{i}(x: u32) {{}}\n"))
            .collect();
        let direct = crate::cl100k::counter().encode_ordinary(&long).len();
        assert_eq!(count_tokens(&long), direct);
        assert_eq!(count_tokens(&long), direct, "from memory");
        // Another text is counted, not answered from memory.
        let other = format!("{long}{long}");
        let twice = crate::cl100k::counter().encode_ordinary(&other).len();
        assert_ne!(twice, direct);
        assert_eq!(count_tokens(&other), twice);
    }
}
