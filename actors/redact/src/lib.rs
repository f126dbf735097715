//! Secret values in text: cloud and service keys, tokens, private keys,
//! passwords in URLs and high-entropy values assigned to secret-sounding
//! names. sno masks what this finds wherever it stores, serves or embeds
//! text, so an agent never receives a credential that happens to sit in
//! source code.
//!
//! The token shapes follow published rule sets: ripsecrets'
//! `predefined_secret_regexes` (MIT, github.com/sirwart/ripsecrets) and
//! gitleaks' default configuration (MIT, github.com/gitleaks/gitleaks) for
//! the AWS access key id, GitLab and Stripe rules. Neither ships as a
//! library that finds ranges in a string (ripsecrets' matcher is private to
//! its command line), so the shapes are compiled here. The generic rule
//! (a value assigned to a `*_SECRET`, `*_TOKEN`, `*_PASSWORD`... name) is
//! sno's own: it needs a quoted value, a line-final one or one glued to
//! the name by `=` (`--password=...`), of 8 characters or more, two
//! character classes, Shannon entropy of at least 3 bits per character,
//! and no placeholder look (`${VAR}`, `<token>`, `changeme`); a bare value
//! must not be code either (a call, a statement, a path of names).
//!
//! Masking keeps every newline, so line numbers in answers stay those of
//! the file: a private key's body becomes one marker followed by the lines
//! it spanned.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// A secret value found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Byte range of the value (not of the name it is assigned to).
    pub range: Range<usize>,
    /// The rule that found it: `aws-key`, `github-token`, ...
    pub rule: &'static str,
}

/// One shape of secret.
struct Rule {
    id: &'static str,
    /// Literals of which at least one occurs wherever the rule matches:
    /// texts without any are not searched with the rule's regex.
    anchors: &'static [&'static str],
    pattern: &'static str,
    /// The capture group holding the secret (0: the whole match).
    group: usize,
    /// Whether a matched value really looks like a secret.
    check: fn(&str) -> bool,
}

fn always(_: &str) -> bool {
    true
}

/// The words of a secret-sounding name: at least one is in any text an
/// assigned-secret rule matches.
const SECRET_NAMES: &[&str] = &[
    "secret",
    "token",
    "passw",
    "pwd",
    "api_key",
    "apikey",
    "api-key",
    "private_key",
    "access_key",
    "auth_key",
    "credential",
];

/// A name that calls its value a password: `password`, `DB_PASSWD`,
/// `passphrase`, `pwd`; `pass` and `pw` only as a whole segment of the name
/// (`DB_PASS`, `smtp.pw`; `bypass` is none).
macro_rules! password_name {
    () => {
        r"(?:[A-Za-z0-9_.\-]*(?:passw(?:or)?d|passwort|passphrase|pwd)[A-Za-z0-9_.\-]*|(?:[A-Za-z0-9]+[_.\-])*(?:pass|pw)(?:[_.\-][A-Za-z0-9]+)*)"
    };
}

