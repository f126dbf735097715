//! `sno mcp config`: the block each MCP client needs to start `sno serve`
//! (shapes in `sno_protocol::client_config`), printed, or merged into the
//! client's config file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sno_protocol::client_config::{Client, Launch};
use sno_protocol::{ErrorCode, ErrorContract};

/// The model setting a server started by a client needs, and a note on
/// stderr when search would have no model: a client started from a desktop
/// does not see the shell's `SNO_MODEL`, and an offline machine cannot
/// download the default, so its agent would silently get lexical search.
fn model_env(config: &sno_engine::config::IndexConfig) -> Vec<(String, String)> {
    if let Some(m) = std::env::var("SNO_MODEL").ok().filter(|m| !m.is_empty()) {
        let (m, here) = sno_engine::model_offline(&m);
        if !here {
            crate::out::errln!(
                "sno: note: SNO_MODEL names {m}, which is not a model directory here"
            );
        }
        return vec![("SNO_MODEL".into(), m)];
    }
    if config.model.is_some() {
        // .sno/config.toml names it; the server reads that itself.
        return Vec::new();
    }
    let default = sno_engine::DEFAULT_MODEL;
    if !sno_engine::model_offline(default).1 {
        crate::out::errln!(
            "sno: note: no embedding model is set and {default} is not in the Hugging Face cache: the server downloads it on first use if it can reach huggingface.co, and answers with lexical search otherwise (each answer's header says which). Set SNO_MODEL to a model2vec directory before running this command to put it in the block, or `[search] model` in .sno/config.toml."
        );
    }
    Vec::new()
}

/// `sno mcp config`.
pub fn run(
    client: Client,
    path: &Path,
    write: bool,
    file: Option<PathBuf>,
) -> Result<ExitCode, ErrorContract> {
    let io = |e: std::io::Error| ErrorCode::Internal.with(format!("i/o: {e}"));
    let paths = sno_engine::RepoPaths::discover(path).map_err(|e| *e.0)?;
    let exe = std::env::current_exe().map_err(io)?;
    let config = sno_engine::config::IndexConfig::load(&paths.config()).unwrap_or_default();
    let launch = Launch {
        command: exe.display().to_string(),
        args: vec!["serve".into(), paths.root.display().to_string()],
        env: model_env(&config),
    };
    let name = "sno";
    if !write {
        crate::out::outln!("{}", client.snippet(name, &launch).trim_end());
        return Ok(ExitCode::SUCCESS);
    }
    let home = dirs::home_dir().unwrap_or_else(|| PathBuf::from("."));
    let target = file.unwrap_or_else(|| client.config_file(&paths.root, &home));
    let existing = match std::fs::read_to_string(&target) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let merged = client.merge(&existing, name, &launch)?;
    let written = sno_engine::client_config::replace(&target, &merged).map_err(io)?;
    crate::out::outln!("sno: added the `sno` server to {}", written.display());
    Ok(ExitCode::SUCCESS)
}
