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

fn repo() -> Repo {
    let repo = Repo::new();
    for (path, src) in [
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
    ] {
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
