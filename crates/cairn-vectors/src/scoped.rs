//! [`Scoped`]: the points of one payload kind of a shared index, as an index of their own.
//!
//! Records and items share the service's vector index (one collection, one set of shards, one
//! Clear, one rebuild from the store). Each search sees only its own: a records search the
//! points of kind `record`, an items search those of kind `item`. The view adds that kind to
//! every filter, refuses points of another kind, and cannot empty the index it shares.
use std::sync::Arc;

use cairn_core::VectorKind;
use cairn_core::ports::{BackendError, VectorFilter, VectorHit, VectorIndex, VectorPoint};

use crate::common::bad_input;

/// The points of one payload kind (`PointPayload::kind`) of a shared index.
#[derive(Clone)]
pub struct Scoped {
    inner: Arc<dyn VectorIndex>,
    kind: String,
}

impl std::fmt::Debug for Scoped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped")
            .field("backend", &self.inner.backend())
            .field("kind", &self.kind)
            .finish()
    }
}

impl Scoped {
    /// The points of `kind` in `inner`.
    pub fn new(inner: Arc<dyn VectorIndex>, kind: impl Into<String>) -> Self {
        Self {
            inner,
            kind: kind.into(),
        }
    }

    /// The payload kind this view holds.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The filter narrowed to this view's kind; `None` when it asks for other kinds only.
    fn narrowed(&self, filter: &VectorFilter) -> Option<VectorFilter> {
        if !filter.kinds.is_empty() && !filter.kinds.contains(&self.kind) {
            return None;
        }
        Some(VectorFilter {
            kinds: vec![self.kind.clone()],
            ..filter.clone()
        })
    }
}

impl VectorIndex for Scoped {
    fn backend(&self) -> &str {
        self.inner.backend()
    }

    fn ensure(&self, dim: usize) -> Result<(), BackendError> {
        self.inner.ensure(dim)
    }

    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError> {
        if let Some(p) = points
            .iter()
            .find(|p| p.payload.kind.as_deref() != Some(self.kind.as_str()))
        {
            return Err(bad_input(format!(
                "point {} is of kind {:?}, not {:?}: a view of one kind takes only its own",
                p.owner, p.payload.kind, self.kind
            )));
        }
        self.inner.upsert(points)
    }

    fn delete_owner(&self, owner: &str) -> Result<(), BackendError> {
        self.inner.delete_owner(owner)
    }

    fn search(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        exact: bool,
    ) -> Result<Vec<VectorHit>, BackendError> {
        match self.narrowed(filter) {
            Some(f) => self.inner.search(kind, vector, &f, limit, exact),
            None => Ok(Vec::new()),
        }
    }

    fn search_rescoring(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        candidates: usize,
    ) -> Result<Vec<VectorHit>, BackendError> {
        match self.narrowed(filter) {
            Some(f) => self
                .inner
                .search_rescoring(kind, vector, &f, limit, candidates),
            None => Ok(Vec::new()),
        }
    }

    /// This view's points.
    fn count(&self) -> Result<u64, BackendError> {
        self.count_where(&VectorFilter::default())
    }

    fn count_where(&self, filter: &VectorFilter) -> Result<u64, BackendError> {
        match self.narrowed(filter) {
            Some(f) => self.inner.count_where(&f),
            None => Ok(0),
        }
    }

    fn clear(&self) -> Result<(), BackendError> {
        Err(bad_input(format!(
            "the view of the {:?} points cannot empty the index it shares",
            self.kind
        )))
    }

    fn flush(&self) -> Result<(), BackendError> {
        self.inner.flush()
    }

    fn optimize(&self) -> Result<bool, BackendError> {
        self.inner.optimize()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use cairn_core::ports::{BackendErrorKind, PointPayload};

    use super::*;
    use crate::MemoryIndex;

    fn point(owner: &str, kind: &str, v: [f32; 2]) -> VectorPoint {
        VectorPoint {
            owner: owner.into(),
            vector_kind: VectorKind::Chunk,
            ord: 0,
            vector: v.to_vec(),
            payload: PointPayload {
                project: None,
                framework: Some(
                    if kind == "item" {
                        "item"
                    } else {
                        "claude-code"
                    }
                    .into(),
                ),
                kind: Some(kind.into()),
                session: Some(owner.into()),
                timestamp_ms: 0,
            },
        }
    }

    #[test]
    fn a_view_sees_writes_and_empties_only_its_own_kind() {
        let shared: Arc<dyn VectorIndex> = Arc::new(MemoryIndex::new());
        shared.ensure(2).unwrap();
        shared.upsert(&[point("r1", "record", [1.0, 0.0])]).unwrap();
        let items = Scoped::new(shared.clone(), "item");
        let records = Scoped::new(shared.clone(), "record");
        items.upsert(&[point("i1", "item", [0.9, 0.1])]).unwrap();
        let owners = |v: &Scoped, f: &VectorFilter| -> Vec<String> {
            v.search_rescoring(VectorKind::Chunk, &[1.0, 0.0], f, 10, 10)
                .unwrap()
                .into_iter()
                .map(|h| h.owner)
                .collect()
        };
        let any = VectorFilter::default();
        assert_eq!(owners(&items, &any), ["i1"]);
        assert_eq!(owners(&records, &any), ["r1"]);
        let records_only = VectorFilter {
            kinds: vec!["record".into()],
            ..Default::default()
        };
        assert!(owners(&items, &records_only).is_empty());
        let e = items
            .upsert(&[point("r2", "record", [0.0, 1.0])])
            .unwrap_err();
        assert_eq!(e.kind, BackendErrorKind::BadInput);
        assert!(e.message.contains("r2"), "{}", e.message);
        let e = items.clear().unwrap_err();
        assert_eq!(e.kind, BackendErrorKind::BadInput);
        assert_eq!(shared.count().unwrap(), 2, "nothing emptied");
        assert_eq!((items.count().unwrap(), records.count().unwrap()), (1, 1));
        items.delete_owner("i1").unwrap();
        assert!(owners(&items, &any).is_empty());
        assert_eq!(owners(&records, &any), ["r1"]);
    }
}
