//! The turn note's ranker as Settings shows it: which model is in use (the shipped one or a
//! personal one trained on this machine's own use by `cairn ranker train --from-store`), its
//! bar and figures, and going back to the shipped one.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A model's figures at its bar (from the figures written when it was trained).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct RankerFigures {
    /// The bar: an entry is shown when its probability is at least this.
    pub bar: f64,
    /// Cross-fitted ROC AUC over the candidates it was measured on.
    pub auc: Option<f64>,
    /// Of the entries its notes show at the bar, the share needed.
    pub precision: Option<f64>,
    /// Of the requests needing an entry, the share whose note shows a needed one.
    pub hit_rate: Option<f64>,
    /// Of the requests needing none, the share with no note.
    pub silence: Option<f64>,
    /// Requests the notes were measured on.
    #[ts(type = "number | null")]
    pub requests: Option<u64>,
}

/// Which model the turn note uses (`ranker_status`, `ranker_reset`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct RankerStatus {
    /// `shipped` or `personal`.
    pub model: String,
    /// The bar the turn note shows entries at.
    pub bar: f64,
    /// Its figures, when known.
    pub figures: Option<RankerFigures>,
    /// What a personal model was trained on (`store`: this machine's turn notes; `file`: a
    /// labelled file).
    pub source: Option<String>,
    /// When a personal model was trained (RFC 3339), when known.
    pub trained_at: Option<String>,
    /// For a personal model trained on this machine's turn notes: the shipped model's
    /// figures on the same turns, at its own bar.
    pub shipped: Option<RankerFigures>,
    /// The personal model's file (whether or not one is there).
    pub path: String,
    /// Why a personal model file present is not used (trained on other inputs, unreadable).
    pub problem: Option<String>,
    /// Sleep's nightly training of a personal model: its rule, and the latest training and
    /// what came of it, or that it is off because the shipped model was chosen.
    pub nightly: String,
}
