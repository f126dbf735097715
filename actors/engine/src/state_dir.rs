//! The guard on `.sno/` itself. sno reads its settings there (an agent
//! endpoint and the name of the variable holding its key, whether secrets
//! are masked) and writes its database, lock and caches there, so a `.sno`
//! the repository ships would let a cloned repository configure sno, and a
//! link in it would send sno's writes to a file outside the repository
//! (`.sno/lock -> ~/.bashrc` truncated to a process id). Neither is ever
//! used: sno refuses to run on such a repository until the user removes
//! them.

use std::path::Path;

use sno_index::git::GitRepo;
use sno_protocol::ErrorCode;

use crate::error::Result;

/// Entries of `.sno/` looked at for links; a state directory holds a few
/// dozen, so the bound only caps the time on a directory that is not one.
const MAX_ENTRIES: usize = 20_000;

/// Refuses a `.sno` that HEAD's commit tracks, that is a link or not a
/// directory, or that holds a link anywhere inside.
pub(crate) fn refuse_shipped(repo: &GitRepo, sno_dir: &Path) -> Result<()> {
    if repo.head_tree_has(".sno").unwrap_or(false) {
        return Err(unsafe_state(format!(
            "this repository's commit tracks {}: a repository may not configure sno or choose where it writes",
            sno_dir.display()
        )));
    }
    let Ok(meta) = std::fs::symlink_metadata(sno_dir) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(unsafe_state(format!(
            "{} is {}, not sno's own directory",
            sno_dir.display(),
            if meta.file_type().is_symlink() {
                "a link"
            } else {
                "a file"
            }
        )));
    }
    if let Some(link) = first_link(sno_dir) {
        return Err(unsafe_state(format!(
            "{} is a link: sno writes only to files of its own",
            link.display()
        )));
    }
    Ok(())
}

/// The first symbolic link under `dir`, not following any.
fn first_link(dir: &Path) -> Option<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        // A directory that cannot be read is looked past, not taken for
        // the end of the search.
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                return Some(entry.path());
            }
            if kind.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    None
}

fn unsafe_state(message: String) -> crate::error::Error {
    ErrorCode::UnsafeState.with(message).into()
}
