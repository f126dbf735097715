//! The code-intelligence commands on a small polyglot repository.

mod support;

use support::*;

fn indexed() -> (Repo, Vec<String>) {
    let repo = Repo::new();
    seed_polyglot(&repo);
    let first = repo.commit("seed");
    repo.write(
        "app/config.py",
        r#""""Configuration loading."""
import json
from app.util import read_text


class Config:
    """Holds settings."""

    def __init__(self, values):
        self.values = values

    @classmethod
    def load(cls, path):
        """Read a config file."""
        return cls(json.loads(read_text(path)))

    def get(self, key, default=None):
        return self.values.get(key, default)

    def reload(self, path):
        return Config.load(path)
"#,
    );
    repo.remove("web/http.js");
    let second = repo.commit("reload, drop http.js");
    repo.sno_json(&["init", "--json", "--history", "all"]);
    (repo, vec![first, second])
}

#[test]
fn symbol_exact_then_prefix_then_fuzzy_with_locations() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["symbol", "load", "--json"]);
    let hits = r["results"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{r}");
    assert_eq!(hits[0]["qualified_name"], "Config.load");
    assert_eq!(hits[0]["path"], "app/config.py");
    assert_eq!(hits[0]["line"], 12, "from its decorator");
    assert_eq!(hits[0]["match_kind"], "exact");
    assert_eq!(r["as_of"]["commit"], repo.head());

    let r = repo.sno_json(&["symbol", "read_t", "--json"]);
    assert_eq!(r["results"][0]["qualified_name"], "read_text");
    assert_eq!(r["results"][0]["match_kind"], "prefix");

    // Only names close in spelling: exit 1, as for no match.
    let out = repo.sno(&["symbol", "raed_text", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["results"][0]["qualified_name"], "read_text");
    assert_eq!(r["results"][0]["match_kind"], "fuzzy");

    let human = stdout(&repo.sno(&["symbol", "Config.get"]));
    assert!(human.starts_with("app/config.py:17"), "{human}");
}

/// The names an error answer suggests.
fn did_you_mean(v: &serde_json::Value) -> Vec<&str> {
    v["error"]["did_you_mean"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

#[test]
fn unknown_symbol_answers_with_nearest_names() {
    let (repo, _) = indexed();
    let o = repo.sno(&["show", "Config.lod", "--json"]);
    assert_error_code(&o, "SNO-UNKNOWN-SYMBOL");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dym = did_you_mean(&v);
    assert!(dym.contains(&"Config.load"), "{dym:?}");
}

/// A `path:line` of an indexed file that no definition spans (past the
/// file's end, or a blank line between two) says so, with the nearest
/// definitions to retry: it was looked up as a name and answered with
/// names from elsewhere.
#[test]
fn a_line_no_definition_spans_names_the_nearest_definitions() {
    let (repo, _) = indexed();
    for (at, nearest) in [
        ("app/config.py:999", "app/config.py:20"),
        ("app/config.py:4", "app/config.py:6"),
    ] {
        let o = repo.sno(&["show", at, "--json"]);
        assert_error_code(&o, "SNO-UNKNOWN-SYMBOL");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let message = v["error"]["message"].as_str().unwrap();
        let line = at.rsplit_once(':').unwrap().1;
        assert!(
            message.contains(&format!("line {line} of `app/config.py` (21 lines)")),
            "{v}"
        );
        let dym = did_you_mean(&v);
        assert_eq!(dym.first(), Some(&nearest), "{v}");
        // Each suggestion is an answer.
        let shown = repo.sno_json(&["show", dym[0], "--json"]);
        assert_eq!(shown["symbol"]["path"], "app/config.py", "{shown}");
    }
    // A file of no definitions (sno reads its text, not its symbols).
    let o = repo.sno(&["show", "README.md:1", "--json"]);
    assert_error_code(&o, "SNO-UNKNOWN-SYMBOL");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["error"]["message"], "no definition spans line 1 of `README.md`",
        "{v}"
    );
    assert!(did_you_mean(&v).is_empty(), "{v}");
    // Inside a definition: the innermost one, as before.
    let shown = repo.sno_json(&["show", "app/config.py:18", "--json"]);
    assert_eq!(shown["symbol"]["qualified_name"], "Config.get", "{shown}");
}

#[test]
fn outline_nests_methods_under_classes_without_bodies() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["outline", "app/config.py", "--json"]);
    let top = r["outline"].as_array().unwrap();
    assert_eq!(top.len(), 1, "only Config at top level: {r}");
    assert_eq!(top[0]["name"], "Config");
    let methods: Vec<&str> = top[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["__init__", "load", "get", "reload"]);
    assert_eq!(
        top[0]["children"][2]["signature"],
        "def get(self, key, default=None)"
    );
    assert!(
        !r.to_string().contains("self.values.get(key, default)"),
        "no bodies"
    );

    // From a subdirectory, paths are taken relative to where the user is.
    let o = sno_in(
        &repo.path().join("app"),
        &["outline", "config.py", "--json"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A symbol named by its place too, and a repository-relative place
    // still works from there.
    let here = sno_in(
        &repo.path().join("app"),
        &["show", "config.py:13", "--json"],
        &[],
    );
    assert!(here.status.success(), "{}", stderr(&here));
    let here: serde_json::Value = serde_json::from_slice(&here.stdout).unwrap();
    assert_eq!(here["symbol"]["qualified_name"], "Config.load", "{here}");
    let o = sno_in(
        &repo.path().join("app"),
        &["refs", "app/config.py:13", "--callers", "--json"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));

    // With -C, paths are taken from that directory, as git takes -C.
    let outside = tempfile::tempdir().unwrap();
    let root = repo.path().to_str().unwrap();
    let absolute = format!("{root}/app/config.py:13");
    for args in [
        &["outline", "app/config.py", "--json", "-C", root][..],
        &["show", "app/config.py:13", "--json", "-C", root][..],
        &["show", absolute.as_str(), "--json", "-C", root][..],
    ] {
        let o = sno_in(outside.path(), args, &[]);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }

    assert_error_code(
        &repo.sno(&["outline", "../../etc/passwd"]),
        "SNO-PATH-OUTSIDE",
    );
    let o = repo.sno(&["outline", "app/confg.py", "--json"]);
    assert_error_code(&o, "SNO-UNKNOWN-FILE");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["did_you_mean"][0], "app/config.py");
}

#[test]
fn show_prints_exactly_the_symbols_source() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["show", "Config.get", "--json"]);
    assert_eq!(
        r["source"],
        "    def get(self, key, default=None):\n        return self.values.get(key, default)",
        "the file's lines, the first with its indentation like the rest"
    );
    assert_eq!(r["symbol"]["line"], 17);
    let r = repo.sno_json(&["show", "app/util.py:3", "--json"]);
    assert_eq!(r["symbol"]["qualified_name"], "read_text");
}

