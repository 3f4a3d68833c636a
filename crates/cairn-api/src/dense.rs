//! The dense side of the index: embeddings of every record's chunks, kept in the store with
//! their model id (so the vector index is rebuilt with no model call) and in a
//! [`VectorIndex`]. Follows the store's log like the BM25 index does.
//!
//! The active items' vectors (summary, cues, body chunks) share that index: points of payload
//! kind [`ITEM`] beside the records' of kind [`RECORD`], each kind searched through its own
//! view ([`Dense::records`], [`Dense::items`]). One Clear, one rebuild from the store and one
//! migration carry both; `items_index` keeps the items' points up to date with the item log
//! ([`items_progress`]).
use std::sync::Arc;

use cairn_core::ports::{Embedder, PointPayload, VectorIndex, VectorPoint};
use cairn_core::{Record, VectorKind};
use cairn_store::{Store, StoredVector};
use serde::{Deserialize, Serialize};

use crate::board::INDEXING;
use crate::{ApiError, Result, WorkerBoard};

/// The store setting that says how far the dense index is, and for which model.
const STATE_KEY: &str = "index.dense";
/// The store setting that says how far the items' points in the index are (item log seq),
/// and for which model.
const ITEMS_KEY: &str = "index.items";
/// The payload kind of a record's points.
pub const RECORD: &str = "record";
/// The payload kind of an item's points.
pub const ITEM: &str = "item";
/// Records embedded per batch: small enough that the indexing worker, which takes the
/// store's write permit per batch, lets Clear or a stop through within about a second.
const BATCH: u64 = 16;

/// How far an index follows a log: up to `seq`, with vectors of `model`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) model: String,
    pub(crate) seq: i64,
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

impl Dense {
    /// The id stored with every vector: the model's and the recipe of what it read
    /// ([`cairn_index::unit::RECIPE`]). A change of either re-embeds from the log.
    pub fn vectors_id(&self) -> String {
        cairn_index::unit::vectors_id(self.embedder.model_id())
    }

    /// The records' points of the index, as the records' searches read them.
    pub fn records(&self) -> Arc<dyn VectorIndex> {
        Arc::new(cairn_vectors::Scoped::new(self.index.clone(), RECORD))
    }

    /// The items' points of the index, as the items' searches read and write them.
    pub fn items(&self) -> Arc<dyn VectorIndex> {
        Arc::new(cairn_vectors::Scoped::new(self.index.clone(), ITEM))
    }
}

/// How far the records' points are: the model the index holds vectors of (empty before the
/// first sync).
pub(crate) async fn records_progress(store: &Store) -> Result<State> {
    Ok(store
        .setting::<State>(STATE_KEY)
        .await?
        .map(|(s, _)| s)
        .unwrap_or_default())
}

/// How far the items' points are.
pub(crate) async fn items_progress(store: &Store) -> Result<State> {
    Ok(store
        .setting::<State>(ITEMS_KEY)
        .await?
        .map(|(s, _)| s)
        .unwrap_or_default())
}

/// Records how far the items' points are.
pub(crate) async fn set_items_progress(store: &Store, state: &State) -> Result<()> {
    store.set_setting(ITEMS_KEY, state).await?;
    Ok(())
}

/// An item's point payload: kind [`ITEM`], framework `item`, its project, the item as its
/// own session, and when it was said.
pub(crate) fn item_payload(item: &cairn_core::Item) -> PointPayload {
    PointPayload {
        project: item.project.clone(),
        framework: Some(ITEM.into()),
        kind: Some(ITEM.into()),
        session: Some(item.id.as_str().to_owned()),
        timestamp_ms: item.said_at.map_or(0, |t| t.timestamp_millis()),
    }
}

/// A vector index failure as the API says it.
pub(crate) fn backend_err(e: cairn_core::ports::BackendError) -> ApiError {
    ApiError::new(cairn_core::ErrorCode::Unavailable, e.message)
}

fn payload(r: &Record) -> PointPayload {
    PointPayload {
        project: r.record.project.clone(),
        framework: Some(r.record.framework.clone()),
        kind: Some(RECORD.into()),
        session: Some(r.record.session_id.clone()),
        timestamp_ms: r.record.started_at.timestamp_millis(),
    }
}

/// Runs `f` on the blocking pool (the indexes' work).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// A dense sync under way: how far it is. Made by [`Dense::begin_sync`], advanced one batch
/// at a time by [`Dense::sync_step`], so a worker can take the store's write permit per batch
/// and stop between batches.
#[derive(Debug)]
pub struct SyncRun {
    state: State,
    total: u64,
    done: u64,
}

impl SyncRun {
    /// Records embedded so far.
    pub fn done(&self) -> u64 {
        self.done
    }
}

