//! The board where background workers report what they are doing, for `status` and the
//! Activity view.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cairn_core::api::{WorkerState, WorkerStatus};

/// Shared, cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct WorkerBoard {
    inner: Arc<Mutex<BTreeMap<String, WorkerStatus>>>,
}

impl WorkerBoard {
    /// Sets a worker's state (and detail, when given).
    pub fn report(
        &self,
        name: &str,
        state: WorkerState,
        detail: Option<String>,
        progress: Option<f32>,
    ) {
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let entry = map.entry(name.to_owned()).or_insert_with(|| WorkerStatus {
            name: name.to_owned(),
            state,
            detail: None,
            progress: None,
            last_run: None,
        });
        if entry.state == WorkerState::Running && state != WorkerState::Running {
            entry.last_run =
                Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        }
        entry.state = state;
        entry.progress = progress;
        if detail.is_some() {
            entry.detail = detail;
        }
    }

    /// Every worker, by name.
    pub fn snapshot(&self) -> Vec<WorkerStatus> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

const MAINTENANCE: &str = "maintenance";
const MAINTENANCE_PERIOD: std::time::Duration = std::time::Duration::from_secs(600);

/// The maintenance worker: keeps the WAL short with a periodic checkpoint, so a crash or a
/// copy of the data folder never carries a long tail of un-merged pages.
pub(crate) fn spawn_maintenance(
    service: crate::Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let board = service.workers().clone();
    board.report(
        MAINTENANCE,
        WorkerState::Idle,
        Some("keeps the store compact".into()),
        None,
    );
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(MAINTENANCE_PERIOD) => {}
                _ = shutdown.changed() => break,
            }
            if *shutdown.borrow() {
                break;
            }
            board.report(MAINTENANCE, WorkerState::Running, None, None);
            let result = {
                let _permit = service.write_permit().await;
                service.store().checkpoint().await
            };
            match result {
                Ok(()) => board.report(
                    MAINTENANCE,
                    WorkerState::Idle,
                    Some("checkpointed the store".into()),
                    None,
                ),
                Err(e) => board.report(
                    MAINTENANCE,
                    WorkerState::Failed,
                    Some(format!("checkpoint failed: {e}")),
                    None,
                ),
            }
        }
    })
}
