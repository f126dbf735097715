//! Which tracked files enter the index, and how: secrets never; ignored files
//! not; binary and oversized files as counted skips; the rest are parsed.

use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use sno_journal::model::{Language, SkipReason};

/// Files that hold secrets by their nature. They are never read into the index,
/// whatever git tracks. Patterns are globs matched against the file name and
/// against the whole repository-relative path, ignoring case (`.ENV`,
/// `SERVER.PEM`).
pub const DEFAULT_SECRET_PATTERNS: &[&str] = &[
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "*.asc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*_rsa",
    "*_ed25519",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "**/.aws/credentials",
    "**/.docker/config.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "*.tfstate",
    "*.tfstate.*",
    "*.tfvars",
    "id_*.bak",
    "id_*.old",
    "id_*.orig",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "*.ppk",
    "*.p8",
    ".my.cnf",
    "kubeconfig",
    "**/.kube/config",
    "*service-account*.json",
    "serviceaccountkey.json",
    ".vault-token",
    ".s3cfg",
    ".dockercfg",
    ".yarnrc",
    ".yarnrc.yml",
    "wp-config.php",
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
];

/// The decision for one path, before its content is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathVerdict {
    /// Holds secrets by its nature: nothing of it is stored, not even its path.
    Secret,
    /// Matched by a `.gitignore` of the commit (tracked anyway, e.g. force-added).
    Ignored,
    /// Tracked and admitted; `None` when no grammar knows the language.
    Admit(Option<Language>),
}

/// The decision once the content is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentVerdict {
    Parse(Language),
    Skip(SkipReason),
}

/// Secret patterns, compiled.
#[derive(Clone, Debug)]
pub struct SecretFilter {
    set: GlobSet,
}

impl SecretFilter {
    /// Compiles the patterns; a bad pattern is an error naming it.
    pub fn new(patterns: &[String]) -> Result<SecretFilter, String> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            let g = globset::GlobBuilder::new(p)
                .case_insensitive(true)
                .build()
                .map_err(|e| format!("secret pattern `{p}`: {e}"))?;
            b.add(g);
        }
        Ok(SecretFilter {
            set: b.build().map_err(|e| e.to_string())?,
        })
    }

    /// Whether the path names a secret file.
    pub fn is_secret(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.set.is_match(name) || self.set.is_match(path)
    }
}

/// The `.gitignore` files of one commit, applied the way git applies them:
/// the deepest file with an opinion decides.
#[derive(Debug, Default)]
pub struct IgnoreRules {
    /// (directory, rules), deepest directories last.
    rules: Vec<(String, Gitignore)>,
}

impl IgnoreRules {
    /// Builds the rules from `(path of .gitignore, its content)` pairs.
    pub fn new(files: &[(String, Vec<u8>)]) -> IgnoreRules {
        let mut rules = Vec::new();
        for (path, content) in files {
            let dir = path
                .rsplit_once('/')
                .map(|(d, _)| d.to_string())
                .unwrap_or_default();
            let mut b = GitignoreBuilder::new(virtual_path(&dir));
            for line in String::from_utf8_lossy(content).lines() {
                // A malformed line is ignored by git too.
                let _ = b.add_line(None, line);
            }
            if let Ok(gi) = b.build() {
                rules.push((dir, gi));
            }
        }
        rules.sort_by_key(|(d, _)| d.matches('/').count() + usize::from(!d.is_empty()));
        IgnoreRules { rules }
    }