#[test]
fn refs_callers_and_callees_follow_resolved_edges() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["refs", "read_text", "--json"]);
    let refs = r["results"].as_array().unwrap();
    assert!(
        refs.iter().any(|x| x["from"] == "Config.load"
            && x["path"] == "app/config.py"
            && x["heuristic"] == false),
        "{r}"
    );

    // Config.reload -> Config.load -> read_text: two hops of callers.
    let r = repo.sno_json(&["refs", "read_text", "--callers", "--depth", "2", "--json"]);
    let callers: Vec<(&str, u64)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["heuristic"] == false)
        .map(|x| {
            (
                x["from"].as_str().unwrap_or("<top>"),
                x["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(callers.contains(&("Config.load", 1)), "{callers:?}");
    assert!(callers.contains(&("Config.reload", 2)), "{callers:?}");
    assert!(
        callers.contains(&("main", 2)),
        "main calls Config.load: {callers:?}"
    );

    let r = repo.sno_json(&["refs", "Config.load", "--callees", "--json"]);
    let callees: Vec<(&str, bool)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["to"].as_str().unwrap(), x["heuristic"].as_bool().unwrap()))
        .collect();
    assert!(callees.contains(&("read_text", false)), "{callees:?}");
    assert!(
        callees.contains(&("json.loads", true)),
        "external calls are labelled heuristic: {callees:?}"
    );
}

#[test]
fn grep_reports_enclosing_symbols_and_truncation() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["grep", r"values\.get\(", "--json"]);
    let hits = r["results"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{r}");
    assert_eq!(hits[0]["path"], "app/config.py");
    assert_eq!(hits[0]["line"], 18);
    assert_eq!(hits[0]["symbol"], "Config.get");
    assert_eq!(r["truncated"], false);
    // A match starting in a method's indentation is the method's.
    let r = repo.sno_json(&["grep", r"^\s+def get\(", "--json"]);
    assert_eq!(r["results"][0]["symbol"], "Config.get", "{r}");
    let r = repo.sno_json(&["grep", "def ", "--limit", "2", "--json"]);
    assert_eq!(r["results"].as_array().unwrap().len(), 2);
    assert_eq!(r["truncated"], true);
    assert_error_code(&repo.sno(&["grep", "("]), "SNO-BAD-REGEX");
}

