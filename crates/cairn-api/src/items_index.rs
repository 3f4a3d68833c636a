//! The active items' search index, kept on disk and followed from the item log like the
//! records' indexes follow theirs.
//!
//! - **Keywords**: a BM25 index of its own (`<index>/items`) over each item's title,
//!   summary, body, cues and concepts, complete up to an item log seq (its commit payload).
//! - **Vectors**: each active item's stored vectors (summary, cues, body chunks) as points of
//!   kind `item` in the service's vector index, beside the records' (`dense`), complete up to
//!   the seq in the store setting `index.items`.
//!
//! A change to the item log puts again, or takes out, only the items it touched
//! (`Store::items_changed_since`): nothing is rebuilt. A search brings the keyword side up to
//! date itself, at once; the vector side is brought up by the indexing worker (a one-shot CLI
//! call, which has no worker, does it in its search), which also embeds an item the store
//! keeps no vectors of this model for (after a model change, or an import). Clear holds
//! [`ItemsState::hold`] from before it empties the store until it has emptied the index, so
//! no sync writes in between, and a sync's next batch after a Clear does nothing.
use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::api::timestamp as ts;
use cairn_core::api::{SearchHit, WorkerState, name_of, provenance_name};
use cairn_core::ports::{VectorIndex, VectorPoint};
use cairn_core::{Item, NewRecord, Outcome, Record, RecordId};
use cairn_index::{TextHit, TextIndex};
use cairn_store::Store;

use crate::board::INDEXING;
use crate::dense::{self, Dense, backend_err, blocking};
use crate::{ApiError, Result, WorkerBoard};

/// Items put in the vector index per batch (each under [`ItemsState::hold`]).
const BATCH: usize = 64;

fn index_err(e: cairn_index::Error) -> ApiError {
    ApiError::internal(format!("the items' keyword index failed: {e}"))
}

/// The text an item is found by: title, summary, body, cues and concepts.
fn searchable(i: &Item) -> String {
    format!(
        "{}\n{}\n\n{}\n\nCues: {}\nConcepts: {}",
        i.title,
        i.summary,
        i.body,
        i.cues.join("; "),
        i.concepts.join(", ")
    )
}

/// An item as a document of the keyword index (its kind in the framework field).
fn pseudo_record(i: &Item) -> (Record, Vec<cairn_core::Chunk>) {
    let when = i.said_at.unwrap_or_default();
    let id = RecordId::new(i.id.as_str());
    let text = searchable(i);
    let chunks = cairn_text::chunk::split(&text)
        .into_iter()
        .enumerate()
        .map(|(ord, (start, piece))| cairn_core::Chunk {
            record_id: id.clone(),
            ord: u32::try_from(ord).unwrap_or(u32::MAX),
            start: u32::try_from(start).unwrap_or(u32::MAX),
            text: piece.to_owned(),
        })
        .collect();
    (
        Record {
            seq: 0,
            captured_at: when,
            record: NewRecord {
                id,
                framework: name_of(&i.kind),
                session_id: i.id.as_str().to_owned(),
                project: i.project.clone(),
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: when,
                ended_at: None,
                request: i.title.clone(),
                author: None,
                text,
                content: serde_json::json!({}),
                source: None,
            },
        },
        chunks,
    )
}

/// The active items, as the search and the turn note read them: the keyword index and the
/// items' view of the vector index (both live), and the items as of `stamp`.
pub(crate) struct ItemsSearch {
    /// The item log's state the keyword side and `items` are as of.
    stamp: (i64, i64),
    text: Arc<TextIndex>,
    vectors: Option<Arc<dyn VectorIndex>>,
    items: Arc<HashMap<String, Item>>,
}

impl ItemsSearch {
    /// The items as a corpus of a search (none when there are none). A project's search sees
    /// that project's items and those of no project, never another project's.
    pub(crate) fn corpus_of(&self, project: Option<String>) -> Option<cairn_recall::Corpus> {
        (!self.items.is_empty()).then(|| {
            cairn_recall::Corpus::held(
                self.text.clone(),
                self.vectors.clone(),
                cairn_recall::ALL_KINDS,
                project,
            )
        })
    }

    /// A hit of the items' corpus as a search hit.
    pub(crate) fn item_hit(&self, h: TextHit) -> Option<SearchHit> {
        let item = self.items.get(&h.record_id)?;
        // The summary is what an item says; the passage only when it matched elsewhere.
        let passage = if h.passage.contains(&item.summary) || h.passage.is_empty() {
            item.summary.clone()
        } else {
            h.passage
        };
        Some(SearchHit {
            id: item.id.as_str().to_owned(),
            source: "item".into(),
            title: Some(item.title.clone()),
            item_kind: Some(name_of(&item.kind)),
            item_provenance: Some(provenance_name(item).to_owned()),
            framework: "item".into(),
            project: item.project.clone(),
            session_id: String::new(),
            timestamp: item.said_at.as_ref().map(ts).unwrap_or_default(),
            outcome: String::new(),
            passage,
            score: h.score,
            in_range: h.in_range,
        })
    }
}

