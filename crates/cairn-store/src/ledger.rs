//! The ledger of model calls: provider, model, purpose, tokens, cost, duration and outcome of
//! every call, never its content. The daily budget and the app's cost meter read it.
use sea_orm::{ConnectionTrait, Statement};
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::store::{parse_ts, to_i64, to_u64, ts_text};
use crate::{Result, Store};
use cairn_core::Timestamp;

/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerOutcome {
    /// A valid answer came back.
    Ok,
    /// Answers came back but none matched the schema, even after the retry that named the
    /// validation error: the call's result was dropped.
    Invalid,
    /// The provider failed (after the bounded retries).
    Failed,
    /// The deadline passed.
    Timeout,
    /// Not made: the day's budget was spent.
    OverBudget,
}

impl LedgerOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Invalid => "invalid",
            Self::Failed => "failed",
            Self::Timeout => "timeout",
            Self::OverBudget => "over_budget",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ok" => Self::Ok,
            "invalid" => Self::Invalid,
            "failed" => Self::Failed,
            "timeout" => Self::Timeout,
            "over_budget" => Self::OverBudget,
            _ => return None,
        })
    }
}

/// One model call in the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// When the call started.
    pub at: Timestamp,
    /// Provider name (`claude-cli`, `anthropic`, `local`, …).
    pub provider: String,
    /// Model name as the provider reported it.
    pub model: String,
    /// What the call was for (`consolidate`, `reconcile`, `profile`, `test`, …).
    pub purpose: String,
    /// How it ended.
    pub outcome: LedgerOutcome,
    /// Requests sent (retries included).
    pub attempts: u32,
    /// Prompt tokens over every attempt.
    pub input_tokens: u64,
    /// Answer tokens over every attempt.
    pub output_tokens: u64,
    /// Money spent in US dollars, when the provider says or its price is known.
    pub cost_usd: Option<f64>,
    /// Wall time over every attempt, in milliseconds.
    pub duration_ms: u64,
    /// Why it failed, in a short line (never the prompt or the answer).
    pub error: Option<String>,
}

/// Totals over the ledger since a time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerTotals {
    /// Calls made (entries other than `over_budget`).
    pub calls: u64,
    /// Calls that brought a valid answer.
    pub ok: u64,
    /// Calls whose answers were dropped as invalid.
    pub invalid: u64,
    /// Calls that failed or timed out.
    pub failed: u64,
    /// Calls refused because the budget was spent.
    pub refused: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Money spent (US dollars).
    pub cost_usd: f64,
}

