//! Sleep (DESIGN §1.4): the nightly tidy-up, run once a day when the machine is quiet (the
//! service's worker decides when; [`Distiller::sleep`] runs it at once).
//!
//! 1. **Relate**: every active item (not archived, not superseded) gets a `related` edge to
//!    its nearest neighbours by summary vector from cosine [`RELATE_FROM`], at most
//!    [`NEIGHBOURS`] each; edges already there are not added again. With the items' vector
//!    index ([`Distiller::with_items_index`], as the service runs it), only the items changed
//!    since the last night ask it for their neighbours, so a night costs one search per new
//!    item whatever the number of items; the pairs of two older items were related on an
//!    earlier night. When more than [`ASK_SHARE`] of the items would ask (the first night,
//!    after a model change), and without an index, every pair of active items' summary
//!    vectors is compared instead (n²/2 dot products, block against block on every core,
//!    O(cores·n·k) memory beyond the vectors).
//! 2. **Re-score**: priority = importance × recency × use, where recency =
//!    0.5^(age / half-life of the kind) ([`half_life_days`]; age from when the item was said,
//!    else when it was stored) and use = 1 + ln(1 + times used) (`used` events). Kept in
//!    `item_scores` for search.
//! 3. **Archive**: an item whose priority is below [`ARCHIVE_BELOW`], stored and said at
//!    least [`UNUSED_DAYS`] ago and neither used nor restored since then gets an `archived`
//!    event: it leaves the active set (and the index); the log keeps every event.
//!    Without use the priority only falls, so an item below the bar now stayed below it.
//! 4. **Profiles** ([`crate::profile`]): one dated timeline per subject, rewritten only when
//!    its items changed, at most [`crate::PROFILES_PER_NIGHT`] a night; a spent budget or a
//!    failing provider stops them for the night.
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use cairn_core::{
    Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, Relation, RelationKind, Timestamp,
    VectorKind,
};
use cairn_store::ItemScore;
use serde::Serialize;

use crate::profile::{self, PROFILES_PER_NIGHT, Written};
use crate::{DistillError, Distiller};

/// Similarity from which neighbouring items are related.
pub const RELATE_FROM: f32 = 0.80;
/// The most neighbours one item is related to in a night.
pub const NEIGHBOURS: usize = 5;
/// The store setting that says up to which item log seq items were related through the
/// index: those changed after it ask for their neighbours on the next night.
const RELATED_THROUGH: &str = "sleep.related_through";
/// Candidates each item's neighbour search re-scores from the full vectors.
const RESCORED: usize = 64;
/// The share of the active items above which a night compares every pair instead of asking
/// the index item by item: at 20,000 items one search costs about 2 ms, every pair 16 s in
/// all (`cairn bench items`), so the index pays below about a third; a quarter leaves room.
pub const ASK_SHARE: f64 = 0.25;
/// Priority under which an unused old item is archived. For scale: a fact of importance 3
/// is at 0.75 after a year and 0.19 after two; an episode of importance 2 is at 0.03 after
/// 180 days; a preference of importance 2 is at 1.0 after a year.
pub const ARCHIVE_BELOW: f64 = 0.5;
/// Days an item must have been stored, said and left unused before it may be archived.
pub const UNUSED_DAYS: i64 = 180;

/// The half-life of an item's recency, in days, by kind: what lasts (preferences, how
/// systems are built) fades slowly; what happened (observations, episodes) fades fast.
pub fn half_life_days(kind: ItemKind) -> f64 {
    match kind {
        ItemKind::Preference | ItemKind::Architecture => 365.0,
        ItemKind::Decision
        | ItemKind::Fact
        | ItemKind::Procedure
        | ItemKind::Pitfall
        | ItemKind::Snippet => 180.0,
        ItemKind::Observation | ItemKind::Episode => 30.0,
    }
}

/// An item's priority: importance × 0.5^(age / half-life) × (1 + ln(1 + used)).
pub fn priority(kind: ItemKind, importance: u8, age_days: f64, used: u64) -> f64 {
    let recency = 0.5f64.powf(age_days.max(0.0) / half_life_days(kind));
    #[allow(clippy::cast_precision_loss)]
    let use_factor = 1.0 + (used as f64).ln_1p();
    f64::from(importance) * recency * use_factor
}

