//! # cairn-notes
//!
//! Titled Markdown notes, scoped to the user or to one project, that agents read, write and
//! forget through the memory-tool contract (`view`, `create`, `str_replace`, `insert`,
//! `delete`, `rename`) and the user edits in the app or in any editor.
//!
//! ## Where they live
//!
//! The files are the notes: `<root>/user/…` for the user's, `<root>/projects/<slug>-<hash>/…`
//! for each project's ([`project_dir_name`]). Their metadata (id, title, sha256) and every
//! version are kept in the store (`notes`, `note_versions`). A note's id (`n_…`) is stable
//! across renames. Files changed outside Cairn are noticed on the next read or list (size
//! and mtime first, then the sha256) and recorded as a version by `file`; files that appear
//! become notes, files that vanish are recorded as deleted.
//!
//! ## Security
//!
//! - Every path is checked as text before anything is touched ([`Error::Path`], code
//!   `bad_request`, with the reason): `/memories/<path>` (the memory-tool contract's
//!   spelling, `/memories` being the root) or relative, `/`-separated; no `.`/`..`, empty,
//!   hidden or temporary components; no absolute, drive or UNC paths, backslashes, `:`, NUL
//!   and other control or invisible characters, URL encoding (`%2e`, `%252e`), look-alikes
//!   of `.` and `/`, Windows device names (`CON`, `nul.md`, `COM1.txt`, …) or reserved
//!   characters, trailing dots or spaces; at most 512 bytes, 255 per component, 8 deep.
//! - Then it is resolved one component at a time without following anything: a symbolic
//!   link anywhere (the scope's own directories included) or a file with other hard links is
//!   refused, and the result must canonicalise under the root. Reads use `O_NOFOLLOW`;
//!   writes go to a new temporary file (0600, created exclusively) in the same directory,
//!   are fsynced and renamed over the target; directories are created 0700.
//! - Secrets never reach storage: all content, whoever wrote it, goes through the scrubber
//!   before the file and the version are written (a file edited outside Cairn that holds a
//!   secret is rewritten scrubbed). Content is at most 1 MiB.
//! - Writes are serialised by one async mutex, so the optimistic-concurrency check
//!   (`expected_sha256`) and the write are atomic: a stale writer gets `conflict`, with its
//!   content handed back in the error ([`Error::rejected_content`]), and nothing is
//!   overwritten.
//! - A [`Caller`] with [`NoteAccess::ReadOnly`] may only read; every write is `forbidden`.
//!
//! ## The memory-tool contract
//!
//! [`Notes::command`] answers the six commands with the structure and messages of the
//! contract's reference implementation (`tests/fixtures/memory-tool/cases.json` holds its
//! answers; a test compares): `create` refuses an existing file (Cairn's addition: unless
//! `expected_sha256` is its current hash), `delete` and `rename` take whole directories, a
//! view numbers lines as the reference splits them. Extra stores can be mounted for a
//! caller under `/memories/<name>/` (a shared read-only reference next to its own notes; at
//! most [`MAX_MOUNTS`] in all), and `versions`, `version` and `redact` reach a note's history
//! through the same surface.
//!
//! ## Versions
//!
//! Every change appends a version (`create`, `edit`, `rename`, `delete`, `restore`) holding
//! the content after it; a `delete` version holds the last content, so a deleted note can
//! be restored. [`Notes::redact`] strips one version's content for good (who and when are
//! kept) and checkpoints the database so the text is left in no store file. Redaction is
//! for history: it never changes the current file, even when the redacted version is the
//! current content (edit or delete the note for that). A redacted version cannot be
//! restored.
#![deny(missing_docs)]

mod command;
mod error;
mod fsx;
mod import;
mod notes;
mod path;
mod text;

pub use cairn_core::api::NoteAccess;
pub use command::MAX_MOUNTS;
pub use error::{Error, Result};
pub use fsx::MAX_CONTENT_BYTES;
pub use notes::{Caller, Notes, is_agent};
pub use path::{MAX_COMPONENT_BYTES, MAX_DEPTH, MAX_PATH_BYTES, TEMP_SUFFIX, project_dir_name};
pub use text::{MAX_TITLE_CHARS, sha256_hex, title_of};

/// The most characters [`Notes::titles`] puts into an agent's instructions (and the default).
pub const MAX_TITLES_CHARS: u32 = 1500;
