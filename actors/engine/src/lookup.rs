//! Code intelligence: symbols by name, a file's outline, a symbol's source,
//! references and the call graph, text search, the repository map, and
//! symbol changes between indexed states. One implementation per question,
//! whichever front end asks.

use sno_journal::model::{EdgeKind, EdgeTarget, Symbol};
use sno_protocol::query::{
    ChangesAnswer, GrepAnswer, MapAnswer, MapFile, MapSymbol, OutlineAnswer, RefsAnswer, RefsKind,
    ShowAnswer, SymbolsAnswer,
};
use sno_protocol::ErrorCode;
use sno_query::lookup::{Located, LookupError};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::read::Snapshot;

/// A snapshot of some of the head's files (`what` names which, in its key).
/// Not cached: the read model's budget never counts it.
fn partial_head(
    what: &str,
    head: sno_journal::IndexedHead,
    state: sno_journal::delta::State,
) -> Snapshot {
    Snapshot {
        key: format!("{what}@{}", head.seq.0),
        bytes: 0,
        state,
        as_of: sno_protocol::query::AsOfCommit {
            commit: head.commit.to_hex(),
            branch: head.branch,
        },
        seq: head.seq,
        is_head: true,
    }
}

/// Names closest in spelling whose files a missed lookup reads, for its
/// suggestions.
const NEAR_SUGGESTIONS: usize = 40;

/// The most files a lookup reads instead of the whole state.
const NEAR_FILES: usize = 2000;

/// The most files a round of a method's bases reads by name (a common
/// base name is defined in many files); past it, the whole state answers.
const BASE_FILES: usize = 2000;

/// Longest regular expression program accepted (bytes of compiled size):
/// a pattern is an agent's input.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

impl Engine {
    /// The lookup error for `name` in `snap`, with the nearest symbols
    /// attached when `[serve] retrieval_context` asks for them.
    fn lookup_error(&self, snap: &Snapshot, name: &str, e: LookupError) -> Error {
        let not_found = matches!(e, LookupError::NotFound { .. });
        let mut c = Error::from(e);
        // A name committed after the indexed commit is not found until
        // that commit is indexed: say so rather than suggest a grep.
        if not_found && snap.is_head {
            let head = self.read.with_git(|g| g.head().ok()).ok().flatten();
            if let Some(head) = head.filter(|h| h.to_hex() != snap.as_of.commit) {
                c.0.llm_hint = format!(
                    "{} Git's HEAD ({}) is not indexed yet: `sno init` indexes it (a running `sno watch` or `sno serve` does so by itself).",
                    c.0.llm_hint,
                    &head.to_hex()[..12]
                );
            }
        }
        if self.config.serve.retrieval_context {
            let contract = &mut c.0;
            // The near misses, located, so the agent can go on without
            // another call; then whatever the name tiers find.
            let mut hits: Vec<_> = contract
                .did_you_mean
                .iter()
                .filter_map(|n| {
                    sno_query::find_symbols(&snap.state, n, 1)
                        .into_iter()
                        .next()
                })
                .map(|m| m.symbol)
                .collect();
            if hits.is_empty() {
                hits = sno_query::find_symbols(&snap.state, name, 5)
                    .into_iter()
                    .map(|m| m.symbol)
                    .collect();
            }
            hits.truncate(5);
            contract.retrieval_context = Some(hits.into());
        }
        c
    }

