//! Notes metadata and versions (the Markdown files themselves live under the notes root and
//! are `cairn-notes`' business).
//!
//! Every change to a note appends a `note_versions` row in the same transaction that updates
//! the note's `notes` row. Versions are append-only; the one change the database allows is a
//! redaction (content → NULL, with who and when), after which the WAL is checkpointed so the
//! redacted text is left in no file of the store (`secure_delete` zeroes the freed bytes).
use cairn_core::api::NoteScopeKind;
use cairn_core::{NoteId, Timestamp};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ConnectionTrait, DatabaseTransaction, EntityTrait, QueryResult, Statement, TransactionTrait,
};

use crate::entity::{note_versions, notes};
use crate::store::{to_i64, to_u64};
use crate::{Error, Result, Store};

/// What one version of a note records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoteAction {
    /// The note came to be (written through Cairn, or a file found under the root).
    Create,
    /// Its content changed.
    Edit,
    /// It moved to another path in its scope (content unchanged).
    Rename,
    /// It was deleted; the version keeps the last content so it can be restored.
    Delete,
    /// An older version's content was brought back (also un-deletes the note).
    Restore,
}

impl NoteAction {
    /// The name stored in `note_versions.action` and shown to callers.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteAction::Create => "create",
            NoteAction::Edit => "edit",
            NoteAction::Rename => "rename",
            NoteAction::Delete => "delete",
            NoteAction::Restore => "restore",
        }
    }

    /// The action named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "create" => NoteAction::Create,
            "edit" => NoteAction::Edit,
            "rename" => NoteAction::Rename,
            "delete" => NoteAction::Delete,
            "restore" => NoteAction::Restore,
            _ => return None,
        })
    }
}

/// A note's metadata row.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRow {
    /// Its id (`n_…`), stable across renames.
    pub id: NoteId,
    /// User or project.
    pub scope: NoteScopeKind,
    /// The project, for project notes.
    pub project: Option<String>,
    /// Its path inside the scope (the last one it had, when deleted).
    pub path: String,
    /// Its title.
    pub title: String,
    /// The sha256 (hex) of its content as stored.
    pub sha256: String,
    /// The content's size in bytes.
    pub bytes: u64,
    /// The file's size when Cairn last read or wrote it.
    pub file_size: Option<u64>,
    /// The file's modification time (ns since the epoch) when Cairn last read or wrote it.
    pub file_mtime: Option<i64>,
    /// When it was created.
    pub created_at: Timestamp,
    /// Its last change.
    pub updated_at: Timestamp,
    /// When it was deleted, if it is.
    pub deleted_at: Option<Timestamp>,
    /// How many versions it has.
    pub versions: u64,
    /// The log position of its latest version: larger means changed more recently (a total
    /// order, unlike timestamps).
    pub last_seq: i64,
}

/// One kept version of a note.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteVersionRow {
    /// The note.
    pub note_id: NoteId,
    /// 1, 2, … per note.
    pub version: u64,
    /// What the change was.
    pub action: NoteAction,
    /// The note's path after the change.
    pub path: String,
    /// The sha256 of `content` (of the content before redaction, once redacted).
    pub sha256: String,
    /// The content after the change (the last content, for a delete); `None` once redacted.
    pub content: Option<String>,
    /// Who made the change (`user`, `agent:<client>`, `file`).
    pub author: String,
    /// When.
    pub at: Timestamp,
    /// When the content was redacted.
    pub redacted_at: Option<Timestamp>,
    /// Who redacted it.
    pub redacted_by: Option<String>,
}

/// A change to record: the note's metadata after it, and the version to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewNoteVersion {
    /// The note (a new id creates the metadata row).
    pub id: NoteId,
    /// User or project.
    pub scope: NoteScopeKind,
    /// The project, for project notes.
    pub project: Option<String>,
    /// The path after the change.
    pub path: String,
    /// The title after the change.
    pub title: String,
    /// The sha256 of `content`.
    pub sha256: String,
    /// The size of `content` in bytes.
    pub bytes: u64,
    /// The file's size after the change (`None` once deleted).
    pub file_size: Option<u64>,
    /// The file's mtime (ns) after the change (`None` once deleted).
    pub file_mtime: Option<i64>,
    /// What the change is; [`NoteAction::Delete`] marks the note deleted, every other
    /// action marks it live.
    pub action: NoteAction,
    /// The content to keep with the version (already scrubbed).
    pub content: Option<String>,
    /// Who made the change.
    pub author: String,
}

