//! # cairn-recall
//!
//! The retriever every caller uses: search in the CLI, the MCP tools, the HTTP API and the
//! UI, `cairn eval`, and the turn note (`cairn-turn`). One query path:
//!
//! 1. **Candidates** from every [`Corpus`] (the records, the notes): BM25 over each unit's
//!    words and its context (author, date, framework, project; see
//!    [`cairn_index::unit`]), and the nearest vectors of each kind, the query embedded once.
//! 2. **Fusion** into one list ([`fuse`]: a weighted sum of normalised scores, or
//!    reciprocal ranks).
//! 3. **Conversation structure**: a record gets part of the score of the records just
//!    before and after it in its session (and, when [`Tuning::expand`] asks, the best
//!    candidates bring those neighbours in), and part of its session's best score; a date
//!    the query names (`when`) lifts what happened then.
//! 4. **Text from the store**: each hit's metadata and chunk come from the store, not a
//!    second index lookup; a record cleared meanwhile is dropped.
//! 5. **Re-ranking**: when a cross-encoder is present, it orders the top
//!    [`RERANK_TOP`] by the chunk each hit's passage comes from, and that order is the
//!    answer.
//!
//! A search never writes. [`Tuning`] holds every parameter; its default is what search
//! uses, chosen on LoCoMo dev conversations.
#![deny(missing_docs)]

pub mod fuse;
mod retriever;
pub mod stop;
mod tuning;
pub mod when;

pub use fuse::Fusion;
pub use retriever::{
    ALL_KINDS, CHUNKS, Corpus, Error, Hit, KeepFn, Query, RERANK_TOP, Retriever, SearchMode,
    SearchNotes, Stages,
};
pub use tuning::Tuning;
