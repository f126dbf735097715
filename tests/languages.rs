//! One repository in C#, PHP, Kotlin, Swift and Scala (the deep tier added
//! last) beside Python: each language's files are parsed, counted per
//! language, found by name, outlined, and their calls resolve by the
//! language's own scoping, across files too.

mod support;

use serde_json::Value;
use support::*;

const CSHARP_LOADER: &str = r#"using System;

namespace Acme.Config
{
    /// <summary>Loads configuration files.</summary>
    public class ConfigLoader : BaseLoader
    {
        public static ConfigLoader Create(string root) => new ConfigLoader(root);

        public ConfigLoader(string root) : base(root) { }

        public string Load(string name)
        {
            return Validate(name);
        }

        private string Validate(string name) => name.Trim();
    }

    public class BaseLoader
    {
        public BaseLoader(string root) { }
    }
}
"#;

const CSHARP_PROGRAM: &str = r#"using Acme.Config;

namespace Acme.App
{
    public static class Program
    {
        public static void Main(string[] args)
        {
            var loader = ConfigLoader.Create(args[0]);
            loader.Load("app.json");
        }
    }
}
"#;

const PHP_LOADER: &str = r#"<?php

namespace App\Config;

/**
 * Loads configuration files.
 */
class ConfigLoader
{
    public static function create(string $root): self
    {
        return new ConfigLoader($root);
    }

    public function load(string $name): array
    {
        return $this->parse($name);
    }

    private function parse(string $name): array
    {
        return [];
    }
}
"#;

const PHP_INDEX: &str = r#"<?php

use App\Config\ConfigLoader;

require __DIR__ . '/../src/Config/ConfigLoader.php';

$loader = ConfigLoader::create(__DIR__);
echo count($loader->load('app.json'));
"#;

const KOTLIN_LOADER: &str = r#"package com.acme.config

/** Loads configuration files. */
class ConfigLoader(private val root: String) {
    fun load(name: String): String = validate(name)

    private fun validate(name: String) = name.trim()

    companion object {
        fun create(root: String) = ConfigLoader(root)
    }
}

fun parseConfig(text: String): Map<String, String> = emptyMap()
"#;

const KOTLIN_APP: &str = r#"package com.acme

import com.acme.config.ConfigLoader
import com.acme.config.parseConfig

fun main(args: Array<String>) {
    val loader = ConfigLoader.create(args[0])
    println(parseConfig(loader.load("app.conf")))
}
"#;

const SWIFT_LOADER: &str = r#"import Foundation

/// Loads configuration files.
public final class ConfigLoader {
    public init(root: String) {}

    public func load(_ name: String) -> String {
        return self.validate(name)
    }

    func validate(_ name: String) -> String { name }
}

public func makeLoader(root: String) -> ConfigLoader {
    return ConfigLoader(root: root)
}
"#;

const SWIFT_MAIN: &str = r#"import ConfigKit

let loader = makeLoader(root: "/etc")
print(loader.load("app.conf"))
greet()
"#;

const SWIFT_GREETING: &str = "func greet() { print(\"hi\") }\n";

const SCALA_CONFIG: &str = r#"package com.acme.core

/** A parsed configuration. */
class Config(val entries: Map[String, String]) {
  def get(key: String): Option[String] = entries.get(key)
}

object Config {
  def read(path: String): Config = new Config(parse(path))

  private def parse(path: String): Map[String, String] = Map.empty
}
"#;

const SCALA_MAIN: &str = r#"package com.acme.app

import com.acme.core.Config

object Main {
  def main(args: Array[String]): Unit = {
    val config = Config.read(args(0))
    println(config.get("name"))
  }
}
"#;

