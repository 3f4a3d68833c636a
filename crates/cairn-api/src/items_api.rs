//! Typed memory items in the service: found by search beside records and notes, opened whole
//! (history, relations, supersede chain, source requests), explored through their relations
//! and concepts, and listed per conversation or project.
//!
//! Search reads an index of the active items built from the store: BM25 over each item's
//! title, summary, body, cues and concepts, and its stored vectors (summary, cues, body
//! chunks) in an exact in-memory vector index. It is rebuilt when the item log changed (its
//! newest event), with no model call: an item whose vectors are missing (after an embedding
//! model change) is embedded once and its vectors stored.
use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::api::timestamp as ts;
use cairn_core::api::{
    ExploreNode, ItemEventView, ItemList, ItemRelationView, ItemsReq, OpenedItem, SearchHit,
};
use cairn_core::ports::{PointPayload, VectorIndex, VectorPoint};
use cairn_core::{Item, ItemId, NewRecord, Outcome, Record, RecordId, RelationKind};
use cairn_index::{TextHit, TextIndex};

use crate::{ApiError, Result, Service};

// An item as the API shows it and the names values have on the wire live in cairn-core.
pub(crate) use cairn_core::api::name_of;
pub use cairn_core::api::{item_view, provenance_name};

/// The name of a relation kind.
pub fn relation_name(k: RelationKind) -> &'static str {
    match k {
        RelationKind::Related => "related",
        RelationKind::Supersedes => "supersedes",
        RelationKind::Contradicts => "contradicts",
    }
}

