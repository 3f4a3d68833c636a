//! The injection log: every turn note asked for (shown or silent), each candidate's
//! probability and ranker inputs, and people's labels on shown entries. The note's entries
//! are Cairn's words, never the user's: capture keeps them out of the records (they are
//! marked), and this log is where they live.
use std::collections::HashMap;

use sea_orm::{ConnectionTrait, Statement, TransactionTrait};
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::store::{now_text, parse_ts, to_i64, to_u64, ts_text};
use crate::{Error, Result, Store};
use cairn_core::Timestamp;

/// The most characters of a prompt the log keeps.
pub const PROMPT_CHARS: usize = 300;
/// The most candidates a turn keeps in the log (shown ones always).
pub const CANDIDATES_KEPT: usize = 10;

/// One candidate of a logged turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectionCandidate {
    /// Its id (`r_…`, `i_…`, `note:…`).
    pub id: String,
    /// `record`, `item` or `note`.
    pub kind: String,
    /// An item's kind.
    pub item_kind: Option<String>,
    /// Its title.
    pub title: String,
    /// The ranker's probability.
    pub probability: f32,
    /// Whether the note showed it.
    pub shown: bool,
    /// The ranker's inputs, in the order of [`Injection::feature_names`] (none: missing).
    pub features: Vec<Option<f32>>,
}

/// One turn of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Injection {
    /// Its id (`t_…`).
    pub turn: String,
    /// When it was asked.
    pub at: Timestamp,
    /// The framework that asked.
    pub framework: String,
    /// The asking session.
    pub session_id: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// The user's message (scrubbed by the caller; cut to [`PROMPT_CHARS`] here).
    pub prompt: String,
    /// Whether a note was shown.
    pub shown: bool,
    /// The bar an entry had to reach.
    pub bar: f32,
    /// The judges that answered in time.
    pub judged_by: Vec<String>,
    /// Why it was silent.
    pub silent_because: Option<String>,
    /// Milliseconds the service took.
    pub latency_ms: u32,
    /// The names of the ranker's inputs.
    pub feature_names: Vec<String>,
    /// The best candidates, shown ones first (at most [`CANDIDATES_KEPT`] kept).
    pub entries: Vec<InjectionCandidate>,
}

/// A person's label on a shown entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteLabel {
    /// The turn.
    pub turn: String,
    /// The entry.
    pub entry_id: String,
    /// `useful` or `not_useful`.
    pub label: String,
    /// When it was given.
    pub at: Timestamp,
}

/// Totals over the log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoteTotals {
    /// Turns logged.
    pub turns: u64,
    /// Turns that showed a note.
    pub shown: u64,
    /// Entries labelled not useful.
    pub not_useful: u64,
    /// The latencies of the latest 1,000 turns, in milliseconds (ascending).
    pub latencies_ms: Vec<u32>,
}

/// How an earlier thing fared in notes: times shown, times marked not useful.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    /// Times a note showed it.
    pub shown: u32,
    /// Times someone marked it not useful.
    pub not_useful: u32,
}

fn row_injection(r: &sea_orm::QueryResult) -> Result<Injection> {
    let at: String = r.try_get("", "at")?;
    let judged: String = r.try_get("", "judged_by")?;
    let names: String = r.try_get("", "feature_names")?;
    let entries: String = r.try_get("", "entries")?;
    let json = |col: &'static str, e: serde_json::Error| corrupt("injections", col, e.to_string());
    Ok(Injection {
        turn: r.try_get("", "turn")?,
        at: parse_ts("injections", "at", &at)?,
        framework: r.try_get("", "framework")?,
        session_id: r.try_get("", "session_id")?,
        project: r.try_get("", "project")?,
        prompt: r.try_get("", "prompt")?,
        shown: r.try_get::<i64>("", "shown")? != 0,
        bar: r.try_get::<f64>("", "bar")? as f32,
        judged_by: serde_json::from_str(&judged).map_err(|e| json("judged_by", e))?,
        silent_because: r.try_get("", "silent_because")?,
        latency_ms: u32::try_from(r.try_get::<i64>("", "latency_ms")?).unwrap_or(u32::MAX),
        feature_names: serde_json::from_str(&names).map_err(|e| json("feature_names", e))?,
        entries: serde_json::from_str(&entries).map_err(|e| json("entries", e))?,
    })
}

