//! # cairn-core
//!
//! The bottom of Cairn's crate stack: the domain types (records, items, relations, notes),
//! their ids, the API contract that every transport speaks ([`api`]), and the error
//! classification that crosses to the UI and to agents ([`ErrorCode`]).
//!
//! Nothing here does I/O. Crates further down the list in the workspace `Cargo.toml` depend
//! on this one; it depends on none of them.
//!
//! ```
//! use cairn_core::{RecordId, Outcome};
//! let id = RecordId::derive("claude-code", "session-1", "msg-7");
//! assert_eq!(id, RecordId::derive("claude-code", "session-1", "msg-7"));
//! assert_eq!(Outcome::parse("error"), Some(Outcome::Error));
//! ```
#![deny(missing_docs)]

pub mod api;
mod error;
mod forget;
mod ids;
mod model;
pub mod ports;

pub use error::ErrorCode;
pub use forget::{Forgetting, Forgotten};
pub use ids::{ItemId, NoteId, RecordId};
pub use model::{
    CaptureCursor, Certainty, Chunk, Item, ItemEvent, ItemEventKind, ItemKind, NewItemEvent,
    NewRecord, Outcome, Provenance, Record, RecordPart, Relation, RelationKind, Timestamp,
    VectorKind,
};
