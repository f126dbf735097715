//! One confinement rule for every path a user or an agent names and every
//! read of the work tree.
//!
//! Answers about indexed files come from git objects of the indexed commit,
//! so a path is served only if that commit admitted it (the caller looks it
//! up in the indexed state). The work tree is read only where an answer is
//! about uncommitted text (syntax checks, edits since the indexed commit),
//! and there every read resolves symbolic links first and refuses anything
//! that lands outside the work tree, inside git's directory, or on a file
//! the secret rules keep out of the index: a committed link such as
//! `src/evil.py -> ../../../../etc/shadow` is never followed out.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use sno_journal::model::BlobId;

use crate::admission::SecretFilter;

/// Why a path is refused.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Absolute, climbing out with `..`, or a link resolving outside.
    #[error("{0} is outside the repository's work tree")]
    Outside(String),
    /// In `.git/` (or the repository's git directory elsewhere).
    #[error("{0} is inside git's own directory")]
    GitDir(String),
    /// In sno's own `.sno/` (its database, settings and caches).
    #[error("{0} is inside sno's own directory")]
    StateDir(String),
    /// Named like a file that holds secrets (by its own name or, for a
    /// link, its target's).
    #[error("{0} is a secret file by its name; sno never reads it")]
    Secret(String),
    /// A directory, a device, or no such file.
    #[error("{path} cannot be read: {reason}")]
    Unreadable { path: String, reason: String },
}

/// The work tree of a repository, and the rule for reading it.
#[derive(Clone, Debug)]
pub struct WorkTree {
    /// Canonical (links resolved).
    root: PathBuf,
    /// Git's directories (the worktree's and the common one), canonical.
    git_dirs: Vec<PathBuf>,
    secrets: SecretFilter,
    /// Files found equal to a blob, by what `stat` says of them, so an
    /// answer naming the same files again does not hash them again.
    hashed: std::sync::Arc<std::sync::Mutex<HashMap<PathBuf, (Stat, BlobId)>>>,
    /// What git's index leaves out of a sparse checkout, read again when
    /// the index file changes.
    sparse: std::sync::Arc<std::sync::Mutex<Option<SparseSet>>>,
}

/// The paths git's index marks skip-worktree: a sparse checkout's files
/// that are committed but deliberately not in the work tree.
#[derive(Debug)]
struct SparseSet {
    /// The index file's length and modification time when read.
    stamp: (u64, Option<std::time::SystemTime>),
    files: std::collections::HashSet<String>,
    /// A sparse index's collapsed directories, each ending in `/`.
    dirs: Vec<String>,
}

impl SparseSet {
    fn read(index: &Path, stamp: (u64, Option<std::time::SystemTime>)) -> SparseSet {
        let mut set = SparseSet {
            stamp,
            files: Default::default(),
            dirs: Vec::new(),
        };
        let file =
            match gix::index::File::at(index, gix::hash::Kind::Sha1, false, Default::default()) {
                Ok(f) => f,
                Err(e) => {
                    tracing::debug!(error = %e, "git's index not read for skip-worktree entries");
                    return set;
                }
            };
        for entry in file.entries() {
            if !entry
                .flags
                .contains(gix::index::entry::Flags::SKIP_WORKTREE)
            {
                continue;
            }
            let path = entry.path(&file).to_string();
            if entry.mode == gix::index::entry::Mode::DIR {
                let mut dir = path;
                if !dir.ends_with('/') {
                    dir.push('/');
                }
                set.dirs.push(dir);
            } else {
                set.files.insert(path);
            }
        }
        set
    }

    fn holds(&self, rel: &str) -> bool {
        self.files.contains(rel) || self.dirs.iter().any(|d| rel.starts_with(d.as_str()))
    }
}

/// What `stat` says of a file that changes when its bytes do: git's rule
/// for trusting its index without reading the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
            ino: m.ino(),
        }
    }

    /// Whether the file was last written long enough ago that another
    /// write in the same clock tick is ruled out (git's "racily clean"
    /// files are hashed each time instead).
    fn settled(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        self.mtime_ns + SETTLED_NS < now
    }
}

/// How old a file's last change must be for its hash to be remembered.
const SETTLED_NS: i128 = 2_000_000_000;

/// Files whose hashes are remembered at most (forgotten wholesale past it).
const HASHED_MAX: usize = 1 << 16;

