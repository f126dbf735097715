//! A file's text as sno serves it: the bytes of the indexed blob, read as
//! UTF-8, with every secret value masked (`sno_redact`). Every answer that
//! quotes a file (a symbol's source, a context package, a grep hit) slices
//! this, so no tool can serve a credential, and a pattern search runs over
//! the masked text, so it cannot probe a secret one character at a time.

use std::ops::Range;
use std::sync::Arc;

use sno_redact::{mask_range, Finding, Redactor};

/// A file's text with the secret values found in it.
#[derive(Clone, Debug)]
pub struct Served {
    text: Arc<str>,
    findings: Arc<[Finding]>,
}

impl Served {
    /// The text of `bytes`; with `mask`, its secret values are found now
    /// (once per blob: callers cache a `Served`).
    pub fn new(bytes: &[u8], mask: bool) -> Served {
        let text: Arc<str> = String::from_utf8_lossy(bytes).into();
        let findings: Arc<[Finding]> = if mask {
            Redactor::global().find(&text).into()
        } else {
            Arc::new([])
        };
        Served { text, findings }
    }

    /// Bytes `range` of the file (a symbol's span), masked.
    pub fn slice(&self, range: Range<usize>) -> String {
        if self.findings.is_empty() {
            let r = range.start.min(self.text.len())..range.end.min(self.text.len());
            return String::from_utf8_lossy(&self.text.as_bytes()[r]).into_owned();
        }
        mask_range(&self.text, range, &self.findings)
    }

    /// The whole file, masked. Lines are those of the file.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        if self.findings.is_empty() {
            std::borrow::Cow::Borrowed(&self.text)
        } else {
            std::borrow::Cow::Owned(mask_range(&self.text, 0..self.text.len(), &self.findings))
        }
    }

    /// How many secret values are masked.
    pub fn masked(&self) -> usize {
        self.findings.len()
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
