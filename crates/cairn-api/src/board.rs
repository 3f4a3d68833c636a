//! The board where background workers report what they are doing, for `status` and the
//! Activity view, and the names the workers report under.
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

/// The capture worker's name on the board.
pub(crate) const CAPTURE: &str = "capture";
/// The indexing worker's (embedding and the vector index).
pub(crate) const INDEXING: &str = "indexing";
/// The distillation worker's (distillation and sleep).
pub(crate) const DISTILLATION: &str = "distillation";
