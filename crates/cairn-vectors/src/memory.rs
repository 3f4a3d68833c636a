//! [`MemoryIndex`]: the exact, brute-force twin.
use std::collections::HashMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use cairn_core::VectorKind;
use cairn_core::ports::{
    BackendError, PointPayload, VectorFilter, VectorHit, VectorIndex, VectorPoint,
};

use crate::common::{bad_input, check_dim_nonzero, checked_unit, other};

type Key = (String, VectorKind, u32);

#[derive(Debug, Default)]
struct State {
    dim: Option<usize>,
    points: HashMap<Key, (Vec<f32>, PointPayload)>,
}

/// An exact, brute-force [`VectorIndex`] held in memory: every search scores every point of
/// the kind. The reference every other backend is checked against, and the one used to
/// measure a quantized index's recall. Nothing is persisted; `flush` does nothing.
#[derive(Debug, Default)]
pub struct MemoryIndex {
    state: RwLock<State>,
}

impl MemoryIndex {
    /// An empty index with no dimension yet (call [`VectorIndex::ensure`]).
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, State>, BackendError> {
        self.state
            .read()
            .map_err(|_| other("the in-memory vector index was poisoned by a panic"))
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, State>, BackendError> {
        self.state
            .write()
            .map_err(|_| other("the in-memory vector index was poisoned by a panic"))
    }
}

fn no_collection() -> BackendError {
    bad_input("the vector index has no collection yet; call ensure(dim) first")
}

/// Whether a point's payload passes a filter (the reference semantics every backend follows).
pub(crate) fn filter_matches(filter: &VectorFilter, payload: &PointPayload) -> bool {
    if let Some(project) = &filter.project
        && payload.project.as_ref() != Some(project)
    {
        return false;
    }
    if let Some(framework) = &filter.framework
        && payload.framework.as_ref() != Some(framework)
    {
        return false;
    }
    if !filter.kinds.is_empty()
        && !payload
            .kind
            .as_ref()
            .is_some_and(|k| filter.kinds.contains(k))
    {
        return false;
    }
    if let Some(session) = &filter.exclude_session
        && payload.session.as_ref() == Some(session)
    {
        return false;
    }
    if filter
        .since_ms
        .is_some_and(|since| payload.timestamp_ms < since)
    {
        return false;
    }
    if filter
        .until_ms
        .is_some_and(|until| payload.timestamp_ms > until)
    {
        return false;
    }
    true
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl VectorIndex for MemoryIndex {
    fn backend(&self) -> &str {
        "memory"
    }

    fn ensure(&self, dim: usize) -> Result<(), BackendError> {
        check_dim_nonzero(dim)?;
        let mut state = self.write()?;
        match state.dim {
            Some(existing) if existing != dim => Err(bad_input(format!(
                "the vector index holds vectors of {existing} dimensions, not {dim}; rebuild it"
            ))),
            Some(_) => Ok(()),
            None => {
                state.dim = Some(dim);
                Ok(())
            }
        }
    }

    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError> {
        let mut state = self.write()?;
        let dim = state.dim.ok_or_else(no_collection)?;
        // Check everything first, so a bad point leaves the index untouched.
        let vectors = points
            .iter()
            .map(|p| {
                checked_unit(
                    &p.vector,
                    dim,
                    &format!(
                        "the vector of {} ({}, {})",
                        p.owner,
                        p.vector_kind.as_str(),
                        p.ord
                    ),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (point, vector) in points.iter().zip(vectors) {
            state.points.insert(
                (point.owner.clone(), point.vector_kind, point.ord),
                (vector, point.payload.clone()),
            );
        }
        Ok(())
    }

    fn delete_owner(&self, owner: &str) -> Result<(), BackendError> {
        let mut state = self.write()?;
        state.points.retain(|(o, _, _), _| o != owner);
        Ok(())
    }

    fn search(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        _exact: bool,
    ) -> Result<Vec<VectorHit>, BackendError> {
        let state = self.read()?;
        let dim = state.dim.ok_or_else(no_collection)?;
        let query = checked_unit(vector, dim, "the query vector")?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut hits: Vec<VectorHit> = state
            .points
            .iter()
            .filter(|((_, k, _), (_, payload))| *k == kind && filter_matches(filter, payload))
            .map(|((owner, k, ord), (v, _))| VectorHit {
                owner: owner.clone(),
                vector_kind: *k,
                ord: *ord,
                score: dot(&query, v),
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.owner.cmp(&b.owner))
                .then_with(|| a.ord.cmp(&b.ord))
        });
        hits.truncate(limit);
        Ok(hits)
    }

    fn count(&self) -> Result<u64, BackendError> {
        Ok(self.read()?.points.len() as u64)
    }

    fn count_where(&self, filter: &VectorFilter) -> Result<u64, BackendError> {
        Ok(self
            .read()?
            .points
            .values()
            .filter(|(_, payload)| filter_matches(filter, payload))
            .count() as u64)
    }

    fn clear(&self) -> Result<(), BackendError> {
        self.write()?.points.clear();
        Ok(())
    }

    fn flush(&self) -> Result<(), BackendError> {
        Ok(())
    }
}