/// The five languages of the deep tier's second wave, and Python beside them.
const DEEP_FILES: [(&str, &str); 13] = [
    ("src/Acme/Config/ConfigLoader.cs", CSHARP_LOADER),
        ("src/Acme/App/Program.cs", CSHARP_PROGRAM),
        ("src/Config/ConfigLoader.php", PHP_LOADER),
        ("public/index.php", PHP_INDEX),
        ("app/src/main/kotlin/com/acme/config/Loader.kt", KOTLIN_LOADER),
        ("app/src/main/kotlin/com/acme/App.kt", KOTLIN_APP),
        ("Sources/ConfigKit/ConfigLoader.swift", SWIFT_LOADER),
        ("Sources/App/main.swift", SWIFT_MAIN),
        ("Sources/App/Greeting.swift", SWIFT_GREETING),
        ("core/src/main/scala/com/acme/core/Config.scala", SCALA_CONFIG),
        ("app/src/main/scala/com/acme/app/Main.scala", SCALA_MAIN),
        (
            "tools/fmt.py",
            "def render(value):\n    \"\"\"Renders one value.\"\"\"\n    return str(value)\n",
        ),
        (
            "tools/report.py",
            "from tools.fmt import render\n\n\ndef report(values):\n    return [render(v) for v in values]\n",
        ),
];

fn repo() -> Repo {
    let repo = Repo::new();
    for (path, src) in DEEP_FILES {
        repo.write(path, src);
    }
    repo.commit("six languages");
    repo.sno_json(&["init", "--json"]);
    repo
}

