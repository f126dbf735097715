//! Extraction must stay close to bare parsing. Run against a real corpus with
//! `SNO_EXTRACT_CORPUS=ops/bench/.cache/corpus-full cargo test --release -p
//! sno-extract -- --ignored extraction_stays_near_the_parse_floor --nocapture`.

use std::path::Path;
use std::time::{Duration, Instant};

use sno_journal::model::Language;

fn collect(dir: &Path, out: &mut Vec<(Language, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != ".git" {
                collect(&path, out);
            }
        } else if let Some(lang) = path.to_str().and_then(Language::from_path) {
            if let Ok(bytes) = std::fs::read(&path) {
                out.push((lang, bytes));
            }
        }
    }
}

/// Best of five runs of `f` over all files.
fn best_of_five(files: &[(Language, Vec<u8>)], f: impl Fn(Language, &[u8]) -> usize) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            let n: usize = files.iter().map(|(l, b)| f(*l, b)).sum();
            std::hint::black_box(n);
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
#[ignore = "timing; needs SNO_EXTRACT_CORPUS and --release"]
fn extraction_stays_near_the_parse_floor() {
    let root = std::env::var("SNO_EXTRACT_CORPUS").expect("set SNO_EXTRACT_CORPUS");
    let mut files = Vec::new();
    collect(Path::new(&root), &mut files);
    assert!(!files.is_empty(), "no source files under {root}");
    let mut total = (Duration::ZERO, Duration::ZERO);
    for lang in Language::ALL {
        let subset: Vec<_> = files.iter().filter(|(l, _)| *l == lang).cloned().collect();
        if subset.is_empty() {
            continue;
        }
        let parse = best_of_five(&subset, |l, b| {
            crate::parse(l, b).map_or(0, |t| t.root_node().child_count() as usize)
        });
        let extract = best_of_five(&subset, |l, b| crate::extract(l, b).symbols.len());
        let bytes: usize = subset.iter().map(|(_, b)| b.len()).sum();
        eprintln!(
            "{:<10} files {:>5} {:>6} KB  parse {:>8.1?}  extract {:>8.1?}  ratio {:.2}",
            lang.name(),
            subset.len(),
            bytes / 1024,
            parse,
            extract,
            extract.as_secs_f64() / parse.as_secs_f64()
        );
        total.0 += parse;
        total.1 += extract;
    }
    let ratio = total.1.as_secs_f64() / total.0.as_secs_f64();
    eprintln!(
        "total parse {:.1?} extract {:.1?} ratio {ratio:.2}",
        total.0, total.1
    );
    assert!(ratio < 1.3, "extraction costs {ratio:.2}x bare parsing");
}

/// Leaving literal tables out of the parse changes no fact of any file of a
/// real corpus. Run with `SNO_EXTRACT_CORPUS=ops/bench/.cache/corpus-full
/// cargo test --release -p sno-extract -- --ignored tables_left_out
/// --nocapture`. (`ops/bench/index.sh` checks the same with
/// `sno-parse-floor --check-tables`, without a test build.)
#[test]
#[ignore = "needs SNO_EXTRACT_CORPUS"]
fn tables_left_out_change_no_fact_of_a_corpus() {
    let root = std::env::var("SNO_EXTRACT_CORPUS").expect("set SNO_EXTRACT_CORPUS");
    let mut files = Vec::new();
    collect(Path::new(&root), &mut files);
    assert!(!files.is_empty(), "no source files under {root}");
    let (mut with_tables, mut left_out_bytes, mut differ) = (0, 0, Vec::new());
    for (lang, bytes) in &files {
        let tables = crate::literal_runs::tables(*lang, bytes);
        if tables.is_empty() {
            continue;
        }
        with_tables += 1;
        left_out_bytes += tables.iter().map(|t| t.left_out.len()).sum::<usize>();
        if crate::extract(*lang, bytes) != crate::extract_whole(*lang, bytes) {
            differ.push(String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned());
        }
    }
    eprintln!(
        "{} files, {with_tables} with literal tables, {} KB left out of parsing",
        files.len(),
        left_out_bytes / 1024
    );
    assert!(
        differ.is_empty(),
        "facts differ in {} files: {differ:?}",
        differ.len()
    );
}
