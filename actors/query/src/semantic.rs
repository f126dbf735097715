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
            source: source_name(spec),
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

/// Whether the model `spec` names can be loaded without the network: a
/// model directory, or a Hugging Face id already in the cache.
pub fn available_offline(spec: &str) -> bool {
    let p = Path::new(spec);
    if p.is_dir() {
        return p.join("model.safetensors").exists() || p.join("0_StaticEmbedding").is_dir();
    }
    hub_cache_dir(spec).is_some()
}

/// The name vectors made by the model `spec` names are stored under: one
/// directory named two ways (`a/../b`, a symlink) is one model.
pub fn source_name(spec: &str) -> String {
    let path = Path::new(spec);
    if path.is_dir() {
        if let Ok(p) = path.canonicalize() {
            return p.display().to_string();
        }
    }
    spec.to_string()
}

/// Up to this many vectors an exact scan serves: 256-float vectors scan at
/// about 1 ms per 10,000 on one core (2.0 ms for 20k, 4.9 ms for 50k,
/// 9.7 ms for 100k, measured on this project's 2-core machine), while an
/// HNSW graph costs about 90 µs per vector to build (3.6 s for sqlalchemy's
/// 40k) before its first answer, and every CLI call is a first answer. The
/// scan is also exact. Past 100k a query's scan costs more than the graph's
/// build is worth to a long-lived daemon.
pub const FLAT_MAX: usize = 100_000;

/// Nearest-neighbour search over unit-length embeddings, numbered like the
/// documents they embed: an exact scan for small sets, HNSW for large ones.
pub struct SemanticIndex {
    kind: IndexKind,
    len: usize,
}

enum IndexKind {
    /// (document number, vector) of every non-zero vector.
    Flat(Vec<(usize, Vec<f32>)>),
    Hnsw(Box<Hnsw<'static, f32, DistDot>>),
}

fn is_zero(v: &[f32]) -> bool {
    v.iter().all(|x| *x == 0.0)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl SemanticIndex {
    /// Indexes `vectors`; zero vectors (nothing the model knew) are left out,
    /// since cosine distance is undefined for them.
    pub fn build(vectors: &[Vec<f32>]) -> SemanticIndex {
        Self::build_with(vectors, FLAT_MAX)
    }

    /// [`SemanticIndex::build`] with the size above which HNSW is used.
    pub fn build_with(vectors: &[Vec<f32>], flat_max: usize) -> SemanticIndex {
        let data: Vec<(&Vec<f32>, usize)> = vectors
            .iter()
            .enumerate()
            .filter(|(_, v)| !is_zero(v))
            .map(|(i, v)| (v, i))
            .collect();
        let len = data.len();
        if len <= flat_max {
            let flat = data.into_iter().map(|(v, i)| (i, v.clone())).collect();
            return SemanticIndex {
                kind: IndexKind::Flat(flat),
                len,
            };
        }
        // Unit vectors (model2vec normalizes): 1 - dot is the cosine distance,
        // without the norms DistCosine recomputes on every comparison.
        let hnsw = Hnsw::new(16, vectors.len().max(1), 16, 64, DistDot {});
        hnsw.parallel_insert(&data);
        SemanticIndex {
            kind: IndexKind::Hnsw(Box::new(hnsw)),
            len,
        }
    }

    /// Whether the index is an HNSW graph (rather than an exact scan).
    pub fn is_graph(&self) -> bool {
        matches!(self.kind, IndexKind::Hnsw(_))
    }

    /// The `limit` nearest documents to `query` with cosine similarity.
    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(usize, f32)> {
        if self.len == 0 || is_zero(query) {
            return Vec::new();
        }
        match &self.kind {
            IndexKind::Flat(all) => {
                let mut scored: Vec<(usize, f32)> =
                    all.iter().map(|(i, v)| (*i, dot(query, v))).collect();
                let k = limit.min(scored.len());
                if k == 0 {
                    return Vec::new();
                }
                scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
                scored.truncate(k);
                scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                scored
            }
            IndexKind::Hnsw(hnsw) => hnsw
                .search(query, limit, limit + 16)
                .into_iter()
                .map(|n| (n.d_id, 1.0 - n.distance))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        // A small xorshift: deterministic vectors without a rand dependency.
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = dot(&v, &v).sqrt();
        v.into_iter().map(|f| f / n).collect()
    }

    #[test]
    fn exact_scan_and_hnsw_agree_on_the_nearest_and_zero_vectors_are_skipped() {
        let mut vs: Vec<Vec<f32>> = (0..600).map(|i| unit(i + 1, 32)).collect();
        vs[7] = vec![0.0; 32];
        let flat = SemanticIndex::build_with(&vs, usize::MAX);
        let graph = SemanticIndex::build_with(&vs, 0);
        assert!(!flat.is_graph() && graph.is_graph());
        for probe in [3usize, 100, 599] {
            let f = flat.search(&vs[probe], 5);
            assert_eq!(f[0].0, probe, "a vector is its own nearest neighbour");
            assert!((f[0].1 - 1.0).abs() < 1e-4);
            assert!(f.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
            assert_eq!(graph.search(&vs[probe], 5)[0].0, probe);
        }
        assert!(flat
            .search(&unit(9999, 32), 600)
            .iter()
            .all(|(i, _)| *i != 7));
    }
}
