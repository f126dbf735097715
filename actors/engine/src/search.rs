//! Search: a question's context package, ranked, packed into a token
//! budget, under the header that says how far to trust it.

use sno_protocol::context::{AnswerFormat, ContextPackage, Grouping};
use sno_query::search::SearchRequest;

use crate::engine::Engine;
use crate::error::{Error, Result};

/// What to search for.
#[derive(Clone, Debug)]
pub struct SearchArgs {
    pub query: String,
    /// Token budget of the whole package (cl100k_base).
    pub max_tokens: usize,
    /// Items to rank.
    pub limit: usize,
    /// Only paths under this prefix.
    pub scope: Option<String>,
    /// Turn the semantic signal off.
    pub lexical_only: bool,
    /// Answer from this journaled commit-ish instead of the indexed head.
    pub at: Option<String>,
    /// Markdown (for agents) or JSON; the budget holds for either.
    pub format: AnswerFormat,
    /// Rank symbols, or files.
    pub group: Grouping,
}

impl Engine {
    /// The repository-relative prefix a scope names, under the confinement
    /// rule: an absolute path under the root made relative, `.` and `..`
    /// resolved, one outside refused (`SNO-PATH-OUTSIDE`), where it used
    /// to match no path and answer nothing. A trailing `/` is kept (`src/`
    /// is not `src2/`); the root itself is no scope.
    fn scope_of(&self, scope: &str) -> Result<Option<String>> {
        let rel = self.confine(scope)?;
        Ok(match (rel.is_empty(), scope.ends_with(['/', '\\'])) {
            (true, _) => None,
            (false, true) => Some(format!("{rel}/")),
            (false, false) => Some(rel),
        })
    }

    /// The context package for a question.
    pub fn search(&self, a: &SearchArgs) -> Result<(ContextPackage, SearchStats)> {
        let _answering = self.activity.answering();
        crate::error::required("query", &a.query)?;
        crate::error::some(a.limit)?;
        crate::error::budget(a.max_tokens, crate::error::MIN_SEARCH_TOKENS)?;
        let scoped;
        let a = match &a.scope {
            Some(scope) => {
                scoped = SearchArgs {
                    scope: self.scope_of(scope)?,
                    ..a.clone()
                };
                &scoped
            }
            None => a,
        };
        // The token counter's tables load beside the ranking rather than
        // after it: a process's first answer (a CLI `sno search`) would
        // wait for both in turn. (A daemon loaded them at its start.)
        sno_query::pack::warm_in_background();
        // A head searched from its stored parts reads its answer's files
        // from the views: if a new commit moved them meanwhile, ask the new
        // head. Past the last try, the state is loaded whole.
        for _ in 0..3 {
            if let Some(answer) = self.search_once(a, false)? {
                return Ok(answer);
            }
        }
        self.search_once(a, true)?
            .ok_or_else(|| Error::internal("the searched state is gone"))
    }