const COLUMNS: &str = "turn, at, framework, session_id, project, prompt, shown, bar, judged_by, \
                       silent_because, latency_ms, feature_names, entries";

impl Store {
    /// Logs one turn: its candidates cut to the shown ones plus the best others (at most
    /// [`CANDIDATES_KEPT`]), the prompt to [`PROMPT_CHARS`] characters.
    pub async fn log_injection(&self, inj: &Injection) -> Result<()> {
        let mut entries: Vec<&InjectionCandidate> =
            inj.entries.iter().filter(|e| e.shown).collect();
        let rest = CANDIDATES_KEPT.saturating_sub(entries.len());
        entries.extend(inj.entries.iter().filter(|e| !e.shown).take(rest));
        let prompt: String = inj.prompt.chars().take(PROMPT_CHARS).collect();
        let db = self.conn();
        let backend = db.get_database_backend();
        let txn = db.begin().await?;
        txn.execute(Statement::from_sql_and_values(
            backend,
            format!(
                "INSERT INTO injections ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            [
                inj.turn.clone().into(),
                ts_text(&inj.at).into(),
                inj.framework.clone().into(),
                inj.session_id.clone().into(),
                inj.project.clone().into(),
                prompt.into(),
                i64::from(inj.shown).into(),
                f64::from(inj.bar).into(),
                json(&inj.judged_by).into(),
                inj.silent_because.clone().into(),
                i64::from(inj.latency_ms).into(),
                json(&inj.feature_names).into(),
                json(&entries).into(),
            ],
        ))
        .await?;
        for e in entries.iter().filter(|e| e.shown) {
            txn.execute(Statement::from_sql_and_values(
                backend,
                "INSERT OR IGNORE INTO injection_shown (turn, entry_id) VALUES (?, ?)",
                [inj.turn.clone().into(), e.id.clone().into()],
            ))
            .await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// The newest turns first (at most `limit`), only shown ones when asked.
    pub async fn injections(&self, limit: u64, shown_only: bool) -> Result<Vec<Injection>> {
        let db = self.conn();
        let filter = if shown_only { "WHERE shown = 1" } else { "" };
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                format!(
                    "SELECT {COLUMNS} FROM injections {filter} ORDER BY at DESC, rowid DESC LIMIT ?"
                ),
                [to_i64(limit).into()],
            ))
            .await?;
        rows.iter().map(row_injection).collect()
    }

    /// One turn by its id, or the newest turn for `last`.
    pub async fn injection(&self, turn: &str) -> Result<Option<Injection>> {
        if turn == "last" {
            return Ok(self.injections(1, false).await?.into_iter().next());
        }
        let db = self.conn();
        let row = db
            .query_one(Statement::from_sql_and_values(
                db.get_database_backend(),
                format!("SELECT {COLUMNS} FROM injections WHERE turn = ?"),
                [turn.into()],
            ))
            .await?;
        row.as_ref().map(row_injection).transpose()
    }