const NOTE_COLUMNS: &str = "n.id, n.scope, n.project, n.path, n.title, n.sha256, n.bytes,
    n.file_size, n.file_mtime, n.created_at, n.updated_at, n.deleted_at,
    (SELECT COUNT(*) FROM note_versions v WHERE v.note_id = n.id) AS versions,
    COALESCE((SELECT MAX(v.seq) FROM note_versions v WHERE v.note_id = n.id), 0) AS last_seq";

fn scope_text(scope: NoteScopeKind) -> &'static str {
    match scope {
        NoteScopeKind::User => "user",
        NoteScopeKind::Project => "project",
    }
}

fn parse_note_ts(column: &'static str, s: &str) -> Result<Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| Error::Corrupt {
            table: "notes",
            column,
            reason: format!("{s:?}: {e}"),
        })
}

fn note_from_row(r: &QueryResult) -> Result<NoteRow> {
    let scope: String = r.try_get("", "scope")?;
    let scope = match scope.as_str() {
        "user" => NoteScopeKind::User,
        "project" => NoteScopeKind::Project,
        other => {
            return Err(Error::Corrupt {
                table: "notes",
                column: "scope",
                reason: other.to_owned(),
            });
        }
    };
    Ok(NoteRow {
        id: NoteId::new(r.try_get::<String>("", "id")?),
        scope,
        project: r.try_get("", "project")?,
        path: r.try_get("", "path")?,
        title: r.try_get("", "title")?,
        sha256: r.try_get("", "sha256")?,
        bytes: to_u64(r.try_get("", "bytes")?),
        file_size: r.try_get::<Option<i64>>("", "file_size")?.map(to_u64),
        file_mtime: r.try_get("", "file_mtime")?,
        created_at: parse_note_ts("created_at", &r.try_get::<String>("", "created_at")?)?,
        updated_at: parse_note_ts("updated_at", &r.try_get::<String>("", "updated_at")?)?,
        deleted_at: r
            .try_get::<Option<String>>("", "deleted_at")?
            .map(|s| parse_note_ts("deleted_at", &s))
            .transpose()?,
        versions: to_u64(r.try_get("", "versions")?),
        last_seq: r.try_get("", "last_seq")?,
    })
}

fn version_from_model(m: note_versions::Model) -> Result<NoteVersionRow> {
    let corrupt = |column: &'static str, reason: String| Error::Corrupt {
        table: "note_versions",
        column,
        reason,
    };
    let parse = |column: &'static str, s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&chrono::Utc))
            .map_err(|e| corrupt(column, format!("{s:?}: {e}")))
    };
    Ok(NoteVersionRow {
        action: NoteAction::parse(&m.action).ok_or_else(|| corrupt("action", m.action.clone()))?,
        path: m.path.unwrap_or_default(),
        version: to_u64(m.version),
        at: parse("at", &m.at)?,
        redacted_at: m
            .redacted_at
            .as_deref()
            .map(|s| parse("redacted_at", s))
            .transpose()?,
        note_id: NoteId::new(m.note_id),
        sha256: m.sha256,
        content: m.content,
        author: m.author,
        redacted_by: m.redacted_by,
    })
}

