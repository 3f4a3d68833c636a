//! # cairn-store
//!
//! The store that is Cairn's source of truth: one SQLite file in WAL mode, reached through
//! sea-orm. It holds the short-term log (records and their chunks), the long-term log (item
//! events, each carrying its item's whole state), relations, vectors with their model id,
//! capture cursors, run-time settings, notes metadata and versions, and a journal of what
//! happened to the store itself.
//!
//! The logs are append-only, and the database enforces it: triggers refuse UPDATE and DELETE
//! on them. The one exception is [`Store::clear`], which opens a guard inside its own
//! transaction, then vacuums and truncates the WAL so nothing remembered stays on disk.
//!
//! Migrations are forward-only ([`migrate`]); a store written by a newer Cairn is refused
//! rather than damaged. sea-orm entities stay inside this crate; callers see `cairn-core`
//! types.
//!
//! ```no_run
//! # async fn demo() -> cairn_store::Result<()> {
//! let store = cairn_store::Store::open(std::path::Path::new("/tmp/cairn.db")).await?;
//! println!("{} records", store.counts().await?.records);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod distill;
mod entity;
mod error;
mod export;
mod injections;
mod ledger;
mod migrate;
mod notes;
mod review;
mod sleep;
mod store;
mod time;

pub use distill::PendingSession;
pub use error::{Error, Result};
pub use export::{
    ChunkRow, ExportFilter, Imported, ItemEventRow, NoteMetaRow, NoteVersionExport, RecordRow,
    RelationRow,
};
pub use injections::{
    Injection, InjectionCandidate, NoteLabel, NoteOutcome, NoteTotals, OUTCOME_IGNORED,
    OUTCOME_USED, UndecidedEntry, Uses,
};
pub use ledger::{LedgerEntry, LedgerOutcome, LedgerTotals, start_of_today};
pub use migrate::{MIGRATIONS, SCHEMA_VERSION};
pub use notes::{NewNoteVersion, NoteAction, NoteRow, NoteVersionRow};
pub use review::{RecordCopy, ReviewAction};
pub use sleep::{ItemActivity, ItemScore, Profile, ProfileEntry, ProfileKind};
pub use store::{
    AppendReport, FrameworkSpan, JournalEntry, RecentSession, SessionFilter, SessionPlace,
    SessionSummary, Store, StoredVector,
};
