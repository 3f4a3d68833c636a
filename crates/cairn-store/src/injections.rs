//! The injection log: every turn note asked for (shown or silent), each candidate's
//! probability and ranker inputs, people's labels on shown entries, and what became of each
//! shown entry once the agent's answer was captured (`used` or `ignored`: its outcome). The
//! note's entries are Cairn's words, never the user's: capture keeps them out of the records
//! (they are marked), and this log is where they live.
use std::collections::HashMap;

use sea_orm::{ConnectionTrait, Statement, TransactionTrait};
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::store::{
    insert_item_event, latest_item_state, now_text, parse_ts, to_i64, to_u64, ts_text,
};
use crate::{Error, Result, Store};
use cairn_core::{ItemEventKind, ItemId, NewItemEvent, Timestamp};

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
    /// For a shown entry, what the note said of it (its title and text as the agent read
    /// them), kept with the showing for telling whether the answer used it. Not part of the
    /// logged candidates: read back through [`Store::undecided_notes`].
    #[serde(skip)]
    pub text: Option<String>,
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

/// How an earlier thing fared in notes, one count per showing (a turn that showed it). A
/// person's label on a showing wins over its automatic outcome, so each showing counts in
/// at most one of `used`, `not_useful` and `ignored`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    /// Times a note showed it.
    pub shown: u32,
    /// Showings that were used: a person marked it `useful`, or, unlabelled, the agent's
    /// answer used it (outcome `used`).
    pub used: u32,
    /// Showings a person marked not useful.
    pub not_useful: u32,
    /// Unlabelled showings whose answer did not use it (outcome `ignored`).
    pub ignored: u32,
}

/// What became of one shown entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteOutcome {
    /// [`OUTCOME_USED`] or [`OUTCOME_IGNORED`].
    pub outcome: String,
    /// Why, in a few words (the identifiers the answer reused, or that the agent opened it).
    pub because: Option<String>,
    /// When it was decided.
    pub at: Timestamp,
}

/// The outcome of a shown entry the agent's answer used.
pub const OUTCOME_USED: &str = "used";
/// The outcome of a shown entry the agent's finished answer did not use.
pub const OUTCOME_IGNORED: &str = "ignored";

