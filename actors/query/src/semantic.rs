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
    /// Loads a model: a directory (`config.json`, `tokenizer.json`,
    /// `model.safetensors`), or a Hugging Face model id (`owner/name`),
    /// fetched once into the Hugging Face cache and read from there after.
    /// With `HF_HUB_OFFLINE=1` (or `SNO_OFFLINE=1`) ids are only read from the
    /// cache. The caller falls back to lexical + structural retrieval on error.
    pub fn load(spec: &str) -> Result<Embedder, ModelError> {
        let fail = |reason: String| ModelError {
            source_name: spec.to_string(),
            reason,
        };
        let path = Path::new(spec);
        if !path.is_dir() {
            let looks_like_id = spec.split('/').count() == 2
                && !spec.starts_with(['/', '.', '~'])
                && spec.split('/').all(|p| !p.is_empty());
            if !looks_like_id {
                return Err(fail("no such model directory".into()));
            }
            if let Some(dir) = hub_cache_dir(spec) {
                return Self::load_dir(&dir, spec);
            }
            if offline() {
                return Err(fail("offline and not in the Hugging Face cache".into()));
            }
        }
        let model = StaticModel::from_pretrained(spec, None, None, None)
            .map_err(|e| fail(format!("{e} ({})", e.root_cause())))?;
        Ok(Embedder {
            model,
            source: spec.to_string(),
        })
    }

    fn load_dir(dir: &Path, source: &str) -> Result<Embedder, ModelError> {
        let model =
            StaticModel::from_pretrained(dir, None, None, None).map_err(|e| ModelError {
                source_name: source.to_string(),
                reason: format!("{e:#}"),
            })?;
        Ok(Embedder {
            model,
            source: source.to_string(),
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

fn offline() -> bool {
    ["HF_HUB_OFFLINE", "SNO_OFFLINE"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|x| x == "1" || x == "true"))
}

/// The newest snapshot of a model in the Hugging Face cache, if any.
fn hub_cache_dir(id: &str) -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HF_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/huggingface"))
        })?;
    let snapshots = home
        .join("hub")
        .join(format!("models--{}", id.replace('/', "--")))
        .join("snapshots");
    std::fs::read_dir(snapshots)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("model.safetensors").exists())
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
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
