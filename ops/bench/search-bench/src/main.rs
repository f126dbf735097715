//! Warm search latency in one process, the way a long-running server sees it:
//! load the indexed state and the model once, build the indexes (timing the
//! embedding of every symbol), then answer each query — ranking, reading the
//! sources from git and packing them under the trust header — and report
//! p50/p95.
//!
//! Usage: sno-search-bench REPO MODEL_DIR QUERIES_FILE [ROUNDS]

use std::collections::HashSet;
use std::time::Instant;

use sno_search_bench::{args_or_usage, pct};

use sno_index::git::GitRepo;
use sno_journal::Journal;
use sno_query::context::{build_package, PackageInput};
use sno_query::search::{doc_texts, HistoryFacts, Retriever, SearchRequest, Weights};
use sno_query::semantic::Embedder;

fn main() {
    let args = args_or_usage(3, "sno-search-bench REPO MODEL_DIR QUERIES_FILE [ROUNDS]");
    let (repo_dir, model_dir, queries_file) = (&args[1], &args[2], &args[3]);
    let rounds: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(1);
    let queries: Vec<String> = std::fs::read_to_string(queries_file)
        .expect("queries file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();

    let t = Instant::now();
    let journal = Journal::open_existing(&std::path::Path::new(repo_dir).join(".sno/sno.redb"))
        .expect("indexed repository");
    let head: sno_journal::IndexedHead = journal.head().expect("head").expect("something indexed");
    let state = journal.load_state().expect("state");
    let load_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let embedder = Embedder::load(model_dir).expect("model");
    let model_s = t.elapsed().as_secs_f64();

    let repo = GitRepo::open(std::path::Path::new(repo_dir)).expect("git");
    let read = |rec: &sno_journal::model::FileRecord| {
        repo.blob(rec.blob)
            .ok()
            .map(|b| sno_query::served::Served::new(&b, true))
    };
    let docs = sno_query::lexical::documents(&state);
    let texts: Vec<String> = doc_texts(&state, &read);
    let t = Instant::now();
    let (vectors, _) = sno_query::search::doc_vectors(&texts, &embedder, |_| Vec::new());
    let embed_s = t.elapsed().as_secs_f64();
    assert_eq!(vectors.count(), docs.len());
    drop(texts);

    let t = Instant::now();
    let retriever = Retriever::new(&state, Some(&embedder), Some(vectors), &read).expect("indexes");
    let build_s = t.elapsed().as_secs_f64();
    let history = HistoryFacts::from_journal(&journal, head.seq).expect("history");

    let mut latencies = Vec::new();
    let mut rank_ms = Vec::new();
    let mut tokens = 0usize;
    for round in 0..rounds.max(1) + 1 {
        for q in &queries {
            let t = Instant::now();
            let req = SearchRequest {
                query: q,
                limit: 10,
                scope: None,
                lexical_only: false,
                weights: Weights::default(),
                text: None,
            };
            let hits = retriever.search(&req, &history, &HashSet::new());
            let ranked = t.elapsed().as_secs_f64() * 1000.0;
            let loaded = retriever
                .load(hits.iter().map(|h| h.doc))
                .expect("a state in memory is always at hand");
            let pkg = build_package(&PackageInput {
                files: None,
                format: sno_protocol::context::AnswerFormat::Markdown,
                query: q,
                loaded: &loaded,
                hits: &hits,
                as_of: sno_protocol::query::AsOfCommit {
                    commit: head.commit.to_hex(),
                    branch: head.branch.clone(),
                },
                head_differs: None,
                edited: None,
                semantic_off_reason: None,
                scope: None,
                max_tokens: 2000,
                read: &read,
            });
            // Round 0 warms caches (pages, allocator); it is not counted.
            if round > 0 {
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                rank_ms.push(ranked);
                tokens += pkg.header.completeness.tokens;
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    let lines: u64 = state.values().map(|r| u64::from(r.lines)).sum();
    println!("files {}", state.len());
    println!("lines {lines}");
    println!("symbols {}", docs.len());
    println!("load_state_s {load_s:.3}");
    println!("model_load_s {model_s:.3}");
    println!("embed_all_symbols_s {embed_s:.3}");
    println!("build_indexes_s {build_s:.3}");
    println!("queries {}", latencies.len());
    println!("p50_ms {:.2}", pct(&latencies, 0.5));
    println!("p95_ms {:.2}", pct(&latencies, 0.95));
    println!("max_ms {:.2}", latencies.last().copied().unwrap_or(0.0));
    rank_ms.sort_by(f64::total_cmp);
    println!("rank_p50_ms {:.2}", pct(&rank_ms, 0.5));
    println!("rank_p95_ms {:.2}", pct(&rank_ms, 0.95));
    println!("mean_tokens {}", tokens / latencies.len().max(1));
}
