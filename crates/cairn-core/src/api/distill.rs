//! Distillation: what a run did — windows distilled, items kept (and what became of each:
//! created, merged into a known item, superseding one, related to one), items dropped with
//! why, and the model calls it took.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Ask for a distillation run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct DistillReq {}

/// An item a window kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillKept {
    /// `created`, `merged`, `superseded`, `related` or `contested` (stated only by outside
    /// text and at odds with what the user or the agent stated: sent to the review inbox).
    pub action: String,
    /// The item (for `merged`, the known item it was merged into).
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its title.
    pub title: String,
    /// The item it superseded or is related to.
    pub other: Option<String>,
    /// Similarity of the summaries (merged, related).
    pub similarity: Option<f32>,
}

/// An item the rules dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillDropped {
    /// Its title.
    pub title: String,
    /// Its kind.
    pub kind: String,
    /// Why.
    pub reason: String,
}

/// One distilled window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillWindow {
    /// The window id.
    pub window: String,
    /// Requests in it.
    pub requests: u32,
    /// Items the model proposed.
    pub proposed: u32,
    /// Items kept.
    pub kept: Vec<DistillKept>,
    /// Items dropped.
    pub dropped: Vec<DistillDropped>,
    /// Set when the answer stayed invalid (the window is not asked again).
    pub invalid: Option<String>,
}

/// What a distillation run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillReport {
    /// Windows distilled.
    pub windows: u32,
    /// Settled windows left for later (budget spent, provider failing, memory off).
    pub left: u32,
    /// Items kept.
    pub items_kept: u32,
    /// Items dropped.
    pub items_dropped: u32,
    /// Kept as new items.
    pub created: u32,
    /// Merged into known items.
    pub merged: u32,
    /// Superseded a known item.
    pub superseded: u32,
    /// Related to a known item.
    pub related: u32,
    /// Model calls made.
    #[ts(type = "number")]
    pub calls: u64,
    /// Prompt tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Answer tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Money spent (US dollars; unknown costs count as 0).
    pub cost_usd: f64,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// Each window.
    pub details: Vec<DistillWindow>,
}

/// Ask to distil again over the log, with the current provider and prompts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct DistillRebuildReq {
    /// Only requests made from this date on (YYYY-MM-DD or RFC 3339); all when absent.
    #[serde(default)]
    pub since: Option<String>,
}

/// An item in a rebuild's diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillDiffItem {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its title.
    pub title: String,
}

/// What a rebuild changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct DistillRebuildReport {
    /// The distillation run.
    pub run: DistillReport,
    /// Items made that did not exist.
    pub added: Vec<DistillDiffItem>,
    /// Items found again whose content changed (same id).
    pub changed: Vec<DistillDiffItem>,
    /// Items not found again: archived (the log keeps them).
    pub dropped: Vec<DistillDiffItem>,
    /// Items found again unchanged.
    pub unchanged: u32,
}

/// Ask for the nightly tidy-up now (`cairn distill --sleep`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SleepReq {}

/// What a sleep did: neighbours related, items re-scored and archived, profiles rewritten.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct SleepReport {
    /// Active items at the start.
    pub active: u32,
    /// `related` edges added (neighbours from similarity 0.80).
    pub related: u32,
    /// Items re-scored (priority = importance × recency × use).
    pub rescored: u32,
    /// Items archived (low and unused for 180 days; the log keeps them).
    pub archived: Vec<String>,
    /// Subjects whose profile was rewritten (`project:<id>` or `machine`).
    pub profiles: Vec<String>,
    /// Subjects whose items did not change since their profile.
    pub profiles_unchanged: u32,
    /// Subjects left for another night (the nightly cap, the budget, the provider).
    pub profiles_left: u32,
    /// Model calls made.
    #[ts(type = "number")]
    pub calls: u64,
    /// Money spent (US dollars; unknown costs count as 0).
    pub cost_usd: f64,
    /// Why profiles stopped early, if they did.
    pub stopped: Option<String>,
    /// How long it took, in milliseconds.
    #[ts(type = "number")]
    pub took_ms: u64,
    /// What the nightly training of a personal turn-note ranker did, in a sentence.
    pub ranker: Option<String>,
}