/// What a night's sleep did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SleepReport {
    /// Active items at the start.
    pub active: usize,
    /// Active items with a summary vector that were related: every one by brute force;
    /// through the items' index, those changed since the last night.
    pub with_vectors: usize,
    /// `related` edges added.
    pub related: usize,
    /// Items re-scored.
    pub rescored: usize,
    /// Items archived.
    pub archived: Vec<ItemId>,
    /// Subjects whose profile was rewritten (`project:<id>` or `machine`).
    pub profiles: Vec<String>,
    /// Subjects whose items did not change since their profile.
    pub profiles_unchanged: usize,
    /// Subjects left for another night (the nightly cap, the budget, the provider).
    pub profiles_left: usize,
    /// Subjects whose answer stayed invalid (tried again next night).
    pub profiles_invalid: usize,
    /// Model calls made (the ledger has each).
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Money spent (US dollars), when known.
    pub cost_usd: f64,
    /// Why profiles stopped early, if they did.
    pub stopped: Option<String>,
    /// Milliseconds per step: relate, score (with archive), profiles.
    pub took_ms: [u64; 3],
    /// What the host's nightly training of a personal turn-note ranker did, in a sentence
    /// (`cairn_turn::personal::nightly`; sleep itself leaves it empty).
    pub ranker: Option<String>,
}

/// Normalises a vector in place; false when it is all zeros.
fn normalise(v: &mut [f32]) -> bool {
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n == 0.0 || !n.is_finite() {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= n);
    true
}

/// A dot product in eight lanes (the compiler vectorises it).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Keeps the `k` best (similarity, index) in `top`, best first.
fn keep(top: &mut Vec<(f32, usize)>, k: usize, cand: (f32, usize)) {
    if top.len() == k && top.last().is_some_and(|w| w.0 >= cand.0) {
        return;
    }
    let at = top.partition_point(|x| x.0 >= cand.0);
    top.insert(at, cand);
    top.truncate(k);
}

/// Vectors compared block against block: two blocks of this many 384-dimension vectors
/// (2 × 192 KiB) stay in a core's cache while every pair between them is computed, where a
/// row against all the others streamed the whole set from memory once per vector.
const BLOCK: usize = 128;

/// Each vector's nearest neighbours from `from`, at most `k`, best first: brute force, each
/// pair computed once, block against block, the rows of blocks shared between the cores
/// (sleep runs when the machine is quiet). `vectors` must be normalised.
pub(crate) fn neighbours(vectors: &[Vec<f32>], from: f32, k: usize) -> Vec<Vec<(f32, usize)>> {
    let n = vectors.len();
    let blocks = n.div_ceil(BLOCK);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, blocks.max(1));
    // Each thread takes every `threads`-th row of blocks and keeps its own best lists; the
    // lists are merged at the end.
    let row = |first: usize| {
        let mut top: Vec<Vec<(f32, usize)>> = vec![Vec::new(); n];
        for bi in (first..blocks).step_by(threads) {
            let is = bi * BLOCK..((bi + 1) * BLOCK).min(n);
            for bj in bi..blocks {
                let js = bj * BLOCK..((bj + 1) * BLOCK).min(n);
                for i in is.clone() {
                    let from_j = if bi == bj { i + 1 } else { js.start };
                    for j in from_j..js.end {
                        let s = dot(&vectors[i], &vectors[j]);
                        if s >= from {
                            keep(&mut top[i], k, (s, j));
                            keep(&mut top[j], k, (s, i));
                        }
                    }
                }
            }
        }
        top
    };
    let mut parts: Vec<Vec<Vec<(f32, usize)>>> = if threads == 1 {
        vec![row(0)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads).map(|t| scope.spawn(move || row(t))).collect();
            let mut parts = vec![row(0)];
            parts.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
            );
            parts
        })
    };
    let mut top = parts.swap_remove(0);
    for part in parts {
        for (mine, theirs) in top.iter_mut().zip(part) {
            for cand in theirs {
                keep(mine, k, cand);
            }
        }
    }
    top
}

