//! Finding a repository's root and its `.sno/` folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use sno_actors::git::GitRepo;

/// A repository and where sno keeps its files for it.
#[derive(Clone, Debug)]
pub struct RepoPaths {
    pub root: PathBuf,
    pub git_dir: PathBuf,
    pub sno_dir: PathBuf,
}

impl RepoPaths {
    /// Finds the repository containing `path`.
    pub fn discover(path: &Path) -> anyhow::Result<RepoPaths> {
        if !path.exists() {
            return Err(crate::failure::PathMissing(path.display().to_string()).into());
        }
        let repo = GitRepo::open(path)?;
        let root = repo.root().to_path_buf();
        let root = root.canonicalize().unwrap_or(root);
        Ok(RepoPaths {
            sno_dir: root.join(".sno"),
            git_dir: repo.git_dir().to_path_buf(),
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

    /// Makes git ignore `.sno/` through `.git/info/exclude`, leaving the
    /// user's `.gitignore` alone.
    pub fn exclude_sno_dir(&self) -> anyhow::Result<()> {
        let info = self.git_dir.join("info");
        std::fs::create_dir_all(&info).with_context(|| format!("creating {}", info.display()))?;
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
