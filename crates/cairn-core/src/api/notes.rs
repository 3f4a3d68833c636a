//! Notes: titled Markdown files scoped to the user or to a project, and the memory-tool
//! contract (`view`, `create`, `str_replace`, `insert`, `delete`, `rename`) agents use on them.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whose notes: the user's own, or one project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum NoteScopeKind {
    /// The user's notes, visible in every project.
    User,
    /// One project's notes (the project identity as capture computes it).
    Project,
}

/// What a caller may do with notes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum NoteAccess {
    /// `view` only; every write is refused with `forbidden`.
    ReadOnly,
    /// Everything.
    #[default]
    ReadWrite,
}

/// A note's place: its scope and its path inside that scope's root (`conventions.md`,
/// `db/migrations.md`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteRef {
    /// User or project.
    pub scope: NoteScopeKind,
    /// The project identity; required for the project scope, refused for the user scope.
    #[serde(default)]
    pub project: Option<String>,
    /// The path inside the scope, `/`-separated, relative.
    pub path: String,
}

/// A note in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteSummary {
    /// The note's id (`n_…`); stable across renames.
    pub id: String,
    /// User or project.
    pub scope: NoteScopeKind,
    /// The project identity for project notes.
    pub project: Option<String>,
    /// The path inside the scope.
    pub path: String,
    /// The first Markdown heading, else the first line, else the file name.
    pub title: String,
    /// The content's sha256 (hex): pass it back as `expected_sha256` to write safely.
    pub sha256: String,
    /// Size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// Number of versions kept.
    #[ts(type = "number")]
    pub versions: u64,
}

/// Which notes to list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NotesListReq {
    /// Only this scope (both when absent).
    #[serde(default)]
    pub scope: Option<NoteScopeKind>,
    /// Only this project's notes (with the user's when `scope` is absent).
    #[serde(default)]
    pub project: Option<String>,
}

/// Notes, by scope then path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteList {
    /// The notes.
    pub notes: Vec<NoteSummary>,
    /// Every project that has notes or captured conversations, for the scope picker.
    pub projects: Vec<String>,
}

/// A note whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteDoc {
    /// Its metadata.
    pub note: NoteSummary,
    /// The Markdown.
    pub content: String,
}

/// Write a note whole (the editor's save).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteSaveReq {
    /// Which note.
    pub note: NoteRef,
    /// The new Markdown.
    pub content: String,
    /// The sha256 the note must still have (what the editor loaded); a mismatch is a
    /// `conflict` and nothing is written.
    #[serde(default)]
    pub expected_sha256: Option<String>,
    /// Refuse with `conflict` if the note already exists (creating a new note).
    #[serde(default)]
    pub create_only: bool,
}

/// Rename or move a note inside its scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteRenameReq {
    /// Which note.
    pub note: NoteRef,
    /// The new path inside the same scope; must not exist.
    pub new_path: String,
    /// The sha256 the note must still have.
    #[serde(default)]
    pub expected_sha256: Option<String>,
}

/// Delete (forget) a note. Its versions are kept until redacted or cleared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteDeleteReq {
    /// Which note.
    pub note: NoteRef,
    /// The sha256 the note must still have.
    #[serde(default)]
    pub expected_sha256: Option<String>,
}

/// One kept version of a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteVersion {
    /// 1, 2, … in the order of the changes.
    #[ts(type = "number")]
    pub version: u64,
    /// What the change was: `create`, `edit`, `rename`, `delete` or `restore`.
    pub action: String,
    /// The path the note had after this change.
    pub path: String,
    /// The content's sha256 after this change.
    pub sha256: String,
    /// Who made it (`user`, `agent:<client>`).
    pub author: String,
    /// When (RFC 3339).
    pub at: String,
    /// Size in bytes (0 once redacted).
    #[ts(type = "number")]
    pub bytes: u64,
    /// When its content was redacted, if it was.
    pub redacted_at: Option<String>,
    /// Who redacted it.
    pub redacted_by: Option<String>,
}

/// A note's versions, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteVersionList {
    /// The note's id.
    pub id: String,
    /// The versions.
    pub versions: Vec<NoteVersion>,
}

/// One version of a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteVersionReq {
    /// Which note.
    pub note: NoteRef,
    /// Which version.
    #[ts(type = "number")]
    pub version: u64,
    /// For `note_restore`: the sha256 the note must still have.
    #[serde(default)]
    pub expected_sha256: Option<String>,
}

/// One version's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteVersionDoc {
    /// The version.
    pub version: NoteVersion,
    /// Its Markdown; absent once redacted.
    pub content: Option<String>,
}

/// Another store mounted for one caller under `/memories/<name>/`: a shared reference
/// (often read-only) next to the caller's own notes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteMount {
    /// The directory it appears as under `/memories` (one path component).
    pub name: String,
    /// User or project notes.
    pub scope: NoteScopeKind,
    /// The project, for the project scope.
    #[serde(default)]
    pub project: Option<String>,
    /// What the caller may do there (read-only by default).
    #[serde(default = "read_only")]
    pub access: NoteAccess,
}