const RULES: &[Rule] = &[
    Rule {
        id: "private-key",
        anchors: &["PRIVATE KEY"],
        pattern: r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----((?s:.*?))-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
        group: 1,
        check: always,
    },
    Rule {
        id: "aws-key",
        anchors: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        pattern: r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "aws-secret",
        anchors: &["aws"],
        pattern: r#"(?i)aws[_\-.]?(?:secret[_\-.]?(?:access[_\-.]?)?key|secret)["']?\s*(?::=|=>|[:=])\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        group: 1,
        check: always,
    },
    Rule {
        id: "github-token",
        anchors: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "gitlab-token",
        anchors: &["glpat-"],
        pattern: r"\bglpat-[0-9A-Za-z_\-]{20,}",
        group: 0,
        check: always,
    },
    Rule {
        id: "slack-token",
        anchors: &["xox"],
        pattern: r"\bxox[abposr]-[0-9A-Za-z\-]{10,}",
        group: 0,
        check: always,
    },
    Rule {
        id: "slack-webhook",
        anchors: &["hooks.slack.com"],
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+",
        group: 0,
        check: always,
    },
    Rule {
        id: "stripe-key",
        anchors: &["k_live_", "k_test_"],
        pattern: r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,247}\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "google-api-key",
        anchors: &["AIza"],
        pattern: r"\bAIza[0-9A-Za-z_\-]{35}",
        group: 0,
        check: always,
    },
    Rule {
        id: "npm-token",
        anchors: &["npm_"],
        pattern: r"\bnpm_[0-9A-Za-z]{36}\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "sendgrid-key",
        anchors: &["SG."],
        pattern: r"\bSG\.[0-9A-Za-z_\-]{22}\.[0-9A-Za-z_\-]{43}\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "llm-api-key",
        anchors: &["sk-"],
        pattern: r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-)?[A-Za-z0-9_\-]{32,}",
        group: 0,
        check: has_two_classes,
    },
    Rule {
        id: "jwt",
        anchors: &["eyJ"],
        pattern: r"\beyJ[0-9A-Za-z_\-]{8,}\.eyJ[0-9A-Za-z_\-]{8,}\.[0-9A-Za-z_\-]{8,}",
        group: 0,
        check: always,
    },
    Rule {
        id: "azure-storage-key",
        anchors: &["AccountKey="],
        pattern: r"AccountKey=([A-Za-z0-9+/=]{86,88})",
        group: 1,
        check: always,
    },
    Rule {
        id: "url-password",
        anchors: &["://"],
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s/:@'"`]{1,128}:([^\s/@'"`]{1,128})@"#,
        group: 1,
        check: not_placeholder,
    },
    Rule {
        id: "assigned-secret",
        anchors: SECRET_NAMES,
        pattern: r#"(?i)\b[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|pwd|api[_\-]?key|private[_\-]?key|access[_\-]?key|auth[_\-]?key|credential)[A-Za-z0-9_.\-]*["']?\s*(?::=|=>|[:=])\s*[bru]?["'`]([^"'`\s]{8,256})["'`]"#,
        group: 1,
        check: high_entropy,
    },
    Rule {
        id: "assigned-secret",
        anchors: &["secret", "token", "passw", "api_key", "apikey", "api-key"],
        // `password: hunter2x` in YAML, `API_KEY=...` in an env-style file.
        // A comment may follow (`password: x  # prod`, `; prod` in INI),
        // and a `#` inside the value is the value's (`Yk8#mP2vL9qR4aZ`).
        pattern: r#"(?im)^[ \t]*[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|api[_\-]?key)[A-Za-z0-9_.\-]*[ \t]*[:=][ \t]*([^\s"'`#;][^\s"'`]{7,255})(?:[ \t]+[#;].*)?[ \t]*$"#,
        group: 1,
        check: unquoted_secret,
    },
    Rule {
        id: "assigned-secret",
        anchors: SECRET_NAMES,
        // `--password=...` on a command line, `export DB_PASSWORD=...; run`,
        // `?token=...&` in a URL, `password=...` in a sentence: a value
        // glued to its name by `=` ends at a space, a shell separator or
        // what closes a call's argument (`f(api_key=self.key)`), not at the
        // end of the line.
        pattern: r#"(?i)\b[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|pwd|api[_\-]?key|private[_\-]?key|access[_\-]?key|auth[_\-]?key|credential)[A-Za-z0-9_.\-]*=([^\s"'`;&|<>=(),][^\s"'`;&|<>(),]{7,255})"#,
        group: 1,
        check: unquoted_secret,
    },
    Rule {
        id: "password",
        anchors: &["pass", "pwd", "pw"],
        // A value a name calls a password is one even when it is short of
        // randomness (`password = "Summer2024"`, `DB_PASS: ...`): two
        // character classes and no placeholder look suffice.
        pattern: concat!(
            r"(?i)\b",
            password_name!(),
            r#"["']?[ \t]*(?::=|=>|[:=])[ \t]*[bru]?["'`]([^"'`\s]{8,256})["'`]"#
        ),
        group: 1,
        check: password_value,
    },
    Rule {
        id: "password",
        anchors: &["pass", "pwd", "pw"],
        // The same, unquoted and last on its line (YAML, INI, env files).
        pattern: concat!(
            r"(?im)^[ \t]*",
            password_name!(),
            r#"[ \t]*[:=][ \t]*([^\s"'`#;][^\s"'`]{7,255})(?:[ \t]+[#;].*)?[ \t]*$"#
        ),
        group: 1,
        check: unquoted_password,
    },
    Rule {
        id: "huggingface-token",
        anchors: &["hf_"],
        pattern: r"\bhf_[A-Za-z]{34}\b",
        group: 0,
        check: always,
    },
    Rule {
        id: "basic-auth",
        anchors: &["basic"],
        // `Authorization: Basic dXNlcjpwYXNz...`: user and password in base64.
        pattern: r#"(?i)\bbasic[ \t]+([A-Za-z0-9+/]{12,}={0,2})(?:[^A-Za-z0-9+/=]|$)"#,
        group: 1,
        check: high_entropy,
    },
    Rule {
        id: "private-key",
        anchors: &["PRIVATE KEY"],
        // A key block cut before its END line: its base64 lines.
        pattern: r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----((?:\r?\n[ \t]*[A-Za-z0-9+/=]{16,}[ \t]*)+)",
        group: 1,
        check: always,
    },
    Rule {
        id: "bearer-token",
        anchors: &["bearer"],
        // `Authorization: Bearer <token>` in a curl line, a test, a doc.
        pattern: r#"(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)"#,
        group: 1,
        check: high_entropy,
    },
];

