//! The model-provider methods: the provider's status with today's calls against the budget,
//! a test call, API keys in the OS keyring, and the local model Cairn offers (described by
//! `llm_offer`, downloaded only by `llm_download`). Calls go through [`cairn_llm::Llm`], so a test
//! follows the same budget, deadline and retries as distillation and lands in the ledger.
use std::sync::Arc;
use std::time::Instant;

use cairn_config::{LLM_PROVIDERS, LlmSettings, Origin};
use cairn_core::ErrorCode;
use cairn_core::api::{
    Empty, LlmBudget, LlmCall, LlmDownloadReq, LlmDownloadRes, LlmKeySetReq, LlmKeyState, LlmOffer,
    LlmSettingsReq, LlmStatus, LlmStatusReq, LlmTestReq, LlmTestRes, LlmTotals, WorkerState,
};
use cairn_llm::{ApiKind, CallError, Llm, Policy, Provider, Request, api_key_user};

use crate::{ApiError, Result, Service};

/// The worker board's name for model downloads (the embedder's download reports there too).
const MODELS: &str = "models";

/// What the offer says of its pace before it has run on this machine.
pub const SPEED_UNMEASURED: &str = "measured after the first call";

/// The target files of downloads running in this process: a second call for the same file
/// is refused while the first runs.
static DOWNLOADS: std::sync::Mutex<std::collections::BTreeSet<std::path::PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Bytes as people read them (`1.1 GB`).
fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// How the offer's memory figure is made, in its own numbers.
fn memory_note(offer: &cairn_models::GgufOffer) -> String {
    format!(
        "{} of weights (Cairn's loader dequantizes the {:.2} billion parameters to f32, 4 bytes \
         each, and holds the tied embedding twice) plus {} of key-value cache for the full \
         {}-token context; the file itself is {}",
        gigabytes(offer.weights_bytes()),
        offer.parameters as f64 / 1e9,
        gigabytes(offer.kv_cache_bytes()),
        offer.context,
        gigabytes(offer.size)
    )
}

/// The longest a test call may take (the CLI's client waits 120 s for an answer).
pub const TEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(100);

/// The question a test call asks, and the answer's schema.
pub fn test_request() -> Request {
    Request {
        purpose: "test".into(),
        system: "You are checking that a connection works. Answer briefly.".into(),
        prompt: "Can you read this message? Answer with {\"ok\": true}.".into(),
        schema: serde_json::json!({
            "type": "object",
            "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}}
        }),
        max_tokens: 64,
    }
}

/// The API a provider name stands for, when it is one.
fn api_kind(name: &str) -> Option<ApiKind> {
    match name {
        "anthropic" => Some(ApiKind::Anthropic),
        "openai" => Some(ApiKind::OpenAi),
        _ => None,
    }
}

/// The message for "no provider is set", listing the choices.
pub fn no_provider_message() -> String {
    format!(
        "no model provider is set: set llm.provider in the config file (`cairn config path`), \
         or CAIRN__LLM__PROVIDER, or pass --set llm.provider=…, to one of {} \
         (an agent CLI you are signed in to is the easiest start)",
        LLM_PROVIDERS.join(", ")
    )
}

/// The environment variable an API's key is read from when the keyring has none.
pub fn key_variable(kind: ApiKind) -> &'static str {
    match kind {
        ApiKind::Anthropic => "ANTHROPIC_API_KEY",
        ApiKind::OpenAi => "OPENAI_API_KEY",
    }
}

/// A keyring failure as the user should read it: with no keyring at all, where else the key
/// can come from.
pub fn keyring_problem(kind: ApiKind, e: &cairn_config::secrets::SecretError) -> String {
    if e.unavailable {
        format!(
            "{}; set {} in the environment of the Cairn service instead",
            e.message
                .trim_end_matches("; keep the key in memory for this run")
                .trim_end(),
            key_variable(kind)
        )
    } else {
        e.message.clone()
    }
}

fn secret_error(kind: ApiKind, e: &cairn_config::secrets::SecretError) -> ApiError {
    let code = if e.unavailable {
        ErrorCode::Unavailable
    } else {
        ErrorCode::Internal
    };
    ApiError::new(code, keyring_problem(kind, e))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a model-provider task stopped: {e}")))
}

