//! The error contract: every failure an agent or user sees has a stable code,
//! a message, a hint phrased as an instruction, and how hard it is to fix.

use serde::{Deserialize, Serialize};

/// How hard an error is to fix for whoever reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fixability {
    Trivial,
    Easy,
    Medium,
    Hard,
}

/// A user- or agent-visible error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContract {
    /// Stable, greppable: `SNO-NOT-A-REPO`, `SNO-LOCKED`, ...
    pub code: String,
    pub message: String,
    /// What to do next, phrased for a model (and readable by a person).
    pub llm_hint: String,
    pub fixability: Fixability,
    /// Near misses, when the input looked like something that exists.
    #[serde(default)]
    pub did_you_mean: Vec<String>,
    /// When enabled (`[serve] retrieval_context = true`), the top hits for
    /// the failed request, so an agent can go on without another call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval_context: Option<Box<[crate::query::SymbolInfo]>>,
}

impl ErrorContract {
    /// Builds an error with no suggestions.
    pub fn new(
        code: &str,
        message: impl Into<String>,
        llm_hint: impl Into<String>,
        fixability: Fixability,
    ) -> Self {
        ErrorContract {
            code: code.to_string(),
            message: message.into(),
            llm_hint: llm_hint.into(),
            fixability,
            did_you_mean: Vec::new(),
            retrieval_context: None,
        }
    }
}

impl std::fmt::Display for ErrorContract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (hint: {})",
            self.code, self.message, self.llm_hint
        )
    }
}

impl std::error::Error for ErrorContract {}
