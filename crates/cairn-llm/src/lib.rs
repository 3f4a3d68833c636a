//! # cairn-llm
//!
//! The models distillation calls, behind one small trait ([`Provider`]): a prompt and a JSON
//! schema in, text out. [`Llm`] wraps any provider with what every call needs: a deadline,
//! bounded retries with backoff, the answer validated against the schema (an invalid answer
//! is retried once with the validation error, then dropped and counted), a ledger entry in the
//! store (provider, model, tokens, cost, duration, purpose, outcome; never the content), and
//! the daily budget of calls and money.
//!
//! Providers ([`provider_from_settings`] picks one from `[llm]`):
//! - the user's own agent CLIs in non-interactive mode ([`AgentCli`]: Claude Code, Gemini
//!   CLI), run with no tools, MCP servers or extensions, a configuration home of their own and
//!   a cleared environment, in Cairn's own working folder with
//!   [`cairn_config::RECURSION_GUARD`] set, so a call cannot act, Cairn's hooks stay quiet and
//!   capture never reads those calls back; Codex is refused ([`CODEX_REFUSAL`]);
//! - the Anthropic API and any OpenAI-compatible endpoint ([`HttpApi`]), keys in the OS
//!   keyring;
//! - a local GGUF model run in-process ([`Local`]);
//! - recorded answers ([`Recorded`]), so tests replay real-shaped answers without a network.
#![deny(missing_docs)]

mod caller;
mod cli;
pub mod constrain;
mod http;
mod local;
mod recorded;
pub mod schema;
mod setup;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use caller::{Answer, Budget, CallError, Llm, Policy, stored_speed};
pub use cli::{AgentCli, BASE_ENV, CODEX_REFUSAL, CliKind};
pub use http::{ApiKind, HttpApi, api_key_user, price_per_million};
pub use local::Local;
pub use recorded::{Recorded, WRITTEN_BY_HAND, prompt_key};
pub use setup::{SetupError, provider_from_settings};

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// What the call is for, kept in the ledger (`consolidate`, `reconcile`, `profile`,
    /// `test`).
    pub purpose: String,
    /// The instructions.
    pub system: String,
    /// The material and the question.
    pub prompt: String,
    /// The JSON schema the answer must match (see [`schema`] for the keywords checked).
    pub schema: serde_json::Value,
    /// The longest answer wanted, in tokens.
    pub max_tokens: u32,
}

impl Request {
    /// The system text with the schema spelled out, for providers that take no schema of
    /// their own (the agent CLIs, the local model).
    pub fn instructions_with_schema(&self) -> String {
        format!(
            "{}\n\nAnswer with one JSON value only (no prose, no code fence) that matches this \
             JSON schema:\n{}",
            self.system.trim_end(),
            self.schema
        )
    }
}

/// Tokens a call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (cache reads included).
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Self) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// What a provider answered, before validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The answer text (expected to hold one JSON value).
    pub text: String,
    /// The model that answered, as the provider names it.
    pub model: String,
    /// Tokens used.
    pub usage: Usage,
    /// Money spent in US dollars, when the provider says or the price is known.
    pub cost_usd: Option<f64>,
}

/// How a provider call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// Worth another try later: rate limit, overload, network, a server error.
    Transient,
    /// Not worth retrying: no such model, no key, refused, the program is missing.
    Fatal,
    /// The deadline passed.
    Timeout,
}

/// A failed provider call, with a message that names the provider and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// Retry or not.
    pub kind: FailKind,
    /// What went wrong (never the prompt).
    pub message: String,
}

impl ProviderError {
    /// A passing failure.
    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            kind: FailKind::Transient,
            message: message.into(),
        }
    }
    /// A lasting failure.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self {
            kind: FailKind::Fatal,
            message: message.into(),
        }
    }
    /// The deadline passed.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self {
            kind: FailKind::Timeout,
            message: message.into(),
        }
    }
}

/// The provider where there is none: every call fails at once, with `message` (what to set,
/// or why there is no model), and is never retried. Sleep without a provider still relates,
/// re-scores and archives; what needs a model stops, saying why.
#[derive(Debug, Clone)]
pub struct Unavailable {
    message: String,
}

impl Unavailable {
    /// A provider whose every call fails with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl Provider for Unavailable {
    fn name(&self) -> &str {
        "none"
    }
    fn model(&self) -> &str {
        "none"
    }
    fn complete(&self, _: &Request, _: Instant) -> Result<Reply, ProviderError> {
        Err(ProviderError::fatal(self.message.clone()))
    }
}

/// A model provider: one blocking call, answered before `deadline` or abandoned.
pub trait Provider: Send + Sync {
    /// The provider's settings name (`claude-cli`, `anthropic`, `local`, …).
    fn name(&self) -> &str;
    /// The model it calls (as configured; the reply names the one that answered).
    fn model(&self) -> &str;
    /// Sends `request`; must give up once `deadline` has passed.
    fn complete(&self, request: &Request, deadline: Instant) -> Result<Reply, ProviderError>;

    /// True for a provider whose pace is measured on this machine (a local model): [`Llm`]
    /// keeps its [`Speed`] in the store and gives it back when the provider is made again.
    fn measures_speed(&self) -> bool {
        false
    }
    /// The pace measured so far, if any.
    fn speed(&self) -> Option<Speed> {
        None
    }
    /// A pace measured before (kept in the store).
    fn set_speed(&self, _speed: Speed) {}
    /// Measures the pace with a short call of its own (`None` when the provider does not).
    fn measure_speed(&self) -> Result<Option<Speed>, ProviderError> {
        Ok(None)
    }
    /// How long `request` should take at the measured pace, margin included (`None`: no
    /// estimate; the policy's timeout applies alone).
    fn attempt_timeout(&self, _request: &Request) -> Option<Duration> {
        None
    }
    /// The most window text (characters) a request like `template` (its prompt holding no
    /// window yet) should carry so that it fits the context and is answered within `limit`
    /// (`None`: no limit of the provider's own).
    fn window_chars(&self, _template: &Request, _limit: Duration) -> Option<usize> {
        None
    }
}

/// How fast a local model reads a prompt and writes an answer on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// The model measured.
    pub model: String,
    /// Prompt tokens read per second.
    pub prompt_tokens_per_second: f64,
    /// Answer tokens written per second (with the schema held to).
    pub answer_tokens_per_second: f64,
    /// When (RFC 3339).
    pub measured_at: String,
}

impl Speed {
    /// One line for status views.
    pub fn line(&self) -> String {
        format!(
            "{}: reads {:.0} prompt tokens/s, writes {:.1} answer tokens/s (measured {})",
            self.model,
            self.prompt_tokens_per_second,
            self.answer_tokens_per_second,
            self.measured_at.get(..16).unwrap_or(&self.measured_at)
        )
    }
}

/// Cuts provider output quoted in an error to a short, scrubbed line.
pub(crate) fn short(text: &str) -> String {
    let (clean, _) = cairn_text::scrub::scrubber().scrub(text.trim());
    let one_line: String = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 240 {
        let cut: String = one_line.chars().take(240).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}
