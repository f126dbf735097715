//! The sign-bit scan against the exact scan, on a head's stored vectors:
//! how much of the exact nearest it keeps and how long each takes.
//!
//! Usage: sno-signs-bench VECTORS_FILE MODEL_DIR QUERIES_FILE
//! (VECTORS_FILE is `.sno/cache/<head>/vectors-<model>.i8`.)

use std::collections::HashSet;
use std::time::Instant;

use sno_search_bench::{args_or_usage, pct};

use sno_query::semantic::{Embedder, SemanticIndex, FLAT_MAX};

fn main() {
    let args = args_or_usage(3, "sno-signs-bench VECTORS_FILE MODEL_DIR QUERIES_FILE");
    let vectors = sno_query::head_cache::read_vectors_file(std::path::Path::new(&args[1]), None)
        .expect("stored vectors");
    let embedder = Embedder::load(&args[2]).expect("model");
    let queries: Vec<String> = std::fs::read_to_string(&args[3])
        .expect("queries")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let n = vectors.ids().len();
    let t = Instant::now();
    let exact = SemanticIndex::build_with(vectors.clone(), FLAT_MAX, usize::MAX);
    let exact_build = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    let signs = SemanticIndex::build_with(vectors, FLAT_MAX, 0);
    let signs_build = t.elapsed().as_secs_f64() * 1000.0;
    let (mut te, mut ts) = (Vec::new(), Vec::new());
    let (mut kept200, mut kept10, mut first) = (0.0, 0.0, 0usize);
    for q in &queries {
        let v = embedder
            .embed(&[sno_query::words::words(q)])
            .pop()
            .unwrap_or_default();
        let t = Instant::now();
        let want = exact.search(&v, 200);
        te.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let got = signs.search(&v, 200);
        ts.push(t.elapsed().as_secs_f64() * 1000.0);
        let w200: HashSet<usize> = want.iter().map(|x| x.0).collect();
        let w10: HashSet<usize> = want.iter().take(10).map(|x| x.0).collect();
        kept200 +=
            got.iter().filter(|x| w200.contains(&x.0)).count() as f64 / w200.len().max(1) as f64;
        kept10 += got.iter().take(10).filter(|x| w10.contains(&x.0)).count() as f64
            / w10.len().max(1) as f64;
        first += usize::from(got.first().map(|x| x.0) == want.first().map(|x| x.0));
    }
    te.sort_by(f64::total_cmp);
    ts.sort_by(f64::total_cmp);
    let k = queries.len() as f64;
    println!("vectors: {n}, queries: {}", queries.len());
    println!("build ms: exact {exact_build:.0}, signs {signs_build:.0}");
    println!(
        "exact scan ms: p50 {:.1} p95 {:.1}",
        pct(&te, 0.5),
        pct(&te, 0.95)
    );
    println!(
        "signs scan ms: p50 {:.1} p95 {:.1}",
        pct(&ts, 0.5),
        pct(&ts, 0.95)
    );
    println!(
        "signs keep of the exact top 200: {:.3}, top 10: {:.3}, same first: {:.3}",
        kept200 / k,
        kept10 / k,
        first as f64 / k
    );
}
