//! # cairn-distill
//!
//! Distillation (DESIGN §1.2–1.3): a settled conversation window becomes typed memory items
//! in one model request, code decides what survives, and each survivor is reconciled with
//! what is already known — merged when it says the same, superseding what it updates or
//! contradicts (the old state stays in the item events log), related when near, new
//! otherwise. Items carry their own vectors (summary, cues, body chunks) in the store, so
//! the index is rebuilt with no model call.
//!
//! A window is settled when its session has been quiet for an hour or its oldest undistilled
//! request is a day old. [`Distiller::run`] distils every settled window (the worker calls it
//! when the machine is quiet; `cairn distill --now` calls it at once); it stops for the day
//! when the model budget is spent.
//!
//! Once a day, when the machine is quiet, [`Distiller::sleep`] tidies up (DESIGN §1.4):
//! relates neighbouring items, re-scores them, archives the old unused ones and rewrites the
//! profiles whose items changed (see [`sleep`] and [`profile`]).
#![deny(missing_docs)]

pub mod profile;
pub mod prompt;
pub mod provenance;
mod rebuild;
mod reconcile;
pub mod rules;
pub mod sleep;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_core::ports::Embedder;
use cairn_core::{ItemId, Record, Timestamp};
use cairn_llm::{CallError, Llm, Request};
use cairn_store::Store;
use serde::Serialize;

pub use profile::PROFILES_PER_NIGHT;
pub use rebuild::{DiffItem, RebuildReport};
pub use reconcile::{Action, item_vectors};
pub use rules::Dropped;
pub use sleep::SleepReport;

/// When a window is settled, and how large one model request may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    /// A session quiet this long is settled.
    pub quiet: Duration,
    /// Undistilled requests this old are settled even when the session goes on.
    pub max_age: Duration,
    /// The most request text (characters, after cutting long requests) in one window.
    pub max_window_chars: usize,
}

impl Default for Settle {
    fn default() -> Self {
        Self {
            quiet: Duration::from_secs(3_600),
            max_age: Duration::from_secs(86_400),
            max_window_chars: 48_000,
        }
    }
}

/// Requests of one session distilled together in one model request.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// The framework.
    pub framework: String,
    /// The session.
    pub session_id: String,
    /// The requests, in order.
    pub records: Vec<Record>,
}

impl Window {
    /// A stable id: the session and its first request.
    pub fn id(&self) -> String {
        let first = self.records.first().map_or("", |r| r.record.id.as_str());
        ItemId::derive(
            "window",
            &format!("{}/{}", self.framework, self.session_id),
            first,
        )
        .as_str()
        .replacen("i_", "w_", 1)
    }

    fn project(&self) -> Option<&str> {
        self.records
            .iter()
            .rev()
            .find_map(|r| r.record.project.as_deref())
    }
}

/// What distilling one window did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WindowReport {
    /// The window id.
    pub window: String,
    /// Requests in it.
    pub requests: usize,
    /// Items the model proposed.
    pub proposed: usize,
    /// What became of each item kept (created, merged, superseded, related).
    pub kept: Vec<Action>,
    /// Items dropped, with why.
    pub dropped: Vec<Dropped>,
    /// The window brought nothing usable (an invalid answer): it is not asked again.
    pub invalid: Option<String>,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunReport {
    /// Windows distilled.
    pub windows: usize,
    /// Settled windows left for later (budget spent, provider failing).
    pub left: usize,
    /// Items kept (created or merged into a known item).
    pub items_kept: usize,
    /// Items dropped by the rules.
    pub items_dropped: usize,
    /// Created / merged / superseding / related counts.
    pub created: usize,
    /// Merged into a known item.
    pub merged: usize,
    /// Superseded a known item.
    pub superseded: usize,
    /// Related to a known item.
    pub related: usize,
    /// Stated only by outside text and at odds with a known item the user or the agent
    /// stated: kept beside it, the pair sent to the review inbox.
    pub contested: usize,
    /// Model calls made (the ledger has each).
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Money spent (US dollars), when known.
    pub cost_usd: f64,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// Per window.
    pub details: Vec<WindowReport>,
}

