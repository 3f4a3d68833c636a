//! # cairn-index
//!
//! The search index over Cairn's logs. Everything here can be rebuilt from the store with no
//! model call, so a lost, corrupt or outdated index is never a loss.
//!
//! - [`TextIndex`]: BM25 over records and their chunks (tantivy). A record is searchable by
//!   its raw text as soon as it is stored: [`TextIndex::sync`] follows the store's log by
//!   sequence number and remembers where it is in each commit.
//! - [`Hybrid`]: BM25 and dense similarity fused 0.7 / 0.3, one hit per record, re-ranked by a
//!   cross-encoder when there is one.
//! - [`Search`]: the same over several [`Corpus`]es (the records and the notes) as one list:
//!   fused together, re-ranked once over the top 30 by the passage that matched.
//!
//! ```no_run
//! # async fn demo(store: &cairn_store::Store) -> Result<(), cairn_index::Error> {
//! let index = cairn_index::TextIndex::open(std::path::Path::new("/tmp/index/text"))?;
//! index.sync(store).await?;
//! let hits = index.search(&cairn_index::TextQuery::new("migration failed", 10))?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod hybrid;
mod text;

pub use hybrid::{
    CANDIDATES, Corpus, DENSE_WEIGHT, Hybrid, HybridHit, Keep, MIN_DENSE_SIMILARITY, RERANK_TOP,
    Search, SearchMode, SearchNotes, fuse,
};
pub use text::{Error, TextHit, TextIndex, TextQuery};
