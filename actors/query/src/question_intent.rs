//! What a question in words asks for besides its words: the code that does
//! something (most questions), the tests of something ("where are the tests
//! for the router"), or how to work on the project ("how do I run the
//! tests", "how to build the docs", "installing from source"), which the
//! README, CONTRIBUTING or a CI file answers, not code whose names share
//! its words (`TestRun`, `runParser`).

use sno_journal::model::SymbolKind;

use crate::test_files;

/// What a question asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asks {
    /// The code that does what it says.
    Code,
    /// Tests of something: "where are the tests for the router", "tests
    /// of flag groups".
    Tests,
    /// Code around tests ("how does CliRunner invoke a command in
    /// tests"): tests weigh as any code.
    AboutTests,
    /// How to build, run, test, install or release the project.
    Procedure,
}

/// Words that ask how to work on the project wherever they stand: the
/// headings of the docs that answer.
const PROCEDURE_WORDS: &[&str] = &["installation", "contributing"];

/// Words that ask how to work on the project in a question ("how do I
/// install it"); in a doc comment they say what code does ("the prototype
/// to install on").
const PROCEDURE_QUESTION_WORDS: &[&str] = &["install", "installing", "contribute"];

/// Verbs of working on a project, which ask how to do it when one of
/// [`PROCEDURE_OBJECTS`] is what they act on ("run the tests"; "run the
/// middleware" asks about code).
const PROCEDURE_VERBS: &[&str] = &[
    "run",
    "running",
    "runs",
    "build",
    "building",
    "builds",
    "compile",
    "compiling",
    "release",
    "releasing",
    "publish",
    "publishing",
    "deploy",
    "deploying",
    "lint",
    "linting",
];

/// What such a verb acts on when it asks how to work on the project.
const PROCEDURE_OBJECTS: &[&str] = &[
    "test",
    "tests",
    "testsuite",
    "suite",
    "benchmark",
    "benchmarks",
    "bench",
    "benches",
    "docs",
    "documentation",
    "example",
    "examples",
    "linter",
    "linters",
    "locally",
    "ci",
    "project",
    "package",
    "crate",
    "library",
    "wheel",
];

/// Words that, heading a sentence, make it a question for a place or a
/// way: a doc comment that says "Run the given suite" or "this is a test
/// for a parent command" describes code, and asks for nothing.
const QUESTION_WORDS: &[&str] = &["how", "where", "which", "what", "locate"];

/// Whether `query` is a question: a question word at its head (a doc
/// comment says "a subcommand which is both ..." and "where the value is
/// ..." too), or a question mark at its end.
pub fn is_question(query: &str) -> bool {
    opens_with_question_word(query) || query.trim_end().ends_with('?')
}

/// `query`'s words, lowercase: runs of letters and digits.
fn lower_words(query: &str) -> impl Iterator<Item = String> + '_ {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

/// Whether `query`'s first word is a question word.
pub fn opens_with_question_word(query: &str) -> bool {
    lower_words(query)
        .next()
        .is_some_and(|w| QUESTION_WORDS.contains(&w.as_str()))
}

/// What `query` asks for.
pub fn asks(query: &str) -> Asks {
    let words: Vec<String> = lower_words(query).collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let asking = is_question(query);
    if has(PROCEDURE_WORDS)
        || (asking && has(PROCEDURE_QUESTION_WORDS))
        || (asking && has(PROCEDURE_VERBS) && has(PROCEDURE_OBJECTS))
    {
        Asks::Procedure
    } else if words.iter().any(|w| test_files::is_test_word(w)) {
        // The tests themselves when a test word heads what is asked for:
        // followed by `for`, `of`, `that`, `covering`, `which`.
        let heads = words.windows(2).any(|w| {
            test_files::is_test_word(&w[0])
                && matches!(w[1].as_str(), "for" | "of" | "that" | "covering" | "which")
        });
        if heads && asking {
            Asks::Tests
        } else {
            Asks::AboutTests
        }
    } else {
        Asks::Code
    }
}

/// Words of [`PROCEDURE_OBJECTS`] that a doc says for one another ("run
/// the docs" is answered by "building the documentation").
const SAME_OBJECTS: &[&[&str]] = &[
    &["test", "tests", "testsuite", "suite", "testing"],
    &["benchmark", "benchmarks", "bench", "benches"],
    &["docs", "documentation", "doc"],
    &["linter", "linters", "lint"],
];

