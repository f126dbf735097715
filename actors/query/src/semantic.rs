//! Semantic retrieval: model2vec static embeddings of each symbol's words and
//! an HNSW index (hnsw_rs) over them, cosine distance.

use std::path::Path;

use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::prelude::DistDot;
use model2vec_rs::model::StaticModel;

/// A loaded embedding model.
pub struct Embedder {
    model: StaticModel,
    /// Where it came from, as the user named it.
    pub source: String,
}

/// Why no model could be had.
#[derive(Debug, thiserror::Error)]
#[error("embedding model `{source_name}`: {reason}")]
pub struct ModelError {
    pub source_name: String,
    pub reason: String,
}

impl Embedder {
    /// Loads a model directory (`config.json`, `tokenizer.json`,
    /// `model.safetensors`). Hub ids are not fetched by this build: on an
    /// offline machine that would fail anyway, and the caller falls back to
    /// lexical + structural retrieval.
    pub fn load(spec: &str) -> Result<Embedder, ModelError> {
        let fail = |reason: String| ModelError {
            source_name: spec.to_string(),
            reason,
        };
        if !Path::new(spec).is_dir() {
            return Err(fail("not a local model directory (downloading from the Hugging Face hub is not built in yet)".into()));
        }
        let model = StaticModel::from_pretrained(spec, None, None, None)
            .map_err(|e| fail(e.to_string()))?;
        Ok(Embedder {
            model,
            source: spec.to_string(),
        })
    }

    /// Unit-length embeddings of `texts` (all-zero for text the model knows
    /// no token of).
    pub fn embed(&self, texts: &[String]) -> Vec<Vec<f32>> {
        self.model.encode(texts)
    }

    /// Dimension of the vectors.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }
}

/// An HNSW index over unit-length embeddings, numbered like the documents
/// they embed.
pub struct SemanticIndex {
    hnsw: Hnsw<'static, f32, DistDot>,
    len: usize,
}

fn is_zero(v: &[f32]) -> bool {
    v.iter().all(|x| *x == 0.0)
}

impl SemanticIndex {
    /// Indexes `vectors`; zero vectors (nothing the model knew) are left out,
    /// since cosine distance is undefined for them.
    pub fn build(vectors: &[Vec<f32>]) -> SemanticIndex {
        // Unit vectors (model2vec normalizes): 1 - dot is the cosine distance,
        // without the norms DistCosine recomputes on every comparison.
        let hnsw = Hnsw::new(16, vectors.len().max(1), 16, 64, DistDot {});
        let data: Vec<(&Vec<f32>, usize)> = vectors
            .iter()
            .enumerate()
            .filter(|(_, v)| !is_zero(v))
            .map(|(i, v)| (v, i))
            .collect();
        hnsw.parallel_insert(&data);
        SemanticIndex {
            hnsw,
            len: data.len(),
        }
    }

    /// The `limit` nearest documents to `query` with cosine similarity.
    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(usize, f32)> {
        if self.len == 0 || is_zero(query) {
            return Vec::new();
        }
        self.hnsw
            .search(query, limit, limit + 16)
            .into_iter()
            .map(|n| (n.d_id, 1.0 - n.distance))
            .collect()
    }
}
