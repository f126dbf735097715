//! The agent: optional LLM work through a provider. For now it drafts
//! lesson analyses: for a revert, what went wrong and the rule agents should
//! follow. A draft is only a proposal; a human approves or rejects the
//! lesson (`sno lessons review`). With no provider configured, sno does
//! everything else the same.
//!
//! Providers speak the OpenAI chat-completions protocol (OpenAI, a local
//! Ollama or llama.cpp server, vLLM, LM Studio, ...) or Anthropic's
//! messages protocol (`protocol = "anthropic"`). Building the prompt and
//! reading the reply are pure functions ([`lesson_prompt`],
//! [`parse_completion`], [`parse_draft`]); [`Provider::complete`] is the one
//! network call.

use std::time::Duration;

use serde::Deserialize;

/// The `[agent]` table of `.sno/config.toml`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The API's base URL, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1` (Ollama). Unset: no agent.
    pub endpoint: Option<String>,
    /// The model name the provider knows.
    pub model: Option<String>,
    /// The environment variable holding the API key (none for local servers).
    pub api_key_env: Option<String>,
    /// Seconds to wait for an answer (default 120).
    pub timeout_secs: Option<u64>,
    /// `openai` (chat completions, the default) or `anthropic` (messages).
    pub protocol: Option<String>,
    /// Draft new lessons as soon as `sno watch` or the daemon indexes the
    /// revert they come from (default false: `sno lessons draft` does it).
    #[serde(default)]
    pub draft_on_index: bool,
}

/// The wire protocol of a provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `POST {endpoint}/chat/completions`, a bearer key.
    OpenAi,
    /// `POST {endpoint}/messages`, an `x-api-key`.
    Anthropic,
}

/// Why the agent could not do its work. Nothing is written when it fails.
#[derive(Clone, Debug, thiserror::Error)]
pub enum AgentError {
    #[error("no LLM provider is configured")]
    NotConfigured,
    #[error("unknown [agent] protocol `{0}` (openai or anthropic)")]
    UnknownProtocol(String),
    #[error("the API key variable {0} is not set")]
    MissingKey(String),
    #[error("refusing to send an API key over plain http to {0}")]
    InsecureKey(String),
    #[error("could not reach the LLM provider at {endpoint}: {detail}")]
    Unreachable { endpoint: String, detail: String },
    #[error("the LLM provider answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("the LLM provider's answer is not usable: {0}")]
    BadReply(String),
}

/// A configured provider.
#[derive(Clone)]
pub struct Provider {
    protocol: Protocol,
    endpoint: String,
    model: String,
    key: Option<String>,
    timeout: Duration,
}

/// One completion and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Provider")
            .field("protocol", &self.protocol)
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// Whether a URL is anything but https, to anything but this machine.
fn http_off_machine(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return false;
    }
    let Some((_, rest)) = url.split_once("://") else {
        return true;
    };
    let authority = rest.split('/').next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or("")
    };
    !(host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()))
}

impl Provider {
    /// The provider of `config`, reading the API key from the environment.
    pub fn from_config(config: &AgentConfig) -> Result<Provider, AgentError> {
        Provider::from_config_with(config, |var| std::env::var(var).ok())
    }

