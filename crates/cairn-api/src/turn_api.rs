//! The turn note's methods, as the host answers them: `turn_note`, `note_log`, `note_why`,
//! `note_feedback`, `replay_run`, `replay_latest`, `ranker_status`, `ranker_reset`, and the
//! outcome pass after capture. The decision is `cairn-turn`'s; each method here gathers the
//! handles it reads ([`Service::turn_memory`]) and calls it. What stays here is the host's:
//! loading the models in a one-shot CLI call, the write permit outcomes are recorded under,
//! the worker board the replay reports on, and the blocking pool for the ranker's files.
use std::sync::Arc;

use cairn_core::ErrorCode;
use cairn_core::api::{
    Empty, InjectionEntry, InjectionList, InjectionView, InjectionsReq, NoteFeedbackReq,
    RankerStatus, ReplayLatest, ReplayReport, ReplayReq, TurnNote, TurnNoteReq, WhyReq,
};
use cairn_turn::{Candidate, ItemsIndex, Memory, NotesIndex};

use crate::{ApiError, Result, Service};

/// The worker the replay reports its progress as.
const REPLAY: &str = "replay";

impl Service {
    /// What a turn reads, gathered now: the store, the indexes and models loaded, the
    /// settings in effect and the note's state. With memory off the items and notes are not
    /// gathered (every note is silent then).
    pub(crate) async fn turn_memory(&self) -> Result<Memory> {
        let memory_on = self.memory_enabled();
        let dense = self.dense_parts().await;
        let (items, notes) = if memory_on {
            let items: Arc<dyn ItemsIndex> = self.items_search().await?;
            let notes: Arc<dyn NotesIndex> = self.notes_search().await?;
            (Some(items), Some(notes))
        } else {
            (None, None)
        };
        Ok(Memory {
            store: self.store().clone(),
            paths: self.paths().clone(),
            llm: self.llm_settings(),
            memory_on,
            text: self.text_index(),
            vectors: dense.as_ref().map(|d| d.records()),
            embedder: dense.map(|d| d.embedder),
            reranker: self.reranker().await,
            items,
            notes,
            state: self.turn_state(),
        })
    }

    /// A one-shot CLI call has no indexing worker: it loads the models itself before a turn
    /// reads them.
    async fn models_for_turns(&self) {
        if self.is_direct() && self.memory_enabled() {
            self.ensure_models().await;
        }
    }

    /// The `turn_note` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn turn_note(&self, req: TurnNoteReq) -> Result<TurnNote> {
        Ok(self.turn_note_whole(req).await?.0)
    }

    /// The turn note and every candidate behind it (for the eval and ranker training).
    pub async fn turn_note_whole(&self, req: TurnNoteReq) -> Result<(TurnNote, Vec<Candidate>)> {
        self.models_for_turns().await;
        Ok(self.turn_memory().await?.note(req).await?)
    }

    /// The `note_log` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_log(&self, req: InjectionsReq) -> Result<InjectionList> {
        Ok(cairn_turn::log::list(self.store(), self.paths(), req).await?)
    }

    /// The `note_why` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_why(&self, req: WhyReq) -> Result<InjectionView> {
        Ok(cairn_turn::log::why(self.store(), req).await?)
    }

    /// The `note_feedback` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_feedback(&self, req: NoteFeedbackReq) -> Result<InjectionEntry> {
        Ok(cairn_turn::log::feedback(self.store(), req).await?)
    }

    /// Decides the outcome of every shown entry of the undecided noted turns whose answer is
    /// captured ([`cairn_turn::outcomes`]) and records them under the write permit, so a
    /// Clear never interleaves. Idempotent. Returns how many outcomes it recorded. The
    /// capture pass runs it after indexing what it stored.
    #[tracing::instrument(skip_all, err)]
    pub async fn decide_note_outcomes(&self) -> Result<u64> {
        if !self.memory_enabled() {
            return Ok(0);
        }
        let decided = cairn_turn::outcomes::decide(self.store(), self.text_index()).await?;
        if decided.is_empty() {
            return Ok(0);
        }
        let _permit = self.write_permit().await;
        Ok(cairn_turn::outcomes::record(self.store(), decided).await?)
    }

    /// The `replay_run` method ([`cairn_turn::replay`]); its progress is on the worker board
    /// as `replay`.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn replay_run(&self, req: ReplayReq) -> Result<ReplayReport> {
        if !self.memory_enabled() {
            return Err(ApiError::new(
                ErrorCode::MemoryOff,
                "memory is off: the turn note is stopped, so there is nothing to replay",
            ));
        }
        let since = req
            .since
            .as_deref()
            .map(|d| crate::service::parse_date(d, false))
            .transpose()?;
        let until = req
            .until
            .as_deref()
            .map(|d| crate::service::parse_date(d, true))
            .transpose()?;
        self.models_for_turns().await;
        let board = self.workers().clone();
        let progress = move |state, detail, done| board.report(REPLAY, state, detail, done);
        Ok(self
            .turn_memory()
            .await?
            .replay(&req, since, until, &progress)
            .await?)
    }

    /// The `replay_latest` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn replay_latest(&self, _: Empty) -> Result<ReplayLatest> {
        Ok(cairn_turn::replay::latest(self.paths()))
    }

    /// The `ranker_status` method.
    pub(crate) async fn ranker_status(&self, _: Empty) -> Result<RankerStatus> {
        let path = self.paths().ranker_model();
        tokio::task::spawn_blocking(move || cairn_turn::status::status(&path))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))
    }

    /// The `ranker_reset` method.
    pub(crate) async fn ranker_reset(&self, _: Empty) -> Result<RankerStatus> {
        let path = self.paths().ranker_model();
        Ok(
            tokio::task::spawn_blocking(move || cairn_turn::status::reset(&path))
                .await
                .map_err(|e| ApiError::internal(e.to_string()))??,
        )
    }

    /// A fresh nonce for the marks around a block Cairn injects (the session-start titles;
    /// the turn note makes its own), under this install's key ([`cairn_text::marks`]).
    pub(crate) fn mark_nonce(&self) -> Result<String> {
        cairn_text::marks::key_at(&self.paths().mark_key())
            .and_then(|k| k.nonce())
            .map_err(|e| ApiError::internal(format!("cannot mark the note: {e}")))
    }
}
