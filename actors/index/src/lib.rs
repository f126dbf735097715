//! How sno indexes a repository, apart from the actors that drive it: read
//! git objects ([`git`]), decide which files enter the index
//! ([`admission`]), confine every path a user names ([`confine`]), turn
//! extracted facts into stored records ([`record`]), resolve names to
//! symbols and files ([`resolve`]) and move the indexed state forward by one
//! commit ([`advance`]). Pure and synchronous, so it is tested without a
//! runtime; the engine's indexer actor calls it.

pub mod admission;
pub mod advance;
pub mod confine;
pub mod git;
pub mod params;
pub mod record;
pub mod resolve;
