//! [`Llm`]: one provider with the rules every call follows — budget, deadline, retries,
//! validation and the ledger.
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_store::{LedgerEntry, LedgerOutcome, LedgerTotals, Store, start_of_today};
use serde::Serialize;
use serde_json::Value;

use crate::schema::{extract_json, validate};
use crate::{FailKind, Provider, Request, Speed, Usage};

/// The daily budget: distillation stops for the day when either is spent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Budget {
    /// Calls per day.
    pub calls: u32,
    /// US dollars per day.
    pub usd: f64,
}

/// How calls are made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Policy {
    /// How long one attempt may take.
    pub timeout: Duration,
    /// Further attempts after a passing failure (rate limit, network, timeout).
    pub retries: u32,
    /// The first wait before a retry; it doubles each time (capped at 30 s).
    pub backoff: Duration,
    /// The daily budget.
    pub budget: Budget,
}

impl Policy {
    /// The policy `[llm]` describes.
    pub fn from_settings(s: &cairn_config::LlmSettings) -> Self {
        Self {
            timeout: Duration::from_secs(s.timeout_seconds),
            retries: s.retries,
            backoff: Duration::from_secs(2),
            budget: Budget {
                calls: s.daily_calls,
                usd: s.daily_usd,
            },
        }
    }
}

/// The settings key a provider's measured pace is kept under.
fn speed_key(provider: &str) -> String {
    format!("llm.speed.{provider}")
}

/// The pace last measured for `provider` (e.g. `local`), as kept in `store`.
pub async fn stored_speed(store: &Store, provider: &str) -> Result<Option<Speed>, CallError> {
    Ok(store
        .setting::<Speed>(&speed_key(provider))
        .await?
        .map(|(s, _)| s))
}

/// A validated answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The JSON value, matching the request's schema.
    pub value: Value,
    /// The model that answered.
    pub model: String,
    /// Tokens over every attempt.
    pub usage: Usage,
    /// Money over every attempt, when known.
    pub cost_usd: Option<f64>,
    /// Wall time over every attempt.
    pub duration: Duration,
    /// Requests sent.
    pub attempts: u32,
}

/// Why a call brought no answer. Every case is in the ledger.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The day's budget is spent: no request was sent.
    #[error(
        "today's model budget is spent ({calls} calls of {max_calls}, ${usd:.4} of ${max_usd:.2}); \
         distillation resumes tomorrow (raise llm.daily_calls or llm.daily_usd to go on today)"
    )]
    OverBudget {
        /// Calls made today.
        calls: u64,
        /// The daily limit of calls.
        max_calls: u32,
        /// Money spent today.
        usd: f64,
        /// The daily limit of money.
        max_usd: f64,
    },
    /// Answers came back but did not match the schema, twice.
    #[error(
        "{provider} answered, but not in the required form (dropped after one retry): {reason}"
    )]
    Invalid {
        /// The provider.
        provider: String,
        /// The last validation error.
        reason: String,
    },
    /// The provider failed.
    #[error("{provider} failed after {attempts} attempt(s): {message}")]
    Failed {
        /// The provider.
        provider: String,
        /// Requests sent.
        attempts: u32,
        /// The last failure.
        message: String,
        /// True when the last failure was the deadline.
        timeout: bool,
    },
    /// The ledger could not be read or written.
    #[error("the model-call ledger: {0}")]
    Store(#[from] cairn_store::Error),
}

/// One provider and the rules every call follows.
#[derive(Clone)]
pub struct Llm {
    provider: Arc<dyn Provider>,
    store: Store,
    policy: Policy,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm")
            .field("provider", &self.provider.name())
            .field("model", &self.provider.model())
            .field("policy", &self.policy)
            .finish()
    }
}

impl Llm {
    /// Calls go to `provider`, are counted in `store`'s ledger and follow `policy`.
    pub fn new(provider: Arc<dyn Provider>, store: Store, policy: Policy) -> Self {
        Self {
            provider,
            store,
            policy,
        }
    }

