//! The review inbox's log: each action taken on an entry (merge, supersede, archive, keep)
//! with what it changed, so it can be undone; and the edges of the concept graph the inbox
//! reads (contradictions) or takes back (an undone supersede). Item states kept here are
//! remembered content: Clear empties the table.
use std::collections::HashSet;

use cairn_core::{ItemId, Relation, RelationKind, Timestamp};
use sea_orm::{ConnectionTrait, Statement};

use crate::error::corrupt;
use crate::store::{parse_ts, ts_text};
use crate::{Result, Store};

/// A record that is one of several identical ones (same project, request and whole text).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordCopy {
    /// Its id.
    pub id: String,
    /// Its framework.
    pub framework: String,
    /// Its session.
    pub session_id: String,
    /// Its project.
    pub project: Option<String>,
    /// When it was asked.
    pub started_at: Timestamp,
    /// The request.
    pub request: String,
    /// The start of the whole turn (request and replies), up to 400 characters.
    pub text_start: String,
}

/// One action of the review log.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewAction {
    /// Its id (`rv_…`).
    pub id: String,
    /// When it was taken.
    pub at: Timestamp,
    /// The inbox entry's key.
    pub entry: String,
    /// The entry's category.
    pub category: String,
    /// `merge`, `supersede`, `archive` or `keep`.
    pub action: String,
    /// What it did, in a sentence.
    pub summary: String,
    /// What undo needs (the states before, the edges added, the notes deleted).
    pub detail: serde_json::Value,
    /// When it was undone.
    pub undone_at: Option<Timestamp>,
}

const COLUMNS: &str = "id, at, entry, category, action, summary, detail, undone_at";

fn action_of(r: &sea_orm::QueryResult) -> Result<ReviewAction> {
    let at: String = r.try_get("", "at")?;
    let detail: String = r.try_get("", "detail")?;
    let undone: Option<String> = r.try_get("", "undone_at")?;
    Ok(ReviewAction {
        id: r.try_get("", "id")?,
        at: parse_ts("review_actions", "at", &at)?,
        entry: r.try_get("", "entry")?,
        category: r.try_get("", "category")?,
        action: r.try_get("", "action")?,
        summary: r.try_get("", "summary")?,
        detail: serde_json::from_str(&detail)
            .map_err(|e| corrupt("review_actions", "detail", e.to_string()))?,
        undone_at: undone
            .map(|u| parse_ts("review_actions", "undone_at", &u))
            .transpose()?,
    })
}