    /// The provider of `config`, with the API key's variable looked up by
    /// `lookup` (a command the daemon runs for a CLI brings the CLI's).
    pub fn from_config_with(
        config: &AgentConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Provider, AgentError> {
        let (Some(endpoint), Some(model)) = (&config.endpoint, &config.model) else {
            return Err(AgentError::NotConfigured);
        };
        let protocol = match config.protocol.as_deref() {
            None | Some("openai") => Protocol::OpenAi,
            Some("anthropic") => Protocol::Anthropic,
            Some(other) => return Err(AgentError::UnknownProtocol(other.to_string())),
        };
        let key = match &config.api_key_env {
            Some(var) => Some(
                lookup(var)
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| AgentError::MissingKey(var.clone()))?,
            ),
            None => None,
        };
        if key.is_some() && http_off_machine(endpoint) {
            return Err(AgentError::InsecureKey(endpoint.clone()));
        }
        Ok(Provider {
            protocol,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            model: model.clone(),
            key,
            timeout: Duration::from_secs(config.timeout_secs.unwrap_or(120).max(1)),
        })
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Where requests go.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// One chat completion: a system message and a user message.
    pub fn complete(&self, system: &str, user: &str) -> Result<Completion, AgentError> {
        let (url, body) = match self.protocol {
            Protocol::OpenAi => (
                format!("{}/chat/completions", self.endpoint),
                ChatRequest {
                    model: &self.model,
                    max_tokens: None,
                    temperature: 0,
                    system: None,
                    messages: vec![
                        Message {
                            role: "system",
                            content: system,
                        },
                        Message {
                            role: "user",
                            content: user,
                        },
                    ],
                },
            ),
            Protocol::Anthropic => (
                format!("{}/messages", self.endpoint),
                ChatRequest {
                    model: &self.model,
                    max_tokens: Some(1024),
                    temperature: 0,
                    system: Some(system),
                    messages: vec![Message {
                        role: "user",
                        content: user,
                    }],
                },
            ),
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            // A redirect would carry the key elsewhere, or turn the POST
            // into a GET: report it instead.
            .max_redirects(0)
            .build()
            .into();
        let mut request = agent.post(&url).header("content-type", "application/json");
        match (&self.key, self.protocol) {
            (Some(key), Protocol::OpenAi) => {
                request = request.header("authorization", &format!("Bearer {key}"));
            }
            (key, Protocol::Anthropic) => {
                request = request.header("anthropic-version", "2023-06-01");
                if let Some(key) = key {
                    request = request.header("x-api-key", key);
                }
            }
            (None, Protocol::OpenAi) => {}
        }
        let mut response = request
            .send_json(&body)
            .map_err(|e| AgentError::Unreachable {
                endpoint: self.endpoint.clone(),
                detail: e.to_string(),
            })?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let body = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .lossy_utf8(true)
                .read_to_string()
                .unwrap_or_default();
            // The key masked first: cut, a part of it could show.
            let body = match &self.key {
                Some(key) => body.replace(key.as_str(), "<key>"),
                None => body,
            };
            let mut body: String = body
                .chars()
                .filter(|c| !c.is_control() || *c == ' ')
                .take(300)
                .collect();
            if let Some(to) = response.headers().get("location") {
                body = format!("redirected to {} {body}", to.to_str().unwrap_or("?"));
            }
            return Err(AgentError::Http { status, body });
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) | ureq::Error::Io(_) => AgentError::Unreachable {
                    endpoint: self.endpoint.clone(),
                    detail: e.to_string(),
                },
                e => AgentError::BadReply(format!("reading the answer: {e}")),
            })?;
        parse_completion(self.protocol, &text)
    }
}

/// Reads a provider's answer.
pub fn parse_completion(protocol: Protocol, body: &str) -> Result<Completion, AgentError> {
    let v: serde_json::Value =
        serde_json::from_str(body).map_err(|e| AgentError::BadReply(format!("not JSON ({e})")))?;
    let (text, prompt, completion) = match protocol {
        Protocol::OpenAi => (
            v["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| AgentError::BadReply("no choices[0].message.content".into()))?,
            v["usage"]["prompt_tokens"].as_u64(),
            v["usage"]["completion_tokens"].as_u64(),
        ),
        Protocol::Anthropic => {
            let blocks = v["content"]
                .as_array()
                .ok_or_else(|| AgentError::BadReply("no content blocks".into()))?;
            let text: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            if text.is_empty() {
                return Err(AgentError::BadReply("no text block in content".into()));
            }
            (
                text,
                v["usage"]["input_tokens"].as_u64(),
                v["usage"]["output_tokens"].as_u64(),
            )
        }
    };
    Ok(Completion {
        text,
        prompt_tokens: prompt,
        completion_tokens: completion,
    })
}

/// What the agent is told to do with a revert.
pub const LESSON_SYSTEM: &str = "You review reverted changes in a software repository so that \
coding agents do not repeat them. Answer with one JSON object and nothing else: \
{\"analysis\": \"...\", \"rule\": \"...\"}. `analysis`: two to four sentences on what the \
reverted change did and why it was likely reverted, from the evidence given only. `rule`: one \
imperative sentence an agent should follow when editing these files.";

/// Everything known about one revert, for the prompt.
#[derive(Clone, Debug, Default)]
pub struct RevertFacts {
    /// The revert commit's summary line.
    pub summary: String,
    /// The reverted commit's full message, when known.
    pub reverted_message: Option<String>,
    /// Files the revert changed.
    pub files: Vec<String>,
    /// Symbols the reverted commit added, removed or changed (qualified
    /// names), as the journal recorded them.
    pub symbols: Vec<String>,
}

/// The user message for a revert (bounded: long lists are cut), its
/// secret values masked: it goes to a provider.
pub fn lesson_prompt(f: &RevertFacts) -> String {
    sno_redact::redact(&unmasked_prompt(f)).0
}

fn unmasked_prompt(f: &RevertFacts) -> String {
    let mut s = format!("Revert commit: {}\n", f.summary);
    if let Some(m) = &f.reverted_message {
        let m: String = m.chars().take(2000).collect();
        s.push_str(&format!("Message of the reverted commit:\n{}\n", m.trim()));
    }
    let list = |items: &[String]| {
        let shown: Vec<&str> = items.iter().take(40).map(String::as_str).collect();
        let more = items.len().saturating_sub(shown.len());
        let mut l = shown.join(", ");
        if more > 0 {
            l.push_str(&format!(" and {more} more"));
        }
        l
    };
    s.push_str(&format!("Files the revert changed: {}\n", list(&f.files)));
    if !f.symbols.is_empty() {
        s.push_str(&format!(
            "Symbols the reverted change touched: {}\n",
            list(&f.symbols)
        ));
    }
    s
}

/// The longest analysis and rule kept (characters): they are journaled and
/// travel in every context package that touches the files.
pub const MAX_ANALYSIS: usize = 4000;
pub const MAX_RULE: usize = 300;

/// A drafted analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draft {
    pub analysis: String,
    /// One line.
    pub rule: String,
}