impl RunReport {
    /// Counts one distilled window in.
    pub fn add(&mut self, r: WindowReport) {
        self.windows += 1;
        self.items_dropped += r.dropped.len();
        for a in &r.kept {
            self.items_kept += 1;
            match a {
                Action::Created { .. } => self.created += 1,
                Action::Merged { .. } => self.merged += 1,
                Action::Superseded { .. } => self.superseded += 1,
                Action::Related { .. } => self.related += 1,
                Action::Contested { .. } => self.contested += 1,
            }
        }
        self.details.push(r);
    }
}

/// Why distillation could not go on.
#[derive(Debug, thiserror::Error)]
pub enum DistillError {
    /// The store failed.
    #[error("the store: {0}")]
    Store(#[from] cairn_store::Error),
    /// The embedder failed.
    #[error("the embedder: {0}")]
    Embed(String),
    /// The items' vector index failed.
    #[error("the vector index: {0}")]
    Index(String),
    /// A model call failed.
    #[error(transparent)]
    Call(#[from] CallError),
}

/// Distils settled windows with one model provider.
#[derive(Clone)]
pub struct Distiller {
    store: Store,
    llm: Llm,
    embedder: Option<Arc<dyn Embedder>>,
    settle: Settle,
    /// The items' points of the vector index, which reconcile finds known items through and
    /// sleep relates items through, and the item-log seq up to which it holds them.
    items_index: Option<(Arc<dyn cairn_core::ports::VectorIndex>, i64)>,
}

impl std::fmt::Debug for Distiller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Distiller")
            .field("llm", &self.llm)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.model_id().to_owned()),
            )
            .field("settle", &self.settle)
            .finish()
    }
}

impl Distiller {
    /// A distiller over `store`, calling `llm`; with no `embedder`, reconcile recognises
    /// only items with the same title.
    pub fn new(
        store: Store,
        llm: Llm,
        embedder: Option<Arc<dyn Embedder>>,
        settle: Settle,
    ) -> Self {
        Self {
            store,
            llm,
            embedder,
            settle,
            items_index: None,
        }
    }

    /// Reconcile and sleep find items through `index` (the items' points of the service's
    /// vector index, kept up to date from the item log), which holds every active item's
    /// points as of item-log seq `through` (0: it may hold none). Reconcile compares each new
    /// item with the nearest known items the index finds and with every item changed after
    /// `through`, instead of with every item; each item sleep relates asks it for its nearest
    /// neighbours, instead of every pair of items being compared.
    #[must_use]
    pub fn with_items_index(
        mut self,
        index: Arc<dyn cairn_core::ports::VectorIndex>,
        through: i64,
    ) -> Self {
        self.items_index = Some((index, through.max(0)));
        self
    }

    /// What today's model calls used (the ledger).
    pub async fn today(&self) -> Result<cairn_store::LedgerTotals, CallError> {
        self.llm.today().await
    }

    /// The settled windows at `now`, oldest first.
    pub async fn settled_windows(&self, now: Timestamp) -> Result<Vec<Window>, DistillError> {
        self.windows(Some(now)).await
    }

    /// The most request text in one window: [`Settle::max_window_chars`], or less when the
    /// provider's context and measured pace call for smaller windows (a local model: it is
    /// measured first if it never was).
    pub async fn window_chars(&self) -> Result<usize, DistillError> {
        let template = Request {
            purpose: "consolidate".into(),
            system: prompt::CONSOLIDATE_SYSTEM.into(),
            prompt: prompt::window_prompt(&[]),
            schema: prompt::consolidate_schema(),
            max_tokens: 4_000,
        };
        let fitted = self.llm.window_chars(&template).await?;
        Ok(fitted.map_or(self.settle.max_window_chars, |c| {
            c.min(self.settle.max_window_chars)
        }))
    }