/// Whether a value is a template, a variable or a stand-in rather than a
/// secret: `${DB_PASSWORD}`, `<token>`, `%s`, `changeme`, `xxxxxxxx`.
fn is_placeholder(v: &str) -> bool {
    // The shape of a template, not any of its characters: real passwords
    // hold `$`, `%` and `*` too (`Xk8mP2vL$9qR4aZ7b` is a password, not a
    // shell variable).
    static TEMPLATE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(concat!(
            // Shell (a variable is one case: `$Xk8mP2vL` is a password),
            // template engines, Python/Rust/C# formats, Ruby and Swift
            // interpolation.
            r"\$\{|\$\(|^\$(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)$|\{\{|\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}",
            r"|\{[0-9]*(?:[:!][^{}]*)?\}|#\{|\\\(",
            r"|^<.*>$|^\(.*\)$|^\[.*\]$|\*{3,}",
            // printf (C, Go's %v), Python's %(name)s, Windows' %VAR%.
            r"|%\(|%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[sdifxXruvqwcpeEgGo](?:$|[^A-Za-z0-9])",
            r"|^%[A-Za-z_][A-Za-z0-9_]*%$",
        ))
        .expect("the template pattern compiles")
    });
    if TEMPLATE.is_match(v) {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "changeme",
        "example",
        "placeholder",
        "your",
        "dummy",
        "redacted",
        "xxxx",
        "token",
        "test",
        "sample",
        "fake",
        "none",
        "null",
    ];
    // By the words of the value (`your_token_here`, `testPassword1`,
    // `changeme123`), not any letters inside it: `Latest#9xQ2` is no test.
    if segments(v).iter().any(|seg| {
        let seg = seg.to_ascii_lowercase();
        WORDS.iter().any(|w| seg.starts_with(w))
    }) {
        return true;
    }
    let first = lower.chars().next();
    lower.chars().all(|c| Some(c) == first)
}

/// The words of a value: split at every character that is not a letter or
/// a digit, between a lowercase letter and an uppercase one, and between
/// letters and digits.
fn segments(v: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut prev = ' ';
    for (i, c) in v.char_indices() {
        if !c.is_alphanumeric() {
            out.extend(start.take().map(|s| &v[s..i]));
        } else if start.is_none() {
            start = Some(i);
        } else if (prev.is_lowercase() && c.is_uppercase())
            || prev.is_alphabetic() != c.is_alphabetic()
        {
            out.extend(start.replace(i).map(|s| &v[s..i]));
        }
        prev = c;
    }
    out.extend(start.map(|s| &v[s..]));
    out
}

