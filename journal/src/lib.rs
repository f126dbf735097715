//! sno's journal: the append-only event log in redb and the views derived from it.
//!
//! Synchronous and free of actors, parsers and JSON: it stores the facts it is
//! given and answers questions about them. The events are the ground truth;
//! the `files` view is derived and can always be rebuilt by [`replay`].

pub mod audit;
pub mod delta;
pub mod error;
pub mod event;
pub mod int8;
pub mod lock;
pub mod memory;
pub mod model;
pub mod packed;
pub(crate) mod record_parts;
pub mod replay;
pub mod rollback;
pub mod session;
pub mod store;
pub(crate) mod stored;
pub mod teardown;
/// Small journals and records for tests, here and in the crates above
/// (their dev-dependencies turn on `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod verify;
pub(crate) mod view_rows;

pub use error::JournalError;
pub use store::{Flush, IndexedHead, Journal};
