//! Rows whole, for export and import: every stored revision of a record with its chunks,
//! every item event, every note's metadata with its versions — each with the ids, revisions
//! and times it has in the store, so an import into another store restores them exactly.
//!
//! Import never rewrites: a row whose key (record id and revision, item id and event time and
//! kind, note id and version) is stored already is skipped when it holds the same content,
//! and reported as a conflict (the stored row kept) when it does not. So importing the same
//! export twice adds nothing.
use cairn_core::api::NoteScopeKind;
use cairn_core::{NoteId, Timestamp};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Statement,
    TransactionTrait,
};
use serde::{Deserialize, Serialize};

use crate::entity::{chunks, item_events, note_versions, records};
use crate::store::{to_i64, ts_text};
use crate::{Error, NoteRow, Result, Store};

/// One chunk of a record revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkRow {
    /// Position in the record.
    pub ord: i64,
    /// Character offset in the record's text.
    pub start: i64,
    /// The chunk's text.
    pub text: String,
}

/// One stored revision of a record, whole (times as the store keeps them, RFC 3339).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRow {
    /// The record id (`r_…`).
    pub id: String,
    /// Its revision (0 first; a turn that went on is stored again as the next).
    pub rev: i64,
    /// Framework.
    pub framework: String,
    /// Session id.
    pub session_id: String,
    /// Project identity.
    pub project: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// `success`, `error`, …
    pub outcome: String,
    /// When the request was made.
    pub started_at: String,
    /// When the turn ended.
    pub ended_at: Option<String>,
    /// When Cairn captured it.
    pub captured_at: String,
    /// The request's text.
    pub request: String,
    /// Who asked, when the source says.
    pub author: Option<String>,
    /// The rendered text that is searched.
    pub text: String,
    /// The turn's structured content.
    pub content: serde_json::Value,
    /// The source file or store.
    pub source: Option<String>,
    /// Its chunks.
    pub chunks: Vec<ChunkRow>,
}

/// One event of the item log, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemEventRow {
    /// The item (`i_…`).
    pub item_id: String,
    /// `created`, `merged`, `archived`, …
    pub kind: String,
    /// When it happened.
    pub at: String,
    /// The item's whole state after it.
    pub state: serde_json::Value,
    /// Why, when known.
    pub reason: Option<String>,
}

/// A note's metadata row, whole (times as stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteMetaRow {
    /// The note id (`n_…`).
    pub id: String,
    /// `user` or `project`.
    pub scope: String,
    /// The project, for project notes.
    pub project: Option<String>,
    /// Its path in its scope.
    pub path: String,
    /// Its title.
    pub title: String,
    /// The sha256 of its content.
    pub sha256: String,
    /// The content's size in bytes.
    pub bytes: i64,
    /// When it was created.
    pub created_at: String,
    /// Its last change.
    pub updated_at: String,
    /// When it was deleted, if it is.
    pub deleted_at: Option<String>,
}

/// One version of a note, whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteVersionExport {
    /// The note.
    pub note_id: String,
    /// 1, 2, … per note.
    pub version: i64,
    /// `create`, `edit`, `rename`, `delete`, `restore`.
    pub action: String,
    /// The note's path after the change.
    pub path: Option<String>,
    /// The sha256 of the content.
    pub sha256: String,
    /// The content (`None` once redacted).
    pub content: Option<String>,
    /// Who made the change.
    pub author: String,
    /// When.
    pub at: String,
    /// When it was redacted.
    pub redacted_at: Option<String>,
    /// Who redacted it.
    pub redacted_by: Option<String>,
}

/// One relation between items, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationRow {
    /// From this item.
    pub from_id: String,
    /// To this one.
    pub to_id: String,
    /// `related`, `supersedes` or `contradicts`.
    pub kind: String,
    /// Its weight (similarity for `related`).
    pub weight: f64,
    /// When it was made.
    pub created_at: String,
}

/// What an import of one row did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// New: stored.
    Added,
    /// Stored already with the same content: nothing written.
    Duplicate,
    /// Stored already with other content: the stored one kept, nothing written.
    Conflict,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    /// Only this project's records, items and notes.
    pub project: Option<String>,
    /// Only what happened at or after this time (records by request time, item events by
    /// their time, notes by their last change).
    pub since: Option<Timestamp>,
}

fn record_row(m: records::Model, chunks: Vec<ChunkRow>) -> Result<RecordRow> {
    let content = serde_json::from_str(&m.content).map_err(|e| Error::Corrupt {
        table: "records",
        column: "content",
        reason: e.to_string(),
    })?;
    Ok(RecordRow {
        id: m.id,
        rev: m.rev,
        framework: m.framework,
        session_id: m.session_id,
        project: m.project,
        cwd: m.cwd,
        model: m.model,
        outcome: m.outcome,
        started_at: m.started_at,
        ended_at: m.ended_at,
        captured_at: m.captured_at,
        request: m.request,
        author: m.author,
        text: m.text,
        content,
        source: m.source,
        chunks,
    })
}