fn totals_view(t: cairn_store::LedgerTotals) -> LlmTotals {
    LlmTotals {
        calls: t.calls,
        ok: t.ok,
        invalid: t.invalid,
        failed: t.failed,
        refused: t.refused,
        input_tokens: t.input_tokens,
        output_tokens: t.output_tokens,
        cost_usd: t.cost_usd,
    }
}

fn call_view(e: cairn_store::LedgerEntry) -> LlmCall {
    LlmCall {
        at: e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        provider: e.provider,
        model: e.model,
        purpose: e.purpose,
        outcome: e.outcome.as_str().to_owned(),
        attempts: e.attempts,
        input_tokens: e.input_tokens,
        output_tokens: e.output_tokens,
        cost_usd: e.cost_usd,
        duration_ms: e.duration_ms,
        error: e.error,
    }
}

impl Service {
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn llm_status(&self, req: LlmStatusReq) -> Result<LlmStatus> {
        let s = &self.llm_settings();
        let store = self.store();
        let today = totals_view(
            store
                .llm_totals_since(&cairn_store::start_of_today())
                .await?,
        );
        let recent = match req.recent.unwrap_or(20).min(200) {
            0 => Vec::new(),
            n => store
                .llm_calls(u64::from(n))
                .await?
                .into_iter()
                .map(call_view)
                .collect(),
        };
        let key_stored = match api_kind(&s.provider) {
            Some(kind) => {
                blocking(move || {
                    cairn_config::secrets::load_secret(api_key_user(kind))
                        .ok()
                        .map(|k| k.is_some())
                })
                .await?
            }
            None => None,
        };
        let budget = LlmBudget {
            calls: s.daily_calls,
            usd: s.daily_usd,
        };
        let local_speed = match s.provider.as_str() {
            "local" => cairn_llm::stored_speed(store, "local")
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?
                .map(|speed| speed.line()),
            _ => None,
        };
        Ok(LlmStatus {
            provider: s.provider.clone(),
            model: s.model.clone(),
            base_url: s.base_url.clone(),
            model_path: s.model_path.clone(),
            providers: LLM_PROVIDERS.iter().map(|p| (*p).to_owned()).collect(),
            key_stored,
            over_budget: today.calls >= u64::from(budget.calls) || today.cost_usd >= budget.usd,
            budget,
            today,
            recent,
            judge: s.judge,
            judge_ms: s.judge_ms,
            local_speed,
        })
    }

    // No `err`: a missing provider is the caller's to report, not a service error.
    #[tracing::instrument(skip_all)]
    pub(crate) async fn llm_test(&self, req: LlmTestReq) -> Result<LlmTestRes> {
        let mut settings: LlmSettings = self.llm_settings();
        if let Some(p) = req.provider {
            settings.provider = p;
        }
        if let Some(m) = req.model {
            settings.model = m;
        }
        if let Some(b) = req.base_url {
            settings.base_url = b;
        }
        if let Some(m) = req.model_path {
            settings.model_path = m;
        }
        if settings.provider.is_empty() {
            return Err(ApiError::bad_request(no_provider_message()));
        }
        if !LLM_PROVIDERS.contains(&settings.provider.as_str()) {
            return Err(ApiError::bad_request(format!(
                "{:?} is not a model provider Cairn knows; choose one of {}",
                settings.provider,
                LLM_PROVIDERS.join(", ")
            )));
        }
        tracing::info!(provider = %settings.provider, "testing the model provider");
        let began = Instant::now();
        let failed = |provider: &str, model: &str, message: String| LlmTestRes {
            provider: provider.to_owned(),
            model: model.to_owned(),
            ok: false,
            answer: None,
            error: Some(message),
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            duration_ms: 0,
            attempts: 0,
        };
        let paths = self.paths().clone();
        let setup = settings.clone();
        // A local model takes a few seconds to load: off the async threads.
        let provider: Arc<dyn Provider> =
            match blocking(move || cairn_llm::provider_from_settings(&setup, &paths)).await? {
                Ok(Some(p)) => p,
                Ok(None) => return Err(ApiError::bad_request(no_provider_message())),
                Err(e) => {
                    let mut res = failed(&settings.provider, &settings.model, e.to_string());
                    res.duration_ms = millis(began);
                    return Ok(res);
                }
            };
        // One request, answered within the time a client waits for it: a test reports the
        // first failure as it is (a rate limit included) rather than retrying for minutes.
        let mut policy = Policy::from_settings(&settings);
        policy.retries = 0;
        policy.timeout = policy.timeout.min(TEST_TIMEOUT);
        let llm = Llm::new(provider.clone(), self.store().clone(), policy);
        match llm.call(&test_request()).await {
            Ok(answer) => Ok(LlmTestRes {
                provider: provider.name().to_owned(),
                model: answer.model,
                ok: true,
                answer: Some(answer.value),
                error: None,
                input_tokens: answer.usage.input_tokens,
                output_tokens: answer.usage.output_tokens,
                cost_usd: answer.cost_usd,
                duration_ms: millis(began),
                attempts: answer.attempts,
            }),
            Err(CallError::Store(e)) => Err(e.into()),
            Err(e) => {
                let attempts = match &e {
                    CallError::Failed { attempts, .. } => *attempts,
                    // The answer, and the one retry that named the validation error.
                    CallError::Invalid { .. } => 2,
                    _ => 0,
                };
                let mut res = failed(provider.name(), provider.model(), e.to_string());
                res.attempts = attempts;
                res.duration_ms = millis(began);
                Ok(res)
            }
        }
    }

