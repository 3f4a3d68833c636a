//! What distillation reads from the store: sessions with requests not yet distilled, the
//! marks of what was, the current items and the relations between them.
use cairn_core::{Item, ItemId, Record, RecordId, Relation, RelationKind, Timestamp};
use sea_orm::{ConnectionTrait, EntityTrait, Statement, TransactionTrait};

use crate::entity::records;
use crate::error::corrupt;

use crate::store::{now_text, parse_ts, record_from_model, ts_text};
use crate::{Result, Store};

/// A session with requests distillation has not read yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingSession {
    /// The framework.
    pub framework: String,
    /// Its session id.
    pub session_id: String,
    /// Requests not yet distilled.
    pub pending: u64,
    /// When the first of them was made.
    pub first_at: Timestamp,
    /// The session's last activity (its newest request's end, else start).
    pub last_at: Timestamp,
}

impl Store {
    /// Sessions with requests (latest revisions) that distillation has not read, or has read
    /// at an older revision; oldest first.
    pub async fn pending_sessions(&self) -> Result<Vec<PendingSession>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT r.framework, r.session_id, \
                   SUM(d.record_id IS NULL OR d.rev < r.rev) AS pending, \
                   MIN(CASE WHEN d.record_id IS NULL OR d.rev < r.rev THEN r.started_at END) AS first_at, \
                   MAX(COALESCE(r.ended_at, r.started_at)) AS last_at \
                 FROM records_current r LEFT JOIN distilled d ON d.record_id = r.id \
                 GROUP BY r.framework, r.session_id \
                 HAVING pending > 0 ORDER BY first_at",
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let first: String = r.try_get("", "first_at")?;
                let last: String = r.try_get("", "last_at")?;
                Ok(PendingSession {
                    framework: r.try_get("", "framework")?,
                    session_id: r.try_get("", "session_id")?,
                    pending: u64::try_from(r.try_get::<i64>("", "pending")?).unwrap_or(0),
                    first_at: parse_ts("records", "started_at", &first)?,
                    last_at: parse_ts("records", "ended_at", &last)?,
                })
            })
            .collect()
    }

    /// A session's requests (latest revisions) that distillation has not read, in order.
    pub async fn pending_records(&self, framework: &str, session_id: &str) -> Result<Vec<Record>> {
        let db = self.conn();
        let rows = records::Entity::find()
            .from_raw_sql(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT r.* FROM records_current r LEFT JOIN distilled d ON d.record_id = r.id \
                 WHERE r.framework = ? AND r.session_id = ? \
                   AND (d.record_id IS NULL OR d.rev < r.rev) \
                 ORDER BY r.started_at, r.seq",
                [framework.into(), session_id.into()],
            ))
            .all(db)
            .await?;
        rows.into_iter().map(record_from_model).collect()
    }

    /// Marks requests as read by distillation in `window`, with how many items came from
    /// each. Marking again (a rebuild, a newer revision) replaces the mark.
    pub async fn mark_distilled(&self, window: &str, marks: &[(RecordId, u32)]) -> Result<()> {
        let _writer = self.write_lock().await;
        let at = now_text();
        let backend = self.conn().get_database_backend();
        let txn = self.conn().begin().await?;
        for (id, items) in marks {
            txn.execute(Statement::from_sql_and_values(
                backend,
                "INSERT INTO distilled (record_id, rev, window, at, items) \
                 SELECT id, MAX(rev), ?, ?, ? FROM records WHERE id = ? GROUP BY id \
                 ON CONFLICT (record_id) DO UPDATE SET rev = excluded.rev, \
                   window = excluded.window, at = excluded.at, items = excluded.items",
                [
                    window.into(),
                    at.clone().into(),
                    i64::from(*items).into(),
                    id.as_str().into(),
                ],
            ))
            .await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// Forgets every distillation mark made at or after `since` (all when `None`), so those
    /// requests are read again (`cairn distill --rebuild`).
    pub async fn unmark_distilled(&self, since: Option<&Timestamp>) -> Result<u64> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        let res = match since {
            Some(t) => {
                db.execute(Statement::from_sql_and_values(
                    db.get_database_backend(),
                    "DELETE FROM distilled WHERE record_id IN \
                     (SELECT id FROM records_current WHERE started_at >= ?)",
                    [ts_text(t).into()],
                ))
                .await?
            }
            None => db.execute_unprepared("DELETE FROM distilled").await?,
        };
        Ok(res.rows_affected())
    }

    /// The current state of every item (archived and superseded ones when `all`), oldest first.
    pub async fn items(&self, all: bool) -> Result<Vec<Item>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT state FROM items_current ORDER BY seq",
            ))
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let state: String = r.try_get("", "state")?;
            let item: Item = serde_json::from_str(&state)
                .map_err(|e| corrupt("item_events", "state", e.to_string()))?;
            if all || item.is_active() {
                out.push(item);
            }
        }
        Ok(out)
    }

    /// The current state of every item with an event after `seq` other than `used` (which
    /// carries the state as it was), with the number of its newest such event, in that
    /// order: what an index kept up to `seq` has to put again or take out. `used` events
    /// after it do not count, so a state newer than `seq` is never missed.
    pub async fn items_changed_since(&self, seq: i64) -> Result<Vec<(i64, Item)>> {
        let db = self.conn();
        // One query: the items changed, each with its newest such event, joined to its
        // current state (the view's newest event per item, through the (item_id, seq) index).
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT c.seq AS seq, cur.state AS state FROM \
                 (SELECT item_id, MAX(seq) AS seq FROM item_events \
                  WHERE seq > ? AND kind <> 'used' GROUP BY item_id) c \
                 JOIN items_current cur ON cur.item_id = c.item_id ORDER BY c.seq",
                [seq.into()],
            ))
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let at: i64 = r.try_get("", "seq")?;
            let state: String = r.try_get("", "state")?;
            let item: Item = serde_json::from_str(&state)
                .map_err(|e| corrupt("item_events", "state", e.to_string()))?;
            out.push((at, item));
        }
        Ok(out)
    }

    /// Items whose sources include any of `records` (current states, every kind).
    pub async fn items_from(&self, records: &[RecordId]) -> Result<Vec<Item>> {
        let wanted: std::collections::HashSet<&str> =
            records.iter().map(RecordId::as_str).collect();
        Ok(self
            .items(true)
            .await?
            .into_iter()
            .filter(|i| i.sources.iter().any(|s| wanted.contains(s.as_str())))
            .collect())
    }

    /// Adds (or re-weighs) an edge of the concept graph.
    pub async fn put_relation(&self, r: &Relation) -> Result<()> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        db.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            "INSERT INTO relations (from_id, to_id, kind, weight, created_at) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (from_id, to_id, kind) DO UPDATE SET weight = excluded.weight",
            [
                r.from.as_str().into(),
                r.to.as_str().into(),
                relation_name(r.kind).into(),
                f64::from(r.weight).into(),
                now_text().into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// Every edge touching `item`.
    pub async fn relations_of(&self, item: &ItemId) -> Result<Vec<Relation>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT from_id, to_id, kind, weight FROM relations WHERE from_id = ? OR to_id = ? \
                 ORDER BY weight DESC",
                [item.as_str().into(), item.as_str().into()],
            ))
            .await?;
        rows.iter().map(relation_row).collect()
    }

    /// The item log's newest event and its number of events: any change to items (a new
    /// event, a Clear) changes it. `used` events are left out: they carry the state as it
    /// was, so what is searched and when each item became known stay as they are (a turn
    /// note's use of an item does not rebuild the items' index).
    pub async fn item_log_stamp(&self) -> Result<(i64, i64)> {
        let db = self.conn();
        let row = db
            .query_one(Statement::from_string(
                db.get_database_backend(),
                "SELECT COALESCE(MAX(seq), 0) AS s, COUNT(*) AS n FROM item_events \
                 WHERE kind <> 'used'",
            ))
            .await?;
        Ok(match row {
            Some(r) => (r.try_get("", "s")?, r.try_get("", "n")?),
            None => (0, 0),
        })
    }

    /// When the newest request was captured (the machine is busy while turns arrive).
    pub async fn last_capture_at(&self) -> Result<Option<Timestamp>> {
        let db = self.conn();
        let row = db
            .query_one(Statement::from_string(
                db.get_database_backend(),
                "SELECT MAX(captured_at) AS at FROM records",
            ))
            .await?;
        match row.and_then(|r| r.try_get::<Option<String>>("", "at").ok().flatten()) {
            Some(s) => Ok(Some(parse_ts("records", "captured_at", &s)?)),
            None => Ok(None),
        }
    }
}

/// The stored name of a relation kind.
pub(crate) fn relation_name(k: RelationKind) -> &'static str {
    match k {
        RelationKind::Related => "related",
        RelationKind::Supersedes => "supersedes",
        RelationKind::Contradicts => "contradicts",
    }
}

/// A row of `relations` (`from_id`, `to_id`, `kind`, `weight`).
pub(crate) fn relation_row(r: &sea_orm::QueryResult) -> Result<Relation> {
    let kind: String = r.try_get("", "kind")?;
    Ok(Relation {
        from: ItemId::new(r.try_get::<String>("", "from_id")?),
        to: ItemId::new(r.try_get::<String>("", "to_id")?),
        kind: match kind.as_str() {
            "related" => RelationKind::Related,
            "supersedes" => RelationKind::Supersedes,
            "contradicts" => RelationKind::Contradicts,
            other => return Err(corrupt("relations", "kind", format!("unknown {other:?}"))),
        },
        weight: r.try_get::<f64>("", "weight")? as f32,
    })
}
