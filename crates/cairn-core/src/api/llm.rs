//! The model provider distillation calls: which one is set, a test call, API keys, and the
//! ledger of calls (today's totals against the daily budget, the latest calls).
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Ask for the provider's status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct LlmStatusReq {
    /// How many of the latest ledger entries to include (20 by default, at most 200; 0 for
    /// none).
    #[serde(default)]
    pub recent: Option<u32>,
}

/// The daily budget of model calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmBudget {
    /// Calls per day (`llm.daily_calls`).
    pub calls: u32,
    /// US dollars per day (`llm.daily_usd`).
    pub usd: f64,
}

/// What the model calls since a time used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmTotals {
    /// Calls made (refused ones not counted).
    #[ts(type = "number")]
    pub calls: u64,
    /// Calls that brought a valid answer.
    #[ts(type = "number")]
    pub ok: u64,
    /// Calls whose answers were dropped as invalid.
    #[ts(type = "number")]
    pub invalid: u64,
    /// Calls that failed or timed out.
    #[ts(type = "number")]
    pub failed: u64,
    /// Calls refused because the budget was spent.
    #[ts(type = "number")]
    pub refused: u64,
    /// Prompt tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Answer tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Money spent in US dollars (calls whose cost is unknown count as 0).
    pub cost_usd: f64,
}

/// One model call in the ledger: never its prompt or its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmCall {
    /// When it started (RFC 3339).
    pub at: String,
    /// The provider (`claude-cli`, `anthropic`, `local`, …).
    pub provider: String,
    /// The model, as the provider named it.
    pub model: String,
    /// What it was for (`consolidate`, `reconcile`, `profile`, `test`, …).
    pub purpose: String,
    /// `ok`, `invalid`, `failed`, `timeout` or `over_budget`.
    pub outcome: String,
    /// Requests sent (retries included).
    pub attempts: u32,
    /// Prompt tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Answer tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Money spent in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// Wall time in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Why it failed, in one short line.
    pub error: Option<String>,
}

/// The model provider as configured, and what its calls used today.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmStatus {
    /// `llm.provider`: `""` when none is set (records stay searchable, items wait).
    pub provider: String,
    /// `llm.model` (`""` = the provider's fast default).
    pub model: String,
    /// `llm.base_url` (`""` = the provider's public API).
    pub base_url: String,
    /// `llm.model_path` (the GGUF file of `local`).
    pub model_path: String,
    /// Every provider `llm.provider` accepts.
    pub providers: Vec<String>,
    /// For `anthropic` and `openai`: whether the OS keyring holds its key (`None` for the
    /// other providers, or when there is no keyring to ask).
    pub key_stored: Option<bool>,
    /// The daily budget.
    pub budget: LlmBudget,
    /// What today's calls (since local midnight) used.
    pub today: LlmTotals,
    /// True when today's budget is spent: distillation waits for tomorrow.
    pub over_budget: bool,
    /// The latest calls, newest first.
    pub recent: Vec<LlmCall>,
    /// `llm.judge`: the model also judges each turn note's best candidates.
    pub judge: bool,
    /// `llm.judge_ms`: how long the judge may take before its answer is dropped.
    #[ts(type = "number")]
    pub judge_ms: u64,
    /// For `local`: the model's pace on this machine as last measured (one line; it sizes
    /// each call's deadline and distillation's windows), `None` before its first call.
    #[serde(default)]
    pub local_speed: Option<String>,
}

/// Send one tiny request to a provider: one attempt, no retries, at most 100 seconds (less
/// when `llm.timeout_seconds` says so), within the daily budget. Every field left out comes
/// from `[llm]`, so the settings view can test a choice before it is saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct LlmTestReq {
    /// The provider to test instead of `llm.provider`.
    #[serde(default)]
    pub provider: Option<String>,
    /// The model instead of `llm.model`.
    #[serde(default)]
    pub model: Option<String>,
    /// The endpoint instead of `llm.base_url`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The GGUF file instead of `llm.model_path`.
    #[serde(default)]
    pub model_path: Option<String>,
}