/// `sno refs NAME --callers --json` as (path:line, heuristic) pairs.
fn callers(repo: &Repo, name: &str) -> Vec<(String, bool)> {
    let r = repo.sno_json(&["refs", name, "--callers", "--json"]);
    let mut v: Vec<(String, bool)> = r["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|x| {
            (
                format!("{}:{}", x["path"].as_str().unwrap(), x["line"]),
                x["heuristic"].as_bool().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn exact(at: &str) -> (String, bool) {
    (at.to_string(), false)
}

fn guess(at: &str) -> (String, bool) {
    (at.to_string(), true)
}

/// Names of an outline level, with their kinds.
fn level(nodes: &Value) -> Vec<(String, String)> {
    nodes
        .as_array()
        .unwrap_or_else(|| panic!("{nodes}"))
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn names(pairs: &[(String, String)]) -> Vec<&str> {
    pairs.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn every_deep_language_is_counted_found_outlined_and_resolved() {
    let repo = repo();

    // Every file parsed cleanly, and counted under its language.
    let status = repo.status();
    assert_eq!(status["files"]["parsed"], 13, "{status}");
    assert_eq!(status["files"]["parsed_with_errors"], 0, "{status}");
    assert_eq!(status["files"]["failed"], 0, "{status}");
    for (lang, files) in [
        ("csharp", 2),
        ("php", 2),
        ("kotlin", 2),
        ("swift", 3),
        ("scala", 2),
        ("python", 2),
    ] {
        let l = &status["languages"][lang];
        assert_eq!(l["files"], files, "{lang}: {status}");
        assert!(l["symbols"].as_u64().unwrap() > 0, "{lang}: {status}");
    }

    // `sno symbol` finds each language's class of that name.
    let r = repo.sno_json(&["symbol", "ConfigLoader", "--json"]);
    let mut found: Vec<String> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["match_kind"] == "exact")
        .map(|h| {
            format!(
                "{} {}",
                h["path"].as_str().unwrap(),
                h["kind"].as_str().unwrap()
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "Sources/ConfigKit/ConfigLoader.swift class",
            "app/src/main/kotlin/com/acme/config/Loader.kt class",
            "src/Acme/Config/ConfigLoader.cs class",
            "src/Acme/Config/ConfigLoader.cs constructor",
            "src/Config/ConfigLoader.php class",
        ],
        "{r}"
    );
    let r = repo.sno_json(&["symbol", "Config.read", "--json"]);
    assert_eq!(
        r["results"][0]["path"], "core/src/main/scala/com/acme/core/Config.scala",
        "{r}"
    );
    assert_eq!(r["results"][0]["line"], 9, "{r}");
    let r = repo.sno_json(&["symbol", "parseConfig", "--json"]);
    assert_eq!(
        r["results"][0]["path"], "app/src/main/kotlin/com/acme/config/Loader.kt",
        "{r}"
    );
    assert_eq!(r["results"][0]["kind"], "function", "{r}");

    // `sno outline`: containers, kinds and signatures per language.
    let outline = |path: &str| repo.sno_json(&["outline", path, "--json"])["outline"].clone();
    let cs = outline("src/Acme/Config/ConfigLoader.cs");
    assert_eq!(names(&level(&cs)), ["ConfigLoader", "BaseLoader"], "{cs}");
    assert_eq!(
        level(&cs[0]["children"]),
        [
            ("Create".to_string(), "method".to_string()),
            ("ConfigLoader".to_string(), "constructor".to_string()),
            ("Load".to_string(), "method".to_string()),
            ("Validate".to_string(), "method".to_string()),
        ],
        "{cs}"
    );
    assert_eq!(
        cs[0]["children"][2]["signature"], "public string Load(string name)",
        "{cs}"
    );
    let php = outline("src/Config/ConfigLoader.php");
    assert_eq!(names(&level(&php)), ["ConfigLoader"], "{php}");
    assert_eq!(
        names(&level(&php[0]["children"])),
        ["create", "load", "parse"],
        "{php}"
    );
    assert_eq!(
        php[0]["children"][0]["signature"], "public static function create(string $root): self",
        "{php}"
    );
    let kt = outline("app/src/main/kotlin/com/acme/config/Loader.kt");
    assert_eq!(names(&level(&kt)), ["ConfigLoader", "parseConfig"], "{kt}");
    // Companion members are the class's.
    assert_eq!(
        names(&level(&kt[0]["children"])),
        ["load", "validate", "create"],
        "{kt}"
    );
    let swift = outline("Sources/ConfigKit/ConfigLoader.swift");
    assert_eq!(
        names(&level(&swift)),
        ["ConfigLoader", "makeLoader"],
        "{swift}"
    );
    assert_eq!(
        names(&level(&swift[0]["children"])),
        ["init", "load", "validate"],
        "{swift}"
    );
    assert_eq!(
        swift[0]["children"][1]["signature"], "public func load(_ name: String) -> String",
        "{swift}"
    );
    let scala = outline("core/src/main/scala/com/acme/core/Config.scala");
    assert_eq!(
        level(&scala),
        [
            ("Config".to_string(), "class".to_string()),
            ("Config".to_string(), "impl".to_string()),
        ],
        "{scala}"
    );
    assert_eq!(
        names(&level(&scala[1]["children"])),
        ["read", "parse"],
        "{scala}"
    );

    // Calls resolve by each language's scoping, across files too.
    // C#: a bare call is on `this`; a type of a `using`d namespace.
    assert_eq!(
        callers(&repo, "ConfigLoader.Validate"),
        [exact("src/Acme/Config/ConfigLoader.cs:14")]
    );
    assert_eq!(
        callers(&repo, "ConfigLoader.Create"),
        [exact("src/Acme/App/Program.cs:9")]
    );
    // A method on a variable of unknown type is a guess, labelled.
    assert_eq!(
        callers(&repo, "ConfigLoader.Load"),
        [guess("src/Acme/App/Program.cs:10")]
    );
    // PHP: `$this->`, and a class through `use` (PSR-4: App\ is src/).
    assert_eq!(
        callers(&repo, "src/Config/ConfigLoader.php:20"),
        [exact("src/Config/ConfigLoader.php:17")]
    );
    assert_eq!(
        callers(&repo, "src/Config/ConfigLoader.php:10"),
        [exact("public/index.php:7")]
    );
    // Kotlin: implicit `this`, a companion's function through the class,
    // and a top-level function imported from another package.
    assert_eq!(
        callers(&repo, "app/src/main/kotlin/com/acme/config/Loader.kt:7"),
        [exact("app/src/main/kotlin/com/acme/config/Loader.kt:5")]
    );
    assert_eq!(
        callers(&repo, "app/src/main/kotlin/com/acme/config/Loader.kt:10"),
        [exact("app/src/main/kotlin/com/acme/App.kt:7")]
    );
    assert_eq!(
        callers(&repo, "parseConfig"),
        [exact("app/src/main/kotlin/com/acme/App.kt:8")]
    );
    // Swift: `self.`, a function of an imported module; a function of
    // another file of the same target is found by its unique name: a guess.
    assert_eq!(
        callers(&repo, "Sources/ConfigKit/ConfigLoader.swift:11"),
        [exact("Sources/ConfigKit/ConfigLoader.swift:8")]
    );
    assert_eq!(
        callers(&repo, "makeLoader"),
        [exact("Sources/App/main.swift:3")]
    );
    assert_eq!(callers(&repo, "greet"), [guess("Sources/App/main.swift:5")]);
    // Scala: a companion object's method through the imported class, and
    // a bare call inside the object.
    assert_eq!(
        callers(&repo, "Config.read"),
        [exact("app/src/main/scala/com/acme/app/Main.scala:7")]
    );
    assert_eq!(
        callers(&repo, "Config.parse"),
        [exact("core/src/main/scala/com/acme/core/Config.scala:9")]
    );
    // Python beside them, as before.
    assert_eq!(callers(&repo, "render"), [exact("tools/report.py:5")]);

    // Imports resolve to the files and directories they name; only
    // `using System` and `import Foundation` are outside the repository.
    let imports = &status["edges_by_kind"]["imports"];
    assert_eq!(imports["resolved"], 8, "{status}");
    assert_eq!(imports["unresolved"], 2, "{status}");

    // The incremental path agrees with a fresh index: a second commit that
    // moves the Kotlin function keeps its caller exact.
    repo.write(
        "app/src/main/kotlin/com/acme/config/Parse.kt",
        "package com.acme.config\n\nfun parseConfig(text: String): Map<String, String> = emptyMap()\n",
    );
    repo.write(
        "app/src/main/kotlin/com/acme/config/Loader.kt",
        KOTLIN_LOADER.replace(
            "\nfun parseConfig(text: String): Map<String, String> = emptyMap()\n",
            "",
        ),
    );
    repo.commit("parseConfig moves");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(
        callers(&repo, "parseConfig"),
        [exact("app/src/main/kotlin/com/acme/App.kt:8")]
    );
    let incremental = repo.status()["views_digest"].clone();
    std::fs::remove_dir_all(repo.path().join(".sno")).unwrap();
    repo.sno_json(&["init", "--history", "0", "--json"]);
    assert_eq!(repo.status()["views_digest"], incremental);
}

/// One file per generic-tier language: (path, source, a function it
/// defines, a function of the same file that calls it).
const GENERIC: &[(&str, &str, &str, &str)] = &[
    ("scripts/deploy.sh", "# Uploads the build.\nupload_build() {\n  scp \"$1\" host:\n}\ndeploy() {\n  upload_build dist.tgz\n}\n", "upload_build", "deploy"),
    ("lua/util.lua", "-- Trims a string.\nlocal function trim_text(s)\n  return s\nend\nfunction clean(s) return trim_text(s) end\n", "trim_text", "clean"),
    ("zig/math.zig", "/// Doubles a number.\npub fn double_it(x: i32) i32 {\n    return x * 2;\n}\npub fn quad(x: i32) i32 {\n    return double_it(double_it(x));\n}\n", "double_it", "quad"),
    ("dart/shop.dart", "/// Totals a cart.\nint cartTotal(List<int> xs) {\n  return xs.length;\n}\nvoid checkout() {\n  cartTotal([1]);\n}\n", "cartTotal", "checkout"),
    ("contracts/Vault.sol", "contract Vault {\n    /// Moves funds.\n    function moveFunds(address to) internal {}\n    function withdraw(address to) public {\n        moveFunds(to);\n    }\n}\n", "moveFunds", "Vault.withdraw"),
    ("infra/main.tf", "# The web server.\nresource \"aws_instance\" \"webserver\" {\n  ami = \"x\"\n}\n", "webserver", ""),
    ("db/schema.sql", "-- Accounts of the shop.\nCREATE TABLE accounts (id INT);\n", "accounts", ""),
    ("julia/stats.jl", "function mean_of(xs)\n    sum(xs) / length(xs)\nend\nfunction report(xs)\n    mean_of(xs)\nend\n", "mean_of", "report"),
    ("r/model.R", "# Fits the model.\nfit_model <- function(d) {\n  d\n}\nrun <- function(d) {\n  fit_model(d)\n}\n", "fit_model", "run"),
    ("objc/Cache.m", "@implementation Cache\n- (void)evictAll {\n}\n- (void)reset {\n  [self evictAll];\n}\n@end\n", "evictAll", ""),
    ("build/tasks.groovy", "class Tasks {\n  void compileAll(List xs) {\n  }\n  void build(List xs) {\n    compileAll(xs)\n  }\n}\n", "compileAll", "Tasks.build"),
    ("lib/greeter.ex", "defmodule Greeter do\n  def say_hello(name) do\n    name\n  end\n  def greet(name) do\n    say_hello(name)\n  end\nend\n", "say_hello", "Greeter.greet"),
    ("src/queue.erl", "-module(queue_srv).\n%% Pushes an item.\npush_item(X) -> X.\nenqueue(X) ->\n    push_item(X).\n", "push_item", "enqueue"),
    ("src/Parse.hs", "module Parse where\n-- | Splits words.\nsplitWords s = words s\ncountWords s = length (splitWords s)\n", "splitWords", "countWords"),
    ("src/tree.ml", "(** Inserts a key. *)\nlet insert_key t k = k :: t\nlet build ks = insert_key [] ks\n", "insert_key", "build"),
    ("src/View.elm", "module View exposing (..)\nrenderRow x = x\nrenderTable x = renderRow x\n", "renderRow", "renderTable"),
    ("src/app.gleam", "/// Parses input.\npub fn parse_input(s) { s }\npub fn main() { parse_input(\"x\") }\n", "parse_input", "main"),
    ("nix/pkgs.nix", "let\n  mkTool = name: name;\nin {\n  tool = mkTool \"x\";\n}\n", "mkTool", ""),
    ("src/Geometry.pas", "unit Geometry;\ninterface\nimplementation\nprocedure ScaleShape(f: Integer);\nbegin\nend;\nprocedure Resize(f: Integer);\nbegin\n  ScaleShape(f);\nend;\nend.\n", "ScaleShape", "Resize"),
];

#[test]
fn the_generic_tier_is_counted_found_outlined_searched_and_called() {
    let repo = Repo::new();
    for (path, src, _, _) in GENERIC {
        repo.write(path, src);
    }
    // A deep-tier file beside them, a broken generic file, and a file of a
    // language with no grammar at all.
    repo.write(
        "tools/fmt.py",
        "def render(value):\n    return str(value)\n",
    );
    repo.write(
        "lua/broken.lua",
        "function ok_fn() return 1 end\nfunction broken(\n",
    );
    repo.write("notes/plan.cob", "IDENTIFICATION DIVISION.\n");
    repo.commit("generic tier");
    repo.sno_json(&["init", "--json"]);

    let status = repo.status();
    assert_eq!(status["files"]["failed"], 0, "{status}");
    assert_eq!(status["files"]["parsed_with_errors"], 1, "{status}");
    for lang in [
        "bash", "zig", "dart", "solidity", "hcl", "sql", "julia", "r", "objc", "groovy", "elixir",
        "erlang", "haskell", "ocaml", "elm", "gleam", "nix", "pascal",
    ] {
        assert_eq!(status["languages"][lang]["files"], 1, "{lang}: {status}");
    }
    assert_eq!(status["languages"]["lua"]["files"], 2, "{status}");
    assert_eq!(status["languages"]["python"]["files"], 1, "{status}");
    assert_eq!(
        status["files"]["skipped"]["unsupported_language"], 1,
        "{status}"
    );

    for (path, _, def, caller) in GENERIC {
        // `symbol` finds the definition, in its file.
        let s = repo.sno_json(&["symbol", def, "--json"]);
        let hits = s["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{def}: {s}"));
        assert!(
            hits.iter().any(|h| h["path"] == *path && h["name"] == *def),
            "{def}: {s}"
        );
        // `outline` lists it.
        let o = repo.sno_json(&["outline", path, "--json"]);
        assert!(o.to_string().contains(&format!("\"{def}\"")), "{path}: {o}");
        // `search` ranks it among the first answers for its own name.
        let r = repo.sno_json(&["search", def, "--json", "--lexical-only"]);
        let first: Vec<&str> = r["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .take(3)
            .filter_map(|x| x["qualified_name"].as_str())
            .collect();
        assert!(
            first.iter().any(|q| q.rsplit('.').next() == Some(def)),
            "{def}: {first:?}"
        );
        // The call in the same file is found, and exact.
        if !caller.is_empty() {
            let c = repo.sno_json(&[
                "refs",
                &format!("{path}:{}", line_of(repo.path(), path, def)),
                "--callers",
                "--json",
            ]);
            let callers: Vec<(String, bool)> = c["results"]
                .as_array()
                .unwrap_or_else(|| panic!("{c}"))
                .iter()
                .map(|x| {
                    (
                        x["from"].as_str().unwrap_or_default().to_string(),
                        x["heuristic"].as_bool().unwrap(),
                    )
                })
                .collect();
            assert!(
                callers.iter().any(|(n, h)| n == caller && !h),
                "{def} <- {caller}: {c}"
            );
        }
    }
    // The broken file kept what parsed.
    let s = repo.sno_json(&["symbol", "ok_fn", "--json"]);
    assert_eq!(s["results"][0]["path"], "lua/broken.lua", "{s}");
    // grep reads generic-tier files like any other.
    let g = repo.sno_json(&["grep", "ScaleShape", "--json"]);
    assert!(g.to_string().contains("src/Geometry.pas"), "{g}");
}

#[test]
fn every_tier_in_one_repository_and_a_panicking_parser_fails_one_file() {
    // All fourteen deep languages and the generic tier in one repository;
    // the parser panics on one generic file, which fails alone.
    let repo = Repo::new();
    seed_polyglot(&repo);
    for (path, src) in DEEP_FILES {
        repo.write(path, src);
    }
    for (path, src) in [
        ("java/Shop.java", "class Shop {\n    int total() { return price() * 2; }\n    int price() { return 3; }\n}\n"),
        ("c/ring.c", "static int ring_next(int i) { return i + 1; }\nint ring_walk(int i) { return ring_next(i); }\n"),
        ("cpp/grid.cpp", "int grid_cell(int x) { return x; }\nint grid_sum(int x) { return grid_cell(x) + 1; }\n"),
        ("ruby/ledger.rb", "class Ledger\n  def balance\n    entries_total\n  end\n\n  def entries_total\n    0\n  end\nend\n"),
        ("ts/cart.ts", "export function cartItems(n: number): number { return n; }\nexport function cartCount(): number { return cartItems(2); }\n"),
    ] {
        repo.write(path, src);
    }
    for (path, src, _, _) in GENERIC {
        repo.write(path, src);
    }
    repo.commit("every tier");
    let o = sno_in(
        repo.path(),
        &["init", "--json"],
        &[("SNO_TEST_PANIC_ON", "zig/math.zig")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["failures"][0]["path"], "zig/math.zig", "{v}");
    assert!(
        v["failures"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("panicked")),
        "{v}"
    );

    let status = repo.status();
    assert_eq!(status["files"]["failed"], 1, "{status}");
    // The failed file is still listed, with nothing from it.
    assert_eq!(status["languages"]["zig"]["files"], 1, "{status}");
    assert_eq!(status["languages"]["zig"]["symbols"], 0, "{status}");
    for lang in [
        "python",
        "javascript",
        "typescript",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "ruby",
        "csharp",
        "php",
        "kotlin",
        "swift",
        "scala",
        "dart",
        "elixir",
        "haskell",
        "pascal",
    ] {
        let symbols = status["languages"][lang]["symbols"].as_u64().unwrap_or(0);
        assert!(symbols > 0, "{lang}: {status}");
    }
    // Search, outline and callers work across the tiers.
    for (query, path) in [
        ("ring_walk", "c/ring.c"),
        ("entries_total", "ruby/ledger.rb"),
        ("cartTotal", "dart/shop.dart"),
        ("say_hello", "lib/greeter.ex"),
    ] {
        let r = repo.sno_json(&["search", query, "--json", "--lexical-only"]);
        assert_eq!(r["items"][0]["path"], path, "{query}: {r}");
    }
    let o = repo.sno_json(&["outline", "java/Shop.java", "--json"]);
    assert!(o.to_string().contains("\"price\""), "{o}");
    assert_eq!(callers(&repo, "Shop.price"), [exact("java/Shop.java:2")]);
    assert_eq!(callers(&repo, "grid_cell"), [exact("cpp/grid.cpp:2")]);
    assert_eq!(callers(&repo, "cartItems"), [exact("ts/cart.ts:2")]);
}

/// The 1-based line of the first line of `path` that mentions `name`.
fn line_of(root: &std::path::Path, path: &str, name: &str) -> usize {
    let text = std::fs::read_to_string(root.join(path)).unwrap();
    text.lines()
        .position(|l| l.contains(name) && !l.trim_start().starts_with(['#', '-', '/', '%', '(']))
        .map(|i| i + 1)
        .unwrap()
}

/// A source in Latin-1 (Windows-1252), as older Delphi and C code is
/// written, is text: parsed, served as UTF-8 with its spans intact, and
/// found by grep. A file with NUL bytes stays binary.
#[test]
fn a_latin1_source_is_read_as_text() {
    let repo = Repo::new();
    repo.write(
        "src/Greeting.pas",
        b"unit Greeting;\ninterface\nimplementation\n{ Salue le caf\xe9. }\nprocedure SayCafe(n: Integer);\nbegin\n  WriteLn('caf\xe9');\nend;\nend.\n".as_slice(),
    );
    repo.write(
        "src/util.c",
        b"/* na\xefve */\nint naive_sum(int a) { return a; }\n".as_slice(),
    );
    repo.write("assets/blob.c", b"int x;\x00\xff\xfe".as_slice());
    repo.write("src/cafe.py", b"def caf\xe9():\n    return 1\n".as_slice());
    repo.commit("latin-1");
    repo.sno_json(&["init", "--json"]);
    let status = repo.status();
    assert_eq!(status["files"]["skipped"]["binary"], 1, "{status}");
    assert_eq!(status["languages"]["pascal"]["files"], 1, "{status}");
    let show = repo.sno_json(&["show", "SayCafe", "--json"]);
    let source = show["source"].as_str().unwrap_or_else(|| panic!("{show}"));
    assert!(source.starts_with("procedure SayCafe"), "{source}");
    assert!(
        source.contains("WriteLn('caf\u{e9}');") && source.ends_with("end;"),
        "{source}"
    );
    let c = repo.sno_json(&["show", "naive_sum", "--json"]);
    assert_eq!(c["source"], "int naive_sum(int a) { return a; }", "{c}");
    let g = repo.sno_json(&["grep", "na\u{ef}ve", "--json"]);
    assert!(g.to_string().contains("src/util.c"), "{g}");
    // The work tree holds the bytes git has: an untouched Latin-1 file is
    // not "changed on disk", and checking its syntax reads it as text.
    let out = repo.sno(&["show", "SayCafe"]);
    assert!(
        !stderr(&out).contains("changed on disk"),
        "{}",
        stderr(&out)
    );
    let hit = repo.sno_json(&["search", "SayCafe", "--json", "--lexical-only"]);
    assert_eq!(
        hit["header"]["edited_in_work_tree"],
        serde_json::json!([]),
        "{hit}"
    );
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call(
        "validate_syntax",
        serde_json::json!({"file": "src/cafe.py"}),
    );
    assert_eq!(body(&r)["ok"], true, "{r}");
    assert_eq!(body(&r)["symbols"], 1, "{r}");
    s.finish();
}
