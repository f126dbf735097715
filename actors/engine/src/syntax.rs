//! Syntax checks of uncommitted text: a work-tree file (under the
//! confinement rule) or code an agent is about to write.

use sno_journal::model::Language;
use sno_protocol::query::{Diagnostic, SyntaxAnswer};
use sno_protocol::ErrorCode;

use crate::engine::Engine;
use crate::error::{nearest, Error, Result};

/// What to check.
pub enum SyntaxInput<'a> {
    /// A file of the work tree, relative to the root.
    File {
        path: &'a str,
        language: Option<&'a str>,
    },
    /// Code, in a language.
    Code { code: &'a str, language: &'a str },
}

/// The language a user or an agent names (`python`, `py`, `c++`, ...).
pub fn language(name: &str) -> Result<Language> {
    let lower = name.to_ascii_lowercase();
    let alias = match lower.as_str() {
        "py" => "python",
        "js" | "jsx" => "javascript",
        "ts" => "typescript",
        "c++" | "cc" => "cpp",
        "rb" => "ruby",
        "rs" => "rust",
        "cs" | "c#" => "csharp",
        "kt" => "kotlin",
        other => other,
    };
    Language::ALL
        .into_iter()
        .find(|l| l.name() == alias)
        .ok_or_else(|| {
            let names: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
            Error::from(
                ErrorCode::UnsupportedLanguage
                    .with(format!("sno does not parse `{name}`"))
                    .hinted(format!("Use one of: {}.", names.join(", ")))
                    .suggesting(nearest(name, names.iter().map(|n| n.to_string()), 3)),
            )
        })
}

impl Engine {
    /// Diagnostics of a file or of code; none means it parses.
    pub fn validate_syntax(&self, input: SyntaxInput) -> Result<SyntaxAnswer> {
        let (lang, source, file) = match input {
            SyntaxInput::File { path, language: l } => {
                let rel = self.confine(path)?;
                // Links are followed only within the work tree; .git and
                // secret files are never read.
                let source = self.work_tree.read(&rel)?;
                let lang = match l {
                    Some(l) => language(l)?,
                    None => Language::from_path(&rel).ok_or_else(|| {
                        Error::from(
                            ErrorCode::UnsupportedLanguage
                                .with(format!("sno cannot tell the language of {rel}"))
                                .hinted(
                                    "Pass `language` explicitly, or a file with a known extension.",
                                ),
                        )
                    })?,
                };
                (lang, source, Some(rel))
            }
            SyntaxInput::Code { code, language: l } => {
                (language(l)?, code.as_bytes().to_vec(), None)
            }
        };
        let mut facts = sno_extract::extract(lang, &source);
        // Diagnostics quote the source.
        if self.config.mask_secrets {
            sno_index::record::mask_facts(&mut facts, &source);
        }
        Ok(SyntaxAnswer {
            file,
            language: lang.name().to_string(),
            ok: facts.diagnostics.is_empty(),
            diagnostics: facts
                .diagnostics
                .into_iter()
                .map(|d| Diagnostic {
                    line: d.line,
                    column: d.column,
                    message: d.message,
                })
                .collect(),
            symbols: facts.symbols.len(),
        })
    }

    /// Symbols added, removed and changed between an indexed state and the
    /// work tree (tracked files as they are on disk, under the confinement
    /// rule; symbols only, no edges).
    pub fn changes_in_work_tree(
        &self,
        from: Option<&str>,
    ) -> Result<sno_protocol::query::ChangesAnswer> {
        use sno_index::confine::WorkTreeFile;
        let (old, _) = self.snapshot(from)?;
        let mut state = old.state.clone();
        for (path, rec) in &old.state {
            let Some(lang) = rec.language else { continue };
            match self.work_tree.compare(path, rec.blob, rec.size) {
                Ok(WorkTreeFile::Same | WorkTreeFile::NotCheckedOut) => {}
                Ok(WorkTreeFile::Edited) => {
                    let bytes = self.work_tree.read(path)?;
                    let mut facts = sno_extract::extract(lang, &bytes);
                    let masked = if self.config.mask_secrets {
                        sno_index::record::mask_facts(&mut facts, &bytes)
                    } else {
                        0
                    };
                    let new = sno_index::record::parsed_record(
                        path,
                        rec.blob,
                        bytes.len() as u64,
                        &bytes,
                        facts,
                        masked,
                    );
                    state.insert(path.clone(), new);
                }
                Ok(WorkTreeFile::Deleted) => {
                    state.remove(path);
                }
                // Taking an unreadable file as unchanged would be a wrong diff.
                Err(e) => {
                    return Err(Error::internal(format!(
                        "could not read {path} in the work tree: {e}"
                    )))
                }
            }
        }
        Ok(sno_protocol::query::ChangesAnswer {
            from: old.as_of.clone(),
            to: sno_protocol::query::ChangesTo::WorkTree(sno_protocol::query::WorkTree::Worktree),
            changes: sno_query::changes::symbol_changes(&old.state, &state),
        })
    }
}
