//! `sno init`, `sno status` and `sno doctor` on a small polyglot repository.

mod support;

use support::*;

#[test]
fn init_indexes_head_and_status_reports_it() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    let head = repo.commit("initial");

    let out = repo.sno_json(&["init", "--json", "."]);
    assert_eq!(out["commit"], head);
    assert_eq!(out["branch"], "main");
    assert_eq!(out["commits_indexed"], 1);
    assert_eq!(out["files_parsed"], 8, "eight source files: {out}");
    assert_eq!(
        out["skipped"]["unsupported_language"], 1,
        "README.md has no grammar"
    );

    let s = repo.status();
    assert_eq!(s["as_of"]["commit"], head);
    assert_eq!(s["as_of"]["branch"], "main");
    assert_eq!(s["journal_events"], 1);
    assert_eq!(s["commits_indexed"], 1);
    assert_eq!(s["files"]["total"], 9);
    assert_eq!(s["files"]["parsed"], 8);
    assert_eq!(s["languages"]["python"]["files"], 3);
    assert_eq!(s["languages"]["javascript"]["files"], 2);
    assert_eq!(s["languages"]["go"]["files"], 1);
    assert_eq!(s["languages"]["rust"]["files"], 2);
    assert!(
        s["symbols_by_kind"]["class"].as_u64().unwrap() >= 2,
        "Config and Client: {s}"
    );
    assert!(s["symbols_by_kind"]["method"].as_u64().unwrap() >= 5, "{s}");
    // Calls resolved across files: Config.load -> read_text (imported name),
    // main -> Config.load (imported module's class), add -> parse::check.
    let calls = &s["edges_by_kind"]["calls"];
    assert!(calls["resolved"].as_u64().unwrap() >= 5, "{s}");
    assert!(
        calls["unresolved"].as_u64().unwrap() >= 1,
        "print/fetch stay unresolved: {s}"
    );
    assert!(
        s["edges_by_kind"]["imports"]["resolved"].as_u64().unwrap() >= 3,
        "{s}"
    );

    // The human form says the same.
    let human = stdout(&repo.sno(&["status"]));
    assert!(human.contains(&head[..12]), "{human}");
    assert!(human.contains("python"), "{human}");

    // .sno/ is ignored through .git/info/exclude, the user's files untouched.
    let exclude = std::fs::read_to_string(repo.path().join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.sno/"), "{exclude}");
    assert!(!repo.path().join(".gitignore").exists());
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the work tree stays clean"
    );

    let doc = repo.sno_json(&["doctor", "--json"]);
    assert_eq!(doc["ok"], true, "{doc}");
}

#[test]
fn second_init_continues_with_new_commits_only() {
    let repo = Repo::new();
    seed_polyglot(&repo);
    repo.commit("one");
    repo.sno_json(&["init", "--json"]);
    let again = repo.sno_json(&["init", "--json"]);
    assert_eq!(again["up_to_date"], true);
    assert_eq!(again["files_parsed"], 0);

    repo.write("app/extra.py", "def extra():\n    return 1\n");
    let c2 = repo.commit("two");
    let next = repo.sno_json(&["init", "--json"]);
    assert_eq!(next["commit"], c2);
    assert_eq!(next["commits_indexed"], 1);
    assert_eq!(
        next["files_parsed"], 1,
        "only the changed file is parsed: {next}"
    );
    assert_eq!(repo.status()["journal_events"], 2);
}

#[test]
fn history_is_journaled_oldest_first_and_log_shows_it() {
    let repo = Repo::new();
    let mut commits = Vec::new();
    for i in 0..5 {
        repo.write(
            &format!("m{i}.py"),
            format!("def f{i}():\n    return {i}\n"),
        );
        commits.push(repo.commit(&format!("c{i}")));
    }
    let out = repo.sno_json(&["init", "--json", "--history", "3"]);
    assert_eq!(out["commits_indexed"], 4, "HEAD and 3 before it");
    let log = repo.sno_json(&["journal", "log", "--json"]);
    let logged: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["commit"].as_str().unwrap())
        .collect();
    assert_eq!(
        logged,
        commits[1..].iter().map(String::as_str).collect::<Vec<_>>()
    );

    // More history asked of that journal: it is append-only, so nothing
    // older joins it, and init says so rather than "up to date" alone.
    let more = repo.sno(&["init", "--history", "all"]);
    assert!(more.status.success(), "{}", stderr(&more));
    let note = stderr(&more);
    assert!(
        note.contains(&format!("journal starts at {}", &commits[1][..12])),
        "{note}"
    );
    assert!(note.contains("move .sno/ aside"), "{note}");
    let json = repo.sno_json(&["init", "--json", "--history", "10"]);
    assert_eq!(json["history_starts_at"], commits[1]);
    assert_eq!(repo.status()["journal_events"], 4, "nothing was journaled");
    // Not asked: no note.
    let plain = repo.sno(&["init"]);
    assert!(
        !stderr(&plain).contains("journal starts at"),
        "{}",
        stderr(&plain)
    );
}

