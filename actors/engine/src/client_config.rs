//! Writing an MCP client's configuration file in place of the user's. The
//! file often holds other servers' tokens (`env: {"GITHUB_TOKEN": ...}`)
//! and is kept private (0600), or is a link a dotfile manager owns: the
//! new content keeps the file's mode and goes where the link points, and
//! the old content is kept beside it.

use std::path::{Path, PathBuf};

/// Replaces the file at `target` (followed through links) with `content`:
/// written beside it and renamed, so a crash never leaves half a file,
/// with the old file's permissions, and its old content kept in
/// `<name>.sno-bak`. Returns the file written.
pub fn replace(target: &Path, content: &str) -> std::io::Result<PathBuf> {
    let real = match std::fs::canonicalize(target) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => target.to_path_buf(),
        Err(e) => return Err(e),
    };
    let old = std::fs::metadata(&real).ok();
    if let Some(dir) = real.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let beside = |suffix: &str| {
        let mut name = real.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        real.with_file_name(name)
    };
    if old.is_some() {
        let backup = beside(".sno-bak");
        std::fs::copy(&real, &backup)?;
    }
    let tmp = beside(".sno-tmp");
    std::fs::write(&tmp, content)?;
    if let Some(meta) = &old {
        std::fs::set_permissions(&tmp, meta.permissions())?;
    }
    std::fs::rename(&tmp, &real)?;
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_linked_config_stays_private_and_linked() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/claude.json");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "{\"old\": true}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("claude.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let written = replace(&link, "{\"new\": true}").unwrap();
        assert_eq!(written, std::fs::canonicalize(&real).unwrap());
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "{\"new\": true}");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let backup = real.with_file_name("claude.json.sno-bak");
        assert_eq!(std::fs::read_to_string(backup).unwrap(), "{\"old\": true}");
        // A file that did not exist is made, with no backup.
        let fresh = dir.path().join("new/dir/config.toml");
        replace(&fresh, "x = 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "x = 1\n");
        assert!(!fresh.with_file_name("config.toml.sno-bak").exists());
    }
}
