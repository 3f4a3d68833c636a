//! The turn note in the service: candidates from every corpus (the asking conversation's
//! own left out), the judges, the ranker, the note, and the injection log behind it.
use cairn_core::api::{
    InjectionEntry, InjectionList, InjectionView, InjectionsReq, NoteFeedbackReq, TurnNote,
    TurnNoteReq, WhyReq,
};

use crate::{ApiError, Result, Service};

impl Service {
    /// The `turn_note` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn turn_note(&self, _req: TurnNoteReq) -> Result<TurnNote> {
        Err(ApiError::internal("the turn note is not built yet"))
    }

    /// The `note_log` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_log(&self, _req: InjectionsReq) -> Result<InjectionList> {
        Err(ApiError::internal("the injection log is not built yet"))
    }

    /// The `note_why` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_why(&self, _req: WhyReq) -> Result<InjectionView> {
        Err(ApiError::internal("the injection log is not built yet"))
    }

    /// The `note_feedback` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn note_feedback(&self, _req: NoteFeedbackReq) -> Result<InjectionEntry> {
        Err(ApiError::internal("the injection log is not built yet"))
    }
}
