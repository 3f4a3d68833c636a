//! Cairn's dense-vector index: three implementations of [`cairn_core::ports::VectorIndex`].
//!
//! - [`MemoryIndex`]: exact, brute-force, in memory. The twin every backend is checked
//!   against, and the reference when measuring the quantized indexes' recall.
//! - [`EmbeddedIndex`]: Qdrant embedded in-process (`qdrant-edge`), stored in one folder. The
//!   default.
//! - [`ServerIndex`]: a Qdrant server over gRPC, either a [`Sidecar`] the app starts on
//!   loopback with an API key made fresh for each run, or a remote cluster.
//!
//! [`Scoped`] is the points of one payload kind of any of them as an index of its own: the
//! records and the items share one index, and each search sees only its own kind.
//!
//! The Qdrant backends share one layout: one point per [`cairn_core::ports::VectorPoint`],
//! carrying only its own named vector (`summary`, `chunk` or `cue`, cosine), with an id derived
//! from (owner, kind, ord) by [`point_id`], and the owner, kind, ord and
//! [`cairn_core::ports::PointPayload`] stored as payload (keyword indexes on `owner`,
//! `project`, `framework`, `kind`, `session`; an integer index on `timestamp_ms`;
//! `vector_kind` as a tenant key, so each kind's points are stored together). Vectors are
//! 1-bit (binary) quantized and the codes held in RAM; the query is kept at 8 bits
//! (asymmetric scoring). A search takes [`OVERSAMPLING`] times the candidates it needs, and at
//! least [`DEFAULT_MIN_CANDIDATES`], from the codes and re-scores them from the full vectors.
//! `exact: true` bypasses the quantization.
//!
//! The index is derived data: the store keeps every vector, so a lost, damaged or outdated
//! index is rebuilt from the logs with no model call.
//!
//! ```no_run
//! use cairn_core::ports::{BackendError, BackendErrorKind, VectorIndex};
//! use cairn_vectors::EmbeddedIndex;
//!
//! # fn main() -> Result<(), BackendError> {
//! let dir = std::path::Path::new("/tmp/cairn-index");
//! let index = match EmbeddedIndex::open(dir) {
//!     Ok(index) => index,
//!     // Missing or damaged: start empty, then re-upsert every vector from the store.
//!     Err(e) if e.kind == BackendErrorKind::Corrupt => EmbeddedIndex::create(dir)?,
//!     Err(e) => return Err(e),
//! };
//! index.ensure(384)?;
//! # Ok(())
//! # }
//! ```
mod common;
mod embedded;
mod keys;
mod memory;
mod release;
mod scoped;
mod server;
pub mod synthetic;

pub use common::{DEFAULT_MIN_CANDIDATES, OVERSAMPLING, VECTOR_NAMES, point_id};
pub use embedded::{EmbeddedIndex, WAL_COMPACT_BYTES};
pub use keys::{KEYRING_SERVICE, REMOTE_KEY_USER, SIDECAR_KEY_USER, load_key, store_key};
pub use memory::MemoryIndex;
pub use release::{
    MALLOC_ARENAS, RELEASE_BUDGET, cap_malloc_arenas, release_files_when_over_budget,
    release_mapped_files,
};
pub use scoped::Scoped;
pub use server::{ServerIndex, Sidecar};
