//! "Exact" means exact: a call is labelled exact only when the language's
//! own scoping rules find its target (the enclosing scope, an import, the
//! receiver's type, the same package). A name matched across the repository
//! is a guess and says so, with its reason. Ambiguous names get the same
//! answer from the CLI as from MCP.

mod support;

use serde_json::{json, Value};
use support::*;

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

fn exact(v: &[(String, bool)]) -> Vec<&str> {
    v.iter()
        .filter(|(_, h)| !h)
        .map(|(s, _)| s.as_str())
        .collect()
}

fn guessed(v: &[(String, bool)]) -> Vec<&str> {
    v.iter()
        .filter(|(_, h)| *h)
        .map(|(s, _)| s.as_str())
        .collect()
}

#[test]
fn a_bare_call_inside_a_method_is_not_a_self_call_in_python_and_rust() {
    let repo = Repo::new();
    repo.write(
        "app/views.py",
        "def render(x):\n    return x\n\n\nclass View:\n    def render(self, x):\n        return render(x)\n\n    def show(self):\n        return self.render(1)\n",
    );
    repo.write(
        "src/search.rs",
        "pub fn search_path(p: &str) -> usize {\n    p.len()\n}\n\npub struct SearchWorker;\n\nimpl SearchWorker {\n    pub fn search_path(&self, p: &str) -> usize {\n        search_path(p)\n    }\n\n    pub fn run(&self) -> usize {\n        self.search_path(\"x\")\n    }\n}\n",
    );
    repo.commit("shadowing");
    repo.sno_json(&["init", "--json"]);

    // Python: View.render calls the module's render; only View.show calls
    // View.render.
    assert_eq!(
        callers(&repo, "View.render"),
        [("app/views.py:10".into(), false)]
    );
    assert_eq!(
        callers(&repo, "app/views.py:1"),
        [("app/views.py:7".into(), false)]
    );
    // Rust: the method calls the free function; `self.search_path` in run
    // calls the method.
    assert_eq!(
        callers(&repo, "SearchWorker.search_path"),
        [("src/search.rs:13".into(), false)]
    );
    assert_eq!(
        callers(&repo, "src/search.rs:1"),
        [("src/search.rs:9".into(), false)]
    );
}

#[test]
fn a_bare_call_in_go_is_never_a_method() {
    // Go has no implicit receiver: a bare name is a function of the package
    // (cobra's `Command.MarkFlagRequired` calls the function of that name)
    // or a type conversion (chi's `Middlewares(m)` beside `Mux.Middlewares`),
    // never a method, even of another file.
    let repo = Repo::new();
    repo.write("cmd/command.go", "package cmd\n\ntype Command struct{}\n");
    repo.write(
        "cmd/flags.go",
        "package cmd\n\nfunc (c *Command) MarkFlagRequired(name string) error {\n\treturn MarkFlagRequired(name)\n}\n\nfunc MarkFlagRequired(name string) error {\n\treturn nil\n}\n",
    );
    repo.write(
        "cmd/mux.go",
        "package cmd\n\ntype Mux struct{}\n\ntype Middlewares []int\n\nfunc (m *Mux) Middlewares() Middlewares {\n\treturn nil\n}\n",
    );
    repo.write(
        "cmd/chain.go",
        "package cmd\n\nfunc Chain(m ...int) Middlewares {\n\treturn Middlewares(m)\n}\n",
    );
    repo.commit("go package");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(callers(&repo, "Command.MarkFlagRequired"), []);
    assert_eq!(
        callers(&repo, "cmd/flags.go:7"),
        [("cmd/flags.go:4".into(), false)]
    );
    // The conversion may be listed as a guess by name, never as exact.
    assert!(exact(&callers(&repo, "Mux.Middlewares")).is_empty());
}

#[test]
fn a_call_among_several_definitions_of_its_name_is_a_guess() {
    // Which overload, `#[cfg]` variant or duplicate definition a call
    // reaches takes types or a build configuration sno does not read: the
    // first is linked, labelled a guess with its reason. walkdir's
    // `Ancestor::new` has a Windows and a Unix variant.
    let repo = Repo::new();
    repo.write(
        "src/Log.java",
        "class Log {\n    void log(String s) {}\n    void log(int n) {}\n    void run() {\n        log(1);\n    }\n    void once(int n) {}\n    void go() {\n        once(2);\n    }\n}\n",
    );
    repo.write(
        "src/walk.rs",
        "struct Ancestor;\n\nimpl Ancestor {\n    #[cfg(windows)]\n    fn new() -> Ancestor {\n        Ancestor\n    }\n\n    #[cfg(not(windows))]\n    fn new() -> Ancestor {\n        Ancestor\n    }\n}\n\nfn walk() -> Ancestor {\n    Ancestor::new()\n}\n",
    );
    repo.commit("overloads");
    repo.sno_json(&["init", "--json"]);
    let r = repo.sno_json(&["refs", "src/Log.java:2", "--callers", "--json"]);
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{r}");
    assert_eq!(results[0]["line"], 5, "{r}");
    assert_eq!(results[0]["heuristic"], true, "{r}");
    assert!(
        results[0]["reason"]
            .as_str()
            .is_some_and(|x| x.contains("several definitions")),
        "{r}"
    );
    // A method of one definition stays exact.
    assert_eq!(
        callers(&repo, "Log.once"),
        [("src/Log.java:9".into(), false)]
    );
    assert_eq!(
        callers(&repo, "src/walk.rs:5"),
        [("src/walk.rs:16".into(), true)]
    );
}

