//! The replay: the turn note measured on the user's own captured history. Each captured
//! request is asked again as its hook would have asked at that moment, and labelled from
//! what its answer went on to reuse of earlier sessions (`docs/replay.md`).
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Run the replay over the store (`replay_run`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ReplayReq {
    /// Only requests made on or after this date (YYYY-MM-DD or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only requests made on or before this date (YYYY-MM-DD: to its end; or RFC 3339).
    #[serde(default)]
    pub until: Option<String>,
    /// Only this project's requests.
    #[serde(default)]
    pub project: Option<String>,
    /// At most this many requests: the latest in range (asked oldest first).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Answer with every request's labels too (`rows`).
    #[serde(default)]
    pub rows: bool,
}

/// One way of choosing entries, measured over the replayed requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReplayFigures {
    /// Requests asked.
    #[ts(type = "number")]
    pub requests: u64,
    /// Share of requests that needed an earlier session (by the label rule).
    pub need: Option<f64>,
    /// Of the requests that needed one, the share whose entries hold a needed record or an
    /// item sourced from one.
    pub hit_rate: Option<f64>,
    /// Share of shown entries that are needed.
    pub precision: Option<f64>,
    /// Of the requests that needed nothing, the share given nothing.
    pub silence_no_need: Option<f64>,
    /// Share of requests given at least one entry.
    pub note_rate: Option<f64>,
    /// Median milliseconds per answer.
    pub p50_ms: Option<f64>,
    /// 95th percentile.
    pub p95_ms: Option<f64>,
}

/// One replayed request and its labels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReplayRow {
    /// The request's record id.
    pub id: String,
    /// The request's text.
    pub request: String,
    /// When it was made (RFC 3339): the time it is asked at.
    pub at: String,
    /// Its session.
    pub session: String,
    /// Its framework.
    pub framework: String,
    /// What it needed: earlier-session record ids, then ids of items sourced from them.
    pub needed: Vec<String>,
    /// The identifiers its answer reused from those records.
    pub reused: Vec<String>,
    /// What the turn note showed (ids).
    pub shown: Vec<String>,
    /// What plain search's top 3 held (ids).
    pub baseline: Vec<String>,
}

/// The replay's figures: the turn note, and plain search's top 3 as the baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReplayReport {
    /// When it ran (RFC 3339).
    pub ran_at: String,
    /// The range asked for, as given.
    pub since: Option<String>,
    /// The range's end, as given.
    pub until: Option<String>,
    /// The project asked for.
    pub project: Option<String>,
    /// The turn note's figures (flat in the JSON: `requests`, `need`, `hit_rate`, …).
    #[serde(flatten)]
    pub note: ReplayFigures,
    /// Plain search of the request (top 3), under the same time constraints.
    pub baseline: ReplayFigures,
    /// Requests that needed an earlier session.
    #[ts(type = "number")]
    pub needed: u64,
    /// The most records an identifier may be found in and still count as rare.
    #[ts(type = "number")]
    pub rare_max: u64,
    /// Records read to build the identifier index.
    #[ts(type = "number")]
    pub records: u64,
    /// How long the replay took, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Every request with its labels, when asked for (`rows`); never kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<ReplayRow>,
}

/// The latest replay's figures (`replay_latest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReplayLatest {
    /// None when no replay has run.
    pub report: Option<ReplayReport>,
}
