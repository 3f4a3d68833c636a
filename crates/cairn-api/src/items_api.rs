//! Typed memory items in the service: found by search beside records and notes, opened whole
//! (history, relations, supersede chain, source requests), explored through their relations
//! and concepts, and listed per conversation or project.
//!
//! Search reads the active items' index (`items_index`).
use std::sync::Arc;

use cairn_core::api::timestamp as ts;
use cairn_core::api::{
    ExploreNode, ItemEventView, ItemList, ItemRelationView, ItemsReq, OpenedItem,
};
use cairn_core::{Item, ItemId, RecordId, RelationKind};

use crate::items_index::ItemsSearch;
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

impl Service {
    /// The items' search index, rebuilt when the item log changed.
    pub(crate) async fn items_search(&self) -> Result<Arc<ItemsSearch>> {
        let dense = self.dense_parts().await;
        let (search, changed) = self
            .items_state()
            .search(self.store(), dense.as_ref())
            .await?;
        if let Some(d) = &dense {
            if self.is_direct() {
                // A one-shot CLI call has no indexing worker: it puts the items' vectors in
                // itself (nothing to do when they are up to date).
                if let Err(e) = self.items_state().sync_vectors(self.store(), d, None).await {
                    tracing::warn!(error = %e, "cannot index the items' vectors; they are found by keywords");
                }
            } else if changed {
                self.wake_indexing();
            }
        }
        Ok(search)
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
            items.retain(Item::is_active);
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