/// The turn note reads the items through this index (every project's).
impl cairn_turn::ItemsIndex for ItemsSearch {
    fn corpus(&self) -> Option<cairn_recall::Corpus> {
        self.corpus_of(None)
    }

    fn item(&self, id: &str) -> Option<&Item> {
        self.items.get(id)
    }
}

/// What [`ItemsState::hold`] guards: the last snapshot, and how many Clears there were.
#[derive(Default)]
pub(crate) struct Slot {
    search: Option<Arc<ItemsSearch>>,
    generation: u64,
}

/// What the service keeps for the items' search.
pub(crate) struct ItemsState {
    text: Arc<TextIndex>,
    slot: tokio::sync::Mutex<Slot>,
}

impl std::fmt::Debug for ItemsState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemsState").finish_non_exhaustive()
    }
}

impl ItemsState {
    /// The items' index over the keyword index `text` (on disk, or in memory when it could
    /// not be opened).
    pub(crate) fn new(text: TextIndex) -> Self {
        Self {
            text: Arc::new(text),
            slot: tokio::sync::Mutex::new(Slot::default()),
        }
    }

    /// The index as the item log is now: the keyword side brought up to date (only what
    /// changed since it was), the vector side as it is. The flag says whether the item log
    /// changed since the last call.
    pub(crate) async fn search(
        &self,
        store: &Store,
        dense: Option<&Dense>,
    ) -> Result<(Arc<ItemsSearch>, bool)> {
        let mut slot = self.slot.lock().await;
        let stamp = store.item_log_stamp().await?;
        let vectors = dense.map(Dense::items);
        if let Some(s) = slot
            .search
            .as_ref()
            .filter(|s| s.stamp == stamp && s.vectors.is_some() == vectors.is_some())
        {
            return Ok((s.clone(), false));
        }
        let changed = slot.search.as_ref().is_none_or(|s| s.stamp != stamp);
        let previous = slot.search.as_ref().map(|s| s.items.clone());
        let items = self.sync_text(store, stamp, previous).await?;
        let built = Arc::new(ItemsSearch {
            stamp,
            text: self.text.clone(),
            vectors,
            items,
        });
        slot.search = Some(built.clone());
        Ok((built, changed))
    }

    /// Brings the keyword side up to `stamp` and returns the active items. `previous`: the
    /// active items as of the keyword side's last commit in this process.
    async fn sync_text(
        &self,
        store: &Store,
        stamp: (i64, i64),
        previous: Option<Arc<HashMap<String, Item>>>,
    ) -> Result<Arc<HashMap<String, Item>>> {
        let mut synced = self.text.indexed_seq();
        if stamp.0 < synced {
            // The log is behind the index (emptied by a Clear the index missed): start afresh.
            let text = self.text.clone();
            blocking(move || text.clear()).await?.map_err(index_err)?;
            synced = 0;
        }
        let (mut items, changed) = match previous {
            Some(prev) if synced > 0 || prev.is_empty() => {
                if synced == stamp.0 {
                    return Ok(prev);
                }
                let changed = store.items_changed_since(synced).await?;
                (
                    (*prev).clone(),
                    changed.into_iter().map(|(_, i)| i).collect(),
                )
            }
            _ => {
                let all: HashMap<String, Item> = store
                    .items(false)
                    .await?
                    .into_iter()
                    .map(|i| (i.id.as_str().to_owned(), i))
                    .collect();
                let changed: Vec<Item> = if synced == 0 {
                    all.values().cloned().collect()
                } else {
                    store
                        .items_changed_since(synced)
                        .await?
                        .into_iter()
                        .map(|(_, i)| i)
                        .collect()
                };
                (all, changed)
            }
        };
        for i in &changed {
            if i.is_active() {
                items.insert(i.id.as_str().to_owned(), i.clone());
            } else {
                items.remove(i.id.as_str());
            }
        }
        if synced != stamp.0 || !changed.is_empty() {
            let text = self.text.clone();
            blocking(move || -> std::result::Result<(), cairn_index::Error> {
                for i in &changed {
                    text.remove(i.id.as_str());
                    if i.is_active() {
                        let (rec, chunks) = pseudo_record(i);
                        text.put(&rec, &chunks)?;
                    }
                }
                text.commit(stamp.0)
            })
            .await?
            .map_err(index_err)?;
        }
        Ok(Arc::new(items))
    }