/// A shown entry whose outcome is not decided yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndecidedEntry {
    /// Its id.
    pub id: String,
    /// What the note said of it (none: logged before the text was kept).
    pub text: Option<String>,
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
                "INSERT OR IGNORE INTO injection_shown (turn, entry_id, text) VALUES (?, ?, ?)",
                [
                    inj.turn.clone().into(),
                    e.id.clone().into(),
                    e.text.clone().into(),
                ],
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

    /// How each of `ids` fared in notes: times shown, used, marked not useful, ignored
    /// ([`Uses`]; a person's label on a showing wins over its outcome).
    pub async fn note_uses(&self, ids: &[String]) -> Result<HashMap<String, Uses>> {
        let mut out: HashMap<String, Uses> = HashMap::new();
        if ids.is_empty() {
            return Ok(out);
        }
        let db = self.conn();
        let backend = db.get_database_backend();
        let count = |r: &sea_orm::QueryResult, col: &str| -> Result<u32> {
            Ok(u32::try_from(r.try_get::<i64>("", col)?).unwrap_or(u32::MAX))
        };
        for part in ids.chunks(400) {
            let marks = vec!["?"; part.len()].join(",");
            let values: Vec<sea_orm::Value> = part.iter().map(|s| s.clone().into()).collect();
            let rows = db
                .query_all(Statement::from_sql_and_values(
                    backend,
                    format!(
                        "SELECT s.entry_id, COUNT(*) AS shown, \
                           COALESCE(SUM(l.label = 'useful' \
                             OR (l.label IS NULL AND o.outcome = 'used')), 0) AS used, \
                           COALESCE(SUM(l.label = 'not_useful'), 0) AS not_useful, \
                           COALESCE(SUM(l.label IS NULL AND o.outcome = 'ignored'), 0) AS ignored \
                         FROM injection_shown s \
                         LEFT JOIN note_labels l ON l.turn = s.turn AND l.entry_id = s.entry_id \
                         LEFT JOIN note_outcomes o ON o.turn = s.turn AND o.entry_id = s.entry_id \
                         WHERE s.entry_id IN ({marks}) GROUP BY s.entry_id"
                    ),
                    values,
                ))
                .await?;
            for r in &rows {
                let id: String = r.try_get("", "entry_id")?;
                out.insert(
                    id,
                    Uses {
                        shown: count(r, "shown")?,
                        used: count(r, "used")?,
                        not_useful: count(r, "not_useful")?,
                        ignored: count(r, "ignored")?,
                    },
                );
            }
        }
        Ok(out)
    }

    /// Records what became of an entry a turn showed: [`OUTCOME_USED`] or
    /// [`OUTCOME_IGNORED`], once — a later call for the same turn and entry changes nothing
    /// and returns false. When an item's showing is recorded used (and no person marked it
    /// not useful), the item gets a `used` event in the long-term log, carrying its latest
    /// state, in the same transaction: what sleep's priority and archiving count. The turn
    /// must exist and have shown the entry.
    pub async fn record_note_outcome(
        &self,
        turn: &str,
        entry_id: &str,
        outcome: &str,
        because: Option<&str>,
    ) -> Result<bool> {
        if outcome != OUTCOME_USED && outcome != OUTCOME_IGNORED {
            return Err(Error::Invalid(format!(
                "unknown outcome {outcome:?}: use used or ignored"
            )));
        }
        // Item events are written under the store's write lock (the latest state is read
        // and appended with nothing in between).
        let _writer = self.write_lock().await;
        let db = self.conn();
        let backend = db.get_database_backend();
        let txn = db.begin().await?;
        let shown = txn
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
        let inserted = txn
            .execute(Statement::from_sql_and_values(
                backend,
                "INSERT OR IGNORE INTO note_outcomes (turn, entry_id, outcome, because, at) \
                 VALUES (?, ?, ?, ?, ?)",
                [
                    turn.into(),
                    entry_id.into(),
                    outcome.into(),
                    because.map(str::to_owned).into(),
                    now_text().into(),
                ],
            ))
            .await?
            .rows_affected()
            == 1;
        if inserted && outcome == OUTCOME_USED && entry_id.starts_with(ItemId::PREFIX) {
            let refused = txn
                .query_one(Statement::from_sql_and_values(
                    backend,
                    "SELECT 1 AS x FROM note_labels \
                     WHERE turn = ? AND entry_id = ? AND label = 'not_useful'",
                    [turn.into(), entry_id.into()],
                ))
                .await?
                .is_some();
            if !refused && let Some(item) = latest_item_state(&txn, &ItemId::new(entry_id)).await? {
                let reason = match because {
                    Some(b) => format!("turn note {turn}: {b}"),
                    None => format!("turn note {turn}"),
                };
                insert_item_event(
                    &txn,
                    &NewItemEvent {
                        kind: ItemEventKind::Used,
                        item,
                        reason: Some(reason),
                    },
                )
                .await?;
            }
        }
        txn.commit().await?;
        Ok(inserted)
    }

    /// What became of one turn's shown entries so far: entry id → outcome.
    pub async fn note_outcomes(&self, turn: &str) -> Result<HashMap<String, NoteOutcome>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT entry_id, outcome, because, at FROM note_outcomes WHERE turn = ?",
                [turn.into()],
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let at: String = r.try_get("", "at")?;
                Ok((
                    r.try_get("", "entry_id")?,
                    NoteOutcome {
                        outcome: r.try_get("", "outcome")?,
                        because: r.try_get("", "because")?,
                        at: parse_ts("note_outcomes", "at", &at)?,
                    },
                ))
            })
            .collect()
    }

    /// The turns asked at `since` or later, in a session, that showed a note and have a
    /// shown entry with no outcome yet, newest first (at most `limit`: turns whose answer
    /// never comes cannot hold back the latest), each with those entries. A turn whose answer
    /// never comes stays here until it is older than `since`.
    pub async fn undecided_notes(
        &self,
        since: Timestamp,
        limit: u64,
    ) -> Result<Vec<(Injection, Vec<UndecidedEntry>)>> {
        let db = self.conn();
        let backend = db.get_database_backend();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                backend,
                format!(
                    "SELECT {COLUMNS} FROM injections i \
                     WHERE i.shown = 1 AND i.session_id IS NOT NULL AND i.at >= ? \
                       AND EXISTS (SELECT 1 FROM injection_shown s \
                         LEFT JOIN note_outcomes o ON o.turn = s.turn AND o.entry_id = s.entry_id \
                         WHERE s.turn = i.turn AND o.turn IS NULL) \
                     ORDER BY i.at DESC, i.rowid DESC LIMIT ?"
                ),
                [ts_text(&since).into(), to_i64(limit).into()],
            ))
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let inj = row_injection(r)?;
            let shown = db
                .query_all(Statement::from_sql_and_values(
                    backend,
                    "SELECT s.entry_id, s.text FROM injection_shown s \
                     LEFT JOIN note_outcomes o ON o.turn = s.turn AND o.entry_id = s.entry_id \
                     WHERE s.turn = ? AND o.turn IS NULL ORDER BY s.rowid",
                    [inj.turn.clone().into()],
                ))
                .await?;
            let entries = shown
                .iter()
                .map(|r| {
                    Ok(UndecidedEntry {
                        id: r.try_get("", "entry_id")?,
                        text: r.try_get("", "text")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            out.push((inj, entries));
        }
        Ok(out)
    }
}

/// JSON text of plain data (which cannot fail to encode).
fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_core::{Certainty, Item, ItemEvent, ItemKind};

    async fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
        (dir, store)
    }

    fn candidate(id: &str, shown: bool) -> InjectionCandidate {
        InjectionCandidate {
            id: id.to_owned(),
            kind: if id.starts_with("i_") {
                "item"
            } else {
                "record"
            }
            .to_owned(),
            item_kind: None,
            title: format!("title of {id}"),
            probability: 0.5,
            shown,
            features: Vec::new(),
            text: shown.then(|| format!("what the note said of {id}")),
        }
    }

    fn turn(turn: &str, minutes_ago: i64, session: Option<&str>, ids: &[&str]) -> Injection {
        Injection {
            turn: turn.to_owned(),
            at: chrono::Utc::now() - chrono::Duration::minutes(minutes_ago),
            framework: "claude-code".to_owned(),
            session_id: session.map(str::to_owned),
            project: None,
            prompt: "which port?".to_owned(),
            shown: !ids.is_empty(),
            bar: 0.4,
            judged_by: Vec::new(),
            silent_because: None,
            latency_ms: 3,
            feature_names: Vec::new(),
            entries: ids
                .iter()
                .map(|id| candidate(id, true))
                .chain([candidate("r_never_shown", false)])
                .collect(),
        }
    }

    fn item(id: &str) -> Item {
        Item {
            id: ItemId::new(id),
            kind: ItemKind::Fact,
            title: "Staging port".into(),
            summary: "Staging Postgres listens on 6543.".into(),
            body: String::new(),
            cues: Vec::new(),
            concepts: Vec::new(),
            importance: 3,
            certainty: Certainty::Stated,
            project: None,
            sources: Vec::new(),
            happened_at: None,
            said_at: None,
            ended_at: None,
            superseded_by: None,
            archived: false,
            provenance: None,
        }
    }

    #[tokio::test]
    async fn outcomes_are_recorded_once_and_a_used_item_gets_one_used_event() {
        let (_dir, store) = open().await;
        let it = item("i_port");
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: it.clone(),
                reason: None,
            })
            .await
            .unwrap();
        let stamp = store.item_log_stamp().await.unwrap();
        store
            .log_injection(&turn("t_1", 5, Some("s1"), &["r_a", "i_port"]))
            .await
            .unwrap();
        store
            .log_injection(&turn("t_2", 4, None, &["r_a"]))
            .await
            .unwrap();

        // Undecided: only turns in a session, with what the note said of each entry.
        let since = chrono::Utc::now() - chrono::Duration::days(1);
        let pending = store.undecided_notes(since, 10).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].0.turn, "t_1");
        let texts: Vec<(&str, Option<&str>)> = pending[0]
            .1
            .iter()
            .map(|e| (e.id.as_str(), e.text.as_deref()))
            .collect();
        assert_eq!(
            texts,
            vec![
                ("r_a", Some("what the note said of r_a")),
                ("i_port", Some("what the note said of i_port")),
            ]
        );

        assert!(
            store
                .record_note_outcome("t_1", "i_port", OUTCOME_USED, Some("reused port:6543"))
                .await
                .unwrap()
        );
        // Once: a second decision changes nothing and appends no second event.
        assert!(
            !store
                .record_note_outcome("t_1", "i_port", OUTCOME_IGNORED, None)
                .await
                .unwrap()
        );
        assert!(
            !store
                .record_note_outcome("t_1", "i_port", OUTCOME_USED, None)
                .await
                .unwrap()
        );
        let history = store.item_history(&it.id).await.unwrap();
        let used: Vec<&ItemEvent> = history
            .iter()
            .filter(|e| e.event.kind == ItemEventKind::Used)
            .collect();
        assert_eq!(used.len(), 1, "{history:?}");
        assert_eq!(
            used[0].event.item, it,
            "the used event carries the latest state"
        );
        assert!(
            used[0]
                .event
                .reason
                .as_deref()
                .unwrap()
                .contains("t_1: reused port:6543")
        );
        assert_eq!(store.item_activity().await.unwrap()[0].used, 1);
        // A use changes no item: the items' search index is not rebuilt for it.
        assert_eq!(store.item_log_stamp().await.unwrap(), stamp);

        // Refused: an unknown outcome, an entry the turn did not show.
        assert!(matches!(
            store.record_note_outcome("t_1", "r_a", "maybe", None).await,
            Err(Error::Invalid(_))
        ));
        assert!(matches!(
            store
                .record_note_outcome("t_1", "r_never_shown", OUTCOME_USED, None)
                .await,
            Err(Error::NotFound(_))
        ));

        let pending = store.undecided_notes(since, 10).await.unwrap();
        assert_eq!(pending[0].1.len(), 1, "r_a is still undecided");
        store
            .record_note_outcome("t_1", "r_a", OUTCOME_IGNORED, None)
            .await
            .unwrap();
        assert!(store.undecided_notes(since, 10).await.unwrap().is_empty());
        let outcomes = store.note_outcomes("t_1").await.unwrap();
        assert_eq!(outcomes["r_a"].outcome, OUTCOME_IGNORED);
        assert_eq!(outcomes["i_port"].outcome, OUTCOME_USED);
        assert_eq!(
            outcomes["i_port"].because.as_deref(),
            Some("reused port:6543")
        );
        // Too old to wait for: not undecided any more.
        let later = chrono::Utc::now() + chrono::Duration::minutes(1);
        store
            .log_injection(&turn("t_3", 1, Some("s1"), &["r_b"]))
            .await
            .unwrap();
        assert!(store.undecided_notes(later, 10).await.unwrap().is_empty());
        assert_eq!(store.undecided_notes(since, 10).await.unwrap().len(), 1);

        // Clear empties the outcomes with the log.
        store.clear(false).await.unwrap();
        assert!(store.note_outcomes("t_1").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn uses_count_showings_used_ignored_and_marked_and_a_label_wins() {
        let (_dir, store) = open().await;
        for (t, ago) in [("t_1", 9), ("t_2", 8), ("t_3", 7), ("t_4", 6), ("t_5", 5)] {
            store
                .log_injection(&turn(t, ago, Some("s"), &["r_x", "r_y"]))
                .await
                .unwrap();
        }
        let used = |t: &'static str, id: &'static str| {
            let store = &store;
            async move {
                store
                    .record_note_outcome(t, id, OUTCOME_USED, None)
                    .await
                    .unwrap();
            }
        };
        let ignored = |t: &'static str, id: &'static str| {
            let store = &store;
            async move {
                store
                    .record_note_outcome(t, id, OUTCOME_IGNORED, None)
                    .await
                    .unwrap();
            }
        };
        // r_x: used twice, ignored once, one showing undecided but marked useful, one
        // used showing a person marked not useful (the label wins).
        used("t_1", "r_x").await;
        used("t_2", "r_x").await;
        ignored("t_3", "r_x").await;
        store
            .set_note_label("t_4", "r_x", Some("useful"))
            .await
            .unwrap();
        used("t_5", "r_x").await;
        store
            .set_note_label("t_5", "r_x", Some("not_useful"))
            .await
            .unwrap();
        // r_y: ignored twice, one of them marked useful by a person; the rest undecided.
        ignored("t_1", "r_y").await;
        ignored("t_2", "r_y").await;
        store
            .set_note_label("t_2", "r_y", Some("useful"))
            .await
            .unwrap();
        let uses = store
            .note_uses(&["r_x".to_owned(), "r_y".to_owned(), "r_z".to_owned()])
            .await
            .unwrap();
        assert_eq!(
            uses["r_x"],
            Uses {
                shown: 5,
                used: 3,
                not_useful: 1,
                ignored: 1
            }
        );
        assert_eq!(
            uses["r_y"],
            Uses {
                shown: 5,
                used: 1,
                not_useful: 0,
                ignored: 1
            }
        );
        assert!(!uses.contains_key("r_z"), "never shown");
    }
}