    /// Whether a tracked path is ignored.
    pub fn is_ignored(&self, path: &str) -> bool {
        let full = virtual_path(path);
        for (dir, gi) in self.rules.iter().rev() {
            if !dir.is_empty() && !path.starts_with(&format!("{dir}/")) {
                continue;
            }
            let m = gi.matched_path_or_any_parents(&full, false);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
        false
    }
}

fn virtual_path(rel: &str) -> PathBuf {
    Path::new("/").join(rel)
}

/// Whether a path is a `.gitignore` file.
pub fn is_gitignore(path: &str) -> bool {
    path == ".gitignore" || path.ends_with("/.gitignore")
}

/// Decides on a path.
pub fn judge_path(path: &str, secrets: &SecretFilter, ignores: &IgnoreRules) -> PathVerdict {
    if secrets.is_secret(path) {
        return PathVerdict::Secret;
    }
    if ignores.is_ignored(path) {
        return PathVerdict::Ignored;
    }
    PathVerdict::Admit(Language::from_path(path))
}

/// Decides on content: too large (by size alone), binary, or parseable.
pub fn judge_content(
    language: Option<Language>,
    size: u64,
    max_size: u64,
    head: Option<&[u8]>,
) -> ContentVerdict {
    if size > max_size {
        return ContentVerdict::Skip(SkipReason::TooLarge);
    }
    if let Some(bytes) = head {
        if is_binary(bytes) {
            return ContentVerdict::Skip(SkipReason::Binary);
        }
    }
    match language {
        Some(l) => ContentVerdict::Parse(l),
        None => ContentVerdict::Skip(SkipReason::UnsupportedLanguage),
    }
}

/// A blob's bytes as sno reads them: UTF-8 as it is; other text (no NUL
/// byte in the first 8000, git's test for text) decoded as Windows-1252,
/// the superset of Latin-1 that most such sources (Delphi, older C) are
/// written in; anything else as it is. Every reader of blob content (the
/// indexer, and the text served) goes through this, so spans and served
/// text agree.
pub fn text_of(bytes: Vec<u8>) -> Vec<u8> {
    if nul_in_head(&bytes) || std::str::from_utf8(&bytes).is_ok() {
        return bytes;
    }
    let (text, _, _) = encoding_rs::WINDOWS_1252.decode(&bytes);
    text.into_owned().into_bytes()
}

/// Binary, as git judges it: a NUL byte in the first 8000 bytes, or content
/// that is not UTF-8 ([`text_of`] has made UTF-8 of other text first).
pub fn is_binary(bytes: &[u8]) -> bool {
    nul_in_head(bytes) || std::str::from_utf8(bytes).is_err()
}

/// Git's test for binary content: a NUL byte in the first 8000 bytes.
fn nul_in_head(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::DEFAULT_SECRET_PATTERNS;
    use super::*;

    fn secrets() -> SecretFilter {
        SecretFilter::new(
            &DEFAULT_SECRET_PATTERNS
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn secrets_by_name_and_path() {
        let s = secrets();
        for p in [
            ".env",
            "app/.env.production",
            "deploy/server.pem",
            "home/.ssh/id_rsa",
            "x/.aws/credentials",
            ".npmrc",
            ".ENV",
            "certs/Server.PEM",
            "infra/prod.tfvars",
            "home/.ssh/id_rsa.bak",
        ] {
            assert!(s.is_secret(p), "{p} should be secret");
        }
        for p in [
            "src/env.py",
            "environment.ts",
            "keys.rs",
            "id_rsa.pub.md",
            "README.md",
        ] {
            assert!(!s.is_secret(p), "{p} should not be secret");
        }
    }

    #[test]
    fn nested_gitignore_and_negation() {
        let rules = IgnoreRules::new(&[
            (".gitignore".into(), b"*.log\nbuild/\n".to_vec()),
            ("sub/.gitignore".into(), b"!keep.log\ngen_*.py\n".to_vec()),
        ]);
        assert!(rules.is_ignored("a.log"));
        assert!(rules.is_ignored("build/x.py"));
        assert!(!rules.is_ignored("sub/keep.log"));
        assert!(rules.is_ignored("sub/gen_a.py"));
        assert!(!rules.is_ignored("gen_a.py"));
        assert!(!rules.is_ignored("src/main.py"));
    }

    #[test]
    fn latin1_text_is_read_as_text_and_binary_stays_binary() {
        let latin1 = b"// caf\xe9\nint f(void) { return 0; }\n".to_vec();
        assert!(is_binary(&latin1));
        let text = text_of(latin1);
        assert!(!is_binary(&text));
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "// caf\u{e9}\nint f(void) { return 0; }\n"
        );
        let utf8 = "// caf\u{e9}\n".as_bytes().to_vec();
        assert_eq!(text_of(utf8.clone()), utf8);
        let binary = b"\x00\xff\xfe".to_vec();
        assert_eq!(text_of(binary.clone()), binary);
    }

    #[test]
    fn content_verdicts() {
        assert_eq!(
            judge_content(Some(Language::Python), 10, 5, None),
            ContentVerdict::Skip(SkipReason::TooLarge)
        );
        assert_eq!(
            judge_content(Some(Language::C), 3, 5, Some(b"a\0b")),
            ContentVerdict::Skip(SkipReason::Binary)
        );
        assert_eq!(
            judge_content(Some(Language::C), 2, 5, Some(&[0xff, 0xfe])),
            ContentVerdict::Skip(SkipReason::Binary)
        );
        assert_eq!(
            judge_content(None, 2, 5, Some(b"ok")),
            ContentVerdict::Skip(SkipReason::UnsupportedLanguage)
        );
        assert_eq!(
            judge_content(Some(Language::Go), 2, 5, Some(b"ok")),
            ContentVerdict::Parse(Language::Go)
        );
    }
}
