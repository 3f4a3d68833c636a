//! The domain types of the two logs: records (short-term) and item events (long-term).
use serde::{Deserialize, Serialize};

use crate::{ItemId, RecordId};

/// A point in time, always UTC.
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// How a captured turn ended. Consolidation needs it: procedures learned from a failed
/// request are never kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The turn completed normally.
    Success,
    /// The turn ended in an error.
    Error,
    /// The user or the agent stopped the turn.
    Interrupted,
    /// The source does not say.
    Unknown,
}

impl Outcome {
    /// The stable name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Error => "error",
            Outcome::Interrupted => "interrupted",
            Outcome::Unknown => "unknown",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "success" => Outcome::Success,
            "error" => Outcome::Error,
            "interrupted" => Outcome::Interrupted,
            "unknown" => Outcome::Unknown,
            _ => return None,
        })
    }
}

/// A record to append to the short-term log: one user request with everything the agent
/// did for it, kept whole. `content` is already scrubbed of secrets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRecord {
    /// Stable id from (framework, session, message id).
    pub id: RecordId,
    /// The framework that produced it (`claude-code`, `codex`, …).
    pub framework: String,
    /// The framework's own session id.
    pub session_id: String,
    /// Project identity (git common dir or remote, else the path).
    pub project: Option<String>,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// How the turn ended.
    pub outcome: Outcome,
    /// When the request was made.
    pub started_at: Timestamp,
    /// When the last reply or tool step of the turn was seen.
    pub ended_at: Option<Timestamp>,
    /// The user's request as text.
    pub request: String,
    /// Who made the request, when the source names them (a speaker of a conversation);
    /// `None` for the agent's own user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The whole turn as searchable text (request, replies, tool calls and results).
    pub text: String,
    /// The whole turn as structured JSON (messages and tool steps), for display.
    pub content: serde_json::Value,
    /// Where it was read from (a file path or a store key), for provenance.
    pub source: Option<String>,
}

/// A record as stored, with its position in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Position in the append-only log (monotonic).
    pub seq: i64,
    /// When Cairn stored it.
    pub captured_at: Timestamp,
    /// What was stored.
    #[serde(flatten)]
    pub record: NewRecord,
}

/// A piece of a long record, indexed for search. The record itself stays whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// The record it belongs to.
    pub record_id: RecordId,
    /// Its position within the record, from 0.
    pub ord: u32,
    /// Byte offset of the chunk's start within the record's text.
    pub start: u32,
    /// The chunk's text.
    pub text: String,
}

/// The kinds of typed memory items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// Something true about the world, the project or the user.
    Fact,
    /// A choice that was made, with its reason.
    Decision,
    /// How to do something, learned from a request that succeeded.
    Procedure,
    /// A trap that was hit and how to avoid it.
    Pitfall,
    /// How a system is built.
    Architecture,
    /// How the user likes things done.
    Preference,
    /// Something that happened, with when it happened and when it was mentioned.
    Observation,
    /// A request kept as a whole when no typed item came from it.
    Episode,
    /// A piece of code worth keeping.
    Snippet,
}

/// How sure the source was of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Certainty {
    /// Said outright.
    Stated,
    /// Read between the lines.
    Inferred,
    /// Disputed in the conversation.
    Contested,
    /// Unclear.
    Ambiguous,
}

/// The current state of a typed memory item, derived from its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Stable id.
    pub id: ItemId,
    /// The kind.
    pub kind: ItemKind,
    /// A short title.
    pub title: String,
    /// The short summary that is its search key.
    pub summary: String,
    /// The full body.
    pub body: String,
    /// Made-up future requests that would need this item.
    pub cues: Vec<String>,
    /// Concepts it is about.
    pub concepts: Vec<String>,
    /// 1 to 5.
    pub importance: u8,
    /// How sure the source was.
    pub certainty: Certainty,
    /// Project identity, when it belongs to one.
    pub project: Option<String>,
    /// Records it came from.
    pub sources: Vec<RecordId>,
    /// When the thing happened (observations, lasting things' start).
    pub happened_at: Option<Timestamp>,
    /// When it was said: the time of its newest source request.
    #[serde(default)]
    pub said_at: Option<Timestamp>,
    /// When a lasting thing ended.
    pub ended_at: Option<Timestamp>,
    /// The item that replaced it, when superseded.
    pub superseded_by: Option<ItemId>,
    /// Archived items leave the active index; nothing is deleted from the log.
    pub archived: bool,
}

/// What an event in the long-term log did to its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemEventKind {
    /// The item was distilled for the first time.
    Created,
    /// Another item was merged into it; the body keeps every fact of both.
    Merged,
    /// It was updated by newer information.
    Updated,
    /// It was replaced by another item (contradiction or newer version).
    Superseded,
    /// It left the active index.
    Archived,
    /// It came back into the active index.
    Restored,
    /// It was shown to an agent or opened (feeds priority).
    Used,
}

impl ItemEventKind {
    /// The stable name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemEventKind::Created => "created",
            ItemEventKind::Merged => "merged",
            ItemEventKind::Updated => "updated",
            ItemEventKind::Superseded => "superseded",
            ItemEventKind::Archived => "archived",
            ItemEventKind::Restored => "restored",
            ItemEventKind::Used => "used",
        }
    }
}

/// An event to append to the long-term log. Each event carries the item's whole state after
/// it, so the current state of an item is its latest event and history is never rewritten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewItemEvent {
    /// What happened.
    pub kind: ItemEventKind,
    /// The item's state after the event.
    pub item: Item,
    /// Why, in a few words (for the history view).
    pub reason: Option<String>,
}

/// An event as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemEvent {
    /// Position in the append-only log.
    pub seq: i64,
    /// When it was appended.
    pub at: Timestamp,
    /// What was appended.
    #[serde(flatten)]
    pub event: NewItemEvent,
}

/// How two items relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    /// Neighbours by meaning.
    Related,
    /// One replaced the other.
    Supersedes,
    /// They disagree.
    Contradicts,
}

/// An edge of the concept graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    /// One end.
    pub from: ItemId,
    /// The other end.
    pub to: ItemId,
    /// How they relate.
    pub kind: RelationKind,
    /// Similarity or confidence, 0 to 1.
    pub weight: f32,
}

/// Which part of an item or record a stored vector embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorKind {
    /// An item's summary (its search key).
    Summary,
    /// A chunk of a record's or item's body.
    Chunk,
    /// One of an item's cues.
    Cue,
}

impl VectorKind {
    /// The stable name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorKind::Summary => "summary",
            VectorKind::Chunk => "chunk",
            VectorKind::Cue => "cue",
        }
    }
}

/// How far capture has read one session file or store. Persisted after each pass, so a
/// re-run never duplicates and never misses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureCursor {
    /// The framework (`claude-code`, …).
    pub source: String,
    /// The file or store, as an absolute path.
    pub path: String,
    /// The file's identity when it was read (device and inode, or a fingerprint of its
    /// first bytes), so a replaced file is read again from the start.
    pub file_key: Option<String>,
    /// The file's size when it was read (a smaller size means it was truncated).
    pub size: u64,
    /// Byte offset after the last complete line consumed (line stores).
    pub offset: u64,
    /// Modification time when it was read (RFC 3339; whole-file stores).
    pub mtime: Option<String>,
    /// The store's own high-water mark (SQLite stores).
    pub high_water: Option<String>,
    /// The parser's saved state (line stores), to resume at `offset`.
    pub state: Option<serde_json::Value>,
}