fn event_row(m: item_events::Model) -> Result<ItemEventRow> {
    let state = serde_json::from_str(&m.state).map_err(|e| Error::Corrupt {
        table: "item_events",
        column: "state",
        reason: e.to_string(),
    })?;
    Ok(ItemEventRow {
        item_id: m.item_id,
        kind: m.kind,
        at: m.at,
        state,
        reason: m.reason,
    })
}

fn version_export(m: note_versions::Model) -> NoteVersionExport {
    NoteVersionExport {
        note_id: m.note_id,
        version: m.version,
        action: m.action,
        path: m.path,
        sha256: m.sha256,
        content: m.content,
        author: m.author,
        at: m.at,
        redacted_at: m.redacted_at,
        redacted_by: m.redacted_by,
    }
}

fn meta_of(n: &NoteRow) -> NoteMetaRow {
    NoteMetaRow {
        id: n.id.as_str().to_owned(),
        scope: match n.scope {
            NoteScopeKind::User => "user".to_owned(),
            NoteScopeKind::Project => "project".to_owned(),
        },
        project: n.project.clone(),
        path: n.path.clone(),
        title: n.title.clone(),
        sha256: n.sha256.clone(),
        bytes: to_i64(n.bytes),
        created_at: ts_text(&n.created_at),
        updated_at: ts_text(&n.updated_at),
        deleted_at: n.deleted_at.as_ref().map(ts_text),
    }
}

impl Store {
    /// Every revision of every record the filter keeps, with its chunks, in log order, a page
    /// at a time (`after_seq` is the last page's last position; returned with each row).
    pub async fn export_records_page(
        &self,
        filter: &ExportFilter,
        after_seq: i64,
        limit: u64,
    ) -> Result<Vec<(i64, RecordRow)>> {
        let mut q = records::Entity::find().filter(records::Column::Seq.gt(after_seq));
        if let Some(p) = &filter.project {
            q = q.filter(records::Column::Project.eq(p.as_str()));
        }
        if let Some(t) = &filter.since {
            q = q.filter(records::Column::StartedAt.gte(ts_text(t)));
        }
        let rows = sea_orm::QuerySelect::limit(q.order_by_asc(records::Column::Seq), limit)
            .all(self.conn())
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for m in rows {
            let chunk_rows = chunks::Entity::find()
                .filter(chunks::Column::RecordId.eq(m.id.as_str()))
                .filter(chunks::Column::Rev.eq(m.rev))
                .order_by_asc(chunks::Column::Ord)
                .all(self.conn())
                .await?
                .into_iter()
                .map(|c| ChunkRow {
                    ord: c.ord,
                    start: c.start,
                    text: c.text,
                })
                .collect();
            out.push((m.seq, record_row(m, chunk_rows)?));
        }
        Ok(out)
    }

    /// Every item event the filter keeps (the item's project; the event's time), in log
    /// order.
    pub async fn export_item_events(&self, filter: &ExportFilter) -> Result<Vec<ItemEventRow>> {
        let mut q = item_events::Entity::find();
        if let Some(t) = &filter.since {
            q = q.filter(item_events::Column::At.gte(ts_text(t)));
        }
        let rows = q
            .order_by_asc(item_events::Column::Seq)
            .all(self.conn())
            .await?;
        let mut out = Vec::new();
        for m in rows {
            let row = event_row(m)?;
            if let Some(p) = &filter.project
                && row.state.get("project").and_then(|v| v.as_str()) != Some(p.as_str())
            {
                continue;
            }
            out.push(row);
        }
        Ok(out)
    }

