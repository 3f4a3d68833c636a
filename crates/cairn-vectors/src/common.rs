//! What every backend shares: point ids, payload keys, vector checks, error helpers.
use std::any::Any;

use cairn_core::VectorKind;
use cairn_core::ports::{BackendError, BackendErrorKind};
use sha2::{Digest, Sha256};

/// The named vectors every Qdrant collection has, one per [`VectorKind`].
pub const VECTOR_NAMES: [&str; 3] = ["summary", "chunk", "cue"];

/// How many times more candidates a quantized search takes from the 1-bit codes than it
/// returns, before re-scoring them from the full vectors.
pub const OVERSAMPLING: f64 = 3.0;

/// The fewest candidates a quantized search re-scores, whatever its limit (so a top-10 search
/// re-scores 600, not 30); the HNSW beam is as wide.
///
/// 1-bit codes of 384-dimension vectors are coarse, and a wider beam is what keeps a large
/// graph exact: at 450,000 points (150,000 per kind, low-rank vectors shaped like text
/// embeddings) recall@10 against exact search was 0.911 with 200 candidates, 0.967 with 400,
/// 0.988 with 600 and 0.996 with 800, for p50 3.7, 10.9, 13.2 and 16.0 ms (two shared cores;
/// `cargo run --release -p cairn-vectors --example embedded_bench -- --points 450000 --data
/// lowrank --sweep 200,400,600,800`). Tune per index with `set_min_candidates`.
pub const DEFAULT_MIN_CANDIDATES: usize = 600;

/// Payload key: the owner (record, item or note id).
pub(crate) const KEY_OWNER: &str = "owner";
/// Payload key: the named vector the point carries.
pub(crate) const KEY_VECTOR_KIND: &str = "vector_kind";
/// Payload key: the position among the owner's vectors of that kind.
pub(crate) const KEY_ORD: &str = "ord";
/// Payload key: project identity.
pub(crate) const KEY_PROJECT: &str = "project";
/// Payload key: framework.
pub(crate) const KEY_FRAMEWORK: &str = "framework";
/// Payload key: item kind.
pub(crate) const KEY_KIND: &str = "kind";
/// Payload key: session id.
pub(crate) const KEY_SESSION: &str = "session";
/// Payload key: milliseconds since the epoch.
pub(crate) const KEY_TIMESTAMP: &str = "timestamp_ms";

/// The keyword-indexed payload keys.
pub(crate) const KEYWORD_KEYS: [&str; 5] =
    [KEY_OWNER, KEY_PROJECT, KEY_FRAMEWORK, KEY_KIND, KEY_SESSION];

/// The point id of the `ord`-th vector of kind `kind` of `owner`: a UUID (hyphenated, lower
/// case) made from a SHA-256 of the three, so the same triple always lands on the same point
/// and an upsert replaces it.
pub fn point_id(owner: &str, kind: VectorKind, ord: u32) -> String {
    format_uuid(point_uuid(owner, kind, ord))
}

/// The raw bytes of [`point_id`] (an RFC 9562 version 8 UUID).
pub(crate) fn point_uuid(owner: &str, kind: VectorKind, ord: u32) -> [u8; 16] {
    let mut hasher = Sha256::new();
    hasher.update(b"cairn-vectors/point/v1\0");
    hasher.update(owner.as_bytes());
    hasher.update([0]);
    hasher.update(kind.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(ord.to_le_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8 (custom)
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC variant
    bytes
}

fn format_uuid(bytes: [u8; 16]) -> String {
    let h = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The vector kind stored under `name`.
pub(crate) fn kind_from_name(name: &str) -> Option<VectorKind> {
    match name {
        "summary" => Some(VectorKind::Summary),
        "chunk" => Some(VectorKind::Chunk),
        "cue" => Some(VectorKind::Cue),
        _ => None,
    }
}

/// A `BadInput` error.
pub(crate) fn bad_input(message: impl Into<String>) -> BackendError {
    BackendError::new(BackendErrorKind::BadInput, message)
}

/// A `Corrupt` error.
pub(crate) fn corrupt(message: impl Into<String>) -> BackendError {
    BackendError::new(BackendErrorKind::Corrupt, message)
}

/// An `Unavailable` error.
pub(crate) fn unavailable(message: impl Into<String>) -> BackendError {
    BackendError::new(BackendErrorKind::Unavailable, message)
}

/// An `Other` error.
pub(crate) fn other(message: impl Into<String>) -> BackendError {
    BackendError::new(BackendErrorKind::Other, message)
}

/// Checks a vector's dimension and values, and returns it scaled to unit length (cosine).
pub(crate) fn checked_unit(
    vector: &[f32],
    dim: usize,
    what: &str,
) -> Result<Vec<f32>, BackendError> {
    if vector.len() != dim {
        return Err(bad_input(format!(
            "{what} has {} dimensions; the index holds vectors of {dim}",
            vector.len()
        )));
    }
    if vector.iter().any(|x| !x.is_finite()) {
        return Err(bad_input(format!(
            "{what} has a value that is not a finite number"
        )));
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return Err(bad_input(format!(
            "{what} is all zeros and has no direction"
        )));
    }
    Ok(vector.iter().map(|x| x / norm).collect())
}

/// Rejects a dimension of zero.
pub(crate) fn check_dim_nonzero(dim: usize) -> Result<(), BackendError> {
    if dim == 0 {
        return Err(bad_input("a vector index needs a dimension of at least 1"));
    }
    Ok(())
}

/// The oversampling factor that makes a quantized search of `limit` results re-score
/// `max(limit × OVERSAMPLING, min_candidates)` candidates; and that number.
pub(crate) fn oversampling_for(limit: usize, min_candidates: usize) -> (f64, usize) {
    let limit = limit.max(1);
    let wanted = ((limit as f64 * OVERSAMPLING).ceil() as usize)
        .max(min_candidates)
        .max(limit);
    (wanted as f64 / limit as f64, wanted)
}

/// The message a caught panic carried.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "no message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_ids_are_stable_and_distinct() {
        let a = point_id("rec-1", VectorKind::Chunk, 0);
        assert_eq!(a, point_id("rec-1", VectorKind::Chunk, 0));
        assert_ne!(a, point_id("rec-1", VectorKind::Chunk, 1));
        assert_ne!(a, point_id("rec-1", VectorKind::Cue, 0));
        assert_ne!(a, point_id("rec-2", VectorKind::Chunk, 0));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8");
    }

    #[test]
    fn oversampling_never_goes_below_the_floor() {
        let (factor, n) = oversampling_for(10, 200);
        assert_eq!(n, 200);
        assert!((factor * 10.0 - 200.0).abs() < 1e-9);
        let (factor, n) = oversampling_for(100, 200);
        assert_eq!(n, 300);
        assert!((factor - OVERSAMPLING).abs() < 1e-9);
        assert_eq!(oversampling_for(0, 0).1, 3);
        assert_eq!(oversampling_for(500, 0).1, 1500);
    }

    #[test]
    fn unit_checks_dimension_and_values() {
        assert_eq!(checked_unit(&[3.0, 4.0], 2, "v").unwrap(), vec![0.6, 0.8]);
        assert_eq!(
            checked_unit(&[1.0], 2, "v").unwrap_err().kind,
            BackendErrorKind::BadInput
        );
        assert_eq!(
            checked_unit(&[0.0, 0.0], 2, "v").unwrap_err().kind,
            BackendErrorKind::BadInput
        );
        assert_eq!(
            checked_unit(&[f32::NAN, 0.0], 2, "v").unwrap_err().kind,
            BackendErrorKind::BadInput
        );
    }
}
