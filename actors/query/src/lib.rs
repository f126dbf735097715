//! Code-intelligence queries over an indexed state: exact where the graph is
//! exact, labelled heuristic where it is not. Pure functions of a
//! [`State`](sno_journal::delta::State) (the views, or a replay of the
//! journal for answers "as of" an older commit).

pub mod abbreviations;
mod best_field;
pub mod block;
pub mod changes;
pub mod chunks;
pub mod cl100k;
pub mod commit_message;
pub mod compounds;
pub mod context;
pub mod doc_map;
pub mod file_index;
pub mod graph;
pub mod head_build;
pub mod head_cache;
pub mod initialisms;
pub mod lexical;
pub mod lookup;
pub mod map;
pub mod mapped;
pub mod outline;
pub mod pack;
pub mod question_intent;
pub mod references;
pub mod search;
pub mod semantic;
pub mod served;
pub mod similar_changes;
pub mod stemming;
pub mod synonyms;
pub mod test_files;
pub mod text;
pub mod verbatim;
pub mod words;

pub use lookup::{find_symbols, resolve_one, LookupError};