fn not_placeholder(v: &str) -> bool {
    !is_placeholder(v)
}

/// Lowercase, uppercase, digits, other symbols (`_ - .` count as none: they
/// join words in identifiers).
fn classes(v: &str) -> usize {
    let has = |f: fn(char) -> bool| usize::from(v.chars().any(f));
    has(|c| c.is_ascii_lowercase())
        + has(|c| c.is_ascii_uppercase())
        + has(|c| c.is_ascii_digit())
        + has(|c| !c.is_ascii_alphanumeric() && !matches!(c, '_' | '-' | '.'))
}

fn has_two_classes(v: &str) -> bool {
    classes(v) >= 2
}

/// Shannon entropy in bits per character.
fn entropy(v: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    for b in v.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

fn high_entropy(v: &str) -> bool {
    password_value(v) && entropy(v) >= 3.0
}

/// Whether an unquoted value is an expression of code rather than a
/// literal: `z.string(),` after `password:` in a schema, `s_malloc(n);`
/// after `tokens =`, `self.apiKey` after `api_key=`. Masking those would
/// serve code that no longer compiles; a credential written bare in a
/// config file or on a command line has none of these shapes.
fn looks_like_code(v: &str) -> bool {
    // A call (`f(x)`, `a.b(c).d()`, `s_malloc(n);`): a name, then
    // parentheses that close the value. `Tr0ub4d(or)X9q` is no call.
    static CALL: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_$][A-Za-z0-9_$.:]*\(.*\)[;,]?$").expect("the call pattern compiles")
    });
    // A path of plain words (`self.apiKey`, `Tokenizer::newFromText`):
    // letters only, as names are written; a token's segments hold digits
    // (`hvs.CAESIJlOr9mXY...`).
    static PATH: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_$]{1,30}(?:(?:\.|::|->)[A-Za-z_$]{1,30})+$")
            .expect("the identifier path pattern compiles")
    });
    CALL.is_match(v) || v.ends_with([';', ',']) || PATH.is_match(v)
}

/// A value assigned to a password's name: a real one may be short of
/// randomness, but has 8 characters or more, two character classes and no
/// placeholder look, and is no path or address.
fn password_value(v: &str) -> bool {
    v.len() >= 8
        && classes(v) >= 2
        && !is_placeholder(v)
        && !v.contains("://")
        && !(v.contains('/') && v.contains('.'))
}

/// [`password_value`], unquoted: not code either.
fn unquoted_password(v: &str) -> bool {
    password_value(v) && !looks_like_code(v)
}

/// A bare (unquoted) value that looks like a secret: high entropy, and not
/// code ([`looks_like_code`]).
fn unquoted_secret(v: &str) -> bool {
    high_entropy(v) && !looks_like_code(v)
}

/// The compiled rules.
pub struct Redactor {
    anchors: AhoCorasick,
    /// For each anchor pattern, the rules it belongs to.
    anchor_rules: Vec<Vec<usize>>,
    /// Each rule's regex, compiled the first time a text holds one of its
    /// anchors: compiling all 24 took about 34 ms (each timed alone,
    /// release build; the bounded Unicode classes of `url-password` and the
    /// assigned-secret rules are most of it), which a one-question process
    /// spent inside its first answer whatever rules its texts wanted.
    regexes: Vec<OnceLock<Regex>>,
}

