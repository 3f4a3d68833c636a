//! Distillation in the service: `distill_now` (every settled window at once, whatever the
//! machine is doing) and the worker that distils when the machine is quiet — checked every
//! 30 minutes: memory on, a provider set, no turn captured for 5 minutes, CPU mostly idle,
//! budget left. Each window holds the store's write permit, so Clear never interleaves with
//! it and never finds items written after it.
use std::sync::Arc;
use std::time::Duration;

use cairn_core::ErrorCode;
use cairn_core::api::{
    DistillDiffItem, DistillDropped, DistillKept, DistillRebuildReport, DistillRebuildReq,
    DistillReport, DistillReq, DistillWindow, WorkerState,
};
use cairn_distill::{Distiller, RunReport, Settle};
use cairn_llm::{CallError, Llm, Policy};

use crate::board::DISTILLATION;
use crate::{ApiError, Result, Service};

/// How often the worker looks for settled windows.
const CHECK_EVERY: Duration = Duration::from_secs(30 * 60);
/// No turn captured for this long: the user is not at work in an agent.
const QUIET_FOR: chrono::Duration = chrono::Duration::minutes(5);
/// Average CPU use (all cores, percent) under which the machine counts as quiet.
const QUIET_CPU: f32 = 40.0;

/// Whether the CPU is mostly idle now (measured over a short span).
fn cpu_is_quiet() -> bool {
    use sysinfo::{CpuRefreshKind, RefreshKind, System};
    let mut sys = System::new_with_specifics(
        RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing().with_cpu_usage()),
    );
    std::thread::sleep(sysinfo::MINIMUM_CPU_UPDATE_INTERVAL.max(Duration::from_millis(500)));
    sys.refresh_cpu_usage();
    sys.global_cpu_usage() < QUIET_CPU
}

