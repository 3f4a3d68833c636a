//! Which model the turn note ranks with — the shipped one, or a personal one at
//! `Paths::ranker_model` (`cairn ranker train`, `--from-store` for one trained on this
//! machine's own turn notes) — as the note loads it ([`Memory::ranker`]), as `ranker_status`
//! reports it ([`status`]), and going back to the shipped one ([`reset`]).
//!
//! The turn note loads the personal model when its file is there and was trained on today's
//! inputs ([`personal`]), keyed on the file's modification time: removing the file makes its
//! next turn load the shipped model again. Going back also turns the nightly training off
//! ([`crate::personal`]).
use std::path::Path;
use std::sync::Arc;

use cairn_core::api::{RankerFigures, RankerStatus};
use serde_json::Value;

use crate::memory::Memory;
use crate::ranker::{self, Ranker};
use crate::{Error, Result};

/// The personal model at `path` with the bar its training chose (the figures beside it),
/// or why it cannot be used: unreadable, or trained before the inputs changed (it cannot
/// score today's rows).
pub fn personal(path: &Path) -> std::result::Result<Ranker, String> {
    let r = fs_err::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| Ranker::from_text(&t).map_err(|e| e.to_string()))?;
    if !r
        .feature_names()
        .iter()
        .map(String::as_str)
        .eq(crate::note::FEATURES)
    {
        return Err(format!(
            "it was trained on other inputs ({}); run `cairn ranker train` again",
            r.feature_names().join(", ")
        ));
    }
    let figures = fs_err::read_to_string(path.with_extension("json")).ok();
    Ok(r.with_bar(figures.as_deref().and_then(ranker::bar_of_figures)))
}

impl Memory {
    /// The ranker: the user's own model when `cairn ranker train` wrote one that can be used,
    /// the shipped one otherwise.
    pub(crate) async fn ranker(&self) -> Result<Arc<Ranker>> {
        let path = self.paths.ranker_model();
        let stamp = fs_err::metadata(&path).and_then(|m| m.modified()).ok();
        let mut slot = self.state.ranker.lock().await;
        if let Some((s, r)) = slot.as_ref()
            && *s == stamp
        {
            return Ok(r.clone());
        }
        let shipped = || Ranker::shipped().map_err(|e| Error::internal(e.to_string()));
        let loaded = match stamp {
            Some(_) => match personal(&path) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, path = %path.display(), "cannot load the trained ranker; using the shipped one");
                    shipped()?
                }
            },
            None => shipped()?,
        };
        let r = Arc::new(loaded);
        *slot = Some((stamp, r.clone()));
        Ok(r)
    }
}

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

/// A model's bar as the turn note uses it (`note::BAR_UNCHOSEN` when its figures name none), kept to
/// four decimals (it is an `f32`: 0.65 would read 0.6499999761581421).
fn bar_f64(bar: Option<f32>) -> f64 {
    (f64::from(bar.unwrap_or(crate::note::BAR_UNCHOSEN)) * 1e4).round() / 1e4
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
        nightly: crate::personal::nightly_line(path),
    }
}

/// Which model the turn note uses with the personal model at `path` (`ranker_status`), read
/// as the note loads it ([`personal`]).
pub fn status(path: &Path) -> RankerStatus {
    let Ok(meta) = fs_err::metadata(path) else {
        return shipped_status(path, None);
    };
    if let Err(e) = personal(path) {
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
        nightly: crate::personal::nightly_line(path),
    }
}

/// Removes the personal model at `path` and its figures (`ranker_reset`): the next turn
/// ranks with the shipped model, and sleep trains no personal model until the person trains
/// one by hand ([`crate::personal::turn_off`]). Returns the status after.
pub fn reset(path: &Path) -> Result<RankerStatus> {
    crate::personal::turn_off(path)?;
    // The model first: without it the figures are never read.
    for p in [path.to_path_buf(), path.with_extension("json")] {
        match fs_err::remove_file(&p) {
            Ok(()) => tracing::info!(path = %p.display(), "personal ranker removed"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::internal(format!(
                    "cannot remove the personal ranker: {e}"
                )));
            }
        }
    }
    Ok(status(path))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn going_back_to_the_shipped_model_removes_the_personal_one_and_turns_the_nightly_training_off()
    {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("ranker").join("model.txt");
        let before = status(&model);
        assert_eq!(before.model, "shipped");
        assert!(
            before
                .nightly
                .starts_with("Sleep trains a personal model each night"),
            "{}",
            before.nightly
        );
        fs_err::create_dir_all(model.parent().unwrap()).unwrap();
        fs_err::write(&model, "not a model").unwrap();
        fs_err::write(model.with_extension("json"), "{}").unwrap();
        let after = reset(&model).unwrap();
        assert!(!model.exists() && !model.with_extension("json").exists());
        assert_eq!(after.model, "shipped");
        assert!(
            after
                .nightly
                .starts_with("Nightly training is off since 20"),
            "{}",
            after.nightly
        );
    }
}