/// A tracked file in the work tree against its indexed blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkTreeFile {
    /// The same bytes as the indexed blob.
    Same,
    /// Edited since.
    Edited,
    /// Gone from the work tree, no longer a regular file, or a link sno
    /// will not follow.
    Deleted,
    /// Not in the work tree because a sparse checkout leaves it out (git's
    /// skip-worktree): not an edit; its committed text is the one to read.
    NotCheckedOut,
}

impl WorkTree {
    /// The rule for the work tree at `root`, whose git directories are
    /// `git_dirs` (for a linked worktree, its own and the common one).
    pub fn new(root: &Path, git_dirs: &[&Path], secrets: SecretFilter) -> WorkTree {
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        WorkTree {
            root: canon(root),
            git_dirs: git_dirs.iter().map(|d| canon(d)).collect(),
            secrets,
            hashed: Default::default(),
            sparse: Default::default(),
        }
    }

    /// Whether git's index marks `rel` skip-worktree (a sparse checkout
    /// leaves it out of the work tree on purpose).
    fn not_checked_out(&self, rel: &str) -> bool {
        let Some(index) = self.git_dirs.first().map(|d| d.join("index")) else {
            return false;
        };
        let Ok(meta) = std::fs::metadata(&index) else {
            return false;
        };
        let stamp = (meta.len(), meta.modified().ok());
        let mut sparse = self.sparse.lock().unwrap_or_else(|e| e.into_inner());
        if sparse.as_ref().map(|s| s.stamp) != Some(stamp) {
            *sparse = Some(SparseSet::read(&index, stamp));
        }
        sparse.as_ref().is_some_and(|s| s.holds(rel))
    }

    /// The work tree's root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A repository-relative path for one a user or an agent gave:
    /// `.` and `..` resolved, an absolute path under the root made relative.
    /// Refused: paths that climb out, `.git` and the secret names. This is
    /// only the spelling; [`WorkTree::read`] also checks where links lead.
    pub fn relative(&self, given: &str) -> Result<String, Refused> {
        let p = Path::new(given);
        let rel = if p.is_absolute() {
            // An absolute path is accepted only when it names a place under
            // the root as written (not after resolving links).
            let under = p
                .strip_prefix(&self.root)
                .ok()
                .map(Path::to_path_buf)
                .ok_or_else(|| Refused::Outside(given.to_string()))?;
            under.to_string_lossy().into_owned()
        } else {
            given.to_string()
        };
        let mut out: Vec<&str> = Vec::new();
        for seg in rel.split(['/', '\\']) {
            match seg {
                "" | "." => {}
                ".." => {
                    out.pop()
                        .ok_or_else(|| Refused::Outside(given.to_string()))?;
                }
                s => out.push(s),
            }
        }
        let rel = out.join("/");
        self.check_name(&rel, given)?;
        Ok(rel)
    }

    /// Refuses `.git` segments and secret names.
    fn check_name(&self, rel: &str, given: &str) -> Result<(), Refused> {
        if rel.split('/').any(|s| s.eq_ignore_ascii_case(".git")) {
            return Err(Refused::GitDir(given.to_string()));
        }
        if rel
            .split('/')
            .next()
            .is_some_and(|s| s.eq_ignore_ascii_case(".sno"))
        {
            return Err(Refused::StateDir(given.to_string()));
        }
        if !rel.is_empty() && self.secrets.is_secret(rel) {
            return Err(Refused::Secret(given.to_string()));
        }
        Ok(())
    }