    /// Every window of requests not yet distilled, oldest first: only the settled ones at
    /// `now`, or all of them when `now` is `None` (a rebuild).
    pub(crate) async fn windows(
        &self,
        now: Option<Timestamp>,
    ) -> Result<Vec<Window>, DistillError> {
        let quiet = chrono::Duration::from_std(self.settle.quiet).unwrap_or(chrono::Duration::MAX);
        let max_age =
            chrono::Duration::from_std(self.settle.max_age).unwrap_or(chrono::Duration::MAX);
        let max_chars = self.window_chars().await?;
        let mut out = Vec::new();
        for s in self.store.pending_sessions().await? {
            if let Some(now) = now
                && now - s.last_at < quiet
                && now - s.first_at < max_age
            {
                continue;
            }
            let records = self
                .store
                .pending_records(&s.framework, &s.session_id)
                .await?;
            let mut window = Vec::new();
            let mut chars = 0usize;
            for r in records {
                let size = r.record.text.chars().count().min(prompt::PER_RECORD_CHARS);
                if !window.is_empty() && chars + size > max_chars {
                    out.push(Window {
                        framework: s.framework.clone(),
                        session_id: s.session_id.clone(),
                        records: std::mem::take(&mut window),
                    });
                    chars = 0;
                }
                chars += size;
                window.push(r);
            }
            if !window.is_empty() {
                out.push(Window {
                    framework: s.framework,
                    session_id: s.session_id,
                    records: window,
                });
            }
        }
        Ok(out)
    }

    /// Distils every settled window at `now`, oldest first; `progress` hears (done, total)
    /// after each. Stops when the day's budget is spent (the rest wait for tomorrow).
    pub async fn run(
        &self,
        now: Timestamp,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> Result<RunReport, DistillError> {
        let windows = self.settled_windows(now).await?;
        let before = self.llm.today().await?;
        let mut report = RunReport::default();
        let total = windows.len();
        for (i, w) in windows.iter().enumerate() {
            match self.distil(w).await {
                Ok(r) => report.add(r),
                Err(DistillError::Call(e)) => {
                    tracing::warn!(window = %w.id(), error = %e, "distillation stopped");
                    report.left = total - i;
                    report.stopped = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            }
            progress(i + 1, total);
        }
        let after = self.llm.today().await?;
        report.calls = after.calls.saturating_sub(before.calls);
        report.input_tokens = after.input_tokens.saturating_sub(before.input_tokens);
        report.output_tokens = after.output_tokens.saturating_sub(before.output_tokens);
        report.cost_usd = (after.cost_usd - before.cost_usd).max(0.0);
        Ok(report)
    }

    /// Distils one window: one model request, the rules, reconcile, and the window's
    /// requests marked as read. A provider failure leaves the window for later; an answer
    /// that stays invalid marks it read with no items (asking again would cost the same).
    pub async fn distil(&self, w: &Window) -> Result<WindowReport, DistillError> {
        let mut report = WindowReport {
            window: w.id(),
            requests: w.records.len(),
            ..WindowReport::default()
        };
        let request = Request {
            purpose: "consolidate".into(),
            system: prompt::CONSOLIDATE_SYSTEM.into(),
            prompt: prompt::window_prompt(&w.records),
            schema: prompt::consolidate_schema(),
            max_tokens: 4_000,
        };
        let proposed: Vec<rules::Proposed> = match self.llm.call(&request).await {
            Ok(answer) => match serde_json::from_value(answer.value["items"].clone()) {
                Ok(p) => p,
                Err(e) => {
                    report.invalid = Some(format!("the items could not be read: {e}"));
                    Vec::new()
                }
            },
            Err(CallError::Invalid { reason, .. }) => {
                report.invalid = Some(reason);
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        };
        report.proposed = proposed.len();
        let (kept, dropped) = rules::survivors(proposed, &w.records, w.project());
        report.dropped = dropped;
        let actions = reconcile::reconcile(self, kept).await?;
        let mut per_record: HashMap<&str, u32> = HashMap::new();
        for a in &actions {
            for s in &a.item().sources {
                *per_record.entry(s.as_str()).or_default() += 1;
            }
        }
        let marks: Vec<_> = w
            .records
            .iter()
            .map(|r| {
                let n = per_record.get(r.record.id.as_str()).copied().unwrap_or(0);
                (r.record.id.clone(), n)
            })
            .collect();
        self.store.mark_distilled(&report.window, &marks).await?;
        report.kept = actions;
        Ok(report)
    }
}