impl Service {
    async fn distiller(&self) -> Result<Distiller> {
        let settings = &self.llm_settings();
        let provider = cairn_llm::provider_from_settings(settings, self.paths())
            .map_err(|e| ApiError::new(ErrorCode::Unavailable, e.to_string()))?
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::Unavailable,
                    crate::llm_api::no_provider_message(),
                )
            })?;
        let llm = Llm::new(
            provider,
            self.store().clone(),
            Policy::from_settings(settings),
        );
        Ok(self.with_models(llm).await)
    }

    /// A distiller over this service's store calling `provider` (no daily budget), with the
    /// embedder and the items' vector index as distillation runs them: for a benchmark that
    /// brings its own answers.
    pub async fn distiller_calling(&self, provider: Arc<dyn cairn_llm::Provider>) -> Distiller {
        let policy = Policy {
            budget: cairn_llm::Budget {
                calls: u32::MAX,
                usd: f64::MAX,
            },
            ..Policy::from_settings(&self.llm_settings())
        };
        self.with_models(Llm::new(provider, self.store().clone(), policy))
            .await
    }

    /// A distiller calling `llm`, with the embedder and the items' vector index when the
    /// models are loaded.
    async fn with_models(&self, llm: Llm) -> Distiller {
        let dense = self.dense_parts().await;
        let embedder = dense.as_ref().map(|d| Arc::clone(&d.embedder));
        let d = Distiller::new(self.store().clone(), llm, embedder, Settle::default());
        match dense {
            Some(dense) => {
                // How far the index holds the items, for this model (else it holds none
                // reconcile can use): what changed after it is compared from the store.
                let through = match crate::dense::items_progress(self.store()).await {
                    Ok(p) if p.model == dense.vectors_id() => p.seq,
                    Ok(_) => 0,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read how far the items' index is; reconcile compares every item");
                        0
                    }
                };
                d.with_items_index(dense.items(), through)
            }
            None => d,
        }
    }

    /// The `distill_now` method: every settled window now, reported for every transport.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn distill_now(&self, _: DistillReq) -> Result<DistillReport> {
        Ok(to_api(self.distill_settled(&|_, _| {}).await?))
    }

    /// The `distill_rebuild` method: distillation again over the log (since a date, or all),
    /// holding the write permit throughout; the diff.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn distill_rebuild(
        &self,
        req: DistillRebuildReq,
    ) -> Result<DistillRebuildReport> {
        let since = req
            .since
            .as_deref()
            .map(|d| crate::service::parse_date(d, false))
            .transpose()?;
        let d = self.distiller().await?;
        let board = self.workers().clone();
        board.report(
            DISTILLATION,
            WorkerState::Running,
            Some("distilling the log again".into()),
            Some(0.0),
        );
        let b = board.clone();
        let result = {
            let _permit = self.write_permit().await;
            d.rebuild(since, &move |done, total| {
                #[allow(clippy::cast_precision_loss)]
                let p = done as f32 / total.max(1) as f32;
                b.report(
                    DISTILLATION,
                    WorkerState::Running,
                    Some(format!("distilling the log again ({done}/{total} windows)")),
                    Some(p),
                );
            })
            .await
        };
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                board.report(DISTILLATION, WorkerState::Failed, Some(e.to_string()), None);
                return Err(ApiError::new(ErrorCode::Internal, e.to_string()));
            }
        };
        board.report(
            DISTILLATION,
            WorkerState::Idle,
            Some(format!(
                "rebuilt: {} added, {} changed, {} dropped, {} unchanged",
                r.added.len(),
                r.changed.len(),
                r.dropped.len(),
                r.unchanged
            )),
            None,
        );
        let diff = |l: Vec<cairn_distill::DiffItem>| {
            l.into_iter()
                .map(|x| DistillDiffItem {
                    id: x.id,
                    kind: x.kind,
                    title: x.title,
                })
                .collect()
        };
        Ok(DistillRebuildReport {
            run: to_api(r.run),
            added: diff(r.added),
            changed: diff(r.changed),
            dropped: diff(r.dropped),
            unchanged: u32::try_from(r.unchanged).unwrap_or(u32::MAX),
        })
    }

    /// Distils every settled window now; `progress` hears (done, total) after each window.
    /// Stops early when the day's budget is spent or memory is switched off; the rest wait
    /// for the next run.
    pub async fn distill_settled(
        &self,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> Result<RunReport> {
        let d = self.distiller().await?;
        let windows = d
            .settled_windows(chrono::Utc::now())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        let before = d.today().await.map_err(call_error)?;
        let mut report = RunReport::default();
        let total = windows.len();
        self.workers().report(
            DISTILLATION,
            WorkerState::Running,
            Some(format!("distilling {total} settled window(s)")),
            Some(0.0),
        );
        for (i, w) in windows.iter().enumerate() {
            if !self.memory_enabled() {
                report.stopped = Some("memory was switched off".into());
                report.left = total - i;
                break;
            }
            let result = {
                let _permit = self.write_permit().await;
                d.distil(w).await
            };
            match result {
                Ok(r) => report.add(r),
                Err(cairn_distill::DistillError::Call(e)) => {
                    report.stopped = Some(e.to_string());
                    report.left = total - i;
                    break;
                }
                Err(e) => {
                    self.workers().report(
                        DISTILLATION,
                        WorkerState::Failed,
                        Some(e.to_string()),
                        None,
                    );
                    return Err(ApiError::new(ErrorCode::Internal, e.to_string()));
                }
            }
            progress(i + 1, total);
            #[allow(clippy::cast_precision_loss)]
            let done = (i + 1) as f32 / total.max(1) as f32;
            self.workers()
                .report(DISTILLATION, WorkerState::Running, None, Some(done));
        }
        let after = d.today().await.map_err(call_error)?;
        report.calls = after.calls.saturating_sub(before.calls);
        report.input_tokens = after.input_tokens.saturating_sub(before.input_tokens);
        report.output_tokens = after.output_tokens.saturating_sub(before.output_tokens);
        report.cost_usd = (after.cost_usd - before.cost_usd).max(0.0);
        let detail = match &report.stopped {
            Some(why) => format!(
                "{} window(s) distilled, {} item(s) kept; stopped: {why}",
                report.windows, report.items_kept
            ),
            None => format!(
                "{} window(s) distilled, {} item(s) kept, {} dropped",
                report.windows, report.items_kept, report.items_dropped
            ),
        };
        self.workers()
            .report(DISTILLATION, WorkerState::Idle, Some(detail), None);
        if report.items_kept > 0 {
            // The new items' vectors go into the index now, not at the next search.
            self.wake_indexing();
        }
        Ok(report)
    }

    /// Whether the worker may distil now: a provider is set, memory is on, no turn was
    /// captured for 5 minutes and the CPU is mostly idle.
    async fn machine_is_quiet(&self) -> bool {
        if self.llm_settings().provider.is_empty() || !self.memory_enabled() {
            return false;
        }
        match self.store().last_capture_at().await {
            Ok(Some(t)) if chrono::Utc::now() - t < QUIET_FOR => return false,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the last capture time");
                return false;
            }
        }
        tokio::task::spawn_blocking(cpu_is_quiet)
            .await
            .unwrap_or(false)
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn kind_name<T: serde::Serialize>(k: &T) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A run as the API reports it.
pub fn to_api(r: RunReport) -> DistillReport {
    use cairn_distill::Action;
    DistillReport {
        windows: count(r.windows),
        left: count(r.left),
        items_kept: count(r.items_kept),
        items_dropped: count(r.items_dropped),
        created: count(r.created),
        merged: count(r.merged),
        superseded: count(r.superseded),
        related: count(r.related),
        calls: r.calls,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost_usd: r.cost_usd,
        stopped: r.stopped,
        details: r
            .details
            .into_iter()
            .map(|w| DistillWindow {
                window: w.window,
                requests: count(w.requests),
                proposed: count(w.proposed),
                kept: w
                    .kept
                    .iter()
                    .map(|a| {
                        let (action, other, similarity) = match a {
                            Action::Created { .. } => ("created", None, None),
                            Action::Merged { similarity, .. } => {
                                ("merged", None, Some(*similarity))
                            }
                            Action::Superseded { replaced, .. } => {
                                ("superseded", Some(replaced.as_str().to_owned()), None)
                            }
                            Action::Related { to, similarity, .. } => {
                                ("related", Some(to.as_str().to_owned()), Some(*similarity))
                            }
                            Action::Contested {
                                with, similarity, ..
                            } => (
                                "contested",
                                Some(with.as_str().to_owned()),
                                Some(*similarity),
                            ),
                        };
                        let item = a.item();
                        DistillKept {
                            action: action.into(),
                            id: item.id.as_str().to_owned(),
                            kind: kind_name(&item.kind),
                            title: item.title.clone(),
                            other,
                            similarity,
                        }
                    })
                    .collect(),
                dropped: w
                    .dropped
                    .into_iter()
                    .map(|d| DistillDropped {
                        title: d.title,
                        kind: d.kind,
                        reason: d.reason,
                    })
                    .collect(),
                invalid: w.invalid,
            })
            .collect(),
    }
}

fn call_error(e: CallError) -> ApiError {
    ApiError::new(ErrorCode::Internal, e.to_string())
}

/// The distillation worker: every 30 minutes, when the machine is quiet, distils every
/// settled window (within the day's budget).
pub(crate) fn spawn_distillation(
    service: Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let board = service.workers().clone();
    let idle = if service.settings().llm.provider.is_empty() {
        "no model provider is set: conversations stay searchable, items wait".to_owned()
    } else {
        "distils settled conversations when the machine is quiet".to_owned()
    };
    board.report(DISTILLATION, WorkerState::Idle, Some(idle), None);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(CHECK_EVERY) => {}
                _ = shutdown.changed() => break,
            }
            if *shutdown.borrow() {
                break;
            }
            if !service.machine_is_quiet().await {
                continue;
            }
            match service.distill_settled(&|_, _| {}).await {
                Ok(r) if r.windows > 0 => tracing::info!(
                    windows = r.windows,
                    kept = r.items_kept,
                    dropped = r.items_dropped,
                    calls = r.calls,
                    "distilled settled conversations"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "distillation failed"),
            }
            service.sleep_if_due().await;
        }
    })
}

