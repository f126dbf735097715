//! Building a context package: the ranked symbols' sources packed into a
//! token budget under the trust header. Shared by `sno search` and the MCP
//! server, so both answer alike.

use std::collections::BTreeSet;

use sno_journal::model::{FileRecord, FileState};
use sno_protocol::context::{
    AnswerFormat, Completeness, ContextItem, ContextPackage, FileItem, OmittedItem, ParseState,
    SignalScores, TrustHeader,
};
use sno_protocol::query::AsOfCommit;

use crate::block::{self, Block, Span};
use crate::pack::{count_tokens, pack, Packed, CUT_MARKER};
use crate::search::{FileHit, Hit, Loaded};

/// Whether a file (path, indexed record) differs in the work tree.
pub type EditedInWorkTree<'a> = dyn Fn(&str, &FileRecord) -> bool + 'a;

/// What a quote says when git no longer holds its file (a commit
/// garbage-collected after it was indexed): never an empty block that
/// passes for the source.
const UNAVAILABLE: &str =
    "(source unavailable: git no longer holds this file's object; it may have been garbage-collected)\n";

/// Everything a package is built from.
pub struct PackageInput<'a> {
    pub query: &'a str,
    /// The records of the ranked documents' files
    /// ([`crate::search::Retriever::load`]).
    pub loaded: &'a Loaded<'a>,
    pub hits: &'a [Hit],
    /// Ranked files instead of symbols (`files` answers).
    pub files: Option<&'a [FileHit<'a>]>,
    pub format: AnswerFormat,
    pub as_of: AsOfCommit,
    /// The repository's HEAD, when the index is not at it.
    pub head_differs: Option<String>,
    pub semantic_off_reason: Option<String>,
    pub scope: Option<&'a str>,
    pub max_tokens: usize,
    /// A file's text at the indexed commit, as served (secrets masked).
    pub read: &'a dyn Fn(&FileRecord) -> Option<crate::served::Served>,
    /// Whether a file differs in the work tree from its indexed version;
    /// `None` when the answer is not about the work tree's commit.
    pub edited: Option<&'a EditedInWorkTree<'a>>,
}

fn fence_lang(path: &str) -> &'static str {
    if let Some(l) = sno_journal::model::Language::from_path(path) {
        return l.name();
    }
    match path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("md" | "markdown") => "markdown",
        Some("yml" | "yaml") => "yaml",
        Some("toml") => "toml",
        Some("json") => "json",
        Some("rst") => "rst",
        _ => "",
    }
}

/// Rounds to 3 significant digits: what a score can honestly say.
pub fn round3(x: f32) -> f32 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f32.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

fn signals(h: &Hit) -> SignalScores {
    SignalScores {
        lexical: round3(h.signals.lexical),
        semantic: round3(h.signals.semantic),
        structural: round3(h.signals.structural),
        history: round3(h.signals.history),
        memory: round3(h.signals.memory),
    }
}