impl Store {
    async fn query_notes(&self, filter: &str, values: Vec<sea_orm::Value>) -> Result<Vec<NoteRow>> {
        let db = self.conn();
        let sql = format!("SELECT {NOTE_COLUMNS} FROM notes n WHERE {filter}");
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                &sql,
                values,
            ))
            .await?;
        rows.iter().map(note_from_row).collect()
    }

    /// One note's metadata, deleted or not.
    pub async fn note(&self, id: &NoteId) -> Result<Option<NoteRow>> {
        Ok(self
            .query_notes("n.id = ?", vec![id.as_str().into()])
            .await?
            .into_iter()
            .next())
    }

    /// The live note at `path` in a scope, else the note most recently deleted there.
    pub async fn note_by_path(
        &self,
        scope: NoteScopeKind,
        project: Option<&str>,
        path: &str,
    ) -> Result<Option<NoteRow>> {
        let mut rows = self
            .query_notes(
                "n.scope = ? AND COALESCE(n.project, '') = ? AND n.path = ?
                 ORDER BY n.deleted_at IS NOT NULL, last_seq DESC LIMIT 1",
                vec![
                    scope_text(scope).into(),
                    project.unwrap_or("").into(),
                    path.into(),
                ],
            )
            .await?;
        Ok(rows.pop())
    }

    /// Every live note of one scope (one project's, or the user's), by path.
    pub async fn live_notes_in(
        &self,
        scope: NoteScopeKind,
        project: Option<&str>,
    ) -> Result<Vec<NoteRow>> {
        self.query_notes(
            "n.deleted_at IS NULL AND n.scope = ? AND COALESCE(n.project, '') = ?
             ORDER BY n.path",
            vec![scope_text(scope).into(), project.unwrap_or("").into()],
        )
        .await
    }

    /// Every live note, by scope (user first), project and path.
    pub async fn live_notes(&self) -> Result<Vec<NoteRow>> {
        self.query_notes(
            "n.deleted_at IS NULL ORDER BY n.scope = 'project', n.project, n.path",
            Vec::new(),
        )
        .await
    }

    /// The projects that have notes: live ones only, or also deleted ones.
    pub async fn note_projects(&self, include_deleted: bool) -> Result<Vec<String>> {
        let db = self.conn();
        let sql = if include_deleted {
            "SELECT DISTINCT project FROM notes WHERE project IS NOT NULL ORDER BY project"
        } else {
            "SELECT DISTINCT project FROM notes WHERE project IS NOT NULL
             AND deleted_at IS NULL ORDER BY project"
        };
        let rows = db
            .query_all(Statement::from_string(db.get_database_backend(), sql))
            .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<String>("", "project")?))
            .collect()
    }

    /// Records a change: updates (or creates) the note's metadata and appends its next
    /// version, in one transaction. Returns the version.
    pub async fn append_note_version(&self, change: &NewNoteVersion) -> Result<NoteVersionRow> {
        let _writer = self.write_lock().await;
        let txn = self.conn().begin().await?;
        let row = match append_in(&txn, change).await {
            Ok(row) => row,
            Err(e) => {
                // Rolled back now, not when the dropped transaction's connection is next
                // used: the next writer must not find the database locked.
                txn.rollback().await?;
                return Err(e);
            }
        };
        txn.commit().await?;
        Ok(row)
    }

    /// Remembers what the note's file looks like now (after a read that found its content
    /// unchanged), so the next look compares size and mtime only.
    pub async fn set_note_file_stat(
        &self,
        id: &NoteId,
        file_size: Option<u64>,
        file_mtime: Option<i64>,
    ) -> Result<()> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        db.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            "UPDATE notes SET file_size = ?, file_mtime = ? WHERE id = ?",
            [
                file_size.map(to_i64).into(),
                file_mtime.into(),
                id.as_str().into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// A note's versions, newest first.
    pub async fn note_versions(&self, id: &NoteId) -> Result<Vec<NoteVersionRow>> {
        use sea_orm::{ColumnTrait, QueryFilter, QueryOrder};
        note_versions::Entity::find()
            .filter(note_versions::Column::NoteId.eq(id.as_str()))
            .order_by_desc(note_versions::Column::Version)
            .all(self.conn())
            .await?
            .into_iter()
            .map(version_from_model)
            .collect()
    }

    /// One version of a note.
    pub async fn note_version(&self, id: &NoteId, version: u64) -> Result<Option<NoteVersionRow>> {
        use sea_orm::{ColumnTrait, QueryFilter};
        note_versions::Entity::find()
            .filter(note_versions::Column::NoteId.eq(id.as_str()))
            .filter(note_versions::Column::Version.eq(to_i64(version)))
            .one(self.conn())
            .await?
            .map(version_from_model)
            .transpose()
    }

    /// Strips one version's content, keeping who made it and when, and records who redacted
    /// it. Then checkpoints the WAL (truncating it), so that with `secure_delete` the text
    /// is left in no file of the store. Returns the version afterwards, or `None` when there
    /// is no such version. A version redacted already is returned unchanged.
    pub async fn redact_note_version(
        &self,
        id: &NoteId,
        version: u64,
        by: &str,
    ) -> Result<Option<NoteVersionRow>> {
        let _writer = self.write_lock().await;
        let db = self.conn();
        let changed = db
            .execute(Statement::from_sql_and_values(
                db.get_database_backend(),
                "UPDATE note_versions SET content = NULL, redacted_at = ?, redacted_by = ?
                 WHERE note_id = ? AND version = ? AND content IS NOT NULL",
                [
                    crate::store::now_text().into(),
                    by.into(),
                    id.as_str().into(),
                    to_i64(version).into(),
                ],
            ))
            .await?
            .rows_affected();
        if changed > 0 {
            self.checkpoint_fully().await?;
        }
        self.note_version(id, version).await
    }
}

