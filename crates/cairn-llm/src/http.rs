//! The Anthropic Messages API and any OpenAI-compatible chat endpoint (OpenAI, Ollama,
//! LM Studio, vLLM, a llama.cpp server). Keys come from the OS keyring (`cairn llm set-key`),
//! else from the provider's usual environment variable; a local endpoint needs none.
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Provider, ProviderError, Reply, Request, Usage, short};

/// Which API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKind {
    /// `POST {base}/v1/messages`.
    Anthropic,
    /// `POST {base}/chat/completions`.
    OpenAi,
}

impl ApiKind {
    /// The settings name of the provider.
    pub fn provider_name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    fn default_base(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenAi => "https://api.openai.com/v1",
        }
    }

    fn key_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }
}

/// The keyring user an API's key is stored under.
pub fn api_key_user(kind: ApiKind) -> &'static str {
    match kind {
        ApiKind::Anthropic => "llm-anthropic",
        ApiKind::OpenAi => "llm-openai",
    }
}

/// The public list price of a model, in US dollars per million tokens (prompt, answer), for
/// the models Cairn suggests; `None` for any other (its cost then counts as unknown, and only
/// the daily call limit applies).
pub fn price_per_million(model: &str) -> Option<(f64, f64)> {
    let m = model.to_ascii_lowercase();
    let table: [(&str, (f64, f64)); 8] = [
        ("claude-haiku-4", (1.0, 5.0)),
        ("claude-3-5-haiku", (0.8, 4.0)),
        ("claude-sonnet-4", (3.0, 15.0)),
        ("claude-opus-4-5", (5.0, 25.0)),
        ("gpt-4.1-nano", (0.1, 0.4)),
        ("gpt-4.1-mini", (0.4, 1.6)),
        ("gpt-4o-mini", (0.15, 0.6)),
        ("gpt-5-mini", (0.25, 2.0)),
    ];
    table
        .iter()
        .find(|(prefix, _)| m.starts_with(prefix))
        .map(|(_, p)| *p)
}

/// An HTTP API as a provider.
#[derive(Debug, Clone)]
pub struct HttpApi {
    kind: ApiKind,
    base: String,
    model: String,
    key: Option<String>,
}

impl HttpApi {
    /// `kind` at `base_url` (`""` = the public API) calling `model`, with `key` (`None` for a
    /// local endpoint that needs none).
    pub fn new(kind: ApiKind, base_url: &str, model: &str, key: Option<String>) -> Self {
        let base = if base_url.is_empty() {
            kind.default_base()
        } else {
            base_url
        };
        let model = if model.is_empty() && kind == ApiKind::Anthropic {
            "claude-haiku-4-5".to_owned()
        } else {
            model.to_owned()
        };
        Self {
            kind,
            base: base.trim_end_matches('/').to_owned(),
            model,
            key,
        }
    }

    /// The key from the keyring, else from the provider's usual environment variable.
    pub fn find_key(kind: ApiKind) -> Option<String> {
        match cairn_config::secrets::load_secret(api_key_user(kind)) {
            Ok(Some(k)) => return Some(k),
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "no keyring for the model API key"),
        }
        std::env::var(kind.key_variable())
            .ok()
            .filter(|k| !k.trim().is_empty())
    }

    fn url(&self) -> String {
        match self.kind {
            ApiKind::Anthropic => format!("{}/v1/messages", self.base),
            ApiKind::OpenAi => format!("{}/chat/completions", self.base),
        }
    }

    fn body(&self, r: &Request) -> Value {
        match self.kind {
            ApiKind::Anthropic => json!({
                "model": self.model,
                "max_tokens": r.max_tokens,
                "temperature": 0,
                "system": r.instructions_with_schema(),
                "messages": [{"role": "user", "content": r.prompt}],
            }),
            ApiKind::OpenAi => json!({
                "model": self.model,
                "max_tokens": r.max_tokens,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": r.instructions_with_schema()},
                    {"role": "user", "content": r.prompt},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": r.schema, "strict": false},
                },
            }),
        }
    }
}

impl Provider for HttpApi {
    fn name(&self) -> &str {
        self.kind.provider_name()
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request, deadline: Instant) -> Result<Reply, ProviderError> {
        let name = self.name();
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProviderError::timeout(format!(
                "{name}: no time left for the call"
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(left))
            .timeout_connect(Some(left.min(Duration::from_secs(10))))
            .http_status_as_error(false)
            .build()
            .into();
        let mut req = agent
            .post(self.url())
            .header("content-type", "application/json");
        match (self.kind, &self.key) {
            (ApiKind::Anthropic, Some(k)) => {
                req = req
                    .header("x-api-key", k)
                    .header("anthropic-version", "2023-06-01");
            }
            (ApiKind::Anthropic, None) => {
                return Err(ProviderError::fatal(
                    "anthropic: no API key; store one with `cairn llm set-key anthropic` \
                     (it goes to the OS keyring) or set ANTHROPIC_API_KEY",
                ));
            }
            (ApiKind::OpenAi, Some(k)) => {
                req = req.header("authorization", &format!("Bearer {k}"));
            }
            (ApiKind::OpenAi, None) => {}
        }
        let mut resp = match req.send_json(self.body(request)) {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => {
                return Err(ProviderError::timeout(format!(
                    "{name}: no answer from {} before the deadline",
                    self.base
                )));
            }
            Err(e) => {
                return Err(ProviderError::transient(format!(
                    "{name}: cannot reach {}: {e}",
                    self.base
                )));
            }
        };
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().map_err(|e| {
            ProviderError::transient(format!(
                "{name}: the answer from {} broke off: {e}",
                self.base
            ))
        })?;
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status != 200 {
            let why = v["error"]["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| short(&text));
            let msg = format!("{name}: HTTP {status} from {}: {why}", self.base);
            return Err(if status == 429 || status == 408 || status >= 500 {
                ProviderError::transient(msg)
            } else {
                ProviderError::fatal(msg)
            });
        }
        let u = |x: &Value| x.as_u64().unwrap_or(0);
        let (text, model, usage) = match self.kind {
            ApiKind::Anthropic => {
                let text: String = v["content"]
                    .as_array()
                    .map(|blocks| {
                        blocks
                            .iter()
                            .filter(|b| b["type"] == "text")
                            .filter_map(|b| b["text"].as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                let us = &v["usage"];
                (
                    text,
                    v["model"].as_str().unwrap_or(&self.model).to_owned(),
                    Usage {
                        input_tokens: u(&us["input_tokens"])
                            + u(&us["cache_read_input_tokens"])
                            + u(&us["cache_creation_input_tokens"]),
                        output_tokens: u(&us["output_tokens"]),
                    },
                )
            }
            ApiKind::OpenAi => {
                let us = &v["usage"];
                (
                    v["choices"][0]["message"]["content"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    v["model"].as_str().unwrap_or(&self.model).to_owned(),
                    Usage {
                        input_tokens: u(&us["prompt_tokens"]),
                        output_tokens: u(&us["completion_tokens"]),
                    },
                )
            }
        };
        if text.is_empty() {
            return Err(ProviderError::transient(format!(
                "{name}: the answer from {} had no text",
                self.base
            )));
        }
        let cost_usd = price_per_million(&model)
            .map(|(i, o)| (usage.input_tokens as f64 * i + usage.output_tokens as f64 * o) / 1e6);
        Ok(Reply {
            text,
            model,
            usage,
            cost_usd,
        })
    }
}
