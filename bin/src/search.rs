//! `sno search`: a context package for a question, in a token budget, with
//! the trust header.

use std::collections::HashSet;
use std::process::ExitCode;

use sno_index::git::GitRepo;
use sno_journal::model::Seq;
use sno_protocol::query::AsOfCommit;
use sno_query::context::{build_package, PackageInput};
use sno_query::search::{HistoryFacts, Retriever, SearchRequest, Weights};
use sno_query::semantic::Embedder;

use crate::cli::QueryOpts;
use crate::commands::{open_existing, print_json, resolve_journaled};
use crate::repo::RepoPaths;

/// The default model: used when nothing else is configured.
pub const DEFAULT_MODEL: &str = "minishlab/potion-base-8M";

/// The model to use: `--model`, then `SNO_MODEL`, then `[search] model` of
/// `.sno/config.toml`, then the default.
pub fn model_spec(flag: Option<&str>, config: &sno_engine::config::IndexConfig) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("SNO_MODEL").ok().filter(|m| !m.is_empty()))
        .or_else(|| config.model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string())
}

/// Options of `sno search`.
pub struct SearchArgs<'a> {
    pub query: &'a str,
    pub max_tokens: usize,
    pub limit: usize,
    pub scope: Option<&'a str>,
    pub lexical_only: bool,
    pub model: Option<&'a str>,
}

/// Runs a search.
pub fn search(a: SearchArgs, q: &QueryOpts) -> anyhow::Result<ExitCode> {
    let paths = RepoPaths::discover(&q.repo)?;
    let pkg = package(&paths, a, q.at.as_deref())?;
    if q.json {
        print_json(&pkg)?;
    } else {
        crate::out::out!("{}", pkg.package);
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the context package for a search, from the indexed head or `at`.
pub fn package(
    paths: &RepoPaths,
    a: SearchArgs,
    at: Option<&str>,
) -> anyhow::Result<sno_protocol::context::ContextPackage> {
    sno_query::cl100k::cache_table_in(paths.cache_dir());
    let journal = open_existing(paths)?;
    package_from(paths, &journal, a, at)
}

/// [`package`] with an open journal.
pub fn package_from(
    paths: &RepoPaths,
    journal: &sno_journal::Journal,
    a: SearchArgs,
    at: Option<&str>,
) -> anyhow::Result<sno_protocol::context::ContextPackage> {
    let head = journal
        .head()?
        .ok_or_else(|| sno_journal::JournalError::Missing(paths.db().display().to_string()))?;
    let (state, as_of, seq) = match at {
        None => (
            journal.load_state()?,
            AsOfCommit {
                commit: head.commit.to_hex(),
                branch: head.branch.clone(),
            },
            head.seq,
        ),
        Some(at) => {
            let c = resolve_journaled(paths, journal, at)?;
            let seq = journal.seq_of_commit(&c)?.unwrap_or(Seq(0));
            (
                sno_journal::replay::replay_to_commit(journal, &c)?,
                AsOfCommit {
                    commit: c.to_hex(),
                    branch: None,
                },
                seq,
            )
        }
    };
    let repo = GitRepo::open(&paths.root)?;
    let head_now = repo.head().ok().map(|c| c.to_hex());
    let head_differs = head_now.filter(|h| *h != as_of.commit);

    let config = sno_engine::config::IndexConfig::load(&paths.config())?;
    let model_spec = model_spec(a.model, &config);
    let (embedder, semantic_off) = if a.lexical_only {
        (None, Some("--lexical-only".to_string()))
    } else {
        match Embedder::load(&model_spec) {
            Ok(e) => (Some(e), None),
            Err(e) => {
                crate::out::errln!("sno: semantic search is off ({e}); answering with lexical and structural signals");
                (None, Some(e.to_string()))
            }
        }
    };
    // Vectors stored by the embedder at index time; symbols it has not seen
    // (an --at state, a changed model) are embedded now, not stored.
    let vectors = embedder.as_ref().map(|e| {
        let docs = sno_query::lexical::documents(&state);
        let same_model =
            journal.vectors_model().ok().flatten().as_deref() == Some(e.source.as_str());
        sno_query::search::doc_vectors(&docs, e, |h| {
            if same_model {
                journal.vectors(h).unwrap_or_default()
            } else {
                Vec::new()
            }
        })
        .0
    });
    let retriever =
        Retriever::new(&state, embedder.as_ref(), vectors).map_err(|e| anyhow::anyhow!("{e}"))?;
    let history = HistoryFacts::from_journal(journal, seq)?;
    let request = SearchRequest {
        query: a.query,
        limit: a.limit,
        scope: a.scope,
        lexical_only: a.lexical_only,
        weights: Weights::default(),
    };
    let lesson_paths: HashSet<String> = journal.memory()?.approved_lesson_files();
    let hits = retriever.search(&request, &history, &lesson_paths);

    // The work tree is compared only with the indexed head's files.
    let at_head = as_of.commit == head.commit.to_hex();
    let work_tree = paths.work_tree_with(&config)?;
    let edited = |path: &str, rec: &sno_journal::model::FileRecord| {
        edited_in_work_tree(&work_tree, path, rec)
    };
    let pkg = build_package(&PackageInput {
        query: a.query,
        state: &state,
        retriever: &retriever,
        hits: &hits,
        as_of,
        head_differs,
        semantic_off_reason: semantic_off,
        scope: a.scope,
        max_tokens: a.max_tokens,
        read: &|rec| {
            repo.blob(rec.blob)
                .ok()
                .map(|b| sno_query::served::Served::new(&b, config.mask_secrets))
        },
        edited: at_head.then_some(&edited),
    });
    Ok(pkg)
}

/// Whether `path` differs in the work tree from its indexed version (an
/// unreadable file counts as changed: its indexed text cannot be vouched for).
pub fn edited_in_work_tree(
    work_tree: &sno_index::confine::WorkTree,
    path: &str,
    rec: &sno_journal::model::FileRecord,
) -> bool {
    match work_tree.compare(path, rec.blob, rec.size) {
        Ok(f) => f != sno_index::confine::WorkTreeFile::Same,
        Err(e) => {
            tracing::warn!(path, error = %e, "could not compare a file with the work tree");
            true
        }
    }
}