impl Redactor {
    /// The rules, once per process (each regex compiled when first wanted).
    pub fn global() -> &'static Redactor {
        static R: OnceLock<Redactor> = OnceLock::new();
        R.get_or_init(Redactor::new)
    }

    fn new() -> Redactor {
        let mut patterns: Vec<&str> = Vec::new();
        let mut anchor_rules: Vec<Vec<usize>> = Vec::new();
        for (i, r) in RULES.iter().enumerate() {
            for a in r.anchors {
                match patterns.iter().position(|p| p.eq_ignore_ascii_case(a)) {
                    Some(k) => anchor_rules[k].push(i),
                    None => {
                        patterns.push(a);
                        anchor_rules.push(vec![i]);
                    }
                }
            }
        }
        let anchors = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&patterns)
            .expect("the anchors are plain literals");
        let regexes = RULES.iter().map(|_| OnceLock::new()).collect();
        Redactor {
            anchors,
            anchor_rules,
            regexes,
        }
    }

    /// Compiles every rule's regex now (tens of milliseconds), for a
    /// thread with nothing better to do before the first text is searched.
    pub fn warm(&self) {
        for i in 0..RULES.len() {
            let _ = self.regex(i);
        }
    }

    /// Rule `i`'s regex, compiled on first use.
    fn regex(&self, i: usize) -> &Regex {
        self.regexes[i].get_or_init(|| {
            // An ASCII word boundary: a Unicode `\b` makes the lazy DFA
            // give up on any non-ASCII byte and the slow NFA scan the whole
            // text (2.3 s of CPU on 8.4M lines of sources). At a non-ASCII
            // letter it also sees a boundary, which only masks more.
            Regex::new(&RULES[i].pattern.replace(r"\b", r"(?-u:\b)"))
                .expect("the rules are valid regexes")
        })
    }

    /// Every secret value in `text`, in order, not overlapping.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut wanted = vec![false; RULES.len()];
        for m in self.anchors.find_overlapping_iter(text) {
            for &r in &self.anchor_rules[m.pattern().as_usize()] {
                wanted[r] = true;
            }
        }
        let mut found: Vec<Finding> = Vec::new();
        for (i, rule) in RULES.iter().enumerate().filter(|(i, _)| wanted[*i]) {
            for caps in self.regex(i).captures_iter(text) {
                let Some(m) = caps.get(rule.group) else {
                    continue;
                };
                if m.is_empty() || !(rule.check)(m.as_str()) {
                    continue;
                }
                found.push(Finding {
                    range: m.range(),
                    rule: rule.id,
                });
            }
        }
        // The earliest, then the longest, wins an overlap.
        found.sort_by_key(|f| (f.range.start, std::cmp::Reverse(f.range.end)));
        let mut out: Vec<Finding> = Vec::with_capacity(found.len());
        for f in found {
            if out.last().is_none_or(|l| f.range.start >= l.range.end) {
                out.push(f);
            }
        }
        out
    }
}

/// What replaces a secret value: `«redacted:aws-key»`.
pub fn marker(rule: &str) -> String {
    format!("«redacted:{rule}»")
}