/// Sleep runs again once the last one is this old (the worker checks every 30 minutes).
const SLEEP_EVERY: chrono::Duration = chrono::Duration::hours(20);

impl Service {
    /// The `sleep_now` method: the nightly tidy-up at once (`cairn distill --sleep`).
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn sleep_now(
        &self,
        _: cairn_core::api::SleepReq,
    ) -> Result<cairn_core::api::SleepReport> {
        let started = std::time::Instant::now();
        let r = self.run_sleep().await?;
        Ok(sleep_to_api(r, started.elapsed()))
    }

    /// Runs sleep now (relate, re-score, archive, profiles), holding the write permit so
    /// Clear never interleaves with it, and journals it (the worker's once-a-day clock).
    pub async fn run_sleep(&self) -> Result<cairn_distill::SleepReport> {
        let d = match self.distiller().await {
            Ok(d) => d,
            // With no provider, sleep still relates, re-scores and archives; profiles wait.
            Err(_) if self.settings().llm.provider.is_empty() => {
                self.distiller_without_model().await
            }
            Err(e) => return Err(e),
        };
        self.workers().report(
            DISTILLATION,
            WorkerState::Running,
            Some("sleeping: relating, re-scoring, archiving, profiles".into()),
            None,
        );
        // Sleep relates the items through their points in the vector index: up to date first.
        if let Err(e) = self.sync_item_vectors().await {
            tracing::warn!(error = %e, "the items' vectors are not up to date; sleep relates what the index holds");
        }
        let result = {
            let _permit = self.write_permit().await;
            d.sleep(chrono::Utc::now()).await
        };
        let mut r = match result {
            Ok(r) => r,
            Err(e) => {
                self.workers().report(
                    DISTILLATION,
                    WorkerState::Failed,
                    Some(format!("sleep: {e}")),
                    None,
                );
                return Err(ApiError::new(ErrorCode::Internal, format!("sleep: {e}")));
            }
        };
        r.ranker = Some(self.train_ranker_nightly().await);
        self.store()
            .journal_sleep(&serde_json::json!({
                "active": r.active, "related": r.related, "rescored": r.rescored,
                "archived": r.archived.len(), "profiles": r.profiles.len(),
                "profiles_left": r.profiles_left, "calls": r.calls, "took_ms": r.took_ms,
                "ranker": r.ranker,
            }))
            .await?;
        let detail = format!(
            "slept: {} related, {} re-scored, {} archived, {} profile(s) rewritten{}; {}",
            r.related,
            r.rescored,
            r.archived.len(),
            r.profiles.len(),
            r.stopped
                .as_deref()
                .map(|w| format!("; profiles stopped: {w}"))
                .unwrap_or_default(),
            r.ranker.as_deref().unwrap_or_default()
        );
        self.workers()
            .report(DISTILLATION, WorkerState::Idle, Some(detail), None);
        if !r.archived.is_empty() {
            // Archived items leave the vector index now, not at the next search.
            self.wake_indexing();
        }
        Ok(r)
    }

