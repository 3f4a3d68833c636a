//! The turn note: what a hook asks for at the start of an agent turn, what the service
//! answers (one to three earlier things, or nothing), and the injection log behind it —
//! every note shown, why each entry was chosen, what became of each shown entry (used or
//! ignored by the agent's answer), and the labels people give, which train the next ranker.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One agent turn asking for its note (sent by `cairn hook`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct TurnNoteReq {
    /// The framework id, as `cairn integrate --list` names it (`claude-code`, `codex`, …).
    pub framework: String,
    /// The project identity of the turn's working directory.
    #[serde(default)]
    pub project: Option<String>,
    /// The agent's session id: that conversation's own records and items are left out.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The framework's id of this turn, when it gives one.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The user's message.
    pub prompt: String,
    /// The conversation's latest messages before this one, oldest first (optional: the
    /// service also reads the session's captured requests).
    #[serde(default)]
    pub context: Vec<String>,
    /// Compute and answer, but log nothing (the eval and the bench).
    #[serde(default)]
    pub dry_run: bool,
    /// When the turn happens (RFC 3339), to replay history: what was remembered after it
    /// is left out and ages count from it. Default: now.
    #[serde(default)]
    pub at: Option<String>,
}

/// One entry of a note: an earlier record, item or note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteEntry {
    /// Its id (`r_…`, `i_…`, or a note's path with `note:`), for `open`.
    pub id: String,
    /// `record`, `item` or `note`.
    pub kind: String,
    /// For an item: fact, decision, procedure, pitfall, …
    pub item_kind: Option<String>,
    /// A title (an item's title, a request's first line, a note's title).
    pub title: String,
    /// What the note says of it, at most 420 characters.
    pub text: String,
    /// When it happened or was said (RFC 3339).
    pub at: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// Its framework (records).
    pub framework: Option<String>,
    /// The ranker's probability that this turn needs it.
    pub probability: f32,
}

/// The service's answer: the note to inject, or none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TurnNote {
    /// The turn's id in the injection log (`t_…`; empty on a dry run).
    pub turn: String,
    /// The text to inject (wrapped in `<cairn-memory>` marks), or none.
    pub note: Option<String>,
    /// The entries shown.
    pub entries: Vec<NoteEntry>,
    /// The bar an entry had to reach (0.3 with a judge, 0.4 without, 0.7 for unknown names).
    pub bar: f32,
    /// Which judges answered in time (`cross-encoder`, `llm`).
    pub judged_by: Vec<String>,
    /// Why there is no note, when there is none (memory off, nothing above the bar, …).
    pub silent_because: Option<String>,
    /// How long the service took, in milliseconds.
    pub latency_ms: u32,
}

/// Ask for the injection log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct InjectionsReq {
    /// At most this many turns, newest first (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only turns that showed a note.
    #[serde(default)]
    pub shown_only: bool,
}

/// One named input of the ranker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct FeatureValue {
    /// The feature's name.
    pub name: String,
    /// Its value (absent: the signal was missing).
    pub value: Option<f32>,
}

/// One candidate of a logged turn, shown or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InjectionEntry {
    /// Its id.
    pub id: String,
    /// `record`, `item` or `note`.
    pub kind: String,
    /// For an item, its kind.
    pub item_kind: Option<String>,
    /// Its title.
    pub title: String,
    /// The ranker's probability.
    pub probability: f32,
    /// Whether the note showed it.
    pub shown: bool,
    /// The ranker's inputs for it.
    pub features: Vec<FeatureValue>,
    /// A person's label: `not_useful` or `useful`.
    pub label: Option<String>,
    /// For a shown entry, what became of it once the agent's answer was captured: `used`
    /// (the answer reused a rare identifier of it, or the agent opened it) or `ignored`;
    /// none while not yet known (and for entries not shown). A person's label wins over it.
    pub outcome: Option<String>,
    /// Why it was used, in a few words (the identifiers reused, or that it was opened).
    pub outcome_because: Option<String>,
}

/// One turn of the injection log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InjectionView {
    /// The turn's id (`t_…`).
    pub turn: String,
    /// When (RFC 3339).
    pub at: String,
    /// The framework that asked.
    pub framework: String,
    /// Its session.
    pub session_id: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// The user's message, scrubbed, at most 300 characters.
    pub prompt: String,
    /// Whether a note was shown.
    pub shown: bool,
    /// The bar.
    pub bar: f32,
    /// Which judges answered.
    pub judged_by: Vec<String>,
    /// Why it was silent.
    pub silent_because: Option<String>,
    /// Milliseconds the service took.
    pub latency_ms: u32,
    /// The best candidates (shown ones first), at most 10.
    pub entries: Vec<InjectionEntry>,
}

/// The latest `cairn eval note` figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteEvalFigures {
    /// When it ran (RFC 3339).
    pub at: String,
    /// The file it ran on.
    pub file: String,
    /// Share of questions that got a note.
    pub note_rate: f64,
    /// Share of questions whose note holds an evidence turn (or an item citing one).
    pub hit_rate: f64,
    /// Share of shown entries that are evidence.
    pub precision: f64,
    /// Share of foreign questions answered with no note.
    pub foreign_silence: f64,
    /// Questions asked.
    #[ts(type = "number")]
    pub n: u64,
    /// Median milliseconds per note.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
}

/// The injection log and its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct InjectionList {
    /// Turns, newest first.
    pub injections: Vec<InjectionView>,
    /// Turns logged in all.
    #[ts(type = "number")]
    pub turns: u64,
    /// Turns that showed a note.
    #[ts(type = "number")]
    pub shown: u64,
    /// Entries marked not useful.
    #[ts(type = "number")]
    pub not_useful: u64,
    /// Median service milliseconds over the logged turns.
    pub p50_ms: Option<f64>,
    /// 95th percentile.
    pub p95_ms: Option<f64>,
    /// The latest evaluation figures, when one was run.
    pub eval: Option<NoteEvalFigures>,
}

/// Ask why a turn's note said what it said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct WhyReq {
    /// The turn's id (`t_…`), or `last` for the latest turn.
    pub turn: String,
}

/// Mark an entry of a shown note.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteFeedbackReq {
    /// The turn (`t_…`, or `last`).
    pub turn: String,
    /// The entry's id.
    pub id: String,
    /// `not_useful` or `useful`; none removes the label.
    #[serde(default)]
    pub label: Option<String>,
}
