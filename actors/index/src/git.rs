//! Reading repository state from git objects through gix: never from the work
//! tree, so the index reflects exactly what a commit holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;
use gix::ObjectId;
use sno_journal::model::{BlobId, CommitId};

/// Errors reading git state.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not inside a git repository")]
    NotARepository(PathBuf),
    #[error("{0} is a bare repository; sno needs a work tree to keep its .sno/ folder in")]
    Bare(PathBuf),
    #[error("the repository has no commits yet")]
    Empty,
    #[error("cannot resolve `{0}` to a commit")]
    UnknownRevision(String),
    /// An object the repository should hold is not in its object store:
    /// a partial clone's history (`--filter=blob:limit=...`), or a damaged
    /// repository.
    #[error("git error: An object with id {0} could not be found")]
    MissingObject(String),
    #[error("git error: {0}")]
    Git(String),
}

fn git_err(e: impl std::fmt::Display) -> GitError {
    GitError::Git(e.to_string())
}

/// What sno needs to know of one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: CommitId,
    pub tree: ObjectId,
    pub parents: Vec<CommitId>,
    pub summary: String,
    pub time: i64,
    /// Set when the message says the commit reverts another (and which one,
    /// when it names it): the source of lessons.
    pub reverts: Option<Option<CommitId>>,
}

/// A blob at a path of a commit's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: BlobId,
}

/// A path whose content differs between two trees; `blob` is `None` when the
/// path is gone from the newer tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathChange {
    pub path: String,
    pub blob: Option<BlobId>,
}

/// An opened repository. A clone shares the object database's handles,
/// for a thread of its own (a repository is `Send`, not `Sync`).
#[derive(Clone)]
pub struct GitRepo {
    repo: gix::Repository,
    root: PathBuf,
}

impl std::fmt::Debug for GitRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitRepo").field("root", &self.root).finish()
    }
}

pub(crate) fn to_commit_id(id: &gix::oid) -> CommitId {
    let mut a = [0u8; 20];
    a.copy_from_slice(id.as_bytes());
    CommitId(a)
}

fn to_blob_id(id: &gix::oid) -> BlobId {
    let mut a = [0u8; 20];
    a.copy_from_slice(id.as_bytes());
    BlobId(a)
}

impl GitRepo {
    /// Opens the repository containing `path`, or the one `GIT_DIR` names
    /// (with `GIT_WORK_TREE` or `core.worktree`), as git itself would: so
    /// sno run from a hook, or on a repository whose git directory lives
    /// apart from its work tree, reads the same repository git does.
    pub fn open(path: &Path) -> Result<GitRepo, GitError> {
        let mut repo = gix::discover_with_environment_overrides(path)
            .map_err(|_| GitError::NotARepository(path.to_path_buf()))?;
        let root = repo
            .workdir()
            .ok_or_else(|| GitError::Bare(path.to_path_buf()))?
            .to_path_buf();
        // Unchanged subtrees recur across the commits of a history walk.
        repo.object_cache_size_if_unset(64 * 1024 * 1024);
        Ok(GitRepo { repo, root })
    }

    /// This handle with no cache of objects: for reading every blob of a
    /// state once, which a cache would only hold on to.
    pub fn without_object_cache(mut self) -> GitRepo {
        self.repo.object_cache_size(0);
        self
    }

    /// The work tree's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where git keeps its files (`.git`).
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// Where the refs shared by all worktrees live: the git directory,
    /// except in a linked worktree.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    /// The branch HEAD points to, `None` when detached.
    pub fn branch(&self) -> Result<Option<String>, GitError> {
        Ok(self
            .repo
            .head_name()
            .map_err(git_err)?
            .map(|n| n.shorten().to_string()))
    }

