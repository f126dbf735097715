//! What the journal knows of a file's past: the commits that touched it (or
//! one of its symbols), the files that change with it, and everything worth
//! knowing before editing a line.

use sno_journal::event::{Event, FileChange};
use sno_journal::model::Symbol;
use sno_protocol::query::{
    CoChange, CoChangedAnswer, Diagnostic, EditContext, HistoryAnswer, HistoryEntry, Sibling,
};
use sno_protocol::ErrorCode;

use std::sync::Arc;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::read::Snapshot;

/// What `history` is asked about.
pub enum HistoryOf<'a> {
    File(&'a str),
    /// A name, `Class.method` or `path:line`.
    Symbol(&'a str),
}

impl Engine {
    /// Each journaled commit that touched a file or symbol, oldest first.
    pub fn history(&self, of: HistoryOf) -> Result<HistoryAnswer> {
        let (snap, path, symbol) = self.history_subject(&of)?;
        let commits = self.history_of(&path, symbol.as_ref())?;
        if commits.is_empty() && symbol.is_none() && !snap.state.contains_key(&path) {
            return Err(Self::unknown_file(&snap, &path));
        }
        Ok(HistoryAnswer {
            as_of: snap.as_of.clone(),
            file: path,
            symbol: symbol.map(|s| s.qualified_name),
            commits,
        })
    }

    /// What `of` names, with the state that says so: the head's records of
    /// the file, or of the files defining the name, when they answer; the
    /// whole state only for what they cannot (a file no longer there, a
    /// name they do not resolve).
    fn history_subject(&self, of: &HistoryOf) -> Result<(Arc<Snapshot>, String, Option<Symbol>)> {
        let name = match of {
            HistoryOf::File(f) => {
                let rel = self.confine(f)?;
                return Ok((self.state_with_file(&rel)?, rel, None));
            }
            HistoryOf::Symbol(name) => *name,
        };
        if let Some(p) = self.point_for_name(name, None)? {
            match sno_query::resolve_one(&p.state, name) {
                Ok(found) => {
                    let (path, symbol) = (found.path.to_string(), found.symbol.clone());
                    return Ok((Arc::new(p), path, Some(symbol)));
                }
                Err(e) => self.point_error(&p, name, e)?,
            }
        }
        let (snap, _) = self.snapshot(None)?;
        let found = sno_query::resolve_one(&snap.state, name)?;
        let (path, symbol) = (found.path.to_string(), found.symbol.clone());
        Ok((snap, path, Some(symbol)))
    }

    /// The head's record of `rel` when the views have it, else the whole
    /// state (which names the nearest files when `rel` is not there).
    fn state_with_file(&self, rel: &str) -> Result<Arc<Snapshot>> {
        match self.point(None, |j| j.head_and_file(rel))? {
            Some(p) if p.state.contains_key(rel) => Ok(Arc::new(p)),
            _ => Ok(self.snapshot(None)?.0),
        }
    }

    /// Each journaled commit of the current lineage whose deltas touched
    /// `path` (or, with `symbol`, that symbol).
    fn history_of(&self, path: &str, symbol: Option<&Symbol>) -> Result<Vec<HistoryEntry>> {
        let mut out = Vec::new();
        // Each commit's deltas of this file only: a first index of the
        // whole repository is never decoded whole for one file.
        let events = self
            .journal
            .events_keeping(sno_journal::model::Seq(0), None, path)?;
        // The history of the indexed state: commits a rollback or a reset
        // left behind are not in it.
        for i in sno_journal::replay::lineage(&events) {
            let (seq, env) = &events[i];
            let Event::CommitIndexed(c) = &env.event else {
                continue;
            };
            for d in c.deltas.iter().filter(|d| d.path == path) {
                let change = match (&d.change, symbol) {
                    (FileChange::Reresolved, _) => continue,
                    (FileChange::Deleted, None) => "file deleted",
                    (FileChange::Added(_), None) => "file added",
                    (FileChange::Modified(_), None) => "file modified",
                    (_, Some(s)) => {
                        let added = d.symbols_added.iter().any(|x| x.id == s.id);
                        let removed = d.symbols_removed.contains(&s.id);
                        match (added, removed) {
                            (true, true) => "symbol changed",
                            (true, false) => "symbol added",
                            (false, true) => "symbol removed",
                            (false, false) => continue,
                        }
                    }
                };
                out.push(HistoryEntry {
                    seq: seq.0,
                    commit: c.commit.to_hex(),
                    summary: c.summary.clone(),
                    time: c.time,
                    change: change.to_string(),
                });
            }
        }
        Ok(out)
    }

    /// Files that changed in the same commits as `file`.
    pub fn co_changed(&self, file: &str, limit: usize) -> Result<CoChangedAnswer> {
        let rel = self.confine(file)?;
        // The file's own record says it is there; the whole state only
        // names the nearest files when it is not.
        let snap = self.state_with_file(&rel)?;
        if !snap.state.contains_key(&rel) {
            return Err(Self::unknown_file(&snap, &rel));
        }
        let h = self.read.history_facts(snap.seq)?;
        let own = h.touches.get(&rel).map(Vec::len).unwrap_or(0);
        let mut pairs: Vec<CoChange> = h
            .touches
            .iter()
            .filter(|(p, _)| **p != rel)
            .map(|(p, ks)| {
                let both = h
                    .touches
                    .get(&rel)
                    .map(|mine| ks.iter().filter(|k| mine.contains(k)).count())
                    .unwrap_or(0);
                CoChange {
                    path: p.clone(),
                    share: h.co_change(&rel, p),
                    commits: both,
                }
            })
            .filter(|c| c.share > 0.0)
            .collect();
        pairs.sort_by(|x, y| y.share.total_cmp(&x.share).then(x.path.cmp(&y.path)));
        pairs.truncate(limit.clamp(1, 100));
        for p in &mut pairs {
            p.share = crate::lookup::round3(p.share as f64) as f32;
        }
        Ok(CoChangedAnswer {
            as_of: snap.as_of.clone(),
            file: rel,
            commits_touching_file: own,
            co_changed: pairs,
            note: "Commits touching more than 50 files (imports, mass renames) are not counted."
                .into(),
        })
    }

    /// Before editing `line` of `file`: the symbol around it, its callers,
    /// callees and siblings, the decisions and approved lessons about the
    /// file, its diagnostics, and whether it changed on disk.
    pub fn context_for_edit(&self, file: &str, line: u32, at: Option<&str>) -> Result<EditContext> {
        let (snap, _) = self.snapshot(at)?;
        let rel = self.confine(file)?;
        let rec = snap
            .state
            .get(&rel)
            .ok_or_else(|| Self::unknown_file(&snap, &rel))?;
        // A line the file does not have is a mistake to say, not to answer
        // as its first or as a line of nothing. Past the indexed end is
        // fine where the count is unknown (a file not parsed counts 0) or
        // the work tree has grown the file since.
        let past_end = rec.lines > 0
            && line > rec.lines
            && !(snap.is_head && crate::search::edited_in_work_tree(&self.work_tree, &rel, rec));
        if line == 0 || past_end {
            return Err(Error::from(
                ErrorCode::BadArgs
                    .with(format!(
                        "`line` {line} is not a line of {rel} (lines 1 to {})",
                        rec.lines.max(1)
                    ))
                    .hinted("Lines count from 1, as in `path:line`; pass one within the file."),
            ));
        }
        // The innermost symbol whose span holds the line.
        let enclosing = rec
            .symbols
            .iter()
            .filter(|s| s.span.start_line <= line && line <= s.span.end_line)
            .min_by_key(|s| s.span.end_line - s.span.start_line);
        let graph = self.read.graph(&snap);
        let g = graph.borrow_dependent();
        let info = |s: &Symbol| {
            sno_query::lookup::Located {
                path: &rel,
                symbol: s,
            }
            .info()
        };
        let (symbol, callers, callees, siblings) = match enclosing {
            Some(s) => (
                Some(info(s)),
                g.callers(s, 1),
                g.callees(&snap.state, s, 1),
                rec.symbols
                    .iter()
                    .filter(|o| o.parent == s.parent && o.id != s.id)
                    .map(|o| Sibling {
                        name: o.qualified_name.clone(),
                        kind: o.kind.name().to_string(),
                        line: o.span.start_line,
                    })
                    .collect(),
            ),
            None => (None, Vec::new(), Vec::new(), Vec::new()),
        };
        let memory = self.read.memory()?;
        let (decisions, lessons) = memory.touching(&rel);
        Ok(EditContext {
            as_of: snap.as_of.clone(),
            line,
            enclosing: symbol,
            callers,
            callees,
            siblings,
            decisions: decisions.into_iter().map(crate::memory::decision).collect(),
            lessons: lessons
                .into_iter()
                .map(crate::memory::lesson_rule)
                .collect(),
            diagnostics: rec
                .diagnostics
                .iter()
                .map(|d| Diagnostic {
                    line: d.line,
                    column: d.column,
                    message: d.message.clone(),
                })
                .collect(),
            // Lines above are the indexed commit's: say when the file the
            // agent is about to edit no longer has them.
            edited_in_work_tree: snap
                .is_head
                .then(|| crate::search::edited_in_work_tree(&self.work_tree, &rel, rec)),
            file: rel,
        })
    }
}

/// The argument error for `history` with neither a file nor a symbol.
pub fn history_needs_subject() -> Error {
    ErrorCode::BadArgs
        .with("give `file` or `symbol`")
        .hinted("Pass `file` (a repository path) or `symbol` (a name).")
        .into()
}
