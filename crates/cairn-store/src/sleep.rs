//! What sleep (the nightly tidy-up, DESIGN §1.4) reads and writes: each item's activity in
//! the long-term log (uses, first and latest change), the items' priorities, the pairs
//! already related, the items' summary vectors, and the profiles (one dated timeline per
//! project, and one for the machine). Scores and profiles are derived state: Clear empties
//! them with the logs.
use std::collections::{HashMap, HashSet};

use cairn_core::{ItemId, Relation, Timestamp, VectorKind};
use sea_orm::{ConnectionTrait, Statement};
use sea_orm::{TransactionTrait, Value};
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::store::{now_text, parse_ts, ts_text};
use crate::{Error, Result, Store};

/// One item's activity in the long-term log.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemActivity {
    /// The item.
    pub item: ItemId,
    /// How many times it was used (`used` events: a turn note showed it and the agent's
    /// answer used it).
    pub used: u64,
    /// When it was last used or restored, if ever.
    pub last_touched: Option<Timestamp>,
    /// Its first event (when it was stored).
    pub first_at: Timestamp,
    /// The seq of its latest event that changed it (any event but `used`).
    pub last_change: i64,
}

/// An item's priority at the last sleep.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemScore {
    /// The item.
    pub item: ItemId,
    /// importance × recency × use.
    pub priority: f64,
    /// Times used when it was scored.
    pub used: u64,
    /// When it was scored.
    pub scored_at: Timestamp,
}

/// Whose profile it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// A project (the items' project identity).
    Project,
    /// The machine: items that belong to no project.
    Machine,
}

impl ProfileKind {
    /// The stable name stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::Machine => "machine",
        }
    }
}

/// One dated line of a profile's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileEntry {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// What happened or held from then.
    pub text: String,
}

/// A subject's profile: a dated timeline and a short summary, written by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Project or machine.
    pub kind: ProfileKind,
    /// The project identity, or the machine's name.
    pub subject: String,
    /// A few sentences.
    pub summary: String,
    /// Oldest first.
    pub timeline: Vec<ProfileEntry>,
    /// The hash of the subject's active items (ids and latest changes) it was written from.
    pub items_hash: String,
    /// How many items it was written from.
    pub item_count: u64,
    /// When it was written.
    pub updated_at: Timestamp,
}

