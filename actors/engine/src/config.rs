//! Indexing configuration: defaults that work with no file, overridable in
//! `.sno/config.toml`.

use std::path::Path;

use serde::Deserialize;

pub use sno_index::admission::DEFAULT_SECRET_PATTERNS;

/// Default largest file (bytes) that is parsed.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;

/// Default bytes of source whose trees are kept while indexing history, so
/// the next version of those files is parsed from them. A tree costs about
/// 20 times its source: this bounds the trees near 160 MB.
pub const DEFAULT_REPARSE_BUDGET_BYTES: usize = 8 * 1024 * 1024;

/// Default number of first-parent commits journaled before HEAD.
pub const DEFAULT_HISTORY: usize = 200;

/// How a repository is indexed.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexConfig {
    pub max_file_size: u64,
    pub secret_patterns: Vec<String>,
    /// Mask secret values found inside files (keys, tokens, passwords) in
    /// everything stored, served and embedded (`[index] mask_secrets`,
    /// default true).
    pub mask_secrets: bool,
    /// First-parent commits before HEAD to journal; `None` means all.
    pub history: Option<usize>,
    /// Parser workers; defaults to the number of cores.
    pub parser_workers: usize,
    /// Source bytes of files kept parsed while indexing history, for
    /// reparsing their next version (`[index] reparse_cache_mb`; 0 = off).
    pub reparse_budget_bytes: usize,
    /// The embedding model from `[search] model`, if set.
    pub model: Option<String>,
    /// The `[serve]` table.
    pub serve: ServeConfig,
    /// The `[watch]` table.
    pub watch: WatchConfig,
    /// The `[agent]` table: the LLM provider, if any.
    pub agent: sno_agent::AgentConfig,
}

/// The `[watch]` table of `.sno/config.toml`: how the index follows the
/// repository (`sno watch`, and the daemon behind `sno serve`).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WatchConfig {
    /// Whether the daemon indexes new commits as HEAD moves (default true).
    pub enabled: bool,
    /// Quiet time after git's last ref update before HEAD is read (ms).
    pub debounce_ms: u64,
    /// HEAD is also read this often, whatever file events say (s).
    pub poll_secs: f64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            enabled: true,
            debounce_ms: 100,
            poll_secs: 5.0,
        }
    }
}

impl WatchConfig {
    /// The debounce wait (at most a minute).
    pub fn debounce(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.debounce_ms.min(60_000))
    }

    /// The poll period, between 100 ms and an hour (the default when the
    /// value is not a number).
    pub fn poll(&self) -> std::time::Duration {
        let secs = if self.poll_secs.is_finite() {
            self.poll_secs.clamp(0.1, 3600.0)
        } else {
            WatchConfig::default().poll_secs
        };
        std::time::Duration::from_secs_f64(secs)
    }
}

/// The `[serve]` table of `.sno/config.toml`: how `sno serve` answers.
#[derive(Deserialize, Default, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// Attach the nearest symbols to failed lookups (`retrieval_context`).
    #[serde(default)]
    pub retrieval_context: bool,
    /// Share of the context window past which `signal_low_context`
    /// recommends a checkpoint (default 0.8).
    pub low_context_threshold: Option<f64>,
    /// Seconds the server stays up with no client (default 300).
    pub idle_exit_secs: Option<u64>,
    /// What the read model may hold beyond the indexed head's state and
    /// search indexes, in MiB (default 512): past states (`at`), their
    /// indexes and call graphs, least recently used first out, and file
    /// texts (a quarter of it). The head's own are always held.
    pub memory_mb: Option<u64>,
}

impl ServeConfig {
    /// The default of `memory_mb`.
    pub const DEFAULT_MEMORY_MB: u64 = 512;

    /// [`ServeConfig::memory_mb`] in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.memory_mb.unwrap_or(Self::DEFAULT_MEMORY_MB) as usize).saturating_mul(1 << 20)
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            secret_patterns: DEFAULT_SECRET_PATTERNS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            mask_secrets: true,
            history: Some(DEFAULT_HISTORY),
            parser_workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            reparse_budget_bytes: DEFAULT_REPARSE_BUDGET_BYTES,
            model: None,
            serve: ServeConfig::default(),
            watch: WatchConfig::default(),
            agent: Default::default(),
        }
    }
}