impl Distiller {
    /// Runs the nightly tidy-up at `now`: relate, re-score, archive, profiles. The caller
    /// decides when (once a day, when quiet).
    pub async fn sleep(&self, now: Timestamp) -> Result<SleepReport, DistillError> {
        let mut report = SleepReport::default();
        let all = self.store.items(true).await?;
        let activity: HashMap<ItemId, cairn_store::ItemActivity> = self
            .store
            .item_activity()
            .await?
            .into_iter()
            .map(|a| (a.item.clone(), a))
            .collect();
        let active: Vec<&Item> = all.iter().filter(|i| i.is_active()).collect();
        report.active = active.len();

        let t = Instant::now();
        report.related = self.relate_neighbours(&active, &mut report).await?;
        report.took_ms[0] = elapsed_ms(t);

        // Re-score and archive.
        let t = Instant::now();
        let days = |from: Timestamp| (now - from).num_seconds() as f64 / 86_400.0;
        let mut scores = Vec::with_capacity(active.len());
        let mut priorities = HashMap::with_capacity(active.len());
        let mut archived = HashSet::new();
        for it in &active {
            let act = activity.get(&it.id);
            let first = act.map_or(now, |a| a.first_at);
            let said = it.said_at.unwrap_or(first);
            let used = act.map_or(0, |a| a.used);
            let p = priority(it.kind, it.importance, days(said), used);
            scores.push(ItemScore {
                item: it.id.clone(),
                priority: p,
                used,
                scored_at: now,
            });
            priorities.insert(it.id.clone(), p);
            let old = chrono::Duration::days(UNUSED_DAYS);
            let untouched = act
                .and_then(|a| a.last_touched)
                .is_none_or(|t| now - t >= old);
            if p < ARCHIVE_BELOW && untouched && now - first >= old && now - said >= old {
                let mut state = (*it).clone();
                state.archived = true;
                self.store
                    .append_item_event(&NewItemEvent {
                        kind: ItemEventKind::Archived,
                        item: state,
                        reason: Some(format!(
                            "sleep: priority {p:.2} below {ARCHIVE_BELOW}, unused for \
                             {UNUSED_DAYS} days"
                        )),
                    })
                    .await?;
                archived.insert(it.id.clone());
                report.archived.push(it.id.clone());
            }
        }
        self.store.put_item_scores(&scores).await?;
        report.rescored = scores.len();
        report.took_ms[1] = elapsed_ms(t);

        // Profiles, over what is still active (and the superseded items, shown as replaced).
        let t = Instant::now();
        let before = self.llm.today().await?;
        let last_change: HashMap<ItemId, i64> = activity
            .iter()
            .map(|(id, a)| (id.clone(), a.last_change))
            .collect();
        let current: Vec<Item> = all
            .into_iter()
            .map(|mut i| {
                if archived.contains(&i.id) {
                    i.archived = true;
                }
                i
            })
            .collect();
        let dated = |i: &Item| {
            let first = activity.get(&i.id).map_or(now, |a| a.first_at);
            i.happened_at
                .or(i.said_at)
                .unwrap_or(first)
                .format("%Y-%m-%d")
                .to_string()
        };
        let profiles: HashMap<(cairn_store::ProfileKind, String), String> = self
            .store
            .profiles()
            .await?
            .into_iter()
            .map(|p| ((p.kind, p.subject), p.items_hash))
            .collect();
        for s in profile::subjects(&current, &last_change) {
            if profiles.get(&(s.kind, s.name.clone())) == Some(&s.hash) {
                report.profiles_unchanged += 1;
                continue;
            }
            if report.stopped.is_some() || report.profiles.len() >= PROFILES_PER_NIGHT {
                report.profiles_left += 1;
                continue;
            }
            match self.write_profile(&s, &priorities, &dated, now).await {
                Ok(Written::Stored) => report.profiles.push(match s.kind {
                    cairn_store::ProfileKind::Project => format!("project:{}", s.name),
                    cairn_store::ProfileKind::Machine => s.name.clone(),
                }),
                Ok(Written::Invalid(why)) => {
                    tracing::info!(subject = %s.name, reason = %why, "profile answer invalid");
                    report.profiles_invalid += 1;
                }
                Err(DistillError::Call(e)) => {
                    tracing::warn!(error = %e, "profiles stopped for tonight");
                    report.stopped = Some(e.to_string());
                    report.profiles_left += 1;
                }
                Err(e) => return Err(e),
            }
        }
        let after = self.llm.today().await?;
        report.calls = after.calls.saturating_sub(before.calls);
        report.input_tokens = after.input_tokens.saturating_sub(before.input_tokens);
        report.output_tokens = after.output_tokens.saturating_sub(before.output_tokens);
        report.cost_usd = (after.cost_usd - before.cost_usd).max(0.0);
        report.took_ms[2] = elapsed_ms(t);
        Ok(report)
    }

