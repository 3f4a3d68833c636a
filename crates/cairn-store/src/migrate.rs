//! Forward-only migrations. Each is applied once, in its own transaction, and recorded in
//! `schema_migrations`. Never edit a shipped migration: add the next one.
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement, TransactionTrait};

use crate::{Error, Result};

/// Every migration: (version, name, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "initial", include_str!("../migrations/0001_initial.sql")),
    (2, "notes", include_str!("../migrations/0002_notes.sql")),
    (
        3,
        "forgetting",
        include_str!("../migrations/0003_forgetting.sql"),
    ),
    (4, "author", include_str!("../migrations/0004_author.sql")),
    (
        5,
        "llm_ledger",
        include_str!("../migrations/0005_llm_ledger.sql"),
    ),
    (6, "distill", include_str!("../migrations/0006_distill.sql")),
    (7, "sleep", include_str!("../migrations/0007_sleep.sql")),
    (
        8,
        "injections",
        include_str!("../migrations/0008_injections.sql"),
    ),
    (9, "review", include_str!("../migrations/0009_review.sql")),
    (
        10,
        "session_place",
        include_str!("../migrations/0010_session_place.sql"),
    ),
    (
        11,
        "note_outcomes",
        include_str!("../migrations/0011_note_outcomes.sql"),
    ),
    (
        12,
        "vectors_owner",
        include_str!("../migrations/0012_vectors_owner.sql"),
    ),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

pub(crate) async fn migrate(db: &DatabaseConnection, path: &std::path::Path) -> Result<i64> {
    db.execute_unprepared(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            name       TEXT NOT NULL,
            applied_at TEXT NOT NULL
        )",
    )
    .await?;
    let current = current_version(db).await?;
    if current > SCHEMA_VERSION {
        return Err(Error::TooNew {
            path: path.to_path_buf(),
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > current) {
        let txn = db.begin().await?;
        txn.execute_unprepared(sql).await?;
        txn.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            [
                (*version).into(),
                (*name).into(),
                crate::time::now_text().into(),
            ],
        ))
        .await?;
        txn.commit().await?;
        tracing::info!(version, name, "applied store migration");
    }
    current_version(db).await
}

async fn current_version(db: &DatabaseConnection) -> Result<i64> {
    let row = db
        .query_one(Statement::from_string(
            db.get_database_backend(),
            "SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations",
        ))
        .await?;
    Ok(match row {
        Some(r) => r.try_get::<i64>("", "v")?,
        None => 0,
    })
}