#[test]
fn methods_are_exact_through_the_receivers_type_and_guesses_otherwise() {
    let repo = Repo::new();
    repo.write(
        "app/core.py",
        "class Flask:\n    def run(self):\n        return 1\n\n    def serve(self):\n        return self.run()\n",
    );
    repo.write(
        "app/main.py",
        "from app.core import Flask\n\n\ndef start():\n    Flask.run(None)\n\n\nclass Dev(Flask):\n    def go(self):\n        return self.run()\n",
    );
    repo.write(
        "app/tasks.py",
        "from celery import Task\n\n\nclass Job(Task):\n    def go(self):\n        return self.run()\n\n\ndef spawn(greenlets):\n    greenlets[0].run()\n",
    );
    repo.commit("methods");
    repo.sno_json(&["init", "--json"]);
    let c = callers(&repo, "Flask.run");
    // Through the receiver's type: self in Flask, the class named, self in a
    // subclass whose base is imported.
    assert_eq!(
        exact(&c),
        ["app/core.py:6", "app/main.py:10", "app/main.py:5"],
        "{c:?}"
    );
    // self.run() in a class whose base lives outside the repository, and a
    // call on an unknown receiver: guesses, labelled.
    assert_eq!(guessed(&c), ["app/tasks.py:10", "app/tasks.py:6"], "{c:?}");
    let r = repo.sno_json(&["refs", "Flask.run", "--callers", "--json"]);
    for x in r["results"].as_array().unwrap() {
        if x["heuristic"] == true {
            assert!(
                x["reason"].as_str().unwrap_or("").contains("receiver"),
                "{x}"
            );
        }
    }
}

#[test]
fn a_nested_function_is_a_local_name_of_the_function_that_defines_it() {
    let repo = Repo::new();
    // `cb` in g is g's parameter; `helper` in f is the imported one, not
    // the one nested in outer; inside outer, its own nested helper shadows
    // the import.
    repo.write("a.py", "def helper():\n    return 0\n");
    repo.write(
        "b.py",
        "from a import helper\n\n\ndef g(cb):\n    return cb()\n\n\ndef h():\n    def cb():\n        return 1\n    return g(cb)\n\n\ndef outer():\n    def helper():\n        return 2\n    return helper()\n\n\ndef f():\n    return helper()\n",
    );
    repo.write(
        "web/a.js",
        "function outer() {\n  function inner() { return 1; }\n  return inner();\n}\n\nfunction other() {\n  return inner();\n}\n",
    );
    repo.write(
        "src/m.rs",
        "pub fn f() -> u8 {\n    fn inner() -> u8 { 1 }\n    inner()\n}\n\npub fn g() -> u8 {\n    inner()\n}\n",
    );
    repo.commit("nested functions");
    repo.sno_json(&["init", "--json"]);

    // Python: f calls a.helper exactly; outer calls its own helper.
    assert_eq!(callers(&repo, "a.py:1"), [("b.py:21".into(), false)]);
    assert_eq!(callers(&repo, "outer.helper"), [("b.py:17".into(), false)]);
    // g's `cb()` is its parameter: h.cb is passed there, so a guess at
    // most, never exact.
    assert!(exact(&callers(&repo, "h.cb")).is_empty());
    // JavaScript and Rust: the nested function is called exactly from its
    // own function only; from outside, the name is not its.
    assert_eq!(exact(&callers(&repo, "outer.inner")), ["web/a.js:3"]);
    assert_eq!(exact(&callers(&repo, "f.inner")), ["src/m.rs:3"]);
}

