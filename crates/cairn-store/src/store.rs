use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use cairn_core::api::Counts;
use cairn_core::{
    CaptureCursor, Chunk, Item, ItemEvent, ItemId, NewItemEvent, NewRecord, Outcome, Record,
    RecordId, Timestamp,
};
use sea_orm::sea_query::OnConflict;
use sea_orm::sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, SqlxSqliteConnector, Statement, TransactionTrait,
};
use serde::{Serialize, de::DeserializeOwned};

use crate::entity::{capture_cursors, chunks, item_events, journal, records, settings, vectors};
use crate::{Error, Result};

/// Tables that Clear empties (the logs and everything derived from them), in an order that
/// respects their references. Notes go only when asked.
const CLEAR_TABLES: &[&str] = &[
    "chunks",
    "records",
    "item_events",
    "relations",
    "vectors",
    "capture_cursors",
    "distilled",
    "item_scores",
    "profiles",
    "injections",
    "injection_shown",
    "note_labels",
    "note_outcomes",
    "review_actions",
    "hidden_records",
];
const CLEAR_NOTE_TABLES: &[&str] = &["note_versions", "notes"];

/// What [`Store::append_records`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendReport {
    /// New records.
    pub added: u64,
    /// Records stored again as a newer revision (the turn went on).
    pub revised: u64,
    /// Records already stored as they are.
    pub unchanged: u64,
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// Only this framework.
    pub framework: Option<String>,
    /// Only this project.
    pub project: Option<String>,
    /// At most this many (1 to 1000).
    pub limit: u32,
    /// Skip this many.
    pub offset: u32,
}

/// One framework's captured history in figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameworkSpan {
    /// The framework.
    pub framework: String,
    /// Sessions captured.
    pub sessions: u64,
    /// Requests captured.
    pub requests: u64,
    /// The first request's time.
    pub first_at: Timestamp,
    /// The last request's time.
    pub last_at: Timestamp,
}

/// One captured session, for the Conversations view.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The framework.
    pub framework: String,
    /// Its session id.
    pub session_id: String,
    /// Project identity.
    pub project: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// First request.
    pub first_at: Timestamp,
    /// Last activity.
    pub last_at: Timestamp,
    /// Number of requests.
    pub turns: u64,
    /// Requests that ended in an error.
    pub errors: u64,
    /// The first request's text.
    pub first_request: Option<String>,
}

/// Where a record sits in its session (see [`Store::session_places`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPlace {
    /// The framework.
    pub framework: String,
    /// The session id.
    pub session_id: String,
    /// When the request was made.
    pub started_at: Timestamp,
    /// The record just before it in the session.
    pub prev: Option<String>,
    /// The record just after it.
    pub next: Option<String>,
    /// Who made the request, when the source names them (a speaker, a person).
    pub author: Option<String>,
}

/// One session of a project's recent past (see [`Store::recent_sessions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecentSession {
    /// The framework.
    pub framework: String,
    /// The session id.
    pub session_id: String,
    /// Its requests seen (record ids), the latest first (by time, then by capture order).
    pub turns: Vec<String>,
}

/// An embedding kept with the logs, so the index is rebuilt with no model call.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    /// The record, item or note it embeds.
    pub owner: String,
    /// Which part of it.
    pub kind: cairn_core::VectorKind,
    /// Position among the owner's vectors of that kind.
    pub ord: u32,
    /// The model that made it.
    pub model: String,
    /// The vector.
    pub vector: Vec<f32>,
}

/// An entry of the store's own journal (clears, rebuilds). Never remembered content.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    /// Position.
    pub seq: i64,
    /// When.
    pub at: Timestamp,
    /// What (`clear`, …).
    pub kind: String,
    /// Details as JSON (counts, flags; no content).
    pub detail: serde_json::Value,
}

/// The store. Cheap to clone; all clones share one connection pool.
///
/// One writer at a time: every write (and every read-then-write transaction) holds the
/// store's writer lock, so two writers never race to upgrade a read transaction (SQLite's
/// `SQLITE_BUSY` on upgrade) and no write is lost or half-applied. Readers never wait for it
/// (WAL). Only one process writes: the service, or the CLI in direct mode under the same
/// instance lock.
#[derive(Debug, Clone)]
pub struct Store {
    db: DatabaseConnection,
    path: PathBuf,
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// A stored count (SQLite integers are signed) as a count; a negative one reads as 0.
pub(crate) fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A count as SQLite stores it (saturating).
pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) use crate::time::{now_text, ts_text};

/// Writes one event to the long-term log through `conn` (the store's connection or a
/// transaction); the caller holds the store's write lock, so every item event is written
/// after the latest state it read ([`Store::append_item_event`], a turn note's `used`
/// outcome).
pub(crate) async fn insert_item_event<C: ConnectionTrait>(
    conn: &C,
    event: &NewItemEvent,
) -> Result<ItemEvent> {
    let state = serde_json::to_string(&event.item).map_err(|e| Error::Encode {
        what: "item state",
        reason: e.to_string(),
    })?;
    let at = now_text();
    let am = item_events::ActiveModel {
        seq: NotSet,
        item_id: Set(event.item.id.as_str().to_owned()),
        kind: Set(event.kind.as_str().to_owned()),
        at: Set(at.clone()),
        state: Set(state),
        reason: Set(event.reason.clone()),
    };
    let res = item_events::Entity::insert(am).exec(conn).await?;
    Ok(ItemEvent {
        seq: res.last_insert_id,
        at: parse_ts("item_events", "at", &at)?,
        event: event.clone(),
    })
}

/// The vectors `model` made for `owners` (of `kind` when given), by owner, kind and
/// position: every read of owners' vectors. It seeks the owner's index (schema 12); ordered by
/// row id instead, SQLite would walk every vector of the model through the model's index.
pub(crate) fn owners_vectors(
    owners: &[String],
    model: &str,
    kind: Option<cairn_core::VectorKind>,
) -> sea_orm::Select<vectors::Entity> {
    let q = vectors::Entity::find()
        .filter(vectors::Column::OwnerId.is_in(owners.iter().cloned()))
        .filter(vectors::Column::Model.eq(model));
    match kind {
        Some(k) => q.filter(vectors::Column::Kind.eq(k.as_str())),
        None => q,
    }
    .order_by_asc(vectors::Column::OwnerId)
    .order_by_asc(vectors::Column::Kind)
    .order_by_asc(vectors::Column::Ord)
}