impl Store {
    /// `PRAGMA wal_checkpoint(TRUNCATE)`, retried while readers keep it from finishing (it
    /// waits for them up to the busy timeout each time), so the WAL really is emptied.
    async fn checkpoint_fully(&self) -> Result<()> {
        let db = self.conn();
        for attempt in 1..=3 {
            let row = db
                .query_one(Statement::from_string(
                    db.get_database_backend(),
                    "PRAGMA wal_checkpoint(TRUNCATE)",
                ))
                .await?;
            let busy = match row {
                Some(r) => r.try_get_by_index::<i64>(0)?,
                None => 0,
            };
            if busy == 0 {
                return Ok(());
            }
            tracing::debug!(
                attempt,
                "WAL checkpoint after a redaction was blocked by a reader"
            );
        }
        tracing::warn!(
            "the WAL could not be emptied after a redaction; the next checkpoint will do it"
        );
        Ok(())
    }
}

async fn append_in(txn: &DatabaseTransaction, c: &NewNoteVersion) -> Result<NoteVersionRow> {
    use sea_orm::{ColumnTrait, QueryFilter, QueryOrder};
    let now = crate::store::now_text();
    let deleted_at = (c.action == NoteAction::Delete).then(|| now.clone());
    let existing = notes::Entity::find_by_id(c.id.as_str().to_owned())
        .one(txn)
        .await?;
    let am = notes::ActiveModel {
        id: Set(c.id.as_str().to_owned()),
        scope: Set(scope_text(c.scope).to_owned()),
        project: Set(c.project.clone()),
        path: Set(c.path.clone()),
        title: Set(c.title.clone()),
        sha256: Set(c.sha256.clone()),
        bytes: Set(to_i64(c.bytes)),
        file_size: Set(c.file_size.map(to_i64)),
        file_mtime: Set(c.file_mtime),
        created_at: if existing.is_some() {
            NotSet
        } else {
            Set(now.clone())
        },
        updated_at: Set(now.clone()),
        deleted_at: Set(deleted_at),
    };
    if existing.is_some() {
        notes::Entity::update(am).exec(txn).await?;
    } else {
        notes::Entity::insert(am)
            .exec_without_returning(txn)
            .await?;
    }
    let last = note_versions::Entity::find()
        .filter(note_versions::Column::NoteId.eq(c.id.as_str()))
        .order_by_desc(note_versions::Column::Version)
        .one(txn)
        .await?
        .map_or(0, |v| v.version);
    let model = note_versions::ActiveModel {
        seq: NotSet,
        note_id: Set(c.id.as_str().to_owned()),
        version: Set(last + 1),
        sha256: Set(c.sha256.clone()),
        content: Set(c.content.clone()),
        author: Set(c.author.clone()),
        at: Set(now),
        redacted_at: Set(None),
        redacted_by: Set(None),
        action: Set(c.action.as_str().to_owned()),
        path: Set(Some(c.path.clone())),
    };
    let res = note_versions::Entity::insert(model).exec(txn).await?;
    let stored = note_versions::Entity::find_by_id(res.last_insert_id)
        .one(txn)
        .await?;
    match stored {
        Some(m) => version_from_model(m),
        None => Err(Error::Corrupt {
            table: "note_versions",
            column: "seq",
            reason: format!("version {} of {} vanished after insert", last + 1, c.id),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
    use super::*;

    fn change(id: &NoteId, path: &str, content: &str, action: NoteAction) -> NewNoteVersion {
        NewNoteVersion {
            id: id.clone(),
            scope: NoteScopeKind::Project,
            project: Some("github.com/acme/app".into()),
            path: path.into(),
            title: "T".into(),
            sha256: format!("sha-{content}"),
            bytes: content.len() as u64,
            file_size: Some(content.len() as u64),
            file_mtime: Some(1),
            action,
            content: Some(content.into()),
            author: "user".into(),
        }
    }

    #[tokio::test]
    async fn versions_append_redact_once_and_refuse_other_updates() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).await.unwrap();
        let id = NoteId::new("n_1");
        let v1 = store
            .append_note_version(&change(&id, "a.md", "one", NoteAction::Create))
            .await
            .unwrap();
        assert_eq!((v1.version, v1.action), (1, NoteAction::Create));
        store
            .append_note_version(&change(&id, "b.md", "one", NoteAction::Rename))
            .await
            .unwrap();
        let row = store.note(&id).await.unwrap().unwrap();
        assert_eq!((row.path.as_str(), row.versions), ("b.md", 2));
        let vs = store.note_versions(&id).await.unwrap();
        assert_eq!(vs.iter().map(|v| v.version).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(vs[0].path, "b.md");

        let red = store
            .redact_note_version(&id, 1, "user")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(red.content, None);
        assert_eq!(red.redacted_by.as_deref(), Some("user"));
        assert_eq!(red.author, "user");
        assert!(
            store
                .redact_note_version(&id, 9, "user")
                .await
                .unwrap()
                .is_none()
        );

        // The trigger still refuses anything but a redaction, the new columns included.
        for sql in [
            "UPDATE note_versions SET action = 'delete' WHERE version = 2",
            "UPDATE note_versions SET path = 'x.md' WHERE version = 2",
            "UPDATE note_versions SET content = NULL, redacted_at = 'x', redacted_by = 'y', path = 'z' WHERE version = 2",
            "DELETE FROM note_versions",
        ] {
            assert!(store.execute_raw(sql).await.is_err(), "{sql}");
        }
    }

    #[tokio::test]
    async fn migration_2_keeps_notes_written_by_schema_1() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let db = sea_orm::Database::connect(format!("sqlite://{}?mode=rwc", path.display()))
                .await
                .unwrap();
            db.execute_unprepared(crate::MIGRATIONS[0].2).await.unwrap();
            db.execute_unprepared(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
                     applied_at TEXT NOT NULL);
                 INSERT INTO schema_migrations VALUES (1, 'initial', '2026-01-01T00:00:00Z');
                 INSERT INTO notes VALUES ('n_old', 'user', NULL, 'a.md', 'A', 'abc',
                     '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL);
                 INSERT INTO note_versions (note_id, version, sha256, content, author, at)
                     VALUES ('n_old', 1, 'abc', '# A', 'user', '2026-01-01T00:00:00.000Z');",
            )
            .await
            .unwrap();
            db.close().await.unwrap();
        }
        let store = Store::open(&path).await.unwrap();
        let row = store.note(&NoteId::new("n_old")).await.unwrap().unwrap();
        assert_eq!((row.path.as_str(), row.versions, row.bytes), ("a.md", 1, 0));
        let v = store.note_version(&row.id, 1).await.unwrap().unwrap();
        assert_eq!(
            (v.action, v.content.as_deref()),
            (NoteAction::Edit, Some("# A"))
        );
        assert!(
            store
                .redact_note_version(&row.id, 1, "user")
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn a_path_is_unique_among_live_notes_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).await.unwrap();
        let a = NoteId::new("n_a");
        let b = NoteId::new("n_b");
        let mut user = change(&a, "x.md", "1", NoteAction::Create);
        user.scope = NoteScopeKind::User;
        user.project = None;
        store.append_note_version(&user).await.unwrap();
        let mut other = user.clone();
        other.id = b.clone();
        assert!(
            store.append_note_version(&other).await.is_err(),
            "two live user notes at one path"
        );
        let mut del = user.clone();
        del.action = NoteAction::Delete;
        store.append_note_version(&del).await.unwrap();
        store.append_note_version(&other).await.unwrap();
        let found = store
            .note_by_path(NoteScopeKind::User, None, "x.md")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.id, b, "the live note comes first");
        assert_eq!(store.live_notes().await.unwrap().len(), 1);
        assert_eq!(store.counts().await.unwrap().notes, 1);
        assert!(store.note_projects(true).await.unwrap().is_empty());
    }
}
