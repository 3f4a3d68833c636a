//! The small traits that storage and model backends implement, so the pipeline never names a
//! concrete backend: [`Embedder`], [`Reranker`] and [`VectorIndex`]. Each real backend has an
//! in-memory twin, and one conformance suite runs against every implementation.
use serde::{Deserialize, Serialize};

use crate::VectorKind;

/// What kind of failure a backend had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendErrorKind {
    /// The backend (model files, server, keyring) cannot be reached or loaded.
    Unavailable,
    /// The input was wrong (a vector of the wrong dimension, an empty text).
    BadInput,
    /// Stored data is damaged (the caller may rebuild from the logs).
    Corrupt,
    /// Anything else.
    Other,
}

/// A backend failure, with a sentence that names the problem.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct BackendError {
    /// The kind, to branch on.
    pub kind: BackendErrorKind,
    /// What went wrong.
    pub message: String,
}

impl BackendError {
    /// A new error.
    pub fn new(kind: BackendErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// Turns texts into unit-length vectors.
pub trait Embedder: Send + Sync {
    /// A stable id of the model and its revision (stored with every vector).
    fn model_id(&self) -> &str;
    /// The vectors' dimension.
    fn dim(&self) -> usize;
    /// One L2-normalised vector per text, in order. Long texts are truncated to the model's
    /// window. Blocking and CPU-heavy: call it off the async runtime.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError>;
}

/// Scores (query, passage) pairs: higher means more relevant.
pub trait Reranker: Send + Sync {
    /// A stable id of the model.
    fn model_id(&self) -> &str;
    /// One score per passage, in order. Blocking and CPU-heavy.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, BackendError>;
}

/// Filterable facts stored with every point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PointPayload {
    /// Project identity.
    pub project: Option<String>,
    /// Framework (records).
    pub framework: Option<String>,
    /// Item kind (items), or `record` / `note`.
    pub kind: Option<String>,
    /// Session id (records).
    pub session: Option<String>,
    /// When it happened, in milliseconds since the epoch.
    pub timestamp_ms: i64,
}

/// One vector to store: the `ord`-th vector of kind `vector_kind` of `owner` (a record,
/// item or note id).
#[derive(Debug, Clone, PartialEq)]
pub struct VectorPoint {
    /// The record, item or note it belongs to.
    pub owner: String,
    /// Which named vector it is.
    pub vector_kind: VectorKind,
    /// Its position among the owner's vectors of that kind.
    pub ord: u32,
    /// The vector (unit length).
    pub vector: Vec<f32>,
    /// Filterable facts.
    pub payload: PointPayload,
}

/// Which points a search may return.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorFilter {
    /// Only this project.
    pub project: Option<String>,
    /// Only this framework.
    pub framework: Option<String>,
    /// Only these kinds (empty: all).
    pub kinds: Vec<String>,
    /// Leave out this session.
    pub exclude_session: Option<String>,
    /// Only from this time on (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only up to this time (ms since the epoch).
    pub until_ms: Option<i64>,
}

/// One point found.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    /// Its owner.
    pub owner: String,
    /// Which named vector matched.
    pub vector_kind: VectorKind,
    /// Its position among the owner's vectors of that kind.
    pub ord: u32,
    /// Cosine similarity.
    pub score: f32,
}

/// A vector index with one named vector per point kind (summary key, body chunk, cue),
/// payload filters, and quantized search with re-scoring from full vectors. Rebuildable from
/// the store's vectors at any time. Blocking: call it off the async runtime.
pub trait VectorIndex: Send + Sync {
    /// A name for status and logs (`embedded`, `sidecar`, `remote`, `memory`).
    fn backend(&self) -> &str;
    /// Creates the collection for vectors of `dim` dimensions if it does not exist. A
    /// collection of another dimension is an error of kind `BadInput` (the caller rebuilds).
    fn ensure(&self, dim: usize) -> Result<(), BackendError>;
    /// Adds or replaces points (same owner, kind and ord replaces).
    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError>;
    /// Removes every point of an owner.
    fn delete_owner(&self, owner: &str) -> Result<(), BackendError>;
    /// The `limit` nearest points of one named vector kind. `exact` skips the quantized
    /// index (for measuring its recall).
    fn search(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        exact: bool,
    ) -> Result<Vec<VectorHit>, BackendError>;
    /// The `limit` nearest points of one named vector kind from the quantized index,
    /// re-scoring `max(limit × oversampling, candidates)` of them from the full vectors
    /// instead of the backend's own floor: for a caller that takes many results and fuses
    /// them (the retriever), whose top results stay the same with fewer. A backend without
    /// quantization answers as [`VectorIndex::search`].
    fn search_rescoring(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        candidates: usize,
    ) -> Result<Vec<VectorHit>, BackendError> {
        let _ = candidates;
        self.search(kind, vector, filter, limit, false)
    }
    /// How many points it holds.
    fn count(&self) -> Result<u64, BackendError>;
    /// How many of its points pass `filter` (of every vector kind).
    fn count_where(&self, filter: &VectorFilter) -> Result<u64, BackendError>;
    /// Removes everything.
    fn clear(&self) -> Result<(), BackendError>;
    /// Makes everything written so far durable.
    fn flush(&self) -> Result<(), BackendError>;
    /// Reorganises what was written since the last call for faster search (builds the
    /// graph index of new points). Blocking and CPU-heavy: run it when idle. Backends that
    /// do this on their own (a Qdrant server) do nothing. Returns whether anything changed.
    fn optimize(&self) -> Result<bool, BackendError> {
        Ok(false)
    }
}
