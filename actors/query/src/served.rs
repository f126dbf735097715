//! A file's text as sno serves it: the bytes of the indexed blob, read as
//! UTF-8, with every secret value masked (`sno_redact`). Every answer that
//! quotes a file (a symbol's source, a context package, a grep hit) slices
//! this, so no tool can serve a credential, and a pattern search runs over
//! the masked text, so it cannot probe a secret one character at a time.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use sno_redact::{mask_range, Finding, Redactor};

/// A file's text with the secret values found in it.
#[derive(Clone, Debug)]
pub struct Served {
    text: Arc<str>,
    /// Whether its secret values are masked.
    mask: bool,
    /// The secret values, found on the first masked read of the text
    /// (shared by the clones a cache hands out). A search reads the best
    /// fifty candidates' files to rank them ([`Served::unmasked_slice`])
    /// and quotes a few: the scan of every file it reads was three
    /// quarters of reading a file not yet cached.
    findings: Arc<OnceLock<Arc<[Finding]>>>,
}

impl Served {
    /// The text of `bytes`; with `mask`, its secret values are masked in
    /// everything read of it but [`Served::unmasked_slice`] (found on the
    /// first such read, once per blob: callers cache a `Served`).
    pub fn new(bytes: &[u8], mask: bool) -> Served {
        Served {
            text: String::from_utf8_lossy(bytes).into(),
            mask,
            findings: Arc::default(),
        }
    }

    /// The secret values of the text, found now if not yet.
    fn findings(&self) -> &[Finding] {
        if !self.mask {
            return &[];
        }
        self.findings
            .get_or_init(|| Redactor::global().find(&self.text).into())
    }

    /// Bytes `range` of the file as stored, secret values included: for
    /// ranking alone (a search weighing a candidate's string literals),
    /// never for an answer.
    pub fn unmasked_slice(&self, range: Range<usize>) -> std::borrow::Cow<'_, str> {
        let r = range.start.min(self.text.len())..range.end.min(self.text.len());
        String::from_utf8_lossy(&self.text.as_bytes()[r])
    }

    /// Bytes `range` of the file (a symbol's span), masked.
    pub fn slice(&self, range: Range<usize>) -> String {
        let findings = self.findings();
        if findings.is_empty() {
            return self.unmasked_slice(range).into_owned();
        }
        mask_range(&self.text, range, findings)
    }

    /// Where a quote of a span starting at byte `at` starts: the start of
    /// its line when only indentation precedes it there, else `at`. A
    /// method quoted from its name's column would show its first line
    /// flush left and the rest indented, which misreads in Python and
    /// cannot be pasted back as the file's lines.
    pub fn line_start(&self, at: usize) -> usize {
        let Some(head) = self.text.as_bytes().get(..at) else {
            return at;
        };
        let from = head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if head[from..].iter().all(|&b| b == b' ' || b == b'\t') {
            from
        } else {
            at
        }
    }

    /// Newlines in bytes `range` (masking keeps a file's lines).
    pub fn newlines(&self, range: Range<usize>) -> usize {
        let b = self.text.as_bytes();
        let r = range.start.min(b.len())..range.end.min(b.len());
        memchr::memchr_iter(b'\n', &b[r]).count()
    }

    /// Where line `n` (from 1) starts: the file's length past its last.
    pub fn line_offset(&self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        memchr::memchr_iter(b'\n', self.text.as_bytes())
            .nth(n - 2)
            .map_or(self.text.len(), |i| i + 1)
    }

    /// Where the line after the one holding byte `at` starts: `None` when
    /// that line is the last.
    pub fn next_line(&self, at: usize) -> Option<usize> {
        let rest = self.text.as_bytes().get(at..)?;
        memchr::memchr(b'\n', rest).map(|i| at + i + 1)
    }

    /// The whole file, masked. Lines are those of the file.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        let findings = self.findings();
        if findings.is_empty() {
            std::borrow::Cow::Borrowed(&self.text)
        } else {
            std::borrow::Cow::Owned(mask_range(&self.text, 0..self.text.len(), findings))
        }
    }

    /// Binary, as git judges it (a NUL byte in the first 8000 bytes): a
    /// file of no known language is recorded without reading it, so this
    /// is where its bytes are first looked at. Not served as lines.
    pub fn is_binary(&self) -> bool {
        let b = self.text.as_bytes();
        b[..b.len().min(8000)].contains(&0)
    }

    /// The longest run of backticks in the file, for a fence no line of
    /// it closes. Read from the bytes as stored: a masked value's marker
    /// has no backticks, so the masked text's runs are never longer.
    pub fn longest_backtick_run(&self) -> usize {
        crate::context::longest_backtick_run_in(self.text.as_bytes())
    }

    /// How many secret values are masked.
    pub fn masked(&self) -> usize {
        self.findings().len()
    }

    /// Size in bytes (for cache budgets).
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_but_the_unmasked_slice_masks_the_secret_values() {
        let text = "db:\n  password: hunter2-XYZ-987\n  host: example.org\n";
        let at = text.find("hunter2").unwrap();
        let line = at..text.len();
        let f = Served::new(text.as_bytes(), true);
        // Read for ranking first: found nothing yet, masks nothing.
        assert!(f.unmasked_slice(line.clone()).contains("hunter2-XYZ-987"));
        let copy = f.clone();
        assert!(
            !f.slice(line.clone()).contains("hunter2"),
            "{}",
            f.slice(line.clone())
        );
        assert!(!f.text().contains("hunter2"));
        assert_eq!(copy.masked(), 1);
        assert!(!copy.slice(line.clone()).contains("hunter2"));
        assert!(copy.unmasked_slice(line.clone()).contains("hunter2"));
        // Without masking the text is served as stored.
        let plain = Served::new(text.as_bytes(), false);
        assert_eq!(plain.masked(), 0);
        assert!(plain.slice(line).contains("hunter2-XYZ-987"));
    }

    #[test]
    fn a_quote_starts_at_its_line_when_only_indentation_precedes_it() {
        let text = "class A:\n    def f(self):\n        return 1\nx = 1; y = 2\n";
        let f = Served::new(text.as_bytes(), false);
        let def = text.find("def").unwrap();
        assert_eq!(f.line_start(def), text.find("    def").unwrap());
        assert_eq!(f.slice(f.line_start(def)..def + 3), "    def");
        // Code before it on the line: the quote starts at the span.
        let y = text.find("y = 2").unwrap();
        assert_eq!(f.line_start(y), y);
        // The first line, and a position past the end, stay in the text.
        assert_eq!(f.line_start(0), 0);
        assert_eq!(f.line_start(10_000), 10_000);
    }
}