#[test]
fn grep_in_minified_code_names_the_definition_of_the_match_and_cuts_the_line() {
    let repo = Repo::new();
    let filler: String = (0..400)
        .map(|i| format!("function g{i}(){{return {i}}};"))
        .collect();
    repo.write(
        "small.min.js",
        format!("function first(){{return 1}};function second(){{return NEEDLE}};{filler}function last(){{return HAYSTACK}}\n"),
    );
    repo.commit("minified");
    repo.sno_json(&["init", "--json"]);
    let r = repo.sno_json(&["grep", "NEEDLE", "--json"]);
    let hit = &r["results"][0];
    assert_eq!(hit["symbol"], "second", "{r}");
    let text = hit["text"].as_str().unwrap();
    assert!(text.contains("return NEEDLE"), "{text}");
    assert!(
        text.len() < 1_000,
        "the line is cut around the match: {} bytes",
        text.len()
    );
    assert!(text.ends_with('…'), "{text}");
    let r = repo.sno_json(&["grep", "HAYSTACK", "--json"]);
    let hit = &r["results"][0];
    assert_eq!(hit["symbol"], "last", "{r}");
    let text = hit["text"].as_str().unwrap();
    assert!(text.starts_with('…') && text.contains("HAYSTACK"), "{text}");
}

#[test]
fn changes_and_at_answer_from_the_journal() {
    let (repo, commits) = indexed();
    let range = format!("{}..{}", commits[0], commits[1]);
    let r = repo.sno_json(&["changes", &range, "--json"]);
    assert_eq!(r["from"]["commit"], commits[0].as_str(), "{r}");
    let changes: Vec<(String, String)> = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["change"].as_str().unwrap().to_string(),
                c["qualified_name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        changes.contains(&("added".into(), "Config.reload".into())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&("changed".into(), "Config.get".into())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&("removed".into(), "request".into())),
        "http.js's function: {changes:?}"
    );
    assert!(
        !changes.iter().any(|(_, n)| n == "Config.load"),
        "unchanged symbols are not listed: {changes:?}"
    );

    // --at answers from the older state.
    let r = repo.sno_json(&["symbol", "request", "--json", "--at", "HEAD~1"]);
    assert_eq!(r["results"][0]["path"], "web/http.js");
    assert_eq!(r["as_of"]["commit"], commits[0].as_str());
    assert_error_code(&repo.sno(&["symbol", "request"]), "SNO-UNKNOWN-SYMBOL");
    assert_error_code(&repo.sno(&["changes", "nonsense"]), "SNO-BAD-RANGE");
}

#[test]
fn map_ranks_the_most_depended_on_code_first_within_budget() {
    let (repo, _) = indexed();
    let r = repo.sno_json(&["map", "--json", "--max-tokens", "400"]);
    let files: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(!files.is_empty());
    // read_text is called from config.py, and Config.load from main.py and
    // Config.reload: app/ files outrank the leaves.
    let pos = |p: &str| files.iter().position(|f| *f == p).unwrap_or(usize::MAX);
    assert!(pos("app/util.py") < pos("web/api.js"), "{files:?}");
    assert!(r["tokens"].as_u64().unwrap() <= 400);
    let small = repo.sno_json(&["map", "--json", "--max-tokens", "60"]);
    assert!(small["omitted_files"].as_u64().unwrap() > 0, "{small}");
    assert!(small["tokens"].as_u64().unwrap() <= 60, "{small}");
    assert_error_code(
        &repo.sno(&["map", "--json", "--max-tokens", "59"]),
        "SNO-BAD-ARGS",
    );
    // The JSON form does not repeat the files as text; the text says what
    // was left out.
    assert!(small.get("map").is_none(), "{small}");
    let text = stdout(&repo.sno(&["map", "--max-tokens", "60"]));
    assert!(text.contains("left out for the 60-token budget"), "{text}");
}

