//! `sno search`: the context package, its budget and its trust header.

mod support;

use support::*;

fn indexed() -> Repo {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    repo
}

/// A lexical-only search has no use for a model: it does not read one (nor,
/// for the default model, go to the network for it). A model that cannot
/// be read is the witness: a search that wants it says so, this one does
/// not, and answers alike.
#[test]
fn a_lexical_only_search_reads_no_model() {
    let repo = indexed();
    let broken = tempfile::tempdir().unwrap();
    let model = broken.path().to_str().unwrap();
    let o = sno_in(
        repo.path(),
        &["search", "load config file", "--lexical-only", "--json"],
        &[("SNO_MODEL", model)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("semantic search is off"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["items"][0]["qualified_name"], "Config.load");
    assert_eq!(v["header"]["semantic_off_reason"], "--lexical-only");
    // The same search with the model wanted tries it, and says it failed.
    let o = sno_in(
        repo.path(),
        &["search", "load config file", "--json"],
        &[("SNO_MODEL", model)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("semantic search is off"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn package_has_a_trust_header_and_whole_symbols() {
    let repo = indexed();
    let o = sno_in(
        repo.path(),
        &[
            "search",
            "load config file",
            "--lexical-only",
            "--max-tokens",
            "2000",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    let head = repo.head();
    assert!(md.starts_with(&format!("> sno {} (", &head[..7])), "{md}");
    // At HEAD, the usual, goes unsaid.
    assert!(!md.lines().next().unwrap().contains("HEAD"), "{md}");
    assert!(md.contains(" · lexical+structural"), "{md}");
    assert!(md.contains(" · full: "), "{md}");
    // The usual goes unsaid: no parse-state words when every file parsed.
    assert!(!md.contains("syntax errors"), "{md}");
    // Its title names it (at its decorator's line) and counts the methods
    // next to it, quoted in the same block.
    assert!(
        md.contains("\n`Config.load` (+2 more) app/config.py:12\n```python\n"),
        "{md}"
    );
    assert!(md.contains("\n    def get(self, key):"), "{md}");
    // Each line as the file has it: the first keeps its indentation like
    // the rest.
    assert!(
        md.contains("```python\n    def __init__(self, values):\n"),
        "{md}"
    );
    // The whole method, its decorator to its last line, and each line once.
    assert!(md.contains("    @classmethod\n    def load(cls, path):\n        \"\"\"Read a config file.\"\"\"\n        return cls(json.loads(read_text(path)))"), "{md}");
    assert_eq!(md.matches("def __init__(self, values):").count(), 1, "{md}");

    let v = repo.sno_json(&["search", "load config file", "--lexical-only", "--json"]);
    let first = &v["items"][0];
    assert_eq!(first["qualified_name"], "Config.load");
    assert!(first["signals"]["lexical"].as_f64().unwrap() > 0.0);
    assert_eq!(first["signals"]["semantic"], 0.0, "semantic is off");
    assert_eq!(v["header"]["semantic_off_reason"], "--lexical-only");
    // Structural expansion brings in what Config.load calls.
    let read_text = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["qualified_name"] == "read_text")
        .expect("neighbour");
    assert!(
        read_text["signals"]["structural"].as_f64().unwrap() > 0.0,
        "{read_text}"
    );
}

#[test]
fn a_tight_budget_is_never_silent() {
    let repo = indexed();
    let v = repo.sno_json(&[
        "search",
        "config",
        "--lexical-only",
        "--json",
        "--max-tokens",
        "260",
    ]);
    let c = &v["header"]["completeness"];
    assert!(
        c["status"] == "budget_limited" || c["status"] == "truncated",
        "{v}"
    );
    assert!(c["omitted"].as_u64().unwrap() >= 1);
    assert!(c["tokens"].as_u64().unwrap() <= 260, "{c}");
    // What did not fit is listed (or counted), never dropped silently.
    let listed = v["omitted"].as_array().map_or(0, Vec::len) as u64;
    let more = v["more"].as_u64().unwrap_or(0);
    assert!(listed >= 1, "{v}");
    assert_eq!(listed + more, c["omitted"].as_u64().unwrap(), "{v}");
    assert!(v["omitted"][0]["path"].is_string(), "{v}");
    // (Markdown quotes neighbouring items once, so it needs less.)
    // Its header counts them; a line naming none would repeat it.
    let md = stdout(&repo.sno(&["search", "config", "--lexical-only", "--max-tokens", "150"]));
    let head = md.lines().next().unwrap_or_default();
    let counted = head
        .split(" · ")
        .find_map(|part| {
            let (shown, of) = part.strip_suffix(" items")?.split_once(" of ")?;
            Some((shown.parse::<u64>().ok()?, of.parse::<u64>().ok()?))
        })
        .unwrap_or_else(|| panic!("{md}"));
    assert!(counted.0 < counted.1, "{md}");
    assert!(!md.contains("not included: "), "{md}");

    // Just under what the whole class needs: it is cut to fit, not dropped.
    let ask = |budget: u64| {
        repo.sno_json(&[
            "search",
            "Config",
            "--lexical-only",
            "--json",
            "--max-tokens",
            &budget.to_string(),
            "--limit",
            "1",
        ])
    };
    let whole = ask(2000)["header"]["completeness"]["tokens"]
        .as_u64()
        .unwrap();
    let budget = whole - 30;
    let v = ask(budget);
    assert_eq!(v["header"]["completeness"]["status"], "truncated", "{v}");
    assert_eq!(v["items"][0]["truncated"], true, "{v}");
    assert!(v["items"][0]["source"]
        .as_str()
        .unwrap()
        .ends_with("… [cut]"));
    assert!(
        v["header"]["completeness"]["tokens"].as_u64().unwrap() <= budget,
        "{v}"
    );
}

/// One item asked and shown cut: in markdown the header says nothing was
/// left out but an item was cut, and the item's code says where.
#[test]
fn a_cut_with_nothing_left_out_says_so() {
    let repo = Repo::new();
    write_long_invoice(&repo);
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let o = repo.sno(&[
        "search",
        "settle_invoice",
        "--lexical-only",
        "--max-tokens",
        "300",
        "--limit",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    let head = md.lines().next().unwrap_or_default();
    assert!(head.contains(" · 1 item(s), 1 cut · "), "{md}");
    assert!(md.contains("… [cut]"), "{md}");
    assert!(!md.contains("not included"), "{md}");
}

/// The paths of a JSON answer's items, in rank order.
fn item_paths(v: &serde_json::Value) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap().to_string())
        .collect()
}

/// `--scope` names a place as files are named: from the directory the
/// command runs in, or absolute; a place outside the repository is
/// refused. Both used to match no path and answer nothing, in silence.
#[test]
fn a_scope_is_named_from_here_and_one_outside_is_refused() {
    let repo = indexed();
    let search = |dir: &std::path::Path, scope: &str| {
        let o = sno_in(
            dir,
            &[
                "search",
                "run server",
                "--json",
                "--lexical-only",
                "--scope",
                scope,
            ],
            &[],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let from_root = search(repo.path(), "server");
    assert!(!item_paths(&from_root).is_empty(), "{from_root}");
    assert!(item_paths(&from_root)
        .iter()
        .all(|p| p.starts_with("server")));
    // The same place from inside it, and by its absolute path.
    let inside = repo.path().join("server");
    for v in [
        search(&inside, "."),
        search(repo.path(), inside.to_str().unwrap()),
    ] {
        assert_eq!(item_paths(&v), item_paths(&from_root), "{v}");
        assert_eq!(v["header"]["scope"], "server", "{v}");
    }
    // A repository-relative prefix still works from a subdirectory.
    assert_eq!(
        item_paths(&search(&inside, "server")),
        item_paths(&from_root)
    );
    let outside = tempfile::tempdir().unwrap();
    for scope in [outside.path().to_str().unwrap(), "../.."] {
        let o = sno_in(&inside, &["search", "run", "--json", "--scope", scope], &[]);
        assert_error_code(&o, "SNO-PATH-OUTSIDE");
    }
    // A scope under which nothing is indexed is a mistake to say, with
    // the nearest places the index holds, not an empty answer.
    let o = repo.sno(&["search", "run", "--json", "--scope", "servr/"]);
    assert_error_code(&o, "SNO-UNKNOWN-FILE");
    let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let near = e["error"]["did_you_mean"].to_string();
    assert!(near.contains("server/"), "{e}");
    assert_error_code(
        &repo.sno(&["search", "run", "--scope", "nowhere/at/all"]),
        "SNO-UNKNOWN-FILE",
    );
}

#[test]
fn scope_and_a_missing_model_are_reported() {
    let repo = indexed();
    let v = repo.sno_json(&[
        "search",
        "run server",
        "--json",
        "--scope",
        "server/",
        "--model",
        "/nonexistent/model",
    ]);
    assert!(
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["path"].as_str().unwrap().starts_with("server/")),
        "{v}"
    );
    assert!(!v["items"].as_array().unwrap().is_empty());
    assert_eq!(v["header"]["scope"], "server/");
    assert_eq!(v["header"]["match_type"], "lexical+structural");
    assert!(v["header"]["semantic_off_reason"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/model"));
    let o = sno_in(
        repo.path(),
        &["search", "run", "--model", "/nonexistent/model"],
        &[],
    );
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("semantic search is off"),
        "said once, on stderr: {}",
        stderr(&o)
    );

    // The answer names a stale index.
    repo.write("extra.py", "def extra():\n    pass\n");
    repo.commit("not indexed yet");
    let v = repo.sno_json(&["search", "server", "--json", "--lexical-only"]);
    assert_eq!(v["header"]["head_differs"], repo.head());
}

#[test]
fn a_model_directory_turns_the_semantic_signal_on() {
    let repo = Repo::new();
    repo.write(
        "fleet.py",
        "def automobile_registry():\n    \"\"\"Vehicle records.\"\"\"\n    return []\n\n\ndef forecast_rain():\n    return 0\n",
    );
    repo.write("money.py", "def settle_invoice(bill):\n    return bill\n");
    repo.commit("corpus");
    repo.sno_json(&["init", "--json"]);
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();

    // "car" is no word of the corpus: lexical search finds nothing...
    let lex = repo.sno_json(&["search", "car", "--json", "--lexical-only"]);
    assert!(lex["items"].as_array().is_none_or(Vec::is_empty), "{lex}");
    // ...the model knows it is near "automobile".
    let v = repo.sno_json(&["search", "car", "--json", "--model", m]);
    assert_eq!(v["header"]["match_type"], "hybrid", "{v}");
    assert_eq!(
        v["items"][0]["qualified_name"], "automobile_registry",
        "{v}"
    );
    // Found by meaning alone: the pool's best semantic match, no word.
    let semantic = |i: &serde_json::Value| i["signals"]["semantic"].as_f64().unwrap();
    let items = v["items"].as_array().unwrap();
    assert!(semantic(&items[0]) > 0.0, "{v}");
    assert!(
        items.iter().all(|i| semantic(i) <= semantic(&items[0])),
        "{v}"
    );
    assert_eq!(items[0]["signals"]["lexical"], 0.0, "{v}");
    // SNO_MODEL works the same way.
    let o = sno_in(
        repo.path(),
        &["search", "payment", "--json"],
        &[("SNO_MODEL", m)],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");
}

#[test]
fn a_first_embedding_over_more_files_than_a_batch_covers_each_once() {
    // The views are embedded a batch of files at a time (64): many more
    // files than that, each with its own function, are all embedded, once.
    let repo = Repo::new();
    for i in 0..530 {
        repo.write(
            &format!("pkg/m{i:03}.py"),
            format!("def handler_{i}(x):\n    return x + {i}\n"),
        );
    }
    // In the second batch (files are read in path order): found only by
    // its meaning, so only if its vector was stored.
    repo.write(
        "pkg/m517.py",
        "def settle_invoice(bill):\n    return bill\n",
    );
    repo.commit("many");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    let first = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(first["semantic"]["symbols"], 530, "{first}");
    assert_eq!(first["semantic"]["embedded"], 530, "{first}");
    // Stored up to the head: a second run embeds nothing again.
    let second = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(second["semantic"]["embedded"], 0, "{second}");
    let v = repo.sno_json(&["search", "payment", "--json", "--model", m]);
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");
}

#[test]
fn a_file_of_more_symbols_than_one_embedding_takes_has_them_all_embedded() {
    // Texts are embedded 4096 at a time: a file of more symbols is split,
    // and a function past the split is found by its meaning.
    let repo = Repo::new();
    let mut body = String::new();
    for i in 0..4200 {
        if i == 4150 {
            body.push_str("def settle_invoice(bill):\n    return bill\n\n\n");
        }
        body.push_str(&format!("def handler_{i}(x):\n    return x + {i}\n\n\n"));
    }
    repo.write("bindings.py", body);
    repo.commit("generated");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    let first = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(first["semantic"]["symbols"], 4201, "{first}");
    assert_eq!(first["semantic"]["embedded"], 4201, "{first}");
    let v = repo.sno_json(&["search", "payment", "--json", "--model", m]);
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");
}

/// A large head's first embedding is made by its search parts, which read
/// every file's text anyway, instead of by a pass of its own over them; it
/// is stored as the embedder stores one, so the next commit embeds only
/// its new text.
#[test]
fn a_large_heads_first_embedding_is_made_with_its_search_parts() {
    let repo = Repo::new();
    for i in 0..2000 {
        repo.write(
            &format!("pkg/m{i:04}.py"),
            format!("def handler_{i}(x):\n    return x + {i}\n"),
        );
    }
    repo.write("docs/guide.md", "# Guide\n\nHow to settle a bill.\n");
    repo.commit("many");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    let o = sno_in(
        repo.path(),
        &["init", "--json", "--model", m],
        &[("SNO_LOG", "sno_engine=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = plain_log(&o);
    assert!(
        log.contains("the head's first embedding made with its parts"),
        "{log}"
    );
    let init: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Symbols only, as the embedder counts them (the section is embedded
    // and stored, not counted).
    assert_eq!(init["semantic"]["enabled"], true, "{init}");
    assert_eq!(init["semantic"]["symbols"], 2000, "{init}");
    assert_eq!(init["semantic"]["embedded"], 2000, "{init}");
    assert_eq!(init["semantic"]["reused"], 0, "{init}");
    // The next commit embeds its own new text only: the vectors and the
    // files' counts were stored.
    repo.write(
        "pkg/money.py",
        "def settle_invoice(bill):\n    return bill\n",
    );
    repo.commit("money");
    let next = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(next["semantic"]["embedded"], 1, "{next}");
    assert_eq!(next["semantic"]["symbols"], 2001, "{next}");
    assert_eq!(next["semantic"]["reused"], 2000, "{next}");
    let v = repo.sno_json(&["search", "payment", "--json", "--model", m]);
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");
}

#[test]
fn init_stores_vectors_once_and_embeds_only_new_text() {
    let repo = Repo::new();
    repo.write(
        "fleet.py",
        "def automobile_registry():\n    return []\n\n\ndef forecast_rain():\n    return 0\n",
    );
    repo.write("keep.py", "def harbour_master():\n    return 1\n");
    repo.write("gone.py", "def lighthouse_keeper():\n    return 2\n");
    repo.commit("one");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    let first = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(first["semantic"]["enabled"], true, "{first}");
    assert_eq!(first["semantic"]["symbols"], 4);
    assert_eq!(first["semantic"]["embedded"], 4);

    // A body-only change keeps the embedded text: nothing to embed again.
    // A new process has no counts of the files the commit left alone:
    // they are counted from the views, and a deleted file's are gone.
    repo.write("fleet.py", "def automobile_registry():\n    return [1]\n\n\ndef forecast_rain():\n    return 0\n\n\ndef settle_invoice(bill):\n    return bill\n");
    repo.remove("gone.py");
    repo.commit("two");
    let second = repo.sno_json(&["init", "--json", "--model", m]);
    assert_eq!(
        second["semantic"]["embedded"], 1,
        "only settle_invoice is new: {second}"
    );
    assert_eq!(second["semantic"]["symbols"], 4, "{second}");
    assert_eq!(second["semantic"]["reused"], 3);
    let v = repo.sno_json(&["search", "payment", "--json", "--model", m]);
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");

    // Without a usable model, init says so and still succeeds.
    let third = repo.sno_json(&["init", "--json", "--model", "/no/such/model"]);
    assert_eq!(third["semantic"]["enabled"], false);
    assert!(third["semantic"]["off_reason"]
        .as_str()
        .unwrap()
        .contains("/no/such/model"));
}

#[test]
fn a_hub_model_id_is_read_from_the_hugging_face_cache() {
    let repo = Repo::new();
    repo.write("fleet.py", "def automobile_registry():\n    return []\n");
    repo.commit("one");
    repo.sno_json(&["init", "--json", "--model", "/no/model"]);
    let hf = tempfile::tempdir().unwrap();
    tiny_model(
        &hf.path()
            .join("hub/models--acme--tiny-static/snapshots/0123abcd"),
    );
    let home = hf.path().to_str().unwrap();
    let o = sno_in(
        repo.path(),
        &["search", "car", "--json", "--model", "acme/tiny-static"],
        &[("HF_HOME", home)],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["header"]["match_type"], "hybrid", "{v}");
    assert_eq!(v["items"][0]["qualified_name"], "automobile_registry");

    // Offline and not cached: said once, clearly, and nothing fails.
    let o = sno_in(
        repo.path(),
        &["search", "car", "--json", "--model", "acme/not-cached"],
        &[("HF_HOME", home), ("SNO_OFFLINE", "1")],
    );
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["header"]["semantic_off_reason"]
            .as_str()
            .unwrap()
            .contains("offline and not in the Hugging Face cache"),
        "{v}"
    );
    assert_eq!(stderr(&o).matches("semantic search is off").count(), 1);
}

#[test]
fn files_edited_since_the_indexed_commit_are_named_in_the_header() {
    let repo = indexed();
    let ask = |extra: &[&str]| {
        let mut args = vec!["search", "load config", "--json", "--lexical-only"];
        args.extend_from_slice(extra);
        repo.sno_json(&args)
    };
    let edited = |v: &serde_json::Value| -> Vec<String> {
        v["header"]["edited_in_work_tree"]
            .as_array()
            .unwrap_or_else(|| panic!("checked at the indexed head: {v}"))
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect()
    };
    let v = ask(&[]);
    assert_eq!(edited(&v), Vec::<String>::new());
    let paths = item_paths(&v);
    for p in ["app/config.py", "app/main.py"] {
        assert!(paths.contains(&p.to_string()), "{p} in {paths:?}");
    }
    let md = |repo: &Repo| stdout(&repo.sno(&["search", "load config", "--lexical-only"]));
    assert!(!md(&repo).contains("changed on disk"));

    // Uncommitted: an edit of the same size (hashed, not just measured)
    // and a deletion among the package's files.
    let config = std::fs::read_to_string(repo.path().join("app/config.py")).unwrap();
    repo.write(
        "app/config.py",
        config.replace("Holds settings.", "Keeps settings"),
    );
    repo.remove("app/main.py");
    let v = ask(&[]);
    assert_eq!(edited(&v), ["app/config.py", "app/main.py"], "{v}");
    let package = md(&repo);
    assert!(
        package.contains("changed on disk since the indexed commit")
            && package.contains("`app/config.py`"),
        "{package}"
    );
    // The source shown is still the committed text (and says so).
    assert!(!package.contains("Keeps settings"));
    // So does a symbol's source asked for by name.
    let shown = repo.sno_json(&["show", "Config", "--json"]);
    assert_eq!(shown["edited_in_work_tree"], true, "{shown}");
    let o = repo.sno(&["show", "Config"]);
    assert!(stderr(&o).contains("changed on disk"), "{}", stderr(&o));
    assert!(stdout(&o).contains("Holds settings."));
    let other = repo.sno_json(&["show", "read_text", "--json"]);
    assert_eq!(other["edited_in_work_tree"], false, "{other}");
    // `--at` the indexed head is the same answer, checked the same way.
    assert_eq!(
        edited(&ask(&["--at", "HEAD"])),
        ["app/config.py", "app/main.py"]
    );
    // Restored: nothing is flagged.
    repo.git(&["checkout", "--", "."]);
    assert_eq!(edited(&ask(&[])), Vec::<String>::new());

    // An answer about an older commit is not compared with the work tree:
    // null, not an empty list.
    repo.write("app/extra.py", "def extra():\n    pass\n");
    repo.commit("extra");
    repo.sno_json(&["init", "--json"]);
    let v = ask(&["--at", "HEAD~1"]);
    assert!(v["header"]["edited_in_work_tree"].is_null(), "{v}");
    // It is what was asked: it says so, and tells no one to re-index an
    // index that is at HEAD.
    assert_eq!(v["header"]["past"], true, "{v}");
    assert!(v["header"]["head_differs"].is_null(), "{v}");
    let package = stdout(&repo.sno(&["search", "load config", "--at", "HEAD~1"]));
    let first = package.lines().next().unwrap_or_default();
    assert!(
        first.contains("a past commit, as asked") && !first.contains("not at HEAD"),
        "{package}"
    );
    // At HEAD it says neither.
    let head = stdout(&repo.sno(&["search", "load config"]));
    let first = head.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("> sno ") && !first.contains("past") && !first.contains("HEAD"),
        "{head}"
    );
}

#[test]
fn docs_and_config_are_answered_in_sections() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.write(
        "CONTRIBUTING.md",
        "# Contributing\n\nThanks for helping.\n\n## Running the tests\n\nRun `make check` from the root; it runs pytest and the linters.\n\n## Releases\n\nTag the commit and push the tag.\n",
    );
    repo.write(
        ".github/workflows/ci.yml",
        "name: CI\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make check\n",
    );
    repo.write(".env", "API_TOKEN=hunter2\n");
    repo.commit("docs");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&[
        "search",
        "how do I run the tests",
        "--json",
        "--lexical-only",
    ]);
    let first = &v["items"][0];
    assert_eq!(first["path"], "CONTRIBUTING.md", "{v}");
    assert_eq!(first["kind"], "doc", "{v}");
    assert_eq!(first["qualified_name"], "Running the tests", "{v}");
    assert!(
        first["source"].as_str().unwrap().contains("make check"),
        "{v}"
    );
    let v = repo.sno_json(&["search", "CI jobs steps", "--json", "--lexical-only"]);
    let ci = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"] == ".github/workflows/ci.yml")
        .unwrap_or_else(|| panic!("the CI file: {v}"));
    assert_eq!(ci["kind"], "config");
    // A secret file is never a section: it is not even read.
    let v = repo.sno_json(&["search", "API_TOKEN hunter2", "--json", "--lexical-only"]);
    assert!(!v["items"].to_string().contains("hunter2"), "{v}");
    assert!(!v["items"].to_string().contains(".env"), "{v}");
}

#[test]
fn a_qualified_name_finds_its_definition_first() {
    let repo = Repo::new();
    repo.write("go.mod", "module example.com/chi\n");
    repo.write(
        "middleware/middleware.go",
        "package middleware\n\n// New makes a middleware.\nfunc New(name string) *Middleware { return &Middleware{} }\n\ntype Middleware struct{}\n",
    );
    repo.write(
        "mux.go",
        "package chi\n\n// Middlewares lists the middleware stack of the mux and its middlewares.\nfunc (mx *Mux) Middlewares() []Middleware { return mx.middlewares }\n\ntype Mux struct{ middlewares []Middleware }\n",
    );
    repo.write(
        "src/method.rs",
        "pub struct InvalidMethod { _p: () }\n\nimpl InvalidMethod {\n    fn new() -> InvalidMethod { InvalidMethod { _p: () } }\n}\n\nimpl std::fmt::Debug for InvalidMethod {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { f.write_str(\"x\") }\n}\n",
    );
    // `$` starts names in TypeScript (zod's `$ZodRegistry`): the class is
    // named in the method's qualified name, and ranks above it on words.
    repo.write(
        "src/registries.ts",
        "export class $ZodRegistry {\n  _map = new Map<string, number>();\n  add(key: string): this { this._map.set(key, 1); return this; }\n  has(key: string): boolean { return this._map.has(key); }\n}\n\nexport interface $ZodCheckInternals {\n  check(payload: unknown): void;\n  onattach: (() => void)[];\n}\n\nexport const registry = new $ZodRegistry();\n",
    );
    // A C function declared in a header and defined in a source file.
    repo.write(
        "include/reader.h",
        "/* Reads what the socket has into the context's buffer. */\nint buffer_read(struct ctx *c);\nint buffer_write(struct ctx *c);\n",
    );
    repo.write(
        "src/reader.c",
        "#include \"reader.h\"\n\nint buffer_read(struct ctx *c) {\n    int n = recv(c->fd, c->buf, sizeof(c->buf), 0);\n    c->len += n;\n    return n;\n}\n",
    );
    repo.commit("code");
    repo.sno_json(&["init", "--json"]);
    let first = |q: &str| {
        // With the model when SNO_MODEL names one: meaning must not pull
        // a namesake above the definition.
        let v = repo.sno_json(&["search", q, "--json"]);
        (
            v["items"][0]["path"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            v["items"][0]["line"].as_u64().unwrap_or(0),
        )
    };
    // A package-qualified Go name: the function, not the word's other users.
    assert_eq!(
        first("middleware.New"),
        ("middleware/middleware.go".into(), 4)
    );
    // A type's definition before its impl blocks.
    assert_eq!(first("InvalidMethod"), ("src/method.rs".into(), 1));
    // Names that start with `$`: the method, and an interface's method
    // signature, not the class that holds the words.
    assert_eq!(first("$ZodRegistry.has"), ("src/registries.ts".into(), 4));
    assert_eq!(
        first("$ZodCheckInternals.check"),
        ("src/registries.ts".into(), 8)
    );
    // The definition before the header's prototype; a name only a header
    // declares is still found there.
    assert_eq!(first("buffer_read"), ("src/reader.c".into(), 3));
    assert_eq!(first("buffer_write"), ("include/reader.h".into(), 3));
}

#[test]
fn the_lexical_index_carried_across_commits_answers_as_a_rebuild_does() {
    // Each head's lexical index starts from the previous head's, updated
    // for the files that changed; after edits, a rename and a deletion it
    // must answer exactly as one built from nothing.
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.write(
        "docs/guide.md",
        "# Guide\n\nHow to load the config.\n\n## Retries\n\nBack off.\n",
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let queries = [
        "load config",
        "parse_port",
        "read text file",
        "retry with back off",
        "merge environment overrides",
        "render the value",
    ];
    let ask = |q: &str| -> Vec<(String, String)> {
        let r = repo.sno_json(&["search", q, "--lexical-only", "--json", "--limit", "8"]);
        r["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|x| {
                (
                    x["path"].as_str().unwrap().to_string(),
                    x["qualified_name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // A first search stores the index of this head.
    assert!(!ask("load config").is_empty());
    let cache = repo.path().join(".sno/cache");
    repo.write(
        "app/config.py",
        "import os\n\n\ndef merge_env(values):\n    \"\"\"Merge environment overrides.\"\"\"\n    return dict(values, **os.environ)\n",
    );
    repo.git(&["mv", "app/util.py", "app/text_io.py"]);
    repo.remove("web/http.js");
    repo.write(
        "docs/guide.md",
        "# Guide\n\n## Retries\n\nRetry with back off.\n",
    );
    repo.commit("edit, rename, delete");
    repo.sno_json(&["init", "--json"]);
    // The next search updates the stored index: three files replaced (the
    // edit, the renamed file's new path, the doc), two removed.
    let o = sno_in(
        repo.path(),
        &["search", "load config", "--lexical-only"],
        &[("SNO_LOG", "sno_query=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = plain_log(&o);
    assert!(
        log.contains("lexical index updated replaced=3 removed=2"),
        "{log}"
    );
    let carried: Vec<_> = queries.iter().map(|q| ask(q)).collect();
    // Exactly one head's cache is kept.
    let heads = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(heads, 1);
    std::fs::remove_dir_all(&cache).unwrap();
    let rebuilt: Vec<_> = queries.iter().map(|q| ask(q)).collect();
    assert_eq!(carried, rebuilt);
    // The edit is found, the deleted file is not, and the renamed one is
    // found under its new path.
    assert_eq!(carried[4][0].1, "merge_env");
    let all: Vec<&(String, String)> = carried.iter().flatten().collect();
    assert!(all
        .iter()
        .all(|(p, _)| p != "web/http.js" && p != "app/util.py"));
    assert!(all.iter().any(|(p, _)| p == "app/text_io.py"), "{all:?}");
}

/// A lexical-only search's markdown answer within `max_tokens`.
fn lexical_markdown(repo: &Repo, query: &str, max_tokens: usize) -> String {
    stdout(&repo.sno(&[
        "search",
        query,
        "--lexical-only",
        "--max-tokens",
        &max_tokens.to_string(),
    ]))
}

/// A lexical-only search's JSON answer.
fn lexical_json(repo: &Repo, query: &str) -> serde_json::Value {
    repo.sno_json(&["search", query, "--json", "--lexical-only"])
}

/// The names of a JSON answer's items, best first.
fn ranked_names(v: &serde_json::Value) -> Vec<String> {
    v["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["qualified_name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn rank_of(names: &[String], name: &str) -> usize {
    names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("{name} not ranked: {names:?}"))
}

#[test]
fn a_question_in_words_finds_code_spelled_with_short_forms() {
    let repo = Repo::new();
    repo.write(
        "src/map.rs",
        "pub struct Map { entries: Vec<(String, i64)> }\n\nimpl Map {\n    pub fn values(&self) -> impl Iterator<Item = &i64> {\n        self.entries.iter().map(|e| &e.1)\n    }\n\n    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut i64> {\n        self.entries.iter_mut().map(|e| &mut e.1)\n    }\n}\n",
    );
    repo.commit("map");
    repo.sno_json(&["init", "--json"]);
    // Nothing in the code says "mutable": only `mut` does.
    let v = repo.sno_json(&[
        "search",
        "an iterator over the mutable values",
        "--lexical-only",
        "--json",
    ]);
    let names = ranked_names(&v);
    assert!(
        rank_of(&names, "Map.values_mut") < rank_of(&names, "Map.values"),
        "{names:?}"
    );
    // And the other way: a short form asked for finds the long word.
    repo.write(
        "src/settings.py",
        "def load_configuration(path):\n    return open(path).read()\n\n\ndef load_path(path):\n    return path\n",
    );
    repo.commit("settings");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&[
        "search",
        "load the cfg from a path",
        "--lexical-only",
        "--json",
    ]);
    let names = ranked_names(&v);
    assert_eq!(names[0], "load_configuration", "{names:?}");
}

#[test]
fn a_question_in_words_finds_a_name_spelled_with_its_phrase_initials() {
    let repo = Repo::new();
    // Two writers that differ only in the byte order their name spells by
    // its initials: `le` for "little-endian", `be` for "big-endian". Asked
    // both ways, so ties broken by file order cannot pass both questions
    // (without the initials the first one fails).
    repo.write(
        "src/buf.rs",
        "pub struct Buf { out: Vec<u8> }\n\nimpl Buf {\n    pub fn put_u32_be(&mut self, n: u32) {\n        self.out.extend(n.to_be_bytes());\n    }\n\n    pub fn put_u32_le(&mut self, n: u32) {\n        self.out.extend(n.to_le_bytes());\n    }\n}\n",
    );
    repo.commit("buf");
    repo.sno_json(&["init", "--json"]);
    for (question, first, second) in [
        (
            "writes an unsigned 32 bit integer in little-endian byte order",
            "Buf.put_u32_le",
            "Buf.put_u32_be",
        ),
        (
            "writes an unsigned 32 bit integer in big endian byte order",
            "Buf.put_u32_be",
            "Buf.put_u32_le",
        ),
    ] {
        let v = repo.sno_json(&["search", question, "--lexical-only", "--json"]);
        let names = ranked_names(&v);
        assert!(
            rank_of(&names, first) < rank_of(&names, second),
            "{question}: {names:?}"
        );
    }
}

#[test]
fn a_question_in_words_finds_code_named_with_the_words_code_uses_for_them() {
    let repo = Repo::new();
    // The question says "writes" and "removes"; the code says `put` and
    // `delete`. Each pair of functions shares every other word, so only
    // the related word tells them apart.
    repo.write(
        "src/codec.rs",
        "pub struct Codec { out: Vec<u8> }\n\nimpl Codec {\n    pub fn peek_header(&self) -> u32 {\n        u32::from_be_bytes([self.out[0], self.out[1], self.out[2], self.out[3]])\n    }\n\n    pub fn put_header(&mut self, n: u32) {\n        self.out.extend(n.to_be_bytes());\n    }\n}\n",
    );
    repo.write(
        "app/cache.py",
        "def delete_entry(cache, key):\n    cache.pop(key)\n\n\ndef touch_entry(cache, key):\n    cache[key] = cache.get(key)\n",
    );
    repo.commit("codec and cache");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&["search", "writes the header", "--lexical-only", "--json"]);
    let names = ranked_names(&v);
    assert!(
        rank_of(&names, "Codec.put_header") < rank_of(&names, "Codec.peek_header"),
        "{names:?}"
    );
    let v = repo.sno_json(&[
        "search",
        "removes an entry from the cache",
        "--lexical-only",
        "--json",
    ]);
    let names = ranked_names(&v);
    assert!(
        rank_of(&names, "delete_entry") < rank_of(&names, "touch_entry"),
        "{names:?}"
    );
    // "Returns" leads to a getter, one way.
    repo.write(
        "app/settings.py",
        "def timeout_message(timeout):\n    return f\"timed out: {timeout}\" if timeout else \"\"\n\n\ndef get_timeout(settings):\n    return settings.seconds\n",
    );
    repo.commit("settings");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&["search", "returns the timeout", "--lexical-only", "--json"]);
    let names = ranked_names(&v);
    assert!(
        rank_of(&names, "get_timeout") < rank_of(&names, "timeout_message"),
        "{names:?}"
    );
}

#[test]
fn a_question_in_words_puts_behaviour_above_a_declaration_of_the_same_words() {
    let repo = Repo::new();
    repo.write(
        "pool.go",
        "package pool\n\ntype Pool struct {\n\tblockingTask chan func()\n}\n\nfunc (p *Pool) Spawn(job func()) {\n\tgo job()\n}\n\nfunc (p *Pool) SpawnBlocking(job func()) {\n\tp.blockingTask <- job\n}\n",
    );
    repo.commit("pool");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&[
        "search",
        "spawn a blocking task",
        "--lexical-only",
        "--json",
    ]);
    let names = ranked_names(&v);
    assert_eq!(names[0], "Pool.SpawnBlocking", "{names:?}");
    // A name asked for is still found first, whatever it declares.
    let v = repo.sno_json(&["search", "blockingTask", "--lexical-only", "--json"]);
    assert_eq!(ranked_names(&v)[0], "Pool.blockingTask", "{v}");
}

#[test]
fn a_text_that_describes_an_action_finds_the_code_before_a_type_of_its_words() {
    let repo = Repo::new();
    // A type and a function of the same words; the type's text is shorter,
    // so BM25 puts it first on the words alone.
    repo.write("steps.py", "class LoadConfig:\n    pass\n");
    repo.write("setup.py", "def load_config(path):\n    return path\n");
    repo.commit("config");
    repo.sno_json(&["init", "--json"]);
    // A doc comment's sentence, as an agent writes or pastes it: what is
    // done is asked for.
    assert_ranked_first(&repo, "Loads the config", "load_config");
    assert_ranked_first(&repo, "load config", "load_config");
    // Words that do not say what is done, and the type's name, leave the
    // type first.
    assert_ranked_first(&repo, "config loading", "LoadConfig");
    assert_ranked_first(&repo, "LoadConfig", "LoadConfig");
}

/// A query word that is a definition's name is also in its signature and
/// its body; counted in full in each field, it outweighed a definition
/// whose body says most of the question.
#[test]
fn a_body_that_says_the_question_comes_before_a_name_of_one_of_its_words() {
    let repo = Repo::new();
    repo.write(
        "client.py",
        "class Client:\n    def timeout(self, timeout=None):\n        timeout = timeout or self.timeout\n        return timeout\n\n    def reconnect(self):\n        for attempt in range(self.retries):\n            connection = self.open_connection()\n            if connection.wait(self.deadline):\n                return connection\n            self.retry_after(attempt)\n        raise TimeoutError\n",
    );
    repo.commit("client");
    repo.sno_json(&["init", "--json"]);
    assert_ranked_first(
        &repo,
        "retry opening a connection until a timeout",
        "Client.reconnect",
    );
    // The name alone still finds its definition.
    assert_ranked_first(&repo, "timeout", "Client.timeout");
}

#[test]
fn declarations_are_found_by_their_words_and_not_embedded() {
    let repo = Repo::new();
    repo.write(
        "fleet.py",
        "AUTOMOBILE_LIMIT = 4\n\n\nclass Garage:\n    vehicle_count = 0\n\n    def automobile_registry(self):\n        return []\n",
    );
    repo.commit("one");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    let init = repo.sno_json(&["init", "--json", "--model", m]);
    // The class and its method; not the constant or the field.
    assert_eq!(init["semantic"]["symbols"], 2, "{init}");
    assert_eq!(init["semantic"]["embedded"], 2, "{init}");
    // "car" is no word of the code: only meaning finds anything, and
    // only what is embedded has a meaning.
    let v = repo.sno_json(&["search", "car", "--json", "--model", m]);
    let mut found: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["signals"]["semantic"].as_f64().unwrap_or(0.0) > 0.0)
        .map(|i| i["qualified_name"].as_str().unwrap())
        .collect();
    found.sort();
    assert_eq!(found, ["Garage", "Garage.automobile_registry"], "{v}");
    // Their names still find them.
    let v = repo.sno_json(&["search", "AUTOMOBILE_LIMIT", "--json", "--model", m]);
    assert_eq!(v["items"][0]["qualified_name"], "AUTOMOBILE_LIMIT", "{v}");
}

/// Log lines of a `sno` run, without the terminal colours they carry.
fn plain_log(o: &std::process::Output) -> String {
    let mut log = String::new();
    let mut in_escape = false;
    for c in stderr(o).chars() {
        match (in_escape, c) {
            (false, '\u{1b}') => in_escape = true,
            (true, 'm') => in_escape = false,
            (false, c) => log.push(c),
            _ => {}
        }
    }
    log
}

#[test]
fn vectors_carried_across_commits_answer_as_vectors_made_from_nothing() {
    // A new head's vectors start from the previous head's: the unchanged
    // files' are taken over, the changed ones' made again, and the answers
    // are those of vectors made from nothing.
    let repo = Repo::new();
    repo.write(
        "fleet.py",
        "def automobile_registry():\n    return []\n\n\ndef forecast_rain():\n    return 0\n",
    );
    repo.write("money.py", "def settle_invoice(bill):\n    return bill\n");
    repo.write(
        "vault.py",
        "def hash_password(secret):\n    return secret\n",
    );
    repo.commit("one");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    repo.sno_json(&["init", "--json", "--model", m]);
    let ask = |q: &str| -> Vec<(String, f64)> {
        let v = repo.sno_json(&["search", q, "--json", "--model", m]);
        v["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|x| {
                (
                    x["qualified_name"].as_str().unwrap().to_string(),
                    x["signals"]["semantic"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(ask("car")[0].0, "automobile_registry");
    // A file before the others (every document number moves), one edited,
    // one removed.
    repo.write("aaa.py", "def weather_forecast():\n    return 1\n");
    repo.write(
        "money.py",
        "def settle_invoice(bill):\n    return bill\n\n\ndef pay_bill(payment):\n    return payment\n",
    );
    repo.remove("vault.py");
    repo.commit("two");
    repo.sno_json(&["init", "--json", "--model", m]);
    let o = sno_in(
        repo.path(),
        &["search", "car", "--model", m],
        &[("SNO_LOG", "sno_engine=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = plain_log(&o);
    assert!(log.contains("carried_files=1"), "fleet.py alone: {log}");
    let queries = ["car", "payment", "rain", "password"];
    let carried: Vec<_> = queries.iter().map(|q| ask(q)).collect();
    std::fs::remove_dir_all(repo.path().join(".sno/cache")).unwrap();
    let remade: Vec<_> = queries.iter().map(|q| ask(q)).collect();
    assert_eq!(carried, remade);
    assert_eq!(carried[0][0].0, "automobile_registry");
    assert!(carried[3].iter().all(|(n, _)| n != "hash_password"));
}

#[test]
fn init_makes_a_large_heads_search_parts_so_the_first_search_only_opens_them() {
    // From 2,000 files init makes the head's search parts (on 8.4M lines
    // the first search took a minute to); a smaller head's first search
    // makes its own.
    let repo = Repo::new();
    for i in 0..2000 {
        repo.write(
            &format!("pkg/m{i:04}.py"),
            format!("def handler_{i}(x):\n    return x + {i}\n"),
        );
    }
    repo.write(
        "pkg/money.py",
        "def settle_invoice(bill):\n    return bill\n",
    );
    repo.commit("many");
    let o = sno_in(repo.path(), &["init", "--json"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sno: building the search index of 2001 files"),
        "{}",
        stderr(&o)
    );
    let init: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let head = init["commit"].as_str().unwrap().to_string();
    let cache = repo.path().join(".sno/cache");
    let made: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&head))
        .collect();
    assert_eq!(made.len(), 1, "the head's parts after init: {made:?}");
    assert!(cache.join(&made[0]).join("docs.map").is_file());
    let o = sno_in(
        repo.path(),
        &["search", "settle invoice", "--json"],
        &[("SNO_LOG", "sno_engine=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = plain_log(&o);
    assert!(
        log.contains("head searched from its stored parts")
            && !log.contains("streamed from its views"),
        "{log}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["items"][0]["qualified_name"], "settle_invoice", "{v}");
    // Init again with nothing new: the parts are there, nothing is built.
    let o = sno_in(repo.path(), &["init", "--json"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("building the search index"),
        "{}",
        stderr(&o)
    );

    // Two files fewer (1,999): init leaves them to the first search.
    repo.remove("pkg/m0000.py");
    repo.remove("pkg/m0001.py");
    repo.commit("fewer");
    let o = sno_in(repo.path(), &["init", "--json"], &[]);
    assert!(
        !stderr(&o).contains("building the search index"),
        "{}",
        stderr(&o)
    );
    let init: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let head = init["commit"].as_str().unwrap().to_string();
    assert!(std::fs::read_dir(&cache).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(&head)));
}

#[test]
fn a_head_searched_from_its_stored_parts_answers_as_its_loaded_state_does() {
    // The first search of a head builds its indexes from its state and
    // stores them; later processes search from what is stored and read
    // only the answer's files. Both must give the same answers, on the
    // first head and after edits, a rename and a deletion, whose parts are
    // advanced from the first head's.
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.write(
        "docs/guide.md",
        "# Guide\n\nHow to load settings.\n\n## Running\n\nStart the server with run.\n",
    );
    repo.commit("seed");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    repo.sno_json(&["init", "--json", "--model", m]);
    let queries = [
        "load config file",
        "Config.load",
        "config",
        "start the server",
        "read_text",
        "car",
    ];
    // The first search of a head with nothing to start from streams its
    // parts from the views; with the test hook, it makes them from its
    // loaded state, which is what the streamed parts are compared with.
    let answer_with = |q: &str, scope: Option<&str>, from_state: bool| -> (String, String) {
        let mut args = vec!["search", q, "--json", "--model", m, "--max-tokens", "3000"];
        if let Some(s) = scope {
            args.extend(["--scope", s]);
        }
        let hook = if from_state { "1" } else { "0" };
        let o = sno_in(
            repo.path(),
            &args,
            &[
                ("SNO_LOG", "sno_engine=debug"),
                ("SNO_TEST_PARTS_FROM_STATE", hook),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let mut v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        // The header counts its own tokens; all else must be equal.
        v["header"]["completeness"]["tokens"] = serde_json::Value::Null;
        (v.to_string(), plain_log(&o))
    };
    let answer = |q: &str, scope: Option<&str>| answer_with(q, scope, false);
    let cache = repo.path().join(".sno/cache");
    // A lexical index carried to a new head holds its replaced documents
    // as deleted until tantivy merges its segments, and BM25 counts them;
    // a segment a tenth of which is deleted is merged. The commit below
    // replaces a third of the documents: the answers are equal, scores
    // included.
    let compare = |round: &str| {
        // Stored parts: the state is never loaded.
        let mut stored = Vec::new();
        for q in queries {
            for scope in [None, Some("app/")] {
                let (a, log) = answer(q, scope);
                assert!(
                    log.contains("head searched from its stored parts")
                        && !log.contains("state loaded"),
                    "{round}: {q}: {log}"
                );
                stored.push(a);
            }
        }
        // The same head from its state, every part made from nothing.
        let (mut whole, mut streamed) = (Vec::new(), Vec::new());
        for q in queries {
            for scope in [None, Some("app/")] {
                let _ = std::fs::remove_dir_all(&cache);
                let (a, log) = answer_with(q, scope, true);
                assert!(log.contains("state loaded"), "{round}: {q}: {log}");
                whole.push(a);
                // And streamed from the views, with nothing to start from.
                let _ = std::fs::remove_dir_all(&cache);
                let (a, log) = answer(q, scope);
                assert!(
                    log.contains("head's parts streamed from its views")
                        && !log.contains("state loaded"),
                    "{round}: {q}: {log}"
                );
                streamed.push(a);
            }
        }
        for (s, w) in stored.iter().zip(&whole) {
            assert_eq!(s, w, "{round}");
        }
        // Made from nothing either way: the same answers.
        assert_eq!(streamed, whole, "{round}");
        stored
    };
    // The first search streams the head's parts and stores them.
    let (first, log) = answer("load config file", None);
    assert!(
        log.contains("head's parts streamed from its views") && !log.contains("state loaded"),
        "{log}"
    );
    let one = compare("first head");
    assert_eq!(one[0], first);
    assert!(one[0].contains("Config.load"), "{}", one[0]);
    // Edits, a rename, a deletion; the new head's parts start from the
    // previous head's.
    repo.write(
        "app/util.py",
        "def read_text(path):\n    \"\"\"Return the file's text.\"\"\"\n    return open(path).read()\n\n\ndef automobile_registry():\n    return []\n",
    );
    repo.git(&["mv", "web/http.js", "web/transport.js"]);
    repo.remove("server/server.go");
    repo.commit("edit, rename, delete");
    repo.sno_json(&["init", "--json", "--model", m]);
    // The new head's parts are the first head's advanced by the files the
    // commit touched: its state is not loaded.
    let (_, log) = answer("car", None);
    assert!(
        log.contains("head's parts advanced from the previous head's")
            && !log.contains("state loaded"),
        "{log}"
    );
    let two = compare("second head");
    let car = &two[queries.len() * 2 - 2];
    assert!(car.contains("automobile_registry"), "{car}");
    assert!(two.iter().all(|a| !a.contains("server/server.go")));
}

/// (rank, name, path, line) of everything an answer ranked: the items in
/// it and those it lists as left out.
fn ranked_entries(v: &serde_json::Value) -> Vec<(u64, String, String, u64)> {
    let mut all: Vec<(u64, String, String, u64)> = ["items", "omitted"]
        .iter()
        .filter_map(|k| v[*k].as_array())
        .flatten()
        .map(|i| {
            (
                i["rank"].as_u64().unwrap(),
                i["qualified_name"].as_str().unwrap_or_default().to_string(),
                i["path"].as_str().unwrap_or_default().to_string(),
                i["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn ranks_do_not_depend_on_the_limit() {
    let repo = indexed();
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let m = model.path().to_str().unwrap();
    for query in [
        "config",
        "load config file",
        "http server handler",
        "Config.load",
    ] {
        for mode in [["--lexical-only", ""], ["--model", m]] {
            let args = |limit: &'static str| {
                let mut a = vec![
                    "search",
                    query,
                    "--json",
                    "--max-tokens",
                    "8000",
                    "--limit",
                    limit,
                ];
                a.extend(mode.iter().filter(|s| !s.is_empty()).copied());
                a
            };
            let few = ranked_entries(&repo.sno_json(&args("3")));
            let many = ranked_entries(&repo.sno_json(&args("40")));
            assert!(!few.is_empty(), "{query}: nothing ranked");
            assert!(many.len() >= few.len(), "{query}: {many:?}");
            assert_eq!(few, many[..few.len()], "{query} {mode:?}");
        }
    }
}

#[test]
fn code_answers_a_question_before_the_tests_that_repeat_its_words() {
    let repo = Repo::new();
    repo.write(
        "client/redirects.py",
        "def follow_redirects(response, history):\n    \"\"\"Follow the redirect a response points to.\"\"\"\n    location = response.headers['location']\n    history.append(location)\n    return location\n",
    );
    repo.write(
        "tests/test_client.py",
        "from client.redirects import follow_redirects\n\n\ndef test_follow_redirects():\n    \"\"\"Follow the redirect location: the location is followed, the redirect kept.\"\"\"\n    history = []\n    location = follow_redirects(FakeRedirect('redirect location'), history)\n    assert location == 'redirect location'\n    assert history == ['redirect location']\n",
    );
    repo.commit("redirects and their test");
    repo.sno_json(&["init", "--json"]);
    let ask = |q: &str, files: bool| {
        let mut args = vec!["search", q, "--json", "--lexical-only"];
        if files {
            args.push("--files");
        }
        repo.sno_json(&args)
    };
    let v = ask("follow the redirect location", false);
    assert_eq!(ranked_names(&v)[0], "follow_redirects", "{v}");
    let v = ask("follow the redirect location", true);
    assert_eq!(v["files"][0]["path"], "client/redirects.py", "{v}");
    // Asked for tests, the test comes first.
    let v = ask("tests that follow the redirect location", false);
    assert_eq!(ranked_names(&v)[0], "test_follow_redirects", "{v}");
    // A name is a name: no prior.
    let v = ask("test_follow_redirects", false);
    assert_eq!(ranked_names(&v)[0], "test_follow_redirects", "{v}");
}

/// A name spelled as one lowercase word of several (`sdsdup`, `sdsfree`:
/// C's way) is found by the words it is made of, where each is a word the
/// repository uses on its own; a name split at underscores is not counted
/// twice for its whole.
#[test]
fn a_question_finds_names_spelled_as_one_word_of_several() {
    let repo = Repo::new();
    repo.write(
        "sds.c",
        "#include \"types/sds.h\"\n\nsds sdsnewlen(const void *init, size_t initlen) {\n    return alloc_block(init, initlen);\n}\n\nsds sdsdup(const sds s) {\n    return sdsnewlen(s, sdslen(s));\n}\n\nvoid sdsfree(sds s) {\n    if (s == NULL) return;\n    release_block(s);\n}\n\nsize_t sdslen(const sds s) {\n    return header_of(s)->len;\n}\n",
    );
    // The type's name comes after the functions made of it in the index
    // (a later path): a start of a compound is looked up past it.
    repo.write("types/sds.h", "typedef char *sds;\n");
    repo.write(
        "pool.c",
        "void *alloc_block(const void *p, size_t n) {\n    return copy_bytes(p, n);\n}\n\nvoid release_block(void *p) {\n    give_back(p);\n}\n\nvoid free_list(struct node *head) {\n    while (head) head = drop_node(head);\n}\n\nstruct node *dup_node(struct node *n) {\n    return clone_node(n);\n}\n",
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let ask = |q: &str| ranked_names(&repo.sno_json(&["search", q, "--lexical-only", "--json"]));
    let names = ask("free an sds string");
    assert_eq!(names[0], "sdsfree", "{names:?}");
    let names = ask("duplicate an sds string");
    assert_eq!(names[0], "sdsdup", "{names:?}");
    // A second process reads the compounds the first one kept, and does
    // not write them again.
    let kept = find_file(&repo.path().join(".sno"), "sno-compounds").expect("compounds kept");
    let written = std::fs::metadata(&kept).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&kept).unwrap();
    assert!(text.contains("\nsdsfree sds free\n"), "{text}");
    assert_eq!(ask("free an sds string")[0], "sdsfree");
    assert_eq!(
        std::fs::metadata(&kept).unwrap().modified().unwrap(),
        written
    );
}

/// A file named `name` somewhere under `dir`.
fn find_file(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    if dir.file_name().is_some_and(|n| n == name) && dir.is_file() {
        return Some(dir.to_path_buf());
    }
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find_map(|e| find_file(&e.path(), name))
}

/// A method ranked above the class around it: the class's quote is its
/// lines the method's block does not already quote (its head above the
/// method; what follows the method runs on in the method's block), so no
/// line is quoted twice and both are in the answer.
#[test]
fn a_class_ranked_after_its_method_does_not_quote_the_method_again() {
    let repo = Repo::new();
    repo.write(
        "store/cache.py",
        "class LruCache:\n    \"\"\"Keeps recent entries.\"\"\"\n\n    def __init__(self, capacity):\n        self.capacity = capacity\n        self.entries = {}\n\n    def size(self):\n        return len(self.entries)\n\n    def evict_oldest_entry(self):\n        oldest = next(iter(self.entries))\n        del self.entries[oldest]\n        return oldest\n\n    def clear(self):\n        self.entries = {}\n",
    );
    repo.write("other.py", "def unrelated():\n    return 0\n");
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&["search", "evict oldest entry", "--lexical-only", "--json"]);
    let names = ranked_names(&v);
    assert_eq!(names[0], "LruCache.evict_oldest_entry", "{v}");
    assert!(names.iter().any(|n| n == "LruCache"), "{v}");
    let md = lexical_markdown(&repo, "evict oldest entry", 2000);
    assert_eq!(md.matches("del self.entries[oldest]").count(), 1, "{md}");
    assert_eq!(md.matches("class LruCache:").count(), 1, "{md}");
    assert_eq!(md.matches("def clear(self):").count(), 1, "{md}");
    // The class's piece stops above the method's block, also where that
    // block grew upward to take in a ranked neighbour (`size`): each
    // line is quoted once.
    assert_eq!(md.matches("def size(self):").count(), 1, "{md}");
    let class_piece = md.split("\n⋮ line 1\n").nth(1).expect("the class's piece");
    let class_piece = class_piece.split("\n```").next().unwrap_or_default();
    assert!(
        class_piece.contains("def __init__(self, capacity):"),
        "{md}"
    );
    assert!(!class_piece.contains("def evict_oldest_entry"), "{md}");
}

/// Ranked methods next to each other in one file are quoted as one block
/// under one title naming them: no code is quoted twice, and the JSON
/// form still has each item on its own.
#[test]
fn neighbouring_items_of_one_file_are_quoted_once() {
    let repo = Repo::new();
    repo.write(
        "geometry/shapes.py",
        "import math\n\n\nclass Plane:\n    def square_area(self, side):\n        return side * side\n\n    def disc_area(self, radius):\n        return math.pi * radius * radius\n\n\n\n\n\ndef far_away_area(w, h):\n    return w * h\n",
    );
    repo.write("other.py", "def unrelated():\n    return 0\n");
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "square area disc area", 2000);
    assert_eq!(md.matches("return side * side").count(), 1, "{md}");
    assert_eq!(md.matches("return math.pi").count(), 1, "{md}");
    assert_eq!(md.matches("return w * h").count(), 1, "{md}");
    // The two methods meet (one blank line apart): one block, its title
    // naming the better one and counting the others; the function four
    // blank lines further down is a piece of its own, in the same fence.
    let title = md
        .lines()
        .find(|l| l.contains("`Plane.square_area`") || l.contains("`Plane.disc_area`"))
        .expect("a title");
    assert!(
        title.starts_with("`Plane.square_area` (+")
            || title.starts_with("`Plane.disc_area` (+")
            || title.starts_with("`Plane`"),
        "{md}"
    );
    // The later piece says where it starts; its code declares it.
    assert!(md.contains("\n⋮ line 15\ndef far_away_area("), "{md}");
    assert_eq!(md.matches("geometry/shapes.py:").count(), 1, "{md}");
    let v = repo.sno_json(&[
        "search",
        "square area disc area",
        "--lexical-only",
        "--json",
        "--max-tokens",
        "2000",
    ]);
    let names: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["qualified_name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Plane.square_area"), "{v}");
    assert!(names.contains(&"Plane.disc_area"), "{v}");
}

/// Files under `dir` with their modification times: what a rebuild would
/// change.
fn files_and_times(dir: &std::path::Path) -> Vec<(String, std::time::SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A past state's search parts are made on the first question about it
/// and kept on disk by commit: the next question, from another process,
/// opens them rather than indexing again, and gets the answer made from
/// nothing. The indexed head's parts are not a past state's.
#[test]
fn a_past_states_search_parts_are_kept_on_disk_by_commit() {
    let repo = indexed();
    let past_commit = repo.head();
    repo.write(
        "app/extra.py",
        "def reload_settings(path):\n    \"\"\"Load the settings file again.\"\"\"\n    return path\n",
    );
    repo.commit("extra");
    repo.sno_json(&["init", "--json"]);
    let past = repo.path().join(".sno/past");
    let ask = |at: &str| {
        repo.sno_json(&[
            "search",
            "load the settings file",
            "--at",
            at,
            "--json",
            "--lexical-only",
        ])
    };
    assert!(!past.exists(), "nothing is made before it is asked for");
    let made = ask("HEAD~1");
    let items = made["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{made}");
    assert!(
        items.iter().all(|i| i["path"] != "app/extra.py"),
        "the past has no later file: {made}"
    );
    let dirs: Vec<_> = std::fs::read_dir(&past).unwrap().flatten().collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let name = dirs[0].file_name().to_string_lossy().into_owned();
    assert!(name.starts_with(&past_commit), "{name} for {past_commit}");
    let lexical = dirs[0].path().join("lexical");
    assert!(lexical.is_dir(), "the lexical index is stored");
    let stored = files_and_times(&lexical);

    let opened = ask(&past_commit);
    assert_eq!(opened["items"], made["items"]);
    assert_eq!(files_and_times(&lexical), stored, "opened, not made again");

    std::fs::remove_dir_all(&past).unwrap();
    let again = ask("HEAD~1");
    assert_eq!(again["items"], made["items"], "made from nothing, the same");

    // The head has parts of its own, elsewhere.
    let head = ask("HEAD");
    assert!(
        head["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"] == "app/extra.py"),
        "{head}"
    );
    assert_eq!(std::fs::read_dir(&past).unwrap().count(), 1);
}

/// A files answer ranks whole files by BM25 too, from an index kept on
/// disk with the head's other parts: made once (from the loaded state, or
/// from the views a batch at a time when the head is searched from its
/// stored parts, never loading the state), opened by later processes, and
/// carried to a new head with the touched files' documents replaced. Each
/// way gives the files and the first one that one made from nothing gives.
#[test]
fn files_answers_rank_whole_files_from_an_index_kept_with_the_head() {
    let repo = Repo::new();
    repo.write(
        "client/redirects.py",
        "def follow(response):\n    \"\"\"Follow a response.\"\"\"\n    return response\n",
    );
    // No symbol at all: only whole-file BM25 can find it.
    repo.write(
        "client/__init__.py",
        "from .redirects import follow  # redirect location handling\n",
    );
    repo.write("client/cookies.py", "def jar():\n    return {}\n");
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let ask = || {
        let o = sno_in(
            repo.path(),
            &[
                "search",
                "redirect location",
                "--files",
                "--json",
                "--lexical-only",
            ],
            &[("SNO_LOG", "sno_engine=debug")],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let files: Vec<String> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        (files, plain_log(&o))
    };
    let files_dirs = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(repo.path().join(".sno/cache"))
            .unwrap()
            .flatten()
            .map(|e| e.path().join("files"))
            .filter(|d| d.is_dir())
            .collect()
    };
    let (first, log) = ask();
    assert!(
        first.contains(&"client/__init__.py".to_string()),
        "{first:?}"
    );
    assert!(log.contains("file index made"), "{log}");
    assert_eq!(files_dirs().len(), 1);

    // Another process opens it.
    let (again, log) = ask();
    assert_eq!(again, first);
    assert!(!log.contains("file index made"), "opened, not made: {log}");

    // Gone, it is made again from the views: the head is searched from
    // its stored parts, and its state is not loaded for it.
    for d in files_dirs() {
        std::fs::remove_dir_all(d).unwrap();
    }
    let (streamed, log) = ask();
    assert_eq!(streamed, first);
    assert!(log.contains("file index made"), "{log}");
    assert!(!log.contains("state loaded"), "{log}");

    // A new head: its index is the previous one's with the touched files'
    // documents replaced.
    repo.write(
        "client/location.py",
        "# Parse the redirect location header.\nHEADER = 'location'\n",
    );
    repo.remove("client/cookies.py");
    repo.commit("location");
    repo.sno_json(&["init", "--json"]);
    let (advanced, log) = ask();
    assert!(
        advanced.contains(&"client/location.py".to_string()),
        "{advanced:?}"
    );
    assert!(!advanced.contains(&"client/cookies.py".to_string()));
    assert!(
        !log.contains("file index made"),
        "advanced, not made: {log}"
    );
    std::fs::remove_dir_all(repo.path().join(".sno/cache")).unwrap();
    let (fresh, _) = ask();
    // The same files, the same first: a deleted document keeps counting in
    // BM25's statistics until tantivy merges its segment, which may swap
    // two files that match alike further down.
    assert_eq!(advanced[0], fresh[0], "{advanced:?} {fresh:?}");
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(advanced.clone()),
        sorted(fresh),
        "the same files as one made from nothing"
    );
}

/// The files `sno search QUERY --files --lexical-only` ranks, best first.
fn ranked_files(repo: &Repo, query: &str) -> Vec<String> {
    let v = repo.sno_json(&["search", query, "--files", "--json", "--lexical-only"]);
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// In a files answer to a question in words, of two files that match
/// alike, the one recent commits keep changing comes first (its symbols'
/// recency and the file's proneness to change, each enough alone): the
/// file a change goes to is, more often than not, one that changed lately.
/// Without them the path order would put the other first, as it does at
/// the first commit.
#[test]
fn files_changed_lately_come_first_among_equal_matches() {
    let repo = Repo::new();
    let body = |name: &str| {
        format!("def {name}(request):\n    \"\"\"Retry the request after a timeout.\"\"\"\n    return request\n")
    };
    // Edits that keep the words and the length: BM25 sees no difference.
    repo.write("net/alpha.py", format!("{}# revision 0\n", body("alpha")));
    repo.write("net/beta.py", format!("{}# revision 0\n", body("beta")));
    repo.commit("both");
    for i in 1..5 {
        repo.write("net/beta.py", format!("{}# revision {i}\n", body("beta")));
        repo.commit(&format!("beta {i}"));
    }
    repo.sno_json(&["init", "--json"]);
    let ranked = |q: &str| ranked_files(&repo, q);
    assert_eq!(
        ranked("retry the request after a timeout"),
        ["net/beta.py", "net/alpha.py"]
    );
    // Past the last change, at the first commit, the two are even again
    // and the path decides.
    let first = repo.git(&["rev-list", "--max-parents=0", "HEAD"]);
    let v = repo.sno_json(&[
        "search",
        "retry the request after a timeout",
        "--files",
        "--json",
        "--lexical-only",
        "--at",
        first.trim(),
    ]);
    assert_eq!(v["files"][0]["path"], "net/alpha.py", "{v}");
}

/// In a files answer to a question in words, of two files that match
/// alike, the one earlier changes with a message like the question changed
/// comes first: "add the Kannada catalogue" goes where "add the Hindi
/// catalogue" and "add the Bengali catalogue" went. The other file changed
/// as often and later, so recency, proneness and the path order all put it
/// first without the messages. Asked again, the facts kept with the head
/// (messages included) answer the same; at a commit before the messages,
/// they count for nothing.
#[test]
fn files_changed_for_a_like_message_come_first_among_equal_matches() {
    let repo = Repo::new();
    let body = |name: &str, rev: u32| {
        format!("def {name}(items):\n    \"\"\"Sort the catalogue entries.\"\"\"\n    return sorted(items)\n# revision {rev}\n")
    };
    repo.write("app/alpha.py", body("alpha", 0));
    repo.write("app/registry.py", body("registry", 0));
    let seed = repo.commit("seed");
    repo.write("app/registry.py", body("registry", 1));
    repo.write("app/hindi.py", "HI = {'hello': 'namaste'}\n");
    repo.commit("Add the Hindi catalogue");
    repo.write("app/alpha.py", body("alpha", 1));
    repo.commit("Tidy imports");
    repo.write("app/registry.py", body("registry", 2));
    repo.write("app/bengali.py", "BN = {'hello': 'nomoskar'}\n");
    repo.commit("Add the Bengali catalogue");
    repo.write("app/alpha.py", body("alpha", 2));
    repo.commit("Tidy imports again");
    repo.sno_json(&["init", "--json"]);
    let asked = "Add the Kannada catalogue";
    let first = ranked_files(&repo, asked);
    assert_eq!(first[..2], ["app/registry.py", "app/alpha.py"], "{first:?}");
    // The second process reads the facts the first kept with the head.
    let cached = std::fs::read_dir(repo.path().join(".sno/cache"))
        .unwrap()
        .flatten()
        .any(|e| e.path().join("history.txt").is_file());
    assert!(cached, "the history facts are kept with the head");
    assert_eq!(ranked_files(&repo, asked), first);
    // At the first commit no message is like it: the path decides.
    let v = repo.sno_json(&[
        "search",
        asked,
        "--files",
        "--json",
        "--lexical-only",
        "--at",
        seed.trim(),
    ]);
    assert_eq!(v["files"][0]["path"], "app/alpha.py", "{v}");
}

/// A follow-up goes where the change it names went: "Touch up PR 41" to
/// the files of the change whose message carries `#41`, "Follow-up to
/// <hash>" to those of that commit, even when earlier messages are more
/// like the question (three "Touch up PR n" changes of another file) and
/// nothing in the files matches its words. A named change's file that
/// defines no symbol (a package's `__init__.py` of imports alone) is
/// brought in too.
#[test]
fn a_files_answer_follows_the_change_a_question_names_by_number_or_hash() {
    let repo = Repo::new();
    // Numbered revisions: a hash's digits, read as words, matched them by
    // chance and put another file first; a hash is not words of code.
    let body = |name: &str, rev: u32| {
        format!("def {name}(items):\n    \"\"\"Sort the entries.\"\"\"\n    return sorted(items)\n# revision {rev}\n")
    };
    for f in ["alpha", "beta", "gamma"] {
        repo.write(&format!("app/{f}.py"), body(f, 0));
    }
    repo.write("app/__init__.py", "from .alpha import alpha\n");
    repo.commit("seed");
    repo.write("app/beta.py", body("beta", 1));
    repo.commit("Cache the sorted entries (#41)");
    repo.write(
        "app/__init__.py",
        "from .alpha import alpha\nfrom .beta import beta\n",
    );
    repo.commit("Export beta from the package (#52)");
    repo.write("app/gamma.py", body("gamma", 1));
    let named = repo.commit("Rename a helper");
    for (rev, pr) in [(1, 17), (2, 23), (3, 30)] {
        repo.write("app/alpha.py", body("alpha", rev));
        repo.commit(&format!("Touch up PR {pr}"));
    }
    repo.sno_json(&["init", "--json"]);
    assert_eq!(ranked_files(&repo, "Touch up PR 41")[0], "app/beta.py");
    assert_eq!(ranked_files(&repo, "Touch up PR 52")[0], "app/__init__.py");
    let follow_up = format!("Follow-up to {}", named.trim());
    let v = repo.sno_json(&["search", &follow_up, "--files", "--json", "--lexical-only"]);
    assert_eq!(v["files"][0]["path"], "app/gamma.py", "{v}");
    // Abbreviated, as git shows it (digits and letters both: seven digits
    // alone are not taken for one), and as the whole question.
    let hex = named.trim();
    let n = (7..=40)
        .find(|&n| {
            let p = &hex[..n];
            p.bytes().any(|b| b.is_ascii_digit()) && p.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .unwrap();
    assert_eq!(
        ranked_files(&repo, &format!("Follow-up to {}", &hex[..n]))[0],
        "app/gamma.py"
    );
    assert_eq!(ranked_files(&repo, &hex[..n])[0], "app/gamma.py");
    // A number no change carries names none: the like messages decide.
    assert_eq!(ranked_files(&repo, "Touch up PR 99")[0], "app/alpha.py");
}

/// A question in words about files is answered by the code before the
/// tests that repeat its words (a change goes to the code; its tests
/// follow), unless it asks for tests.
#[test]
fn a_file_ranking_puts_the_code_before_the_tests_that_repeat_its_words() {
    let repo = Repo::new();
    repo.write(
        "billing/invoice.py",
        "def close_invoice(invoice):\n    \"\"\"Close an invoice that is not paid yet.\"\"\"\n    if invoice.unpaid:\n        invoice.state = 'closed'\n    return invoice\n",
    );
    repo.write(
        "tests/test_invoice.py",
        "from billing.invoice import close_invoice\n\n\ndef test_close_unpaid_invoice():\n    \"\"\"Close an unpaid invoice: the unpaid invoice is closed.\"\"\"\n    invoice = make_unpaid_invoice()\n    assert close_invoice(invoice).state == 'closed'\n\n\ndef test_close_unpaid_invoice_twice():\n    \"\"\"Close an unpaid invoice twice: a closed unpaid invoice stays closed.\"\"\"\n    invoice = close_invoice(make_unpaid_invoice())\n    assert close_invoice(invoice).state == 'closed'\n\n\ndef make_unpaid_invoice():\n    \"\"\"An unpaid invoice to close.\"\"\"\n    return Invoice(unpaid=True)\n",
    );
    repo.commit("invoices");
    repo.sno_json(&["init", "--json"]);
    let ranked = |q: &str| ranked_files(&repo, q);
    assert_eq!(
        ranked("close an unpaid invoice"),
        ["billing/invoice.py", "tests/test_invoice.py"]
    );
    assert_eq!(
        ranked("test closing an unpaid invoice")[0],
        "tests/test_invoice.py"
    );
}

/// A file's ranked pieces are quoted together, in one fence under one
/// title, whatever ranks between them: each later piece opens with a line
/// naming it and where it starts, and the file's path is said once.
#[test]
fn a_files_pieces_are_quoted_together_under_one_title() {
    let repo = Repo::new();
    let filler: String = (0..30).map(|i| format!("X{i} = {i}\n")).collect();
    repo.write(
        "reports/alpha.py",
        format!("def alpha_report(ledger):\n    return ledger.alpha_total()\n\n{filler}\ndef alpha_summary(ledger):\n    return ledger.alpha_total() / 2\n"),
    );
    repo.write(
        "ledger.py",
        "class Ledger:\n    def alpha_total(self):\n        return sum(self.alpha_rows)\n",
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "alpha total", 4000);
    // Three items in two files: two titles, two fences.
    assert_eq!(md.matches("reports/alpha.py:").count(), 1, "{md}");
    assert_eq!(md.matches("ledger.py:").count(), 1, "{md}");
    assert_eq!(md.matches("```python\n").count(), 2, "{md}");
    // The piece that is not the file's first starts inside the fence at
    // a line saying where it is, right where the other piece ends, and
    // its first line of code declares it.
    let later = if md.contains("`alpha_report`") {
        ("alpha_summary", 35, "alpha_total() / 2")
    } else {
        ("alpha_report", 1, "ledger.alpha_total()\n")
    };
    let marker = format!("\n⋮ line {}\ndef {}(", later.1, later.0);
    let at = md
        .find(&marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {md}"));
    let fence_start = md[..at].rfind("```python\n").expect("an open fence");
    assert!(md[fence_start..at].contains("alpha_total"), "{md}");
    assert!(
        !md[fence_start..at].contains("\n```\n"),
        "the piece is inside the first one's fence: {md}"
    );
    assert!(md[at..].contains(later.2), "{md}");
    // Each piece is still an item of its own in the structured fields.
    let v = repo.sno_json(&[
        "search",
        "alpha total",
        "--lexical-only",
        "--json",
        "--max-tokens",
        "4000",
    ]);
    let names = ranked_names(&v);
    for n in ["alpha_report", "alpha_summary", "Ledger.alpha_total"] {
        assert!(names.iter().any(|m| m == n), "{n} in {names:?}");
    }
}

/// The markdown quote of a package opened by a four-backtick fence, up to
/// the fence that closes it.
fn four_backtick_quote(md: &str) -> &str {
    let open = md
        .find("````markdown\n")
        .unwrap_or_else(|| panic!("a four-backtick fence: {md}"));
    let close = open
        + md[open..]
            .find("\n````\n")
            .expect("closed by four backticks");
    &md[open..close]
}

/// Two sections of one markdown file, the second with a fenced example,
/// are quoted in one fence longer than any inside either: the example's
/// fence does not close the quote the first section opened, and the second
/// section is named inside it.
#[test]
fn a_docs_sections_with_fences_of_their_own_stay_one_quote() {
    let repo = Repo::new();
    let filler: String = (0..40)
        .map(|i| format!("Paragraph {i} about nothing in particular.\n\n"))
        .collect();
    repo.write(
        "docs/guide.md",
        format!("# Guide\n\n## Installing the widget\n\nTo install the widget, run widget install --all and install nothing else.\n\n## Other things\n\n{filler}## Upgrading the widget\n\nRun this to upgrade the widget:\n\n```sh\nwidget upgrade --all\n```\n"),
    );
    repo.write("app.py", "def main():\n    return 0\n");
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "install the widget", 4000);
    // The section without a fence ranks first and opens the quote.
    let first = md
        .find("Installing the widget")
        .expect("the install section");
    assert!(
        first
            < md.find("Upgrading the widget")
                .expect("the upgrade section"),
        "{md}"
    );
    assert_eq!(md.matches("docs/guide.md:").count(), 1, "{md}");
    let quote = four_backtick_quote(&md);
    assert!(quote.contains("widget install --all"), "{md}");
    assert!(quote.contains("widget upgrade --all"), "{md}");
    assert!(
        quote.contains("\n⋮ "),
        "the later section is named inside the quote: {md}"
    );
}

/// A quote widened past its block, to the lines before it, keeps one
/// fence longer than any in the lines it gained: the fenced example above
/// the section asked for does not close the quote early (the fence was
/// once made for the block alone).
#[test]
fn a_quote_widened_over_a_fenced_example_keeps_a_longer_fence() {
    let repo = Repo::new();
    repo.write(
        "docs/guide.md",
        "# Guide\n\n## Setup\n\nRun this first:\n\n```sh\nwidget setup --quick\n```\n\n## Frobnicating the gizmo\n\nTo frobnicate the gizmo, call frob with the gizmo.\n",
    );
    // More candidates than a small budget holds: the room past the
    // framing share goes to the first item's surroundings.
    for i in 0..6 {
        repo.write(
            &format!("gizmo_{i}.py"),
            format!("def gizmo_{i}(gizmo):\n    return [gizmo] * {i}\n"),
        );
    }
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "frobnicate the gizmo", 300);
    assert!(
        md.contains("widget setup --quick"),
        "widened over the example: {md}"
    );
    let quote = four_backtick_quote(&md);
    assert!(quote.contains("```sh\nwidget setup --quick\n```"), "{md}");
    assert!(quote.contains("To frobnicate the gizmo"), "{md}");
}

#[test]
fn a_c_function_is_answered_by_its_definition_where_its_header_documents_it() {
    // sds' layout: the header's prototype carries the doc comment, the
    // source file's definition the code. A question in the doc's words is
    // answered by the definition, with the prototype after it.
    let repo = Repo::new();
    repo.write(
        "sds.h",
        "typedef char *sds;\n\n/* Duplicate an sds string. */\nsds sdsdup(const sds s);\n\n/* Free an sds string. */\nvoid sdsfree(sds s);\n",
    );
    repo.write(
        "sds.c",
        "#include \"sds.h\"\n\nsds sdsdup(const sds s) {\n    return sdsnewlen(s, sdslen(s));\n}\n\nvoid sdsfree(sds s) {\n    if (s == NULL) return;\n    s_free((char*)s - sdsHdrSize(s[-1]));\n}\n",
    );
    repo.commit("sds");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&["search", "duplicate a string", "--lexical-only", "--json"]);
    let items: Vec<(String, u64)> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(items[0], ("sds.c".to_string(), 3), "{v}");
    let proto = items.iter().position(|i| *i == ("sds.h".to_string(), 4));
    assert!(proto.is_some_and(|p| p > 0), "{v}");
}

/// At a small budget, a definition that ends its file is quoted with the
/// lines before it (what leads to it) rather than the room going to a
/// second title: the quote says the line it starts at, and its title keeps
/// the definition's own line.
#[test]
fn a_definition_at_its_files_end_is_quoted_with_the_lines_before_it() {
    let repo = Repo::new();
    let constants: String = (0..80)
        .map(|i| format!("DEFAULT_SETTING_{i} = \"value number {i}\"\n"))
        .collect();
    let loader = format!(
        "{constants}\n\ndef load_settings_from_env(environ):\n    return {{k: v for k, v in environ.items() if k.startswith(\"APP_\")}}\n"
    );
    repo.write("settings/loader.py", &loader);
    repo.write(
        "other/env.py",
        "def settings_from_env_file(path):\n    with open(path) as f:\n        return dict(line.split(\"=\", 1) for line in f)\n",
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "load settings from env", 300);
    let def_line = loader
        .lines()
        .position(|l| l.starts_with("def load_settings_from_env"))
        .unwrap()
        + 1;
    assert!(
        md.contains(&format!(
            "`load_settings_from_env` settings/loader.py:{def_line}\n```python\n⋮ line "
        )),
        "{md}"
    );
    assert_eq!(md.matches("```python\n").count(), 1, "one quote: {md}");
    // The line the quote says it starts at is the file's line it quotes.
    let after = md.split("```python\n⋮ line ").nth(1).unwrap();
    let (n, rest) = after.split_once('\n').unwrap();
    let n: usize = n.parse().unwrap_or_else(|_| panic!("{md}"));
    assert!(n < def_line, "{md}");
    assert_eq!(
        rest.lines().next(),
        loader.lines().nth(n - 1),
        "line {n}: {md}"
    );
    // The definition is quoted whole, after the lines before it.
    assert!(
        rest.contains("def load_settings_from_env(environ):\n    return {k: v"),
        "{md}"
    );
    assert!(!md.contains("[cut]"), "{md}");
    let used: usize = md
        .lines()
        .next()
        .and_then(|h| h.rsplit(" · ").next())
        .and_then(|t| t.split('/').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{md}"));
    assert!(used > 250 && used <= 300, "{used}: {md}");
}

/// A commit message asked about files is asked with its subject and the
/// code its body names: the body's prose ("new to github", "doing this
/// right") does not pull in a file that shares those words.
#[test]
fn a_commit_message_asks_with_its_subject_not_its_prose() {
    let repo = Repo::new();
    repo.write(
        "src/locales/index.ts",
        "export { default as en } from \"./en.js\";\nexport { default as fr } from \"./fr.js\";\n",
    );
    repo.write(
        "src/locales/fr.ts",
        "export default function fr() {\n  return { greeting: \"bonjour\", farewell: \"au revoir\" };\n}\n",
    );
    repo.write(
        "src/locales/en.ts",
        "export default function en() {\n  return { greeting: \"hello\", farewell: \"bye\" };\n}\n",
    );
    repo.write(
        "scripts/triage.ts",
        "// Triage: whether a newcomer to github is doing the right thing.\nexport function triageNewcomer(issue) {\n  const newcomer = issue.author.isNew && issue.author.firstTime;\n  const right = issue.labels.includes(\"doing-right\");\n  const wrongYear = issue.body.includes(\"wrong year\");\n  return newcomer && right && !wrongYear;\n}\n",
    );
    repo.commit("locales and a triage script");
    repo.sno_json(&["init", "--json"]);
    let message = "feat(locales): add the German locale\n\nI am new to github and I think I am doing this right; the wrong year was fixed by a newcomer first time.";
    let v = repo.sno_json(&["search", message, "--files", "--lexical-only", "--json"]);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    // Every locale file before the script (which the commit that added
    // them all brings in, by its message's "locales").
    let triage = files.iter().position(|f| *f == "scripts/triage.ts");
    let last_locale = files.iter().rposition(|f| f.starts_with("src/locales/"));
    assert!(
        last_locale.is_some() && triage.is_none_or(|t| Some(t) > last_locale),
        "{files:?}"
    );
}

/// A files answer may be scoped to files that define nothing (scripts,
/// package markers): their text ranks them.
#[test]
fn a_files_answer_is_scoped_to_files_of_no_symbol() {
    let repo = Repo::new();
    repo.write("app/server.py", "def serve():\n    return 1\n");
    repo.write(
        "scripts/deploy.py",
        "import os\nos.system('rsync build/ host:/srv')\n",
    );
    repo.commit("a script of no symbol");
    repo.sno_json(&["init", "--json"]);
    let v = repo.sno_json(&[
        "search",
        "rsync the build",
        "--files",
        "--scope",
        "scripts/",
        "--json",
    ]);
    assert_eq!(v["files"][0]["path"], "scripts/deploy.py", "{v}");
    // For symbols there is nothing under it to find: said, not empty.
    assert_error_code(
        &repo.sno(&["search", "rsync the build", "--scope", "scripts/"]),
        "SNO-UNKNOWN-FILE",
    );
}

/// A question of how to work on the project ("how do I run the tests") is
/// answered by the docs or configuration that say so, even where hundreds
/// of test functions share its words and would fill the lexical pool;
/// one that asks for the tests of something gets them first, and a
/// question about what code does gets the code.
#[test]
fn how_to_run_the_tests_finds_the_makefile_and_tests_for_x_finds_the_tests() {
    let repo = Repo::new();
    repo.write(
        "Makefile",
        ".PHONY: test lint\n\nlint:\n\tgolangci-lint run\n\ntest:\n\t$(info running tests)\n\tgo test -race ./...\n",
    );
    repo.write(
        "router.go",
        "package chi\n\n// Route dispatches a request to the handler registered for its path.\nfunc (r *Router) Route(path string) Handler {\n\treturn r.tree.find(path)\n}\n\nfunc (r *Router) Insert(path string, h Handler) {\n\tr.tree.insert(path, h)\n}\n",
    );
    let mut tests = String::from("package chi\n\nimport \"testing\"\n\n");
    for i in 0..300 {
        tests.push_str(&format!(
            "func TestRunCommand{i}(t *testing.T) {{\n\trunTest(t, \"run test {i}\")\n}}\n\n"
        ));
    }
    repo.write("command_test.go", tests);
    repo.write(
        "router_test.go",
        "package chi\n\nimport \"testing\"\n\nfunc TestRouterInsertAndRoute(t *testing.T) {\n\tr := &Router{}\n\tr.Insert(\"/a\", nil)\n\tr.Route(\"/a\")\n}\n",
    );
    repo.commit("a router, its tests and a Makefile");
    repo.sno_json(&["init", "--json"]);

    let v = lexical_json(&repo, "how do I run the tests");
    let first = &v["items"][0];
    assert_eq!(first["path"], "Makefile", "{v}");
    assert_eq!(first["qualified_name"], "test", "{v}");

    let v = lexical_json(&repo, "where are the tests for the router insert");
    assert_eq!(v["items"][0]["path"], "router_test.go", "{v}");
    let v = lexical_json(&repo, "how does the router insert a path");
    assert_eq!(v["items"][0]["path"], "router.go", "{v}");
}

/// "Where is the Value enum defined": the question names a definition by
/// its name and kind, whose words alone are everywhere ("value" in every
/// other name, "enum" in `deserialize_enum`).
#[test]
fn a_question_that_names_a_definition_and_its_kind_finds_it_first() {
    let repo = Repo::new();
    repo.write(
        "src/value/mod.rs",
        "pub enum Value {\n    Null,\n    Bool(bool),\n    Number(f64),\n}\n",
    );
    let mut de = String::new();
    for name in ["value", "value_ref", "value_mut", "to_value", "from_value"] {
        de.push_str(&format!(
            "pub fn {name}(value: &Value) -> Value {{\n    value.clone()\n}}\n\n"
        ));
    }
    de.push_str(
        "pub fn deserialize_enum(value: Value, variants: &[&str]) -> Value {\n    value\n}\n",
    );
    repo.write("src/de.rs", de);
    repo.commit("values");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(&repo, "where is the Value enum defined");
    assert_eq!(v["items"][0]["qualified_name"], "Value", "{v}");
    assert_eq!(v["items"][0]["kind"], "enum", "{v}");
    // The kind decides between definitions of the name.
    let v = lexical_json(&repo, "where is the Value function defined");
    assert_eq!(v["items"][0]["qualified_name"], "value", "{v}");
    assert_eq!(v["items"][0]["kind"], "function", "{v}");
}

/// "How do I run the tests" is answered by a section that says how to run
/// *the tests*, not by a user guide's section that says "run" a dozen
/// times about something else, however common "test" is in the code
/// (cobra's "PreRun and PostRun Hooks" came before its Makefile).
#[test]
fn a_procedure_is_answered_by_a_section_that_names_what_it_runs() {
    let repo = Repo::new();
    repo.write(
        "Makefile",
        ".PHONY: test\n\ntest: install_deps\n\t$(info running tests)\n\tgo test -v ./...\n\ninstall_deps:\n\tgo mod download\n",
    );
    repo.write(
        "CONTRIBUTING.md",
        "# Contributing\n\n## Running the tests\n\nRun `make test` before sending a change.\n",
    );
    repo.write(
        "site/user_guide.md",
        "# User guide\n\n## PreRun and PostRun Hooks\n\nIt is possible to run functions before or after the main `Run` function of your command. The `PersistentPreRun` and `PreRun` functions run before `Run`. `PersistentPostRun` and `PostRun` run after `Run`. These functions are run in order: `PersistentPreRun`, `PreRun`, `Run`, `PostRun`, `PersistentPostRun`.\n\n## Flags\n\nFlags give a command its options.\n",
    );
    repo.write(
        "command.go",
        "package cobra\n\nfunc (c *Command) Run() error {\n\treturn c.execute()\n}\n",
    );
    let mut tests = String::from("package cobra\n\nimport \"testing\"\n\n");
    for i in 0..300 {
        tests.push_str(&format!(
            "func TestCommand{i}(t *testing.T) {{\n\tcheck(t, {i})\n}}\n\n"
        ));
    }
    repo.write("command_test.go", tests);
    repo.commit("a command, its tests, a Makefile and docs");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(&repo, "how do I run the tests");
    assert_eq!(v["items"][0]["path"], "CONTRIBUTING.md", "{v}");
    let top: Vec<String> = item_paths(&v).into_iter().take(3).collect();
    assert!(!top.contains(&"site/user_guide.md".to_string()), "{v}");
}

/// "Where are the tests for HeaderMap": the type's name is in every name of
/// its code and in none of its tests' (`smoke`, `get_missing`), which only
/// their file's path and bodies tie to it; the tests come first all the
/// same, and a question of what the code does still gets the code.
#[test]
fn tests_for_a_type_come_before_the_type_they_test() {
    let repo = Repo::new();
    repo.write(
        "src/header/map.rs",
        "/// A set of HTTP headers.\npub struct HeaderMap {\n    entries: Vec<(String, String)>,\n}\n\nimpl HeaderMap {\n    /// An empty map.\n    pub fn new() -> HeaderMap {\n        HeaderMap { entries: Vec::new() }\n    }\n\n    /// Inserts a value.\n    pub fn insert(&mut self, k: &str, v: &str) {\n        self.entries.push((k.to_string(), v.to_string()));\n    }\n\n    /// The value of `k`.\n    pub fn get(&self, k: &str) -> Option<&str> {\n        self.entries.iter().find(|e| e.0 == k).map(|e| e.1.as_str())\n    }\n}\n",
    );
    repo.write(
        "tests/header_map.rs",
        "use http::HeaderMap;\n\n#[test]\nfn smoke() {\n    let mut headers = HeaderMap::new();\n    headers.insert(\"hello\", \"world\");\n    assert_eq!(headers.get(\"hello\"), Some(\"world\"));\n}\n\n#[test]\nfn get_missing() {\n    let headers = HeaderMap::new();\n    assert!(headers.get(\"nope\").is_none());\n}\n",
    );
    repo.commit("a map and its tests");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(&repo, "where are the tests for HeaderMap");
    let paths = item_paths(&v);
    assert_eq!(
        paths[..2],
        ["tests/header_map.rs", "tests/header_map.rs"],
        "{v}"
    );
    let v = lexical_json(&repo, "how does HeaderMap insert a value");
    assert_eq!(v["items"][0]["path"], "src/header/map.rs", "{v}");
}

/// A type's impl blocks each repeat its name; after the best of them the
/// others weigh less, so a question about the type gets the type and its
/// methods rather than five `impl HeaderMap` blocks.
#[test]
fn a_types_many_impl_blocks_do_not_fill_the_answer() {
    let repo = Repo::new();
    repo.write(
        "src/lib.rs",
        "/// A map of header names to values.\npub struct HeaderMap { entries: Vec<(String, String)> }\n\nimpl HeaderMap {\n    /// Inserts a header value, replacing the old one.\n    pub fn insert(&mut self, k: String, v: String) { self.entries.push((k, v)); }\n}\nimpl Default for HeaderMap { fn default() -> Self { HeaderMap { entries: Vec::new() } } }\nimpl Clone for HeaderMap { fn clone(&self) -> Self { HeaderMap { entries: self.entries.clone() } } }\nimpl std::fmt::Debug for HeaderMap { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }\nimpl PartialEq for HeaderMap { fn eq(&self, o: &Self) -> bool { self.entries == o.entries } }\n",
    );
    repo.commit("a map");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(&repo, "how does HeaderMap insert a header");
    let top: Vec<(String, String)> = v["items"].as_array().unwrap()[..5]
        .iter()
        .map(|i| {
            (
                i["qualified_name"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(top[0].0, "HeaderMap.insert", "{top:?}");
    assert!(
        top.contains(&("HeaderMap".into(), "struct".into())),
        "{top:?}"
    );
    let impls = top.iter().filter(|(_, k)| k == "impl").count();
    assert_eq!(impls, 1, "one impl block among the first five: {top:?}");
}

/// A short form weighs what its word does, never more: "value" also asks
/// for "val", which is rarer, and one small function repeating `val`
/// answered every question with the word "value" (serde_json's
/// `decode_hex_val_slow` for "convert a struct into a Value").
#[test]
fn a_rare_short_form_does_not_outweigh_the_word_asked() {
    let repo = Repo::new();
    let mut src = String::from("/// Turns any serializable struct into a JSON value tree.\npub fn to_value<T: Serialize>(value: T) -> Result<Value, Error> {\n    value.serialize(Serializer)\n}\n\n");
    for i in 0..30 {
        src.push_str(&format!(
            "pub fn value_helper_{i}(value: &Value) -> bool {{\n    value.is_null()\n}}\n\n"
        ));
    }
    src.push_str("fn decode_hex_val_slow(val: u8) -> Option<u8> {\n    let val = val;\n    if val < 10 { Some(val) } else if val < 16 { Some(val - 6) } else { None }\n}\n");
    repo.write("src/lib.rs", src);
    repo.commit("values");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(&repo, "how to convert a struct into a value");
    let names = ranked_names(&v);
    assert_eq!(names[0], "to_value", "{names:?}");
}

/// A type named as its file is said once, by its path: the title of
/// `Parser` in `src/Parser.java` is the path and line, and the tokens go
/// to code. A member keeps its name.
#[test]
fn a_type_named_as_its_file_is_titled_by_its_path() {
    let repo = Repo::new();
    repo.write(
        "src/Parser.java",
        "package p;\n\n/** Parses expressions. */\npublic class Parser {\n    /** Parses one expression. */\n    public Expr parse(String text) {\n        return new Expr(text);\n    }\n}\n",
    );
    repo.write(
        "src/Lexer.java",
        "package p;\n\npublic class Tokens {\n    public int count() { return 0; }\n}\n",
    );
    repo.commit("a parser");
    repo.sno_json(&["init", "--json"]);
    let md = lexical_markdown(&repo, "Parser parses expressions", 2000);
    assert!(
        md.lines().any(|l| l.starts_with("src/Parser.java:")),
        "{md}"
    );
    assert!(!md.contains("`Parser` src/Parser.java"), "{md}");
    // A type in a file of another name, and a member, keep their names.
    let md = lexical_markdown(&repo, "Tokens count", 2000);
    assert!(
        md.contains("`Tokens.count` (+1 more) src/Lexer.java:"),
        "{md}"
    );
    let md = lexical_markdown(&repo, "parse one expression text", 2000);
    assert!(md.contains("`Parser.parse`"), "{md}");
}

#[test]
fn a_pasted_error_message_finds_the_code_that_raises_it() {
    let repo = Repo::new();
    // Short declarations whose names and docs hold the message's words,
    // and a long method that holds the message itself among much else.
    repo.write(
        "src/Connection.java",
        "public interface Connection {\n    /** Follow redirects. */\n    Connection followRedirects(boolean followRedirects);\n    /** Whether to follow redirects. */\n    boolean followRedirects();\n    /** The URL to load. */\n    Connection url(String url);\n    /** Many redirects at most. */\n    int maxRedirects();\n    /** Try to load. */\n    void tryLoad();\n}\n",
    );
    let mut body = String::from(
        "import java.io.IOException;\n\nclass Response {\n    int numRedirects;\n    Response previous;\n\n    void prepare(Response previousResponse) throws IOException {\n",
    );
    for i in 0..40 {
        body.push_str(&format!(
            "        int header{i} = previousResponse.numRedirects + {i}; // copy header {i} of the cookies\n"
        ));
    }
    body.push_str("        numRedirects = previousResponse.numRedirects + 1;\n        if (numRedirects >= 20)\n            throw new IOException(String.format(\"Too many redirects occurred trying to load URL %s\", previousResponse));\n    }\n}\n");
    repo.write("src/Response.java", &body);
    // The docs and the tests quote the message too; the code says it.
    repo.write(
        "README.md",
        "# Client\n\n## Troubleshooting\n\nToo many redirects occurred trying to load URL: the server redirects in a loop.\n",
    );
    repo.write(
        "src/test/ResponseTest.java",
        "class ResponseTest {\n    void loops() {\n        assertThrows(\"Too many redirects occurred trying to load URL https://example.com/a\");\n    }\n}\n",
    );
    repo.commit("connection");
    repo.sno_json(&["init", "--json"]);
    // As an agent pastes it: the value the program filled in included.
    let pasted = "Too many redirects occurred trying to load URL https://example.com/a?b=1";
    assert_ranked_first(&repo, pasted, "Response.prepare");
    // A question that quotes the message looks for the quoted words.
    let quoting = "where is \"too many redirects occurred\" thrown";
    assert_ranked_first(&repo, quoting, "Response.prepare");
    // The run adds to the lexical signal, whose best is 1 otherwise; a
    // question in words is not a message and gets nothing added.
    let lexical = |v: &serde_json::Value| -> Vec<f64> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["signals"]["lexical"].as_f64().unwrap())
            .collect()
    };
    assert!(lexical(&lexical_json(&repo, pasted))[0] > 1.0);
    let asked = lexical(&lexical_json(
        &repo,
        "how many redirects occurred trying to load a URL",
    ));
    assert!(asked.iter().all(|l| *l <= 1.0 + 1e-6), "{asked:?}");
}

#[test]
fn a_pasted_message_weighs_the_literals_of_code_but_not_of_generated_files() {
    let repo = Repo::new();
    // Generated bindings: thousands of definitions in one file, one of
    // them holding the message. Reading such a file (its record and text
    // are megabytes in a real registry) for every pasted text made warm
    // searches twice as slow.
    let mut generated = String::new();
    for i in 0..2_100 {
        generated.push_str(&format!(
            "def binding_{i}(handle):\n    return handle + {i}\n\n"
        ));
    }
    generated.push_str(
        "def check_mapping(handle):\n    raise ValueError(\"mapping of the shared segment failed for handle\")\n",
    );
    repo.write("gen/bindings.py", &generated);
    repo.write(
        "app/segments.py",
        "def attach(handle):\n    if handle is None:\n        raise ValueError(\"mapping of the shared segment failed for handle\")\n    return handle\n",
    );
    repo.commit("bindings");
    repo.sno_json(&["init", "--json"]);
    let v = lexical_json(
        &repo,
        "mapping of the shared segment failed for handle 0x7f",
    );
    let lexical_of = |name: &str| -> f64 {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["qualified_name"] == name)
            .map(|i| i["signals"]["lexical"].as_f64().unwrap())
            .unwrap_or_else(|| panic!("{name} not in {v}"))
    };
    assert!(lexical_of("attach") > 1.0, "{v}");
    assert!(lexical_of("check_mapping") <= 1.0 + 1e-6, "{v}");
    assert_ranked_first(
        &repo,
        "mapping of the shared segment failed for handle 0x7f",
        "attach",
    );
}

#[test]
fn a_pasted_traceback_finds_the_code_that_raised_it() {
    let repo = Repo::new();
    repo.write(
        "app/settings.py",
        "def config_file(path):\n    \"\"\"The config file at path.\"\"\"\n    return open(path)\n\n\ndef has_section(config, section):\n    \"\"\"Whether the config has the section.\"\"\"\n    return section in config\n\n\ndef server_section(config):\n    \"\"\"The server section of a config file.\"\"\"\n    return config['server']\n\n\ndef read(path):\n    text = open(path).read()\n    sections = [l for l in text.splitlines() if l.startswith('[')]\n    if '[server]' not in sections:\n        raise ValueError(f\"config file {path} has no [server] section\")\n    return sections\n",
    );
    repo.write(
        "app/main.py",
        "from app.settings import read\n\n\ndef main():\n    read('/etc/app.toml')\n",
    );
    repo.commit("app");
    repo.sno_json(&["init", "--json"]);
    // As Python prints it: the message is the last line.
    let trace = "Traceback (most recent call last):\n  File \"app/main.py\", line 5, in main\n    read('/etc/app.toml')\n  File \"app/settings.py\", line 20, in read\n    raise ValueError(...)\nValueError: config file /etc/app.toml has no [server] section\n";
    assert_ranked_first(&repo, trace, "read");
}

/// That a lexical-only search for `query` ranks `name` first.
fn assert_ranked_first(repo: &Repo, query: &str, name: &str) {
    let names = ranked_names(&lexical_json(repo, query));
    assert_eq!(names.first().map(String::as_str), Some(name), "{names:?}");
}