impl Store {
    /// Logs an action of the review inbox.
    pub async fn append_review_action(&self, a: &ReviewAction) -> Result<()> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        db.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            format!("INSERT INTO review_actions ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            [
                a.id.clone().into(),
                ts_text(&a.at).into(),
                a.entry.clone().into(),
                a.category.clone().into(),
                a.action.clone().into(),
                a.summary.clone().into(),
                a.detail.to_string().into(),
                a.undone_at.as_ref().map(ts_text).into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// The latest actions, newest first.
    pub async fn review_actions(&self, limit: u64) -> Result<Vec<ReviewAction>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                format!(
                    "SELECT {COLUMNS} FROM review_actions ORDER BY at DESC, rowid DESC LIMIT ?"
                ),
                [i64::try_from(limit).unwrap_or(i64::MAX).into()],
            ))
            .await?;
        rows.iter().map(action_of).collect()
    }

    /// One action, by its id.
    pub async fn review_action(&self, id: &str) -> Result<Option<ReviewAction>> {
        let db = self.conn();
        let row = db
            .query_one(Statement::from_sql_and_values(
                db.get_database_backend(),
                format!("SELECT {COLUMNS} FROM review_actions WHERE id = ?"),
                [id.into()],
            ))
            .await?;
        row.as_ref().map(action_of).transpose()
    }

    /// Marks an action undone; false when it already was (or does not exist).
    pub async fn mark_review_undone(&self, id: &str, at: &Timestamp) -> Result<bool> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        let res = db
            .execute(Statement::from_sql_and_values(
                db.get_database_backend(),
                "UPDATE review_actions SET undone_at = ? WHERE id = ? AND undone_at IS NULL",
                [ts_text(at).into(), id.into()],
            ))
            .await?;
        Ok(res.rows_affected() == 1)
    }

    /// The entries someone chose to keep (and did not undo): the inbox leaves them out.
    pub async fn kept_review_entries(&self) -> Result<HashSet<String>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT entry FROM review_actions WHERE action = 'keep' AND undone_at IS NULL",
            ))
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String>("", "entry").map_err(Into::into))
            .collect()
    }

    /// The working folder and start time of each of `records` that has one (any revision;
    /// the newest wins), by record id.
    pub async fn record_cwds(
        &self,
        records: &[String],
    ) -> Result<std::collections::HashMap<String, (Timestamp, String)>> {
        let db = self.conn();
        let mut out = std::collections::HashMap::new();
        for part in records.chunks(400) {
            let marks = vec!["?"; part.len()].join(", ");
            let rows = db
                .query_all(Statement::from_sql_and_values(
                    db.get_database_backend(),
                    format!(
                        "SELECT id, started_at, cwd FROM records WHERE id IN ({marks}) \
                         AND cwd IS NOT NULL AND cwd <> '' ORDER BY rev"
                    ),
                    part.iter().map(|p| p.clone().into()),
                ))
                .await?;
            for r in rows {
                let at: String = r.try_get("", "started_at")?;
                out.insert(
                    r.try_get::<String>("", "id")?,
                    (
                        parse_ts("records", "started_at", &at)?,
                        r.try_get("", "cwd")?,
                    ),
                );
            }
        }
        Ok(out)
    }

    /// Groups of records with the same project, request and whole text (a turn captured
    /// twice: a resumed session's copy, two stores of one agent), oldest first in each group.
    /// Only turns with some substance: a text of at least `min_chars` characters.
    pub async fn duplicate_records(&self, min_chars: u32) -> Result<Vec<Vec<RecordCopy>>> {
        let db = self.conn();
        let rows = db
            // Requests first (short): only the turns whose request repeats are read whole.
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "WITH dup AS (SELECT project, request FROM records_current \
                              GROUP BY project, request HAVING COUNT(*) > 1) \
                 SELECT c.id, c.framework, c.session_id, c.project, c.started_at, c.request, c.text \
                 FROM records_current c JOIN dup d ON c.request = d.request \
                 AND c.project IS d.project ORDER BY c.started_at, c.id",
            ))
            .await?;
        let mut groups: std::collections::HashMap<
            (Option<String>, String, String),
            Vec<RecordCopy>,
        > = std::collections::HashMap::new();
        for r in rows {
            let at: String = r.try_get("", "started_at")?;
            let text: String = r.try_get("", "text")?;
            if text.chars().count() < min_chars as usize {
                continue;
            }
            let copy = RecordCopy {
                id: r.try_get("", "id")?,
                framework: r.try_get("", "framework")?,
                session_id: r.try_get("", "session_id")?,
                project: r.try_get("", "project")?,
                started_at: parse_ts("records", "started_at", &at)?,
                request: r.try_get("", "request")?,
                text_start: text.chars().take(400).collect(),
            };
            groups
                .entry((copy.project.clone(), copy.request.clone(), text))
                .or_default()
                .push(copy);
        }
        let mut out: Vec<Vec<RecordCopy>> = groups.into_values().filter(|g| g.len() > 1).collect();
        out.sort_by(|a, b| {
            a[0].started_at
                .cmp(&b[0].started_at)
                .then(a[0].id.cmp(&b[0].id))
        });
        Ok(out)
    }

    /// Leaves records out of search and the turn note (they stay in the log).
    pub async fn hide_records(&self, ids: &[String], why: &str) -> Result<()> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        for id in ids {
            db.execute(Statement::from_sql_and_values(
                db.get_database_backend(),
                "INSERT OR REPLACE INTO hidden_records (id, at, why) VALUES (?, ?, ?)",
                [
                    id.clone().into(),
                    crate::store::now_text().into(),
                    why.into(),
                ],
            ))
            .await?;
        }
        Ok(())
    }

    /// Brings hidden records back into search and the turn note.
    pub async fn unhide_records(&self, ids: &[String]) -> Result<()> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        for id in ids {
            db.execute(Statement::from_sql_and_values(
                db.get_database_backend(),
                "DELETE FROM hidden_records WHERE id = ?",
                [id.clone().into()],
            ))
            .await?;
        }
        Ok(())
    }

    /// The hidden records' ids.
    pub async fn hidden_records(&self) -> Result<HashSet<String>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT id FROM hidden_records",
            ))
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String>("", "id").map_err(Into::into))
            .collect()
    }

    /// Every edge of one kind.
    pub async fn relations_of_kind(&self, kind: RelationKind) -> Result<Vec<Relation>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT from_id, to_id, kind, weight FROM relations WHERE kind = ? \
                 ORDER BY weight DESC",
                [crate::distill::relation_name(kind).into()],
            ))
            .await?;
        rows.iter().map(crate::distill::relation_row).collect()
    }

    /// Removes one edge (an undone supersede's); false when there was none.
    pub async fn delete_relation(
        &self,
        from: &ItemId,
        to: &ItemId,
        kind: RelationKind,
    ) -> Result<bool> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        let res = db
            .execute(Statement::from_sql_and_values(
                db.get_database_backend(),
                "DELETE FROM relations WHERE from_id = ? AND to_id = ? AND kind = ?",
                [
                    from.as_str().into(),
                    to.as_str().into(),
                    crate::distill::relation_name(kind).into(),
                ],
            ))
            .await?;
        Ok(res.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn actions_are_logged_kept_entries_listed_and_undone_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("cairn.db"))
            .await
            .expect("open");
        let at = chrono::Utc::now();
        for (id, action) in [("rv_1", "keep"), ("rv_2", "archive")] {
            store
                .append_review_action(&ReviewAction {
                    id: id.into(),
                    at,
                    entry: format!("junk:i_{id}"),
                    category: "junk".into(),
                    action: action.into(),
                    summary: "s".into(),
                    detail: serde_json::json!({"before": []}),
                    undone_at: None,
                })
                .await
                .expect("append");
        }
        assert_eq!(store.review_actions(10).await.expect("list").len(), 2);
        let kept = store.kept_review_entries().await.expect("kept");
        assert_eq!(kept, HashSet::from(["junk:i_rv_1".to_owned()]));
        assert!(store.mark_review_undone("rv_1", &at).await.expect("undo"));
        assert!(
            !store
                .mark_review_undone("rv_1", &at)
                .await
                .expect("undo again")
        );
        assert!(store.kept_review_entries().await.expect("kept").is_empty());
        let one = store
            .review_action("rv_1")
            .await
            .expect("one")
            .expect("exists");
        assert!(one.undone_at.is_some());
        assert_eq!(one.detail, serde_json::json!({"before": []}));
    }
}
