//! The dense side of the index: embeddings of every record's chunks, kept in the store with
//! their model id (so the vector index is rebuilt with no model call) and in a
//! [`VectorIndex`]. Follows the store's log like the BM25 index does.
use std::sync::Arc;

use cairn_core::ports::{Embedder, PointPayload, VectorIndex, VectorPoint};
use cairn_core::{Record, VectorKind};
use cairn_store::{Store, StoredVector};
use serde::{Deserialize, Serialize};

use crate::{ApiError, Result, WorkerBoard};

/// The store setting that says how far the dense index is, and for which model.
const STATE_KEY: &str = "index.dense";
/// Records embedded per batch.
const BATCH: u64 = 32;
/// The worker board's name for this work.
pub(crate) const INDEXING: &str = "indexing";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    model: String,
    seq: i64,
}

/// An embedder and the vector index it fills.
#[derive(Clone)]
pub struct Dense {
    /// The embedding model.
    pub embedder: Arc<dyn Embedder>,
    /// The vector index.
    pub index: Arc<dyn VectorIndex>,
    /// The Qdrant sidecar serving `index`, kept alive as long as it is used.
    pub sidecar: Option<Arc<cairn_vectors::Sidecar>>,
}

impl std::fmt::Debug for Dense {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dense")
            .field("model", &self.embedder.model_id())
            .field("backend", &self.index.backend())
            .finish()
    }
}

fn backend_err(e: cairn_core::ports::BackendError) -> ApiError {
    ApiError::new(cairn_core::ErrorCode::Unavailable, e.message)
}

fn payload(r: &Record) -> PointPayload {
    PointPayload {
        project: r.record.project.clone(),
        framework: Some(r.record.framework.clone()),
        kind: Some("record".into()),
        session: Some(r.record.session_id.clone()),
        timestamp_ms: r.record.started_at.timestamp_millis(),
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))
}

