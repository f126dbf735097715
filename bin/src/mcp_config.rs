//! `sno mcp config`: the block each MCP client needs to start `sno serve`,
//! printed, or merged into the client's config file without touching
//! anything else in it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Map, Value};
use sno_protocol::{ErrorCode, ErrorContract};

/// The clients sno knows how to configure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Codex,
    Zed,
    Cline,
}

/// The server entry: how a client starts sno for one repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    /// Environment the server needs (the embedding model), which a client
    /// started from a desktop does not inherit from the user's shell.
    pub env: Vec<(String, String)>,
}

impl Launch {
    fn env_json(&self) -> Value {
        Value::Object(
            self.env
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }
}

impl Client {
    /// Where the client reads its MCP servers from. Project-scoped clients
    /// (Claude Code, Cursor) use a file in the repository.
    pub fn config_file(self, repo: &Path, home: &Path) -> PathBuf {
        let config = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else {
            std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"))
        };
        match self {
            Client::ClaudeDesktop => config.join("Claude/claude_desktop_config.json"),
            Client::ClaudeCode => repo.join(".mcp.json"),
            Client::Cursor => repo.join(".cursor/mcp.json"),
            Client::Codex => home.join(".codex/config.toml"),
            Client::Zed => home.join(".config/zed/settings.json"),
            Client::Cline => config.join(
                "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            ),
        }
    }

    fn json_entry(self, l: &Launch) -> (&'static str, Value) {
        let env = l.env_json();
        match self {
            Client::ClaudeCode => (
                "mcpServers",
                json!({ "type": "stdio", "command": l.command, "args": l.args, "env": env }),
            ),
            Client::Zed => (
                "context_servers",
                json!({ "command": l.command, "args": l.args, "env": env }),
            ),
            Client::Cline => (
                "mcpServers",
                json!({ "command": l.command, "args": l.args, "env": env, "disabled": false, "autoApprove": [] }),
            ),
            _ if l.env.is_empty() => (
                "mcpServers",
                json!({ "command": l.command, "args": l.args }),
            ),
            _ => (
                "mcpServers",
                json!({ "command": l.command, "args": l.args, "env": env }),
            ),
        }
    }

    /// The block to paste into the client's config file.
    pub fn snippet(self, name: &str, l: &Launch) -> String {
        match self {
            Client::Codex => {
                let mut doc = toml_edit::DocumentMut::new();
                insert_toml(&mut doc, name, l);
                doc.to_string()
            }
            _ => {
                let (key, entry) = self.json_entry(l);
                serde_json::to_string_pretty(&json!({ key: { name: entry } })).unwrap_or_default()
            }
        }
    }

    /// `existing` (the file's text, empty when missing) with sno's entry
    /// added or replaced and everything else kept.
    pub fn merge(self, existing: &str, name: &str, l: &Launch) -> Result<String, ErrorContract> {
        match self {
            Client::Codex => {
                let mut doc: toml_edit::DocumentMut = existing
                    .parse()
                    .map_err(|e| unreadable(format!("it is not valid TOML: {e}")))?;
                insert_toml(&mut doc, name, l);
                Ok(doc.to_string())
            }
            _ => {
                let mut root: Value = if existing.trim().is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(existing).map_err(|e| {
                        unreadable(format!(
                            "it is not plain JSON ({e}); comments or trailing commas are not merged automatically"
                        ))
                    })?
                };
                let obj = root
                    .as_object_mut()
                    .ok_or_else(|| unreadable("its top level is not a JSON object".into()))?;
                let (key, entry) = self.json_entry(l);
                let servers = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
                let servers = servers
                    .as_object_mut()
                    .ok_or_else(|| unreadable(format!("`{key}` is not an object")))?;
                servers.insert(name.to_string(), entry);
                Ok(serde_json::to_string_pretty(&root).unwrap_or_default() + "\n")
            }
        }
    }
}

fn insert_toml(doc: &mut toml_edit::DocumentMut, name: &str, l: &Launch) {
    use toml_edit::{value, Array, Item, Table};
    if !doc.contains_key("mcp_servers") {
        let mut t = Table::new();
        t.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(t));
    }
    let mut server = Table::new();
    server.insert("command", value(l.command.clone()));
    let mut args = Array::new();
    for a in &l.args {
        args.push(a.as_str());
    }
    server.insert("args", value(args));
    if !l.env.is_empty() {
        let mut env = toml_edit::InlineTable::new();
        for (k, v) in &l.env {
            env.insert(k, v.as_str().into());
        }
        server.insert("env", value(env));
    }
    if let Some(t) = doc["mcp_servers"].as_table_mut() {
        t.insert(name, Item::Table(server));
    }
}

fn unreadable(why: String) -> ErrorContract {
    ErrorCode::ConfigUnmergeable.with(format!("the client's config file cannot be merged: {why}"))
}

/// The model setting a server started by a client needs, and a note on
/// stderr when search would have no model: a client started from a desktop
/// does not see the shell's `SNO_MODEL`, and an offline machine cannot
/// download the default, so its agent would silently get lexical search.
fn model_env(config: &sno_engine::config::IndexConfig) -> Vec<(String, String)> {
    if let Some(m) = std::env::var("SNO_MODEL").ok().filter(|m| !m.is_empty()) {
        let m = sno_query::semantic::source_name(&m);
        if !sno_query::semantic::available_offline(&m) {
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
    if !sno_query::semantic::available_offline(default) {
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
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    // Write beside and rename: a crash never leaves a half-written config.
    let tmp = target.with_extension("sno-tmp");
    std::fs::write(&tmp, merged).map_err(io)?;
    std::fs::rename(&tmp, &target).map_err(io)?;
    crate::out::outln!("sno: added the `sno` server to {}", target.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            command: "/usr/bin/sno".into(),
            args: vec!["serve".into(), "/r".into()],
            env: Vec::new(),
        }
    }

    #[test]
    fn json_merge_keeps_other_servers_and_settings() {
        let existing = r#"{"theme":"dark","mcpServers":{"other":{"command":"x"}}}"#;
        let out = Client::Cursor.merge(existing, "sno", &launch()).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["mcpServers"]["sno"]["args"][0], "serve");
        // Merging twice replaces, never duplicates.
        let again = Client::Cursor.merge(&out, "sno", &launch()).unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn zed_uses_context_servers_and_json_with_comments_is_refused() {
        let out = Client::Zed.merge("", "sno", &launch()).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["context_servers"]["sno"]["command"], "/usr/bin/sno");
        let err = Client::Zed
            .merge("// my settings\n{}", "sno", &launch())
            .unwrap_err();
        assert_eq!(err.code, "SNO-CONFIG-UNMERGEABLE");
    }

    #[test]
    fn codex_toml_merge_keeps_comments_and_tables() {
        let existing = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let out = Client::Codex.merge(existing, "sno", &launch()).unwrap();
        assert!(out.starts_with("# mine\nmodel = \"o3\""), "{out}");
        let v: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(v["mcp_servers"]["other"]["command"].as_str(), Some("x"));
        assert_eq!(
            v["mcp_servers"]["sno"]["command"].as_str(),
            Some("/usr/bin/sno")
        );
        assert_eq!(v["mcp_servers"]["sno"]["args"][1].as_str(), Some("/r"));
    }
}