#[test]
fn a_parameter_a_local_function_or_a_module_changes_what_a_bare_call_means() {
    let repo = Repo::new();
    // A parameter hides the function of its name (Python, Go, C).
    repo.write(
        "a.py",
        "def process():\n    return 0\n\n\ndef run(process):\n    return process()\n\n\ndef go():\n    return process()\n",
    );
    repo.write(
        "g/a.go",
        "package g\n\nfunc process() int { return 0 }\n\nfunc run(process func() int) int { return process() }\n\nfunc use() int { return process() }\n",
    );
    repo.write(
        "c/a.c",
        "int process(void) { return 0; }\n\nint run(int (*process)(void)) { return process(); }\n\nint use(void) { return process(); }\n",
    );
    // A C# local function hides the class's method of its name.
    repo.write(
        "cs/A.cs",
        "class A {\n  int helper() { return 0; }\n  int run() {\n    int helper() { return 1; }\n    return helper();\n  }\n  int other() { return helper(); }\n}\n",
    );
    // A Ruby module's methods run on whatever includes it, not on the
    // class the module is written in.
    repo.write(
        "lib/response.rb",
        "class Response\n  def get_header(k)\n    @h[k]\n  end\n\n  def status\n    get_header('s')\n  end\n\n  module Helpers\n    def content_type\n      get_header('ct')\n    end\n  end\nend\n",
    );
    repo.commit("shadowing");
    repo.sno_json(&["init", "--json"]);

    // Only the calls outside the parameter's function are exact.
    assert_eq!(exact(&callers(&repo, "a.py:1")), ["a.py:10"]);
    assert_eq!(exact(&callers(&repo, "g/a.go:3")), ["g/a.go:7"]);
    assert_eq!(exact(&callers(&repo, "c/a.c:1")), ["c/a.c:5"]);
    let r = repo.sno_json(&["refs", "a.py:1", "--callers", "--json"]);
    let shadowed = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["line"] == 6)
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(shadowed["heuristic"], true, "{r}");
    assert!(
        shadowed["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("parameter"),
        "{r}"
    );
    assert_eq!(exact(&callers(&repo, "A.helper")), ["cs/A.cs:7"]);
    assert_eq!(exact(&callers(&repo, "run.helper")), ["cs/A.cs:5"]);
    assert_eq!(
        exact(&callers(&repo, "Response.get_header")),
        ["lib/response.rb:7"]
    );
}

#[test]
fn a_name_defined_twice_in_the_package_a_call_reaches_is_a_guess() {
    let repo = Repo::new();
    // Two extension functions of one name on two receivers: which one a
    // call in another file of the package reaches takes its receiver's type.
    repo.write(
        "src/p/Name.kt",
        "package p\n\nfun Class<*>.asName(): String = simpleName\n\nfun KClass<*>.asName(): String = simpleName ?: \"\"\n",
    );
    repo.write(
        "src/p/Type.kt",
        "package p\n\nfun KClass<*>.describe(): String = asName()\n",
    );
    // Go: one definition in the package, exact as before.
    repo.write("g/a.go", "package g\n\nfunc helper() int { return 1 }\n");
    repo.write(
        "g/b.go",
        "package g\n\nfunc Use() int { return helper() }\n",
    );
    repo.commit("extensions");
    repo.sno_json(&["init", "--json"]);
    let both: Vec<(String, bool)> = [
        callers(&repo, "src/p/Name.kt:3"),
        callers(&repo, "src/p/Name.kt:5"),
    ]
    .concat();
    assert!(
        both.iter().any(|(at, _)| at == "src/p/Type.kt:3"),
        "{both:?}"
    );
    assert!(exact(&both).is_empty(), "{both:?}");
    assert_eq!(callers(&repo, "helper"), [("g/b.go:3".into(), false)]);
}

#[test]
fn a_method_of_an_anonymous_class_calls_its_enclosing_class_by_a_guess() {
    let repo = Repo::new();
    // Java looks a bare call up in the anonymous class and its base first:
    // `helper()` in go() may well be Base.helper.
    repo.write(
        "src/Outer.java",
        "class Base {\n  void helper() {}\n}\n\nclass Outer {\n  void helper() {}\n  void run() {\n    Base b = new Base() {\n      void go() { helper(); }\n    };\n    helper();\n  }\n}\n",
    );
    // A C++ namespace's function does not hide the class's own method.
    repo.write(
        "cc/log.cpp",
        "namespace ns {\nvoid log() {}\nclass L {\n  void log() {}\n  void info() { log(); }\n};\n}\n",
    );
    // Kotlin: in `b.apply { .. }` a bare call goes to `b` first.
    repo.write(
        "kt/Outer.kt",
        "class Builder {\n  fun add(x: Int) {}\n}\n\nclass Outer {\n  fun add(x: Int) {}\n  fun make(b: Builder) {\n    b.apply { add(1) }\n    add(2)\n  }\n}\n",
    );
    // A Python closure's `self` is its method's: still exact.
    repo.write(
        "app/view.py",
        "class View:\n    def render(self):\n        return 1\n\n    def show(self):\n        def inner():\n            return self.render()\n        return inner()\n",
    );
    repo.commit("anonymous");
    repo.sno_json(&["init", "--json"]);
    let c = callers(&repo, "Outer.helper");
    assert_eq!(exact(&c), ["src/Outer.java:11"], "{c:?}");
    assert_eq!(guessed(&c), ["src/Outer.java:9"], "{c:?}");
    assert_eq!(exact(&callers(&repo, "View.render")), ["app/view.py:7"]);
    assert_eq!(exact(&callers(&repo, "cc/log.cpp:4")), ["cc/log.cpp:5"]);
    assert_eq!(exact(&callers(&repo, "Outer.add")), ["kt/Outer.kt:9"]);
}

