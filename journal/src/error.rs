//! Errors of the journal.

use crate::delta::ApplyError;
use crate::event::DecodeError;

/// Everything that can go wrong opening, reading or writing the journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Another process holds the writer lock (or has the database open).
    #[error("the sno database is locked by pid {pid}")]
    Locked { pid: String },
    /// The file exists but is not a readable redb database.
    #[error("the sno database at {path} is corrupt or not a sno database: {detail}")]
    Corrupt { path: String, detail: String },
    /// No database exists where one was expected.
    #[error("no sno database at {0}")]
    Missing(String),
    /// A stored record does not decode.
    #[error("record {seq} does not decode: {source}")]
    Decode { seq: u64, source: DecodeError },
    /// A delta does not fit the stored views.
    #[error("delta does not apply: {0}")]
    Apply(#[from] ApplyError),
    /// A memory event names a lesson, checkpoint or decision that does not exist.
    #[error("no lesson, checkpoint or decision `{id}` in the journal")]
    UnknownMemory { id: String, known: Vec<String> },
    /// A memory event with a field over its size limit: nothing was written.
    #[error("`{field}` is too large ({size}; memory events take at most {limit}, in bytes, or entries for `files`)")]
    TooLarge {
        field: &'static str,
        size: usize,
        limit: usize,
    },
    /// A storage-level failure.
    #[error("storage error: {0}")]
    Storage(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

macro_rules! storage_from {
    ($($t:ty),*) => {$(
        impl From<$t> for JournalError {
            fn from(e: $t) -> Self { JournalError::Storage(e.to_string()) }
        }
    )*};
}
storage_from!(
    redb::StorageError,
    redb::TableError,
    redb::TransactionError,
    redb::CommitError,
    redb::CursorError
);
