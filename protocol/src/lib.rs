//! The shapes sno shows to people and agents: the error contract and reports.
//! Types and (de)serialization only; no other crate invents a JSON shape.

pub mod context;
pub mod error;
pub mod query;
pub mod status;

pub use error::{ErrorContract, Fixability};