#[test]
fn scoping_rules_of_each_language_are_exact() {
    let repo = Repo::new();
    // Java: a bare call inside a method is a call on `this`.
    repo.write(
        "src/Box.java",
        "class Box {\n  int size() { return 1; }\n  int twice() { return size() * 2; }\n}\n",
    );
    // Go: functions of another file of the same package need no import.
    repo.write(
        "pkg/a.go",
        "package pkg\n\nfunc helper() int { return 1 }\n",
    );
    repo.write(
        "pkg/b.go",
        "package pkg\n\nfunc Use() int { return helper() }\n",
    );
    // Python: a module imported from its package, and a glob import.
    repo.write(
        "lib/util.py",
        "def clean(x):\n    return x\n\n\ndef strip(x):\n    return x\n",
    );
    repo.write(
        "lib/use.py",
        "from lib import util\nfrom lib.util import *\n\n\ndef go(x):\n    return util.clean(strip(x))\n",
    );
    repo.commit("scopes");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(
        callers(&repo, "Box.size"),
        [("src/Box.java:3".into(), false)]
    );
    assert_eq!(callers(&repo, "helper"), [("pkg/b.go:3".into(), false)]);
    assert_eq!(callers(&repo, "clean"), [("lib/use.py:6".into(), false)]);
    assert_eq!(callers(&repo, "strip"), [("lib/use.py:6".into(), false)]);
}

#[test]
fn incremental_resolution_follows_a_base_class_change() {
    let repo = Repo::new();
    repo.write(
        "app/base.py",
        "class Base:\n    def hook(self):\n        return 1\n\n\nclass Other:\n    def hook(self):\n        return 2\n",
    );
    repo.write(
        "app/child.py",
        "from app.base import Base, Other\n\n\nclass Child(Base):\n    def go(self):\n        return self.hook()\n",
    );
    repo.commit("one");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(
        callers(&repo, "Base.hook"),
        [("app/child.py:6".into(), false)]
    );
    // Only the base changes (in child.py): the call now lands on Other.hook.
    repo.write(
        "app/child.py",
        "from app.base import Base, Other\n\n\nclass Child(Other):\n    def go(self):\n        return self.hook()\n",
    );
    repo.commit("rebase Child");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(
        callers(&repo, "Other.hook"),
        [("app/child.py:6".into(), false)]
    );
    assert!(exact(&callers(&repo, "Base.hook")).is_empty());
    // The incremental state equals a fresh index of the same commit.
    let incremental = repo.status()["views_digest"].clone();
    std::fs::remove_dir_all(repo.path().join(".sno")).unwrap();
    repo.sno_json(&["init", "--history", "0", "--json"]);
    assert_eq!(repo.status()["views_digest"], incremental);
}

#[test]
fn an_ambiguous_name_gets_the_same_answer_from_the_cli_and_mcp() {
    let repo = Repo::new();
    repo.write(
        "src/main.rs",
        "fn search_path() {}\n\nstruct A;\nimpl A {\n    fn search_path(&self) {}\n}\n\nstruct B;\nimpl B {\n    fn search_path(&self) {}\n}\n",
    );
    repo.commit("three");
    repo.sno_json(&["init", "--json"]);
    let out = repo.sno(&["refs", "search_path", "--json"]);
    assert_error_code(&out, "SNO-AMBIGUOUS-SYMBOL");
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut s = Server::init(&repo, "2025-06-18").0;
    let r = s.call("references", json!({"name": "search_path"}));
    let mcp = body(&r);
    s.finish();
    assert_eq!(mcp["error"]["code"], "SNO-AMBIGUOUS-SYMBOL", "{mcp}");
    assert_eq!(cli["error"]["did_you_mean"], mcp["error"]["did_you_mean"]);
    assert_eq!(
        cli["error"]["did_you_mean"].as_array().unwrap().len(),
        3,
        "{cli}"
    );
    // A qualified name picks one.
    assert_eq!(
        callers(&repo, "A.search_path"),
        Vec::<(String, bool)>::new()
    );
    let r = repo.sno_json(&["show", "B.search_path", "--json"]);
    assert_eq!(r["symbol"]["line"], 10, "{r}");
}