/// The `[index]` table of `.sno/config.toml`.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
struct IndexSection {
    max_file_size: Option<u64>,
    /// Replaces the default secret patterns.
    secret_patterns: Option<Vec<String>>,
    /// Adds to the secret patterns.
    extra_secret_patterns: Option<Vec<String>>,
    /// Mask secret values inside files (default true).
    mask_secrets: Option<bool>,
    history: Option<usize>,
    parser_workers: Option<usize>,
    /// MiB of source kept parsed for reparsing while indexing history.
    reparse_cache_mb: Option<usize>,
}

/// The `[search]` table of `.sno/config.toml`.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
struct SearchSection {
    /// A model2vec model directory.
    model: Option<String>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    index: IndexSection,
    #[serde(default)]
    search: SearchSection,
    #[serde(default)]
    serve: ServeConfig,
    #[serde(default)]
    watch: WatchConfig,
    #[serde(default)]
    agent: sno_agent::AgentConfig,
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl IndexConfig {
    /// Defaults, overridden by `config_path` when it exists.
    pub fn load(config_path: &Path) -> Result<IndexConfig, ConfigError> {
        let mut cfg = IndexConfig::default();
        let text = match std::fs::read_to_string(config_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(cfg),
            Err(e) => {
                return Err(ConfigError {
                    path: config_path.display().to_string(),
                    message: e.to_string(),
                })
            }
        };
        // A byte-order mark (Windows editors write one) is not TOML.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let file: ConfigFile = toml::from_str(text).map_err(|e| ConfigError {
            path: config_path.display().to_string(),
            message: e.to_string(),
        })?;
        cfg.model = file.search.model;
        cfg.serve = file.serve;
        cfg.watch = file.watch;
        cfg.agent = file.agent;
        let s = file.index;
        if let Some(v) = s.max_file_size {
            cfg.max_file_size = v;
        }
        if let Some(v) = s.secret_patterns {
            cfg.secret_patterns = v;
        }
        if let Some(v) = s.extra_secret_patterns {
            cfg.secret_patterns.extend(v);
        }
        if let Some(v) = s.history {
            cfg.history = Some(v);
        }
        if let Some(v) = s.mask_secrets {
            cfg.mask_secrets = v;
        }
        if let Some(v) = s.parser_workers {
            cfg.parser_workers = v.max(1);
        }
        if let Some(v) = s.reparse_cache_mb {
            cfg.reparse_budget_bytes = v.saturating_mul(1024 * 1024);
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_overrides_and_extends_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(
            &p,
            "[index]\nmax_file_size = 10\nextra_secret_patterns = [\"*.secret\"]\nreparse_cache_mb = 3\n[watch]\npoll_secs = 0.5\n",
        )
        .unwrap();
        let c = IndexConfig::load(&p).unwrap();
        assert_eq!(c.max_file_size, 10);
        assert_eq!(c.reparse_budget_bytes, 3 * 1024 * 1024);
        assert_ne!(IndexConfig::default().reparse_budget_bytes, 0);
        assert!(c.secret_patterns.contains(&"*.secret".to_string()));
        assert!(c.secret_patterns.contains(&".env".to_string()));
        assert_eq!(c.watch.poll(), std::time::Duration::from_millis(500));
        assert!(c.watch.enabled, "unset keys keep their defaults");
        assert_eq!(c.watch.debounce_ms, WatchConfig::default().debounce_ms);
        // Out of range: clamped, never a panic.
        let wild = WatchConfig {
            enabled: true,
            debounce_ms: u64::MAX,
            poll_secs: f64::INFINITY,
        };
        assert_eq!(wild.debounce(), std::time::Duration::from_secs(60));
        assert_eq!(wild.poll(), WatchConfig::default().poll());
        let tiny = WatchConfig {
            poll_secs: -3.0,
            ..wild
        };
        assert_eq!(tiny.poll(), std::time::Duration::from_millis(100));
    }

    #[test]
    fn unknown_keys_are_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "[index]\nmax_size = 10\n").unwrap();
        let e = IndexConfig::load(&p).unwrap_err();
        assert!(e.message.contains("max_size"), "{e}");
    }
}