/// Reads the model's answer: a JSON object with `analysis` and `rule`,
/// possibly inside a fenced block or after some words.
pub fn parse_draft(text: &str) -> Result<Draft, AgentError> {
    let start = text.find('{');
    let end = text.rfind('}');
    let (Some(start), Some(end)) = (start, end) else {
        return Err(AgentError::BadReply("no JSON object in the answer".into()));
    };
    if end < start {
        return Err(AgentError::BadReply("no JSON object in the answer".into()));
    }
    let v: serde_json::Value = serde_json::from_str(&text[start..=end])
        .map_err(|e| AgentError::BadReply(format!("the JSON object does not parse ({e})")))?;
    let field = |k: &str| {
        v[k].as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| AgentError::BadReply(format!("`{k}` is missing or empty")))
    };
    // Secrets the model repeats are masked before anything is cut or
    // shown: a cut first could keep the start of a key its shape no
    // longer matches, and the draft is printed as well as journaled.
    let masked = |k: &str| field(k).map(|t| sno_redact::redact(&t).0);
    let analysis: String = masked("analysis")?.chars().take(MAX_ANALYSIS).collect();
    let rule = masked("rule")?;
    let rule: String = rule
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_RULE)
        .collect();
    Ok(Draft { analysis, rule })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_in_a_reverted_message_does_not_reach_the_provider() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let p = lesson_prompt(&RevertFacts {
            summary: "Revert \"add client\"".into(),
            reverted_message: Some(format!("add client\n\nwith token {token}")),
            files: vec!["client.py".into()],
            symbols: vec!["Client.connect".into()],
        });
        assert!(!p.contains("ghp_abcdef"), "{p}");
        assert!(
            p.contains("Client.connect") && p.contains("with token"),
            "{p}"
        );
    }

    #[test]
    fn a_secret_in_a_draft_is_masked_before_it_is_cut() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let analysis = format!("{} {token}", "a".repeat(MAX_ANALYSIS - 15));
        let reply = serde_json::json!({
            "analysis": analysis,
            "rule": "Never commit password=Xk8mP2vL$9qR4aZ7b and more",
        })
        .to_string();
        let d = parse_draft(&reply).unwrap();
        assert!(
            !d.analysis.contains("ghp_abcdef"),
            "{}",
            &d.analysis[MAX_ANALYSIS - 30..]
        );
        assert!(!d.rule.contains("Xk8mP2vL"), "{}", d.rule);
        assert!(d.rule.contains("«redacted:assigned-secret»"), "{}", d.rule);
    }

    #[test]
    fn drafts_are_read_from_fenced_or_chatty_answers_and_bad_ones_refused() {
        let d = parse_draft(
            "Sure!\n```json\n{\"analysis\": \"It cached config.\", \"rule\": \"Do not cache\\n config.\"}\n```",
        )
        .unwrap();
        assert_eq!(d.analysis, "It cached config.");
        assert_eq!(d.rule, "Do not cache config.", "one line");
        let long = format!(
            "{{\"analysis\": \"{}\", \"rule\": \"{}\"}}",
            "a".repeat(10_000),
            "r".repeat(1_000)
        );
        let d = parse_draft(&long).unwrap();
        assert_eq!((d.analysis.len(), d.rule.len()), (MAX_ANALYSIS, MAX_RULE));
        for bad in [
            "no object here",
            "{\"analysis\": \"x\"}",
            "{\"analysis\": \"x\", \"rule\": \"  \"}",
            "{not json}",
            "} {",
        ] {
            assert!(
                matches!(parse_draft(bad), Err(AgentError::BadReply(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn completions_carry_text_and_usage_in_both_protocols() {
        let c = parse_completion(
            Protocol::OpenAi,
            r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(c.text, "hi");
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(12), Some(3)));
        let c = parse_completion(
            Protocol::Anthropic,
            r#"{"content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"hi"},{"type":"text","text":" there"}],"usage":{"input_tokens":7,"output_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(c.text, "hi there", "text blocks only");
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(7), Some(2)));
        for (p, bad) in [
            (Protocol::OpenAi, r#"{"error": "x"}"#),
            (Protocol::Anthropic, r#"{"content": []}"#),
            (Protocol::Anthropic, r#"{"type": "error"}"#),
            (Protocol::OpenAi, "<html>"),
        ] {
            assert!(
                matches!(parse_completion(p, bad), Err(AgentError::BadReply(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_prompt_names_the_revert_and_bounds_its_lists() {
        let files: Vec<String> = (0..100).map(|i| format!("f{i}.py")).collect();
        let p = lesson_prompt(&RevertFacts {
            summary: "Revert \"Cache config\"".into(),
            reverted_message: Some("Cache config\n\nFaster start.".into()),
            files,
            symbols: vec!["Config.load".into()],
        });
        assert!(p.contains("Revert \"Cache config\""));
        assert!(p.contains("Faster start."));
        assert!(p.contains("f39.py") && !p.contains("f40.py"));
        assert!(p.contains("and 60 more"));
        assert!(p.contains("Config.load"));
    }

    #[test]
    fn a_provider_needs_an_endpoint_a_model_and_its_key() {
        assert!(matches!(
            Provider::from_config(&AgentConfig::default()),
            Err(AgentError::NotConfigured)
        ));
        let c = AgentConfig {
            endpoint: Some("http://127.0.0.1:1/v1/".into()),
            model: Some("m".into()),
            api_key_env: Some("SNO_TEST_SURELY_UNSET_KEY".into()),
            timeout_secs: None,
            protocol: None,
            draft_on_index: false,
        };
        assert!(matches!(
            Provider::from_config(&AgentConfig {
                protocol: Some("gopher".into()),
                ..c.clone()
            }),
            Err(AgentError::UnknownProtocol(_))
        ));
        assert!(matches!(
            Provider::from_config(&c),
            Err(AgentError::MissingKey(_))
        ));
        let p = Provider::from_config(&AgentConfig {
            api_key_env: None,
            ..c.clone()
        })
        .unwrap();
        assert_eq!(p.endpoint(), "http://127.0.0.1:1/v1");
        // A key goes over plain http only to this machine.
        let with_key = |endpoint: &str| {
            Provider::from_config_with(
                &AgentConfig {
                    endpoint: Some(endpoint.into()),
                    api_key_env: Some("K".into()),
                    ..c.clone()
                },
                |_| Some("secret".into()),
            )
        };
        assert!(matches!(
            with_key("http://llm.example.com/v1"),
            Err(AgentError::InsecureKey(_))
        ));
        assert!(matches!(
            with_key("http://user@10.0.0.1:8080/v1"),
            Err(AgentError::InsecureKey(_))
        ));
        assert!(matches!(
            with_key("HTTP://llm.example.com/v1"),
            Err(AgentError::InsecureKey(_))
        ));
        for ok in [
            "HTTPS://api.example.com/v1",
            "https://api.openai.com/v1",
            "http://localhost:11434/v1",
            "http://[::1]:8/v1",
            "http://127.0.0.1/v1",
        ] {
            let p = with_key(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert!(
                !format!("{p:?}").contains("secret"),
                "Debug never shows the key"
            );
        }
        // Nothing listens on port 1: a clear error, not a hang.
        assert!(matches!(
            p.complete("s", "u"),
            Err(AgentError::Unreachable { .. })
        ));
    }
}

/// The body of a chat request, in the fields both providers' APIs share
/// (Anthropic's takes the system prompt and `max_tokens` apart).
#[derive(serde::Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    temperature: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: Vec<Message<'a>>,
}

#[derive(serde::Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}
