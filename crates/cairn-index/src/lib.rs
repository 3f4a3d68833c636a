//! # cairn-index
//!
//! The search index over Cairn's logs. Everything here can be rebuilt from the store with no
//! model call, so a lost, corrupt or outdated index is never a loss.
//!
//! - [`TextIndex`]: BM25 over records and their chunks (tantivy). A record is searchable by
//!   its raw text as soon as it is stored: [`TextIndex::sync`] follows the store's log by
//!   sequence number and remembers where it is in each commit.
//!   Each unit is indexed with its context ([`unit`]: author, date, framework, project) in a
//!   field of its own.
//! - [`unit`]: what an indexed unit carries besides its words, for the keyword index and for
//!   what the embedder reads.
//!
//! Fusion with the vectors, neighbours, sessions and re-ranking live in `cairn-recall`.
//!
//! ```no_run
//! # async fn demo(store: &cairn_store::Store) -> Result<(), cairn_index::Error> {
//! let index = cairn_index::TextIndex::open(std::path::Path::new("/tmp/index/text"))?;
//! index.sync(store).await?;
//! let hits = index.search(&cairn_index::TextQuery::new("migration failed", 10))?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod text;
pub mod unit;

pub use text::{CONTEXT_BOOST, Error, Passages, TextHit, TextIndex, TextQuery};