/// Builds the answer for ranked hits (or ranked files), within
/// `max_tokens` as a whole, header and metadata included, in the form asked.
pub fn build_package(input: &PackageInput) -> ContextPackage {
    let r = input.loaded;
    let files: BTreeSet<&str> = match input.files {
        Some(f) => f.iter().map(|f| f.path).collect(),
        None => input.hits.iter().map(|h| r.entry(h.doc).path).collect(),
    };
    // The parse state of the files an answer quotes: a file that did not
    // parse cleanly matters to the reader of its code, not when one of its
    // symbols ranked and was left out (a C++ answer's fifty candidates can
    // name thirty such headers, a hundred tokens of a 500-token answer).
    let parse_state_of = |files: &BTreeSet<&str>| ParseState {
        files: files.len(),
        clean: files
            .iter()
            .filter(|p| r.record(p).is_some_and(|f| f.state == FileState::Parsed))
            .count(),
        with_errors: files
            .iter()
            .filter(|p| {
                r.record(p)
                    .is_some_and(|f| f.state == FileState::ParsedWithErrors)
            })
            .map(|p| p.to_string())
            .collect(),
    };
    let edited_in_work_tree: Option<Vec<String>> = input.edited.map(|edited| {
        files
            .iter()
            .filter(|p| r.record(p).is_some_and(|f| edited(p, f)))
            .map(|p| p.to_string())
            .collect()
    });
    let match_type = if input.semantic_off_reason.is_none() {
        "hybrid"
    } else {
        "lexical+structural"
    }
    .to_string();
    let make_header = |completeness: Completeness, parse_state: ParseState| TrustHeader {
        as_of: input.as_of.clone(),
        head_differs: input.head_differs.clone(),
        past: input.edited.is_none(),
        edited_in_work_tree: edited_in_work_tree.clone(),
        match_type: match_type.clone(),
        semantic_off_reason: input.semantic_off_reason.clone(),
        completeness,
        parse_state,
        scope: input.scope.map(str::to_string),
    };
    let json = input.format == AnswerFormat::Json;
    let ranked = input.files.map(|f| f.len()).unwrap_or(input.hits.len());

    // What is quoted: in a markdown package of code, ranked spans of one
    // file that meet make one block; else each entry is its own.
    let code_answer = !json && input.files.is_none();
    let spans: Vec<Span> = input
        .hits
        .iter()
        .map(|h| {
            let e = r.entry(h.doc);
            Span {
                path: e.path,
                start: e.bytes.0,
                end: e.bytes.1,
                line: e.line,
                end_line: e.end_line,
            }
        })
        .collect();
    let served = |path: &str| r.record(path).and_then(input.read);
    let blocks: Vec<Block> = if code_answer {
        // Masking keeps a text's lines: its newlines are the file's.
        let newlines = |path: &str, from: usize, to: usize| {
            served(path).map_or(usize::MAX, |f| f.slice(from..to).matches('\n').count())
        };
        block::group(&spans, &newlines)
    } else {
        (0..ranked)
            .map(|i| Block {
                members: vec![i],
                start: spans.get(i).map_or(0, |s| s.start),
                end: spans.get(i).map_or(0, |s| s.end),
                line: spans.get(i).map_or(0, |s| s.line),
            })
            .collect()
    };
    // What each block shows: its span of the file, or a file's best
    // symbols.
    let sources: Vec<String> = match input.files {
        Some(fs) => fs
            .iter()
            .map(|f| {
                f.docs
                    .iter()
                    .take(FILE_SYMBOLS)
                    .map(|d| {
                        let e = r.entry(*d);
                        format!("{}:{}", e.name, e.line)
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect(),
        None => blocks
            .iter()
            .map(|b| {
                let path = spans[b.members[0]].path;
                let text = served(path)
                    .map(|file| file.slice(file.line_start(b.start)..b.end))
                    .unwrap_or_else(|| UNAVAILABLE.to_string());
                // A quote stopped where another block starts ends on
                // that block's indentation.
                let stopped = blocks
                    .iter()
                    .any(|o| o.start == b.end && spans[o.members[0]].path == path);
                if stopped {
                    text.trim_end().to_string()
                } else {
                    text
                }
            })
            .collect(),
    };
    // A file's later blocks continue its first one's fence under a line
    // saying where they start (`⋮ line n`) rather than opening a
    // title and fence of their own: a file's pieces read together, and
    // the second piece of a file costs a line, not a title and a fence.
    // Packing takes a prefix of the blocks in rank order, so a later block
    // is only ever quoted with its file's first; the body is put back in
    // file order once packed ([`by_file`]).
    let paths: Vec<&str> = if code_answer {
        blocks.iter().map(|b| spans[b.members[0]].path).collect()
    } else {
        Vec::new()
    };
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let continues: Vec<bool> = paths.iter().map(|p| !seen.insert(p)).collect();
    // One fence a file, longer than any backtick run in the whole file:
    // packing may widen a quote past its block (the lines before or after
    // it), and a fence made for the block alone was closed early by a
    // fence in the lines it gained.
    let mut fences: rustc_hash::FxHashMap<&str, String> = Default::default();
    for (path, source) in paths.iter().zip(&sources) {
        fences.entry(path).or_insert_with(|| match served(path) {
            Some(file) => fence_over(file.longest_backtick_run()),
            None => fence_for(source),
        });
    }
    let item = |i: usize, src: Option<&str>| {
        let h = &input.hits[i];
        let e = r.entry(h.doc);
        ContextItem {
            rank: i + 1,
            qualified_name: e.name.to_string(),
            kind: e.kind.to_string(),
            path: e.path.to_string(),
            line: e.line,
            end_line: e.end_line,
            score: round3(h.signals.total()),
            signals: signals(h),
            truncated: src.is_some_and(|s| s.ends_with(CUT_MARKER)),
            source: src.map(str::to_string),
        }
    };
    let file_item = |i: usize, src: &str| {
        let f = &input.files.expect("files")[i];
        FileItem {
            rank: i + 1,
            path: f.path.to_string(),
            score: round3(f.score),
            symbols: src
                .lines()
                .filter(|l| !l.starts_with('…') && !l.is_empty())
                .map(str::to_string)
                .collect(),
        }
    };
    // A quoted file that did not parse cleanly says so in its title, where
    // its code is read (the JSON form's header lists them).
    let broken = |path: &str| -> &'static str {
        if r.record(path)
            .is_some_and(|f| f.state == FileState::ParsedWithErrors)
        {
            SYNTAX_ERRORS
        } else {
            ""
        }
    };
    let render = |i: usize, src: &str| -> String {
        match (input.files.is_some(), json) {
            (false, false) => {
                let b = &blocks[i];
                let e = r.entry(input.hits[b.members[0]].doc);
                // A file's later piece says only where it starts: its
                // members' declarations are its code's own lines, and the
                // file and what holds them were said by the first piece.
                if continues[i] {
                    return format!("{CONTINUED} line {}\n{src}\n", b.line);
                }
                // Overloads (a Python `@overload`, a TypeScript signature)
                // share a name: it is said once.
                let mut names: Vec<String> = Vec::new();
                for m in block::titled(b, &spans, src) {
                    let name = code_span(r.entry(input.hits[m].doc).name);
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                // The title names the best of them and counts the rest:
                // their declarations are the code's own lines, and a list
                // of qualified names (forty tokens for five methods of a
                // Java class) is code a small budget does not show.
                let title = match names.len() {
                    0 | 1 => names.concat(),
                    n => format!("{} (+{} more)", names[0], n - 1),
                };
                // A type named as its file (`Parser` in `Parser.java`)
                // is said by the path: the name would be said twice.
                let title = if names.len() == 1 && names_its_file(&title, e.path) {
                    String::new()
                } else {
                    title + " "
                };
                let fence = &fences[e.path];
                // The kind is the JSON form's: the code's first line
                // says it, and the fence's language says doc from code.
                // A block starts with its title (the best name it quotes
                // and where it starts) and ends with a blank line:
                // blocks meet at clean seams, so their counts add up.
                format!(
                    "{title}{}:{}{}\n{fence}{}\n{}\n{fence}\n\n",
                    e.path,
                    e.line,
                    broken(e.path),
                    fence_lang(e.path),
                    src
                )
            }
            (false, true) => sno_protocol::to_wire(&item(i, Some(src))) + ",",
            (true, false) => {
                let f = &input.files.expect("files")[i];
                let mut out = format!("### {}{}\n", f.path, broken(f.path));
                for line in src.lines() {
                    out.push_str(&format!("- `{line}`\n"));
                }
                out.push('\n');
                out
            }
            (true, true) => sno_protocol::to_wire(&file_item(i, src)) + ",",
        }
    };
    let omitted_entry = |i: usize| -> OmittedItem {
        match input.files {
            Some(fs) => OmittedItem {
                rank: i + 1,
                qualified_name: String::new(),
                path: fs[i].path.to_string(),
                line: 0,
            },
            None => {
                let e = r.entry(input.hits[i].doc);
                OmittedItem {
                    rank: i + 1,
                    qualified_name: e.name.to_string(),
                    path: e.path.to_string(),
                    line: e.line,
                }
            }
        }
    };
    let omitted_text = |o: &OmittedItem| -> String {
        if json {
            sno_protocol::to_wire(o) + ","
        } else if o.qualified_name.is_empty() {
            o.path.clone()
        } else {
            format!("{} {}:{}", code_span(&o.qualified_name), o.path, o.line)
        }
    };

    // Room: the header at its longest, what lists the items left out (at
    // most a twentieth of the budget), and the rest for the entries. (The
    // files quoted are some of the candidates' files.)
    let every_file = parse_state_of(&files);
    let header_of = |status: &str| {
        make_header(
            Completeness {
                status: status.into(),
                included: ranked,
                omitted: ranked,
                truncated: ranked,
                tokens: input.max_tokens,
                max_tokens: input.max_tokens,
            },
            every_file.clone(),
        )
    };
    // The longest header this answer could get.
    let worst = ["full", "budget_limited", "truncated"]
        .into_iter()
        .map(header_of)
        .max_by_key(|h| {
            if json {
                count_tokens(&sno_protocol::to_wire(h))
            } else {
                count_tokens(&render_header(h))
            }
        })
        .expect("three statuses");
    let framing = if json {
        count_tokens(&sno_protocol::to_wire(&ContextPackage {
            query: echoed(input.query),
            header: worst.clone(),
            items: Vec::new(),
            files: Vec::new(),
            omitted: Vec::new(),
            more: ranked,
            package: String::new(),
        })) + 12
    } else {
        count_tokens(&render_header(&worst)) + count_tokens(OMITTED_LEAD) + 8
    };
    let all_omitted: String = (0..ranked)
        .map(|i| omitted_text(&omitted_entry(i)))
        .collect();
    // A markdown answer of code lists the items left out in at most a
    // fortieth of its budget: room the code does not take goes back to
    // the code, not to more names.
    let names_room = if code_answer {
        input.max_tokens / 40
    } else {
        input.max_tokens / 20
    };
    let reserve = names_room.min(count_tokens(&all_omitted));
    let mut budget = input.max_tokens.saturating_sub(framing + reserve);
    // A package is mostly code: what frames its items (titles, fences)
    // takes at most what the header and the list of items left out leave
    // of an eighth of the budget; past that, items get longer rather than
    // more numerous. The structured form and file answers are metadata by
    // design.
    let item_framing = if code_answer {
        (input.max_tokens / CODE_SHARE).saturating_sub(framing + reserve)
    } else {
        usize::MAX
    };
    // Past the framing share, a block is quoted with the lines that follow
    // it in its file, up to where the next quote of that file starts
    // (never quoting a ranked item under another's title) and at most the
    // bytes asked. A block not yet quoted there (ranked lower) is shown
    // whole or in part; packing does not quote it again.
    let widen = |k: usize, bytes: usize, quoted: &crate::pack::Reach| -> Option<crate::pack::Gap> {
        let b = &blocks[k];
        let path = spans[b.members[0]].path;
        let file = served(path)?;
        let later = || {
            blocks.iter().enumerate().filter(|(j, o)| {
                *j != k
                    && o.start >= b.end
                    && o.start != b.start
                    && spans[o.members[0]].path == path
            })
        };
        let next = later()
            .filter(|(j, _)| *j < quoted.below)
            .map(|(j, o)| match quoted.from[j] {
                Some(line) => file.line_offset(line),
                None => file.line_start(o.start),
            })
            .min()
            .unwrap_or(file.len());
        let top = file.line_start(b.start);
        let end = next.min(top.saturating_add(bytes));
        if end <= b.end {
            return None;
        }
        let mut text = file.slice(top..end);
        // A quote ends at a line's end.
        if end < file.len() {
            let nl = text.rfind('\n')?;
            text.truncate(nl);
        }
        let text = text.trim_end();
        if text.len() <= sources[k].trim_end().len() {
            return None;
        }
        let line_in = |at: usize| file.newlines(top..at);
        let inner = later()
            .filter(|(j, o)| *j >= quoted.below && o.start < end)
            .map(|(j, o)| (j, Some(line_in(o.start)), line_in(o.end)))
            .collect();
        Some(crate::pack::Gap {
            first: b.line as usize,
            text: text.to_string(),
            inner,
        })
    };
    // And with the lines before it, back to where the file starts or a
    // quote of it ends. A block not yet quoted (ranked lower) may be shown
    // there whole or in part: packing then does not quote it again.
    let before =
        |k: usize, bytes: usize, quoted: &crate::pack::Reach| -> Option<crate::pack::Gap> {
            let b = &blocks[k];
            let path = spans[b.members[0]].path;
            let file = served(path)?;
            let start = file.line_start(b.start);
            let others = || {
                blocks.iter().enumerate().filter(|(j, o)| {
                    *j != k && o.start < b.start && spans[o.members[0]].path == path
                })
            };
            // Quotes, and a block holding this one's start, bound it.
            let floor = others()
                .filter(|(j, o)| *j < quoted.below || o.end > start)
                .map(|(j, o)| match quoted.to[j] {
                    Some(line) if j < quoted.below => file.line_offset(line + 1),
                    _ => o.end,
                })
                .map(|end| end.min(start))
                .max()
                .unwrap_or(0);
            let from = start.saturating_sub(bytes).max(floor);
            if from >= start {
                return None;
            }
            // Whole lines: a line the bound falls inside is left out.
            let top = if file.line_start(from) == from {
                from
            } else {
                file.next_line(from).filter(|t| *t <= start)?
            };
            let gap = file.slice(top..start);
            if gap.trim().is_empty() {
                return None;
            }
            let first = (b.line as usize).checked_sub(file.newlines(top..start))?;
            let line_in_gap = |at: usize| file.newlines(top..at);
            let inner = others()
                .filter(|(j, o)| *j >= quoted.below && o.end > top && o.end <= start)
                .map(|(j, o)| {
                    let head = (o.start >= top).then(|| line_in_gap(o.start));
                    (j, head, line_in_gap(o.end))
                })
                .collect();
            Some(crate::pack::Gap {
                first,
                text: gap,
                inner,
            })
        };
    let around = Around {
        after: widen,
        before,
        continues: &continues,
    };
    // The header and the list were estimated at their longest: once, what
    // that left unused is given back to the code and the package redone.
    let mut regrown = !code_answer;
    // Room taken from the code to name items left out that rank above an
    // included one: the list may use it beyond its share.
    let mut taken_for_names = 0usize;
    let counts = crate::pack::Counts::default();
    loop {
        let mut packing = pack(
            &sources,
            &render,
            budget,
            item_framing,
            code_answer.then_some(&around as &crate::pack::Widen),
            !json,
            &counts,
        );
        if code_answer {
            packing.body = by_file(&packing.rendered, &paths);
        }
        // Each entry's outcome, from its block's: a member past a block's
        // cut is left out, one the cut reaches into is truncated.
        // (Entries of their own blocks have their blocks' outcomes.)
        let outcome = if code_answer {
            let mut outcome = vec![Packed::Omitted; ranked];
            for (k, b) in blocks.iter().enumerate() {
                // Shown whole in the lines around another block's quote.
                if packing.inside[k].is_some() {
                    for &m in &b.members {
                        outcome[m] = Packed::Whole;
                    }
                    continue;
                }
                let quoted = packing.sources[k].as_deref().unwrap_or_default();
                for m in block::shown(b, &spans, quoted) {
                    outcome[m] = match packing.outcome[k] {
                        Packed::Truncated if !block::whole_in(b, &spans[m], quoted) => {
                            Packed::Truncated
                        }
                        Packed::Omitted => Packed::Omitted,
                        _ => Packed::Whole,
                    };
                }
            }
            outcome
        } else {
            packing.outcome.clone()
        };
        let included: Vec<usize> = (0..ranked)
            .filter(|i| outcome[*i] != Packed::Omitted)
            .collect();
        let truncated = outcome.iter().filter(|o| **o == Packed::Truncated).count();
        let left_out: Vec<usize> = (0..ranked)
            .filter(|i| outcome[*i] == Packed::Omitted)
            .collect();
        let status = if truncated > 0 {
            "truncated"
        } else if !left_out.is_empty() {
            "budget_limited"
        } else {
            "full"
        };
        let quoted: BTreeSet<&str> = included
            .iter()
            .map(|&i| match input.files {
                Some(fs) => fs[i].path,
                None => r.entry(input.hits[i].doc).path,
            })
            .collect();
        let header = make_header(
            Completeness {
                status: status.into(),
                included: included.len(),
                omitted: left_out.len(),
                truncated,
                tokens: 0,
                max_tokens: input.max_tokens,
            },
            parse_state_of(&quoted),
        );
        let mut pkg = ContextPackage {
            query: echoed(input.query),
            header,
            items: Vec::new(),
            files: Vec::new(),
            omitted: Vec::new(),
            more: left_out.len(),
            package: String::new(),
        };
        if json {
            for &i in &included {
                let src = packing.sources[i].as_deref().unwrap_or_default();
                match input.files {
                    Some(_) => pkg.files.push(file_item(i, src)),
                    None => pkg.items.push(item(i, Some(src))),
                }
            }
        }
        let finish = |pkg: &mut ContextPackage| -> usize {
            // The header counts what was left out; the line names what
            // it has room for (a line only counting them would say what
            // the header says, in tokens taken from the code).
            let listed: Vec<String> = pkg.omitted.iter().map(omitted_text).collect();
            let omitted_line = match (listed.is_empty(), pkg.more) {
                (true, _) => String::new(),
                (false, 0) => format!("{OMITTED_LEAD} {}\n", listed.join(" · ")),
                (false, n) => format!("{OMITTED_LEAD} {} · and {n} more\n", listed.join(" · ")),
            };
            // The header states the answer's own token count, which
            // depends on the header: settle it. The answer is counted as
            // the text before that number and the text after it (the
            // same each time, while counting is most of an answer's cost),
            // when cl100k splits there too; else whole, again each time.
            // A markdown answer is its header, the packed body and the
            // line of items left out, meeting at clean seams: the body's
            // count is the packing's, and only the rest is counted here.
            pkg.header.completeness.tokens = usize::MAX;
            let (text, counted) = if json {
                (sno_protocol::to_wire(pkg), 0)
            } else {
                debug_assert!(crate::pack::clean_seam(&packing.body, &omitted_line));
                (
                    render_header(&pkg.header),
                    packing.tokens + count_tokens(&omitted_line),
                )
            };
            let split = split_at_count(&text);
            let around =
                split.map(|(before, after)| count_tokens(before) + count_tokens(after) + counted);
            let render = |pkg: &mut ContextPackage, total: usize| {
                pkg.header.completeness.tokens = total;
                if !json {
                    pkg.package = match split {
                        Some((before, after)) => {
                            format!("{before}{total}{after}{}{omitted_line}", packing.body)
                        }
                        None => format!(
                            "{}{}{omitted_line}",
                            render_header(&pkg.header),
                            packing.body
                        ),
                    };
                }
            };
            let total = crate::pack::settled_count(|total| match around {
                Some(around) => around + count_tokens(&total.to_string()),
                None => {
                    render(pkg, total);
                    measure(pkg, json)
                }
            });
            render(pkg, total);
            total
        };
        // The items left out, listed while the answer stays in budget.
        let mut total = finish(&mut pkg);
        let mut room = input.max_tokens.saturating_sub(total);
        // The room held for naming items left out is kept only when the
        // first of them can be named in it.
        let naming = left_out
            .first()
            .map(|&i| count_tokens(&omitted_text(&omitted_entry(i))) + 2)
            .filter(|t| *t <= reserve)
            .map_or(0, |_| reserve);
        let unused = room.saturating_sub(naming + REGROWN_SLACK);
        if !regrown && !left_out.is_empty() && unused > SLACK {
            regrown = true;
            budget += unused;
            continue;
        }
        if code_answer {
            room = room.min(reserve + taken_for_names);
        }
        for &i in &left_out {
            let o = omitted_entry(i);
            let t = count_tokens(&omitted_text(&o)) + 2;
            if t > room {
                break;
            }
            room -= t;
            pkg.omitted.push(o);
            pkg.more -= 1;
        }
        if !pkg.omitted.is_empty() {
            total = finish(&mut pkg);
            while total > input.max_tokens && pkg.omitted.pop().is_some() {
                pkg.more += 1;
                total = finish(&mut pkg);
            }
        }
        if !json {
            // Markdown readers get the items in the structured fields too
            // (without their source, which the package holds).
            match input.files {
                None => pkg.items = included.iter().map(|&i| item(i, None)).collect(),
                Some(_) => {
                    pkg.files = included
                        .iter()
                        .map(|&i| file_item(i, packing.sources[i].as_deref().unwrap_or_default()))
                        .collect()
                }
            }
        }
        // No better-ranked item is skipped in silence: every item left out
        // that ranks above an included one is listed, so the order an
        // agent sees is the ranking's whatever the limit (at `--limit 50`,
        // small low-ranked items fill what a big high-ranked one left).
        let listed = pkg.omitted.len();
        // (A block's place is its best entry's: those it absorbed are
        // there for being next to it. A block shown in the lines around
        // another's quote is there for the same reason: its packing
        // outcome is `Omitted`, so it does not raise the place.)
        let highest_included = blocks
            .iter()
            .enumerate()
            .filter(|(k, _)| packing.outcome[*k] != Packed::Omitted)
            .map(|(_, b)| b.members[0])
            .max()
            .unwrap_or(0);
        let unlisted_above: usize = left_out
            .iter()
            .skip(listed)
            .filter(|&&i| i < highest_included)
            .map(|&i| count_tokens(&omitted_text(&omitted_entry(i))) + 2)
            .sum();
        if total <= input.max_tokens && (unlisted_above == 0 || budget == 0) {
            return pkg;
        }
        if total <= input.max_tokens {
            // Room for listing them, taken from the items.
            let take = unlisted_above.max(8).min(budget);
            budget -= take;
            taken_for_names += take;
            continue;
        }
        if budget == 0 {
            return pkg;
        }
        // Seams merged or split differently than counted: a little less.
        budget = budget.saturating_sub((total - input.max_tokens).max(8));
    }
}

/// What follows and what precedes a package's quotes in their files.
struct Around<'c, A, B> {
    after: A,
    before: B,
    /// By block: a later piece of a file an earlier block quotes.
    continues: &'c [bool],
}

impl<A, B> crate::pack::Surroundings for Around<'_, A, B>
where
    A: Fn(usize, usize, &crate::pack::Reach) -> Option<crate::pack::Gap>,
    B: Fn(usize, usize, &crate::pack::Reach) -> Option<crate::pack::Gap>,
{
    fn after(
        &self,
        i: usize,
        bytes: usize,
        quoted: &crate::pack::Reach,
    ) -> Option<crate::pack::Gap> {
        (self.after)(i, bytes, quoted)
    }

    fn before(
        &self,
        i: usize,
        bytes: usize,
        quoted: &crate::pack::Reach,
    ) -> Option<crate::pack::Gap> {
        (self.before)(i, bytes, quoted)
    }

    fn continues(&self, i: usize) -> bool {
        self.continues.get(i).copied().unwrap_or(false)
    }
}

/// `text` as a markdown code span: in single backticks, or, when it has
/// backticks of its own (a doc section's heading), in a longer run with
/// spaces inside, as CommonMark reads it.
fn code_span(text: &str) -> String {
    let longest = longest_backtick_run(text);
    if longest == 0 {
        return format!("`{text}`");
    }
    let ticks = "`".repeat(longest + 1);
    format!("{ticks} {text} {ticks}")
}

/// Whether a title's one name (a code span) is the name of the file it
/// is in, without the extension: `` `Parser` `` in `src/Parser.java`.
fn names_its_file(title: &str, path: &str) -> bool {
    let name = title.trim_matches('`');
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    !name.is_empty() && !name.contains(['`', ' ']) && name == stem
}

/// What ends the title of a quoted file with syntax errors.
const SYNTAX_ERRORS: &str = " (syntax errors)";

/// What opens the line of a file's later piece inside its fence.
pub const CONTINUED: &str = "⋮";

/// A packed markdown body in file order: each file's first block with its
/// later ones inside its fence, files in the order of their best blocks.
/// `rendered` is each block's packed rendering, `paths` its file. The
/// pieces meet at clean seams (a line's end, then `⋮` or a fence), so the
/// body counts what its pieces counted.
fn by_file(rendered: &[Option<String>], paths: &[&str]) -> String {
    // Per file: its first block's text up to its closing fence, the later
    // blocks, the closing fence.
    let mut files: Vec<(&str, String, &str)> = Vec::new();
    for (text, path) in rendered.iter().zip(paths) {
        let Some(text) = text else { continue };
        match files.iter_mut().find(|(p, _, _)| p == path) {
            Some((_, head, _)) => head.push_str(text),
            None => {
                debug_assert!(!text.starts_with(CONTINUED), "a file's first block");
                // The closing fence is the text's last line, then a blank
                // one.
                let end = text
                    .trim_end_matches('\n')
                    .rfind('\n')
                    .map_or(text.len(), |at| at + 1);
                let (head, close) = text.split_at(end);
                files.push((path, head.to_string(), close));
            }
        }
    }
    files
        .into_iter()
        .map(|(_, head, close)| head + close)
        .collect()
}

/// `text` around the one place the stated count ([`usize::MAX`] for now)
/// stands, when cl100k's pre-tokenizer splits there whatever the number:
/// the text before ends in a lone space or a punctuation mark and the text
/// after does not start with a digit, so the number is pieces of its own
/// (digits go in threes from the left, alone as within).
fn split_at_count(text: &str) -> Option<(&str, &str)> {
    let mark = usize::MAX.to_string();
    let (before, after) = text.split_once(&mark)?;
    let mut tail = before.chars().rev();
    let clean_before = match (tail.next(), tail.next()) {
        (Some(' '), Some(c)) => !c.is_whitespace(),
        (Some(c), _) => !c.is_alphanumeric() && !c.is_whitespace(),
        _ => false,
    };
    let clean_after = !after.starts_with(|c: char| c.is_numeric()) && !after.contains(&mark);
    (clean_before && clean_after).then_some((before, after))
}

/// The tokens of the answer as it is sent: the markdown, or the JSON.
fn measure(pkg: &ContextPackage, json: bool) -> usize {
    if json {
        count_tokens(&sno_protocol::to_wire(pkg))
    } else {
        count_tokens(&pkg.package)
    }
}

/// The query as the answer repeats it: the caller has it, so a long one
/// (a pasted commit message) is cut rather than spending the budget.
fn echoed(query: &str) -> String {
    const MAX: usize = 160;
    match query.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &query[..at]),
        None => query.to_string(),
    }
}

/// Symbols listed per file in a `files` answer.
const FILE_SYMBOLS: usize = 3;

/// What opens the list of items left out of a markdown package.
const OMITTED_LEAD: &str = "> not included:";

/// A markdown package's framing (header, titles, fences, the list of items
/// left out) takes at most `1/CODE_SHARE` of its budget when more
/// candidates exist than fit, so that it is mostly code.
const CODE_SHARE: usize = 8;

/// Unused tokens of a first packing worth a second one.
const SLACK: usize = 6;

/// What a second packing leaves unused of the first one's room: a token,
/// for a count that settles a digit longer. (A second packing over the
/// budget is packed again with less, so this is room, not safety; at 300
/// tokens each one is a third of a percent of code.)
const REGROWN_SLACK: usize = 1;

/// A code fence longer than any run of backticks in `src` (CommonMark: a
/// fence closes only on one at least as long), so a quoted markdown file
/// with its own fences stays one block.
fn fence_for(src: &str) -> String {
    fence_over(longest_backtick_run(src))
}

/// A code fence longer than a run of `run` backticks (and than three).
fn fence_over(run: usize) -> String {
    "`".repeat(run.max(2) + 1)
}

/// The longest run of backticks in `text` (0 without any).
fn longest_backtick_run(text: &str) -> usize {
    longest_backtick_run_in(text.as_bytes())
}

/// [`longest_backtick_run`] of bytes, found by `memchr`: a fence is made
/// for a whole quoted file, and a scan a character at a time was 6% of a
/// warm search's time on 600k lines.
pub(crate) fn longest_backtick_run_in(bytes: &[u8]) -> usize {
    let mut longest = 0;
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'`', &bytes[at..]) {
        let start = at + i;
        let run = bytes[start..].iter().take_while(|&&b| b == b'`').count();
        longest = longest.max(run);
        at = start + run;
    }
    longest
}

