//! Reconcile (DESIGN §1.3): each new item against the items already known, by the
//! similarity of their summaries — merge from 0.93 (0.97 for episodes), one batched model
//! decision from 0.80, new below. Nothing is overwritten: every state is an event.
//!
//! Which known items a new item is compared with: with the items' vector index
//! ([`Distiller::with_items_index`], as the service runs it), the [`NEAREST`] summaries the
//! index finds for the new item's, the items the index may not hold yet (changed in the item
//! log after the point it was brought up to, which includes every item made earlier in the
//! same run), and the known item of the new item's own id; the similarity is then computed
//! exactly from the stored summary vectors, as without the index. Without an index, every
//! active item is loaded and compared (what every window did before, whatever the store held).
use std::collections::HashSet;
use std::sync::Arc;

use cairn_core::{
    Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, Relation, RelationKind, VectorKind,
};
use cairn_llm::Request;
use cairn_store::StoredVector;
use serde::Serialize;

use crate::rules::{merge, numbers_differ};
use crate::{DistillError, Distiller, prompt};

/// Similarity from which an item merges into a known one.
pub const MERGE: f32 = 0.93;
/// Similarity from which an episode merges into a known one.
pub const MERGE_EPISODE: f32 = 0.97;
/// Similarity from which the model decides.
pub const DECIDE: f32 = 0.80;

/// How many nearest summaries the items' index gives a new item to be compared with. The best
/// known item of the same kind is missed only when this many items of other kinds (or of the
/// same kind, nearer) come before it, all at a similarity that decides something (0.80).
pub const NEAREST: usize = 16;

/// Candidates the index re-scores from the full vectors for each new item: a few times
/// [`NEAREST`], since the nearest few are all that is kept.
const RESCORED: usize = 64;

/// What became of a new item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Stored as a new item.
    Created {
        /// The item.
        item: Box<Item>,
    },
    /// Merged into a known item (its id kept).
    Merged {
        /// The known item after the merge.
        item: Box<Item>,
        /// Similarity of the summaries.
        similarity: f32,
    },
    /// Stored as new; the known item it updates or contradicts is superseded.
    Superseded {
        /// The new item.
        item: Box<Item>,
        /// The item it replaced.
        replaced: ItemId,
        /// True when the model said they contradict (not just a newer version).
        contradicts: bool,
    },
    /// Stored as new, stated only by outside text, and at odds with (or a newer version of)
    /// a known item the user or the agent stated: the known item stays, the pair is marked
    /// contradicting and waits in the review inbox for the user.
    Contested {
        /// The new item.
        item: Box<Item>,
        /// The known item it did not replace.
        with: ItemId,
        /// Similarity of the summaries.
        similarity: f32,
    },
    /// Stored as new and related to a known item.
    Related {
        /// The new item.
        item: Box<Item>,
        /// The known item.
        to: ItemId,
        /// Similarity of the summaries.
        similarity: f32,
    },
}

