//! What capture must never remember again: everything before the last Clear, and whatever
//! happened while memory was off or paused.
//!
//! The store builds a [`Forgetting`] from its journal (content-free: times and record ids,
//! which are hashes) and capture asks it about every turn before anything is written, so a
//! Clear sticks across later passes, restarts, rewritten session files and stores re-read
//! from scratch.
use std::collections::HashSet;

use crate::{RecordId, Timestamp};

/// Why a turn is not remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forgotten {
    /// It happened before the last Clear (or was removed by one).
    Cleared,
    /// It happened while memory was off or paused.
    MemoryOff,
}

impl Forgotten {
    /// A short reason, as capture reports count it.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Cleared => "forgotten by Clear",
            Self::MemoryOff => "while memory was off",
        }
    }
}

/// The periods and ids capture must skip.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgetting {
    /// The last Clear: turns that started before it are never captured again.
    pub cleared_at: Option<Timestamp>,
    /// Periods when memory was off or paused, `[from, to)`; `to` is `None` while it lasts.
    pub off: Vec<(Timestamp, Option<Timestamp>)>,
    /// The records a Clear removed (ids are hashes, never content): skipped whatever their
    /// timestamp says, so a rewritten file or a turn without a timestamp stays forgotten.
    pub ids: HashSet<String>,
}

impl Forgetting {
    /// Whether a turn with this record id that started at `at` must be skipped, and why.
    pub fn skips(&self, id: &RecordId, at: Timestamp) -> Option<Forgotten> {
        if self.cleared_at.is_some_and(|c| at < c) || self.ids.contains(id.as_str()) {
            return Some(Forgotten::Cleared);
        }
        if self
            .off
            .iter()
            .any(|(from, to)| at >= *from && to.is_none_or(|t| at < t))
        {
            return Some(Forgotten::MemoryOff);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|d| d.with_timezone(&chrono::Utc))
            .unwrap_or_default()
    }

    #[test]
    fn skips_before_clear_in_off_periods_and_forgotten_ids() {
        let id = RecordId::derive("codex", "s", "m1");
        let other = RecordId::derive("codex", "s", "m2");
        let f = Forgetting {
            cleared_at: Some(t("2026-05-01T10:00:00Z")),
            off: vec![
                (t("2026-05-02T10:00:00Z"), Some(t("2026-05-02T12:00:00Z"))),
                (t("2026-05-03T10:00:00Z"), None),
            ],
            ids: [id.as_str().to_owned()].into_iter().collect(),
        };
        assert_eq!(
            f.skips(&other, t("2026-05-01T09:59:59Z")),
            Some(Forgotten::Cleared)
        );
        assert_eq!(f.skips(&other, t("2026-05-01T10:00:00Z")), None);
        // A forgotten id stays forgotten even with a later timestamp.
        assert_eq!(
            f.skips(&id, t("2026-06-01T00:00:00Z")),
            Some(Forgotten::Cleared)
        );
        assert_eq!(
            f.skips(&other, t("2026-05-02T11:00:00Z")),
            Some(Forgotten::MemoryOff)
        );
        assert_eq!(f.skips(&other, t("2026-05-02T12:00:00Z")), None);
        assert_eq!(
            f.skips(&other, t("2026-05-04T00:00:00Z")),
            Some(Forgotten::MemoryOff)
        );
        assert_eq!(
            Forgetting::default().skips(&id, t("2000-01-01T00:00:00Z")),
            None
        );
    }
}