/// What a test call brought back. The call is in the ledger (purpose `test`) either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmTestRes {
    /// The provider tested.
    pub provider: String,
    /// The model that answered (or the configured one, when none did).
    pub model: String,
    /// True when a valid answer came back.
    pub ok: bool,
    /// The answer (a JSON value matching the test's schema), when one came back.
    #[ts(type = "unknown")]
    pub answer: Option<serde_json::Value>,
    /// Why the test failed, naming the provider and the problem.
    pub error: Option<String>,
    /// Prompt tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Answer tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Money spent in US dollars, when the provider says or its price is known.
    pub cost_usd: Option<f64>,
    /// How long it took, in milliseconds (setting the provider up included).
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Requests sent (retries included).
    pub attempts: u32,
}

/// Store an API key in the OS keyring, or remove it. Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct LlmKeySetReq {
    /// `anthropic` or `openai`.
    pub api: String,
    /// The key; `None` (or empty) removes the stored one. Never logged, never written to
    /// the config file.
    #[serde(default)]
    pub key: Option<String>,
}

/// Whether the OS keyring holds an API's key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmKeyState {
    /// `anthropic` or `openai`.
    pub api: String,
    /// True when a key is stored.
    pub stored: bool,
}

impl std::fmt::Debug for LlmKeySetReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmKeySetReq")
            .field("api", &self.api)
            .field("key", &self.key.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// Change the model provider and the daily budget (the settings view's Save): written to the
/// `[llm]` table of the config file, everything else in the file kept as written, and in
/// effect at once. Every field is the whole new value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct LlmSettingsReq {
    /// `llm.provider`: `""` (none) or one of [`LlmStatus::providers`].
    pub provider: String,
    /// `llm.model` (`""` = the provider's fast default).
    pub model: String,
    /// `llm.base_url` (`""` = the provider's public API).
    pub base_url: String,
    /// `llm.model_path` (the GGUF file of `local`).
    pub model_path: String,
    /// `llm.daily_calls`.
    pub daily_calls: u32,
    /// `llm.daily_usd`.
    pub daily_usd: f64,
    /// `llm.judge` (left out: as it is now).
    #[serde(default)]
    pub judge: Option<bool>,
    /// `llm.judge_ms` (left out: as it is now).
    #[serde(default)]
    #[ts(type = "number | null")]
    pub judge_ms: Option<u64>,
}

/// The local model Cairn offers to download for the `local` provider: what it is and what it
/// costs, before anything is downloaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmOffer {
    /// A name for people (`Qwen2.5-1.5B-Instruct (Q4_K_M)`).
    pub name: String,
    /// The Hugging Face repository.
    pub repo: String,
    /// The pinned commit.
    pub revision: String,
    /// The GGUF file.
    pub file: String,
    /// Where it is downloaded from (`HF_ENDPOINT` moves it to a mirror).
    pub url: String,
    /// Its pinned sha256: a download that hashes otherwise is refused.
    pub sha256: String,
    /// The licence (SPDX).
    pub licence: String,
    /// The download's size in bytes.
    #[ts(type = "number")]
    pub size_bytes: u64,
    /// The memory needed to run it, in bytes (see `memory_note`).
    #[ts(type = "number")]
    pub memory_bytes: u64,
    /// How `memory_bytes` is estimated.
    pub memory_note: String,
    /// Its pace on this machine as last measured (one line), `None` before its first call.
    #[serde(default)]
    pub speed: Option<String>,
    /// The pace, or "measured after the first call" when it has not run here yet.
    pub speed_note: String,
    /// True when the file is in Cairn's model cache, checked against its sha256.
    pub downloaded: bool,
    /// Where the file is (or will be once downloaded).
    pub path: String,
    /// True when `llm.provider` is `local` with this file as `llm.model_path`.
    pub in_use: bool,
    /// True while a download of it runs (its progress is on the worker board, `models`).
    pub downloading: bool,
}

/// Download the offered local model (nothing downloads it but this call), checked against its
/// pinned sha256; a file already downloaded is not fetched again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct LlmDownloadReq {
    /// Once it is there, make it the model provider (`llm.provider = "local"`,
    /// `llm.model_path` = the file), saved in the config file. Left out: settings unchanged.
    #[serde(default)]
    pub use_it: bool,
}

/// What a download did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LlmDownloadRes {
    /// The offer as it stands after the download.
    pub offer: LlmOffer,
    /// Bytes fetched (0 when the file was already there).
    #[ts(type = "number")]
    pub fetched_bytes: u64,
    /// How long it took, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}
