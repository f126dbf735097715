//! Finding a repository's root and its `.sno/` folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use sno_index::admission::SecretFilter;
use sno_index::confine::WorkTree;
use sno_index::git::GitRepo;
use sno_journal::model::CommitId;
use sno_protocol::ErrorCode;

use crate::error::Result;

/// A repository and where sno keeps its files for it.
#[derive(Clone, Debug)]
pub struct RepoPaths {
    pub root: PathBuf,
    pub git_dir: PathBuf,
    /// Where git keeps what every worktree shares (`info/exclude` among
    /// it): the git directory, except in a linked worktree.
    pub common_dir: PathBuf,
    pub sno_dir: PathBuf,
}

impl RepoPaths {
    /// Finds the repository containing `path`.
    pub fn discover(path: &Path) -> Result<RepoPaths> {
        if !path.exists() {
            return Err(ErrorCode::NoPath
                .with(format!("{} does not exist", path.display()))
                .into());
        }
        let repo = GitRepo::open(path)?;
        let root = repo.root().to_path_buf();
        let root = root.canonicalize().unwrap_or(root);
        crate::state_dir::refuse_shipped(&repo, &root.join(".sno"))?;
        Ok(RepoPaths {
            sno_dir: root.join(".sno"),
            git_dir: repo.git_dir().to_path_buf(),
            common_dir: repo.common_dir().to_path_buf(),
            root,
        })
    }

    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.sno_dir.join("sno.redb")
    }

    /// The config file (optional).
    pub fn config(&self) -> PathBuf {
        self.sno_dir.join("config.toml")
    }

    /// Derived files that may be deleted at any time (`.sno/cache/`).
    pub fn cache_dir(&self) -> PathBuf {
        self.sno_dir.join("cache")
    }

    /// The work tree and the rule for reading it (secret patterns from
    /// `.sno/config.toml`, else the defaults).
    pub fn work_tree(&self) -> Result<WorkTree> {
        let config = crate::config::IndexConfig::load(&self.config())?;
        self.work_tree_with(&config)
    }

    /// [`RepoPaths::work_tree`] with the configuration at hand.
    pub fn work_tree_with(&self, config: &crate::config::IndexConfig) -> Result<WorkTree> {
        // A pattern that does not compile must not mean "nothing is secret".
        let secrets =
            SecretFilter::new(&config.secret_patterns).map_err(|e| crate::config::ConfigError {
                path: self.config().display().to_string(),
                message: e,
            })?;
        Ok(WorkTree::new(
            &self.root,
            &[&self.git_dir, &self.common_dir],
            secrets,
        ))
    }

    /// Whether served text has its secret values masked: the config's
    /// `[index] mask_secrets`, and masked when the config cannot be read.
    pub fn mask_secrets(&self) -> bool {
        crate::config::IndexConfig::load(&self.config())
            .map(|c| c.mask_secrets)
            .unwrap_or(true)
    }

    /// Makes git ignore `.sno/` through `info/exclude`, leaving the user's
    /// `.gitignore` alone. Git reads `info/exclude` from the common
    /// directory only, so in a linked worktree (`git worktree add`) it goes
    /// there; its pattern `/.sno/` then covers the root of every worktree.
    pub fn exclude_sno_dir(&self) -> Result<()> {
        let info = self.common_dir.join("info");
        std::fs::create_dir_all(&info)?;
        let exclude = info.join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if current
            .lines()
            .any(|l| matches!(l.trim(), ".sno/" | ".sno" | "/.sno/" | "/.sno"))
        {
            return Ok(());
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&exclude)?;
        if !current.is_empty() && !current.ends_with('\n') {
            writeln!(f)?;
        }
        writeln!(f, "# sno's local index\n/.sno/")?;
        Ok(())
    }
}

/// What a front end that finds the database held can learn without opening
/// an engine.
impl RepoPaths {
    /// Whether an index run (in any process) holds the writer lock.
    pub fn writer_lock_held(&self) -> bool {
        sno_journal::lock::WriterLock::is_held(&self.sno_dir)
    }

    /// Whether the database can be opened now (the probe is closed again).
    pub fn database_free(&self) -> bool {
        sno_journal::Journal::open_existing(&self.db()).is_ok()
    }

    /// The indexed head and, when the head is a rollback's, the commit it
    /// settled at; `(None, None)` before a first index.
    pub fn indexed_head(&self) -> Result<(Option<CommitId>, Option<CommitId>)> {
        if !self.db().exists() {
            return Ok((None, None));
        }
        let journal = sno_journal::Journal::open_existing(&self.db())?;
        let head = journal.head()?.map(|h| h.commit);
        let settled = journal.rolled_back_at()?.flatten();
        Ok((head, settled))
    }
}
