//! What agents ask about besides code: READMEs, docs, contributing guides,
//! configuration and CI files, cut into sections so an answer can quote
//! the part that answers ("how do I run the tests" finds the section of
//! CONTRIBUTING or the CI job). Sections are derived from the indexed
//! files' text at search time; nothing about them is journaled.

use sno_journal::delta::State;
use sno_journal::model::{FileRecord, FileState, SkipReason};

use crate::served::Served;

/// Whether a section is prose or configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    Doc,
    Config,
}

impl ChunkKind {
    /// As answers name it.
    pub fn name(self) -> &'static str {
        match self {
            ChunkKind::Doc => "doc",
            ChunkKind::Config => "config",
        }
    }
}

/// A section of a doc or config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub path: String,
    /// The heading (or key, or table) it is under; the file name for the
    /// part before the first one.
    pub title: String,
    pub kind: ChunkKind,
    /// 1-based lines, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Byte range in the file.
    pub start_byte: usize,
    pub end_byte: usize,
    /// The section's text (masked, as the file is served).
    pub text: String,
}

impl Chunk {
    /// The text embedded for it: where it is and its first words.
    pub fn embedded_text(&self) -> String {
        let words: Vec<String> = crate::words::split_words(&self.text)
            .into_iter()
            .take(64)
            .collect();
        format!(
            "{} {} {}",
            crate::words::words(&self.title),
            crate::words::words(&self.path),
            words.join(" ")
        )
    }
}

/// Lines a section may span before it is cut in two.
const MAX_LINES: usize = 80;

/// Files larger than this are not cut into sections (generated data).
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// What kind of sections a path holds, if any.
pub fn kind_of(path: &str) -> Option<ChunkKind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "md" | "markdown" | "rst" | "adoc" | "txt" => Some(ChunkKind::Doc),
        "yml" | "yaml" | "toml" | "ini" | "cfg" | "conf" | "json" => {
            // Lock files and generated manifests are data, not answers.
            if lower.ends_with(".lock") || lower.contains("lock.json") {
                None
            } else {
                Some(ChunkKind::Config)
            }
        }
        _ if matches!(
            lower.as_str(),
            "makefile" | "dockerfile" | "justfile" | "procfile" | "tox.ini"
        ) =>
        {
            Some(ChunkKind::Config)
        }
        _ => None,
    }
}

/// The sections of every doc and config file of `state`, in path order;
/// `source` reads a file's (masked) text.
pub fn of_state(state: &State, source: &dyn Fn(&FileRecord) -> Option<Served>) -> Vec<Chunk> {
    state
        .iter()
        .flat_map(|(path, rec)| of_file(path, rec, source))
        .collect()
}

/// The sections of one file of a state: none unless it is a doc or config
/// file.
pub fn of_file(
    path: &str,
    rec: &FileRecord,
    source: &dyn Fn(&FileRecord) -> Option<Served>,
) -> Vec<Chunk> {
    let Some(kind) = kind_of(path) else {
        return Vec::new();
    };
    if rec.state != FileState::Skipped(SkipReason::UnsupportedLanguage) || rec.size > MAX_FILE_BYTES
    {
        return Vec::new();
    }
    match source(rec) {
        Some(text) => sections(path, &text.text(), kind),
        None => Vec::new(),
    }
}

/// A heading line's title, if `line` (with `next`) opens a section.
fn heading(kind: ChunkKind, path: &str, line: &str, next: Option<&str>) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    match kind {
        ChunkKind::Doc => {
            let t = line.trim_end();
            if lower.ends_with(".rst") || lower.ends_with(".adoc") {
                // reST: a title underlined with = - ~ ^ of at least its length.
                let under = next?.trim_end();
                let c = under.chars().next()?;
                (!t.is_empty()
                    && "=-~^*#".contains(c)
                    && under.chars().all(|x| x == c)
                    && under.len() >= t.len().min(3))
                .then(|| t.trim().to_string())
            } else {
                let hashes = t.chars().take_while(|c| *c == '#').count();
                (hashes > 0 && hashes <= 6 && t[hashes..].starts_with(' '))
                    .then(|| t[hashes..].trim().trim_end_matches('#').trim().to_string())
            }
        }
        ChunkKind::Config => {
            let t = line.trim_end();
            if t.starts_with('[') && t.ends_with(']') && !t.contains(' ') {
                // TOML / INI table.
                return Some(t.trim_matches(['[', ']']).to_string());
            }
            // A top-level YAML key, a Makefile target.
            let first = t.chars().next()?;
            if first.is_alphanumeric() || first == '_' || first == '.' || first == '"' {
                let (key, rest) = t.split_once(':')?;
                if rest.is_empty() || rest.starts_with(' ') || rest.starts_with(':') {
                    return Some(key.trim().trim_matches('"').to_string());
                }
            }
            None
        }
    }
}

