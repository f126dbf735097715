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

/// New files a diff against the work tree takes, at most: a tree of
/// generated files is not parsed whole for one question.
const NEW_FILES_SEEN: usize = 20_000;

impl Engine {
    /// Whether git ignores the work-tree file `rel` (its `.gitignore`
    /// files, `info/exclude`, the user's global excludes, an ignored
    /// directory above it): whether a walk from the root that honours
    /// them, going down only toward it, leaves it out.
    fn ignored_by_git(&self, rel: &str) -> bool {
        let root = self.work_tree.root().to_path_buf();
        let path = root.join(rel);
        if !path.exists() {
            return false;
        }
        let toward = path.clone();
        let listed = ignore::WalkBuilder::new(&root)
            .hidden(false)
            .require_git(false)
            .filter_entry(move |e| toward.starts_with(e.path()))
            .build()
            .filter_map(|e| e.ok())
            .any(|e| e.path() == path);
        !listed
    }

    /// The work tree's files (not ignored, outside `.git` and `.sno`) that
    /// `state` does not hold, repository-relative.
    fn files_not_in(&self, state: &sno_journal::delta::State) -> Vec<String> {
        let root = self.work_tree.root().to_path_buf();
        let walk = ignore::WalkBuilder::new(&root)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| {
                // Not git's or sno's directories, nor a submodule's or
                // nested repository's files (another repository's).
                let nested = e.depth() > 0
                    && e.file_type().is_some_and(|t| t.is_dir())
                    && e.path().join(".git").exists();
                !nested && !matches!(e.file_name().to_str(), Some(".git" | ".sno"))
            })
            .build();
        walk.filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .filter_map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(&root)
                    .ok()?
                    .to_str()?
                    .replace('\\', "/");
                (!state.contains_key(&rel)).then_some(rel)
            })
            .take(NEW_FILES_SEEN)
            .collect()
    }
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
                // What git ignores is the user's own (`local_settings.py`
                // holds what a repository must not): never read, as the
                // index never reads it.
                if self.ignored_by_git(&rel) {
                    return Err(ErrorCode::PathRefused
                        .with(format!("{rel} is ignored by git; sno never reads it"))
                        .into());
                }
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
    /// work tree (tracked files as they are on disk, and files new there,
    /// staged or not, that git does not ignore; under the confinement
    /// rule; symbols only, no edges).
    pub fn changes_in_work_tree(
        &self,
        from: Option<&str>,
    ) -> Result<sno_protocol::query::ChangesAnswer> {
        use sno_index::confine::WorkTreeFile;
        let (old, _) = self.snapshot(from)?;
        let mut state = old.state.clone();
        let parsed = |path: &str, lang: Language, blob, bytes: &[u8]| {
            let mut facts = sno_extract::extract(lang, bytes);
            let masked = if self.config.mask_secrets {
                sno_index::record::mask_facts(&mut facts, bytes)
            } else {
                0
            };
            sno_index::record::parsed_record(path, blob, bytes.len() as u64, bytes, facts, masked)
        };
        for (path, rec) in &old.state {
            let Some(lang) = rec.language else { continue };
            match self.work_tree.compare(path, rec.blob, rec.size) {
                Ok(WorkTreeFile::Same | WorkTreeFile::NotCheckedOut) => {}
                Ok(WorkTreeFile::Edited) => {
                    let bytes = self.work_tree.read(path)?;
                    state.insert(path.clone(), parsed(path, lang, rec.blob, &bytes));
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
        // Files the state lacks: new in the work tree, staged or not (a
        // rename's new name among them), as git lists them (not ignored).
        for path in self.files_not_in(&old.state) {
            let Some(lang) = Language::from_path(&path) else {
                continue;
            };
            // Refused (a secret's name, a link out) or unreadable: left out.
            let Ok(bytes) = self.work_tree.read(&path) else {
                continue;
            };
            if bytes.len() as u64 > self.config.max_file_size || bytes.contains(&0) {
                continue;
            }
            let blob = sno_index::git::blob_id_of(&bytes);
            state.insert(path.clone(), parsed(&path, lang, blob, &bytes));
        }
        Ok(sno_protocol::query::ChangesAnswer {
            from: old.as_of.clone(),
            to: sno_protocol::query::ChangesTo::WorkTree(sno_protocol::query::WorkTree::Worktree),
            changes: sno_query::changes::symbol_changes(&old.state, &state),
        })
    }
}