impl Store {
    /// Every item's activity in the long-term log, in one pass over it.
    pub async fn item_activity(&self) -> Result<Vec<ItemActivity>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT item_id, SUM(kind = 'used') AS used, \
                   MAX(CASE WHEN kind IN ('used', 'restored') THEN at END) AS touched, \
                   MIN(at) AS first_at, \
                   COALESCE(MAX(CASE WHEN kind <> 'used' THEN seq END), MAX(seq)) AS last_change \
                 FROM item_events GROUP BY item_id ORDER BY item_id",
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let touched: Option<String> = r.try_get("", "touched")?;
                let first: String = r.try_get("", "first_at")?;
                Ok(ItemActivity {
                    item: ItemId::new(r.try_get::<String>("", "item_id")?),
                    used: u64::try_from(r.try_get::<i64>("", "used")?).unwrap_or(0),
                    last_touched: touched
                        .map(|t| parse_ts("item_events", "at", &t))
                        .transpose()?,
                    first_at: parse_ts("item_events", "at", &first)?,
                    last_change: r.try_get("", "last_change")?,
                })
            })
            .collect()
    }

    /// The summary vectors `model` made for `owners` (one per owner), by owner.
    pub async fn summary_vectors(
        &self,
        owners: &[String],
        model: &str,
    ) -> Result<HashMap<String, Vec<f32>>> {
        let mut out = HashMap::with_capacity(owners.len());
        for part in owners.chunks(400) {
            let rows = crate::store::owners_vectors(part, model, Some(VectorKind::Summary))
                .all(self.conn())
                .await?;
            for r in rows {
                let v = crate::store::vector_from_model(r)?;
                out.insert(v.owner, v.vector);
            }
        }
        Ok(out)
    }

    /// Every pair of items already joined by a `related` edge, each as (smaller id, larger).
    pub async fn related_pairs(&self) -> Result<HashSet<(String, String)>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT from_id, to_id FROM relations WHERE kind = 'related'",
            ))
            .await?;
        let mut out = HashSet::with_capacity(rows.len());
        for r in rows {
            let a: String = r.try_get("", "from_id")?;
            let b: String = r.try_get("", "to_id")?;
            out.insert(if a <= b { (a, b) } else { (b, a) });
        }
        Ok(out)
    }

    /// Adds (or re-weighs) many edges of the concept graph in one transaction.
    pub async fn put_relations(&self, edges: &[Relation]) -> Result<()> {
        let _writer = self.write_lock().await;
        let backend = self.conn().get_database_backend();
        let at = now_text();
        let txn = self.conn().begin().await?;
        for r in edges {
            txn.execute(Statement::from_sql_and_values(
                backend,
                "INSERT INTO relations (from_id, to_id, kind, weight, created_at) \
                 VALUES (?, ?, ?, ?, ?) \
                 ON CONFLICT (from_id, to_id, kind) DO UPDATE SET weight = excluded.weight",
                [
                    r.from.as_str().into(),
                    r.to.as_str().into(),
                    crate::distill::relation_name(r.kind).into(),
                    f64::from(r.weight).into(),
                    at.clone().into(),
                ],
            ))
            .await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// Stores priorities (replacing earlier ones of the same items), in one transaction.
    pub async fn put_item_scores(&self, scores: &[ItemScore]) -> Result<()> {
        let _writer = self.write_lock().await;
        let backend = self.conn().get_database_backend();
        let txn = self.conn().begin().await?;
        for s in scores {
            txn.execute(Statement::from_sql_and_values(
                backend,
                "INSERT INTO item_scores (item_id, priority, used, scored_at) VALUES (?, ?, ?, ?) \
                 ON CONFLICT (item_id) DO UPDATE SET priority = excluded.priority, \
                   used = excluded.used, scored_at = excluded.scored_at",
                [
                    s.item.as_str().into(),
                    s.priority.into(),
                    i64::try_from(s.used).unwrap_or(i64::MAX).into(),
                    ts_text(&s.scored_at).into(),
                ],
            ))
            .await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// Every stored priority, by item.
    pub async fn item_scores(&self) -> Result<HashMap<ItemId, ItemScore>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT item_id, priority, used, scored_at FROM item_scores",
            ))
            .await?;
        let mut out = HashMap::with_capacity(rows.len());
        for r in rows {
            let item = ItemId::new(r.try_get::<String>("", "item_id")?);
            let at: String = r.try_get("", "scored_at")?;
            out.insert(
                item.clone(),
                ItemScore {
                    item,
                    priority: r.try_get("", "priority")?,
                    used: u64::try_from(r.try_get::<i64>("", "used")?).unwrap_or(0),
                    scored_at: parse_ts("item_scores", "scored_at", &at)?,
                },
            );
        }
        Ok(out)
    }

    /// Writes a profile (replacing the subject's earlier one).
    pub async fn put_profile(&self, p: &Profile) -> Result<()> {
        let timeline = serde_json::to_string(&p.timeline).map_err(|e| Error::Encode {
            what: "profile timeline",
            reason: e.to_string(),
        })?;
        let _writer = self.write_lock().await;
        let db = self.conn();
        db.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            "INSERT INTO profiles (kind, subject, summary, timeline, items_hash, item_count, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (kind, subject) DO UPDATE SET summary = excluded.summary, \
               timeline = excluded.timeline, items_hash = excluded.items_hash, \
               item_count = excluded.item_count, updated_at = excluded.updated_at",
            [
                p.kind.as_str().into(),
                p.subject.as_str().into(),
                p.summary.as_str().into(),
                timeline.into(),
                p.items_hash.as_str().into(),
                i64::try_from(p.item_count).unwrap_or(i64::MAX).into(),
                ts_text(&p.updated_at).into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// Every profile, projects first, by subject.
    pub async fn profiles(&self) -> Result<Vec<Profile>> {
        self.profiles_where("1 = 1", Vec::new()).await
    }

    /// One subject's profile.
    pub async fn profile(&self, kind: ProfileKind, subject: &str) -> Result<Option<Profile>> {
        Ok(self
            .profiles_where(
                "kind = ? AND subject = ?",
                vec![kind.as_str().into(), subject.into()],
            )
            .await?
            .pop())
    }

    async fn profiles_where(&self, filter: &str, values: Vec<Value>) -> Result<Vec<Profile>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                format!(
                    "SELECT kind, subject, summary, timeline, items_hash, item_count, updated_at \
                     FROM profiles WHERE {filter} ORDER BY kind DESC, subject"
                ),
                values,
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let kind: String = r.try_get("", "kind")?;
                let timeline: String = r.try_get("", "timeline")?;
                let at: String = r.try_get("", "updated_at")?;
                Ok(Profile {
                    kind: match kind.as_str() {
                        "project" => ProfileKind::Project,
                        "machine" => ProfileKind::Machine,
                        other => {
                            return Err(corrupt("profiles", "kind", format!("unknown {other:?}")));
                        }
                    },
                    subject: r.try_get("", "subject")?,
                    summary: r.try_get("", "summary")?,
                    timeline: serde_json::from_str(&timeline)
                        .map_err(|e| corrupt("profiles", "timeline", e.to_string()))?,
                    items_hash: r.try_get("", "items_hash")?,
                    item_count: u64::try_from(r.try_get::<i64>("", "item_count")?).unwrap_or(0),
                    updated_at: parse_ts("profiles", "updated_at", &at)?,
                })
            })
            .collect()
    }

    /// When the last sleep ran (the `sleep` journal entry), if ever.
    pub async fn last_sleep(&self) -> Result<Option<Timestamp>> {
        Ok(self.last_journal(SLEEP_JOURNAL).await?.map(|e| e.at))
    }

    /// Records that a sleep ran, with its counts (never content).
    pub async fn journal_sleep(&self, detail: &serde_json::Value) -> Result<()> {
        self.journal(SLEEP_JOURNAL, detail).await
    }
}

