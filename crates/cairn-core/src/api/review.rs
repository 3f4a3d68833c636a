//! The review inbox: what may be wrong with what Cairn remembers — likely duplicates,
//! contradictions, stale items and junk — each with one-click actions (merge, supersede,
//! archive, keep), every action logged and undoable.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Ask for the inbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ReviewReq {
    /// Only this project's entries.
    #[serde(default)]
    pub project: Option<String>,
    /// Only this category: `duplicate`, `contradiction`, `stale` or `junk`.
    #[serde(default)]
    pub category: Option<String>,
    /// At most this many entries (200 by default, 1,000 at most).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// One thing an entry is about: an item, a stored record (a turn) or a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewSubject {
    /// The item's id (`i_…`), the record's (`r_…`) or the note's (`n_…`).
    pub id: String,
    /// `item`, `record` or `note`.
    pub kind: String,
    /// An item's kind (fact, decision, …); a record's framework; a note's scope.
    pub subkind: String,
    /// Its title (a record's request, a note's path).
    pub title: String,
    /// Its summary, the start of a record's turn, or the start of a note.
    pub text: String,
    /// Its project.
    pub project: Option<String>,
    /// When it was said or last written (RFC 3339).
    pub at: Option<String>,
    /// An item's importance (1 to 5).
    pub importance: Option<u8>,
    /// A record's session id (its framework is `subkind`): where the record opens.
    pub session: Option<String>,
}

/// One entry of the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewEntry {
    /// Its stable key (`duplicate:i_a:i_b`, `stale:i_c`, …): the same finding keeps it.
    pub key: String,
    /// `duplicate`, `contradiction`, `stale` or `junk`.
    pub category: String,
    /// Why it is here, in a sentence.
    pub reason: String,
    /// How sure the finding is, 0 to 1 (similarity for pairs).
    pub score: f32,
    /// What it is about: two for duplicates and contradictions, one otherwise. The first is
    /// the one Cairn suggests keeping. Both of a pair are of one kind (items, records or
    /// notes); records offer only `archive` (out of search and the turn note, kept in the
    /// log) and `keep`.
    pub subjects: Vec<ReviewSubject>,
    /// The actions it offers: `merge`, `supersede`, `archive`, `keep`.
    pub actions: Vec<String>,
}

/// The counts of each category.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewCounts {
    /// Likely duplicates.
    pub duplicate: u32,
    /// Contradictions.
    pub contradiction: u32,
    /// Stale items.
    pub stale: u32,
    /// Junk.
    pub junk: u32,
}

/// One action taken on the inbox, as its log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewActionView {
    /// Its id (`rv_…`), for `review_undo`.
    pub id: String,
    /// When (RFC 3339).
    pub at: String,
    /// The entry's key.
    pub entry: String,
    /// The entry's category.
    pub category: String,
    /// `merge`, `supersede`, `archive` or `keep`.
    pub action: String,
    /// What it did, in a sentence.
    pub summary: String,
    /// The items and notes it changed.
    pub changed: Vec<String>,
    /// When it was undone (RFC 3339).
    pub undone_at: Option<String>,
}

/// The inbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewInbox {
    /// Entries: contradictions first, then duplicates, stale items and junk; strongest first.
    pub entries: Vec<ReviewEntry>,
    /// How many of each category there are (before `limit`).
    pub counts: ReviewCounts,
    /// The latest actions, newest first (undo them from here).
    pub recent: Vec<ReviewActionView>,
    /// Projects (or folders) whose working tree is not on this machine, or too large to read
    /// whole: their items are not judged stale.
    pub unchecked_projects: Vec<String>,
}

/// Act on an entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ReviewActReq {
    /// The entry's key, as the inbox gave it.
    pub entry: String,
    /// `merge`, `supersede`, `archive` or `keep`.
    pub action: String,
    /// For a pair: the subject that stays (the first subject by default). `merge` folds the
    /// other into it, `supersede` marks the other replaced by it, `archive` archives the
    /// other. For one subject, ignored.
    #[serde(default)]
    pub keep: Option<String>,
}

/// Undo an action.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ReviewUndoReq {
    /// The action's id (`rv_…`).
    pub action: String,
}