/// `text[range]` with every finding that overlaps it masked (findings are
/// ranges of the whole `text`, so a slice cut inside a secret is masked
/// too). Newlines inside a masked value are kept.
pub fn mask_range(text: &str, range: Range<usize>, findings: &[Finding]) -> String {
    let range = range.start.min(text.len())..range.end.min(text.len());
    let mut out = String::with_capacity(range.len());
    let mut at = range.start;
    let first = findings.partition_point(|f| f.range.end <= range.start);
    for f in &findings[first..] {
        if f.range.start >= range.end {
            break;
        }
        let start = f.range.start.max(range.start);
        let end = f.range.end.min(range.end);
        out.push_str(lossy_slice(text, at, start));
        out.push_str(&marker(f.rule));
        let newlines = text.as_bytes()[start..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        out.extend(std::iter::repeat_n('\n', newlines));
        at = end;
    }
    out.push_str(lossy_slice(text, at, range.end));
    out
}

/// `text[a..b]`, widened to character boundaries.
fn lossy_slice(text: &str, mut a: usize, mut b: usize) -> &str {
    while a > 0 && !text.is_char_boundary(a) {
        a -= 1;
    }
    while b < text.len() && !text.is_char_boundary(b) {
        b += 1;
    }
    &text[a..b.max(a)]
}

/// Pieces shorter than this are not taken for a piece of a secret.
const MIN_PIECE: usize = 8;

/// `text` with every stretch of at least 8 bytes that also occurs in one of
/// `secrets` masked, and how many stretches were. For texts cut from a file
/// whose secrets are known (a signature cut at 200 characters, an error
/// message quoting 30), where a cut secret no longer has its full shape.
pub fn mask_pieces(text: &str, secrets: &[(&str, &'static str)]) -> (String, usize) {
    let t = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied, mut n) = (0, 0, 0);
    while i < t.len() {
        // The longest stretch from `i` that occurs in a secret.
        let mut best: Option<(usize, &'static str)> = None;
        for (v, rule) in secrets {
            let v = v.as_bytes();
            for j in 0..v.len() {
                let l = t[i..]
                    .iter()
                    .zip(&v[j..])
                    .take_while(|(a, b)| a == b)
                    .count();
                if l >= MIN_PIECE && best.is_none_or(|(b, _)| l > b) {
                    best = Some((l, rule));
                }
            }
        }
        match best {
            Some((l, rule)) => {
                out.push_str(lossy_slice(text, copied, i));
                out.push_str(&marker(rule));
                n += 1;
                copied = i + l;
                while copied < t.len() && !text.is_char_boundary(copied) {
                    copied += 1;
                }
                i = copied;
            }
            None => i += 1,
        }
    }
    out.push_str(lossy_slice(text, copied, t.len()));
    (out, n)
}

/// `text` with every secret value masked, and how many were.
pub fn redact(text: &str) -> (String, usize) {
    let findings = Redactor::global().find(text);
    if findings.is_empty() {
        return (text.to_string(), 0);
    }
    (mask_range(text, 0..text.len(), &findings), findings.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_of(text: &str) -> Vec<&'static str> {
        Redactor::global()
            .find(text)
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    /// The regexes compile when a text first wants them, so a broken
    /// pattern would panic in a user's search: compile every one here.
    #[test]
    fn every_rule_compiles_and_none_before_it_is_wanted() {
        let r = Redactor::new();
        assert!(r.regexes.iter().all(|c| c.get().is_none()));
        assert!(r.find("no anchor of any rule here").is_empty());
        assert!(r.regexes.iter().all(|c| c.get().is_none()));
        r.warm();
        assert!(r.regexes.iter().all(|c| c.get().is_some()));
    }

    #[test]
    fn well_known_shapes_are_found() {
        let cases = [
            ("key = 'AKIAIOSFODNN7EXAMPLE'", "aws-key"),
            (
                "aws_secret_access_key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
                "aws-secret",
            ),
            (
                "GITHUB = 'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'",
                "github-token",
            ),
            (
                "t = 'github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS'",
                "github-token",
            ),
            ("glpat-abcdefghij0123456789", "gitlab-token"),
            ("slack_token: xoxb-123456789012-abcdefGHIJ", "slack-token"),
            (
                "url = 'https://hooks.slack.com/services/T000/B000/XXXXabcd'",
                "slack-webhook",
            ),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
            ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"),
            (
                "DATABASE_URL = 'postgres://admin:Pa55w0rdZ@db.internal:5432/app'",
                "url-password",
            ),
            ("JWT_SECRET = \"f9Kx2LpQ7mZ4vR8sT1wY\"", "assigned-secret"),
            ("password: S3cretPassw0rdZ", "assigned-secret"),
            // Real passwords hold characters templates use.
            ("DB_PASSWORD = \"Xk8mP2vL$9qR4aZ7b\"", "assigned-secret"),
            ("password = \"Xk8#mP2$vL9@qR4!zT6\"", "assigned-secret"),
            ("{password: \"Xk8#mP2%vL9*qR4!zT6\"}", "assigned-secret"),
            // A leading `$` or a `%..%` inside is no template's.
            ("DB_PASSWORD = \"$Xk8mP2vL9qR4aZ7b\"", "assigned-secret"),
            ("password = \"Xk8%mP2%vL9qR4\"", "assigned-secret"),
            (
                "tok = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'",
                "jwt",
            ),
            // A bare value glued to its name, with more text after it.
            (
                "mysql -u root --password=Xk8mP2vL9qR4aZ7bQ mydb",
                "assigned-secret",
            ),
            ("export DB_PASSWORD=Xk8mP2vL9qR4aZ7bQ; run", "assigned-secret"),
            (
                "the password=Xk8mP2vL$9qR4aZ7b and more words",
                "assigned-secret",
            ),
            (
                "curl https://api.example.com/v1?access_token=Xk8mP2vL9qR4aZ7bQ&page=2",
                "assigned-secret",
            ),
            (
                "curl -H 'Authorization: Bearer 3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e'",
                "bearer-token",
            ),
            // Tokens with dots or parentheses are no code.
            (
                "vault_token: hvs.CAESIJlOr9mXYJGq2bJmVBJHEG3kYD8Fz",
                "assigned-secret",
            ),
            (
                "mapbox_token: sk.eyJ1IjoiYWNtZSJ9.Xk8mP2vL9qR4aZ7b",
                "assigned-secret",
            ),
            ("db_password: Tr0ub4d(or)X9q", "assigned-secret"),
        ];
        for (text, rule) in cases {
            assert_eq!(rules_of(text), vec![rule], "{text}");
        }
    }

    #[test]
    fn passwords_by_their_names_and_config_forms_are_found() {
        // Each found by probing as served whole before.
        for (text, secret) in [
            ("password = \"Summer2024\"", "Summer2024"),
            ("password2 = \"Latest#9xQ2\"", "Latest#9xQ2"),
            ("url = \"mysql://root:YmlPassWd42x@db:3306/app\"", "YmlPassWd42x"),
            ("password: Ym1Pa55wordHashX  # prod", "Ym1Pa55wordHashX"),
            ("password = IniPassQw8ErTy6 ; prod", "IniPassQw8ErTy6"),
            ("admin_password: Yk8#mP2vL9qR4aZ", "Yk8#mP2vL9qR4aZ"),
            ("DB_PASS: Qw8ErTy6Zx", "Qw8ErTy6Zx"),
            ("passphrase = \"horse-Battery-9\"", "horse-Battery-9"),
            ("HF = \"hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh\"", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
            ("Authorization: Basic dXNlcjpzM2NyZXRQYXNzMQ==", "dXNlcjpzM2NyZXRQYXNzMQ=="),
            (
                "k = \"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAs3cr3tK3yMat3r1al\nQ2FuIHlvdSByZWFkIHRoaXM/IE5vLg==\n\"",
                "MIIEowIBAAKCAQEAs3cr3tK3yMat3r1al",
            ),
        ] {
            let (masked, n) = redact(text);
            assert!(n >= 1 && !masked.contains(secret), "{text} -> {masked}");
        }
        for text in [
            "bypass_cache = \"enabled_v2\"",
            "compass = \"NorthEast12\"",
            "password = \"your_password_here\"",
            "password_field = \"password_input\"",
            "password: testPassword1",
            "DB_PASS=${DB_PASS}",
            "pw = get_password(user)",
            "Basic authentication is configured in settings.py",
        ] {
            assert_eq!(redact(text).1, 0, "{text} -> {}", redact(text).0);
        }
    }

    #[test]
    fn secrets_among_non_ascii_text_are_found() {
        // Word boundaries are ASCII ones: a secret right after a non-ASCII
        // letter, or in a file of non-ASCII comments, is still masked.
        let text = "# Schlüssel für die Übertragung\nclé = 'AKIAIOSFODNN7EXAMPLE'\nπAKIAIOSFODNN7EXAMPLF = 1\nmot_de_passe_token = \"héhé-s3cr3t-v4lue\"\n";
        let found: Vec<(&str, &str)> = Redactor::global()
            .find(text)
            .into_iter()
            .map(|f| (f.rule, &text[f.range]))
            .collect();
        assert_eq!(
            found,
            [
                ("aws-key", "AKIAIOSFODNN7EXAMPLE"),
                ("aws-key", "AKIAIOSFODNN7EXAMPLF"),
                ("assigned-secret", "héhé-s3cr3t-v4lue"),
            ]
        );
    }

    #[test]
    fn ordinary_code_and_placeholders_are_left_alone() {
        for text in [
            "def get_token(self):\n    return self._token",
            "TOKEN_TYPE = \"bearer_token\"",
            "password = os.environ[\"DB_PASSWORD\"]",
            "DATABASE_URL = 'postgres://user:${DB_PASSWORD}@localhost/app'",
            "URL = 'https://user:password@example.com/'",
            "SECRET_KEY = 'changeme-in-production'",
            "api_key: <your-api-key>",
            "TOKEN_URL = \"https://example.com/oauth/token\"",
            "const secretName = \"aws-credentials\";",
            "password_field = 'password_confirmation'",
            "DB_PASSWORD = \"$DB_PASSWORD_FROM_ENV\"",
            "password = \"{db_password_value}\"",
            "PASSWORD = 'user-%s-9zQk'",
            "API_TOKEN = \"%(token_value)s\"",
            "password: \"********\"",
            "SECRET = \"%APPDATA_SECRET%\"",
            "let url = format!(\"postgres://{}:{}@{}/{}\", u, p, h, d);",
            "url := fmt.Sprintf(\"postgres://%v:%v@%v/app\", u, p, h)",
            "URL = \"amqp://{0}:{1}@{2}\"",
            "password: \"#{ENV.fetch('DB_PASSWORD_VALUE')}\"",
            // Code assigned to a secret-sounding name is code.
            "  password: z.string(),",
            "  password: z.string().min(8)",
            "    tokens = s_malloc(sizeof(sds)*slots);",
            "        token = next(counter)",
            "client = Client(api_key=self.apiKey)",
            "connect(password=get_pw(), user=u)",
            "const accessToken: AccessTokenType;",
            "token = Tokenizer::newFromText",
            "if password==expected_value:",
            "Authorization: Bearer ${ACCESS_TOKEN_VALUE}",
            "uses bearer authentication",
        ] {
            assert_eq!(rules_of(text), Vec::<&str>::new(), "{text}");
        }
    }

    #[test]
    fn pieces_of_a_known_secret_are_masked_where_its_shape_was_cut() {
        let token = "ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ";
        let cut = format!("syntax error near `T = '{}...`", &token[..22]);
        assert!(redact(&cut).1 == 0, "the cut token has no full shape");
        let (masked, n) = mask_pieces(&cut, &[(token, "github-token")]);
        assert_eq!(n, 1);
        assert!(!masked.contains(&token[..12]), "{masked}");
        assert!(
            masked.starts_with("syntax error near `T = '«redacted:github-token»"),
            "{masked}"
        );
        // Short coincidences are not pieces.
        assert_eq!(mask_pieces("x = 'ghp_R8'", &[(token, "github-token")]).1, 0);
    }

    #[test]
    fn masking_keeps_lines_and_covers_slices_cut_inside_a_secret() {
        let text = "KEY = \"\"\"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq8Xx2/abc\n-----END RSA PRIVATE KEY-----\"\"\"\nx = 'AKIAIOSFODNN7EXAMPLE'\n";
        let (masked, n) = redact(text);
        assert_eq!(n, 2);
        assert_eq!(masked.lines().count(), text.lines().count());
        assert!(!masked.contains("MIIEpAIBAAKCAQEA") && !masked.contains("AKIAIOSFODNN7EXAMPLE"));
        assert!(masked.contains("«redacted:private-key»") && masked.contains("«redacted:aws-key»"));
        assert!(
            masked.contains("-----BEGIN RSA PRIVATE KEY-----"),
            "the shape stays"
        );
        // A slice that starts inside the key's body.
        let findings = Redactor::global().find(text);
        let inside = text.find("q8Xx").unwrap();
        let part = mask_range(text, inside..text.len(), &findings);
        assert!(!part.contains("q8Xx"), "{part}");
        assert!(part.starts_with("«redacted:private-key»"), "{part}");
    }
}