    /// Sleep's nightly training of a personal turn-note ranker on this machine's labelled
    /// turn notes (`cairn_turn::personal::nightly`): what it did, in a sentence. A failure
    /// is logged and said; it never fails the sleep.
    async fn train_ranker_nightly(&self) -> String {
        self.workers().report(
            DISTILLATION,
            WorkerState::Running,
            Some("sleeping: training a personal turn-note ranker when enough is labelled".into()),
            None,
        );
        let model = self.paths().ranker_model();
        match cairn_turn::personal::nightly(self.store(), &model).await {
            Ok(n) => {
                let said = n.describe();
                tracing::info!(ranker = %said, "nightly ranker training");
                said
            }
            Err(e) => {
                tracing::warn!(error = %e, "the nightly ranker training failed");
                format!("personal ranker: the training failed: {e}")
            }
        }
    }

    /// A distiller whose model calls fail at once, naming the missing provider.
    async fn distiller_without_model(&self) -> Distiller {
        let llm = Llm::new(
            Arc::new(cairn_llm::Unavailable::new(
                crate::llm_api::no_provider_message(),
            )),
            self.store().clone(),
            Policy::from_settings(&self.settings().llm),
        );
        self.with_models(llm).await
    }

    /// In the worker, once the machine is quiet: sleeps when the last sleep is at least 20
    /// hours old (or there was none).
    async fn sleep_if_due(&self) {
        match self.store().last_sleep().await {
            Ok(Some(t)) if chrono::Utc::now() - t < SLEEP_EVERY => return,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot read when sleep last ran");
                return;
            }
        }
        match self.run_sleep().await {
            Ok(r) => tracing::info!(
                related = r.related,
                archived = r.archived.len(),
                profiles = r.profiles.len(),
                calls = r.calls,
                "slept"
            ),
            Err(e) => tracing::warn!(error = %e, "sleep failed"),
        }
    }
}

/// A sleep as the API reports it.
pub fn sleep_to_api(r: cairn_distill::SleepReport, took: Duration) -> cairn_core::api::SleepReport {
    cairn_core::api::SleepReport {
        active: count(r.active),
        related: count(r.related),
        rescored: count(r.rescored),
        archived: r.archived.iter().map(|i| i.as_str().to_owned()).collect(),
        profiles: r.profiles,
        profiles_unchanged: count(r.profiles_unchanged),
        profiles_left: count(r.profiles_left),
        calls: r.calls,
        cost_usd: r.cost_usd,
        stopped: r.stopped,
        took_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        ranker: r.ranker,
    }
}