#[test]
fn gitignore_of_the_commit_is_respected_even_for_force_added_files() {
    let repo = Repo::new();
    repo.write(".gitignore", "generated/\n*.gen.py\n");
    repo.write("src/app.py", "def app():\n    return 1\n");
    repo.write("generated/schema.py", "def schema():\n    return 2\n");
    repo.write("src/models.gen.py", "def model():\n    return 3\n");
    repo.git(&["add", "-A"]);
    repo.git(&["add", "-f", "generated/schema.py", "src/models.gen.py"]);
    repo.git(&["commit", "-q", "-m", "force-added generated code"]);
    let out = repo.sno_json(&["init", "--json"]);
    assert_eq!(out["skipped"]["ignored"], 2, "{out}");
    let s = repo.status();
    assert_eq!(s["languages"]["python"]["files"], 1, "only src/app.py: {s}");

    // A later commit that ignores an indexed file removes it from the index,
    // and one that un-ignores a tracked file brings it in.
    repo.write(".gitignore", "*.gen.py\nsrc/app.py\n");
    let head = repo.commit("ignore app, un-ignore generated/");
    let out = repo.sno_json(&["init", "--json"]);
    assert_eq!(out["commit"], head);
    let s = repo.status();
    assert_eq!(
        s["languages"]["python"]["files"], 1,
        "only generated/schema.py now: {s}"
    );
    let bytes = std::fs::read(repo.db()).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("generated/schema.py"));
    assert_eq!(repo.sno_json(&["doctor", "--json"])["ok"], true);
}