#[test]
fn a_c_prototype_and_its_definition_are_one_function() {
    // hiredis' layout: the header declares, the source defines, a test
    // includes the header and calls; spdlog's: a method declared in its
    // class and defined out of it in another header.
    let repo = Repo::new();
    repo.write(
        "hiredis.h",
        "#ifndef H\n#define H\nint redisSetTimeout(int *c, int tv);\nstatic int helper(void);\n#endif\n",
    );
    repo.write(
        "hiredis.c",
        "#include \"hiredis.h\"\n\nstatic int helper(void);\n\nint redisSetTimeout(int *c, int tv) {\n    return helper() + tv;\n}\n\nstatic int helper(void) {\n    return 1;\n}\n",
    );
    repo.write(
        "test.c",
        "#include \"hiredis.h\"\n\nint main(void) {\n    int c = 0;\n    return redisSetTimeout(&c, 5);\n}\n",
    );
    repo.write(
        "include/common.h",
        "namespace spdlog {\nclass spdlog_ex {\npublic:\n    const char *what() const;\n};\n}\n",
    );
    repo.write(
        "include/common-inl.h",
        "#include \"common.h\"\nnamespace spdlog {\nconst char *spdlog_ex::what() const {\n    return \"x\";\n}\n}\n",
    );
    repo.commit("c");
    repo.sno_json(&["init", "--json"]);

    // One function: no ambiguity, the definition answers, and the call
    // made through the header's prototype is its exact caller.
    let r = repo.sno_json(&["show", "redisSetTimeout", "--json"]);
    assert_eq!(r["symbol"]["path"], "hiredis.c", "{r}");
    assert_eq!(
        callers(&repo, "redisSetTimeout"),
        [("test.c:5".to_string(), false)]
    );
    // A static function declared before its use is called at its definition.
    assert_eq!(
        callers(&repo, "helper"),
        [("hiredis.c:6".to_string(), false)]
    );
    // The prototype is still there, shown as the declaration it is.
    let r = repo.sno_json(&["symbol", "redisSetTimeout", "--json"]);
    let sigs: Vec<(&str, &str)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["path"].as_str().unwrap(),
                x["signature"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        sigs.contains(&("hiredis.h", "int redisSetTimeout(int *c, int tv);")),
        "{sigs:?}"
    );
    // A search for the name puts the definitions before the prototypes.
    for (name, path) in [
        ("redisSetTimeout", "hiredis.c"),
        ("what", "include/common-inl.h"),
    ] {
        let r = repo.sno_json(&["search", name, "--json", "--lexical-only"]);
        assert_eq!(r["items"][0]["path"], path, "{name}: {r}");
    }
    let r = repo.sno_json(&["show", "spdlog_ex.what", "--json"]);
    assert_eq!(r["symbol"]["path"], "include/common-inl.h", "{r}");
}