    /// The one symbol `name` names (`Class.method`, a unique name, `path:line`).
    fn resolve<'s>(&self, snap: &'s Snapshot, name: &str) -> Result<Located<'s>> {
        sno_query::resolve_one(&snap.state, name).map_err(|e| self.lookup_error(snap, name, e))
    }

    /// Definitions by name: exact, then case-insensitive, prefix, fuzzy.
    pub fn symbols(&self, name: &str, limit: usize, at: Option<&str>) -> Result<SymbolsAnswer> {
        crate::error::required("name", name)?;
        crate::error::some(limit)?;
        // The files the names table lists for the name hold every exact
        // match; the other tiers (case, prefix, spelling) need every name.
        if let Some(p) = self.point(at, |j| j.head_and_files_naming(name, None))? {
            let results = sno_query::find_symbols(&p.state, name, limit);
            if results
                .first()
                .is_some_and(|m| m.match_kind == sno_protocol::query::MatchKind::Exact)
            {
                return Ok(SymbolsAnswer {
                    query: name.to_string(),
                    as_of: p.as_of,
                    results,
                });
            }
        }
        // The other tiers from the files of the names they can match.
        let near = match at {
            None if !self.config.serve.retrieval_context => self.near_point(name)?,
            _ => None,
        };
        let (snap, _) = match near {
            Some(p) => (std::sync::Arc::new(p), true),
            None => self.snapshot(at)?,
        };
        let results = sno_query::find_symbols(&snap.state, name, limit);
        if results.is_empty() {
            let e = LookupError::NotFound {
                query: name.to_string(),
                did_you_mean: sno_query::lookup::did_you_mean(&snap.state, name, 5),
            };
            return Err(self.lookup_error(&snap, name, e));
        }
        Ok(SymbolsAnswer {
            query: name.to_string(),
            as_of: snap.as_of.clone(),
            results,
        })
    }

    /// A repository path for a file a user or an agent named, under the
    /// confinement rule.
    pub fn confine(&self, file: &str) -> Result<String> {
        Ok(self.work_tree.relative(file)?)
    }

    /// The error for a path the state does not hold, with the nearest paths.
    pub(crate) fn unknown_file(snap: &Snapshot, rel: &str) -> Error {
        let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let mut scored: Vec<(f64, &String)> = snap
            .state
            .keys()
            .map(|p| {
                let whole = sno_query::lookup::similarity(p, rel);
                (
                    whole.max(sno_query::lookup::similarity(&name(p), &name(rel)) * 0.9),
                    p,
                )
            })
            .filter(|(s, _)| *s > 0.6)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        ErrorCode::UnknownFile
            .with(format!("{rel} is not in the indexed state"))
            .suggesting(scored.into_iter().take(5).map(|(_, p)| p.clone()).collect())
            .into()
    }

    /// The part of the head's state a point query needs, read through the
    /// tables derived with the views (`read`), when the head's whole state
    /// is not in memory already and no past state is asked for; `None`
    /// sends the query to the whole state. Answers from it equal the whole
    /// state's (`tests/point_queries.rs`).
    pub(crate) fn point(
        &self,
        at: Option<&str>,
        read: impl FnOnce(
            &sno_journal::Journal,
        ) -> std::result::Result<
            Option<(sno_journal::IndexedHead, sno_journal::delta::State)>,
            sno_journal::JournalError,
        >,
    ) -> Result<Option<Snapshot>> {
        if at.is_some() || self.read.head_is_loaded() {
            return Ok(None);
        }
        Ok(read(self.journal())?.map(|(head, state)| partial_head("point", head, state)))
    }

    /// The head's records of the files defining a name a lookup of `name`
    /// can match inexactly, or the nearest in spelling
    /// ([`sno_query::lookup::names_near`]); `None` when the head's whole
    /// state is loaded anyway, or the names are in too many files.
    fn near_point(&self, name: &str) -> Result<Option<Snapshot>> {
        if self.read.head_is_loaded() {
            return Ok(None);
        }
        // A commit indexed between the two reads: read again, rather than
        // the whole new state.
        let mut tries = 0;
        let (head, state) = loop {
            let Some((head, keys)) = self.read.name_keys()? else {
                return Ok(None);
            };
            let near = sno_query::lookup::names_near(&keys, name, NEAR_SUGGESTIONS);
            match self
                .journal()
                .files_naming_at_head(head.seq, &near, NEAR_FILES)?
            {
                Some(state) => break (head, state),
                None => {
                    tries += 1;
                    let moved = self.journal().head()?.map(|h| h.seq) != Some(head.seq);
                    if !moved || tries == 3 {
                        return Ok(None);
                    }
                }
            }
        };
        Ok(Some(partial_head("near", head, state)))
    }

    /// A lookup error from a point state that the whole state would give
    /// alike: an ambiguous name (the point state holds every symbol the
    /// name matches exactly), unless the error is to carry retrieval
    /// context, which searches the whole state. `Ok` sends the query on to
    /// the whole state.
    pub(crate) fn point_error(&self, p: &Snapshot, name: &str, e: LookupError) -> Result<()> {
        match e {
            LookupError::Ambiguous { .. } if !self.config.serve.retrieval_context => {
                Err(self.lookup_error(p, name, e))
            }
            // The point read holds the file: its answer is final.
            LookupError::NoSymbolAt { .. } => Err(self.lookup_error(p, name, e)),
            _ => Ok(()),
        }
    }

    /// The files a lookup of `name` needs: those defining its last segment,
    /// and the file of a `path:line`.
    pub(crate) fn point_for_name(&self, name: &str, at: Option<&str>) -> Result<Option<Snapshot>> {
        let file = name
            .rsplit_once(':')
            .filter(|(_, line)| line.parse::<u32>().is_ok())
            .map(|(path, _)| path);
        self.point(at, |j| j.head_and_files_naming(name, file))
    }

    /// A file's symbols, nested, with signatures and no bodies.
    pub fn outline(&self, file: &str, at: Option<&str>) -> Result<OutlineAnswer> {
        let rel = self.confine(file)?;
        if let Some(p) = self.point(at, |j| j.head_and_file(&rel))? {
            if let Some(rec) = p.state.get(&rel) {
                return Ok(OutlineAnswer {
                    outline: sno_query::outline::outline(rec),
                    not_parsed: not_parsed(rec),
                    edited_in_work_tree: p
                        .is_head
                        .then(|| crate::search::edited_in_work_tree(&self.work_tree, &rel, rec)),
                    as_of: p.as_of,
                    file: rel,
                });
            }
        }
        let (snap, _) = self.snapshot(at)?;
        let rec = snap
            .state
            .get(&rel)
            .ok_or_else(|| Self::unknown_file(&snap, &rel))?;
        Ok(OutlineAnswer {
            as_of: snap.as_of.clone(),
            outline: sno_query::outline::outline(rec),
            not_parsed: not_parsed(rec),
            edited_in_work_tree: snap
                .is_head
                .then(|| crate::search::edited_in_work_tree(&self.work_tree, &rel, rec)),
            file: rel,
        })
    }

    /// One symbol's definition and source.
    pub fn show(&self, name: &str, at: Option<&str>) -> Result<ShowAnswer> {
        crate::error::required("name", name)?;
        if let Some(p) = self.point_for_name(name, at)? {
            match sno_query::resolve_one(&p.state, name) {
                Ok(found) => return self.show_found(&p, found),
                Err(e) => self.point_error(&p, name, e)?,
            }
        }
        let (snap, _) = self.snapshot(at)?;
        let found = self.resolve(&snap, name)?;
        self.show_found(&snap, found)
    }

    fn show_found(&self, snap: &Snapshot, found: Located<'_>) -> Result<ShowAnswer> {
        let rec = &snap.state[found.path];
        let file = self.read.blob(rec.blob).ok_or_else(|| {
            ErrorCode::Git
                .with(format!(
                    "the content of {} is not in the repository's objects",
                    found.path
                ))
                .hinted("The indexed commit may have been garbage-collected; run `sno init` again.")
        })?;
        Ok(ShowAnswer {
            as_of: snap.as_of.clone(),
            symbol: found.info(),
            source: sno_query::lookup::source_of(found.symbol, &file),
            edited_in_work_tree: snap
                .is_head
                .then(|| crate::search::edited_in_work_tree(&self.work_tree, found.path, rec)),
        })
    }

    /// References to a symbol, or its callers or callees up to `depth` hops.
    pub fn refs(
        &self,
        name: &str,
        kind: RefsKind,
        depth: u32,
        at: Option<&str>,
    ) -> Result<RefsAnswer> {
        crate::error::required("name", name)?;
        let depth = depth.clamp(1, 5);
        if kind != RefsKind::Callees {
            if let Some(answer) = self.point_refs(name, kind, depth, at)? {
                return Ok(answer);
            }
        }
        let (snap, _) = self.snapshot(at)?;
        let found = self.resolve(&snap, name)?;
        let graph = self.read.graph(&snap);
        let g = graph.borrow_dependent();
        let results = match kind {
            RefsKind::References => g.references(found.symbol),
            RefsKind::Callers => g.callers(found.symbol, depth),
            RefsKind::Callees => g.callees(&snap.state, found.symbol, depth),
        };
        Ok(RefsAnswer {
            as_of: snap.as_of.clone(),
            symbol: found.info(),
            results,
            more: 0,
        })
    }

    /// References or callers as [`Engine::refs`] gives them, from the files
    /// the referrers table lists: those with an edge into the symbol (and,
    /// hop by hop, into its callers) or an unresolved call of its name.
    /// `None` when the whole state must answer (a past state, a name the
    /// tables do not settle, or a head that moved meanwhile).
    fn point_refs(
        &self,
        name: &str,
        kind: RefsKind,
        depth: u32,
        at: Option<&str>,
    ) -> Result<Option<RefsAnswer>> {
        let Some(p) = self.point_for_name(name, at)? else {
            return Ok(None);
        };
        let found = match sno_query::resolve_one(&p.state, name) {
            Ok(found) => found,
            Err(e) => {
                self.point_error(&p, name, e)?;
                return Ok(None);
            }
        };
        let target_symbol = found.symbol.clone();
        let (target, target_name) = (target_symbol.id, target_symbol.name.clone());
        let Snapshot {
            mut state,
            as_of,
            seq,
            ..
        } = p;
        let j = self.journal();
        if !j.add_referrers(
            &sno_journal::store::name_referred(&target_name),
            seq,
            &mut state,
        )? {
            return Ok(None);
        }
        // A method's callers include the calls of the methods it
        // overrides: its type's bases are read by name up the chain, then
        // the files calling their methods.
        let mut asked = std::collections::BTreeSet::new();
        let method = sno_query::graph::method_owner(&target_symbol).is_some();
        let overridden = loop {
            if !method {
                break Vec::new();
            }
            let missing: Vec<String> = {
                let g = sno_query::graph::Graph::new(&state);
                let missing: Vec<String> = g
                    .missing_bases(&target_symbol)
                    .into_iter()
                    .filter(|n| asked.insert(n.clone()))
                    .collect();
                if missing.is_empty() {
                    break g.overridden(&target_symbol);
                }
                missing
            };
            let keys: Vec<&str> = missing
                .iter()
                .map(|n| sno_journal::store::name_key(n))
                .collect();
            let Some(more) = j.files_naming_at_head(seq, &keys, BASE_FILES)? else {
                return Ok(None);
            };
            for (path, rec) in more {
                state.entry(path).or_insert(rec);
            }
        };
        for base in overridden {
            let key = sno_journal::store::symbol_referred(base);
            if !j.add_referrers(&key, seq, &mut state)? {
                return Ok(None);
            }
        }
        // Its references include the methods overriding it: the files
        // whose types inherit from its type, down the chain.
        if let (RefsKind::References, Some(owner)) =
            (kind, sno_query::graph::method_owner(&target_symbol))
        {
            let mut asked = std::collections::BTreeSet::from([owner]);
            let mut frontier = vec![owner];
            while !frontier.is_empty() {
                for t in frontier.drain(..) {
                    let key = sno_journal::store::symbol_referred(t);
                    if !j.add_referrers(&key, seq, &mut state)? {
                        return Ok(None);
                    }
                }
                frontier = sno_query::graph::Graph::new(&state)
                    .descendants(owner)
                    .into_iter()
                    .filter(|d| asked.insert(*d))
                    .collect();
            }
        }
        // Hop by hop: the files referring to the frontier, then the callers
        // in them make the next frontier.
        let hops = if kind == RefsKind::Callers { depth } else { 1 };
        let mut seen = std::collections::BTreeSet::from([target]);
        let mut frontier = vec![target];
        for hop in 1..=hops {
            for id in &frontier {
                let key = sno_journal::store::symbol_referred(*id);
                if !j.add_referrers(&key, seq, &mut state)? {
                    return Ok(None);
                }
            }
            if hop == hops {
                break;
            }
            let callees: std::collections::BTreeSet<_> = frontier.drain(..).collect();
            for e in state.values().flat_map(|rec| &rec.edges) {
                let into = matches!(&e.to, EdgeTarget::Symbol(t) if callees.contains(t));
                if into && e.kind == EdgeKind::Calls {
                    frontier.extend(e.from.filter(|f| seen.insert(*f)));
                }
            }
        }
        let g = sno_query::graph::Graph::new(&state);
        let Some(found) = g.symbol(target) else {
            return Ok(None);
        };
        let results = match kind {
            RefsKind::References => g.references(found.symbol),
            RefsKind::Callers => g.callers(found.symbol, depth),
            RefsKind::Callees => return Ok(None),
        };
        Ok(Some(RefsAnswer {
            as_of,
            symbol: found.info(),
            results,
            more: 0,
        }))
    }

    /// Regex search over the indexed files' text (as served: secrets masked).
    pub fn grep(&self, pattern: &str, limit: usize, at: Option<&str>) -> Result<GrepAnswer> {
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                let shown: String = pattern.chars().take(200).collect();
                Error::from(
                    ErrorCode::BadRegex
                        .with(format!("`{shown}` is not a valid regular expression: {e}")),
                )
            })?;
        let (snap, _) = self.snapshot(at)?;
        let limit = crate::error::some(limit)?.min(100_000);
        let found = sno_query::text::grep(&snap.state, &re, limit, |rec| self.read.blob(rec.blob));
        // Hits of the files git still holds would pass for all of them.
        if let Some(first) = found.unreadable.first() {
            return Err(ErrorCode::Git
                .with(format!(
                    "{} file(s) of the state at {} cannot be read from git ({first}{}): its objects may have been garbage-collected",
                    found.unreadable.len(),
                    &snap.as_of.commit[..12],
                    if found.unreadable.len() > 1 { ", ..." } else { "" }
                ))
                .hinted("Grep a state git still holds (HEAD once `sno init` has indexed it); `refs`, `outline` and `changes` answer from the journal alone.")
                .into());
        }
        Ok(GrepAnswer {
            as_of: snap.as_of.clone(),
            results: found.hits,
            truncated: found.truncated,
            limit,
        })
    }

    /// The most central files and symbols (PageRank over calls and
    /// inheritance), the whole answer within `max_tokens` (at least 50) as
    /// `format` gives it.
    pub fn map(
        &self,
        max_tokens: usize,
        per_file: usize,
        max_files: Option<usize>,
        at: Option<&str>,
        format: sno_protocol::context::AnswerFormat,
    ) -> Result<MapAnswer> {
        let (snap, _) = self.snapshot(at)?;
        let (docs, rank) = sno_query::map::symbol_ranks(&snap.state);
        let ranked = sno_query::map::ranked_files(&docs, &rank);
        let header = format!(
            "# repository map as of {} — files by centrality (PageRank over calls and inheritance)\n",
            &snap.as_of.commit[..12]
        );
        let files = ranked
            .iter()
            .take(max_files.unwrap_or(usize::MAX))
            .map(|(path, score, syms)| {
                let shown: Vec<(&Symbol, f64)> = syms
                    .iter()
                    .take(per_file)
                    .map(|(i, r)| (docs[*i].symbol, *r))
                    .collect();
                let mut block = format!("{path}  ({score:.4})\n");
                for (s, _) in &shown {
                    block.push_str(&format!(
                        "  {}:{} {} {}\n",
                        s.kind.name(),
                        s.span.start_line,
                        s.qualified_name,
                        s.signature
                    ));
                }
                let file = MapFile {
                    path: path.to_string(),
                    score: round3(*score),
                    symbols: shown
                        .iter()
                        .map(|(s, r)| MapSymbol {
                            qualified_name: s.qualified_name.clone(),
                            kind: s.kind.name().to_string(),
                            line: s.span.start_line,
                            signature: s.signature.clone(),
                            rank: round3(*r),
                        })
                        .collect(),
                };
                (block, file)
            })
            .collect();
        Ok(sno_query::map::pack_map(
            snap.as_of.clone(),
            &header,
            files,
            crate::error::budget(max_tokens, crate::error::MIN_MAP_TOKENS)?,
            format,
        ))
    }

    /// Symbols added, removed and changed between two indexed states, from
    /// the journal (nothing is reparsed); `to` defaults to the indexed head.
    pub fn changes(&self, from: &str, to: Option<&str>) -> Result<ChangesAnswer> {
        let (old, _) = self.snapshot(Some(from))?;
        let (new, _) = self.snapshot(to)?;
        Ok(ChangesAnswer {
            from: old.as_of.clone(),
            to: sno_protocol::query::ChangesTo::Commit(new.as_of.clone()),
            changes: sno_query::changes::symbol_changes(&old.state, &new.state),
        })
    }
}

/// A score as answers show it: three significant digits are all a reader
/// can use.
pub(crate) fn round3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Why a file was not parsed, as a user reads it.
fn not_parsed(rec: &sno_journal::model::FileRecord) -> Option<String> {
    use sno_journal::model::{FileState, SkipReason};
    Some(match &rec.state {
        FileState::Parsed | FileState::ParsedWithErrors => return None,
        FileState::Skipped(SkipReason::Binary) => "binary (NUL bytes, or not text)".into(),
        FileState::Skipped(SkipReason::TooLarge) => {
            format!(
                "{} bytes, over the size limit ([index] max_file_size, --max-file-size)",
                rec.size
            )
        }
        FileState::Skipped(SkipReason::UnsupportedLanguage) => "no grammar for its language".into(),
        FileState::Failed(why) => format!("the parser failed ({why})"),
    })
}