fn read_only() -> NoteAccess {
    NoteAccess::ReadOnly
}

/// A write's precondition, as memory stores spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NotePrecondition {
    /// The file must still have this content hash (sha256, hex); else `conflict`.
    ContentSha256 {
        /// The expected hash.
        content_sha256: String,
    },
}

/// One memory-tool command over the notes root, as agents send it. Paths are spelt as the
/// contract writes them (`/memories`, `/memories/notes.md`) or relative to the root
/// (`notes.md`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NoteCommandReq {
    /// `view`, `create`, `str_replace`, `insert`, `delete` or `rename`; and Cairn's
    /// `versions`, `version` and `redact` over a note's kept versions.
    pub command: String,
    /// User or project scope.
    pub scope: Option<NoteScopeKind>,
    /// The project, for the project scope.
    #[serde(default)]
    pub project: Option<String>,
    /// The file or directory (`/memories` or empty for the root, with `view`).
    #[serde(default)]
    pub path: String,
    /// `view`: first and last line (1-based; -1 = to the end). A range that is not two
    /// numbers is ignored (the whole file shows), as the contract's reference does.
    #[serde(default)]
    #[ts(type = "Array<number> | null")]
    pub view_range: Option<Vec<i64>>,
    /// `create`: the whole content.
    #[serde(default)]
    pub file_text: Option<String>,
    /// `str_replace`: the text to find (exactly one match).
    #[serde(default)]
    pub old_str: Option<String>,
    /// `str_replace`: its replacement.
    #[serde(default)]
    pub new_str: Option<String>,
    /// `insert`: the line after which to insert (0 = at the top).
    #[serde(default)]
    #[ts(type = "number | null")]
    pub insert_line: Option<i64>,
    /// `insert`: the text.
    #[serde(default)]
    pub insert_text: Option<String>,
    /// `rename`: the path to move (`path` is accepted too).
    #[serde(default)]
    pub old_path: Option<String>,
    /// `rename`: the new path.
    #[serde(default)]
    pub new_path: Option<String>,
    /// `version`, `redact`: which version (1, 2, … as `versions` lists them).
    #[serde(default)]
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    /// Writes: the sha256 the file must still have; a mismatch is a `conflict`. With
    /// `create`, it allows overwriting the file that has it.
    #[serde(default)]
    pub expected_sha256: Option<String>,
    /// The same precondition as memory stores spell it
    /// (`{"type": "content_sha256", "content_sha256": "…"}`).
    #[serde(default)]
    pub precondition: Option<NotePrecondition>,
    /// More stores for this caller, each under `/memories/<name>/` (at most 7, so 8 in all).
    #[serde(default)]
    pub mounts: Vec<NoteMount>,
    /// The caller's access (the service may lower it, never raise it).
    #[serde(default)]
    pub access: Option<NoteAccess>,
    /// Who is calling (`agent:<client>`), kept in the versions.
    #[serde(default)]
    pub author: Option<String>,
}

/// What a memory-tool command returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteCommandRes {
    /// The text for the agent (a file with line numbers, a listing, or what changed).
    pub output: String,
    /// The file's sha256 after the command, when one file is concerned and still exists.
    pub sha256: Option<String>,
}

/// Note titles for an agent's instructions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct NotesTitlesReq {
    /// The project the agent works in (its notes come first, then the user's).
    #[serde(default)]
    pub project: Option<String>,
    /// At most this many characters in total (1,500 by default and at most).
    #[serde(default)]
    pub max_chars: Option<u32>,
}

/// One title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteTitle {
    /// User or project.
    pub scope: NoteScopeKind,
    /// The path inside the scope.
    pub path: String,
    /// The title.
    pub title: String,
}

/// Titles, most relevant first, within the character budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct NoteTitles {
    /// The titles that fit.
    pub titles: Vec<NoteTitle>,
    /// Titles left out to stay within the budget.
    #[ts(type = "number")]
    pub omitted: u64,
    /// The block to put into instructions (one `- title (path)` line each).
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_requests_parse_and_refuse_unknown_fields() {
        let ok: NoteSaveReq = serde_json::from_str(
            r#"{"note":{"scope":"project","project":"github.com/acme/app","path":"a.md"},"content":"x"}"#,
        )
        .expect("a save request parses");
        assert_eq!(ok.note.path, "a.md");
        assert_eq!(ok.note.scope, NoteScopeKind::Project);
        assert!(!ok.create_only);
        let bad = serde_json::from_str::<NoteSaveReq>(
            r#"{"note":{"scope":"user","path":"a.md"},"content":"x","colour":"red"}"#,
        );
        assert!(bad.is_err(), "an unknown field is refused");
    }
}