#[test]
fn an_override_is_called_through_the_method_it_overrides_and_says_so() {
    let repo = Repo::new();
    repo.write(
        "app/base.py",
        "class Base:\n    def render(self, x):\n        return x\n\n    def show(self, x):\n        return self.render(x)\n",
    );
    // The middle of the chain defines no `render`: a point query reads it
    // by its name to reach Base.
    repo.write(
        "app/mid.py",
        "from app.base import Base\n\n\nclass Mid(Base):\n    def other(self):\n        return 0\n",
    );
    repo.write(
        "app/leaf.py",
        "from app.mid import Mid\n\n\nclass Leaf(Mid):\n    def render(self, x):\n        return '*' + x\n",
    );
    repo.write(
        "src/Shape.java",
        "class Shape {\n    double area() { return 0; }\n    String describe() { return \"area \" + area(); }\n}\n\nclass Square extends Shape {\n    @Override\n    double area() { return 4; }\n}\n",
    );
    repo.commit("overrides");
    repo.sno_json(&["init", "--json"]);

    // Base.show calls Base.render, exactly; with a Leaf it runs
    // Leaf.render, which is a guess and says why.
    assert_eq!(
        callers(&repo, "Base.render"),
        [("app/base.py:6".into(), false)]
    );
    assert_eq!(
        callers(&repo, "Leaf.render"),
        [("app/base.py:6".into(), true)]
    );
    let r = repo.sno_json(&["refs", "Leaf.render", "--callers", "--json"]);
    let first = &r["results"][0];
    assert_eq!(first["from"], "Base.show", "{r}");
    assert_eq!(first["to"], "Base.render", "{r}");
    let reason = first["reason"].as_str().unwrap();
    assert!(
        reason.contains("overrides") && reason.contains("Leaf"),
        "{reason}"
    );
    // References list it too, and a method overriding nothing gains none.
    let refs = repo.sno_json(&["refs", "Leaf.render", "--json"]);
    assert!(
        refs["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["path"] == "app/base.py" && x["line"] == 6 && x["heuristic"] == true),
        "{refs}"
    );
    assert!(callers(&repo, "Mid.other").is_empty());
    // The base method's references name its overrides, down the chain
    // (Leaf through Mid, whose file holds no `render`).
    let base_refs = repo.sno_json(&["refs", "Base.render", "--json"]);
    let overrides: Vec<(&str, &str, u64, bool)> = base_refs["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "overrides")
        .map(|x| {
            (
                x["from"].as_str().unwrap(),
                x["path"].as_str().unwrap(),
                x["line"].as_u64().unwrap(),
                x["heuristic"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        overrides,
        [("Leaf.render", "app/leaf.py", 5, true)],
        "{base_refs}"
    );
    assert!(repo.sno_json(&["refs", "Leaf.render", "--json"])["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["kind"] != "overrides"));
    // MCP answers alike.
    let mut s = Server::init(&repo, "2025-06-18").0;
    let m = s.call("callers", json!({"name": "Leaf.render"}));
    let mcp = body(&m);
    s.finish();
    assert_eq!(mcp["results"], r["results"], "{mcp}");
    let mut s = Server::init(&repo, "2025-06-18").0;
    let m = s.call("references", json!({"name": "Base.render"}));
    let mcp = body(&m);
    s.finish();
    assert_eq!(mcp["results"], base_refs["results"], "{mcp}");

    // What Base.show calls: Base.render exactly, and Leaf.render when the
    // receiver is a Leaf.
    let r = repo.sno_json(&["refs", "Base.show", "--callees", "--json"]);
    let callees: Vec<(&str, bool)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["to"].as_str().unwrap(), x["heuristic"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        callees,
        [("Base.render", false), ("Leaf.render", true)],
        "{r}"
    );

    // Java: the base's own `area()` reaches the override.
    assert_eq!(
        callers(&repo, "Shape.area"),
        [("src/Shape.java:3".into(), false)]
    );
    assert_eq!(
        callers(&repo, "Square.area"),
        [("src/Shape.java:3".into(), true)]
    );
}

#[test]
fn overload_stubs_and_property_setters_leave_one_meaning_of_a_name() {
    let repo = Repo::new();
    repo.write(
        "app/param.py",
        "import typing as t\n\n\nclass Param:\n    @t.overload\n    def get_default(self, call: t.Literal[True] = True) -> int: ...\n\n    @t.overload\n    def get_default(self, call: bool = ...) -> object: ...\n\n    def get_default(self, call=True):\n        return 1\n\n    def consume(self):\n        return self.get_default()\n",
    );
    repo.commit("overloads");
    repo.sno_json(&["init", "--json"]);
    // The name is the implementation, not an ambiguity of three.
    let shown = repo.sno_json(&["show", "Param.get_default", "--json"]);
    assert_eq!(shown["symbol"]["line"], 11, "{shown}");
    // The call is exact, to the implementation.
    assert_eq!(
        callers(&repo, "Param.get_default"),
        [("app/param.py:15".into(), false)]
    );
    // A property's setter is the getter's property, not a second meaning.
    repo.write(
        "app/client.py",
        "class Client:\n    @property\n    def timeout(self) -> float:\n        return self._t\n\n    @timeout.setter\n    def timeout(self, t: float) -> None:\n        self._t = t\n",
    );
    repo.commit("property");
    repo.sno_json(&["init", "--json"]);
    let shown = repo.sno_json(&["show", "Client.timeout", "--json"]);
    assert_eq!(shown["symbol"]["line"], 2, "from @property: {shown}");
    let o = repo.sno_json(&["outline", "app/client.py", "--json"]);
    assert!(
        o.to_string()
            .contains("@timeout.setter def timeout(self, t: float) -> None"),
        "{o}"
    );

    // TypeScript's overload signatures are declarations alike.
    repo.write(
        "web/box.ts",
        "export class Box {\n  get(a: number): number;\n  get(a: any): any { return a; }\n  use() { return this.get(1); }\n}\n",
    );
    repo.commit("ts overloads");
    repo.sno_json(&["init", "--json"]);
    let shown = repo.sno_json(&["show", "Box.get", "--json"]);
    assert_eq!(shown["symbol"]["line"], 3, "{shown}");
    assert_eq!(callers(&repo, "Box.get"), [("web/box.ts:4".into(), false)]);
    // The outline says which are stubs.
    let o = repo.sno_json(&["outline", "app/param.py", "--json"]);
    let text = o.to_string();
    assert!(
        text.contains("@t.overload def get_default(self, call: bool = ...) -> object"),
        "{o}"
    );
}

#[test]
fn a_local_variable_or_an_import_alias_changes_what_a_bare_call_means() {
    let repo = Repo::new();
    // A name the function binds is its local variable wherever it is used
    // there: calling it calls a value, not the module's function.
    repo.write(
        "pkg/main.py",
        "def load():\n    return 1\n\n\ndef assigned():\n    load = make_loader()\n    return load()\n\n\ndef looped(loaders):\n    for load in loaders:\n        load()\n\n\ndef as_lambda():\n    load = lambda: 9\n    return load()\n\n\ndef walrus():\n    if (load := make_loader()):\n        load()\n\n\ndef real():\n    return load()\n",
    );
    // `from m import x as a` binds `a`, not `x`; so does `import { x as a }`.
    repo.write("pkg/base.py", "def helper():\n    return 1\n");
    repo.write(
        "pkg/user.py",
        "from pkg.base import helper as h\n\n\ndef through_alias():\n    return h()\n\n\ndef by_original_name():\n    return helper()\n",
    );
    repo.write(
        "web/util.js",
        "export function format(x) {\n  return String(x);\n}\n",
    );
    repo.write(
        "web/app.js",
        "import { format as fmt } from \"./util.js\";\n\nexport function run3(x) {\n  return fmt(x);\n}\n\nexport function run4(x) {\n  return format(x);\n}\n",
    );
    repo.commit("locals and aliases");
    repo.sno_json(&["init", "--json"]);

    assert_eq!(
        callers(&repo, "pkg/main.py:1"),
        [("pkg/main.py:26".to_string(), false)]
    );
    assert_eq!(exact(&callers(&repo, "pkg/base.py:1")), ["pkg/user.py:5"]);
    assert_eq!(exact(&callers(&repo, "web/util.js:1")), ["web/app.js:4"]);
    // The original name is not in scope where only its alias is: no
    // exact caller there (a guess by name at most, labelled so).
    assert!(!exact(&callers(&repo, "pkg/base.py:1")).contains(&"pkg/user.py:9"));
    assert!(!exact(&callers(&repo, "web/util.js:1")).contains(&"web/app.js:8"));
}

#[test]
fn a_python_function_defined_twice_is_called_as_its_last_definition() {
    let repo = Repo::new();
    repo.write(
        "pkg/twice.py",
        "def shadowed():\n    return 1\n\n\ndef shadowed():\n    return 2\n\n\ndef caller():\n    return shadowed()\n",
    );
    repo.commit("a redefinition");
    repo.sno_json(&["init", "--json"]);
    // The name is bound to the second definition when `caller` runs: the
    // call is a guess among two (a branch could have chosen), at the last.
    assert_eq!(
        guessed(&callers(&repo, "pkg/twice.py:5")),
        ["pkg/twice.py:10"]
    );
    assert!(callers(&repo, "pkg/twice.py:1").is_empty());
}

#[test]
fn a_local_variable_of_a_block_hides_the_function_of_its_name() {
    let repo = Repo::new();
    repo.write(
        "g/p.go",
        "package g\n\nfunc load() int { return 1 }\n\nfunc a() int {\n\tload := func() int { return 2 }\n\treturn load()\n}\n\nfunc b() int { return load() }\n",
    );
    repo.write(
        "src/lib.rs",
        "fn load() -> i32 { 1 }\n\nfn a() -> i32 {\n    let load = || 2;\n    load()\n}\n\nfn b() -> i32 { load() }\n",
    );
    repo.write(
        "web/m.js",
        "function load() { return 1; }\n\nfunction c(xs) {\n  for (const load of xs) { load(); }\n}\n\nfunction b() { return load(); }\n",
    );
    repo.commit("locals in blocks");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(
        callers(&repo, "g/p.go:3"),
        [("g/p.go:10".to_string(), false)]
    );
    assert_eq!(
        callers(&repo, "src/lib.rs:1"),
        [("src/lib.rs:8".to_string(), false)]
    );
    assert_eq!(
        callers(&repo, "web/m.js:1"),
        [("web/m.js:7".to_string(), false)]
    );
}

#[test]
fn a_rust_module_alias_is_called_through() {
    let repo = Repo::new();
    repo.write(
        "src/lib.rs",
        "mod config;\nuse crate::config as cfg;\n\npub fn run() -> i32 {\n    cfg::load()\n}\n",
    );
    repo.write("src/config.rs", "pub fn load() -> i32 {\n    1\n}\n");
    repo.commit("a module alias");
    repo.sno_json(&["init", "--json"]);
    assert_eq!(exact(&callers(&repo, "src/config.rs:1")), ["src/lib.rs:5"]);
}

#[test]
fn a_class_named_like_its_imported_base_is_not_its_own_base() {
    let repo = Repo::new();
    repo.write(
        "wrap.py",
        "import logging\nimport textwrap\n\n\nclass TextWrapper(textwrap.TextWrapper):\n    def fill(self, text):\n        return super().fill(text)\n\n\nclass StreamHandler(logging.StreamHandler):\n    def handle(self, record):\n        return super().handle(record)\n",
    );
    repo.write(
        "use.py",
        "from wrap import TextWrapper\n\n\ndef go(s):\n    return TextWrapper(width=10).fill(s)\n",
    );
    repo.commit("same-named bases");
    repo.sno_json(&["init", "--json"]);
    // No self-recursion: the only caller of fill is use.py's (a guess:
    // its receiver is a call's result).
    assert_eq!(
        callers(&repo, "TextWrapper.fill"),
        [("use.py:5".to_string(), true)]
    );
    assert!(callers(&repo, "StreamHandler.handle").is_empty());
    // And no class inherits from itself.
    let r = repo.sno_json(&["refs", "TextWrapper", "--json"]);
    let selfish: Vec<&serde_json::Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "inherits" && x["path"] == "wrap.py")
        .collect();
    assert!(selfish.is_empty(), "{r}");
}

#[test]
fn names_an_audit_found_bound_elsewhere_are_not_exact_calls() {
    let repo = Repo::new();
    // An object literal's methods bind no names in the function making it.
    repo.write(
        "web/m.ts",
        "export function optional(x: number) { return x + 1; }\n\nfunction methods() {\n  return {\n    optional() { return optional(1); },\n  };\n}\n",
    );
    // A plain function's `this` is its own.
    repo.write(
        "web/a.js",
        "class Foo {\n  run() { return 0; }\n  go(items) {\n    items.forEach(function (x) { this.run(); });\n    items.forEach((x) => this.run());\n  }\n}\n",
    );
    // Go: a named result and a select case's variable are locals.
    repo.write(
        "go/a.go",
        "package a\n\nfunc helper() int { return 2 }\n\nfunc named() (helper func() int) {\n\thelper = func() int { return 9 }\n\t_ = helper()\n\treturn\n}\n\nfunc sel(ch chan func() int) {\n\tselect {\n\tcase helper := <-ch:\n\t\thelper()\n\t}\n}\n",
    );
    // Rust: a `static` inside a function.
    repo.write(
        "src/lib.rs",
        "fn third() -> i32 { 3 }\n\nfn fourth() -> i32 { 4 }\n\nfn local() -> i32 {\n    static third: fn() -> i32 = fourth;\n    third()\n}\n",
    );
    // Java: overriding one of a base's overloads hides none of the others;
    // overriding a base's only method of the name is that method.
    repo.write(
        "java/A.java",
        "class A {\n  int add(int x) { return x; }\n  int add(int x, int y) { return x + y; }\n  int size() { return 0; }\n}\n\nclass B extends A {\n  int add(int x) { return 7; }\n  int size() { return 1; }\n  void use() { add(5, 6); size(); }\n}\n",
    );
    repo.commit("bound elsewhere");
    repo.sno_json(&["init", "--json"]);
    assert!(
        exact(&callers(&repo, "web/m.ts:5")).is_empty(),
        "the literal's optional"
    );
    assert_eq!(exact(&callers(&repo, "web/m.ts:1")), ["web/m.ts:5"]);
    // The arrow function's `this` is the instance: still exact.
    assert_eq!(exact(&callers(&repo, "Foo.run")), ["web/a.js:5"]);
    assert!(
        exact(&callers(&repo, "go/a.go:3")).is_empty(),
        "{:?}",
        callers(&repo, "go/a.go:3")
    );
    assert!(exact(&callers(&repo, "src/lib.rs:1")).is_empty());
    assert!(
        exact(&callers(&repo, "java/A.java:8")).is_empty(),
        "B.add(int)"
    );
    assert_eq!(
        exact(&callers(&repo, "java/A.java:9")),
        ["java/A.java:10"],
        "B.size"
    );
}

#[test]
fn a_go_methods_receiver_calls_its_types_methods() {
    let repo = Repo::new();
    repo.write(
        "mux/mux.go",
        "package mux\n\ntype Mux struct{ subs []*Mux }\n\nfunc (mx *Mux) handle() int { return 1 }\n\nfunc (mx *Mux) Serve() int {\n\treturn mx.handle()\n}\n\nfunc (mx *Mux) Each() int {\n\tn := 0\n\tfor _, mx := range mx.subs {\n\t\tn += mx.handle()\n\t}\n\treturn n\n}\n",
    );
    // Another file of the package holds a method of the same type.
    repo.write(
        "mux/more.go",
        "package mux\n\nfunc (m Mux) Twice() int {\n\treturn m.handle() + m.handle()\n}\n",
    );
    // Another package's type of the same name is another type.
    repo.write(
        "other/mux.go",
        "package other\n\ntype Mux struct{}\n\nfunc (mx *Mux) handle() int { return 2 }\n",
    );
    repo.commit("go methods");
    repo.sno_json(&["init", "--json"]);
    let found = callers(&repo, "mux/mux.go:5");
    // `mx.handle()` in Serve and `m.handle()` in Twice are exact; the loop's
    // `mx` is a slice element, not the receiver: a guess.
    assert_eq!(
        exact(&found),
        ["mux/more.go:4", "mux/mux.go:8"],
        "{found:?}"
    );
    assert!(guessed(&found).contains(&"mux/mux.go:14"), "{found:?}");
    assert!(exact(&callers(&repo, "other/mux.go:5")).is_empty());
}
