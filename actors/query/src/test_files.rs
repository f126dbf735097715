//! Which files are tests, by the conventions of the languages sno reads.
//!
//! A question in words about what code does is answered by the code that
//! does it; a test of it repeats the same words (its name, its strings,
//! its assertions) and would otherwise take the answer's first places. So
//! test files weigh less in such answers unless the question asks for
//! tests, as code search engines commonly rank them.

/// Directories whose files are tests.
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "__tests__",
    "__test__",
    "spec",
    "specs",
    "testdata",
    "test-data",
    "fixtures",
    "e2e",
];

/// Words that ask for tests.
const TEST_WORDS: &[&str] = &[
    "test", "tests", "testing", "tested", "spec", "specs", "fixture", "fixtures", "mock", "mocks",
    "unittest", "pytest", "e2e",
];

/// Whether `path` (repository-relative, `/`-separated) is a test file.
pub fn is_test_file(path: &str) -> bool {
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or_default();
    // Compared without case and without a copy: this runs for every
    // candidate of every answer.
    if parts.any(|d| TEST_DIRS.iter().any(|t| d.eq_ignore_ascii_case(t))) {
        return true;
    }
    let (stem, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    let lower = stem.to_ascii_lowercase();
    match ext {
        "py" => lower.starts_with("test_") || lower.ends_with("_test") || lower == "conftest",
        "go" => lower.ends_with("_test"),
        "rs" => lower == "tests" || lower == "test" || lower.ends_with("_test"),
        "rb" => lower.ends_with("_test") || lower.ends_with("_spec") || lower.starts_with("test_"),
        "java" | "kt" | "cs" | "scala" | "swift" | "php" | "groovy" => {
            stem.ends_with("Test")
                || stem.ends_with("Tests")
                || stem.ends_with("Spec")
                || stem.ends_with("IT")
        }
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            lower.ends_with(".test") || lower.ends_with(".spec")
        }
        "c" | "cc" | "cpp" | "cxx" | "h" | "hpp" => {
            lower.ends_with("_test") || lower.ends_with("_unittest") || lower.starts_with("test_")
        }
        _ => false,
    }
}

/// Whether a question asks about tests (then they weigh as any code).
pub fn asks_for_tests(query: &str) -> bool {
    query
        .split(|c: char| !c.is_alphanumeric())
        .any(is_test_word)
}

/// Whether a word (in any case) is one of those that ask for tests.
pub fn is_test_word(word: &str) -> bool {
    TEST_WORDS.iter().any(|t| t.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_by_each_languages_convention() {
        for p in [
            "tests/test_api.py",
            "pkg/api/test_client.py",
            "src/conftest.py",
            "router/mux_test.go",
            "src/parser/tests.rs",
            "crate/tests/parse.rs",
            "lib/__tests__/app.js",
            "src/app.test.ts",
            "src/app.spec.tsx",
            "src/test/java/org/jsoup/ParserTest.java",
            "core/src/ParserTests.cs",
            "spec/models/user_spec.rb",
            "testdata/input.go",
        ] {
            assert!(is_test_file(p), "{p}");
        }
        for p in [
            "src/parser.py",
            "httpx/_transports/default.py",
            "router/mux.go",
            "src/latest.rs",
            "src/contest.py",
            "lib/testing_utils_impl/protest.js",
            "src/main/java/org/jsoup/Parser.java",
            "src/Attest.java",
            "README.md",
        ] {
            assert!(!is_test_file(p), "{p}");
        }
    }

    #[test]
    fn a_question_asks_for_tests_by_its_words() {
        assert!(asks_for_tests("where are the redirect tests"));
        assert!(asks_for_tests("Spec for the parser"));
        assert!(!asks_for_tests("how are redirects followed"));
        assert!(!asks_for_tests("attest the latest contest"));
    }
}