/// The journal kind of a finished sleep.
const SLEEP_JOURNAL: &str = "sleep";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_core::{Certainty, Item, ItemEventKind, ItemKind, NewItemEvent};
    use cairn_core::{RelationKind, VectorKind};

    use crate::StoredVector;

    fn item(id: &str, project: Option<&str>) -> Item {
        Item {
            id: ItemId::new(id),
            kind: ItemKind::Fact,
            title: format!("title {id}"),
            summary: format!("summary {id}"),
            body: "body".into(),
            cues: Vec::new(),
            concepts: Vec::new(),
            importance: 3,
            certainty: Certainty::Stated,
            project: project.map(str::to_owned),
            sources: Vec::new(),
            happened_at: None,
            said_at: None,
            ended_at: None,
            superseded_by: None,
            archived: false,
            provenance: None,
        }
    }

    async fn event(store: &Store, kind: ItemEventKind, it: &Item) -> i64 {
        store
            .append_item_event(&NewItemEvent {
                kind,
                item: it.clone(),
                reason: None,
            })
            .await
            .unwrap()
            .seq
    }

    async fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn activity_counts_uses_and_the_latest_change_ignores_them() {
        let (_dir, store) = open().await;
        let a = item("i_a", None);
        let b = item("i_b", Some("p"));
        let created = event(&store, ItemEventKind::Created, &a).await;
        event(&store, ItemEventKind::Created, &b).await;
        event(&store, ItemEventKind::Used, &a).await;
        event(&store, ItemEventKind::Used, &a).await;
        let acts = store.item_activity().await.unwrap();
        assert_eq!(acts.len(), 2);
        let act_a = acts.iter().find(|x| x.item == a.id).unwrap();
        assert_eq!(act_a.used, 2);
        assert!(act_a.last_touched.is_some());
        assert_eq!(act_a.last_change, created, "uses do not change the item");
        let act_b = acts.iter().find(|x| x.item == b.id).unwrap();
        assert_eq!((act_b.used, act_b.last_touched), (0, None));
        let merged = event(&store, ItemEventKind::Merged, &a).await;
        let act_a = store
            .item_activity()
            .await
            .unwrap()
            .into_iter()
            .find(|x| x.item == a.id)
            .unwrap();
        assert_eq!(act_a.last_change, merged);
    }

    #[tokio::test]
    async fn scores_profiles_and_pairs_round_trip_and_clear_removes_them() {
        let (_dir, store) = open().await;
        let now = chrono::Utc::now();
        let a = item("i_a", None);
        event(&store, ItemEventKind::Created, &a).await;
        store
            .put_item_scores(&[ItemScore {
                item: a.id.clone(),
                priority: 1.5,
                used: 2,
                scored_at: now,
            }])
            .await
            .unwrap();
        store
            .put_item_scores(&[ItemScore {
                item: a.id.clone(),
                priority: 0.25,
                used: 3,
                scored_at: now,
            }])
            .await
            .unwrap();
        let scores = store.item_scores().await.unwrap();
        assert_eq!(scores.len(), 1);
        assert_eq!((scores[&a.id].priority, scores[&a.id].used), (0.25, 3));

        let mut p = Profile {
            kind: ProfileKind::Project,
            subject: "github.com/acme/relay".into(),
            summary: "A relay.".into(),
            timeline: vec![ProfileEntry {
                date: "2026-03-02".into(),
                text: "Port 7420.".into(),
            }],
            items_hash: "h1".into(),
            item_count: 1,
            updated_at: now,
        };
        store.put_profile(&p).await.unwrap();
        p.items_hash = "h2".into();
        store.put_profile(&p).await.unwrap();
        let machine = Profile {
            kind: ProfileKind::Machine,
            subject: "machine".into(),
            ..p.clone()
        };
        store.put_profile(&machine).await.unwrap();
        let all = store.profiles().await.unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].kind, ProfileKind::Project, "projects first");
        let got = store
            .profile(ProfileKind::Project, "github.com/acme/relay")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.items_hash, "h2");
        assert_eq!(got.timeline, p.timeline);
        assert!(
            store
                .profile(ProfileKind::Project, "machine")
                .await
                .unwrap()
                .is_none()
        );

        store
            .put_relation(&Relation {
                from: ItemId::new("i_b"),
                to: ItemId::new("i_a"),
                kind: RelationKind::Related,
                weight: 0.9,
            })
            .await
            .unwrap();
        let edge = Relation {
            from: ItemId::new("i_a"),
            to: ItemId::new("i_c"),
            kind: RelationKind::Related,
            weight: 0.8,
        };
        store.put_relations(&[edge.clone(), edge]).await.unwrap();
        assert_eq!(
            store.relations_of(&ItemId::new("i_c")).await.unwrap().len(),
            1
        );
        let pairs = store.related_pairs().await.unwrap();
        assert!(pairs.contains(&("i_a".into(), "i_b".into())), "{pairs:?}");
        assert!(pairs.contains(&("i_a".into(), "i_c".into())));

        store
            .put_vectors(&[
                StoredVector {
                    owner: "i_a".into(),
                    kind: VectorKind::Summary,
                    ord: 0,
                    model: "m".into(),
                    vector: vec![1.0, 0.0],
                },
                StoredVector {
                    owner: "i_a".into(),
                    kind: VectorKind::Cue,
                    ord: 0,
                    model: "m".into(),
                    vector: vec![0.0, 1.0],
                },
            ])
            .await
            .unwrap();
        let v = store.summary_vectors(&["i_a".into()], "m").await.unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v["i_a"], vec![1.0, 0.0]);

        store.journal_sleep(&serde_json::json!({})).await.unwrap();
        assert!(store.last_sleep().await.unwrap().is_some());

        store.clear(false).await.unwrap();
        assert!(store.item_scores().await.unwrap().is_empty());
        assert!(store.profiles().await.unwrap().is_empty());
        assert!(store.related_pairs().await.unwrap().is_empty());
    }
}
