//! # cairn-turn
//!
//! The turn note (DESIGN §1.6), the whole decision in one place: at the start of each agent
//! turn a hook asks for at most three short entries from the memory, or nothing, and this
//! crate decides which — and learns from what became of them. Read in this order:
//!
//! 1. `recall_at`: what the memory held when the turn was asked (records before it, items
//!    whose every source is before it, notes from their creation, the asking conversation
//!    out) — one rule for the note, the replay, `cairn eval note` and the ranker's training.
//! 2. `turn`: the pipeline ([`Memory::note`]): candidates from the retriever
//!    (`cairn-recall`) over those corpora, the share of the prompt's words the memory knows,
//!    the ranker's inputs, the ranker, the optional LLM judge (`judge`), the bar, the note
//!    framed in marks, and the turn written to the injection log.
//! 3. [`note`]: the ranker's inputs for each candidate ([`note::features`]), the bar and the
//!    choice ([`note::choose`]), and the note's framing ([`note::render`]).
//! 4. [`ranker`]: the LightGBM ranker over `lightgbm3` — the committed model in `ranker/`,
//!    training with cross-fitting by fold key, the bar chosen with the model
//!    ([`ranker::Chosen`]) and what a model learned ([`ranker::learned`]); [`status`]: which
//!    model the note ranks with (the shipped one or this machine's own) and going back;
//!    [`personal`]: this machine's own model, trained by hand or in sleep each night.
//! 5. [`log`]: the injection log read back (`note_log`, `note_why`) and people's labels on
//!    shown entries (`note_feedback`).
//! 6. [`outcomes`]: learning from use — after capture, each shown entry `used` or `ignored`,
//!    by [`reuse`]'s rule of what an answer reused, which the [`replay`] applies too: every
//!    captured request asked again at its own time and measured against what its answer
//!    reused.
//!
//! Why one crate: these change together. A new ranker input is a column of `note`, a value
//! the pipeline fills, a model retrained and shipped in `ranker/`, a row of the injection log
//! and of the personal model's training; a new rule of what the memory held at a turn's
//! time changes the note, the replay, the eval and the training rows at once; the labels
//! from use are one rule for the replay and the outcomes. None of it needs the service:
//! the host (`cairn-api`) gathers a [`Memory`] of explicit handles — the store, the indexes
//! and models it holds, the settings in effect and the note's [`TurnState`] — and calls in;
//! its write gates, worker board and dispatch table stay its own. No SQLite here: every
//! read and write goes through `cairn-store`.
#![deny(missing_docs)]

mod error;
mod judge;
pub mod log;
mod memory;
pub mod note;
pub mod outcomes;
pub mod personal;
pub mod ranker;
mod recall_at;
pub mod replay;
pub mod reuse;
pub mod status;
mod turn;

pub use error::{Error, Result};
pub use memory::{ItemsIndex, Memory, NotesIndex, TurnState};
pub use replay::labels_from_use;
pub use turn::Candidate;

#[cfg(test)]
mod crate_tests;

/// What the unit tests of several modules build alike.
#[cfg(test)]
pub(crate) mod testkit {
    /// A Claude Code record captured `minute` minutes after a fixed time, with no project.
    pub(crate) fn record(
        id: &str,
        session: &str,
        minute: i64,
        request: &str,
        text: &str,
        content: serde_json::Value,
    ) -> cairn_core::Record {
        let at =
            chrono::DateTime::from_timestamp(1_780_000_000 + minute * 60, 0).unwrap_or_default();
        cairn_core::Record {
            seq: minute,
            captured_at: at,
            record: cairn_core::NewRecord {
                id: cairn_core::RecordId::new(id),
                framework: "claude-code".into(),
                session_id: session.into(),
                project: None,
                cwd: None,
                model: None,
                outcome: cairn_core::Outcome::Success,
                started_at: at,
                ended_at: None,
                request: request.into(),
                author: None,
                text: text.into(),
                content,
                source: None,
            },
        }
    }
}
