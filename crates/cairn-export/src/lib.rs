//! # cairn-export
//!
//! Cairn's memory written out to files outside its data folder, and read back:
//!
//! - [`archive`]: everything remembered exported to a folder of Markdown and JSONL with a
//!   sha256 manifest ([`Archive::export`]), and imported into another Cairn with nothing lost
//!   or duplicated, the whole export checked before anything is stored
//!   ([`Archive::import`]).
//! - [`skills`]: a project's procedures and pitfalls written into a section Cairn marks in
//!   each framework's instruction file (`CLAUDE.md`, `AGENTS.md`, …), spliced so every other
//!   byte of the file stays ([`skills::preview`], [`skills::write`]).
//!
//! Both write where the user and other programs reach, and both read those files back as
//! input Cairn did not write: so both go through [`cairn_text::fsx`] only (created
//! exclusively or replaced atomically, never through a link, modes set on the open file;
//! read bounded, regular files only), and the rules for files outside the data folder change
//! here together. Neither needs the service: they take the store (and the notes) they work
//! on, and the service keeps only what a host keeps (the worker board's progress, the
//! indexes brought up to date after an import).
//!
//! ```no_run
//! # async fn demo(store: &cairn_store::Store, notes: &cairn_notes::Notes) -> cairn_export::Result<()> {
//! use cairn_core::api::ExportReq;
//! let archive = cairn_export::Archive { store, notes, progress: &|what, _| println!("{what}") };
//! let req = ExportReq { dir: "/tmp/cairn-export".into(), project: None, since: None };
//! let report = archive.export(&req).await?;
//! println!("{} files", report.files);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod archive;
mod error;
pub mod skills;

pub use archive::Archive;
pub use error::{Error, Result};

#[cfg(test)]
mod crate_tests;