    /// The labels given on one turn's entries: entry id → label.
    pub async fn note_labels(&self, turn: &str) -> Result<HashMap<String, String>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT entry_id, label FROM note_labels WHERE turn = ?",
                [turn.into()],
            ))
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("", "entry_id")?, r.try_get("", "label")?)))
            .collect()
    }

    /// Every label, oldest first (training data for the ranker).
    pub async fn all_note_labels(&self) -> Result<Vec<NoteLabel>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_string(
                db.get_database_backend(),
                "SELECT turn, entry_id, label, at FROM note_labels ORDER BY at",
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let at: String = r.try_get("", "at")?;
                Ok(NoteLabel {
                    turn: r.try_get("", "turn")?,
                    entry_id: r.try_get("", "entry_id")?,
                    label: r.try_get("", "label")?,
                    at: parse_ts("note_labels", "at", &at)?,
                })
            })
            .collect()
    }

    /// Labels a shown entry of a logged turn (`useful`, `not_useful`), or removes its label
    /// (`None`). The turn must exist and have shown the entry.
    pub async fn set_note_label(
        &self,
        turn: &str,
        entry_id: &str,
        label: Option<&str>,
    ) -> Result<()> {
        if let Some(l) = label
            && l != "useful"
            && l != "not_useful"
        {
            return Err(Error::Invalid(format!(
                "unknown label {l:?}: use not_useful or useful"
            )));
        }
        let db = self.conn();
        let backend = db.get_database_backend();
        let shown = db
            .query_one(Statement::from_sql_and_values(
                backend,
                "SELECT 1 AS x FROM injection_shown WHERE turn = ? AND entry_id = ?",
                [turn.into(), entry_id.into()],
            ))
            .await?
            .is_some();
        if !shown {
            return Err(Error::NotFound(format!(
                "turn {turn} showed no entry {entry_id}"
            )));
        }
        match label {
            Some(l) => {
                db.execute(Statement::from_sql_and_values(
                    backend,
                    "INSERT INTO note_labels (turn, entry_id, label, at) VALUES (?, ?, ?, ?) \
                     ON CONFLICT (turn, entry_id) DO UPDATE SET label = excluded.label, at = excluded.at",
                    [turn.into(), entry_id.into(), l.into(), now_text().into()],
                ))
                .await?;
            }
            None => {
                db.execute(Statement::from_sql_and_values(
                    backend,
                    "DELETE FROM note_labels WHERE turn = ? AND entry_id = ?",
                    [turn.into(), entry_id.into()],
                ))
                .await?;
            }
        }
        Ok(())
    }

    /// Totals over the log.
    pub async fn note_totals(&self) -> Result<NoteTotals> {
        let db = self.conn();
        let backend = db.get_database_backend();
        let row = db
            .query_one(Statement::from_string(
                backend,
                "SELECT COUNT(*) AS turns, COALESCE(SUM(shown), 0) AS shown, \
                 (SELECT COUNT(*) FROM note_labels WHERE label = 'not_useful') AS not_useful \
                 FROM injections",
            ))
            .await?;
        let mut totals = NoteTotals::default();
        if let Some(r) = row {
            totals.turns = to_u64(r.try_get("", "turns")?);
            totals.shown = to_u64(r.try_get("", "shown")?);
            totals.not_useful = to_u64(r.try_get("", "not_useful")?);
        }
        let rows = db
            .query_all(Statement::from_string(
                backend,
                "SELECT latency_ms FROM injections ORDER BY at DESC LIMIT 1000",
            ))
            .await?;
        let mut lat = rows
            .iter()
            .map(|r| Ok(u32::try_from(r.try_get::<i64>("", "latency_ms")?).unwrap_or(u32::MAX)))
            .collect::<Result<Vec<u32>>>()?;
        lat.sort_unstable();
        totals.latencies_ms = lat;
        Ok(totals)
    }

    /// How often each of `ids` was shown and marked not useful.
    pub async fn note_uses(&self, ids: &[String]) -> Result<HashMap<String, Uses>> {
        let mut out: HashMap<String, Uses> = HashMap::new();
        if ids.is_empty() {
            return Ok(out);
        }
        let db = self.conn();
        let backend = db.get_database_backend();
        for part in ids.chunks(400) {
            let marks = vec!["?"; part.len()].join(",");
            let values: Vec<sea_orm::Value> = part.iter().map(|s| s.clone().into()).collect();
            let rows = db
                .query_all(Statement::from_sql_and_values(
                    backend,
                    format!(
                        "SELECT entry_id, COUNT(*) AS n FROM injection_shown \
                         WHERE entry_id IN ({marks}) GROUP BY entry_id"
                    ),
                    values.clone(),
                ))
                .await?;
            for r in &rows {
                let id: String = r.try_get("", "entry_id")?;
                out.entry(id).or_default().shown =
                    u32::try_from(r.try_get::<i64>("", "n")?).unwrap_or(u32::MAX);
            }
            let rows = db
                .query_all(Statement::from_sql_and_values(
                    backend,
                    format!(
                        "SELECT entry_id, COUNT(*) AS n FROM note_labels \
                         WHERE label = 'not_useful' AND entry_id IN ({marks}) GROUP BY entry_id"
                    ),
                    values,
                ))
                .await?;
            for r in &rows {
                let id: String = r.try_get("", "entry_id")?;
                out.entry(id).or_default().not_useful =
                    u32::try_from(r.try_get::<i64>("", "n")?).unwrap_or(u32::MAX);
            }
        }
        Ok(out)
    }
}

/// JSON text of plain data (which cannot fail to encode).
fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned())
}