impl Dense {
    /// Embeds every record stored after the last sync (all of them after a model change),
    /// keeps the vectors in the store and the index. Returns how many records it embedded.
    pub async fn sync(&self, store: &Store, board: &WorkerBoard) -> Result<u64> {
        let model = self.embedder.model_id().to_owned();
        let dim = self.embedder.dim();
        let mut state = store
            .setting::<State>(STATE_KEY)
            .await?
            .map(|(s, _)| s)
            .unwrap_or_default();
        // Vectors of another model are not comparable with this model's queries (and may
        // not even have its dimension): start the index afresh and re-embed from the log.
        // Keyword search keeps working meanwhile, and dense search covers what is done.
        let changed = !state.model.is_empty() && state.model != model;
        {
            let index = self.index.clone();
            blocking(move || {
                if changed {
                    index.clear()?;
                }
                match index.ensure(dim) {
                    Err(e) if e.kind == cairn_core::ports::BackendErrorKind::BadInput => {
                        index.clear()?;
                        index.ensure(dim)
                    }
                    other => other,
                }
            })
            .await?
            .map_err(backend_err)?;
        }
        if state.model != model {
            if changed {
                tracing::info!(from = %state.model, to = %model, "embedding model changed; re-embedding in the background");
            }
            state = State {
                model: model.clone(),
                seq: 0,
            };
        }
        let total = store.counts().await?.records.max(1);
        let mut done = 0u64;
        loop {
            let page = store.records_page(state.seq, BATCH).await?;
            let Some(last) = page.last().map(|(r, _)| r.seq) else {
                break;
            };
            let mut stored = Vec::new();
            let mut points = Vec::new();
            let mut to_embed: Vec<(Record, u32, String)> = Vec::new();
            for (rec, chunks) in &page {
                let pieces: Vec<String> = if chunks.is_empty() {
                    vec![rec.record.text.clone()]
                } else {
                    chunks.iter().map(|c| c.text.clone()).collect()
                };
                // Vectors this model already made for this record are reused.
                let have = store.vectors_of(rec.record.id.as_str(), &model).await?;
                if have.len() == pieces.len() && have.iter().all(|v| v.vector.len() == dim) {
                    for v in have {
                        points.push(VectorPoint {
                            owner: v.owner,
                            vector_kind: v.kind,
                            ord: v.ord,
                            vector: v.vector,
                            payload: payload(rec),
                        });
                    }
                    continue;
                }
                for (ord, text) in pieces.into_iter().enumerate() {
                    to_embed.push((rec.clone(), u32::try_from(ord).unwrap_or(u32::MAX), text));
                }
            }
            if !to_embed.is_empty() {
                let embedder = self.embedder.clone();
                let texts: Vec<String> = to_embed.iter().map(|(_, _, t)| t.clone()).collect();
                let vectors = blocking(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    embedder.embed(&refs)
                })
                .await?
                .map_err(backend_err)?;
                for ((rec, ord, _), vector) in to_embed.into_iter().zip(vectors) {
                    stored.push(StoredVector {
                        owner: rec.record.id.to_string(),
                        kind: VectorKind::Chunk,
                        ord,
                        model: model.clone(),
                        vector: vector.clone(),
                    });
                    points.push(VectorPoint {
                        owner: rec.record.id.to_string(),
                        vector_kind: VectorKind::Chunk,
                        ord,
                        vector,
                        payload: payload(&rec),
                    });
                }
                store.put_vectors(&stored).await?;
            }
            // A newer revision replaces the record's old points.
            let owners: Vec<String> = page.iter().map(|(r, _)| r.record.id.to_string()).collect();
            let index = self.index.clone();
            blocking(
                move || -> std::result::Result<(), cairn_core::ports::BackendError> {
                    for o in &owners {
                        index.delete_owner(o)?;
                    }
                    index.upsert(&points)
                },
            )
            .await?
            .map_err(backend_err)?;
            state.seq = last;
            store.set_setting(STATE_KEY, &state).await?;
            done += page.len() as u64;
            board.report(
                INDEXING,
                cairn_core::api::WorkerState::Running,
                Some(format!("embedding records ({done} done)")),
                Some((done as f32 / total as f32).min(1.0)),
            );
        }
        if done > 0 {
            let index = self.index.clone();
            blocking(move || index.flush())
                .await?
                .map_err(backend_err)?;
            // Vectors of a previous model are no longer needed once every record has new ones.
            store.drop_vectors_except(&model).await?;
        }
        board.report(
            INDEXING,
            cairn_core::api::WorkerState::Idle,
            Some(format!(
                "{} vectors in the {} index ({model})",
                store.count_vectors(&model).await?,
                self.index.backend()
            )),
            None,
        );
        Ok(done)
    }

    /// Rebuilds the vector index from the vectors kept in the store: no model call.
    /// `progress(done, total)` after each page.
    pub async fn rebuild(
        &self,
        store: &Store,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
    ) -> Result<u64> {
        let model = self.embedder.model_id().to_owned();
        let dim = self.embedder.dim();
        let total = store.count_vectors(&model).await?;
        {
            let index = self.index.clone();
            blocking(move || index.clear().and_then(|()| index.ensure(dim)))
                .await?
                .map_err(backend_err)?;
        }
        let mut after = 0;
        let mut done = 0u64;
        let mut meta: std::collections::HashMap<String, PointPayload> =
            std::collections::HashMap::new();
        loop {
            let page = store.vectors_page(&model, after, 512).await?;
            let Some(last) = page.last().map(|(id, _)| *id) else {
                break;
            };
            let mut points = Vec::with_capacity(page.len());
            for (_, v) in page {
                if v.vector.len() != dim {
                    continue;
                }
                let p = match meta.get(&v.owner) {
                    Some(p) => p.clone(),
                    None => {
                        let Some(rec) = store
                            .record(&cairn_core::RecordId::new(v.owner.clone()))
                            .await?
                        else {
                            continue;
                        };
                        let p = payload(&rec);
                        meta.insert(v.owner.clone(), p.clone());
                        p
                    }
                };
                points.push(VectorPoint {
                    owner: v.owner,
                    vector_kind: v.kind,
                    ord: v.ord,
                    vector: v.vector,
                    payload: p,
                });
            }
            done += points.len() as u64;
            let index = self.index.clone();
            blocking(move || index.upsert(&points))
                .await?
                .map_err(backend_err)?;
            after = last;
            progress(done, total);
        }
        let index = self.index.clone();
        blocking(move || index.flush())
            .await?
            .map_err(backend_err)?;
        Ok(done)
    }

    /// Refills the index from the start of the log on the next sync, reusing the vectors the
    /// store keeps (no model call): after the index was lost or made afresh.
    pub async fn restart_from_log(&self, store: &Store) -> Result<()> {
        let state = State {
            model: self.embedder.model_id().to_owned(),
            seq: 0,
        };
        store.set_setting(STATE_KEY, &state).await?;
        Ok(())
    }

    /// Empties the index and forgets how far it was (Clear).
    pub async fn clear(&self, store: &Store) -> Result<()> {
        let index = self.index.clone();
        blocking(move || index.clear())
            .await?
            .map_err(backend_err)?;
        store.set_setting(STATE_KEY, &State::default()).await?;
        Ok(())
    }
}
