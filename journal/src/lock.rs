//! The writer lock: one process at a time writes a repository's journal.
//!
//! redb itself refuses a second open of the same file, but says nothing of who
//! holds it. The lock file records the holder's pid so the refusal can name it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::JournalError;

/// How many times `acquire` retries a held lock, 10 ms apart.
const PROBE_TRIES: u32 = 5;

/// Creates `dir` (and missing parents) readable by its owner alone: the
/// index holds the repository's code and its history, which other users
/// of the machine may not be allowed to read.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Holds `.sno/lock` exclusively while alive.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
    path: PathBuf,
}

impl WriterLock {
    /// Takes the lock in `dir` (created if missing), or says who holds it.
    pub fn acquire(dir: &Path) -> Result<WriterLock, JournalError> {
        create_private_dir(dir)?;
        let path = dir.join("lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        // A few tries: `is_held` probes take the lock for an instant, and
        // a writer starting at that instant must not be refused for it.
        let mut tries = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if tries < PROBE_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(JournalError::Locked {
                        pid: holder_pid(&path),
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        write!(file, "{}", std::process::id())?;
        file.flush()?;
        Ok(WriterLock { _file: file, path })
    }

    /// Whether a writer (an `sno init`) holds the lock in `dir` now. Probes
    /// without taking it over: the recorded pid is left alone.
    pub fn is_held(dir: &Path) -> bool {
        let Ok(file) = OpenOptions::new().read(true).open(dir.join("lock")) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(_) => true,
        }
    }

    /// Where the lock file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The pid recorded in a lock file, or `unknown`.
pub fn holder_pid(lock_path: &Path) -> String {
    let mut s = String::new();
    match File::open(lock_path).and_then(|mut f| f.read_to_string(&mut s)) {
        Ok(_) if !s.trim().is_empty() => s.trim().to_string(),
        _ => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = WriterLock::acquire(dir.path()).unwrap();
        let err = WriterLock::acquire(dir.path()).unwrap_err();
        match err {
            JournalError::Locked { pid } => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("expected Locked, got {other:?}"),
        }
        assert!(WriterLock::is_held(dir.path()));
        drop(first);
        assert!(!WriterLock::is_held(dir.path()));
        assert_eq!(
            holder_pid(&dir.path().join("lock")),
            std::process::id().to_string(),
            "probing leaves the recorded pid alone"
        );
        WriterLock::acquire(dir.path()).expect("free again after drop");
    }

    #[test]
    fn a_probe_holding_the_lock_for_an_instant_does_not_refuse_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lock"), "").unwrap();
        let probe = File::open(dir.path().join("lock")).unwrap();
        probe.try_lock().unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(15));
            probe.unlock().unwrap();
        });
        WriterLock::acquire(dir.path()).expect("taken once the probe let go");
        release.join().unwrap();
    }
}
