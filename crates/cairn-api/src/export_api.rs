//! Export and import (`export_run`, `import_run`): the archive itself is
//! `cairn-export::archive`; here the service hands it the store and the notes, shows its
//! progress on the worker board (`transfer`), and after an import brings the keyword and
//! vector indexes up to the records it added.
use std::time::Instant;

use cairn_core::api::{ExportReport, ExportReq, ImportReport, ImportReq, WorkerState};

use crate::{Result, Service};

/// The worker name long exports and imports report progress under.
pub(crate) const TRANSFER: &str = "transfer";

impl Service {
    fn transfer_done(&self, detail: String, ok: bool) {
        let state = if ok {
            WorkerState::Idle
        } else {
            WorkerState::Failed
        };
        self.workers().report(TRANSFER, state, Some(detail), None);
    }

    /// The `export_run` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn export_run(&self, req: ExportReq) -> Result<ExportReport> {
        let progress = |detail, frac| self.transfer_progress(detail, frac);
        let res = self.archive(&progress)?.export(&req).await;
        match &res {
            Ok(r) => self.transfer_done(format!("exported {} files to {}", r.files, r.dir), true),
            Err(e) => self.transfer_done(format!("export failed: {e}"), false),
        }
        Ok(res?)
    }

    /// The `import_run` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn import_run(&self, req: ImportReq) -> Result<ImportReport> {
        let res = self.import_inner(req).await;
        match &res {
            Ok(r) => self.transfer_done(
                format!(
                    "imported {} records, {} item events, {} notes",
                    r.records.added, r.item_events.added, r.notes.added
                ),
                true,
            ),
            Err(e) => self.transfer_done(format!("import failed: {e}"), false),
        }
        res
    }

    async fn import_inner(&self, req: ImportReq) -> Result<ImportReport> {
        let started = Instant::now();
        let progress = |detail, frac| self.transfer_progress(detail, frac);
        let mut report = self.archive(&progress)?.import(&req).await?;
        if report.notes.added > 0 {
            self.notes_state().changed();
        }
        if report.records.added > 0 {
            self.sync_index().await?;
            if self.is_direct() {
                if let Err(e) = self.sync_dense().await {
                    tracing::warn!(error = %e, "embedding imported records failed; they are searchable by keyword");
                }
            } else {
                self.wake_indexing();
            }
        }
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(report)
    }

    fn transfer_progress(&self, detail: String, frac: Option<f32>) {
        self.workers()
            .report(TRANSFER, WorkerState::Running, Some(detail), frac);
    }

    fn archive<'a>(
        &'a self,
        progress: &'a (dyn Fn(String, Option<f32>) + Send + Sync),
    ) -> Result<cairn_export::Archive<'a>> {
        Ok(cairn_export::Archive {
            store: self.store(),
            notes: self.notes()?,
            progress,
        })
    }
}
