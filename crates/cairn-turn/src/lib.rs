//! # cairn-turn
//!
//! The turn note (DESIGN §1.6), the whole decision in one place: at the start of each agent
//! turn a hook asks for at most three short entries from the memory, or nothing, and this
//! crate decides which.
//!
//! - [`note`]: the ranker's inputs for each candidate ([`note::features`]), the bar and the
//!   choice ([`note::choose`]), and the note's framing ([`note::render`]).
//! - [`ranker`]: the LightGBM ranker over `lightgbm3` — the committed model in `ranker/`,
//!   training with cross-fitting by fold key, the bar chosen with the model ([`ranker::Chosen`])
//!   and what a model learned ([`ranker::learned`]).
//!
//! Why one crate: these change together. A new ranker input is a column of `note`, a
//! feature the pipeline fills, a model retrained and shipped in `ranker/`; a new rule of
//! what the memory held at a turn's time changes the note, the replay, the eval and the
//! training rows at once.
#![deny(missing_docs)]

pub mod note;
pub mod ranker;
