//! The parse floor: the least work a tree-sitter indexer must do on a tree.
//!
//! Walks a directory (skipping `.git` and `.sno`), keeps the files whose
//! language sno knows, reads them, and parses every byte of each with
//! tree-sitter on all cores. Nothing is extracted, stored or hashed.
//!
//! `--as-sno` parses as `sno init` does instead: long tables of literals
//! left out (`sno_extract::literal_runs`) and each tree built in scratch
//! memory dropped at once (`sno_extract::parse_once`). Whatever `sno init`
//! spends above that figure is its own overhead (extraction, storage).
//!
//! It parses with the allocator sno itself uses (mimalloc, for Rust and for
//! tree-sitter's C core), so the ratio compares extraction and storage with
//! parsing, not one allocator with another. `SNO_FLOOR_ALLOCATOR=system`
//! leaves tree-sitter on the C library's malloc, for reference.
//!
//! `--check-tables` parses nothing for time: it checks that every file with
//! literal tables gives the same facts with them left out as parsed whole,
//! prints how many files and bytes that concerns, and fails otherwise.
//!
//! Usage: sno-parse-floor [--as-sno | --check-tables] DIR
//! Prints `key value` lines (totals, then one `lang.NAME files lines` line per
//! language). Lines are counted like `wc -l`: the number of `\n` bytes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use sno_journal::model::Language;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn walk(dir: &Path, out: &mut Vec<(PathBuf, Language)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?; // does not follow symlinks; they are skipped
        let path = entry.path();
        if kind.is_dir() {
            if entry.file_name() != ".git" && entry.file_name() != ".sno" {
                walk(&path, out)?;
            }
        } else if kind.is_file() {
            if let Some(lang) = path.to_str().and_then(Language::from_path) {
                out.push((path, lang));
            }
        }
    }
    Ok(())
}

/// `--check-tables`: the exit code (0 when every file with literal tables
/// gives the same facts with them left out as parsed whole).
fn check_tables_of(found: &[(PathBuf, Language)]) -> i32 {
    let (mut with_tables, mut left_out, mut differ) = (0usize, 0usize, 0usize);
    for (path, lang) in found {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let tables = sno_extract::literal_runs::tables(*lang, &bytes);
        if tables.is_empty() {
            continue;
        }
        with_tables += 1;
        left_out += tables.iter().map(|t| t.left_out.len()).sum::<usize>();
        if sno_extract::extract(*lang, &bytes) != sno_extract::extract_whole(*lang, &bytes) {
            differ += 1;
            eprintln!(
                "sno-parse-floor: facts differ with tables left out: {}",
                path.display()
            );
        }
    }
    println!("files {}", found.len());
    println!("files_with_tables {with_tables}");
    println!("bytes_left_out {left_out}");
    println!("files_whose_facts_differ {differ}");
    i32::from(differ > 0)
}

fn main() {
    let system = std::env::var("SNO_FLOOR_ALLOCATOR").is_ok_and(|v| v == "system");
    if !system {
        sno_extract::allocator::use_mimalloc();
    }
    // sno runs without transparent huge pages; so does its floor.
    sno_extract::allocator::transparent_huge_pages_off();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let as_sno = args.first().is_some_and(|a| a == "--as-sno");
    let check_tables = args.first().is_some_and(|a| a == "--check-tables");
    if as_sno || check_tables {
        args.remove(0);
    }
    let (Some(root), 1) = (args.first().map(PathBuf::from), args.len()) else {
        eprintln!("usage: sno-parse-floor [--as-sno | --check-tables] DIR");
        std::process::exit(2);
    };
    let parse = |lang, bytes: &[u8]| {
        if as_sno {
            sno_extract::parse_once(lang, bytes)
        } else {
            sno_extract::parse_full(lang, bytes).is_some()
        }
    };
    let start = Instant::now();

    // 1. Walk and read everything into memory (sequential: this is not what we measure).
    let mut found = Vec::new();
    if let Err(e) = walk(&root, &mut found) {
        eprintln!("sno-parse-floor: walking {}: {e}", root.display());
        std::process::exit(1);
    }
    found.sort();
    if check_tables {
        std::process::exit(check_tables_of(&found));
    }
    let files: Vec<(Language, Vec<u8>)> = found
        .into_iter()
        .filter_map(|(path, lang)| match std::fs::read(&path) {
            Ok(bytes) => Some((lang, bytes)),
            Err(e) => {
                eprintln!("sno-parse-floor: skipping {}: {e}", path.display());
                None
            }
        })
        .collect();
    let read_wall = start.elapsed();

    // 2. Parse on all cores: each thread takes the next file index until none are left.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let failures = AtomicUsize::new(0);
    let parse_start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((lang, bytes)) = files.get(i) else {
                    break;
                };
                if !parse(*lang, bytes) {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let parse_wall = parse_start.elapsed();
    let total_wall = start.elapsed();

    // 3. Report.
    let lines_of = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    let lines: usize = files.iter().map(|(_, b)| lines_of(b)).sum();
    println!("files {}", files.len());
    println!("bytes {bytes}");
    println!("lines {lines}");
    println!("parse_failures {}", failures.into_inner());
    println!("threads {threads}");
    println!("allocator {}", if system { "system" } else { "mimalloc" });
    println!("mode {}", if as_sno { "as-sno" } else { "every-byte" });
    println!("read_wall_s {:.3}", read_wall.as_secs_f64());
    println!("parse_wall_s {:.3}", parse_wall.as_secs_f64());
    println!("total_wall_s {:.3}", total_wall.as_secs_f64());
    for lang in Language::ALL {
        let of_lang = files.iter().filter(|(l, _)| *l == lang);
        let (n, l) = of_lang.fold((0, 0), |(n, l), (_, b)| (n + 1, l + lines_of(b)));
        if n > 0 {
            println!("lang.{} {n} {l}", lang.name());
        }
    }
}
