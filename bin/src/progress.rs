//! Progress of long runs on stderr: a bar on a terminal, plain lines otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use sno_protocol::status::Progress;
use tokio::sync::mpsc::UnboundedReceiver;

/// Renders progress events until the sender goes away.
pub async fn render(mut rx: UnboundedReceiver<Progress>) {
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let (mut files, mut embedded) = (FileSteps::default(), FileSteps::default());
    while let Some(p) = rx.recv().await {
        match p {
            Progress::Planned { commits, resumed_from } => {
                if let Some(c) = resumed_from {
                    crate::out::errln!("sno: continuing from indexed commit {}", &c[..12.min(c.len())]);
                }
                if commits == 0 {
                    continue;
                }
                if tty {
                    let b = ProgressBar::new(commits as u64);
                    b.set_style(
                        ProgressStyle::with_template("{spinner} indexing [{bar:30}] {pos}/{len} commits {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    bar = Some(b);
                } else {
                    crate::out::errln!("sno: indexing {commits} commit(s)");
                }
            }
            Progress::CommitDone { index, total, commit, files_parsed, deltas } => match &bar {
                Some(b) => {
                    b.set_position(index as u64);
                    b.set_message(format!("{} ({files_parsed} files parsed)", &commit[..12.min(commit.len())]));
                }
                None => crate::out::errln!(
                    "sno: indexed {index}/{total} {} ({files_parsed} files parsed, {deltas} file deltas)",
                    &commit[..12.min(commit.len())]
                ),
            },
            Progress::FilesParsed { done, total } => {
                files.report(&bar, "parsed", done, total);
            }
            Progress::FilesEmbedded { done, total } => {
                embedded.report(&bar, "embedded", done, total);
            }
            Progress::SearchIndex { files } => match &bar {
                Some(b) => b.set_message(format!("building the search index of {files} files")),
                None => crate::out::errln!("sno: building the search index of {files} files"),
            },
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// Files this many or more are worth reporting: a small repository's
/// files take less time than reading the lines would.
const REPORTED_FROM: usize = 2_000;

/// Where a count of files stands, for reports at every tenth of the way:
/// a line each without a terminal, the bar's message with one.
#[derive(Default)]
struct FileSteps {
    shown: Option<usize>,
}

impl FileSteps {
    fn report(&mut self, bar: &Option<ProgressBar>, what: &str, done: usize, total: usize) {
        if total < REPORTED_FROM {
            return;
        }
        match bar {
            Some(b) => b.set_message(format!("{what} {done}/{total} files")),
            None => {
                let step = done * 10 / total.max(1);
                if self.shown.is_none_or(|s| step > s) {
                    self.shown = Some(step);
                    crate::out::errln!("sno: {what} {done}/{total} files");
                }
            }
        }
    }
}