#[test]
fn init_says_its_skip_counts_are_over_the_run_and_status_counts_head() {
    let repo = Repo::new();
    for i in 0..3 {
        repo.write("notes.txt", format!("version {i}\n"));
        repo.write("a.py", format!("A = {i}\n"));
        repo.commit(&format!("c{i}"));
    }
    let out = repo.sno(&["init"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("3 without a grammar"), "{text}");
    assert!(text.contains("across the 3 commits"), "{text}");
    let status = repo.status();
    assert_eq!(
        status["files"]["skipped"]["unsupported_language"], 1,
        "{status}"
    );
}

#[test]
fn a_first_index_of_many_files_reports_parsing_and_embedding_as_it_goes() {
    // Without a terminal, a line at every tenth of the files parsed and
    // embedded: a first index of a large repository is not silent.
    let repo = Repo::new();
    let total = 2_100;
    for i in 0..total {
        repo.write(
            &format!("pkg/m{i:04}.py"),
            format!("def handler_{i}(bill):\n    return bill + {i}\n"),
        );
    }
    repo.commit("many");
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let o = repo.sno(&["init", "--model", model.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let counts = |what: &str| -> Vec<usize> {
        err.lines()
            .filter_map(|l| l.strip_prefix(&format!("sno: {what} ")))
            .map(|rest| {
                let (done, of) = rest.trim_end_matches(" files").split_once('/').unwrap();
                assert_eq!(of, total.to_string(), "{err}");
                done.parse().unwrap()
            })
            .collect()
    };
    for what in ["parsed", "embedded"] {
        let seen = counts(what);
        assert!(seen.len() >= 3, "{what}: {seen:?}\n{err}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{what}: {seen:?}");
        assert_eq!(seen.last(), Some(&total), "{what}: {seen:?}\n{err}");
    }
    // Parsing is reported before the commit is journaled, embedding after.
    let at = |needle: &str| {
        err.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {err}"))
    };
    assert!(at("sno: parsed ") < at("sno: indexed 1/1"), "{err}");
    assert!(at("sno: indexed 1/1") < at("sno: embedded "), "{err}");
    // A small repository's run stays as short as it was.
    let small = Repo::new();
    seed_polyglot(&small);
    small.commit("small");
    let o = small.sno(&["init"]);
    assert!(!stderr(&o).contains("sno: parsed"), "{}", stderr(&o));
}

/// The kinds and commits of the journal, oldest first.
fn journal_of(repo: &Repo) -> Vec<(String, String)> {
    repo.sno_json(&["journal", "log", "--json", "--tail", "1000"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or_default().to_string(),
                e["commit"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_run_continues_along_the_line_past_its_history_depth() {
    // The rerun of an interrupted `--history all`, or a pull of more
    // commits than `--history`: HEAD continues the indexed commit's line.
    let repo = Repo::new();
    let mut commits = Vec::new();
    for i in 0..8 {
        repo.write(
            &format!("m{}.py", i % 3),
            format!("def f{i}():\n    return {i}\n"),
        );
        commits.push(repo.commit(&format!("c{i}")));
    }
    repo.sno_json(&["init", "--json", "--rev", "HEAD~6", "--history", "0"]);
    let out = repo.sno_json(&["init", "--json", "--history", "2"]);
    assert_eq!(out["commits_indexed"], 6, "{out}");
    let journal = journal_of(&repo);
    assert!(
        journal.iter().all(|(kind, _)| kind == "CommitIndexed"),
        "no branch moved: {journal:?}"
    );
    let logged: Vec<&str> = journal.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(
        logged,
        commits[1..].iter().map(String::as_str).collect::<Vec<_>>()
    );
    let changes = repo.sno(&["changes", "HEAD~5..HEAD"]);
    assert!(changes.status.success(), "{}", stderr(&changes));
}

#[test]
fn a_rebase_journals_its_rewritten_commits() {
    let repo = Repo::new();
    repo.write("base.py", "def base():\n    return 0\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    for i in 1..=3 {
        repo.write(
            &format!("t{i}.py"),
            format!("def topic{i}():\n    return {i}\n"),
        );
        repo.commit(&format!("t{i}"));
    }
    repo.git(&["checkout", "-q", "main"]);
    repo.write("m.py", "def on_main():\n    return 9\n");
    let m = repo.commit("m");
    repo.git(&["checkout", "-q", "topic"]);
    repo.sno_json(&["init", "--json"]);
    repo.git(&["rebase", "-q", "main"]);
    let tip = repo.head();
    let out = repo.sno_json(&["init", "--json"]);
    assert_eq!(out["commit"], tip);
    let journal = journal_of(&repo);
    // After the move: main's commit and the three rewritten ones, each once.
    let moved = journal
        .iter()
        .position(|(kind, _)| kind == "BranchMoved")
        .expect("a branch move");
    let after: Vec<&str> = journal[moved + 1..]
        .iter()
        .map(|(_, c)| c.as_str())
        .collect();
    assert_eq!(after.len(), 4, "{journal:?}");
    assert_eq!(after[0], m);
    assert_eq!(after[3], tip);
    // The agent's rebased work can be asked about.
    let changes = repo.sno_json(&["changes", "HEAD~3..HEAD", "--json"]);
    let text = changes.to_string();
    for name in ["topic1", "topic2", "topic3"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    // And answers still match HEAD's files.
    let sym = repo.sno_json(&["symbol", "on_main", "--json"]);
    assert_eq!(sym["results"][0]["path"], "m.py", "{sym}");

    // A head too large to hold in memory moves by its tip alone (read on
    // demand), and answers as HEAD's files say all the same.
    repo.git(&["checkout", "-q", "-b", "again", "main"]);
    repo.write(
        "t9.py",
        "def topic9():
    return 9
",
    );
    repo.commit("t9");
    repo.write(
        "t10.py",
        "def topic10():
    return 10
",
    );
    let tip = repo.commit("t10");
    let before = journal_of(&repo).len();
    let o = sno_in(
        repo.path(),
        &["init", "--json"],
        &[("SNO_TEST_LAZY_COMMITS", "1")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let journal = journal_of(&repo);
    assert_eq!(journal.len(), before + 2, "a move and the tip: {journal:?}");
    assert_eq!(journal.last().unwrap().1, tip);
    for (name, path) in [
        ("topic9", "t9.py"),
        ("topic10", "t10.py"),
        ("on_main", "m.py"),
    ] {
        let sym = repo.sno_json(&["symbol", name, "--json"]);
        assert_eq!(sym["results"][0]["path"], path, "{sym}");
    }
    // The rebased branch's own files are gone from this one.
    let s = repo.sno(&["symbol", "topic1", "--json"]);
    assert!(!stdout(&s).contains("\"t1.py\""), "{}", stdout(&s));
}

#[test]
fn answers_say_when_git_head_is_not_indexed_yet() {
    let repo = Repo::new();
    repo.write("m.py", "def older():\n    return 1\n");
    repo.commit("one");
    repo.write(
        "m.py",
        "def older():\n    return 1\n\n\ndef newer():\n    return 2\n",
    );
    let head = repo.commit("two");
    repo.sno_json(&["init", "--json", "--rev", "HEAD~1"]);
    let s = repo.status();
    assert_eq!(s["git_head"], head.as_str(), "{s}");
    let text = stdout(&repo.sno(&["status"]));
    assert!(
        text.contains(&format!("git HEAD    {}", &head[..12])),
        "{text}"
    );
    assert!(text.contains("not indexed yet"), "{text}");
    // A name only HEAD has: the hint says to index, not to grep.
    let o = repo.sno(&["symbol", "newer"]);
    assert_error_code(&o, "SNO-UNKNOWN-SYMBOL");
    assert!(
        stderr(&o).contains("is not indexed yet: `sno init`"),
        "{}",
        stderr(&o)
    );
    // The outline of a file the work tree changed says whose outline it is.
    let text = stdout(&repo.sno(&["outline", "m.py"]));
    assert!(
        text.contains("changed on disk since the indexed commit"),
        "{text}"
    );
    repo.sno_json(&["init", "--json"]);
    let s = repo.status();
    assert!(s.get("git_head").is_none(), "{s}");
    assert!(!stdout(&repo.sno(&["status"])).contains("git HEAD"));
    assert!(!stdout(&repo.sno(&["outline", "m.py"])).contains("changed on disk"));
    let o = repo.sno(&["symbol", "nowhere_at_all"]);
    assert!(!stderr(&o).contains("not indexed yet"), "{}", stderr(&o));
}
