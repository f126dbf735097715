//! The embedding model, loaded once per engine and shared by the embedder
//! actor (which embeds new symbols after an index run) and the read model
//! (which embeds questions).

use std::sync::{Arc, OnceLock};

use sno_query::semantic::Embedder;

/// The model an engine uses, loaded on first use.
pub struct ModelCell {
    spec: String,
    model: OnceLock<Result<Arc<Embedder>, String>>,
}

impl ModelCell {
    /// The model `spec` names (a directory or a Hugging Face id), not yet
    /// loaded.
    pub fn new(spec: String) -> Arc<ModelCell> {
        Arc::new(ModelCell {
            spec,
            model: OnceLock::new(),
        })
    }

    /// Leaves the model unloaded for good, `reason` saying why: a process
    /// that answers one lexical-only question does not read a model (nor
    /// fetch the default one from the network) to leave it unused.
    /// Nothing changes once the model was asked for.
    pub fn decline(&self, reason: &str) {
        let _ = self.model.set(Err(reason.to_string()));
    }

    /// What the model is, as configured.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The model, loaded the first time it is asked for (from disk or the
    /// Hugging Face cache; the network only when allowed); or why there is
    /// none. No model is not a failure: sno answers with lexical and
    /// structural signals.
    pub fn get(&self) -> Result<Arc<Embedder>, String> {
        self.model
            .get_or_init(|| {
                let t = std::time::Instant::now();
                let m = Embedder::load(&self.spec)
                    .map(Arc::new)
                    .map_err(|e| e.to_string());
                match &m {
                    Ok(_) => tracing::debug!(ms = t.elapsed().as_millis() as u64, "model loaded"),
                    Err(e) => tracing::warn!(error = %e, "semantic search is off"),
                }
                m
            })
            .clone()
    }

    /// Why there is no model, once it was tried.
    pub fn off_reason(&self) -> Option<String> {
        self.model.get().and_then(|m| m.as_ref().err().cloned())
    }
}
