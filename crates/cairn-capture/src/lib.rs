//! # cairn-capture
//!
//! Reads every supported agent framework's own session store, incrementally, into whole
//! records, with secrets scrubbed before anything is stored.
//!
//! - [`spec`]: the declarative table entry of a framework ([`FrameworkSpec`]): where its
//!   stores live ([`Env`]), which files are session stores, and its reader family — append-only
//!   lines ([`LineParser`]), SQLite updated in place, or whole-file JSON.
//! - [`frameworks`]: one module per framework, and [`frameworks::all`], the table.
//! - [`turn`]: what a framework module produces ([`Turn`], [`Step`]).
//! - [`scrub`]: the secret scrubber that runs before anything is written.
//! - [`read`]: reading one store from its saved cursor; [`pass`]: one capture pass over every
//!   framework into the store; [`record`]: turns to scrubbed, chunked records;
//!   [`project`]: project identity from the git common dir.
#![deny(missing_docs)]

pub mod chunk;
pub mod frameworks;
pub mod pass;
pub mod project;
pub mod read;
pub mod record;
pub mod scrub;
pub mod spec;
pub mod turn;

pub use spec::{Env, FrameworkSpec, LineParser, Os, Reader, SqliteBatch};
pub use turn::{Step, Turn};