/// The sections of one file.
pub fn sections(path: &str, text: &str, kind: ChunkKind) -> Vec<Chunk> {
    let file = path.rsplit('/').next().unwrap_or(path).to_string();
    let mut starts = vec![0usize];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    if *starts.last().unwrap_or(&0) >= text.len() {
        starts.pop();
    }
    let lines: Vec<&str> = starts
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let e = starts.get(i + 1).copied().unwrap_or(text.len());
            &text[*s..e]
        })
        .collect();
    // Section openings: (line index, title).
    let mut opens: Vec<(usize, String)> = vec![(0, file.clone())];
    let mut in_fence = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(t) = heading(kind, path, line, lines.get(i + 1).copied()) {
            if i == 0 {
                opens[0].1 = t;
            } else {
                opens.push((i, t));
            }
        }
    }
    let mut out = Vec::new();
    for (k, (from, title)) in opens.iter().enumerate() {
        let to = opens.get(k + 1).map(|o| o.0).unwrap_or(lines.len());
        let mut at = *from;
        while at < to {
            let end = (at + MAX_LINES).min(to);
            let (sb, eb) = (starts[at], starts.get(end).copied().unwrap_or(text.len()));
            if !text[sb..eb].trim().is_empty() {
                out.push(Chunk {
                    path: path.to_string(),
                    title: if at == *from {
                        title.clone()
                    } else {
                        format!("{title} (continued)")
                    },
                    kind,
                    start_line: at as u32 + 1,
                    end_line: end as u32,
                    start_byte: sb,
                    end_byte: eb,
                    text: text[sb..eb].to_string(),
                });
            }
            at = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_cut_at_headings_and_code_fences_are_not_headings() {
        let md = "# Project\n\nIntro.\n\n## Running the tests\n\n```sh\n# not a heading\ncargo test\n```\n\n## License\nMIT\n";
        let c = sections("CONTRIBUTING.md", md, ChunkKind::Doc);
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["Project", "Running the tests", "License"]);
        assert_eq!((c[1].start_line, c[1].end_line), (5, 11));
        assert!(md[c[1].start_byte..c[1].end_byte].contains("cargo test"));
    }

    #[test]
    fn config_is_cut_at_top_level_keys_and_tables() {
        let yaml = "name: CI\non:\n  push:\njobs:\n  test:\n    steps:\n      - run: cargo test\n";
        let c = sections(".github/workflows/ci.yml", yaml, ChunkKind::Config);
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["name", "on", "jobs"]);
        let toml = "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\n";
        let c = sections("Cargo.toml", toml, ChunkKind::Config);
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["package", "dependencies"]);
        assert_eq!(kind_of("Cargo.lock"), None);
        assert_eq!(kind_of("package-lock.json"), None);
        assert_eq!(kind_of("docs/guide.rst"), Some(ChunkKind::Doc));
        assert_eq!(kind_of("Makefile"), Some(ChunkKind::Config));
        assert_eq!(kind_of("src/main.rs"), None);
    }

    #[test]
    fn long_sections_are_cut_in_windows() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let c = sections("notes.txt", &text, ChunkKind::Doc);
        assert_eq!(c.len(), 3);
        assert_eq!(c[1].title, "notes.txt (continued)");
        assert_eq!((c[2].start_line, c[2].end_line), (161, 200));
    }
}
