//! Extraction must survive anything: random bytes, truncated files, deep
//! nesting. Every language gets each input; no panic (the internal-error
//! diagnostic would reveal one caught by `extract`) and every span and line
//! must lie within the source.

use sno_journal::model::Language;

use crate::facts::FileFacts;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Source-like fragments, so random inputs reach deep into the grammars
/// instead of failing at the first byte.
const FRAGMENTS: &[&str] = &[
    "class ",
    "def ",
    "fn ",
    "func ",
    "impl ",
    "struct ",
    "interface ",
    "module ",
    "namespace ",
    "import ",
    "from ",
    "use ",
    "#include ",
    "require ",
    "package ",
    "template<",
    "extends ",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ":",
    "::",
    ";",
    ",",
    ".",
    "->",
    "=>",
    "=",
    "\"",
    "'",
    "`",
    "/*",
    "*/",
    "//",
    "#",
    "///",
    "/**",
    "\n",
    "\n    ",
    " ",
    "x",
    "Foo",
    "self",
    "this",
    "new ",
    "end",
    "return ",
    "@",
    "*",
    "&",
    "\\",
    "\u{e9}",
    "\u{1F600}",
    "0x1F",
];

fn assert_sane(lang: Language, src: &[u8], facts: &FileFacts) {
    let lines = src.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    assert_eq!(facts.language, lang);
    assert!(facts.diagnostics.len() <= crate::walker::MAX_DIAGNOSTICS);
    for d in &facts.diagnostics {
        assert_ne!(
            d.message,
            crate::INTERNAL_ERROR,
            "{lang:?} panicked on {src:?}"
        );
        assert!(
            d.line >= 1 && d.line <= lines,
            "{lang:?} diagnostic line {d:?}"
        );
    }
    for (i, s) in facts.symbols.iter().enumerate() {
        let sp = s.span;
        assert!(
            sp.start_byte <= sp.end_byte && sp.end_byte as usize <= src.len(),
            "{lang:?} {s:?}"
        );
        assert!(
            sp.start_line >= 1 && sp.start_line <= sp.end_line && sp.end_line <= lines,
            "{s:?}"
        );
        assert!(
            s.parent.is_none_or(|p| p < i),
            "{lang:?} parent after child: {s:?}"
        );
        assert!(s.signature.chars().count() <= crate::source_text::MAX_SIGNATURE_CHARS);
    }
    for c in &facts.calls {
        assert!(c.line >= 1 && c.line <= lines && c.caller.is_none_or(|i| i < facts.symbols.len()));
    }
    for h in &facts.inherits {
        assert!(h.symbol < facts.symbols.len() && h.line <= lines);
    }
    for imp in &facts.imports {
        assert!(imp.line >= 1 && imp.line <= lines);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for round in 0..40 {
        let len = rng.below(400);
        let src: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        for lang in Language::ALL {
            let facts = crate::extract(lang, &src);
            assert_sane(lang, &src, &facts);
        }
        let _ = round;
    }
}

#[test]
fn random_fragments_never_panic() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    for _ in 0..60 {
        let mut src = String::new();
        for _ in 0..rng.below(120) {
            src.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
        }
        for lang in Language::ALL {
            let facts = crate::extract(lang, src.as_bytes());
            assert_sane(lang, src.as_bytes(), &facts);
        }
    }
}

#[test]
fn every_truncation_of_real_code_never_panics() {
    let samples: &[(Language, &str)] = &[
        (Language::Python, "import os\nclass A(B):\n    \"\"\"Doc.\"\"\"\n    def f(self, x):\n        return os.path.join(x)\n"),
        (Language::JavaScript, "import a from './a';\n/** D */\nclass A extends B { m() { this.x.y(1); } }\nconst f = () => new A();\n"),
        (Language::TypeScript, "export interface I extends J { m(): void }\nexport class C<T> implements I { m(): void { f<T>(); } }\n"),
        (Language::Tsx, "const App = () => <div onClick={() => go()}>{items.map(i => <Item key={i} />)}</div>;\n"),
        (Language::Go, "package p\nimport \"fmt\"\n// S doc\ntype S struct { Base\n x int }\nfunc (s *S) M() { fmt.Println(s.x) }\n"),
        (Language::Rust, "use a::{b, c::d};\n/// Doc\n#[derive(X)]\nstruct S;\nimpl T for S { fn f(&self) { g!(1); self.h(); } }\n"),
        (Language::Java, "import a.b.C;\n/** D */\npublic class A extends B implements I { A() { super(); } void m() { new C().go(); } }\n"),
        (Language::C, "#include <stdio.h>\n#define M 1\ntypedef struct { int x; } P;\nint main(void) { printf(\"%d\", M); }\n"),
        (Language::Cpp, "namespace n { class A : public B { void f(); }; void A::f() { g(); } }\n"),
        (Language::Ruby, "require 'x'\n# Doc\nclass A < B\n  include M\n  def self.f(x)\n    x.g(1)\n  end\nend\n"),
        (Language::CSharp, "using A.B;\nnamespace N {\n/// D\nclass C : B, I { C() : base() {} void M() { this.x?.Y(new Z()); } }\n}\n"),
        (Language::Php, "<?php\nuse A\\{B, C as D};\n/** D */\nclass A extends B { function f() { $this->g(parent::h(new C())); } }\n"),
        (Language::Kotlin, "import a.b.*\n/** D */\nclass A(x: Int) : B(x), I {\n  companion object { fun f() = g(1) }\n}\n"),
        (Language::Swift, "import UIKit\n/// D\nclass A: B { init() { super.init(); x?.y[0].z() } }\nextension A: P {}\n"),
        (Language::Scala, "import a.{b, c => d}\n/** D */\nclass A extends B with C { def f(x: Int) = g(x) }\nobject A\n"),
    ];
    for &(lang, src) in samples {
        let bytes = src.as_bytes();
        let full = crate::extract(lang, bytes);
        assert!(
            full.diagnostics.is_empty(),
            "{lang:?}: {:?}",
            full.diagnostics
        );
        assert!(
            !full.symbols.is_empty() || lang == Language::Tsx,
            "{lang:?} found nothing"
        );
        for cut in 0..=bytes.len() {
            let part = &bytes[..cut];
            assert_sane(lang, part, &crate::extract(lang, part));
        }
    }
}

#[test]
fn deep_nesting_is_walked_without_recursion() {
    for lang in Language::ALL {
        let src = format!("{}{}", "(".repeat(20_000), ")".repeat(20_000));
        let facts = crate::extract(lang, src.as_bytes());
        assert_sane(lang, src.as_bytes(), &facts);
    }
    let chain = format!("x{}()\n", ".a".repeat(5_000));
    let facts = crate::extract(Language::Python, chain.as_bytes());
    assert_eq!(facts.calls.len(), 1);
    assert_eq!(
        facts.calls[0].receiver.as_deref().map(str::len),
        Some(chain.len() - 5)
    );
}

#[test]
fn diagnostics_are_capped() {
    let src = "def (\n".repeat(2_000);
    let facts = crate::extract(Language::Python, src.as_bytes());
    assert!(!facts.diagnostics.is_empty());
    assert!(facts.diagnostics.len() <= crate::walker::MAX_DIAGNOSTICS);
}
