//! Trees built in scratch memory (tree-sitter on mimalloc, the heap
//! destroyed whole after each file) give the same facts as trees freed node
//! by node, file after file, without corrupting what tree-sitter keeps
//! between parses. Its own test binary: the allocator must be switched
//! before tree-sitter allocates anything in the process.

use sno_journal::model::Language;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn sources() -> Vec<(Language, String)> {
    let table: Vec<String> = (0..900).map(|i| (i % 251).to_string()).collect();
    let table = table.join(", ");
    vec![
        (Language::Python, format!("import os\nT = [{table}]\n\nclass A(B):\n    \"\"\"Doc.\"\"\"\n    def m(self, x=f()):\n        return os.path.join(g(x), self.h())\n")),
        (Language::Rust, "use std::fmt;\n/// S.\nstruct S;\nimpl fmt::Display for S {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, \"{}\", g()) }\n}\nfn broken( {\n".to_string()),
        (Language::C, format!("#include <a.h>\nstatic const int k[] = {{{table}}};\nint f(int x) {{ return g(k[x]); }}\n")),
        (Language::Go, "package p\n\nimport \"fmt\"\n\n// F prints.\nfunc F() { fmt.Println(g()) }\ntype T struct{ A int }\nfunc (t *T) M() { t.N() }\n".to_string()),
        (Language::TypeScript, "import { x } from './y';\nexport class A extends B implements I {\n  m(): number { return f(x); }\n}\n".to_string()),
        (Language::Ruby, "require 'x'\nclass A < B\n  def m\n    f(1)\n  end\nend\n".to_string()),
        (Language::CSharp, "using A;\n/// <summary>S.</summary>\nclass S : B { void M() { var s = $\"{F()}\"; this.G(); } }\n".to_string()),
        (Language::Php, "<?php\nclass A extends B {\n  function m() { return <<<EOT\n  {$this->f()}\n  EOT; }\n}\n?>\n<p><?= g() ?></p>\n".to_string()),
        (Language::Kotlin, "import a.B\n/** A. */\nclass A : B() {\n  fun m() = \"${f()}\".g()\n}\n".to_string()),
        (Language::Swift, "import UIKit\n/// A.\nclass A: B {\n  func m() { let s = \"\\(f())\"; g(s) }\n}\n".to_string()),
        (Language::Scala, "import a.B\nobject A:\n  def m(x: Int): Int =\n    f(x)\n\n  def n = s\"${g(1)}\"\n".to_string()),
    ]
}

#[test]
fn scratch_trees_give_the_facts_of_trees_freed_node_by_node() {
    sno_extract::allocator::use_mimalloc();
    let files = sources();
    let expected: Vec<_> = files
        .iter()
        .map(|(lang, src)| {
            // Outside a scratch scope: a version kept for the next one is
            // parsed by the thread's cached parser and freed normally.
            let (facts, _, kept) =
                sno_extract::reparse::extract_after(*lang, src.as_bytes(), None, true);
            drop(kept);
            facts
        })
        .collect();
    assert!(expected.iter().all(|f| !f.symbols.is_empty()));
    // Many rounds, interleaving scratch parses with cached-parser parses on
    // several threads: a scratch heap leaking into a cached parser would
    // corrupt memory and show as wrong facts or a crash.
    std::thread::scope(|scope| {
        for t in 0..3 {
            let (files, expected) = (&files, &expected);
            scope.spawn(move || {
                for round in 0..200 {
                    for (i, (lang, src)) in files.iter().enumerate() {
                        let facts = sno_extract::extract(*lang, src.as_bytes());
                        assert_eq!(facts, expected[i], "thread {t}, round {round}, {lang:?}");
                        assert!(sno_extract::parse_once(*lang, src.as_bytes()));
                        if round % 7 == 0 {
                            // The thread's cached parser, between scratch parses.
                            let cached = sno_extract::parse(*lang, src.as_bytes()).expect("parses");
                            assert!(cached.root_node().descendant_count() > 10);
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn a_first_index_write_purges_freed_memory_soon_and_then_as_before() {
    use sno_extract::allocator::{
        purge_delay_ms, purge_soon_after_answers, PurgeAtOnce, PurgeSoon,
    };
    sno_extract::allocator::use_mimalloc();
    // mimalloc v3 holds freed pages for a second (unless its
    // MIMALLOC_PURGE_DELAY says otherwise).
    let before = purge_delay_ms().expect("mimalloc is the allocator");
    let within = before.min(10);
    {
        let _outer = PurgeSoon::start();
        assert_eq!(purge_delay_ms(), Some(within));
        {
            // Nested: the delay is short already and stays so after.
            let _inner = PurgeSoon::start();
            assert_eq!(purge_delay_ms(), Some(within));
        }
        assert_eq!(purge_delay_ms(), Some(within));
    }
    assert_eq!(purge_delay_ms(), Some(before));
    // A server purges soon after its answers: a write there leaves it so.
    purge_soon_after_answers();
    let serving = purge_delay_ms().expect("set");
    assert!(serving > 0 && serving <= 10, "{serving}");
    {
        let _w = PurgeSoon::start();
        assert_eq!(purge_delay_ms(), Some(serving));
    }
    assert_eq!(purge_delay_ms(), Some(serving));
    // Its index runs purge at once while any is running, however they
    // overlap, and the serving delay comes back after the last.
    let first = PurgeAtOnce::start();
    assert_eq!(purge_delay_ms(), Some(0));
    let second = PurgeAtOnce::start();
    drop(first);
    assert_eq!(
        purge_delay_ms(),
        Some(0),
        "the second run still purges at once"
    );
    {
        let _w = PurgeSoon::start();
        assert_eq!(purge_delay_ms(), Some(0));
    }
    drop(second);
    assert_eq!(purge_delay_ms(), Some(serving));
}