#[test]
fn calls_never_resolve_across_languages() {
    let repo = Repo::new();
    repo.write("tools/pick.py", "def pick_items(xs):\n    return xs\n");
    repo.write(
        "cmd/main.go",
        "package main\n\nfunc main() {\n\tpick_items(nil)\n}\n",
    );
    repo.write("web/app.js", "function run() { return pick_items([]); }\n");
    repo.write(
        "web/lib.ts",
        "export function pick_items(xs: number[]) { return xs; }\n",
    );
    repo.commit("one");
    repo.sno_json(&["init", "--json"]);
    let r = repo.sno_json(&["refs", "tools/pick.py:1", "--json"]);
    let exact: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["heuristic"] == false)
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert!(
        exact.is_empty(),
        "no Go or JS call resolves to a Python function: {r}"
    );
    // Within a family (JavaScript and TypeScript) the unique name does
    // resolve, but nothing imports it: a guess, labelled with its reason.
    let r = repo.sno_json(&["refs", "web/lib.ts:1", "--json"]);
    assert!(
        r["results"].as_array().unwrap().iter().any(|x| {
            x["path"] == "web/app.js"
                && x["heuristic"] == true
                && x["reason"].as_str().unwrap_or("").contains("unique name")
        }),
        "{r}"
    );
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::io::{BufRead, BufReader};
    let repo = Repo::new();
    // Far more output than a pipe buffers (64 KiB), so sno is still writing
    // when the reader goes away.
    let big: String = (0..20_000).map(|i| format!("VALUE_{i} = {i}\n")).collect();
    repo.write("big.py", big);
    repo.commit("big");
    repo.sno_json(&["init", "--json"]);
    let mut child = sno_command()
        .args(["grep", "VALUE"])
        .current_dir(repo.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The pipe is closed here, like `| head -1`.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panic"));
}

#[test]
fn a_fuzzy_only_symbol_match_says_so_and_exits_non_zero() {
    let (repo, _) = indexed();
    let exact = repo.sno(&["symbol", "Config"]);
    assert!(exact.status.success());
    assert!(!stdout(&exact).contains("(fuzzy)"));
    let out = repo.sno(&["symbol", "Confg"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("(fuzzy)"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no symbol named `Confg`"),
        "{}",
        stderr(&out)
    );
    let out = repo.sno(&["symbol", "Confg", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["match_kind"], "fuzzy", "{v}");
}

/// Read-only commands started together (an agent's parallel tool calls)
/// all answer: each waits its turn at the database, and none takes
/// another's instant probe of the writer lock for an index run.
#[test]
fn readers_started_together_all_answer() {
    let (repo, _) = indexed();
    // Rounds of a dozen and a half: the race this guards against showed in
    // a few of sixty.
    for _ in 0..4 {
        let children: Vec<_> = (0..16)
            .map(|i| {
                let args: &[&str] = match i % 3 {
                    0 => &["refs", "Config.load", "--callers", "--json"],
                    1 => &["symbol", "Config", "--json"],
                    _ => &["outline", "app/config.py", "--json"],
                };
                std::process::Command::new(sno_bin())
                    .args(args)
                    .current_dir(repo.path())
                    .env("SNO_OFFLINE", "1")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
}

#[test]
fn a_definition_starts_at_its_decorators_and_attributes() {
    let repo = Repo::new();
    repo.write(
        "cli.py",
        "import click\n\n\n@click.command()\n@click.option(\"--count\", default=1)\ndef hello(count):\n    return count\n\n\nclass Config:\n    @property\n    def value(self):\n        return 1\n",
    );
    repo.write(
        "src/lib.rs",
        "/// A point.\n#[derive(Debug, Clone)]\n#[allow(dead_code)]\npub struct Point {\n    x: i32,\n}\n",
    );
    repo.commit("decorated");
    repo.sno_json(&["init", "--json"]);
    let hello = repo.sno_json(&["show", "hello", "--json"]);
    let source = hello["source"].as_str().unwrap();
    assert!(
        source.starts_with("@click.command()\n@click.option("),
        "{source}"
    );
    assert_eq!(hello["symbol"]["line"], 4, "{hello}");
    assert_eq!(hello["symbol"]["signature"], "def hello(count)", "{hello}");
    // A decorator's line is inside the definition.
    let at = repo.sno_json(&["show", "cli.py:5", "--json"]);
    assert_eq!(at["symbol"]["qualified_name"], "hello", "{at}");
    let value = repo.sno_json(&["show", "Config.value", "--json"]);
    assert!(
        value["source"]
            .as_str()
            .unwrap()
            .trim_start()
            .starts_with("@property"),
        "{value}"
    );
    let point = repo.sno_json(&["show", "Point", "--json"]);
    assert!(
        point["source"]
            .as_str()
            .unwrap()
            .starts_with("#[derive(Debug, Clone)]\n#[allow(dead_code)]\npub struct Point"),
        "{point}"
    );
    assert_eq!(point["symbol"]["doc"], "A point.", "{point}");
}
