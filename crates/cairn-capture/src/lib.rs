//! # cairn-capture
//!
//! Reads every supported agent framework's own session store, incrementally, into whole
//! records, with secrets scrubbed (by [`cairn_text::scrub`]) before anything is stored.
//!
//! - [`spec`]: the declarative table entry of a framework ([`FrameworkSpec`]): where its
//!   stores live ([`Env`]), which files are session stores, and its reader family — append-only
//!   lines ([`LineParser`]), SQLite updated in place, or whole-file JSON.
//! - [`frameworks`]: one module per framework, and [`frameworks::all`], the table.
//! - [`turn`]: what a framework module produces ([`Turn`], [`Step`]).
//! - [`read`]: reading one store from its saved cursor; [`pass`]: one capture pass over every
//!   framework into the store; [`record`]: turns to scrubbed, chunked records.
//! - [`provenance`]: whether a history file inside a project is the user's own or came with a
//!   cloned repository (then it is not captured).
//!
//! The scrubber, the chunker and project identity live in `cairn-text`, shared with notes and
//! the API.
#![deny(missing_docs)]

pub mod frameworks;
pub mod pass;
pub mod provenance;
pub mod read;
pub mod record;
pub mod spec;
pub mod turn;

pub use spec::{Env, FrameworkSpec, LineParser, Os, Reader, SqliteBatch};
pub use turn::{Step, Turn};
