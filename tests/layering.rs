//! The crate layering ARCHITECTURE.md states, checked on the manifests: a
//! crate may not reach (directly or through another workspace crate) the
//! crates its layer must know nothing of.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every workspace crate: its name, and the names of its normal
/// dependencies (workspace crates by their package name).
fn manifests() -> BTreeMap<String, BTreeSet<String>> {
    let ws: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for member in ws["workspace"]["members"].as_array().unwrap() {
        let dir = root().join(member.as_str().unwrap());
        let m: toml::Value =
            toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap()).unwrap();
        let name = m["package"]["name"].as_str().unwrap().to_string();
        let deps = m
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

/// All crates `name` depends on, through workspace crates.
fn reach(all: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(c) = todo.pop() {
        for d in all.get(&c).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

fn assert_free_of(all: &BTreeMap<String, BTreeSet<String>>, krate: &str, banned: &[&str]) {
    let reached = reach(all, krate);
    assert!(!reached.is_empty(), "{krate} is not a workspace crate");
    for b in banned {
        let hit: Vec<&String> = reached
            .iter()
            .filter(|r| {
                r.as_str() == *b || (b.ends_with('*') && r.starts_with(b.trim_end_matches('*')))
            })
            .collect();
        assert!(hit.is_empty(), "{krate} must not depend on {b}: {hit:?}");
    }
}

#[test]
fn the_journal_knows_nothing_of_json_async_or_parsing() {
    let all = manifests();
    assert_free_of(
        &all,
        "sno-journal",
        &["serde_json", "tokio", "ractor", "tree-sitter*", "gix"],
    );
}

#[test]
fn plumbing_knows_nothing_of_mcp_or_actors() {
    let all = manifests();
    for krate in [
        "sno-query",
        "sno-extract",
        "sno-index",
        "sno-redact",
        "sno-agent",
        "sno-protocol",
    ] {
        assert_free_of(&all, krate, &["rmcp", "ractor", "sno-engine", "sno-serve"]);
    }
    assert_free_of(&all, "sno-engine", &["rmcp", "sno-serve", "clap"]);
}

#[test]
fn the_binary_calls_only_the_engine_the_front_end_and_protocol() {
    let all = manifests();
    let direct: BTreeSet<String> = all["sno"]
        .iter()
        .filter(|d| d.starts_with("sno-"))
        .cloned()
        .collect();
    assert_eq!(
        direct,
        ["sno-engine", "sno-protocol", "sno-serve"]
            .map(String::from)
            .into(),
        "bin's sno crates"
    );
}

#[test]
fn the_binary_stays_thin() {
    let mut lines = 0;
    for e in std::fs::read_dir(root().join("bin/src")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            lines += std::fs::read_to_string(&p).unwrap().lines().count();
        }
    }
    assert!(
        lines <= 2000,
        "bin/src has {lines} lines; the application belongs in the engine"
    );
}