/// The words of a question of how to work on the project that name what
/// is to be run, built or released ("tests" in "how do I run the tests"),
/// with the words a doc says for them: a doc section that answers it
/// names one of them.
pub fn procedure_objects(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in lower_words(query).filter(|w| PROCEDURE_OBJECTS.contains(&w.as_str())) {
        let same = SAME_OBJECTS.iter().find(|g| g.contains(&w.as_str()));
        for v in same.map_or(vec![w.clone()], |g| {
            g.iter().map(|v| v.to_string()).collect()
        }) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Words that name a kind of definition, and the kinds each may mean (a
/// "class" may be a C++ struct, a "function" a method).
const KIND_WORDS: &[(&str, &[SymbolKind])] = {
    use SymbolKind as K;
    &[
        ("class", &[K::Class, K::Struct]),
        ("struct", &[K::Struct, K::Class]),
        ("enum", &[K::Enum]),
        ("trait", &[K::Trait, K::Interface]),
        ("interface", &[K::Interface, K::Trait]),
        ("protocol", &[K::Interface, K::Trait]),
        ("function", &[K::Function, K::Method]),
        ("func", &[K::Function, K::Method]),
        ("method", &[K::Method, K::Function]),
        ("constructor", &[K::Constructor]),
        ("macro", &[K::Macro]),
        ("constant", &[K::Constant]),
        ("module", &[K::Module, K::Namespace]),
        ("namespace", &[K::Namespace, K::Module]),
    ]
};

/// A definition a question names with its kind: "where is the `Value`
/// enum defined", "how does the Router struct match a path".
#[derive(Debug, PartialEq, Eq)]
pub struct KindNamed {
    /// The name, as the question spells it.
    pub name: String,
    /// The kinds the kind word may mean.
    pub kinds: &'static [SymbolKind],
}

/// The definition `query` names with a kind word beside a name spelled as
/// code (a capital past its first letter or at its head, `_`, a digit, or
/// backticks), before or after it; only a question counts, since a doc
/// comment that mentions "the Config struct" says what its code returns.
pub fn kind_named(query: &str) -> Option<KindNamed> {
    if !is_question(query) {
        return None;
    }
    let tokens: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | '(' | ')' | ';'))
        .filter(|t| !t.is_empty())
        .collect();
    let name_of = |t: &str| -> Option<String> {
        let quoted = t.starts_with('`') && t.ends_with('`') && t.len() > 2;
        let bare = t.trim_matches(|c: char| c == '`' || c == '\'' || c == '"' || c == '.');
        let codelike = bare
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && bare
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
            && (quoted
                || bare.chars().any(char::is_uppercase)
                || bare.contains('_')
                || bare.chars().any(|c| c.is_ascii_digit()));
        let question_word = QUESTION_WORDS.contains(&bare.to_ascii_lowercase().as_str());
        (codelike && !question_word).then(|| bare.to_string())
    };
    tokens.iter().enumerate().find_map(|(i, t)| {
        let word = t.to_ascii_lowercase();
        let (_, kinds) = KIND_WORDS.iter().find(|(k, _)| *k == word)?;
        let before = i.checked_sub(1).and_then(|j| name_of(tokens[j]));
        let after = tokens.get(i + 1).and_then(|t| name_of(t));
        before.or(after).map(|name| KindNamed { name, kinds })
    })
}

/// Verbs of what code does (their plain form): a text that opens with one
/// ("Returns the ...", "Parse a config file", "looks up the value of a
/// flag", as doc comments and agents put it) describes something done, so
/// a callable answers it before a type whose name it mentions. Verbs that
/// describe what a thing is or has ("represents", "holds", "wraps",
/// "provides") are not here: they open types' docs as often.
const ACTION_VERBS: &[&str] = &[
    "add",
    "allocate",
    "append",
    "apply",
    "assign",
    "attach",
    "build",
    "calculate",
    "call",
    "cancel",
    "check",
    "clear",
    "close",
    "collect",
    "compare",
    "compute",
    "connect",
    "consume",
    "convert",
    "copy",
    "count",
    "create",
    "decode",
    "delete",
    "deserialize",
    "detach",
    "determine",
    "disable",
    "dispatch",
    "dump",
    "emit",
    "enable",
    "encode",
    "ensure",
    "escape",
    "execute",
    "extract",
    "fetch",
    "fill",
    "filter",
    "find",
    "finish",
    "flush",
    "format",
    "free",
    "generate",
    "get",
    "handle",
    "hash",
    "initialize",
    "insert",
    "invoke",
    "load",
    "lock",
    "log",
    "look",
    "lookup",
    "make",
    "merge",
    "move",
    "normalize",
    "open",
    "parse",
    "pop",
    "print",
    "process",
    "produce",
    "push",
    "read",
    "register",
    "release",
    "remove",
    "render",
    "replace",
    "reset",
    "resolve",
    "retrieve",
    "return",
    "run",
    "save",
    "scan",
    "schedule",
    "send",
    "serialize",
    "set",
    "skip",
    "sort",
    "split",
    "start",
    "stop",
    "strip",
    "transform",
    "trim",
    "truncate",
    "try",
    "unlock",
    "update",
    "validate",
    "verify",
    "wait",
    "write",
];

/// Whether `query` opens with one of [`ACTION_VERBS`], plain ("Parse"),
/// or in the third person ("parses", "returns", "applies", "pushes").
pub fn describes_an_action(query: &str) -> bool {
    let Some(w) = lower_words(query).next() else {
        return false;
    };
    let is_verb = |v: &str| ACTION_VERBS.contains(&v);
    is_verb(&w)
        || w.strip_suffix('s').is_some_and(is_verb)
        || w.strip_suffix("es").is_some_and(is_verb)
        || w.strip_suffix("ies")
            .is_some_and(|stem| is_verb(&format!("{stem}y")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_ask_for_code_tests_or_how_to_work_on_the_project() {
        for q in [
            "how do I run the tests",
            "How to build the docs?",
            "installation from source",
            "how do I install it from source",
            "how do I contribute",
            "which command runs the benchmarks locally",
            "what runs the tests on CI?",
        ] {
            assert_eq!(asks(q), Asks::Procedure, "{q}");
        }
        for q in [
            "where are the tests for HeaderMap",
            "tests of flag groups?",
            "where is the spec for the parser",
        ] {
            assert_eq!(asks(q), Asks::Tests, "{q}");
        }
        // Doc comments say such things of code; they ask for nothing.
        for q in [
            "how does CliRunner invoke a command in tests",
            "redirect tests",
            "Basically this is a test for a parent command",
            "Test to see if we have a reason to print See Also information in docs Basically this is a test for a parent command or a subcommand which is both not deprecated",
            "Collect files and run tests",
        ] {
            assert_eq!(asks(q), Asks::AboutTests, "{q}");
        }
        for q in [
            "Returns the prototype to install on, or undefined if installed",
            "Run the given suite and invoke the callback when complete",
            "how does the router run middleware",
            "where is the build of the request done",
            "how are redirects followed",
            "attest the latest contest",
        ] {
            assert_eq!(asks(q), Asks::Code, "{q}");
        }
    }

    #[test]
    fn a_text_opening_with_a_verb_of_doing_describes_an_action() {
        for q in [
            "Returns the command at the root of the graph",
            "looks up the value of a local Float64Flag",
            "Parse a config file",
            "applies a supplemental hash function",
            "pushes an item",
        ] {
            assert!(describes_an_action(q), "{q}");
        }
        for q in [
            "Represents a parsed request",
            "is the default implementation of HelpPrinter",
            "the value of a flag",
            "how does the app parse its config",
            "parser of config files",
            "",
        ] {
            assert!(!describes_an_action(q), "{q}");
        }
    }

    #[test]
    fn a_procedure_names_what_it_runs() {
        assert_eq!(
            procedure_objects("how do I run the tests?"),
            ["test", "tests", "testsuite", "suite", "testing"]
        );
        assert_eq!(
            procedure_objects("How to build the docs and the examples"),
            ["docs", "documentation", "doc", "examples"]
        );
        assert!(procedure_objects("how do I install it").is_empty());
    }

    #[test]
    fn a_question_names_a_definition_with_its_kind() {
        use SymbolKind as K;
        let named = |q: &str| kind_named(q).map(|k| (k.name, k.kinds.to_vec()));
        assert_eq!(
            named("where is the Value enum defined"),
            Some(("Value".to_string(), vec![K::Enum]))
        );
        assert_eq!(
            named("how does the struct `Router` match a path?"),
            Some(("Router".to_string(), vec![K::Struct, K::Class]))
        );
        assert_eq!(
            named("where is the parse_config function"),
            Some(("parse_config".to_string(), vec![K::Function, K::Method]))
        );
        // A word, not a name; a doc comment, not a question; no kind word.
        assert_eq!(named("where is the main function"), None);
        assert_eq!(named("Returns the Config struct with defaults"), None);
        assert_eq!(named("where is the Config loaded"), None);
        assert_eq!(named("Which struct holds the routes?"), None);
    }
}
