//! Turning extraction facts into stored records: stable symbol ids and
//! references expressed in ids instead of per-file indices.

use std::collections::HashMap;

use sno_extract::FileFacts;
use sno_journal::model::{
    BlobId, FileRecord, FileRefs, FileState, RawCall, RawImport, RawInherit, SkipReason, Symbol,
    SymbolId,
};

/// Masks the secret values in what is stored of a file (signatures, docs,
/// diagnostics' messages) and returns how many the whole file holds (what
/// answers quoting it mask).
pub fn mask_facts(facts: &mut FileFacts, source: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(source);
    let findings = sno_redact::Redactor::global().find(&text);
    // Every stored text is a piece of the file: none holds a secret the
    // whole file does not. A piece may hold a secret cut short (a signature
    // stops at 200 characters, an error message quotes 30), so what the
    // whole file's secrets share with it is masked too.
    if !findings.is_empty() {
        let values: Vec<(&str, &'static str)> = findings
            .iter()
            .map(|f| (&text[f.range.clone()], f.rule))
            .collect();
        let mask = |t: &mut String| {
            let (masked, n) = sno_redact::redact(t);
            let (masked, m) = sno_redact::mask_pieces(&masked, &values);
            if n + m > 0 {
                *t = masked;
            }
        };
        for s in &mut facts.symbols {
            mask(&mut s.signature);
            mask(&mut s.doc);
        }
        for d in &mut facts.diagnostics {
            mask(&mut d.message);
        }
    }
    findings.len() as u32
}

/// A record for a parsed file. Edges are left empty: resolution fills them.
pub fn parsed_record(
    path: &str,
    blob: BlobId,
    size: u64,
    source: &[u8],
    facts: FileFacts,
    masked_secrets: u32,
) -> FileRecord {
    let mut ordinals: HashMap<(&str, u8), u32> = HashMap::new();
    let mut ids = Vec::with_capacity(facts.symbols.len());
    for s in &facts.symbols {
        let n = ordinals
            .entry((s.qualified_name.as_str(), s.kind as u8))
            .or_insert(0);
        ids.push(SymbolId::derive(path, &s.qualified_name, s.kind, *n));
        *n += 1;
    }
    let symbols: Vec<Symbol> = facts
        .symbols
        .iter()
        .zip(&ids)
        .map(|(s, &id)| Symbol {
            id,
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind,
            parent: s.parent.and_then(|p| ids.get(p).copied()),
            span: s.span,
            signature: s.signature.clone(),
            doc: s.doc.clone(),
            content_hash: s.content_hash,
        })
        .collect();
    let refs = FileRefs {
        imports: facts
            .imports
            .into_iter()
            .map(|i| RawImport {
                module: i.module,
                names: i.names,
                alias: i.alias,
                is_relative: i.is_relative,
                line: i.line,
            })
            .collect(),
        calls: facts
            .calls
            .into_iter()
            .map(|c| RawCall {
                caller: c.caller.and_then(|i| ids.get(i).copied()),
                callee: c.callee,
                receiver: c.receiver,
                line: c.line,
            })
            .collect(),
        inherits: facts
            .inherits
            .into_iter()
            .filter_map(|h| {
                Some(RawInherit {
                    symbol: *ids.get(h.symbol)?,
                    base: h.base,
                    line: h.line,
                })
            })
            .collect(),
    };
    let state = if facts.diagnostics.is_empty() {
        FileState::Parsed
    } else {
        FileState::ParsedWithErrors
    };
    let mut rec = FileRecord {
        path: path.to_string(),
        blob,
        language: Some(facts.language),
        size,
        lines: count_lines(source),
        state,
        diagnostics: facts.diagnostics,
        masked_secrets,
        symbols,
        edges: Vec::new(),
        refs,
    };
    rec.canonicalize();
    rec
}

/// A record for a file that is tracked but not parsed.
pub fn skipped_record(
    path: &str,
    blob: BlobId,
    size: u64,
    lines: u32,
    state: FileState,
) -> FileRecord {
    FileRecord {
        path: path.to_string(),
        blob,
        language: sno_journal::model::Language::from_path(path),
        size,
        lines,
        state,
        diagnostics: Vec::new(),
        masked_secrets: 0,
        symbols: Vec::new(),
        edges: Vec::new(),
        refs: FileRefs::default(),
    }
}

/// A record for a skip reason.
pub fn skip_state(reason: SkipReason) -> FileState {
    FileState::Skipped(reason)
}

/// Lines as editors count them: a final line without newline still counts.
pub fn count_lines(source: &[u8]) -> u32 {
    let n = source.iter().filter(|&&b| b == b'\n').count();
    let tail = usize::from(!source.is_empty() && !source.ends_with(b"\n"));
    (n + tail) as u32
}

#[cfg(test)]
mod mask_tests {
    use super::*;
    use sno_journal::model::{Diagnostic, Language};

    #[test]
    fn stored_texts_lose_whole_and_cut_secrets_and_the_file_is_counted() {
        let token = "ghp_R8sT1wY9kLmN2bV4cX6zQ0aS3dF5gH7jK1pQ";
        let source = format!("TOKEN = '{token}'\nURL = 'https://u:Zk8pQ2vL9xW@h/'\n");
        let mut facts = sno_extract::extract(Language::Python, source.as_bytes());
        assert_eq!(facts.symbols.len(), 2);
        // What extraction quotes of a broken line: cut at 30 characters.
        facts.diagnostics.push(Diagnostic {
            line: 1,
            column: 1,
            message: format!("syntax error near `TOKEN = '{}...`", &token[..19]),
        });
        let n = mask_facts(&mut facts, source.as_bytes());
        assert_eq!(n, 2);
        let stored = format!("{facts:?}");
        assert!(!stored.contains(&token[..12]), "{stored}");
        assert!(!stored.contains("Zk8pQ2vL9xW"), "{stored}");
        assert!(facts.symbols[0]
            .signature
            .contains("«redacted:github-token»"));
        assert!(
            facts
                .diagnostics
                .iter()
                .any(|d| d.message.contains("«redacted:")),
            "{:?}",
            facts.diagnostics
        );
    }
}