    /// Brings the items' points in the vector index up to date with the item log: takes out
    /// every item changed since the last sync and puts the active ones in again with their
    /// stored vectors, embedding those the store keeps none of this model for. Batch by
    /// batch, each under [`ItemsState::hold`], so Clear waits for one batch at most and a
    /// batch after a Clear does nothing. Waits while the records' points are of another model
    /// (the records' sync starts the index afresh first). Returns how many items it went over.
    pub(crate) async fn sync_vectors(
        &self,
        store: &Store,
        d: &Dense,
        board: Option<&WorkerBoard>,
    ) -> Result<u64> {
        let generation = self.slot.lock().await.generation;
        let model = d.vectors_id();
        let records = dense::records_progress(store).await?;
        if !records.model.is_empty() && records.model != model {
            return Ok(0);
        }
        let mut progress = dense::items_progress(store).await?;
        if progress.model != model {
            progress = dense::State {
                model: model.clone(),
                seq: 0,
            };
        }
        let stamp = store.item_log_stamp().await?;
        if progress.seq == stamp.0 {
            return Ok(0);
        }
        if progress.seq > stamp.0 {
            progress.seq = 0;
        }
        {
            let (index, dim) = (d.index.clone(), d.embedder.dim());
            if let Err(e) = blocking(move || index.ensure(dim)).await? {
                // Another dimension: the records' sync starts the index afresh first.
                tracing::info!(error = %e.message, "the items wait for the vector index");
                return Ok(0);
            }
        }
        let changed = store.items_changed_since(progress.seq).await?;
        let total = changed.len();
        let view = d.items();
        // From the start into an index holding no item: nothing to take out first.
        let empty = progress.seq == 0 && {
            let index = view.clone();
            blocking(move || index.count()).await?.is_ok_and(|n| n == 0)
        };
        let mut done = 0u64;
        for batch in changed.chunks(BATCH) {
            let slot = self.slot.lock().await;
            if slot.generation != generation {
                return Ok(done);
            }
            let owners: Vec<String> = batch
                .iter()
                .filter(|(_, i)| i.is_active())
                .map(|(_, i)| i.id.as_str().to_owned())
                .collect();
            let mut stored: HashMap<String, Vec<cairn_store::StoredVector>> = HashMap::new();
            for v in store.vectors_of_many(&owners, &model).await? {
                stored.entry(v.owner.clone()).or_default().push(v);
            }
            let missing: Vec<Item> = batch
                .iter()
                .filter(|(_, i)| i.is_active() && !stored.contains_key(i.id.as_str()))
                .map(|(_, i)| i.clone())
                .collect();
            if !missing.is_empty() {
                let (embedder, m) = (d.embedder.clone(), model.clone());
                let made = blocking(move || {
                    missing
                        .iter()
                        .map(|i| cairn_distill::item_vectors(embedder.as_ref(), &m, i))
                        .collect::<std::result::Result<Vec<_>, _>>()
                })
                .await?;
                match made {
                    Ok(lists) => {
                        let made: Vec<_> = lists.into_iter().flatten().collect();
                        store.put_vectors(&made).await?;
                        for v in made {
                            stored.entry(v.owner.clone()).or_default().push(v);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.message, "cannot embed items; they are found by keywords only");
                    }
                }
            }
            let mut points = Vec::new();
            for (_, item) in batch.iter().filter(|(_, i)| i.is_active()) {
                for v in stored.remove(item.id.as_str()).unwrap_or_default() {
                    points.push(VectorPoint {
                        owner: v.owner,
                        vector_kind: v.kind,
                        ord: v.ord,
                        vector: v.vector,
                        payload: dense::item_payload(item),
                    });
                }
            }
            let gone: Vec<String> = if empty {
                Vec::new()
            } else {
                batch
                    .iter()
                    .map(|(_, i)| i.id.as_str().to_owned())
                    .collect()
            };
            let index = view.clone();
            blocking(
                move || -> std::result::Result<(), cairn_core::ports::BackendError> {
                    for owner in &gone {
                        index.delete_owner(owner)?;
                    }
                    index.upsert(&points)
                },
            )
            .await?
            .map_err(backend_err)?;
            if let Some((seq, _)) = batch.last() {
                progress.seq = *seq;
            }
            dense::set_items_progress(store, &progress).await?;
            done += batch.len() as u64;
            if let Some(board) = board {
                #[allow(clippy::cast_precision_loss)]
                board.report(
                    INDEXING,
                    WorkerState::Running,
                    Some(format!("indexing items ({done} of {total})")),
                    Some((done as f32 / total.max(1) as f32).min(1.0)),
                );
            }
            drop(slot);
        }
        let index = view.clone();
        blocking(move || index.flush())
            .await?
            .map_err(backend_err)?;
        Ok(done)
    }

    /// Held by Clear from before it empties the store until it has emptied the index: no
    /// sync writes meanwhile.
    pub(crate) async fn hold(&self) -> tokio::sync::MutexGuard<'_, Slot> {
        self.slot.lock().await
    }

    /// Empties the keyword side and forgets what it knew (Clear and the index rebuild, holding
    /// [`ItemsState::hold`]); a sync's batch after it does nothing. The vector side is emptied
    /// with the vector index.
    pub(crate) async fn clear(&self, slot: &mut Slot) -> Result<()> {
        slot.search = None;
        slot.generation += 1;
        let text = self.text.clone();
        blocking(move || text.clear()).await?.map_err(index_err)
    }
}
