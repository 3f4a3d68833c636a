//! The review inbox's methods (`review_list`, `review_act`, `review_undo`): the inbox itself
//! is `cairn-review`; here the service hands it the store and the notes, holds the write
//! permit while it acts or undoes, and tells the notes' search index when notes changed.
use cairn_core::api::{ReviewActReq, ReviewActionView, ReviewInbox, ReviewReq, ReviewUndoReq};

use crate::{Result, Service};

impl Service {
    /// The `review_list` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_list(&self, req: ReviewReq) -> Result<ReviewInbox> {
        let vectors_id = self.dense_parts().await.map(|d| d.vectors_id());
        let changed = || self.notes_state().changed();
        let inbox = self.inbox(&changed)?;
        Ok(inbox.list(&req, vectors_id.as_deref()).await?)
    }

    /// The `review_act` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_act(&self, req: ReviewActReq) -> Result<ReviewActionView> {
        let _permit = self.write_permit().await;
        let changed = || self.notes_state().changed();
        Ok(self.inbox(&changed)?.act(&req).await?)
    }

    /// The `review_undo` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_undo(&self, req: ReviewUndoReq) -> Result<ReviewActionView> {
        let _permit = self.write_permit().await;
        let changed = || self.notes_state().changed();
        Ok(self.inbox(&changed)?.undo(&req).await?)
    }

    fn inbox<'a>(
        &'a self,
        notes_changed: &'a (dyn Fn() + Send + Sync),
    ) -> Result<cairn_review::Inbox<'a>> {
        Ok(cairn_review::Inbox {
            store: self.store(),
            notes: self.notes()?,
            notes_changed,
        })
    }
}
