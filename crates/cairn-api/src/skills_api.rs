//! Skills export (`skills_preview`, `skills_write`): a project's procedures and pitfalls in
//! a marked section of each framework's instruction file, made and spliced by
//! `cairn-export::skills` from the service's store.
use cairn_core::api::{SkillsPreview, SkillsReq};

use crate::{Result, Service};

impl Service {
    /// The `skills_preview` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn skills_preview(&self, req: SkillsReq) -> Result<SkillsPreview> {
        Ok(cairn_export::skills::preview(self.store(), &req).await?)
    }

    /// The `skills_write` method: sets (or removes) Cairn's section; the rest of the file is
    /// kept byte for byte.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn skills_write(&self, req: SkillsReq) -> Result<SkillsPreview> {
        Ok(cairn_export::skills::write(self.store(), &req).await?)
    }
}
