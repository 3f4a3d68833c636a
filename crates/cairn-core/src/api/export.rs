//! Export and import: everything remembered written to a folder in open formats (Markdown
//! for notes and items, JSONL for records and item events, a manifest with a sha256 per
//! file), and read back into another Cairn with nothing lost or duplicated.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Export into a folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ExportReq {
    /// The folder to write (created; an existing one must be empty).
    pub dir: String,
    /// Only this project's records, items and notes.
    #[serde(default)]
    pub project: Option<String>,
    /// Only what happened on or after this date (`2026-08-20`) or time (RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ExportReport {
    /// The folder written (absolute).
    pub dir: String,
    /// Record revisions written.
    #[ts(type = "number")]
    pub records: u64,
    /// Item events written.
    #[ts(type = "number")]
    pub item_events: u64,
    /// Items written (one Markdown file each).
    #[ts(type = "number")]
    pub items: u64,
    /// Relations between the exported items.
    #[ts(type = "number")]
    pub relations: u64,
    /// Notes written (live ones as Markdown files; deleted ones in the versions only).
    #[ts(type = "number")]
    pub notes: u64,
    /// Note versions written.
    #[ts(type = "number")]
    pub note_versions: u64,
    /// Files written, the manifest included.
    #[ts(type = "number")]
    pub files: u64,
    /// Bytes written.
    #[ts(type = "number")]
    pub bytes: u64,
    /// How long it took.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// Import a folder an export wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ImportReq {
    /// The folder.
    pub dir: String,
}

/// What an import did with one kind of thing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ImportCounts {
    /// New: stored.
    #[ts(type = "number")]
    pub added: u64,
    /// Stored already as they are: skipped.
    #[ts(type = "number")]
    pub duplicates: u64,
    /// Stored already with other content: the stored one kept.
    #[ts(type = "number")]
    pub conflicts: u64,
}

/// What an import did. A malformed export is refused whole (an error naming the file and
/// line), so a report always means every file was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ImportReport {
    /// The folder read (absolute).
    pub dir: String,
    /// Record revisions.
    pub records: ImportCounts,
    /// Item events.
    pub item_events: ImportCounts,
    /// Relations between items.
    pub relations: ImportCounts,
    /// Notes (with their versions).
    pub notes: ImportCounts,
    /// What conflicted, by kind and id (at most 100).
    pub conflicts: Vec<String>,
    /// Files checked and read.
    #[ts(type = "number")]
    pub files: u64,
    /// How long it took.
    #[ts(type = "number")]
    pub duration_ms: u64,
}
