//! The blocks MCP clients read to start `sno serve`: each client's config
//! file, the entry sno adds to it, and a merge that keeps everything else in
//! the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{ErrorCode, ErrorContract};

/// The clients sno knows how to configure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// One server in a JSON client's config file (the fields each client reads).
#[derive(Serialize)]
struct Entry<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: &'a str,
    args: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<BTreeMap<&'a str, &'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disabled: Option<bool>,
    #[serde(rename = "autoApprove", skip_serializing_if = "Option::is_none")]
    auto_approve: Option<[&'a str; 0]>,
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

    /// The names `sno mcp config` takes.
    pub const NAMES: [&'static str; 6] = [
        "claude-desktop",
        "claude-code",
        "cursor",
        "codex",
        "zed",
        "cline",
    ];

    /// The client named `name` (one of [`Client::NAMES`]).
    pub fn named(name: &str) -> Option<Client> {
        let all = [
            Client::ClaudeDesktop,
            Client::ClaudeCode,
            Client::Cursor,
            Client::Codex,
            Client::Zed,
            Client::Cline,
        ];
        Self::NAMES.iter().position(|n| *n == name).map(|i| all[i])
    }

    fn json_entry(self, l: &Launch) -> (&'static str, Value) {
        let env: BTreeMap<&str, &str> = l
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // Cline and Zed want `env` even when empty; the others only when set.
        let always_env = matches!(self, Client::ClaudeCode | Client::Zed | Client::Cline);
        let entry = Entry {
            kind: (self == Client::ClaudeCode).then_some("stdio"),
            command: &l.command,
            args: &l.args,
            env: (always_env || !env.is_empty()).then_some(env),
            disabled: (self == Client::Cline).then_some(false),
            auto_approve: (self == Client::Cline).then_some([]),
        };
        let key = if self == Client::Zed {
            "context_servers"
        } else {
            "mcpServers"
        };
        (key, serde_json::to_value(entry).unwrap_or_default())
    }

    /// The block to paste into the client's config file.
    pub fn snippet(self, name: &str, l: &Launch) -> String {
        match self {
            Client::Codex => {
                let mut doc = toml_edit::DocumentMut::new();
                // A new document's `mcp_servers` is the table made here.
                let _ = insert_toml(&mut doc, name, l);
                doc.to_string()
            }
            _ => {
                let (key, entry) = self.json_entry(l);
                let block = BTreeMap::from([(key, BTreeMap::from([(name, entry)]))]);
                serde_json::to_string_pretty(&block).unwrap_or_default()
            }
        }
    }

    /// `existing` (the file's text, empty when missing) with sno's entry
    /// added or replaced and everything else kept.
    /// A byte-order mark (Windows editors write one) is kept in front.
    pub fn merge(self, existing: &str, name: &str, l: &Launch) -> Result<String, ErrorContract> {
        const BOM: char = '\u{feff}';
        match existing.strip_prefix(BOM) {
            Some(rest) => Ok(format!("{BOM}{}", self.merge_text(rest, name, l)?)),
            None => self.merge_text(existing, name, l),
        }
    }

    fn merge_text(self, existing: &str, name: &str, l: &Launch) -> Result<String, ErrorContract> {
        match self {
            Client::Codex => {
                let mut doc: toml_edit::DocumentMut = existing
                    .parse()
                    .map_err(|e| unreadable(format!("it is not valid TOML: {e}")))?;
                insert_toml(&mut doc, name, l)?;
                Ok(doc.to_string())
            }
            _ => {
                let mut root: Value = if existing.trim().is_empty() {
                    Value::Object(Map::new())
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

/// Adds sno's entry under `mcp_servers`, a table or an inline table
/// (`mcp_servers = { other = { ... } }`: the entry goes in inline too).
fn insert_toml(
    doc: &mut toml_edit::DocumentMut,
    name: &str,
    l: &Launch,
) -> Result<(), ErrorContract> {
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
    match &mut doc["mcp_servers"] {
        Item::Table(t) => {
            t.insert(name, Item::Table(server));
            Ok(())
        }
        Item::Value(toml_edit::Value::InlineTable(t)) => {
            t.insert(
                name,
                toml_edit::Value::InlineTable(server.into_inline_table()),
            );
            Ok(())
        }
        _ => Err(unreadable("`mcp_servers` is not a table".into())),
    }
}

fn unreadable(why: String) -> ErrorContract {
    ErrorCode::ConfigUnmergeable.with(format!("the client's config file cannot be merged: {why}"))
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
    fn codex_toml_merge_fills_an_inline_table_and_refuses_a_value() {
        for existing in [
            "mcp_servers = { other = { command = \"x\" } }\n",
            "mcp_servers = {}\n",
        ] {
            let merged = Client::Codex.merge(existing, "sno", &launch()).unwrap();
            let v: toml_edit::DocumentMut = merged.parse().unwrap();
            assert_eq!(
                v["mcp_servers"]["sno"]["command"].as_str(),
                Some("/usr/bin/sno"),
                "{merged}"
            );
            if existing.contains("other") {
                assert_eq!(v["mcp_servers"]["other"]["command"].as_str(), Some("x"));
            }
        }
        let err = Client::Codex
            .merge("mcp_servers = 3\n", "sno", &launch())
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