    /// Relates each active item to its nearest neighbours; returns the edges added.
    async fn relate_neighbours(
        &self,
        active: &[&Item],
        report: &mut SleepReport,
    ) -> Result<usize, DistillError> {
        let Some(e) = &self.embedder else {
            return Ok(0);
        };
        let model = cairn_index::unit::vectors_id(e.model_id());
        if let Some((index, _)) = &self.items_index
            && let Some(related) = self
                .relate_through_index(index.clone(), &model, active, report)
                .await?
        {
            return Ok(related);
        }
        let owners: Vec<String> = active.iter().map(|i| i.id.as_str().to_owned()).collect();
        let mut by_owner = self.store.summary_vectors(&owners, &model).await?;
        let mut ids = Vec::with_capacity(by_owner.len());
        let mut vectors = Vec::with_capacity(by_owner.len());
        for it in active {
            if let Some(mut v) = by_owner.remove(it.id.as_str())
                && normalise(&mut v)
            {
                ids.push(it.id.clone());
                vectors.push(v);
            }
        }
        report.with_vectors = ids.len();
        let top = neighbours(&vectors, RELATE_FROM, NEIGHBOURS);
        drop(vectors);
        let mut known = self.store.related_pairs().await?;
        let mut edges = Vec::new();
        for (i, near) in top.iter().enumerate() {
            for &(sim, j) in near {
                let (a, b) = if ids[i] <= ids[j] {
                    (&ids[i], &ids[j])
                } else {
                    (&ids[j], &ids[i])
                };
                if known.insert((a.as_str().to_owned(), b.as_str().to_owned())) {
                    edges.push(Relation {
                        from: a.clone(),
                        to: b.clone(),
                        kind: RelationKind::Related,
                        weight: sim,
                    });
                }
            }
        }
        self.store.put_relations(&edges).await?;
        let added = edges.len();
        Ok(added)
    }