impl Store {
    /// Appends one call to the ledger. The error line is cut to 300 characters.
    pub async fn record_llm_call(&self, entry: &LedgerEntry) -> Result<()> {
        let db = self.conn();
        let error = entry
            .error
            .as_ref()
            .map(|e| e.chars().take(300).collect::<String>());
        db.execute(Statement::from_sql_and_values(
            db.get_database_backend(),
            "INSERT INTO llm_calls (at, provider, model, purpose, outcome, attempts, \
             input_tokens, output_tokens, cost_usd, duration_ms, error) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                ts_text(&entry.at).into(),
                entry.provider.clone().into(),
                entry.model.clone().into(),
                entry.purpose.clone().into(),
                entry.outcome.as_str().into(),
                i64::from(entry.attempts).into(),
                to_i64(entry.input_tokens).into(),
                to_i64(entry.output_tokens).into(),
                entry.cost_usd.into(),
                to_i64(entry.duration_ms).into(),
                error.into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// Totals of the calls made since `since` (for the day's budget and the cost meter).
    pub async fn llm_totals_since(&self, since: &Timestamp) -> Result<LedgerTotals> {
        let db = self.conn();
        let row = db
            .query_one(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT \
                   COALESCE(SUM(outcome != 'over_budget'), 0) AS calls, \
                   COALESCE(SUM(outcome = 'ok'), 0) AS ok, \
                   COALESCE(SUM(outcome = 'invalid'), 0) AS invalid, \
                   COALESCE(SUM(outcome IN ('failed', 'timeout')), 0) AS failed, \
                   COALESCE(SUM(outcome = 'over_budget'), 0) AS refused, \
                   COALESCE(SUM(input_tokens), 0) AS input_tokens, \
                   COALESCE(SUM(output_tokens), 0) AS output_tokens, \
                   COALESCE(SUM(cost_usd), 0.0) AS cost_usd \
                 FROM llm_calls WHERE at >= ?",
                [ts_text(since).into()],
            ))
            .await?;
        let Some(r) = row else {
            return Ok(LedgerTotals::default());
        };
        Ok(LedgerTotals {
            calls: to_u64(r.try_get("", "calls")?),
            ok: to_u64(r.try_get("", "ok")?),
            invalid: to_u64(r.try_get("", "invalid")?),
            failed: to_u64(r.try_get("", "failed")?),
            refused: to_u64(r.try_get("", "refused")?),
            input_tokens: to_u64(r.try_get("", "input_tokens")?),
            output_tokens: to_u64(r.try_get("", "output_tokens")?),
            cost_usd: r.try_get("", "cost_usd")?,
        })
    }

    /// The newest ledger entries, newest first (at most `limit`).
    pub async fn llm_calls(&self, limit: u64) -> Result<Vec<LedgerEntry>> {
        let db = self.conn();
        let rows = db
            .query_all(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT at, provider, model, purpose, outcome, attempts, input_tokens, \
                 output_tokens, cost_usd, duration_ms, error \
                 FROM llm_calls ORDER BY id DESC LIMIT ?",
                [to_i64(limit).into()],
            ))
            .await?;
        rows.iter()
            .map(|r| {
                let outcome: String = r.try_get("", "outcome")?;
                let at: String = r.try_get("", "at")?;
                Ok(LedgerEntry {
                    at: parse_ts("llm_calls", "at", &at)?,
                    provider: r.try_get("", "provider")?,
                    model: r.try_get("", "model")?,
                    purpose: r.try_get("", "purpose")?,
                    outcome: LedgerOutcome::parse(&outcome).ok_or_else(|| {
                        corrupt(
                            "llm_calls",
                            "outcome",
                            format!("unknown outcome {outcome:?}"),
                        )
                    })?,
                    attempts: u32::try_from(r.try_get::<i64>("", "attempts")?).unwrap_or(0),
                    input_tokens: to_u64(r.try_get("", "input_tokens")?),
                    output_tokens: to_u64(r.try_get("", "output_tokens")?),
                    cost_usd: r.try_get("", "cost_usd")?,
                    duration_ms: to_u64(r.try_get("", "duration_ms")?),
                    error: r.try_get("", "error")?,
                })
            })
            .collect()
    }
}

/// The start of today in local time, as a timestamp: the day a budget counts.
pub fn start_of_today() -> Timestamp {
    let now = chrono::Local::now();
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|t| t.and_local_timezone(chrono::Local).earliest())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|| now.with_timezone(&chrono::Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(outcome: LedgerOutcome, cost: Option<f64>) -> LedgerEntry {
        LedgerEntry {
            at: chrono::Utc::now(),
            provider: "anthropic".into(),
            model: "claude-haiku-4-5".into(),
            purpose: "consolidate".into(),
            outcome,
            attempts: 1,
            input_tokens: 1_000,
            output_tokens: 200,
            cost_usd: cost,
            duration_ms: 900,
            error: None,
        }
    }

    #[tokio::test]
    async fn totals_count_calls_tokens_and_money_since_a_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("c.db")).await.expect("open");
        let before = chrono::Utc::now() - chrono::Duration::seconds(5);
        let mut old = entry(LedgerOutcome::Ok, Some(5.0));
        old.at = before - chrono::Duration::days(2);
        store.record_llm_call(&old).await.expect("old");
        store
            .record_llm_call(&entry(LedgerOutcome::Ok, Some(0.01)))
            .await
            .expect("ok");
        let mut bad = entry(LedgerOutcome::Invalid, None);
        bad.error = Some("x".repeat(1_000));
        store.record_llm_call(&bad).await.expect("invalid");
        store
            .record_llm_call(&entry(LedgerOutcome::OverBudget, None))
            .await
            .expect("refused");
        let t = store.llm_totals_since(&before).await.expect("totals");
        assert_eq!((t.calls, t.ok, t.invalid, t.refused), (2, 1, 1, 1));
        assert_eq!(t.input_tokens, 3_000);
        assert!((t.cost_usd - 0.01).abs() < 1e-9, "{t:?}");
        let rows = store.llm_calls(10).await.expect("rows");
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].outcome, LedgerOutcome::OverBudget);
        assert_eq!(rows[1].error.as_ref().map(|e| e.len()), Some(300));
        // Clear forgets what was remembered, not what was spent.
        store.clear(true).await.expect("clear");
        assert_eq!(
            store.llm_totals_since(&before).await.expect("after").calls,
            2
        );
    }
}