    /// One try of [`Engine::search`]; `None` when the state searched is no
    /// longer the views'.
    fn search_once(
        &self,
        a: &SearchArgs,
        whole: bool,
    ) -> Result<Option<(ContextPackage, SearchStats)>> {
        let t0 = std::time::Instant::now();
        let searcher = self.read.searcher_for(a.at.as_deref(), whole)?;
        let t_open = t0.elapsed();
        let (owner, retriever) = (searcher.borrow_owner(), searcher.borrow_dependent());
        let read = |rec: &sno_journal::model::FileRecord| self.read.blob(rec.blob);
        let request = SearchRequest {
            query: &a.query,
            limit: a.limit.min(200),
            scope: a.scope.as_deref(),
            lexical_only: a.lexical_only,
            weights: Default::default(),
            text: Some(sno_query::search::TextSource(&read)),
        };
        let lessons = self.read.lesson_paths();
        let file_index = match a.group {
            Grouping::Files => self.read.file_index(&searcher),
            Grouping::Symbols => None,
        };
        // Files answers also rank files of no symbol by their text.
        if let Some(scope) = a.scope.as_deref() {
            let by_text = file_index.as_deref().is_some_and(|f| f.holds_under(scope));
            if !by_text && !retriever.map().holds_under(scope) {
                return Err(unsearchable_scope(retriever.map(), scope));
            }
        }
        let (hits, files) = match a.group {
            Grouping::Symbols => (retriever.search(&request, &owner.history, &lessons), None),
            Grouping::Files => (
                Vec::new(),
                Some(retriever.search_files(
                    &request,
                    &owner.history,
                    &lessons,
                    file_index.as_deref(),
                )),
            ),
        };
        let docs: Vec<usize> = match &files {
            Some(f) => f.iter().flat_map(|f| f.docs.iter().copied()).collect(),
            None => hits.iter().map(|h| h.doc).collect(),
        };
        let t_rank = t0.elapsed();
        let Some(loaded) = retriever.load(docs) else {
            return Ok(None);
        };
        let t_load = t0.elapsed();
        // Behind HEAD is what an answer about a past commit was asked to
        // be: only the head's answers warn of it.
        let head_differs = owner
            .is_head
            .then(|| self.read.head_differs(&owner.as_of))
            .flatten();
        let work_tree = &self.work_tree;
        let edited = |path: &str, rec: &sno_journal::model::FileRecord| {
            edited_in_work_tree(work_tree, path, rec)
        };
        let semantic_off_reason = if a.lexical_only {
            Some("--lexical-only".to_string())
        } else if retriever.has_semantic() {
            None
        } else {
            self.read.semantic_off()
        };
        let pkg = sno_query::context::build_package(&sno_query::context::PackageInput {
            query: &a.query,
            loaded: &loaded,
            hits: &hits,
            files: files.as_deref(),
            format: a.format,
            as_of: owner.as_of.clone(),
            head_differs,
            semantic_off_reason,
            scope: a.scope.as_deref(),
            max_tokens: a.max_tokens,
            read: &|rec| self.read.blob(rec.blob),
            edited: owner.is_head.then_some(&edited),
        });
        tracing::debug!(
            open_us = t_open.as_micros() as u64,
            rank_us = (t_rank - t_open).as_micros() as u64,
            load_us = (t_load - t_rank).as_micros() as u64,
            pack_us = (t0.elapsed() - t_load).as_micros() as u64,
            "search timed"
        );
        let stats = SearchStats {
            hits: files.as_ref().map(Vec::len).unwrap_or(hits.len()),
            top_score: match &files {
                Some(f) => f.first().map(|f| f.score),
                None => hits.first().map(|h| h.signals.total()),
            }
            .unwrap_or(0.0),
        };
        Ok(Some((pkg, stats)))
    }
}

/// A scope under which nothing can be found: a typo answered with an empty
/// package read as "there is nothing about it here". The nearest
/// directories and files the index holds are suggested.
fn unsearchable_scope(map: &sno_query::doc_map::DocMap, scope: &str) -> Error {
    let mut scored: Vec<(f64, String)> = map
        .scopes()
        .into_iter()
        .map(|p| (sno_query::lookup::similarity(&p, scope), p))
        .filter(|(s, _)| *s > 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    sno_protocol::ErrorCode::UnknownFile
        .with(format!(
            "nothing indexed under the scope `{scope}` can be searched"
        ))
        .hinted("Name a directory or file of the repository, e.g. `src/` (see did_you_mean).")
        .suggesting(scored.into_iter().take(5).map(|(_, p)| p).collect())
        .into()
}

/// What a search found, for the audit.
#[derive(Clone, Copy, Debug, Default)]
pub struct SearchStats {
    pub hits: usize,
    pub top_score: f32,
}

/// Whether `path` differs in the work tree from its indexed version (an
/// unreadable file counts as changed: its indexed text cannot be vouched for).
pub fn edited_in_work_tree(
    work_tree: &sno_index::confine::WorkTree,
    path: &str,
    rec: &sno_journal::model::FileRecord,
) -> bool {
    match work_tree.compare(path, rec.blob, rec.size) {
        Ok(f) => !matches!(
            f,
            sno_index::confine::WorkTreeFile::Same
                | sno_index::confine::WorkTreeFile::NotCheckedOut
        ),
        Err(e) => {
            tracing::warn!(path, error = %e, "could not compare a file with the work tree");
            true
        }
    }
}
