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
#![deny(missing_docs)]

pub mod frameworks;
pub mod scrub;
pub mod spec;
pub mod turn;

pub use spec::{Env, FrameworkSpec, LineParser, Os, Reader, SqliteBatch};
pub use turn::{Step, Turn};