    /// Relates each active item changed since the last night (every one the first night) to
    /// the nearest neighbours the items' vector index finds for its summary vector. `None`
    /// when more than [`ASK_SHARE`] of the items would ask (the first night, after a model
    /// change): comparing every pair is cheaper then, and the caller does it.
    async fn relate_through_index(
        &self,
        index: std::sync::Arc<dyn cairn_core::ports::VectorIndex>,
        model: &str,
        active: &[&Item],
        report: &mut SleepReport,
    ) -> Result<Option<usize>, DistillError> {
        let stamp = self.store.item_log_stamp().await?;
        let since = self
            .store
            .setting::<i64>(RELATED_THROUGH)
            .await?
            .map(|(s, _)| s)
            .filter(|s| *s <= stamp.0)
            .unwrap_or(0);
        let ids: HashSet<&str> = active.iter().map(|i| i.id.as_str()).collect();
        let asking: Vec<String> = if since == 0 {
            ids.iter().map(|&id| id.to_owned()).collect()
        } else {
            self.store
                .items_changed_since(since)
                .await?
                .into_iter()
                .map(|(_, i)| i.id.as_str().to_owned())
                .filter(|id| ids.contains(id.as_str()))
                .collect()
        };
        if asking.len() as f64 > ASK_SHARE * ids.len() as f64 {
            // Every pair is compared instead; the next night asks from here.
            self.store.set_setting(RELATED_THROUGH, &stamp.0).await?;
            return Ok(None);
        }
        let mut queries: Vec<(String, Vec<f32>)> = self
            .store
            .summary_vectors(&asking, model)
            .await?
            .into_iter()
            .collect();
        queries.sort_by(|a, b| a.0.cmp(&b.0));
        report.with_vectors = queries.len();
        let found = tokio::task::spawn_blocking(move || {
            let filter = cairn_core::ports::VectorFilter::default();
            queries
                .into_iter()
                .map(|(id, v)| {
                    // A handful of candidates re-scored: the nearest few are all it keeps.
                    index
                        .search_rescoring(
                            VectorKind::Summary,
                            &v,
                            &filter,
                            NEIGHBOURS + 1,
                            RESCORED,
                        )
                        .map(|hits| (id, hits))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| DistillError::Index(e.to_string()))?
        .map_err(|e| DistillError::Index(e.message))?;
        let mut known = self.store.related_pairs().await?;
        let mut edges = Vec::new();
        for (id, hits) in found {
            let near = hits
                .into_iter()
                .filter(|h| h.owner != id && h.score >= RELATE_FROM)
                .filter(|h| ids.contains(h.owner.as_str()))
                .take(NEIGHBOURS);
            for h in near {
                let (a, b) = if id <= h.owner {
                    (id.clone(), h.owner)
                } else {
                    (h.owner, id.clone())
                };
                if known.insert((a.clone(), b.clone())) {
                    edges.push(Relation {
                        from: ItemId::new(a),
                        to: ItemId::new(b),
                        kind: RelationKind::Related,
                        weight: h.score,
                    });
                }
            }
        }
        self.store.put_relations(&edges).await?;
        self.store.set_setting(RELATED_THROUGH, &stamp.0).await?;
        Ok(Some(edges.len()))
    }

    /// Brings an archived item back into the active set (a `restored` event); sleep leaves
    /// it alone for [`UNUSED_DAYS`]. `None` when there is no such item; an item that is not
    /// archived is returned as it is.
    pub async fn restore(&self, id: &ItemId) -> Result<Option<Item>, DistillError> {
        let Some(mut item) = self.store.item(id).await? else {
            return Ok(None);
        };
        if !item.archived {
            return Ok(Some(item));
        }
        item.archived = false;
        self.store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Restored,
                item: item.clone(),
                reason: Some("restored".into()),
            })
            .await?;
        Ok(Some(item))
    }
}

fn elapsed_ms(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn priority_follows_importance_recency_and_use() {
        let p = |k, imp, age, used| priority(k, imp, age, used);
        assert!((p(ItemKind::Fact, 3, 0.0, 0) - 3.0).abs() < 1e-9);
        assert!(
            (p(ItemKind::Fact, 4, 180.0, 0) - 2.0).abs() < 1e-9,
            "one half-life"
        );
        assert!((p(ItemKind::Episode, 2, 30.0, 0) - 1.0).abs() < 1e-9);
        assert!(p(ItemKind::Fact, 4, 10.0, 0) > p(ItemKind::Fact, 3, 10.0, 0));
        assert!(p(ItemKind::Fact, 3, 10.0, 0) > p(ItemKind::Fact, 3, 100.0, 0));
        assert!(p(ItemKind::Fact, 3, 100.0, 3) > p(ItemKind::Fact, 3, 100.0, 0));
        assert!(
            p(ItemKind::Preference, 3, 200.0, 0) > p(ItemKind::Observation, 3, 200.0, 0),
            "kinds fade at their own pace"
        );
        assert!(
            (p(ItemKind::Fact, 1, 0.0, 1) - (1.0 + 2f64.ln())).abs() < 1e-9,
            "use = 1 + ln(1 + used)"
        );
    }

    #[test]
    fn neighbours_are_the_k_nearest_from_the_threshold() {
        let mut vs = vec![
            vec![1.0, 0.0],
            vec![0.95, 0.31],
            vec![0.9, 0.44],
            vec![0.0, 1.0],
        ];
        for v in &mut vs {
            assert!(normalise(v));
        }
        let top = neighbours(&vs, 0.8, 1);
        assert_eq!(top[0].iter().map(|x| x.1).collect::<Vec<_>>(), vec![1]);
        assert_eq!(top[2].iter().map(|x| x.1).collect::<Vec<_>>(), vec![1]);
        assert!(top[3].is_empty(), "{:?}", top[3]);
        let top = neighbours(&vs, 0.8, 5);
        assert_eq!(top[1].len(), 2);
        assert!(top[1][0].0 >= top[1][1].0, "best first");
        assert!(!normalise(&mut [0.0, 0.0]));
    }

    #[test]
    fn neighbours_block_against_block_are_every_pairs_nearest() {
        // More vectors than a few blocks, a threshold most pairs pass: the blocks, their
        // diagonal and the merge of the threads' lists must find what a row against every
        // other row finds.
        let n = 3 * BLOCK + 17;
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.3
        };
        let mut vs: Vec<Vec<f32>> = (0..n).map(|_| (0..24).map(|_| next()).collect()).collect();
        for v in &mut vs {
            assert!(normalise(v));
        }
        let (from, k) = (0.5, 5);
        let mut want: Vec<Vec<(f32, usize)>> = vec![Vec::new(); n];
        for i in 0..n {
            for j in 0..n {
                let s = dot(&vs[i], &vs[j]);
                if i != j && s >= from {
                    keep(&mut want[i], k, (s, j));
                }
            }
        }
        let got = neighbours(&vs, from, k);
        assert!(want.iter().filter(|w| w.len() == k).count() > n / 2);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let ids = |l: &[(f32, usize)]| l.iter().map(|x| x.1).collect::<Vec<_>>();
            assert_eq!(ids(g), ids(w), "vector {i}");
        }
    }
}