/// What the markdown header says of why the semantic signal is off: the
/// reason's start, which names the model and what failed (a network
/// error's details run long). The JSON form and `sno status` give it whole.
const OFF_REASON_CHARS: usize = 72;

/// `text` cut at a word boundary to at most `max` characters, `…` saying
/// it was.
fn brief(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((at, _)) => {
            let head = &text[..at];
            let head = head.rfind(' ').map_or(head, |sp| &head[..sp]);
            format!("{}…", head.trim_end_matches([',', ':', ';', '('])).into()
        }
    }
}

/// The trust header as markdown: one line (two when files changed on
/// disk), every word of it worth its tokens, as the budget pays for it.
/// `> sno <commit> (<branch>) · <completeness> · <n>/<max> tokens`, with
/// the state when it is not the repository's HEAD, the match type when a
/// signal is off, and the scope when there is one. (A quoted file with
/// syntax errors says so in its own title: the header would repeat its
/// path.)
pub fn render_header(h: &TrustHeader) -> String {
    let c = &h.completeness;
    // Seven digits name a commit as `git log --oneline` does; the JSON
    // form has it whole.
    let mut s = format!(
        "> sno {}{}",
        &h.as_of.commit[..7.min(h.as_of.commit.len())],
        h.as_of
            .branch
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default()
    );
    match &h.head_differs {
        _ if h.past => s.push_str(" · a past commit, as asked"),
        Some(head) => s.push_str(&format!(
            " · **index is not at HEAD** ({}): run `sno init`",
            &head[..7.min(head.len())]
        )),
        // At HEAD goes unsaid, as the usual case does below: the two
        // other states say themselves.
        None => {}
    }
    // The usual case goes unsaid (the JSON form states it): a mode is
    // named when a signal is off, the parse state when a file did not
    // parse. At 300 tokens each word is a line of code less.
    if h.match_type != "hybrid" {
        s.push_str(&format!(" · {}", h.match_type));
    }
    if let Some(r) = &h.semantic_off_reason {
        s.push_str(&format!(" (semantic off: {})", brief(r, OFF_REASON_CHARS)));
    }
    // Which items were cut, each says itself (`… [cut]` ends its code);
    // the JSON form counts them and names the status. Here the count of
    // what is shown says whether anything was left out, and an answer
    // that left nothing out but cut an item says that.
    let what = match c.status.as_str() {
        "full" => format!("full: {} item(s)", c.included),
        "truncated" if c.omitted == 0 => format!("{} item(s), {} cut", c.included, c.truncated),
        _ => format!("{} of {} items", c.included, c.included + c.omitted),
    };
    s.push_str(&format!(" · {what} · {}/{} tokens", c.tokens, c.max_tokens));
    if let Some(x) = &h.scope {
        s.push_str(&format!(" · under `{x}`"));
    }
    s.push('\n');
    if let Some(edited) = h.edited_in_work_tree.as_ref().filter(|e| !e.is_empty()) {
        let files: Vec<String> = edited.iter().map(|p| format!("`{p}`")).collect();
        s.push_str(&format!(
            "> **changed on disk since the indexed commit**: {} (the source and lines below are the committed ones; read those files for their current text)\n",
            files.join(", ")
        ));
    }
    // A blank line ends the quote (a line right after it would continue
    // it), and meets the first block at a clean seam.
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_fence_does_not_close_the_block() {
        assert_eq!(fence_for("def f():\n    return 1"), "```");
        let doc = "## Usage\n\n```python\nrun()\n```\n\nmore text";
        let fence = fence_for(doc);
        assert_eq!(fence, "````");
        // CommonMark closes a block on a fence at least as long as the
        // opening one: no line of the quoted source does.
        assert!(doc.lines().all(|l| !l.trim_start().starts_with(&fence)));
        assert_eq!(fence_for("a ````` b"), "``````");
    }

    #[test]
    fn the_longest_backtick_run_is_found_anywhere() {
        for (text, want) in [
            ("", 0),
            ("no ticks", 0),
            ("`", 1),
            ("a `b` c", 1),
            ("```sh\nx\n```", 3),
            ("`` then ````` then `", 5),
            ("ends with ````", 4),
            ("é`ü``ß", 2),
        ] {
            assert_eq!(longest_backtick_run(text), want, "{text:?}");
            assert_eq!(
                text.split(|c| c != '`').map(str::len).max().unwrap_or(0),
                want,
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_name_with_backticks_stays_one_code_span() {
        assert_eq!(code_span("Config.load"), "`Config.load`");
        assert_eq!(
            code_span("`UnicodeEncodeError` on Windows"),
            "`` `UnicodeEncodeError` on Windows ``"
        );
    }

    #[test]
    fn a_long_reason_is_cut_at_a_word_and_says_so() {
        let r = "embedding model `minishlab/potion-base-8M`: could not load 'minishlab/potion-base-8M' from HuggingFace Hub (failed to lookup address information)";
        let b = brief(r, OFF_REASON_CHARS);
        assert!(
            b.ends_with('…') && b.chars().count() <= OFF_REASON_CHARS + 1,
            "{b}"
        );
        assert!(r.starts_with(b.trim_end_matches('…')), "{b}");
        assert!(b.contains("could not load"), "{b}");
        assert_eq!(brief("--lexical-only", OFF_REASON_CHARS), "--lexical-only");
    }

    /// Counted around the number, a text counts as it does whole, for
    /// every number; where that cannot be vouched for, there is no split.
    #[test]
    fn an_answer_counted_around_its_stated_count_counts_as_the_whole() {
        let mark = usize::MAX.to_string();
        let texts = [
            format!("> sno 0123456 (main) · 4 of 10 items · {mark}/500 tokens\n\n`f` a.py:1\n"),
            format!("> sno 0123456 (main) · 3 item(s), 1 cut · {mark}/500 tokens\n\n`f` a.py:1 (syntax errors)\n"),
            format!("> sno 0123456 (main) · lexical+structural · 1 of 9 items · {mark}/300 tokens · under `src`\n\n`f` a.py:1\n"),
            format!("{{\"query\":\"x\",\"header\":{{\"completeness\":{{\"tokens\":{mark},\"max_tokens\":2000}}}},\"items\":[]}}"),
        ];
        for text in &texts {
            let (before, after) = split_at_count(text).expect("a clean split");
            for n in [0usize, 7, 99, 485, 1000, 1978, 12345] {
                let whole = text.replacen(&mark, &n.to_string(), 1);
                assert_eq!(
                    count_tokens(before) + count_tokens(&n.to_string()) + count_tokens(after),
                    count_tokens(&whole),
                    "{whole}"
                );
            }
        }
        // The number twice (a query quoting it), or glued to a word or a
        // digit, or after a run of spaces: counted whole instead.
        for bad in [
            format!("{mark} of {mark}"),
            format!("x{mark} of"),
            format!("7{mark} of"),
            format!("tokens:  {mark} of"),
            format!(", {mark}5 of"),
        ] {
            assert_eq!(split_at_count(&bad), None, "{bad}");
        }
    }
}