/// The current state of an item (its latest event), read through `conn`.
pub(crate) async fn latest_item_state<C: ConnectionTrait>(
    conn: &C,
    id: &ItemId,
) -> Result<Option<Item>> {
    let row = item_events::Entity::find()
        .filter(item_events::Column::ItemId.eq(id.as_str()))
        .order_by_desc(item_events::Column::Seq)
        .one(conn)
        .await?;
    row.map(|r| {
        serde_json::from_str::<Item>(&r.state).map_err(|e| Error::Corrupt {
            table: "item_events",
            column: "state",
            reason: e.to_string(),
        })
    })
    .transpose()
}

pub(crate) fn parse_ts(table: &'static str, column: &'static str, s: &str) -> Result<Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| Error::Corrupt {
            table,
            column,
            reason: format!("{s:?}: {e}"),
        })
}

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode, and applies migrations.
    pub async fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(|e| Error::Open {
                path: path.into(),
                reason: e.to_string(),
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            // Deleted content is overwritten, so Clear leaves nothing behind in free pages.
            .pragma("secure_delete", "ON");
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(0)
            .idle_timeout(Some(Duration::from_secs(60)))
            .connect_with(opts)
            .await
            .map_err(|e| Error::Open {
                path: path.into(),
                reason: e.to_string(),
            })?;
        let db = SqlxSqliteConnector::from_sqlx_sqlite_pool(pool);
        // No integrity check here: `PRAGMA quick_check` reads the whole file (seconds for a
        // year of history), so the service runs it in the background after start
        // ([`Store::quick_check`]); a damaged page read before then fails that read.
        crate::migrate::migrate(&db, path).await?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(Self {
            db,
            path: path.to_path_buf(),
            writer: std::sync::Arc::default(),
        })
    }

    /// SQLite's `PRAGMA quick_check` over the whole file: `None` when it passes, else what
    /// it found (its first lines). It reads every page, so it takes about a second per
    /// 500 MB; the service runs it in the background after start, never on the open path.
    pub async fn quick_check(&self) -> Result<Option<String>> {
        let rows = self
            .db
            .query_all(Statement::from_string(
                self.db.get_database_backend(),
                "PRAGMA quick_check(5)",
            ))
            .await?;
        let found: Vec<String> = rows
            .iter()
            .map(|r| r.try_get_by_index::<String>(0))
            .collect::<std::result::Result<_, _>>()?;
        Ok(match found.as_slice() {
            [ok] if ok == "ok" => None,
            [] => None,
            _ => Some(found.join("; ")),
        })
    }

    /// Takes the store's writer lock (see [`Store`]); every write method holds it.
    pub(crate) async fn write_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writer.lock().await
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection pool, for the queries kept in sibling modules (`notes.rs`).
    pub(crate) fn conn(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Closes the pool after a final WAL checkpoint.
    pub async fn close(self) -> Result<()> {
        self.checkpoint().await?;
        self.db.close().await?;
        Ok(())
    }

    /// Moves the WAL into the main file and truncates it.
    pub async fn checkpoint(&self) -> Result<()> {
        self.db
            .execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)")
            .await?;
        Ok(())
    }

    /// Runs one raw statement. For tests and diagnostics only: it goes through the same
    /// triggers as everything else, so it cannot break the append-only rule.
    #[doc(hidden)]
    pub async fn execute_raw(&self, sql: &str) -> Result<u64> {
        Ok(self.db.execute_unprepared(sql).await?.rows_affected())
    }

    /// How much is remembered (current records, chunks, current items, live notes).
    pub async fn counts(&self) -> Result<Counts> {
        let row = self
            .db
            .query_one(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT (SELECT COUNT(DISTINCT id) FROM records) AS records,
                        (SELECT COUNT(*) FROM chunks) AS chunks,
                        (SELECT COUNT(DISTINCT item_id) FROM item_events) AS items,
                        (SELECT COUNT(*) FROM notes WHERE deleted_at IS NULL) AS notes",
            ))
            .await?;
        let Some(row) = row else {
            return Ok(Counts::default());
        };
        let get = |c: &str| row.try_get::<i64>("", c).map(|v| v.max(0) as u64);
        Ok(Counts {
            records: get("records")?,
            chunks: get("chunks")?,
            items: get("items")?,
            notes: get("notes")?,
        })
    }

    /// Appends records and their chunks in one transaction. A record whose id is stored
    /// already is skipped when its text and outcome are unchanged, and stored as a newer
    /// revision (the old one stays) when they changed — a turn that went on after it was
    /// first read. So re-reading a source never duplicates.
    pub async fn append_records(&self, batch: &[(NewRecord, Vec<Chunk>)]) -> Result<AppendReport> {
        let _writer = self.write_lock().await;
        let txn = self.db.begin().await?;
        let captured_at = now_text();
        let mut report = AppendReport::default();
        for (rec, chunk_list) in batch {
            let latest = records::Entity::find()
                .filter(records::Column::Id.eq(rec.id.as_str()))
                .order_by_desc(records::Column::Rev)
                .one(&txn)
                .await?;
            let rev = match &latest {
                None => 0,
                Some(old) if old.text == rec.text && old.outcome == rec.outcome.as_str() => {
                    report.unchanged += 1;
                    continue;
                }
                Some(old) => old.rev + 1,
            };
            let content = serde_json::to_string(&rec.content).map_err(|e| Error::Encode {
                what: "record content",
                reason: e.to_string(),
            })?;
            let am = records::ActiveModel {
                seq: NotSet,
                id: Set(rec.id.as_str().to_owned()),
                rev: Set(rev),
                framework: Set(rec.framework.clone()),
                session_id: Set(rec.session_id.clone()),
                project: Set(rec.project.clone()),
                cwd: Set(rec.cwd.clone()),
                model: Set(rec.model.clone()),
                outcome: Set(rec.outcome.as_str().to_owned()),
                started_at: Set(ts_text(&rec.started_at)),
                ended_at: Set(rec.ended_at.as_ref().map(ts_text)),
                captured_at: Set(captured_at.clone()),
                request: Set(rec.request.clone()),
                author: Set(rec.author.clone()),
                text: Set(rec.text.clone()),
                content: Set(content),
                source: Set(rec.source.clone()),
            };
            records::Entity::insert(am)
                .exec_without_returning(&txn)
                .await?;
            if rev == 0 {
                report.added += 1;
            } else {
                report.revised += 1;
            }
            for c in chunk_list {
                let am = chunks::ActiveModel {
                    seq: NotSet,
                    record_id: Set(rec.id.as_str().to_owned()),
                    rev: Set(rev),
                    ord: Set(i64::from(c.ord)),
                    start: Set(i64::from(c.start)),
                    text: Set(c.text.clone()),
                };
                chunks::Entity::insert(am)
                    .exec_without_returning(&txn)
                    .await?;
            }
        }
        txn.commit().await?;
        Ok(report)
    }

    /// The current revision of every record of one session, oldest first.
    pub async fn session_records(&self, framework: &str, session_id: &str) -> Result<Vec<Record>> {
        let rows = records::Entity::find()
            .filter(records::Column::Framework.eq(framework))
            .filter(records::Column::SessionId.eq(session_id))
            .order_by_asc(records::Column::StartedAt)
            .order_by_asc(records::Column::Seq)
            .all(&self.db)
            .await?;
        let mut latest: std::collections::HashMap<String, records::Model> =
            std::collections::HashMap::new();
        let mut order = Vec::new();
        for r in rows {
            match latest.get(&r.id) {
                Some(old) if old.rev >= r.rev => {}
                Some(_) => {
                    latest.insert(r.id.clone(), r);
                }
                None => {
                    order.push(r.id.clone());
                    latest.insert(r.id.clone(), r);
                }
            }
        }
        order
            .into_iter()
            .filter_map(|id| latest.remove(&id))
            .map(record_from_model)
            .collect()
    }

    /// Sessions, newest activity first, with their first request and size.
    pub async fn sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionSummary>> {
        let mut sql = String::from(
            "SELECT framework, session_id, MAX(project) AS project, MAX(cwd) AS cwd,
                    MIN(started_at) AS first_at, MAX(COALESCE(ended_at, started_at)) AS last_at,
                    COUNT(DISTINCT id) AS turns,
                    (SELECT r2.request FROM records r2 WHERE r2.framework = r.framework
                       AND r2.session_id = r.session_id ORDER BY r2.started_at, r2.seq LIMIT 1) AS first_request,
                    SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END) AS errors
             FROM records r WHERE 1 = 1",
        );
        let mut values: Vec<sea_orm::Value> = Vec::new();
        if let Some(f) = &filter.framework {
            sql.push_str(" AND framework = ?");
            values.push(f.clone().into());
        }
        if let Some(p) = &filter.project {
            sql.push_str(" AND project = ?");
            values.push(p.clone().into());
        }
        sql.push_str(" GROUP BY framework, session_id ORDER BY last_at DESC LIMIT ? OFFSET ?");
        values.push(i64::from(filter.limit.clamp(1, 1000)).into());
        values.push(i64::from(filter.offset).into());
        let rows = self
            .db
            .query_all(Statement::from_sql_and_values(
                self.db.get_database_backend(),
                &sql,
                values,
            ))
            .await?;
        rows.iter()
            .map(|row| {
                Ok(SessionSummary {
                    framework: row.try_get("", "framework")?,
                    session_id: row.try_get("", "session_id")?,
                    project: row.try_get("", "project")?,
                    cwd: row.try_get("", "cwd")?,
                    first_at: parse_ts(
                        "records",
                        "started_at",
                        &row.try_get::<String>("", "first_at")?,
                    )?,
                    last_at: parse_ts(
                        "records",
                        "ended_at",
                        &row.try_get::<String>("", "last_at")?,
                    )?,
                    turns: row.try_get::<i64>("", "turns")?.max(0) as u64,
                    errors: row.try_get::<i64>("", "errors")?.max(0) as u64,
                    first_request: row.try_get("", "first_request")?,
                })
            })
            .collect()
    }

    /// A project's sessions with a request before `before`, the most recently active first,
    /// at most `sessions` of them, read from its latest `rows` requests (one walk back along
    /// the `records_project` index; a revision counts once). What the turn note reads to say
    /// how far back in the project's work a candidate lies.
    pub async fn recent_sessions(
        &self,
        project: &str,
        before: Timestamp,
        sessions: usize,
        rows: u32,
    ) -> Result<Vec<RecentSession>> {
        let found = self.walk_back(Some(project), before, None, rows).await?;
        let mut out: Vec<RecentSession> = Vec::new();
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (id, framework, session_id) in found {
            if !seen.insert(id.clone()) {
                continue;
            }
            match out
                .iter()
                .position(|s| s.session_id == session_id && s.framework == framework)
            {
                Some(i) => out[i].turns.push(id),
                None if out.len() < sessions => out.push(RecentSession {
                    framework,
                    session_id,
                    turns: vec![id],
                }),
                None => break,
            }
        }
        Ok(out)
    }

    /// The latest records before `before`, newest first (by time, then capture order), at
    /// most `limit` ids, a revision counted once: of `project` only when one is given (one walk
    /// back along the `records_project` index, else `records_started`), the session
    /// `exclude_session` left out. What was done last, which a request that says little
    /// about what it needs is most often about (the retriever's `recent` candidates).
    pub async fn latest_records(
        &self,
        project: Option<&str>,
        before: Timestamp,
        exclude_session: Option<&str>,
        limit: u32,
    ) -> Result<Vec<String>> {
        // Revisions share an id: read a few more rows than asked for.
        let rows = self
            .walk_back(project, before, exclude_session, limit.saturating_mul(2))
            .await?;
        let mut out: Vec<String> = Vec::new();
        for (id, _, _) in rows {
            if !out.contains(&id) {
                out.push(id);
            }
            if out.len() >= limit as usize {
                break;
            }
        }
        Ok(out)
    }

    /// The records before `before`, newest first (by time, then capture order), at most
    /// `rows` rows (a revision is a row of its own), as (id, framework, session): of `project`
    /// only when one is given (one walk back along the `records_project` index, else
    /// `records_started`), the session `exclude_session` left out.
    async fn walk_back(
        &self,
        project: Option<&str>,
        before: Timestamp,
        exclude_session: Option<&str>,
        rows: u32,
    ) -> Result<Vec<(String, String, String)>> {
        let mut values: Vec<sea_orm::Value> = Vec::new();
        let mut sql = String::from("SELECT id, framework, session_id FROM records ");
        match project {
            Some(p) => {
                sql.push_str("INDEXED BY records_project WHERE project = ? AND started_at < ?");
                values.push(p.to_owned().into());
            }
            None => sql.push_str("INDEXED BY records_started WHERE started_at < ?"),
        }
        values.push(ts_text(&before).into());
        if let Some(s) = exclude_session {
            sql.push_str(" AND session_id != ?");
            values.push(s.to_owned().into());
        }
        sql.push_str(" ORDER BY started_at DESC, seq DESC LIMIT ?");
        values.push(i64::from(rows).into());
        let found = self
            .db
            .query_all(Statement::from_sql_and_values(
                self.db.get_database_backend(),
                &sql,
                values,
            ))
            .await?;
        found
            .into_iter()
            .map(|row| {
                Ok((
                    row.try_get("", "id")?,
                    row.try_get("", "framework")?,
                    row.try_get("", "session_id")?,
                ))
            })
            .collect()
    }

    /// Per framework: its sessions, its requests, and the first and last request's time —
    /// what the first run shows of each agent's history.
    pub async fn framework_spans(&self) -> Result<Vec<FrameworkSpan>> {
        let rows = self
            .db
            .query_all(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT framework, COUNT(DISTINCT session_id) AS sessions, COUNT(DISTINCT id) AS requests,
                        MIN(started_at) AS first_at, MAX(started_at) AS last_at
                 FROM records GROUP BY framework ORDER BY framework",
            ))
            .await?;
        rows.iter()
            .map(|r| {
                Ok(FrameworkSpan {
                    framework: r.try_get("", "framework")?,
                    sessions: r.try_get::<i64>("", "sessions")?.max(0) as u64,
                    requests: r.try_get::<i64>("", "requests")?.max(0) as u64,
                    first_at: parse_ts(
                        "records",
                        "started_at",
                        &r.try_get::<String>("", "first_at")?,
                    )?,
                    last_at: parse_ts(
                        "records",
                        "started_at",
                        &r.try_get::<String>("", "last_at")?,
                    )?,
                })
            })
            .collect()
    }

    /// Every distinct (framework, project) pair with its session count, for filters.
    pub async fn facets(&self) -> Result<Vec<(String, Option<String>, u64)>> {
        let rows = self
            .db
            .query_all(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT framework, project, COUNT(DISTINCT session_id) AS n FROM records
                 GROUP BY framework, project ORDER BY framework, project",
            ))
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get("", "framework")?,
                    r.try_get("", "project")?,
                    r.try_get::<i64>("", "n")?.max(0) as u64,
                ))
            })
            .collect()
    }

    /// The distinct working directories of the sessions captured from every framework but
    /// `except` (each session's first record), sorted: the project folders Cairn knows, where
    /// capture looks for per-project stores such as Aider's. Reads the session index, not the
    /// records' text.
    pub async fn known_cwds(&self, except: &str) -> Result<Vec<String>> {
        let rows = self
            .db
            .query_all(Statement::from_sql_and_values(
                self.db.get_database_backend(),
                "SELECT DISTINCT r.cwd AS cwd FROM records r
                 JOIN (SELECT MIN(seq) AS seq FROM records WHERE framework <> ?
                       GROUP BY framework, session_id) f ON r.seq = f.seq
                 WHERE r.cwd IS NOT NULL AND r.cwd <> '' ORDER BY r.cwd",
                [except.into()],
            ))
            .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<String>("", "cwd")?))
            .collect()
    }

    /// Every current record with its chunks, in log order, a page at a time (index rebuilds).
    pub async fn records_page(
        &self,
        after_seq: i64,
        limit: u64,
    ) -> Result<Vec<(Record, Vec<Chunk>)>> {
        // Only current revisions: an older one is superseded by a later row anyway, and
        // its chunks are not the current ones.
        let rows = records::Entity::find()
            .filter(records::Column::Seq.gt(after_seq))
            .filter(sea_orm::sea_query::Expr::cust(
                "\"records\".\"rev\" = (SELECT MAX(r2.rev) FROM records r2 WHERE r2.id = \"records\".\"id\")",
            ))
            .order_by_asc(records::Column::Seq)
            .limit(limit)
            .all(&self.db)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let rev = r.rev;
            let rec = record_from_model(r)?;
            let chunks = self.chunks_of(&rec.record.id, Some(rev)).await?;
            out.push((rec, chunks));
        }
        Ok(out)
    }

    /// The saved cursor of one file or store.
    pub async fn cursor(&self, source: &str, path: &str) -> Result<Option<CaptureCursor>> {
        let row = capture_cursors::Entity::find_by_id((source.to_owned(), path.to_owned()))
            .one(&self.db)
            .await?;
        row.map(cursor_from_model).transpose()
    }

    /// Every saved cursor of a framework.
    pub async fn cursors(&self, source: &str) -> Result<Vec<CaptureCursor>> {
        let rows = capture_cursors::Entity::find()
            .filter(capture_cursors::Column::Source.eq(source))
            .all(&self.db)
            .await?;
        rows.into_iter().map(cursor_from_model).collect()
    }

    /// Stores embeddings (replacing any of the same owner, kind, position and model).
    pub async fn put_vectors(&self, batch: &[StoredVector]) -> Result<()> {
        let _writer = self.write_lock().await;
        let txn = self.db.begin().await?;
        insert_vectors(&txn, batch).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Every stored vector of one model, a page at a time (`after` is the last id seen).
    pub async fn vectors_page(
        &self,
        model: &str,
        after: i64,
        limit: u64,
    ) -> Result<Vec<(i64, StoredVector)>> {
        let rows = vectors::Entity::find()
            .filter(vectors::Column::Model.eq(model))
            .filter(vectors::Column::Id.gt(after))
            .order_by_asc(vectors::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await?;
        rows.into_iter()
            .map(|r| Ok((r.id, vector_from_model(r)?)))
            .collect()
    }

    /// The vectors of one owner made by one model.
    pub async fn vectors_of(&self, owner: &str, model: &str) -> Result<Vec<StoredVector>> {
        self.vectors_of_many(&[owner.to_owned()], model).await
    }

    /// The vectors of several owners made by one model (any kind), by owner, kind and
    /// position: for scoring records the index did not return (a candidate's neighbours).
    pub async fn vectors_of_many(
        &self,
        owners: &[String],
        model: &str,
    ) -> Result<Vec<StoredVector>> {
        let mut out = Vec::new();
        for part in owners.chunks(400) {
            let rows = owners_vectors(part, model, None).all(&self.db).await?;
            for r in rows {
                out.push(vector_from_model(r)?);
            }
        }
        Ok(out)
    }

    /// The vectors of one owner made by one model at or after `since` (the time its current
    /// revision was captured), in position order. Older ones belong to an earlier revision.
    pub async fn vectors_since(
        &self,
        owner: &str,
        model: &str,
        since: Timestamp,
    ) -> Result<Vec<StoredVector>> {
        let rows = vectors::Entity::find()
            .filter(vectors::Column::OwnerId.eq(owner))
            .filter(vectors::Column::Model.eq(model))
            .filter(vectors::Column::CreatedAt.gte(ts_text(&since)))
            .order_by_asc(vectors::Column::Ord)
            .all(&self.db)
            .await?;
        rows.into_iter().map(vector_from_model).collect()
    }

    /// Replaces every vector of `kind` that `model` made for each of `owners` with `batch`,
    /// in one transaction: a record's new revision leaves none of its old positions behind.
    pub async fn replace_vectors(
        &self,
        owners: &[String],
        model: &str,
        kind: cairn_core::VectorKind,
        batch: &[StoredVector],
    ) -> Result<()> {
        let _writer = self.write_lock().await;
        let txn = self.db.begin().await?;
        for owner in owners {
            vectors::Entity::delete_many()
                .filter(vectors::Column::OwnerId.eq(owner.as_str()))
                .filter(vectors::Column::Model.eq(model))
                .filter(vectors::Column::Kind.eq(kind.as_str()))
                .exec(&txn)
                .await?;
        }
        insert_vectors(&txn, batch).await?;
        txn.commit().await?;
        Ok(())
    }

    /// How many vectors of records one model made (items' vectors, kept in the same table,
    /// are not counted: the records' vector index holds only records).
    pub async fn count_vectors(&self, model: &str) -> Result<u64> {
        use sea_orm::PaginatorTrait;
        Ok(vectors::Entity::find()
            .filter(vectors::Column::Model.eq(model))
            .filter(vectors::Column::OwnerId.starts_with(RecordId::PREFIX))
            .count(&self.db)
            .await?)
    }

    /// Removes the vectors of every model but `keep` (after re-embedding with a new model).
    pub async fn drop_vectors_except(&self, keep: &str) -> Result<u64> {
        let _writer = self.write_lock().await;
        let res = vectors::Entity::delete_many()
            .filter(vectors::Column::Model.ne(keep))
            .exec(&self.db)
            .await?;
        Ok(res.rows_affected)
    }

    /// Saves a cursor (after the records it covers were appended).
    pub async fn save_cursor(&self, c: &CaptureCursor) -> Result<()> {
        let _writer = self.write_lock().await;
        let state = c
            .state
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| Error::Encode {
                what: "cursor state",
                reason: e.to_string(),
            })?;
        let am = capture_cursors::ActiveModel {
            source: Set(c.source.clone()),
            path: Set(c.path.clone()),
            file_key: Set(c.file_key.clone()),
            size: Set(i64::try_from(c.size).unwrap_or(i64::MAX)),
            offset: Set(i64::try_from(c.offset).unwrap_or(i64::MAX)),
            mtime: Set(c.mtime.clone()),
            high_water: Set(c.high_water.clone()),
            state: Set(state),
            updated_at: Set(now_text()),
        };
        capture_cursors::Entity::insert(am)
            .on_conflict(
                OnConflict::columns([
                    capture_cursors::Column::Source,
                    capture_cursors::Column::Path,
                ])
                .update_columns([
                    capture_cursors::Column::FileKey,
                    capture_cursors::Column::Size,
                    capture_cursors::Column::Offset,
                    capture_cursors::Column::Mtime,
                    capture_cursors::Column::HighWater,
                    capture_cursors::Column::State,
                    capture_cursors::Column::UpdatedAt,
                ])
                .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await?;
        Ok(())
    }

    /// The latest revision of one record.
    pub async fn record(&self, id: &RecordId) -> Result<Option<Record>> {
        let row = records::Entity::find()
            .filter(records::Column::Id.eq(id.as_str()))
            .order_by_desc(records::Column::Rev)
            .one(&self.db)
            .await?;
        row.map(record_from_model).transpose()
    }

    /// The chunks of a record's latest revision, in order.
    pub async fn chunks(&self, id: &RecordId) -> Result<Vec<Chunk>> {
        self.chunks_of(id, None).await
    }

    /// The chunks of one revision of a record (`None`: its current revision). A revision
    /// short enough to need none has none, whatever earlier revisions had.
    async fn chunks_of(&self, id: &RecordId, rev: Option<i64>) -> Result<Vec<Chunk>> {
        let rev = match rev {
            Some(r) => r,
            None => records::Entity::find()
                .filter(records::Column::Id.eq(id.as_str()))
                .order_by_desc(records::Column::Rev)
                .one(&self.db)
                .await?
                .map_or(0, |r| r.rev),
        };
        let rows = chunks::Entity::find()
            .filter(chunks::Column::RecordId.eq(id.as_str()))
            .filter(chunks::Column::Rev.eq(rev))
            .order_by_asc(chunks::Column::Ord)
            .all(&self.db)
            .await?;
        let last_rev = rev;
        Ok(rows
            .into_iter()
            .filter(|r| r.rev == last_rev)
            .map(|r| Chunk {
                record_id: RecordId::new(r.record_id),
                ord: u32::try_from(r.ord).unwrap_or(u32::MAX),
                start: u32::try_from(r.start).unwrap_or(u32::MAX),
                text: r.text,
            })
            .collect())
    }

    /// Appends an event to the long-term log.
    pub async fn append_item_event(&self, event: &NewItemEvent) -> Result<ItemEvent> {
        let _writer = self.write_lock().await;
        insert_item_event(&self.db, event).await
    }

    /// The current state of an item: its latest event.
    pub async fn item(&self, id: &ItemId) -> Result<Option<Item>> {
        latest_item_state(&self.db, id).await
    }

    /// Every event of an item, oldest first.
    pub async fn item_history(&self, id: &ItemId) -> Result<Vec<ItemEvent>> {
        let rows = item_events::Entity::find()
            .filter(item_events::Column::ItemId.eq(id.as_str()))
            .order_by_asc(item_events::Column::Seq)
            .all(&self.db)
            .await?;
        rows.into_iter()
            .map(|r| {
                let item: Item = serde_json::from_str(&r.state).map_err(|e| Error::Corrupt {
                    table: "item_events",
                    column: "state",
                    reason: e.to_string(),
                })?;
                let kind = serde_json::from_value(serde_json::Value::String(r.kind.clone()))
                    .map_err(|e| Error::Corrupt {
                        table: "item_events",
                        column: "kind",
                        reason: e.to_string(),
                    })?;
                Ok(ItemEvent {
                    seq: r.seq,
                    at: parse_ts("item_events", "at", &r.at)?,
                    event: NewItemEvent {
                        kind,
                        item,
                        reason: r.reason,
                    },
                })
            })
            .collect()
    }

    /// A run-time setting (the memory switch, preferences), if it was ever set.
    pub async fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<(T, Timestamp)>> {
        let Some(row) = settings::Entity::find_by_id(key.to_owned())
            .one(&self.db)
            .await?
        else {
            return Ok(None);
        };
        let value = serde_json::from_str(&row.value).map_err(|e| Error::Corrupt {
            table: "settings",
            column: "value",
            reason: format!("{key}: {e}"),
        })?;
        Ok(Some((
            value,
            parse_ts("settings", "updated_at", &row.updated_at)?,
        )))
    }

    /// Sets a run-time setting.
    pub async fn set_setting<T: Serialize>(&self, key: &str, value: &T) -> Result<Timestamp> {
        let _writer = self.write_lock().await;
        let now = chrono::Utc::now();
        let am = settings::ActiveModel {
            key: Set(key.to_owned()),
            value: Set(serde_json::to_string(value).map_err(|e| Error::Encode {
                what: "setting",
                reason: e.to_string(),
            })?),
            updated_at: Set(ts_text(&now)),
        };
        settings::Entity::insert(am)
            .on_conflict(
                OnConflict::column(settings::Column::Key)
                    .update_columns([settings::Column::Value, settings::Column::UpdatedAt])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await?;
        Ok(now)
    }

    /// Appends to the store's journal. `detail` must never hold remembered content.
    pub async fn journal(&self, kind: &str, detail: &serde_json::Value) -> Result<()> {
        let _writer = self.write_lock().await;
        let am = journal::ActiveModel {
            seq: NotSet,
            at: Set(now_text()),
            kind: Set(kind.to_owned()),
            detail: Set(detail.to_string()),
        };
        journal::Entity::insert(am)
            .exec_without_returning(&self.db)
            .await?;
        Ok(())
    }

    /// The latest journal entry of a kind.
    pub async fn last_journal(&self, kind: &str) -> Result<Option<JournalEntry>> {
        let row = journal::Entity::find()
            .filter(journal::Column::Kind.eq(kind))
            .order_by_desc(journal::Column::Seq)
            .one(&self.db)
            .await?;
        row.map(|r| {
            Ok(JournalEntry {
                seq: r.seq,
                at: parse_ts("journal", "at", &r.at)?,
                kind: r.kind,
                detail: serde_json::from_str(&r.detail).unwrap_or(serde_json::Value::Null),
            })
        })
        .transpose()
    }

    /// Wipes everything remembered: both logs, relations, vectors and capture cursors, and
    /// the notes' metadata and versions when `notes` is true. The removed records' ids (hashes,
    /// never content) go to the `forgotten` table and the clear's time to the journal, in the
    /// same transaction, so capture never brings them back (see [`Store::forgetting`]). Then
    /// vacuums and truncates the WAL so no remembered byte stays in the database files.
    /// Returns what was removed.
    pub async fn clear(&self, notes: bool) -> Result<Counts> {
        let _writer = self.write_lock().await;
        let before = self.counts().await?;
        let at = now_text();
        let removed = Counts {
            notes: if notes { before.notes } else { 0 },
            ..before
        };
        let detail = serde_json::json!({
            "records": removed.records, "chunks": removed.chunks,
            "items": removed.items, "notes": removed.notes, "notes_kept": !notes,
        });
        let backend = self.db.get_database_backend();
        let txn = self.db.begin().await?;
        txn.execute(Statement::from_sql_and_values(
            backend,
            "INSERT OR IGNORE INTO forgotten (id, at) SELECT DISTINCT id, ? FROM records",
            [at.clone().into()],
        ))
        .await?;
        txn.execute_unprepared("UPDATE log_guard SET clearing = 1 WHERE id = 1")
            .await?;
        for table in CLEAR_TABLES
            .iter()
            .chain(if notes { CLEAR_NOTE_TABLES } else { &[] })
        {
            txn.execute_unprepared(&format!("DELETE FROM {table}"))
                .await?;
        }
        txn.execute_unprepared("UPDATE log_guard SET clearing = 0 WHERE id = 1")
            .await?;
        txn.execute(Statement::from_sql_and_values(
            backend,
            "INSERT INTO journal (at, kind, detail) VALUES (?, 'clear', ?)",
            [at.into(), detail.to_string().into()],
        ))
        .await?;
        txn.commit().await?;
        self.db.execute_unprepared("VACUUM").await?;
        self.checkpoint().await?;
        Ok(removed)
    }

    /// Records that memory was switched on or off (the time only, never content). Capture
    /// skips turns that happened while it was off ([`Store::forgetting`]).
    pub async fn journal_memory(&self, enabled: bool) -> Result<()> {
        self.journal(MEMORY_JOURNAL, &serde_json::json!({ "enabled": enabled }))
            .await
    }

    /// Records that memory was paused (the time and the pause's end, never content): off
    /// from now until `until` (or until switched on, when `None`). Capture skips turns that
    /// happened during the pause ([`Store::forgetting`]), also after it ended by itself.
    pub async fn journal_pause(&self, until: Option<Timestamp>) -> Result<()> {
        let until = until.map(|t| ts_text(&t));
        self.journal(
            MEMORY_JOURNAL,
            &serde_json::json!({ "enabled": false, "paused": true, "until": until }),
        )
        .await
    }

    /// What capture must never remember again: turns before the last Clear, turns while
    /// memory was off or paused, and the ids of cleared records.
    pub async fn forgetting(&self) -> Result<cairn_core::Forgetting> {
        let mut f = cairn_core::Forgetting {
            cleared_at: self.last_journal("clear").await?.map(|e| e.at),
            ..Default::default()
        };
        let rows = journal::Entity::find()
            .filter(journal::Column::Kind.eq(MEMORY_JOURNAL))
            .order_by_asc(journal::Column::Seq)
            .all(&self.db)
            .await?;
        let mut entries = Vec::with_capacity(rows.len());
        for r in rows {
            let at = parse_ts("journal", "at", &r.at)?;
            let detail = serde_json::from_str::<serde_json::Value>(&r.detail).ok();
            let enabled = detail
                .as_ref()
                .and_then(|d| d.get("enabled").and_then(serde_json::Value::as_bool))
                .unwrap_or(true);
            let until = detail
                .as_ref()
                .and_then(|d| d.get("until").and_then(serde_json::Value::as_str))
                // An unreadable end keeps the period open: it skips more, never less.
                .and_then(|t| parse_ts("journal", "detail.until", t).ok());
            entries.push((at, enabled, until));
        }
        f.off = off_periods(&entries);
        // Periods that ended before the last Clear are covered by it already.
        if let Some(c) = f.cleared_at {
            f.off.retain(|(_, to)| to.is_none_or(|t| t > c));
        }
        let ids = self
            .db
            .query_all(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT id FROM forgotten",
            ))
            .await?;
        for row in ids {
            f.ids.insert(row.try_get::<String>("", "id")?);
        }
        Ok(f)
    }

    /// Where each of `ids` sits in its session: the records just before and after it (current
    /// revisions, by request time), its session and its time. Ids not in the store (cleared
    /// meanwhile) are absent from the answer. One query, for the retriever's neighbour and
    /// session scores.
    pub async fn session_places(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, SessionPlace>> {
        let mut out = std::collections::HashMap::new();
        // SQLite's default limit on bound values is 32,766; stay far below it.
        for part in ids.chunks(400) {
            // Each candidate's current revision, then its neighbours: the current records of
            // its session just before and after it by (time, id), each one seek of the
            // `records_place` index (never a pass over the session).
            let sql = format!(
                "WITH cand(id) AS (VALUES {values}),
                 cur AS (
                   SELECT r.id, r.framework, r.session_id, r.started_at, r.author FROM records r
                   JOIN cand c ON r.id = c.id
                   WHERE r.rev = (SELECT MAX(r2.rev) FROM records r2 WHERE r2.id = r.id)
                 )
                 SELECT c.id, c.framework, c.session_id, c.started_at, c.author,
                   (SELECT p.id FROM records p INDEXED BY records_place
                     WHERE p.framework = c.framework AND p.session_id = c.session_id
                       AND (p.started_at, p.id) < (c.started_at, c.id)
                       AND p.rev = (SELECT MAX(p2.rev) FROM records p2 WHERE p2.id = p.id)
                     ORDER BY p.started_at DESC, p.id DESC LIMIT 1) AS prev,
                   (SELECT n.id FROM records n INDEXED BY records_place
                     WHERE n.framework = c.framework AND n.session_id = c.session_id
                       AND (n.started_at, n.id) > (c.started_at, c.id)
                       AND n.rev = (SELECT MAX(n2.rev) FROM records n2 WHERE n2.id = n.id)
                     ORDER BY n.started_at ASC, n.id ASC LIMIT 1) AS next
                 FROM cur c",
                values = vec!["(?)"; part.len()].join(",")
            );
            let values: Vec<sea_orm::Value> = part.iter().map(|id| id.clone().into()).collect();
            let rows = self
                .db
                .query_all(Statement::from_sql_and_values(
                    self.db.get_database_backend(),
                    &sql,
                    values,
                ))
                .await?;
            for row in rows {
                let id: String = row.try_get("", "id")?;
                out.insert(
                    id,
                    SessionPlace {
                        framework: row.try_get("", "framework")?,
                        session_id: row.try_get("", "session_id")?,
                        started_at: parse_ts(
                            "records",
                            "started_at",
                            &row.try_get::<String>("", "started_at")?,
                        )?,
                        prev: row.try_get("", "prev")?,
                        next: row.try_get("", "next")?,
                        author: row.try_get("", "author")?,
                    },
                );
            }
        }
        Ok(out)
    }

    /// The current revision of each of `ids` with its chunks (absent ids are left out): what
    /// the retriever shows for its hits and what the re-ranker reads.
    pub async fn records_with_chunks(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, (Record, Vec<Chunk>)>> {
        let mut out = std::collections::HashMap::new();
        for part in ids.chunks(400) {
            let rows = records::Entity::find()
                .filter(records::Column::Id.is_in(part.iter().cloned()))
                .all(&self.db)
                .await?;
            let mut latest: std::collections::HashMap<String, records::Model> =
                std::collections::HashMap::new();
            for r in rows {
                match latest.get(&r.id) {
                    Some(old) if old.rev >= r.rev => {}
                    _ => {
                        latest.insert(r.id.clone(), r);
                    }
                }
            }
            let revs: std::collections::HashMap<String, i64> =
                latest.iter().map(|(id, r)| (id.clone(), r.rev)).collect();
            let mut chunks_by: std::collections::HashMap<String, Vec<Chunk>> =
                std::collections::HashMap::new();
            let chunk_rows = chunks::Entity::find()
                .filter(chunks::Column::RecordId.is_in(part.iter().cloned()))
                .order_by_asc(chunks::Column::Ord)
                .all(&self.db)
                .await?;
            for c in chunk_rows {
                if revs.get(&c.record_id) != Some(&c.rev) {
                    continue;
                }
                chunks_by
                    .entry(c.record_id.clone())
                    .or_default()
                    .push(Chunk {
                        record_id: RecordId::new(c.record_id),
                        ord: u32::try_from(c.ord).unwrap_or(u32::MAX),
                        start: u32::try_from(c.start).unwrap_or(u32::MAX),
                        text: c.text,
                    });
            }
            for (id, m) in latest {
                let chunks = chunks_by.remove(&id).unwrap_or_default();
                out.insert(id, (record_from_model(m)?, chunks));
            }
        }
        Ok(out)
    }
}

/// The journal kind of a memory switch.
const MEMORY_JOURNAL: &str = "memory";

/// Inserts embeddings inside a transaction (replacing any of the same owner, kind,
/// position and model).
async fn insert_vectors(txn: &sea_orm::DatabaseTransaction, batch: &[StoredVector]) -> Result<()> {
    let now = now_text();
    for v in batch {
        let data: Vec<u8> = v.vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        let am = vectors::ActiveModel {
            id: NotSet,
            owner_id: Set(v.owner.clone()),
            kind: Set(v.kind.as_str().to_owned()),
            ord: Set(i64::from(v.ord)),
            model: Set(v.model.clone()),
            dim: Set(v.vector.len() as i64),
            data: Set(data),
            created_at: Set(now.clone()),
        };
        vectors::Entity::insert(am)
            .on_conflict(
                OnConflict::columns([
                    vectors::Column::OwnerId,
                    vectors::Column::Kind,
                    vectors::Column::Ord,
                    vectors::Column::Model,
                ])
                .update_columns([
                    vectors::Column::Dim,
                    vectors::Column::Data,
                    vectors::Column::CreatedAt,
                ])
                .to_owned(),
            )
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

pub(crate) fn vector_from_model(r: vectors::Model) -> Result<StoredVector> {
    if !r.data.len().is_multiple_of(4) || r.data.len() / 4 != usize::try_from(r.dim).unwrap_or(0) {
        return Err(Error::Corrupt {
            table: "vectors",
            column: "data",
            reason: format!(
                "{} bytes for dimension {} (owner {})",
                r.data.len(),
                r.dim,
                r.owner_id
            ),
        });
    }
    let kind = match r.kind.as_str() {
        "summary" => cairn_core::VectorKind::Summary,
        "chunk" => cairn_core::VectorKind::Chunk,
        "cue" => cairn_core::VectorKind::Cue,
        other => {
            return Err(Error::Corrupt {
                table: "vectors",
                column: "kind",
                reason: other.to_owned(),
            });
        }
    };
    Ok(StoredVector {
        owner: r.owner_id,
        kind,
        ord: u32::try_from(r.ord).unwrap_or(0),
        model: r.model,
        vector: r
            .data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    })
}

fn cursor_from_model(m: capture_cursors::Model) -> Result<CaptureCursor> {
    Ok(CaptureCursor {
        source: m.source,
        path: m.path,
        file_key: m.file_key,
        size: u64::try_from(m.size).unwrap_or(0),
        offset: u64::try_from(m.offset).unwrap_or(0),
        mtime: m.mtime,
        high_water: m.high_water,
        state: m
            .state
            .map(|s| serde_json::from_str(&s))
            .transpose()
            .map_err(|e| Error::Corrupt {
                table: "capture_cursors",
                column: "state",
                reason: e.to_string(),
            })?,
    })
}

pub(crate) fn record_from_model(m: records::Model) -> Result<Record> {
    Ok(Record {
        seq: m.seq,
        captured_at: parse_ts("records", "captured_at", &m.captured_at)?,
        record: NewRecord {
            id: RecordId::new(m.id),
            framework: m.framework,
            session_id: m.session_id,
            project: m.project,
            cwd: m.cwd,
            model: m.model,
            outcome: Outcome::parse(&m.outcome).ok_or_else(|| Error::Corrupt {
                table: "records",
                column: "outcome",
                reason: m.outcome.clone(),
            })?,
            started_at: parse_ts("records", "started_at", &m.started_at)?,
            ended_at: m
                .ended_at
                .as_deref()
                .map(|s| parse_ts("records", "ended_at", s))
                .transpose()?,
            request: m.request,
            author: m.author,
            text: m.text,
            content: serde_json::from_str(&m.content).map_err(|e| Error::Corrupt {
                table: "records",
                column: "content",
                reason: e.to_string(),
            })?,
            source: m.source,
        },
    })
}

/// The periods memory was off or paused, `[from, to)`, from the memory journal's entries in
/// order: (when, switched on, when a pause ends by itself). A pause ends at its end or when
/// memory is switched on, whichever comes first; pausing again or switching off while
/// paused moves the end of the period in progress. The last period's `to` is `None` while
/// it lasts (a pause whose end has passed is closed at that end).
fn off_periods(
    entries: &[(Timestamp, bool, Option<Timestamp>)],
) -> Vec<(Timestamp, Option<Timestamp>)> {
    let mut out = Vec::new();
    // The period in progress: since when, and when a pause ends it by itself.
    let mut off: Option<(Timestamp, Option<Timestamp>)> = None;
    for &(at, enabled, until) in entries {
        // A pause that ended by itself before this entry closed its period then.
        if let Some((from, Some(end))) = off
            && end <= at
        {
            out.push((from, Some(end)));
            off = None;
        }
        off = match (enabled, off) {
            (false, None) => Some((at, until)),
            (false, Some((from, _))) => Some((from, until)),
            (true, Some((from, end))) => {
                out.push((from, Some(end.map_or(at, |e| e.min(at)))));
                None
            }
            (true, None) => None,
        };
    }
    if let Some((from, end)) = off {
        // A pause's end closes it even when nothing was journaled since (its end is
        // computed from the stored time, not from a process that was there at that instant).
        out.push((from, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_of_owners_vectors_seek_the_owners_index() {
        use sea_orm::QueryTrait;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
        let owners = vec!["r_1".to_owned(), "r_2".to_owned()];
        for kind in [None, Some(cairn_core::VectorKind::Summary)] {
            let sql = owners_vectors(&owners, "m", kind)
                .build(sea_orm::DbBackend::Sqlite)
                .to_string();
            let plan: Vec<String> = store
                .db
                .query_all(Statement::from_string(
                    sea_orm::DbBackend::Sqlite,
                    format!("EXPLAIN QUERY PLAN {sql}"),
                ))
                .await
                .unwrap()
                .iter()
                .map(|r| r.try_get::<String>("", "detail").unwrap())
                .collect();
            let plan = plan.join("; ");
            assert!(
                plan.contains("vectors_owner") || plan.contains("sqlite_autoindex_vectors_1"),
                "an owner read must seek the owner: {plan}"
            );
            assert!(!plan.contains("vectors_model"), "{plan}");
        }
    }

    fn t(min: i64) -> Timestamp {
        chrono::DateTime::from_timestamp(1_780_000_000 + min * 60, 0).unwrap_or_default()
    }

    #[test]
    fn pause_periods_end_by_themselves_or_when_resumed() {
        // Off then on: one closed period.
        assert_eq!(
            off_periods(&[(t(0), false, None), (t(10), true, None)]),
            vec![(t(0), Some(t(10)))]
        );
        // A pause that ended by itself, with nothing journaled since.
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(15)))]),
            vec![(t(0), Some(t(15)))]
        );
        // Resumed early: ends at the resume.
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(60))), (t(5), true, None)]),
            vec![(t(0), Some(t(5)))]
        );
        // Its end passed, then the "on" settling it was journaled later: ends at its end.
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(15))), (t(40), true, None)]),
            vec![(t(0), Some(t(15)))]
        );
        // Expired pause, later switched off: two periods, the gap between them captured.
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(15))), (t(30), false, None)]),
            vec![(t(0), Some(t(15))), (t(30), None)]
        );
        // Paused again while paused: the end moves; switched off while paused: open.
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(15))), (t(10), false, Some(t(70)))]),
            vec![(t(0), Some(t(70)))]
        );
        assert_eq!(
            off_periods(&[(t(0), false, Some(t(15))), (t(10), false, None)]),
            vec![(t(0), None)]
        );
        // Paused until resumed: open until switched on.
        assert_eq!(
            off_periods(&[
                (t(0), false, None),
                (t(100), true, None),
                (t(101), true, None)
            ]),
            vec![(t(0), Some(t(100)))]
        );
    }
}