/// An item as a node of the explore graph.
pub fn item_node(i: &Item, depth: u32) -> ExploreNode {
    ExploreNode {
        id: i.id.as_str().to_owned(),
        kind: "item".into(),
        label: format!("{}: {}", name_of(&i.kind), i.title),
        depth,
        framework: None,
        project: i.project.clone(),
        timestamp: i.said_at.as_ref().map(ts),
    }
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
    fn corpus_of(&self, project: Option<String>) -> Option<cairn_recall::Corpus> {
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

impl Service {
    /// The items' search index, rebuilt when the item log changed.
    pub(crate) async fn items_search(&self) -> Result<Arc<ItemsSearch>> {
        let stamp = self.store().item_log_stamp().await?;
        let mut slot = self.items_state().search.lock().await;
        if let Some(s) = slot.as_ref().filter(|s| s.stamp == stamp) {
            return Ok(s.clone());
        }
        let items = self.store().items(false).await?;
        let text = TextIndex::in_memory().map_err(|e| ApiError::internal(e.to_string()))?;
        for i in &items {
            let (rec, chunks) = pseudo_record(i);
            text.put(&rec, &chunks)
                .map_err(|e| ApiError::internal(e.to_string()))?;
        }
        text.commit(0)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let mut vectors: Option<Arc<dyn VectorIndex>> = None;
        if let Some(d) = self.dense_parts().await {
            let model = d.vectors_id();
            let owners: Vec<String> = items.iter().map(|i| i.id.as_str().to_owned()).collect();
            let mut stored = self.store().vectors_of_many(&owners, &model).await?;
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
                        self.store().put_vectors(&batch).await?;
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

    /// The active items as a corpus of a search (none when there are none). A project's
    /// search sees that project's items and those of no project, never another project's.
    pub(crate) async fn items_corpus(
        &self,
        project: Option<String>,
    ) -> Result<Option<(Arc<ItemsSearch>, cairn_recall::Corpus)>> {
        let index = self.items_search().await?;
        Ok(index.corpus_of(project).map(|c| (index, c)))
    }

    /// An item (current state), or a not-found error naming it.
    pub(crate) async fn item_or_404(&self, id: &str) -> Result<Item> {
        self.store().item(&ItemId::new(id)).await?.ok_or_else(|| {
            ApiError::new(
                cairn_core::ErrorCode::NotFound,
                format!("no item {id} (cleared, or never made)"),
            )
        })
    }

    /// Active items whose concepts include `term`, most important first.
    pub(crate) async fn items_with_concept(&self, term: &str, limit: usize) -> Result<Vec<Item>> {
        let term = term.to_lowercase();
        let mut found: Vec<Item> = self
            .store()
            .items(false)
            .await?
            .into_iter()
            .filter(|i| i.concepts.iter().any(|c| c.to_lowercase() == term))
            .collect();
        found.sort_by(|a, b| {
            b.importance
                .cmp(&a.importance)
                .then(b.said_at.cmp(&a.said_at))
        });
        found.truncate(limit);
        Ok(found)
    }

    /// An item whole: its history, relations, supersede chain and source requests.
    pub(crate) async fn opened_item(&self, id: &str) -> Result<OpenedItem> {
        let item = self.item_or_404(id).await?;
        let history = self
            .store()
            .item_history(&item.id)
            .await?
            .into_iter()
            .map(|e| ItemEventView {
                seq: e.seq,
                at: ts(&e.at),
                kind: e.event.kind.as_str().to_owned(),
                reason: e.event.reason.clone(),
                item: item_view(&e.event.item),
            })
            .collect();
        let mut relations = Vec::new();
        for r in self.store().relations_of(&item.id).await? {
            let other = if r.from == item.id { &r.to } else { &r.from };
            let other_title = self.store().item(other).await?.map(|o| o.title);
            relations.push(ItemRelationView {
                from: r.from.as_str().to_owned(),
                to: r.to.as_str().to_owned(),
                kind: relation_name(r.kind).to_owned(),
                weight: r.weight,
                other_title,
            });
        }
        // The chain: what it replaced (back through "supersedes" edges), then what replaced
        // it (forward through superseded_by).
        let mut chain: Vec<String> = vec![item.id.as_str().to_owned()];
        let mut back = item.id.clone();
        for _ in 0..50 {
            let older = self
                .store()
                .relations_of(&back)
                .await?
                .into_iter()
                .find(|r| r.kind == RelationKind::Supersedes && r.from == back)
                .map(|r| r.to);
            match older {
                Some(o) if !chain.contains(&o.as_str().to_owned()) => {
                    chain.insert(0, o.as_str().to_owned());
                    back = o;
                }
                _ => break,
            }
        }
        let mut forward = item.superseded_by.clone();
        while let Some(next) = forward.take() {
            if chain.contains(&next.as_str().to_owned()) || chain.len() > 100 {
                break;
            }
            chain.push(next.as_str().to_owned());
            forward = self
                .store()
                .item(&next)
                .await?
                .and_then(|n| n.superseded_by);
        }
        let mut sources = Vec::new();
        for s in &item.sources {
            if let Some(r) = self.store().record(s).await? {
                sources.push(self.opened_record(&r).await?);
            }
        }
        Ok(OpenedItem {
            item: item_view(&item),
            history,
            relations,
            chain,
            sources,
        })
    }

    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn items_list(&self, req: ItemsReq) -> Result<ItemList> {
        let limit = req.limit.unwrap_or(200).clamp(1, 2_000) as usize;
        let mut items = match (&req.framework, &req.session_id) {
            (Some(f), Some(s)) => {
                let ids: Vec<RecordId> = self
                    .store()
                    .session_records(f, s)
                    .await?
                    .into_iter()
                    .map(|r| r.record.id)
                    .collect();
                self.store().items_from(&ids).await?
            }
            (None, None) => self.store().items(req.all).await?,
            _ => {
                return Err(ApiError::bad_request(
                    "a conversation is named by both framework and session_id",
                ));
            }
        };
        if !req.all {
            items.retain(|i| !i.archived && i.superseded_by.is_none());
        }
        if let Some(p) = &req.project {
            items.retain(|i| i.project.as_deref() == Some(p.as_str()));
        }
        items.sort_by_key(|i| std::cmp::Reverse(i.said_at));
        items.truncate(limit);
        Ok(ItemList {
            items: items.iter().map(item_view).collect(),
        })
    }
}
