//! `ranker_status` and `ranker_reset`: which model the turn note's ranker uses — the shipped
//! one, or a personal one at `Paths::ranker_model` (`cairn ranker train`, `--from-store`
//! for one trained on this machine's own turn notes) — and going back to the shipped one.
//!
//! The turn note loads the personal model when its file is there and was trained on today's
//! inputs, keyed on the file's modification time (`turn_api`): removing the file makes its
//! next turn load the shipped model again.
use std::path::Path;

use cairn_core::api::{Empty, RankerFigures, RankerStatus};
use cairn_turn::ranker::{self, Ranker};
use serde_json::Value;

use crate::{ApiError, Result, Service};

/// A model's figures at `bar`, read from the figures written beside it: a `--from-store`
/// training's `personal` / `shipped` entry when `key` names one, else its cross-fit (the
/// notes at the chosen bar on the half it was not chosen on, or over every request).
fn figures_of(json: &Value, key: &str, bar: f64) -> Option<RankerFigures> {
    if let Some(f) = json.get(key).filter(|f| f.is_object()) {
        return Some(RankerFigures {
            bar: f.get("bar").and_then(Value::as_f64).unwrap_or(bar),
            auc: f.get("auc").and_then(Value::as_f64),
            precision: f.get("precision").and_then(Value::as_f64),
            hit_rate: f.get("hit_rate").and_then(Value::as_f64),
            silence: f.get("silence").and_then(Value::as_f64),
            requests: f.get("requests").and_then(Value::as_u64),
        });
    }
    let cf = json.get("cross_fit")?;
    let report = cf
        .pointer("/chosen/report")
        .filter(|r| r.get("requests").and_then(Value::as_u64).unwrap_or(0) > 0);
    let notes = report.or_else(|| {
        cf.get("notes")?.as_array()?.iter().find(|n| {
            n.get("bar")
                .and_then(Value::as_f64)
                .is_some_and(|b| (b - bar).abs() < 1e-6)
        })
    });
    let get = |k: &str| notes.and_then(|n| n.get(k)).and_then(Value::as_f64);
    Some(RankerFigures {
        bar,
        auc: cf.get("auc").and_then(Value::as_f64),
        precision: get("precision"),
        hit_rate: get("hit_rate"),
        silence: get("silence"),
        requests: notes
            .and_then(|n| n.get("requests"))
            .and_then(Value::as_u64),
    })
}

/// A model's bar as the turn note uses it (`DEFAULT_BAR` when its figures name none), kept to
/// four decimals (it is an `f32`: 0.65 would read 0.6499999761581421).
fn bar_f64(bar: Option<f32>) -> f64 {
    (f64::from(bar.unwrap_or(ranker::DEFAULT_BAR)) * 1e4).round() / 1e4
}

/// The shipped model's status.
fn shipped_status(path: &Path, problem: Option<String>) -> RankerStatus {
    let json: Value = serde_json::from_str(ranker::shipped_figures()).unwrap_or(Value::Null);
    let bar = bar_f64(ranker::bar_of_figures(ranker::shipped_figures()));
    RankerStatus {
        model: "shipped".into(),
        bar,
        figures: figures_of(&json, "", bar),
        source: None,
        trained_at: None,
        shipped: None,
        path: path.display().to_string(),
        problem,
    }
}

/// Which model the turn note uses, read as `turn_api` loads it.
fn status_at(path: &Path) -> RankerStatus {
    let Ok(meta) = fs_err::metadata(path) else {
        return shipped_status(path, None);
    };
    let loaded = fs_err::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| Ranker::from_text(&t).map_err(|e| e.to_string()))
        .and_then(|r| {
            if r.feature_names()
                .iter()
                .map(String::as_str)
                .eq(cairn_turn::note::FEATURES)
            {
                Ok(())
            } else {
                Err("it was trained on other inputs; run `cairn ranker train` again".to_owned())
            }
        });
    if let Err(e) = loaded {
        return shipped_status(
            path,
            Some(format!("the personal model cannot be used: {e}")),
        );
    }
    let text = fs_err::read_to_string(path.with_extension("json")).ok();
    let json: Value = text
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let bar = bar_f64(text.as_deref().and_then(ranker::bar_of_figures));
    let modified = meta
        .modified()
        .ok()
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339());
    RankerStatus {
        model: "personal".into(),
        bar,
        figures: figures_of(&json, "personal", bar),
        source: Some(
            json.get("source")
                .and_then(Value::as_str)
                .unwrap_or("file")
                .to_owned(),
        ),
        trained_at: json
            .get("trained_at")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(modified),
        shipped: json
            .get("shipped")
            .and_then(|_| figures_of(&json, "shipped", bar)),
        path: path.display().to_string(),
        problem: None,
    }
}

impl Service {
    pub(crate) async fn ranker_status(&self, _: Empty) -> Result<RankerStatus> {
        let path = self.paths().ranker_model();
        tokio::task::spawn_blocking(move || status_at(&path))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))
    }

    pub(crate) async fn ranker_reset(&self, _: Empty) -> Result<RankerStatus> {
        let path = self.paths().ranker_model();
        // The model first: without it the figures are never read.
        for p in [path.clone(), path.with_extension("json")] {
            match fs_err::remove_file(&p) {
                Ok(()) => tracing::info!(path = %p.display(), "personal ranker removed"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(ApiError::internal(format!(
                        "cannot remove the personal ranker: {e}"
                    )));
                }
            }
        }
        self.ranker_status(Empty {}).await
    }
}
