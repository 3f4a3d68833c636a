//! The active items' search index: BM25 over each item's title, summary, body, cues and
//! concepts, and its stored vectors (summary, cues, body chunks) in an exact in-memory vector
//! index. It is rebuilt when the item log changed (its newest event), with no model call: an
//! item whose vectors are missing (after an embedding model change) is embedded once and its
//! vectors stored. The service holds its [`ItemsState`]; the items methods are in `items_api`.
use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::api::timestamp as ts;
use cairn_core::api::{SearchHit, name_of, provenance_name};
use cairn_core::ports::{PointPayload, VectorIndex, VectorPoint};
use cairn_core::{Item, NewRecord, Outcome, Record, RecordId};
use cairn_index::{TextHit, TextIndex};
use cairn_store::Store;

use crate::dense::Dense;
use crate::{ApiError, Result};

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

/// The active items, indexed for search.
pub(crate) struct ItemsSearch {
    /// The item log's state it was built from.
    stamp: (i64, i64),
    text: Arc<TextIndex>,
    vectors: Option<Arc<dyn VectorIndex>>,
    items: HashMap<String, Item>,
}

impl ItemsSearch {
    /// The items as a corpus of a search (none when there are none). A project's search sees
    /// that project's items and those of no project, never another project's.
    pub(crate) fn corpus_of(&self, project: Option<String>) -> Option<cairn_recall::Corpus> {
        (!self.items.is_empty())
            .then(|| cairn_recall::Corpus::held(self.text.clone(), self.vectors.clone(), project))
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

/// What the service keeps for item search.
#[derive(Default)]
pub(crate) struct ItemsState {
    search: tokio::sync::Mutex<Option<Arc<ItemsSearch>>>,
}

impl std::fmt::Debug for ItemsState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemsState").finish_non_exhaustive()
    }
}

impl ItemsState {
    /// The items' search index, rebuilt when the item log changed.
    pub(crate) async fn search(
        &self,
        store: &Store,
        dense: Option<Dense>,
    ) -> Result<Arc<ItemsSearch>> {
        let stamp = store.item_log_stamp().await?;
        let mut slot = self.search.lock().await;
        if let Some(s) = slot.as_ref().filter(|s| s.stamp == stamp) {
            return Ok(s.clone());
        }
        let items = store.items(false).await?;
        let text = TextIndex::in_memory().map_err(|e| ApiError::internal(e.to_string()))?;
        for i in &items {
            let (rec, chunks) = pseudo_record(i);
            text.put(&rec, &chunks)
                .map_err(|e| ApiError::internal(e.to_string()))?;
        }
        text.commit(0)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let mut vectors: Option<Arc<dyn VectorIndex>> = None;
        if let Some(d) = dense {
            let model = d.vectors_id();
            let owners: Vec<String> = items.iter().map(|i| i.id.as_str().to_owned()).collect();
            let mut stored = store.vectors_of_many(&owners, &model).await?;
            let have: std::collections::HashSet<&str> =
                stored.iter().map(|v| v.owner.as_str()).collect();
            let missing: Vec<Item> = items
                .iter()
                .filter(|i| !have.contains(i.id.as_str()))
                .cloned()
                .collect();
            if !missing.is_empty() {
                let embedder = d.embedder.clone();
                let m = model.clone();
                let made = tokio::task::spawn_blocking(move || {
                    missing
                        .iter()
                        .map(|i| cairn_distill::item_vectors(embedder.as_ref(), &m, i))
                        .collect::<std::result::Result<Vec<_>, _>>()
                })
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
                match made {
                    Ok(lists) => {
                        let batch: Vec<_> = lists.into_iter().flatten().collect();
                        store.put_vectors(&batch).await?;
                        stored.extend(batch);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.message, "cannot embed items; they are found by keywords only")
                    }
                }
            }
            let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
            let points: Vec<VectorPoint> = stored
                .into_iter()
                .filter_map(|v| {
                    let item = by_id.get(v.owner.as_str())?;
                    Some(VectorPoint {
                        payload: PointPayload {
                            project: item.project.clone(),
                            framework: Some("item".into()),
                            kind: Some(name_of(&item.kind)),
                            session: Some(item.id.as_str().to_owned()),
                            timestamp_ms: item.said_at.map_or(0, |t| t.timestamp_millis()),
                        },
                        owner: v.owner,
                        vector_kind: v.kind,
                        ord: v.ord,
                        vector: v.vector,
                    })
                })
                .collect();
            let index = cairn_vectors::MemoryIndex::new();
            if let Some(dim) = points.first().map(|p| p.vector.len()) {
                index
                    .ensure(dim)
                    .and_then(|()| index.upsert(&points))
                    .map_err(|e| ApiError::internal(e.message))?;
            }
            vectors = Some(Arc::new(index));
        }
        let built = Arc::new(ItemsSearch {
            stamp,
            text: Arc::new(text),
            vectors,
            items: items
                .into_iter()
                .map(|i| (i.id.as_str().to_owned(), i))
                .collect(),
        });
        *slot = Some(built.clone());
        Ok(built)
    }
}