    /// Whether the repository is a shallow clone.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow().unwrap_or(false)
    }

    /// Resolves a commit-ish as `git rev-parse` does: `HEAD~2`, a branch, a
    /// tag, a (full or abbreviated) id, `main^`, ...
    pub fn resolve(&self, spec: &str) -> Result<CommitId, GitError> {
        if spec == "HEAD" {
            return self.head();
        }
        let id = self
            .repo
            .rev_parse_single(spec)
            .map_err(|_| GitError::UnknownRevision(spec.into()))?;
        let commit = id
            .object()
            .ok()
            .and_then(|o| o.peel_to_kind(gix::object::Kind::Commit).ok())
            .ok_or_else(|| GitError::UnknownRevision(spec.into()))?;
        Ok(to_commit_id(&commit.id))
    }

    /// The commit HEAD points to.
    pub fn head(&self) -> Result<CommitId, GitError> {
        let head = self.repo.head().map_err(git_err)?;
        if head.is_unborn() {
            return Err(GitError::Empty);
        }
        let id = self.repo.head_id().map_err(git_err)?;
        Ok(to_commit_id(&id))
    }

    /// Whether HEAD's commit has a top-level entry `name` (a file, a
    /// directory or a link); `false` in a repository with no commit yet.
    pub fn head_tree_has(&self, name: &str) -> Result<bool, GitError> {
        let Ok(commit) = self.repo.head_commit() else {
            return Ok(false);
        };
        let tree = commit.tree().map_err(git_err)?;
        Ok(tree.find_entry(name).is_some())
    }

    /// `tip` and up to `history` of its first-parent ancestors, oldest first.
    /// A shallow clone simply has fewer.
    pub fn first_parent_chain(
        &self,
        tip: CommitId,
        history: Option<usize>,
    ) -> Result<Vec<CommitId>, GitError> {
        let limit = history.map(|h| h.saturating_add(1)).unwrap_or(usize::MAX);
        Ok(self.first_parent_chain_since(tip, limit, |_| false)?.0)
    }

    /// The commits of `tip`'s first-parent line newer than the newest one
    /// `known` holds, oldest first, with that commit; looking at `limit`
    /// commits at most. Without a known commit within the limit: the
    /// commits looked at, and `None`.
    pub fn first_parent_chain_since(
        &self,
        tip: CommitId,
        limit: usize,
        mut known: impl FnMut(&CommitId) -> bool,
    ) -> Result<(Vec<CommitId>, Option<CommitId>), GitError> {
        let walk = self
            .repo
            .rev_walk([ObjectId::from_bytes_or_panic(&tip.0)])
            .first_parent_only()
            .all()
            .map_err(git_err)?;
        let mut out = Vec::new();
        let mut found = None;
        for info in walk.take(limit) {
            match info {
                Ok(info) => {
                    let id = to_commit_id(&info.id);
                    if known(&id) {
                        found = Some(id);
                        break;
                    }
                    out.push(id);
                }
                // A commit object that cannot be read ends the history
                // there: what is newer is still indexed.
                Err(e) if !out.is_empty() => {
                    tracing::warn!(error = %e, "history ends at an unreadable commit");
                    break;
                }
                Err(e) => return Err(git_err(e)),
            }
        }
        out.reverse();
        Ok((out, found))
    }

    /// Reads a commit.
    pub fn commit(&self, id: CommitId) -> Result<CommitInfo, GitError> {
        let c = self
            .repo
            .find_commit(ObjectId::from_bytes_or_panic(&id.0))
            .map_err(git_err)?;
        let tree = c.tree_id().map_err(git_err)?.detach();
        let parents = c.parent_ids().map(|p| to_commit_id(&p)).collect();
        // A token pasted into a commit message would otherwise live in the
        // append-only journal for good, and be served by `journal log`.
        let summary = c
            .message()
            .map(|m| sno_redact::redact(&m.summary().to_str_lossy()).0)
            .unwrap_or_default();
        let reverts = c
            .message_raw()
            .ok()
            .and_then(|m| sno_journal::memory::revert_of(&m.to_str_lossy()));
        let time = c.time().map(|t| t.seconds).unwrap_or(0);
        Ok(CommitInfo {
            id,
            tree,
            parents,
            summary,
            time,
            reverts,
        })
    }

    /// Every blob of a tree, by path (submodules and symlinks are not files).
    pub fn list_tree(&self, tree: ObjectId) -> Result<Vec<TreeFile>, GitError> {
        let mut out = Vec::new();
        self.diff_trees_into(None, Some(tree), "", &mut |path, blob| {
            out.push(TreeFile {
                path,
                blob: blob.expect("listing only adds"),
            });
        })?;
        Ok(out)
    }

    /// The paths whose blob differs between two trees.
    pub fn diff_trees(&self, old: ObjectId, new: ObjectId) -> Result<Vec<PathChange>, GitError> {
        let mut out = Vec::new();
        self.diff_trees_into(Some(old), Some(new), "", &mut |path, blob| {
            out.push(PathChange { path, blob })
        })?;
        Ok(out)
    }

    /// Entries of one tree: name -> (is_tree, id). Symlinks and submodules are left out.
    fn tree_entries(
        &self,
        id: Option<ObjectId>,
    ) -> Result<BTreeMap<String, (bool, ObjectId)>, GitError> {
        let mut map = BTreeMap::new();
        let Some(id) = id else { return Ok(map) };
        let tree = self.repo.find_tree(id).map_err(git_err)?;
        for entry in tree.iter() {
            let entry = entry.map_err(git_err)?;
            let mode = entry.mode();
            let is_tree = mode.is_tree();
            if !is_tree && !mode.is_blob() {
                continue;
            }
            map.insert(
                entry.filename().to_str_lossy().into_owned(),
                (is_tree, entry.oid().to_owned()),
            );
        }
        Ok(map)
    }

    /// Recursive tree comparison that skips identical subtrees by id, so a
    /// commit touching three files costs three paths, not the whole tree.
    fn diff_trees_into(
        &self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        prefix: &str,
        emit: &mut dyn FnMut(String, Option<BlobId>),
    ) -> Result<(), GitError> {
        if old == new {
            return Ok(());
        }
        let old_entries = self.tree_entries(old)?;
        let new_entries = self.tree_entries(new)?;
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            }
        };
        for (name, &(old_is_tree, old_id)) in &old_entries {
            match new_entries.get(name) {
                Some(&(new_is_tree, new_id)) if new_is_tree == old_is_tree => {
                    if old_id == new_id {
                        continue;
                    }
                    if old_is_tree {
                        self.diff_trees_into(Some(old_id), Some(new_id), &join(name), emit)?;
                    } else {
                        emit(join(name), Some(to_blob_id(&new_id)));
                    }
                }
                _ => {
                    // Gone, or changed between file and directory: remove the old side.
                    if old_is_tree {
                        self.diff_trees_into(Some(old_id), None, &join(name), emit)?;
                    } else {
                        emit(join(name), None);
                    }
                }
            }
        }
        for (name, &(new_is_tree, new_id)) in &new_entries {
            let same_kind_before =
                matches!(old_entries.get(name), Some(&(t, _)) if t == new_is_tree);
            if same_kind_before {
                continue;
            }
            if new_is_tree {
                self.diff_trees_into(None, Some(new_id), &join(name), emit)?;
            } else {
                emit(join(name), Some(to_blob_id(&new_id)));
            }
        }
        Ok(())
    }

    /// The size of a blob, without inflating it.
    pub fn blob_size(&self, blob: BlobId) -> Result<u64, GitError> {
        let id = ObjectId::from_bytes_or_panic(&blob.0);
        match self.repo.try_find_header(id).map_err(git_err)? {
            Some(h) => Ok(h.size()),
            None => Err(GitError::MissingObject(id.to_string())),
        }
    }

    /// A blob's text as sno reads it ([`GitRepo::blob`]) and its size in
    /// the repository: the two differ for text decoded from Windows-1252,
    /// and the work tree holds the bytes git has.
    pub fn blob_and_size(&self, blob: BlobId) -> Result<(Vec<u8>, u64), GitError> {
        let id = ObjectId::from_bytes_or_panic(&blob.0);
        let mut b = self
            .repo
            .try_find_object(id)
            .map_err(git_err)?
            .ok_or_else(|| GitError::MissingObject(id.to_string()))?
            .try_into_blob()
            .map_err(git_err)?;
        let raw = b.take_data();
        let size = raw.len() as u64;
        Ok((crate::admission::text_of(raw), size))
    }

    /// A blob's content as sno reads it ([`crate::admission::text_of`]:
    /// text in another encoding than UTF-8 comes as UTF-8).
    pub fn blob(&self, blob: BlobId) -> Result<Vec<u8>, GitError> {
        self.blob_and_size(blob).map(|(text, _)| text)
    }
}

/// The id git gives a blob of these bytes (`git hash-object`).
pub fn blob_id_of(bytes: &[u8]) -> BlobId {
    match gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, bytes) {
        Ok(id) => to_blob_id(&id),
        // Hashing in memory does not fail; an impossible id never matches.
        Err(_) => BlobId([0; 20]),
    }
}

#[cfg(test)]
mod blob_id_tests {
    use super::*;

    #[test]
    fn blob_ids_are_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            blob_id_of(b"hello\n").to_hex(),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }
}