impl Dense {
    /// Embeds every record stored after the last sync (all of them after a model change),
    /// keeps the vectors in the store and the index, in one go. Returns how many records it
    /// embedded. (The service's indexing worker goes batch by batch instead.)
    pub async fn sync(&self, store: &Store, board: &WorkerBoard) -> Result<u64> {
        let mut run = self.begin_sync(store).await?;
        while self.sync_step(store, &mut run, board).await? {}
        self.finish_sync(store, &run, board).await?;
        Ok(run.done)
    }

    /// Prepares a sync: makes sure the index exists with the model's dimension, and starts
    /// afresh when the model changed.
    pub async fn begin_sync(&self, store: &Store) -> Result<SyncRun> {
        let model = self.vectors_id();
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
                // The items' points went with the index: they are put again from the start.
                set_items_progress(store, &State::default()).await?;
            }
            state = State { model, seq: 0 };
        }
        let total = store.counts().await?.records.max(1);
        Ok(SyncRun {
            state,
            total,
            done: 0,
        })
    }

    /// Embeds the next batch of records. Returns false when there was nothing left.
    ///
    /// Each record's vectors are those of its current revision: vectors kept in the store
    /// are reused only when they were made after this revision was captured, and a
    /// revision's vectors replace all of the record's earlier ones (positions past a shorter
    /// revision go too), in the store and in the index.
    pub async fn sync_step(
        &self,
        store: &Store,
        run: &mut SyncRun,
        board: &WorkerBoard,
    ) -> Result<bool> {
        let model = run.state.model.clone();
        let dim = self.embedder.dim();
        let page = store.records_page(run.state.seq, BATCH).await?;
        let Some(last) = page.last().map(|(r, _)| r.seq) else {
            return Ok(false);
        };
        // A page may hold two revisions of one record: only the newest counts.
        let mut newest: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
        for (rec, _) in &page {
            let e = newest.entry(rec.record.id.as_str()).or_insert(rec.seq);
            *e = (*e).max(rec.seq);
        }
        let mut replaced: Vec<String> = Vec::new();
        let mut stored = Vec::new();
        let mut points = Vec::new();
        let mut to_embed: Vec<(&Record, VectorKind, u32, String)> = Vec::new();
        for (rec, chunks) in &page {
            if newest.get(rec.record.id.as_str()) != Some(&rec.seq) {
                continue;
            }
            // What the embedder reads (`unit`): each piece after its author.
            let pieces: Vec<(VectorKind, u32, String)> = if chunks.is_empty() {
                vec![(
                    VectorKind::Chunk,
                    0,
                    cairn_index::unit::embed_text(&rec.record, &rec.record.text),
                )]
            } else {
                chunks
                    .iter()
                    .map(|c| {
                        (
                            VectorKind::Chunk,
                            c.ord,
                            cairn_index::unit::embed_text(&rec.record, &c.text),
                        )
                    })
                    .collect()
            };
            let owner = rec.record.id.to_string();
            // Vectors this model made for this very revision are reused (a refill after
            // the index was lost, or a crash after the store but before the index).
            let have = store.vectors_since(&owner, &model, rec.captured_at).await?;
            let want: std::collections::BTreeSet<(&str, u32)> =
                pieces.iter().map(|(k, o, _)| (k.as_str(), *o)).collect();
            let got: std::collections::BTreeSet<(&str, u32)> =
                have.iter().map(|v| (v.kind.as_str(), v.ord)).collect();
            if have.len() == pieces.len()
                && want == got
                && have.iter().all(|v| v.vector.len() == dim)
            {
                for v in have {
                    points.push(VectorPoint {
                        owner: v.owner,
                        vector_kind: v.kind,
                        ord: v.ord,
                        vector: v.vector,
                        payload: payload(rec),
                    });
                }
                replaced.push(owner);
                continue;
            }
            replaced.push(owner);
            for (kind, ord, text) in pieces {
                to_embed.push((rec, kind, ord, text));
            }
        }
        if !to_embed.is_empty() {
            let embedder = self.embedder.clone();
            let texts: Vec<String> = to_embed.iter().map(|(_, _, _, t)| t.clone()).collect();
            let vectors = blocking(move || {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                embedder.embed(&refs)
            })
            .await?
            .map_err(backend_err)?;
            for ((rec, kind, ord, _), vector) in to_embed.into_iter().zip(vectors) {
                stored.push(StoredVector {
                    owner: rec.record.id.to_string(),
                    kind,
                    ord,
                    model: model.clone(),
                    vector: vector.clone(),
                });
                points.push(VectorPoint {
                    owner: rec.record.id.to_string(),
                    vector_kind: kind,
                    ord,
                    vector,
                    payload: payload(rec),
                });
            }
        }
        // The store first (it is the source of truth), then the index: a newer revision
        // replaces the record's old vectors and points whole.
        let fresh: std::collections::HashSet<&str> =
            stored.iter().map(|v| v.owner.as_str()).collect();
        let owners: Vec<String> = replaced
            .iter()
            .filter(|o| fresh.contains(o.as_str()))
            .cloned()
            .collect();
        for kind in [VectorKind::Chunk, VectorKind::Summary] {
            let of_kind: Vec<StoredVector> =
                stored.iter().filter(|v| v.kind == kind).cloned().collect();
            store
                .replace_vectors(&owners, &model, kind, &of_kind)
                .await?;
        }
        let index = self.index.clone();
        blocking(
            move || -> std::result::Result<(), cairn_core::ports::BackendError> {
                for o in &replaced {
                    index.delete_owner(o)?;
                }
                index.upsert(&points)
            },
        )
        .await?
        .map_err(backend_err)?;
        run.state.seq = last;
        store.set_setting(STATE_KEY, &run.state).await?;
        run.done += page.len() as u64;
        board.report(
            INDEXING,
            cairn_core::api::WorkerState::Running,
            Some(format!("embedding records ({} done)", run.done)),
            Some((run.done as f32 / run.total as f32).min(1.0)),
        );
        Ok(true)
    }

    /// Ends a sync: flushes the index, drops vectors of an earlier model once every record
    /// has new ones, and reports.
    pub async fn finish_sync(
        &self,
        store: &Store,
        run: &SyncRun,
        board: &WorkerBoard,
    ) -> Result<()> {
        let model = &run.state.model;
        if run.done > 0 {
            let index = self.index.clone();
            blocking(move || index.flush())
                .await?
                .map_err(backend_err)?;
            // Vectors of a previous model are no longer needed once every record has new ones.
            store.drop_vectors_except(model).await?;
        }
        board.report(
            INDEXING,
            cairn_core::api::WorkerState::Idle,
            Some(format!(
                "{} vectors in the {} index ({model})",
                store.count_vectors(model).await?,
                self.index.backend()
            )),
            None,
        );
        Ok(())
    }

    /// Rebuilds the vector index from the vectors kept in the store: no model call.
    /// `progress(done, total)` after each page.
    pub async fn rebuild(
        &self,
        store: &Store,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
    ) -> Result<u64> {
        self.copy_to(self.index.clone(), store, progress).await
    }

    /// Empties `target` and fills it from the vectors kept in the store (no model call): the
    /// index's own rebuild, or a migration to another backend. `progress(done, total)` after
    /// each page.
    pub async fn copy_to(
        &self,
        target: Arc<dyn VectorIndex>,
        store: &Store,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
    ) -> Result<u64> {
        let model = self.vectors_id();
        let dim = self.embedder.dim();
        let total = store.count_vectors(&model).await?;
        {
            let index = target.clone();
            blocking(move || index.clear().and_then(|()| index.ensure(dim)))
                .await?
                .map_err(backend_err)?;
        }
        let mut after = 0;
        let mut done = 0u64;
        let mut meta: std::collections::HashMap<String, Option<PointPayload>> =
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
                    Some(Some(p)) => p.clone(),
                    Some(None) => continue,
                    None => {
                        // A record's, an active item's, or (an archived or superseded item's,
                        // or a cleared owner's) none.
                        let p = match store
                            .record(&cairn_core::RecordId::new(v.owner.clone()))
                            .await?
                        {
                            Some(rec) => Some(payload(&rec)),
                            None => store
                                .item(&cairn_core::ItemId::new(v.owner.clone()))
                                .await?
                                .filter(|i| i.is_active())
                                .map(|i| item_payload(&i)),
                        };
                        meta.insert(v.owner.clone(), p.clone());
                        let Some(p) = p else { continue };
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
            let index = target.clone();
            blocking(move || index.upsert(&points))
                .await?
                .map_err(backend_err)?;
            after = last;
            progress(done, total);
        }
        let index = target.clone();
        blocking(move || index.flush())
            .await?
            .map_err(backend_err)?;
        // Every active item's stored vectors went in, so items are found at once; the next
        // items sync still goes over every item from the start (putting the same points
        // again) and embeds those the store keeps no vectors of this model for.
        set_items_progress(store, &State::default()).await?;
        Ok(done)
    }

    /// Refills the index from the start of the log on the next sync, reusing the vectors the
    /// store keeps (no model call): after the index was lost or made afresh.
    pub async fn restart_from_log(&self, store: &Store) -> Result<()> {
        let state = State {
            model: self.vectors_id(),
            seq: 0,
        };
        store.set_setting(STATE_KEY, &state).await?;
        set_items_progress(store, &State::default()).await?;
        Ok(())
    }

    /// Empties the index and forgets how far it was (Clear).
    pub async fn clear(&self, store: &Store) -> Result<()> {
        let index = self.index.clone();
        blocking(move || index.clear())
            .await?
            .map_err(backend_err)?;
        store.set_setting(STATE_KEY, &State::default()).await?;
        set_items_progress(store, &State::default()).await?;
        Ok(())
    }
}