    /// Saves the provider, model, endpoint, model file and daily budget in the config file's
    /// `[llm]` table and puts them in effect at once. An invalid choice writes nothing and
    /// names the key, the value and the problem.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn llm_settings_set(&self, req: LlmSettingsReq) -> Result<LlmStatus> {
        let file = self.config_file().to_path_buf();
        let mut llm = self.llm_settings();
        llm.provider = req.provider.trim().to_owned();
        llm.model = req.model.trim().to_owned();
        llm.base_url = req.base_url.trim().to_owned();
        llm.model_path = req.model_path.trim().to_owned();
        llm.daily_calls = req.daily_calls;
        llm.daily_usd = req.daily_usd;
        if let Some(j) = req.judge {
            llm.judge = j;
        }
        if let Some(ms) = req.judge_ms {
            llm.judge_ms = ms;
        }
        let checked = self
            .settings()
            .with_llm(llm, &Origin::File(file.clone()))
            .map_err(|e| ApiError::bad_request(e.to_string()))?
            .llm;
        let to_save = checked.clone();
        blocking(move || cairn_config::save_llm(&file, &to_save))
            .await?
            .map_err(|e| ApiError::internal(format!("the model settings were not saved: {e}")))?;
        tracing::info!(provider = %checked.provider, "model provider settings saved");
        let idle = self
            .workers()
            .snapshot()
            .iter()
            .any(|w| w.name == crate::board::DISTILLATION && w.state == WorkerState::Idle);
        if idle {
            let detail = if checked.provider.is_empty() {
                "no model provider is set: conversations stay searchable, items wait"
            } else {
                "distils settled conversations when the machine is quiet"
            };
            self.workers().report(
                crate::board::DISTILLATION,
                WorkerState::Idle,
                Some(detail.to_owned()),
                None,
            );
        }
        self.set_llm_settings(checked);
        self.publish_hook_wait();
        self.llm_status(LlmStatusReq::default()).await
    }

    #[tracing::instrument(skip_all)]
    pub(crate) async fn llm_key_set(&self, req: LlmKeySetReq) -> Result<LlmKeyState> {
        let kind = api_kind(&req.api).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{:?} takes no API key; keys are for anthropic or openai",
                req.api
            ))
        })?;
        let key = req
            .key
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty());
        let stored = blocking(move || match key {
            Some(k) => cairn_config::secrets::store_secret(api_key_user(kind), &k).map(|()| true),
            None => cairn_config::secrets::delete_secret(api_key_user(kind)).map(|_| false),
        })
        .await?
        .map_err(|e| secret_error(kind, &e))?;
        tracing::info!(api = %req.api, stored, "model API key changed");
        Ok(LlmKeyState {
            api: req.api,
            stored,
        })
    }
}

impl Service {
    fn models_dir(&self) -> std::path::PathBuf {
        self.paths().data.join("models")
    }