    /// Every note the filter keeps (deleted ones too), with all its versions, oldest first.
    pub async fn export_notes(
        &self,
        filter: &ExportFilter,
    ) -> Result<Vec<(NoteMetaRow, Vec<NoteVersionExport>)>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT id FROM notes ORDER BY created_at, id",
            ))
            .await?;
        let mut out = Vec::new();
        for r in rows {
            let id = NoteId::new(r.try_get::<String>("", "id")?);
            let Some(note) = self.note(&id).await? else {
                continue;
            };
            if let Some(p) = &filter.project
                && note.project.as_deref() != Some(p.as_str())
            {
                continue;
            }
            if let Some(t) = &filter.since
                && note.updated_at < *t
            {
                continue;
            }
            let versions = note_versions::Entity::find()
                .filter(note_versions::Column::NoteId.eq(id.as_str()))
                .order_by_asc(note_versions::Column::Version)
                .all(db)
                .await?
                .into_iter()
                .map(version_export)
                .collect();
            out.push((meta_of(&note), versions));
        }
        Ok(out)
    }

    /// Every relation whose two items are both in `items` (`None`: every relation).
    pub async fn export_relations(
        &self,
        items: Option<&std::collections::HashSet<String>>,
    ) -> Result<Vec<RelationRow>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT from_id, to_id, kind, weight, created_at FROM relations ORDER BY id",
            ))
            .await?;
        let mut out = Vec::new();
        for r in rows {
            let row = RelationRow {
                from_id: r.try_get("", "from_id")?,
                to_id: r.try_get("", "to_id")?,
                kind: r.try_get("", "kind")?,
                weight: r.try_get("", "weight")?,
                created_at: r.try_get("", "created_at")?,
            };
            if items.is_none_or(|set| set.contains(&row.from_id) && set.contains(&row.to_id)) {
                out.push(row);
            }
        }
        Ok(out)
    }

    /// Stores relations as they are, in one transaction. A relation is the same one when its
    /// two items and kind match.
    pub async fn import_relations(&self, rows: &[RelationRow]) -> Result<Vec<Imported>> {
        let _writer = self.write_lock().await;
        let txn = self.conn().begin().await?;
        let backend = txn.get_database_backend();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let found = txn
                .query_one(Statement::from_sql_and_values(
                    backend,
                    "SELECT weight FROM relations WHERE from_id = ? AND to_id = ? AND kind = ?",
                    [
                        r.from_id.clone().into(),
                        r.to_id.clone().into(),
                        r.kind.clone().into(),
                    ],
                ))
                .await?;
            if let Some(old) = found {
                let w: f64 = old.try_get("", "weight")?;
                out.push(if (w - r.weight).abs() < 1e-9 {
                    Imported::Duplicate
                } else {
                    Imported::Conflict
                });
                continue;
            }
            txn.execute(Statement::from_sql_and_values(
                backend,
                "INSERT INTO relations (from_id, to_id, kind, weight, created_at) VALUES (?, ?, ?, ?, ?)",
                [
                    r.from_id.clone().into(),
                    r.to_id.clone().into(),
                    r.kind.clone().into(),
                    r.weight.into(),
                    r.created_at.clone().into(),
                ],
            ))
            .await?;
            out.push(Imported::Added);
        }
        txn.commit().await?;
        Ok(out)
    }

    /// Stores record revisions as they are (ids, revisions, times kept), in one
    /// transaction; each reports [`Imported`].
    pub async fn import_records(&self, rows: &[RecordRow]) -> Result<Vec<Imported>> {
        let _writer = self.write_lock().await;
        let txn = self.conn().begin().await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let found = records::Entity::find()
                .filter(records::Column::Id.eq(r.id.as_str()))
                .filter(records::Column::Rev.eq(r.rev))
                .one(&txn)
                .await?;
            if let Some(old) = found {
                let old = record_row(old, Vec::new())?;
                let same = old.text == r.text
                    && old.outcome == r.outcome
                    && old.content == r.content
                    && old.started_at == r.started_at;
                out.push(if same {
                    Imported::Duplicate
                } else {
                    Imported::Conflict
                });
                continue;
            }
            let content = serde_json::to_string(&r.content).map_err(|e| Error::Encode {
                what: "record content",
                reason: e.to_string(),
            })?;
            let am = records::ActiveModel {
                seq: NotSet,
                id: Set(r.id.clone()),
                rev: Set(r.rev),
                framework: Set(r.framework.clone()),
                session_id: Set(r.session_id.clone()),
                project: Set(r.project.clone()),
                cwd: Set(r.cwd.clone()),
                model: Set(r.model.clone()),
                outcome: Set(r.outcome.clone()),
                started_at: Set(r.started_at.clone()),
                ended_at: Set(r.ended_at.clone()),
                captured_at: Set(r.captured_at.clone()),
                request: Set(r.request.clone()),
                author: Set(r.author.clone()),
                text: Set(r.text.clone()),
                content: Set(content),
                source: Set(r.source.clone()),
            };
            records::Entity::insert(am)
                .exec_without_returning(&txn)
                .await?;
            for c in &r.chunks {
                let am = chunks::ActiveModel {
                    seq: NotSet,
                    record_id: Set(r.id.clone()),
                    rev: Set(r.rev),
                    ord: Set(c.ord),
                    start: Set(c.start),
                    text: Set(c.text.clone()),
                };
                chunks::Entity::insert(am)
                    .exec_without_returning(&txn)
                    .await?;
            }
            out.push(Imported::Added);
        }
        txn.commit().await?;
        Ok(out)
    }

    /// Stores item events as they are (times kept), in one transaction. An event is the same
    /// one when its item, time and kind match.
    pub async fn import_item_events(&self, rows: &[ItemEventRow]) -> Result<Vec<Imported>> {
        let _writer = self.write_lock().await;
        let txn = self.conn().begin().await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let found = item_events::Entity::find()
                .filter(item_events::Column::ItemId.eq(r.item_id.as_str()))
                .filter(item_events::Column::At.eq(r.at.as_str()))
                .filter(item_events::Column::Kind.eq(r.kind.as_str()))
                .one(&txn)
                .await?;
            if let Some(old) = found {
                let old = event_row(old)?;
                out.push(if old.state == r.state && old.reason == r.reason {
                    Imported::Duplicate
                } else {
                    Imported::Conflict
                });
                continue;
            }
            let state = serde_json::to_string(&r.state).map_err(|e| Error::Encode {
                what: "item state",
                reason: e.to_string(),
            })?;
            let am = item_events::ActiveModel {
                seq: NotSet,
                item_id: Set(r.item_id.clone()),
                kind: Set(r.kind.clone()),
                at: Set(r.at.clone()),
                state: Set(state),
                reason: Set(r.reason.clone()),
            };
            item_events::Entity::insert(am)
                .exec_without_returning(&txn)
                .await?;
            out.push(Imported::Added);
        }
        txn.commit().await?;
        Ok(out)
    }

    /// Stores a note's metadata and versions as they are (id, versions and times kept), with
    /// the size and mtime of the file the caller wrote (`None` for a deleted note). A note
    /// stored already is a duplicate when its versions match, else a conflict; a live note of
    /// another id at the same path is a conflict. Nothing is written unless it is added.
    pub async fn import_note(
        &self,
        meta: &NoteMetaRow,
        versions: &[NoteVersionExport],
        file: Option<(u64, i64)>,
    ) -> Result<Imported> {
        let _writer = self.write_lock().await;
        let txn = self.conn().begin().await?;
        let backend = txn.get_database_backend();
        let existing = note_versions::Entity::find()
            .filter(note_versions::Column::NoteId.eq(meta.id.as_str()))
            .order_by_asc(note_versions::Column::Version)
            .all(&txn)
            .await?;
        let has_row = txn
            .query_one(Statement::from_sql_and_values(
                backend,
                "SELECT 1 AS one FROM notes WHERE id = ?",
                [meta.id.clone().into()],
            ))
            .await?
            .is_some();
        if has_row {
            let old: Vec<NoteVersionExport> = existing.into_iter().map(version_export).collect();
            txn.rollback().await?;
            return Ok(if old == versions {
                Imported::Duplicate
            } else {
                Imported::Conflict
            });
        }
        if meta.deleted_at.is_none() {
            let taken = txn
                .query_one(Statement::from_sql_and_values(
                    backend,
                    "SELECT id FROM notes WHERE scope = ? AND COALESCE(project, '') = ? AND path = ? AND deleted_at IS NULL",
                    [
                        meta.scope.clone().into(),
                        meta.project.clone().unwrap_or_default().into(),
                        meta.path.clone().into(),
                    ],
                ))
                .await?;
            if taken.is_some() {
                txn.rollback().await?;
                return Ok(Imported::Conflict);
            }
        }
        txn.execute(Statement::from_sql_and_values(
            backend,
            "INSERT INTO notes (id, scope, project, path, title, sha256, bytes, file_size,
                file_mtime, created_at, updated_at, deleted_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                meta.id.clone().into(),
                meta.scope.clone().into(),
                meta.project.clone().into(),
                meta.path.clone().into(),
                meta.title.clone().into(),
                meta.sha256.clone().into(),
                meta.bytes.into(),
                file.map(|f| to_i64(f.0)).into(),
                file.map(|f| f.1).into(),
                meta.created_at.clone().into(),
                meta.updated_at.clone().into(),
                meta.deleted_at.clone().into(),
            ],
        ))
        .await?;
        for v in versions {
            let am = note_versions::ActiveModel {
                seq: NotSet,
                note_id: Set(meta.id.clone()),
                version: Set(v.version),
                sha256: Set(v.sha256.clone()),
                content: Set(v.content.clone()),
                author: Set(v.author.clone()),
                at: Set(v.at.clone()),
                redacted_at: Set(v.redacted_at.clone()),
                redacted_by: Set(v.redacted_by.clone()),
                action: Set(v.action.clone()),
                path: Set(v.path.clone()),
            };
            note_versions::Entity::insert(am)
                .exec_without_returning(&txn)
                .await?;
        }
        txn.commit().await?;
        Ok(Imported::Added)
    }
}