    /// Where `rel` (repository-relative) leads once every link is
    /// followed, if that is a place sno may read: inside the root, outside
    /// git's directories, not a secret by the name it resolves to.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, Refused> {
        let rel = self.relative(rel)?;
        let full = self.root.join(&rel);
        let real = full.canonicalize().map_err(|e| Refused::Unreadable {
            path: rel.clone(),
            reason: e.to_string(),
        })?;
        let inside = real
            .strip_prefix(&self.root)
            .map_err(|_| Refused::Outside(rel.clone()))?;
        if self.git_dirs.iter().any(|g| real.starts_with(g)) {
            return Err(Refused::GitDir(rel));
        }
        let inside = inside
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/");
        self.check_name(&inside, &rel)?;
        Ok(real)
    }

    /// Reads a file of the work tree under the rule, as a blob is read
    /// (UTF-8, or text decoded from Windows-1252).
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, Refused> {
        let real = self.resolve(rel)?;
        let unreadable = |e: std::io::Error| Refused::Unreadable {
            path: rel.to_string(),
            reason: e.to_string(),
        };
        if !std::fs::metadata(&real).map_err(unreadable)?.is_file() {
            return Err(Refused::Unreadable {
                path: rel.to_string(),
                reason: "not a regular file".into(),
            });
        }
        // A Latin-1 file is parsed and served as the index has it.
        std::fs::read(&real)
            .map(crate::admission::text_of)
            .map_err(unreadable)
    }

    /// Compares tracked `rel` in the work tree with the indexed `blob` of
    /// `size` bytes. A file of another size is edited without being read;
    /// one of the same size is hashed as git hashes blobs. A link, a
    /// directory, or a path whose parent directories lead out of the work
    /// tree stands where a regular file was indexed: git shows that as a
    /// deletion, and nothing behind it is read.
    pub fn compare(&self, rel: &str, blob: BlobId, size: u64) -> std::io::Result<WorkTreeFile> {
        let rel = &self
            .relative(rel)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        let full = self.root.join(rel);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(if self.not_checked_out(rel) {
                    WorkTreeFile::NotCheckedOut
                } else {
                    WorkTreeFile::Deleted
                });
            }
            Err(e) => return Err(e),
        };
        if !meta.is_file() {
            return Ok(WorkTreeFile::Deleted);
        }
        // The file itself is no link; its directories might be.
        let real = match self.resolve(rel) {
            Ok(real) => real,
            Err(_) => return Ok(WorkTreeFile::Deleted),
        };
        if real != full {
            return Ok(WorkTreeFile::Deleted);
        }
        if meta.len() != size {
            return Ok(WorkTreeFile::Edited);
        }
        let stat = Stat::of(&meta);
        let lock = || self.hashed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((known, id)) = lock().get(&real) {
            if *known == stat {
                return Ok(if *id == blob {
                    WorkTreeFile::Same
                } else {
                    WorkTreeFile::Edited
                });
            }
        }
        let id = crate::git::blob_id_of(&std::fs::read(&real)?);
        if stat.settled() {
            let mut hashed = lock();
            if hashed.len() >= HASHED_MAX {
                hashed.clear();
            }
            hashed.insert(real, (stat, id));
        }
        Ok(if id == blob {
            WorkTreeFile::Same
        } else {
            WorkTreeFile::Edited
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, WorkTree) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "url = https://tok@host").unwrap();
        std::fs::write(root.join("src/app.py"), "def f(): pass\n").unwrap();
        std::fs::write(root.join(".env"), "KEY=hunter2\n").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "OUTSIDE SENTINEL").unwrap();
        let secrets = SecretFilter::new(&[".env*".to_string(), "*.pem".to_string()]).unwrap();
        let wt = WorkTree::new(&root, &[&root.join(".git")], secrets);
        (dir, wt)
    }

    #[test]
    fn reads_inside_and_refuses_every_way_out() {
        let (dir, wt) = tree();
        let root = wt.root().to_path_buf();
        assert_eq!(wt.read("src/app.py").unwrap(), b"def f(): pass\n");
        assert_eq!(wt.read("./src/deep/../app.py").unwrap(), b"def f(): pass\n");
        // Links: relative, absolute, chained, through a directory.
        symlink("../../outside.txt", root.join("src/rel.py")).unwrap();
        symlink(dir.path().join("outside.txt"), root.join("src/abs.py")).unwrap();
        symlink("rel.py", root.join("src/chain.py")).unwrap();
        symlink(dir.path(), root.join("src/dirlink")).unwrap();
        symlink("../.env", root.join("src/env.py")).unwrap();
        symlink("../.git/config", root.join("src/cfg.py")).unwrap();
        symlink("app.py", root.join("src/ok.py")).unwrap();
        for p in [
            "src/rel.py",
            "src/abs.py",
            "src/chain.py",
            "src/dirlink/outside.txt",
        ] {
            assert!(matches!(wt.read(p), Err(Refused::Outside(_))), "{p}");
        }
        assert!(matches!(wt.read("src/env.py"), Err(Refused::Secret(_))));
        assert!(matches!(wt.read("src/cfg.py"), Err(Refused::GitDir(_))));
        assert_eq!(
            wt.read("src/ok.py").unwrap(),
            b"def f(): pass\n",
            "a link inside is fine"
        );
        // Spellings.
        assert!(matches!(wt.read(".env"), Err(Refused::Secret(_))));
        assert!(matches!(
            wt.read("src/../.env.local"),
            Err(Refused::Secret(_))
        ));
        assert!(matches!(wt.read(".git/config"), Err(Refused::GitDir(_))));
        assert!(matches!(
            wt.read("src/../../outside.txt"),
            Err(Refused::Outside(_))
        ));
        assert!(matches!(wt.read("/etc/passwd"), Err(Refused::Outside(_))));
        assert!(matches!(wt.read("src"), Err(Refused::Unreadable { .. })));
        assert_eq!(
            wt.relative(&root.join("src/app.py").display().to_string())
                .unwrap(),
            "src/app.py"
        );
    }

    #[test]
    fn edits_show_by_size_then_by_hash_and_type_changes_are_deletions() {
        let (_dir, wt) = tree();
        let root = wt.root().to_path_buf();
        std::fs::write(root.join("a.txt"), "hello\n").unwrap();
        let blob = crate::git::blob_id_of(b"hello\n");
        let at = |p: &str| wt.compare(p, blob, 6).unwrap();
        assert_eq!(at("a.txt"), WorkTreeFile::Same);
        // Same size, other bytes: hashed, not just measured.
        std::fs::write(root.join("a.txt"), "HELLO\n").unwrap();
        assert_eq!(at("a.txt"), WorkTreeFile::Edited);
        std::fs::write(root.join("a.txt"), "hello, world\n").unwrap();
        assert_eq!(at("a.txt"), WorkTreeFile::Edited);
        assert_eq!(at("gone.txt"), WorkTreeFile::Deleted);
        // A directory or a link in the file's place: a type change.
        std::fs::create_dir(root.join("dir")).unwrap();
        assert_eq!(at("dir"), WorkTreeFile::Deleted);
        symlink("a.txt", root.join("link")).unwrap();
        assert_eq!(at("link"), WorkTreeFile::Deleted);
        // Never outside the work tree.
        for bad in ["../a.txt", "/etc/hostname", "x/../../a.txt"] {
            assert!(wt.compare(bad, blob, 6).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_remembered_hash_is_used_only_while_stat_says_nothing_changed() {
        let (_dir, wt) = tree();
        let path = wt.root().join("b.txt");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let write = |text: &str| {
            std::fs::write(&path, text).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        };
        let blob = crate::git::blob_id_of(b"hello\n");
        write("hello\n");
        assert_eq!(wt.compare("b.txt", blob, 6).unwrap(), WorkTreeFile::Same);
        assert_eq!(
            wt.hashed.lock().unwrap().len(),
            1,
            "a settled file is remembered"
        );
        assert_eq!(wt.compare("b.txt", blob, 6).unwrap(), WorkTreeFile::Same);
        // Other bytes of the same size under the same mtime: the inode's
        // change time moved, so the file is hashed again.
        write("HELLO\n");
        assert_eq!(wt.compare("b.txt", blob, 6).unwrap(), WorkTreeFile::Edited);
        // A file written just now is hashed each time, never remembered.
        let fresh = wt.root().join("c.txt");
        std::fs::write(&fresh, "hello\n").unwrap();
        assert_eq!(wt.compare("c.txt", blob, 6).unwrap(), WorkTreeFile::Same);
        assert!(!wt.hashed.lock().unwrap().contains_key(&fresh));
        std::fs::write(&fresh, "HELLO\n").unwrap();
        assert_eq!(wt.compare("c.txt", blob, 6).unwrap(), WorkTreeFile::Edited);
    }

    #[test]
    fn a_tracked_file_behind_a_link_is_not_compared_by_its_target() {
        let (dir, wt) = tree();
        let root = wt.root().to_path_buf();
        let bytes = std::fs::read(dir.path().join("outside.txt")).unwrap();
        let blob = crate::git::blob_id_of(&bytes);
        // src/deep replaced by a link to where a same-looking file lives.
        std::fs::remove_dir(root.join("src/deep")).unwrap();
        symlink(dir.path(), root.join("src/deep")).unwrap();
        assert_eq!(
            wt.compare("src/deep/outside.txt", blob, bytes.len() as u64)
                .unwrap(),
            WorkTreeFile::Deleted
        );
        let app = std::fs::read(root.join("src/app.py")).unwrap();
        let id = crate::git::blob_id_of(&app);
        assert_eq!(
            wt.compare("src/app.py", id, app.len() as u64).unwrap(),
            WorkTreeFile::Same
        );
    }
}