/// Forgets how far the dense index was (Clear, when the vector index was not open).
pub(crate) async fn forget_progress(store: &Store) -> Result<()> {
    store.set_setting(STATE_KEY, &State::default()).await?;
    set_items_progress(store, &State::default()).await?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use cairn_core::ports::BackendError;
    use cairn_core::{Chunk, NewRecord, Outcome, RecordId};

    use super::*;

    /// A deterministic embedder that counts the texts it was asked for (so a test can tell
    /// "no model call" apart from a reuse of stored vectors).
    struct Counting(AtomicU64);

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting-test"
        }
        fn dim(&self) -> usize {
            8
        }
        fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, BackendError> {
            self.0.fetch_add(texts.len() as u64, Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0.1f32; 8];
                    for (i, b) in t.bytes().enumerate() {
                        v[i % 8] += f32::from(b) / 255.0;
                    }
                    v
                })
                .collect())
        }
    }

    fn record(text_parts: &[&str]) -> (NewRecord, Vec<Chunk>) {
        let id = RecordId::derive("test", "session", "turn-1");
        let text = text_parts.join(" ");
        let chunks = if text_parts.len() > 1 {
            text_parts
                .iter()
                .enumerate()
                .map(|(i, t)| Chunk {
                    record_id: id.clone(),
                    ord: u32::try_from(i).unwrap(),
                    start: 0,
                    text: (*t).to_owned(),
                })
                .collect()
        } else {
            Vec::new()
        };
        let rec = NewRecord {
            id,
            framework: "test".into(),
            session_id: "session".into(),
            project: None,
            cwd: None,
            model: None,
            outcome: Outcome::Success,
            started_at: chrono::Utc::now(),
            ended_at: None,
            request: "request".into(),
            author: None,
            text,
            content: serde_json::json!({}),
            source: None,
        };
        (rec, chunks)
    }

    #[tokio::test]
    async fn a_revision_replaces_its_vectors_and_a_refill_needs_no_model_call() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
        let embedder = Arc::new(Counting(AtomicU64::new(0)));
        let dense = Dense {
            embedder: embedder.clone(),
            index: Arc::new(cairn_vectors::MemoryIndex::new()),
            sidecar: None,
        };
        let board = WorkerBoard::default();
        store
            .append_records(&[record(&["first part", "second part", "third part"])])
            .await
            .unwrap();
        assert_eq!(dense.sync(&store, &board).await.unwrap(), 1);
        assert_eq!(embedder.0.load(Ordering::SeqCst), 3);
        assert_eq!(store.count_vectors(&dense.vectors_id()).await.unwrap(), 3);

        // The turn went on and was captured again, shorter: one whole text, no chunks.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        store
            .append_records(&[record(&["the turn was rewritten"])])
            .await
            .unwrap();
        assert_eq!(dense.sync(&store, &board).await.unwrap(), 1);
        assert_eq!(
            embedder.0.load(Ordering::SeqCst),
            4,
            "the revision is embedded"
        );
        let kept = store
            .vectors_of(
                RecordId::derive("test", "session", "turn-1").as_str(),
                &dense.vectors_id(),
            )
            .await
            .unwrap();
        assert_eq!(
            kept.len(),
            1,
            "positions past the shorter revision are gone"
        );
        let expected = embedder
            .embed(&[cairn_index::unit::embed_text(
                &record(&["the turn was rewritten"]).0,
                "the turn was rewritten",
            )
            .as_str()])
            .unwrap()
            .remove(0);
        assert_eq!(kept[0].vector, expected, "the vector is the revision's");
        assert_eq!(dense.index.count().unwrap(), 1);

        // A lost index is refilled from the store with no model call, and the refilled
        // index holds exactly what the store keeps (so the next start sees no gap).
        let calls = embedder.0.load(Ordering::SeqCst);
        let fresh = Dense {
            embedder: embedder.clone(),
            index: Arc::new(cairn_vectors::MemoryIndex::new()),
            sidecar: None,
        };
        fresh.restart_from_log(&store).await.unwrap();
        fresh.sync(&store, &board).await.unwrap();
        assert_eq!(embedder.0.load(Ordering::SeqCst), calls, "no model call");
        assert_eq!(
            fresh.index.count().unwrap(),
            store.count_vectors(&dense.vectors_id()).await.unwrap()
        );
    }
}