    /// The provider's name.
    pub fn provider_name(&self) -> &str {
        self.provider.name()
    }

    /// The configured model.
    pub fn model(&self) -> &str {
        self.provider.model()
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What today's calls used.
    pub async fn today(&self) -> Result<LedgerTotals, CallError> {
        Ok(self.store.llm_totals_since(&start_of_today()).await?)
    }

    /// The most window text (characters) a request like `template` should carry for this
    /// provider to read it and answer within the policy's timeout (`None`: no limit of the
    /// provider's own). A provider that measures its pace is measured first if it never was.
    pub async fn window_chars(&self, template: &Request) -> Result<Option<usize>, CallError> {
        self.ensure_speed(true).await?;
        Ok(self.provider.window_chars(template, self.policy.timeout))
    }

    /// The pace of this provider on this machine, as kept in the store.
    pub async fn speed(&self) -> Result<Option<Speed>, CallError> {
        stored_speed(&self.store, self.provider.name()).await
    }

    /// Gives a provider that measures its pace the figures kept in the store; when there are
    /// none for its model and `measure` is set, measures it and keeps the figures (a call
    /// measures the pace itself).
    async fn ensure_speed(&self, measure: bool) -> Result<(), CallError> {
        if !self.provider.measures_speed() || self.provider.speed().is_some() {
            return Ok(());
        }
        if let Some(s) = self.speed().await?
            && s.model == self.provider.model()
        {
            self.provider.set_speed(s);
            return Ok(());
        }
        if !measure {
            return Ok(());
        }
        let provider = Arc::clone(&self.provider);
        match tokio::task::spawn_blocking(move || provider.measure_speed()).await {
            Ok(Ok(Some(s))) => {
                tracing::info!(provider = self.provider.name(), speed = %s.line(), "model pace measured");
                self.store
                    .set_setting(&speed_key(self.provider.name()), &s)
                    .await?;
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                tracing::warn!(provider = self.provider.name(), error = %e, "the model pace could not be measured")
            }
            Err(e) => {
                tracing::warn!(provider = self.provider.name(), error = %e, "the model pace measurement stopped")
            }
        }
        Ok(())
    }

    /// Keeps the provider's latest pace in the store.
    async fn keep_speed(&self) -> Result<(), CallError> {
        if self.provider.measures_speed()
            && let Some(s) = self.provider.speed()
        {
            self.store
                .set_setting(&speed_key(self.provider.name()), &s)
                .await?;
        }
        Ok(())
    }

    /// True when today's budget has room for another call.
    pub async fn budget_left(&self) -> Result<bool, CallError> {
        let t = self.today().await?;
        Ok(t.calls < u64::from(self.policy.budget.calls) && t.cost_usd < self.policy.budget.usd)
    }

    /// Sends `request` and returns the validated answer. Refused (and counted) when the
    /// day's budget is spent; passing failures are retried up to `policy.retries` times
    /// with a doubling wait; an answer that does not match the schema is sent back once
    /// with the validation error, then dropped.
    pub async fn call(&self, request: &Request) -> Result<Answer, CallError> {
        let started_at = chrono::Utc::now();
        let today = self.today().await?;
        let budget = self.policy.budget;
        if today.calls >= u64::from(budget.calls) || today.cost_usd >= budget.usd {
            self.ledger(
                started_at,
                request,
                self.provider.model().to_owned(),
                LedgerOutcome::OverBudget,
                0,
                Usage::default(),
                None,
                Duration::ZERO,
                None,
            )
            .await?;
            return Err(CallError::OverBudget {
                calls: today.calls,
                max_calls: budget.calls,
                usd: today.cost_usd,
                max_usd: budget.usd,
            });
        }

        self.ensure_speed(false).await?;
        let began = Instant::now();
        let mut usage = Usage::default();
        let mut cost: Option<f64> = None;
        let mut attempts = 0u32;
        let mut passing_failures = 0u32;
        let mut fixing: Option<String> = None;
        let mut model = self.provider.model().to_owned();
        let mut asked = request.clone();
        loop {
            attempts += 1;
            let provider = Arc::clone(&self.provider);
            let req = asked.clone();
            let cap = self.policy.timeout;
            let result = tokio::task::spawn_blocking(move || {
                // A provider that knows its pace gets a deadline sized to the request, never
                // longer than the policy's.
                let timeout = provider.attempt_timeout(&req).map_or(cap, |t| t.min(cap));
                provider.complete(&req, Instant::now() + timeout)
            })
            .await
            .unwrap_or_else(|e| {
                Err(crate::ProviderError::fatal(format!(
                    "the model call stopped unexpectedly: {e}"
                )))
            });
            match result {
                Ok(reply) => {
                    self.keep_speed().await?;
                    usage += reply.usage;
                    if let Some(c) = reply.cost_usd {
                        *cost.get_or_insert(0.0) += c;
                    }
                    model = reply.model.clone();
                    let checked = extract_json(&reply.text)
                        .ok_or_else(|| "the answer holds no JSON value".to_owned())
                        .and_then(|v| validate(&request.schema, &v).map(|()| v));
                    match checked {
                        Ok(value) => {
                            let duration = began.elapsed();
                            self.ledger(
                                started_at,
                                request,
                                model.clone(),
                                LedgerOutcome::Ok,
                                attempts,
                                usage,
                                cost,
                                duration,
                                None,
                            )
                            .await?;
                            return Ok(Answer {
                                value,
                                model,
                                usage,
                                cost_usd: cost,
                                duration,
                                attempts,
                            });
                        }
                        Err(reason) if fixing.is_none() => {
                            tracing::debug!(provider = self.provider.name(), %reason, "invalid answer; asking once more");
                            asked.prompt = format!(
                                "{}\n\nYour previous answer could not be used: {reason}. Answer \
                                 again with one JSON value only, matching the schema.",
                                request.prompt
                            );
                            fixing = Some(reason);
                        }
                        Err(reason) => {
                            self.ledger(
                                started_at,
                                request,
                                model,
                                LedgerOutcome::Invalid,
                                attempts,
                                usage,
                                cost,
                                began.elapsed(),
                                Some(reason.clone()),
                            )
                            .await?;
                            return Err(CallError::Invalid {
                                provider: self.provider.name().to_owned(),
                                reason,
                            });
                        }
                    }
                }
                Err(e) if e.kind != FailKind::Fatal && passing_failures < self.policy.retries => {
                    let wait = self
                        .policy
                        .backoff
                        .saturating_mul(1u32 << passing_failures.min(5))
                        .min(Duration::from_secs(30));
                    passing_failures += 1;
                    tracing::info!(provider = self.provider.name(), error = %e, ?wait, "model call failed; retrying");
                    tokio::time::sleep(wait).await;
                }
                Err(e) => {
                    let timeout = e.kind == FailKind::Timeout;
                    let outcome = if timeout {
                        LedgerOutcome::Timeout
                    } else {
                        LedgerOutcome::Failed
                    };
                    self.ledger(
                        started_at,
                        request,
                        model,
                        outcome,
                        attempts,
                        usage,
                        cost,
                        began.elapsed(),
                        Some(e.message.clone()),
                    )
                    .await?;
                    return Err(CallError::Failed {
                        provider: self.provider.name().to_owned(),
                        attempts,
                        message: e.message,
                        timeout,
                    });
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn ledger(
        &self,
        at: chrono::DateTime<chrono::Utc>,
        request: &Request,
        model: String,
        outcome: LedgerOutcome,
        attempts: u32,
        usage: Usage,
        cost_usd: Option<f64>,
        duration: Duration,
        error: Option<String>,
    ) -> Result<(), CallError> {
        self.store
            .record_llm_call(&LedgerEntry {
                at,
                provider: self.provider.name().to_owned(),
                model,
                purpose: request.purpose.clone(),
                outcome,
                attempts,
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cost_usd,
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                error,
            })
            .await?;
        Ok(())
    }
}