impl Action {
    /// The item the action stored.
    pub fn item(&self) -> &Item {
        match self {
            Self::Created { item }
            | Self::Merged { item, .. }
            | Self::Superseded { item, .. }
            | Self::Contested { item, .. }
            | Self::Related { item, .. } => item,
        }
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// True when `new` may not change or replace `known`: it is stated only by outside text and
/// the known item by the user or the agent. Outside text never overrides their words
/// without the user's review.
fn guarded(known: &Item, new: &Item) -> bool {
    // The same item found again in its own requests (a rebuild) is checked again instead.
    known.id != new.id && new.untrusted() && !known.untrusted()
}

fn normal_title(t: &str) -> String {
    t.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn kind_name(k: ItemKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

struct Known {
    item: Item,
    summary: Option<Vec<f32>>,
}

/// The known items a reconcile compares with, gathered as it goes when the index finds them.
#[derive(Default)]
struct KnownSet {
    list: Vec<Known>,
    ids: HashSet<String>,
}

impl KnownSet {
    fn push(&mut self, k: Known) {
        self.ids.insert(k.item.id.as_str().to_owned());
        self.list.push(k);
    }
}

enum Pending {
    Decide { new: usize, known: usize, sim: f32 },
}

impl Distiller {
    fn vectors_model(&self) -> Option<String> {
        self.embedder
            .as_ref()
            .map(|e| cairn_index::unit::vectors_id(e.model_id()))
    }

    fn embed(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>, DistillError> {
        match &self.embedder {
            Some(e) if !texts.is_empty() => e
                .embed(texts)
                .map(Some)
                .map_err(|e| DistillError::Embed(e.to_string())),
            _ => Ok(None),
        }
    }

    /// Stores an item's vectors: its summary, each cue and each chunk of its body.
    async fn store_vectors(&self, item: &Item) -> Result<Option<Vec<f32>>, DistillError> {
        let (Some(embedder), Some(model)) = (&self.embedder, self.vectors_model()) else {
            return Ok(None);
        };
        let batch = item_vectors(embedder.as_ref(), &model, item)
            .map_err(|e| DistillError::Embed(e.to_string()))?;
        let summary = batch.first().map(|v| v.vector.clone());
        self.store.put_vectors(&batch).await?;
        Ok(summary)
    }

    /// `items` with their summary vectors (a fifth of what an item keeps: no cues, no body
    /// chunks), added to `known`.
    async fn add_known(&self, known: &mut KnownSet, items: Vec<Item>) -> Result<(), DistillError> {
        let mut summaries = match self.vectors_model() {
            Some(model) if !items.is_empty() => {
                let owners: Vec<String> = items.iter().map(|i| i.id.as_str().to_owned()).collect();
                self.store.summary_vectors(&owners, &model).await?
            }
            _ => std::collections::HashMap::new(),
        };
        for item in items {
            let summary = summaries.remove(item.id.as_str());
            known.push(Known { item, summary });
        }
        Ok(())
    }

    /// What a reconcile starts from: with the index and the new items' vectors to ask it
    /// with, the active items it may not hold yet (the rest are found through it); else every
    /// active item.
    async fn known(&self, asking: bool) -> Result<KnownSet, DistillError> {
        let items = match &self.items_index {
            Some((_, through)) if asking => self
                .store
                .items_changed_since(*through)
                .await?
                .into_iter()
                .map(|(_, i)| i)
                .filter(Item::is_active)
                .collect(),
            _ => self.store.items(false).await?,
        };
        let mut known = KnownSet::default();
        self.add_known(&mut known, items).await?;
        Ok(known)
    }

    /// Adds to `known` the active items the index finds nearest to `vector` (the new item's
    /// summary) and the known item of the new item's own `id`.
    async fn gather(
        &self,
        index: Arc<dyn cairn_core::ports::VectorIndex>,
        vector: &[f32],
        id: &ItemId,
        known: &mut KnownSet,
    ) -> Result<(), DistillError> {
        let v = vector.to_vec();
        let hits = tokio::task::spawn_blocking(move || {
            index.search_rescoring(
                VectorKind::Summary,
                &v,
                &cairn_core::ports::VectorFilter::default(),
                NEAREST,
                RESCORED,
            )
        })
        .await
        .map_err(|e| DistillError::Index(e.to_string()))?
        .map_err(|e| DistillError::Index(e.message))?;
        let mut wanted: Vec<ItemId> = Vec::new();
        for owner in hits
            .into_iter()
            .map(|h| h.owner)
            .chain(std::iter::once(id.as_str().to_owned()))
        {
            if !known.ids.contains(&owner) && !wanted.iter().any(|w| w.as_str() == owner) {
                wanted.push(ItemId::new(owner));
            }
        }
        let mut found = Vec::with_capacity(wanted.len());
        for id in &wanted {
            // The index may still hold an item merged away or archived since.
            if let Some(item) = self.store.item(id).await?
                && item.is_active()
            {
                found.push(item);
            }
        }
        self.add_known(known, found).await
    }

    async fn event(
        &self,
        kind: ItemEventKind,
        item: &Item,
        reason: String,
    ) -> Result<(), DistillError> {
        self.store
            .append_item_event(&NewItemEvent {
                kind,
                item: item.clone(),
                reason: Some(reason),
            })
            .await?;
        Ok(())
    }

    async fn create(&self, item: &Item) -> Result<Option<Vec<f32>>, DistillError> {
        self.event(
            ItemEventKind::Created,
            item,
            format!("distilled ({})", prompt::PROMPT_VERSION),
        )
        .await?;
        self.store_vectors(item).await
    }

    async fn relate(
        &self,
        from: &ItemId,
        to: &ItemId,
        kind: RelationKind,
        weight: f32,
    ) -> Result<(), DistillError> {
        self.store
            .put_relation(&Relation {
                from: from.clone(),
                to: to.clone(),
                kind,
                weight,
            })
            .await?;
        Ok(())
    }

    /// One model decision for every pair in the 0.80–0.93 band; unsure (or no answer) is
    /// "related".
    async fn decide(&self, pairs: &[(&Item, &Item)]) -> Vec<String> {
        let mut prompt = String::from("Pairs of a known item and a new item:\n");
        for (i, (known, new)) in pairs.iter().enumerate() {
            let said = |it: &Item| {
                it.said_at
                    .map(|t| t.format(" (said %Y-%m-%d)").to_string())
                    .unwrap_or_default()
            };
            prompt.push_str(&format!(
                "\nPair {}:\nKnown {}{}: {} — {}\nNew {}{}: {} — {}\n",
                i + 1,
                kind_name(known.kind),
                said(known),
                known.title,
                known.summary,
                kind_name(new.kind),
                said(new),
                new.title,
                new.summary,
            ));
        }
        prompt.push_str("\nDecide each pair.");
        let request = Request {
            purpose: "reconcile".into(),
            system: prompt::RECONCILE_SYSTEM.into(),
            prompt,
            schema: prompt::reconcile_schema(pairs.len()),
            max_tokens: 64 + 24 * u32::try_from(pairs.len()).unwrap_or(1_000),
        };
        let mut out = vec!["related".to_owned(); pairs.len()];
        match self.llm.call(&request).await {
            Ok(answer) => {
                for d in answer.value["decisions"].as_array().into_iter().flatten() {
                    let pair = d["pair"].as_u64().and_then(|p| usize::try_from(p).ok());
                    if let (Some(p), Some(dec)) = (pair, d["decision"].as_str())
                        && let Some(slot) = p.checked_sub(1).and_then(|i| out.get_mut(i))
                    {
                        dec.clone_into(slot);
                    }
                }
            }
            Err(e) => tracing::info!(error = %e, "no reconcile decision; relating the pairs"),
        }
        out
    }
}

/// An item's vectors, as the store keeps them under `model` (see
/// `cairn_index::unit::vectors_id`): its summary (kind summary, position 0), each cue (kind
/// cue) and each chunk of its body (kind chunk). Blocking: it runs the embedder.
pub fn item_vectors(
    embedder: &dyn cairn_core::ports::Embedder,
    model: &str,
    item: &Item,
) -> Result<Vec<StoredVector>, cairn_core::ports::BackendError> {
    let chunks: Vec<&str> = cairn_text::chunk::split(&item.body)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let mut texts: Vec<&str> = vec![item.summary.as_str()];
    texts.extend(item.cues.iter().map(String::as_str));
    texts.extend(chunks.iter().copied());
    let vectors = embedder.embed(&texts)?;
    Ok(vectors
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let (kind, ord) = if i == 0 {
                (VectorKind::Summary, 0)
            } else if i <= item.cues.len() {
                (VectorKind::Cue, i - 1)
            } else {
                (VectorKind::Chunk, i - 1 - item.cues.len())
            };
            StoredVector {
                owner: item.id.as_str().to_owned(),
                kind,
                ord: u32::try_from(ord).unwrap_or(u32::MAX),
                model: model.to_owned(),
                vector: v,
            }
        })
        .collect())
}

/// Reconciles `new` items (already through the rules) with the known ones, in order.
pub(crate) async fn reconcile(d: &Distiller, new: Vec<Item>) -> Result<Vec<Action>, DistillError> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let summaries: Vec<&str> = new.iter().map(|i| i.summary.as_str()).collect();
    let new_vectors = d.embed(&summaries)?;
    // Without vectors the index cannot be asked: every active item is compared by title.
    let mut known = d.known(new_vectors.is_some()).await?;
    let mut actions: Vec<Option<Action>> = vec![None; new.len()];
    let mut pending: Vec<Pending> = Vec::new();
    let mut items = new;
    for (idx, item) in items.iter_mut().enumerate() {
        let kind = kind_name(item.kind);
        let first = item.sources.first().map_or("", |s| s.as_str()).to_owned();
        item.id = ItemId::derive(&kind, &first, &normal_title(&item.title));
        let vector = new_vectors.as_ref().and_then(|v| v.get(idx));
        if let (Some((index, _)), Some(v)) = (&d.items_index, vector) {
            d.gather(index.clone(), v, &item.id, &mut known).await?;
        }
        // The nearest known item of the same kind.
        let best = known
            .list
            .iter()
            .enumerate()
            .filter(|(_, k)| k.item.kind == item.kind)
            .map(|(i, k)| {
                let sim = if k.item.id == item.id {
                    1.0
                } else {
                    match (vector, &k.summary) {
                        (Some(a), Some(b)) => cosine(a, b),
                        _ if normal_title(&k.item.title) == normal_title(&item.title) => 1.0,
                        _ => 0.0,
                    }
                };
                (i, sim)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let merge_at = if item.kind == ItemKind::Episode {
            MERGE_EPISODE
        } else {
            MERGE
        };
        match best {
            Some((ki, sim))
                if sim >= merge_at
                    && !numbers_differ(&known.list[ki].item, item)
                    && guarded(&known.list[ki].item, item) =>
            {
                // Outside text saying the same as the user or the agent: kept beside it,
                // never written into it.
                d.create(item).await?;
                d.relate(
                    &item.id,
                    &known.list[ki].item.id,
                    RelationKind::Related,
                    sim,
                )
                .await?;
                actions[idx] = Some(Action::Related {
                    item: Box::new(item.clone()),
                    to: known.list[ki].item.id.clone(),
                    similarity: sim,
                });
            }
            Some((ki, sim)) if sim >= merge_at && !numbers_differ(&known.list[ki].item, item) => {
                let merged = merge(&known.list[ki].item, item);
                if merged == known.list[ki].item {
                    // Found again with nothing new (a rebuild): no event, nothing to embed.
                    actions[idx] = Some(Action::Merged {
                        item: Box::new(merged),
                        similarity: sim,
                    });
                    continue;
                }
                d.event(
                    ItemEventKind::Merged,
                    &merged,
                    format!("merged \"{}\" (similarity {sim:.2})", item.title),
                )
                .await?;
                d.store_vectors(&merged).await?;
                known.list[ki].item = merged.clone();
                actions[idx] = Some(Action::Merged {
                    item: Box::new(merged),
                    similarity: sim,
                });
            }
            Some((ki, sim)) if sim >= DECIDE => {
                pending.push(Pending::Decide {
                    new: idx,
                    known: ki,
                    sim,
                });
            }
            _ => {
                let summary = d.create(item).await?;
                known.push(Known {
                    item: item.clone(),
                    summary,
                });
                actions[idx] = Some(Action::Created {
                    item: Box::new(item.clone()),
                });
            }
        }
    }
    if !pending.is_empty() {
        let pairs: Vec<(&Item, &Item)> = pending
            .iter()
            .map(|Pending::Decide { new, known: k, .. }| (&known.list[*k].item, &items[*new]))
            .collect();
        let decisions = d.decide(&pairs).await;
        for (Pending::Decide { new, known: k, sim }, decision) in pending.iter().zip(decisions) {
            let item = items[*new].clone();
            let old = known.list[*k].item.clone();
            let differ = numbers_differ(&old, &item);
            let decision = match decision.as_str() {
                "same" if differ => "related",
                "same" if guarded(&old, &item) => "related",
                "updates" | "contradicts" if guarded(&old, &item) => "contested",
                other => other,
            };
            let action = match decision {
                "same" => {
                    let merged = merge(&old, &item);
                    d.event(
                        ItemEventKind::Merged,
                        &merged,
                        format!("merged \"{}\" (the same, similarity {sim:.2})", item.title),
                    )
                    .await?;
                    d.store_vectors(&merged).await?;
                    known.list[*k].item = merged.clone();
                    Action::Merged {
                        item: Box::new(merged),
                        similarity: *sim,
                    }
                }
                "updates" | "contradicts" => {
                    let contradicts = decision == "contradicts";
                    d.create(&item).await?;
                    let mut replaced = old.clone();
                    replaced.superseded_by = Some(item.id.clone());
                    let why = if contradicts {
                        "contradicted"
                    } else {
                        "updated"
                    };
                    d.event(
                        ItemEventKind::Superseded,
                        &replaced,
                        format!("{why} by \"{}\" ({})", item.title, item.id),
                    )
                    .await?;
                    d.relate(&item.id, &old.id, RelationKind::Supersedes, *sim)
                        .await?;
                    if contradicts {
                        d.relate(&item.id, &old.id, RelationKind::Contradicts, *sim)
                            .await?;
                    }
                    known.list[*k].item = replaced;
                    Action::Superseded {
                        item: Box::new(item),
                        replaced: old.id,
                        contradicts,
                    }
                }
                "contested" => {
                    d.create(&item).await?;
                    d.relate(&item.id, &old.id, RelationKind::Contradicts, *sim)
                        .await?;
                    Action::Contested {
                        item: Box::new(item),
                        with: old.id,
                        similarity: *sim,
                    }
                }
                "different" => {
                    d.create(&item).await?;
                    Action::Created {
                        item: Box::new(item),
                    }
                }
                _ => {
                    d.create(&item).await?;
                    d.relate(&item.id, &old.id, RelationKind::Related, *sim)
                        .await?;
                    Action::Related {
                        item: Box::new(item),
                        to: old.id,
                        similarity: *sim,
                    }
                }
            };
            actions[*new] = Some(action);
        }
    }
    Ok(actions.into_iter().flatten().collect())
}