    /// The offer as it stands: downloaded or not, in use or not, its pace if measured.
    async fn offer_view(&self, offer: &cairn_models::GgufOffer) -> Result<LlmOffer> {
        let cache = self.models_dir();
        let path = offer.path(&cache);
        let downloading = DOWNLOADS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&path);
        let downloaded = if downloading {
            false
        } else {
            let check = offer.clone();
            blocking(move || check.cached(&cache))
                .await?
                .inspect_err(|e| tracing::warn!(error = %e, "the offered model's file is damaged"))
                .ok()
                .flatten()
                .is_some()
        };
        let speed = cairn_llm::stored_speed(self.store(), "local")
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .filter(|s| s.model == offer.model_id())
            .map(|s| s.line());
        let s = self.llm_settings();
        let in_use = s.provider == "local" && std::path::Path::new(&s.model_path) == path;
        Ok(LlmOffer {
            name: offer.title.clone(),
            repo: offer.spec.repo.clone(),
            revision: offer.spec.revision.clone(),
            file: offer.file().name.clone(),
            url: offer.url(&cairn_models::hf_endpoint()),
            sha256: offer.sha256().to_owned(),
            licence: offer.licence.clone(),
            size_bytes: offer.size,
            memory_bytes: offer.memory_bytes(),
            memory_note: memory_note(offer),
            speed_note: speed.clone().unwrap_or_else(|| SPEED_UNMEASURED.to_owned()),
            speed,
            downloaded,
            path: path.display().to_string(),
            in_use,
            downloading,
        })
    }

    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn llm_offer(&self, _req: Empty) -> Result<LlmOffer> {
        self.offer_view(&cairn_models::GgufOffer::qwen2_5_1_5b_instruct())
            .await
    }

    /// Downloads the offered model (the explicit call is the only way it is downloaded),
    /// reporting progress on the worker board; with `use_it`, then makes it the provider.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn llm_download(&self, req: LlmDownloadReq) -> Result<LlmDownloadRes> {
        let offer = cairn_models::GgufOffer::qwen2_5_1_5b_instruct();
        let cache = self.models_dir();
        let target = offer.path(&cache);
        if !DOWNLOADS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(target.clone())
        {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "{} is being downloaded already; its progress is on the worker board",
                    offer.title
                ),
            ));
        }
        let began = Instant::now();
        let board = self.workers().clone();
        let title = offer.title.clone();
        let job = offer.clone();
        let fetched = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = fetched.clone();
        let endpoint = cairn_models::hf_endpoint();
        tracing::info!(model = %offer.spec.repo, file = %offer.file().name, %endpoint, "downloading the offered local model");
        let result = blocking(move || {
            let last = std::sync::Mutex::new(None::<u64>);
            let progress = |done: u64, total: u64| {
                counted.store(done, std::sync::atomic::Ordering::Relaxed);
                // One report per MB is plenty for the board.
                let mb = done >> 20;
                let mut last = last
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if *last == Some(mb) && done != total {
                    return;
                }
                *last = Some(mb);
                board.report(
                    MODELS,
                    WorkerState::Running,
                    Some(format!(
                        "downloading {title} ({} of {} MB)",
                        mb,
                        total.max(done) >> 20
                    )),
                    (total > 0).then(|| done as f32 / total as f32),
                );
            };
            let result = cairn_models::download_gguf(&job, &endpoint, &cache, &progress);
            let (state, detail) = match &result {
                Ok(_) => (WorkerState::Idle, format!("{title} downloaded and checked")),
                Err(e) => (
                    WorkerState::Failed,
                    format!("downloading {title} failed: {e}"),
                ),
            };
            board.report(MODELS, state, Some(detail), None);
            result
        })
        .await;
        DOWNLOADS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&target);
        let path = result?.map_err(|e| ApiError::new(ErrorCode::Unavailable, e.to_string()))?;
        if req.use_it {
            let s = self.llm_settings();
            self.llm_settings_set(LlmSettingsReq {
                provider: "local".to_owned(),
                model: String::new(),
                base_url: String::new(),
                model_path: path.display().to_string(),
                daily_calls: s.daily_calls,
                daily_usd: s.daily_usd,
                judge: None,
                judge_ms: None,
            })
            .await?;
        }
        Ok(LlmDownloadRes {
            offer: self.offer_view(&offer).await?,
            fetched_bytes: fetched.load(std::sync::atomic::Ordering::Relaxed),
            duration_ms: millis(began),
        })
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
