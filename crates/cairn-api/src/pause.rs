//! The memory switch's stored state and the pause in effect, which the service holds from
//! its start (the methods that change them are in `memory_api`).
use cairn_core::Timestamp;

/// The stored switch.
pub(crate) const MEMORY_KEY: &str = "memory.enabled";
/// The stored pause: `{"until": RFC 3339 | null}`, or null when not paused.
pub(crate) const PAUSE_KEY: &str = "memory.pause";

/// A pause in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pause {
    /// When it ends by itself; `None`: when resumed.
    pub until: Option<Timestamp>,
}

/// The pause in effect, shared by the service's clones, and a lock that serialises switches.
#[derive(Debug, Default)]
pub(crate) struct PauseState {
    slot: std::sync::Mutex<Option<Pause>>,
    /// Held while the switch changes, so switches never interleave.
    pub(crate) switching: tokio::sync::Mutex<()>,
    /// Wakes the pause timer when a pause starts or ends.
    pub(crate) changed: tokio::sync::Notify,
}

impl PauseState {
    /// Starts with the stored pause.
    pub(crate) fn new(pause: Option<Pause>) -> Self {
        Self {
            slot: std::sync::Mutex::new(pause),
            ..Default::default()
        }
    }

    /// The pause in effect.
    pub(crate) fn get(&self) -> Option<Pause> {
        *self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets the pause in effect, and wakes the pause timer.
    pub(crate) fn set(&self, pause: Option<Pause>) {
        *self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = pause;
        self.changed.notify_waiters();
    }

    /// Whether a pause has reached its end (memory is on again).
    pub(crate) fn expired(&self, now: Timestamp) -> bool {
        self.get()
            .and_then(|p| p.until)
            .is_some_and(|until| until <= now)
    }
}

/// Reads the stored pause (an unreadable one counts as none: the switch says off anyway).
pub(crate) async fn load_pause(store: &cairn_store::Store) -> Option<Pause> {
    match store.setting::<Option<Pause>>(PAUSE_KEY).await {
        Ok(found) => found.and_then(|(p, _)| p),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the stored pause; memory stays off until switched on");
            None
        }
    }
}
