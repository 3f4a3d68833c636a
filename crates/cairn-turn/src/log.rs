//! The injection log as people read it: every turn the note was asked for, each candidate
//! with its probability and the ranker's inputs, what the note said, what became of each
//! shown entry ([`crate::outcomes`]) and people's labels on them (`note_log`, `note_why`,
//! `note_feedback`).
use std::collections::HashMap;

use cairn_config::Paths;
use cairn_core::ErrorCode;
use cairn_core::api::{
    FeatureValue, InjectionEntry, InjectionList, InjectionView, InjectionsReq, NoteEvalFigures,
    NoteFeedbackReq, WhyReq,
};
use cairn_store::Store;

use crate::{Error, Result};

fn percentile(sorted: &[u32], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    Some(f64::from(sorted[i.min(sorted.len() - 1)]))
}

fn injection_view(
    inj: cairn_store::Injection,
    labels: &HashMap<String, String>,
    outcomes: &HashMap<String, cairn_store::NoteOutcome>,
) -> InjectionView {
    let names = inj.feature_names.clone();
    InjectionView {
        entries: inj
            .entries
            .into_iter()
            .map(|e| InjectionEntry {
                label: labels.get(&e.id).cloned(),
                outcome: outcomes.get(&e.id).map(|o| o.outcome.clone()),
                outcome_because: outcomes.get(&e.id).and_then(|o| o.because.clone()),
                features: names
                    .iter()
                    .zip(e.features.iter().chain(std::iter::repeat(&None)))
                    .map(|(n, v)| FeatureValue {
                        name: n.clone(),
                        value: *v,
                    })
                    .collect(),
                id: e.id,
                kind: e.kind,
                item_kind: e.item_kind,
                title: e.title,
                probability: e.probability,
                shown: e.shown,
            })
            .collect(),
        turn: inj.turn,
        at: cairn_core::api::timestamp(&inj.at),
        framework: inj.framework,
        session_id: inj.session_id,
        project: inj.project,
        prompt: inj.prompt,
        shown: inj.shown,
        bar: inj.bar,
        judged_by: inj.judged_by,
        silent_because: inj.silent_because,
        latency_ms: inj.latency_ms,
    }
}

/// The latest turns of the injection log with their labels and outcomes, the totals, and
/// the latest `cairn eval note` figures (`note_log`).
pub async fn list(store: &Store, paths: &Paths, req: InjectionsReq) -> Result<InjectionList> {
    let limit = u64::from(req.limit.unwrap_or(50).clamp(1, 500));
    let mut injections = Vec::new();
    for inj in store.injections(limit, req.shown_only).await? {
        let labels = store.note_labels(&inj.turn).await?;
        let outcomes = store.note_outcomes(&inj.turn).await?;
        injections.push(injection_view(inj, &labels, &outcomes));
    }
    let totals = store.note_totals().await?;
    let eval = fs_err::read_to_string(paths.note_eval())
        .ok()
        .and_then(|t| serde_json::from_str::<NoteEvalFigures>(&t).ok());
    Ok(InjectionList {
        injections,
        turns: totals.turns,
        shown: totals.shown,
        not_useful: totals.not_useful,
        p50_ms: percentile(&totals.latencies_ms, 0.5),
        p95_ms: percentile(&totals.latencies_ms, 0.95),
        eval,
    })
}

/// One turn of the injection log, whole: why its note said what it said (`note_why`;
/// `last` is the latest turn).
pub async fn why(store: &Store, req: WhyReq) -> Result<InjectionView> {
    let turn = req.turn.trim();
    if turn.is_empty() {
        return Err(Error::bad_request("the turn is missing: give t_… or last"));
    }
    let inj = store.injection(turn).await?.ok_or_else(|| {
        Error::Failed(
            ErrorCode::NotFound,
            if turn == "last" {
                "no turn note has been asked for yet".to_owned()
            } else {
                format!("no turn {turn} in the injection log")
            },
        )
    })?;
    let labels = store.note_labels(&inj.turn).await?;
    let outcomes = store.note_outcomes(&inj.turn).await?;
    Ok(injection_view(inj, &labels, &outcomes))
}

/// A person's label on a shown entry (`note_feedback`: `useful`, `not_useful`, or none
/// to take it back); it wins over the entry's automatic outcome.
pub async fn feedback(store: &Store, req: NoteFeedbackReq) -> Result<InjectionEntry> {
    let turn = why(store, WhyReq { turn: req.turn }).await?.turn;
    store
        .set_note_label(&turn, req.id.trim(), req.label.as_deref())
        .await?;
    let after = why(store, WhyReq { turn }).await?;
    after
        .entries
        .into_iter()
        .find(|e| e.id == req.id.trim())
        .ok_or_else(|| Error::Failed(ErrorCode::NotFound, format!("no entry {}", req.id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_sorted_latencies() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[1, 2, 3, 4, 100], 0.5), Some(3.0));
        assert_eq!(percentile(&[1, 2, 3, 4, 100], 0.95), Some(100.0));
    }
}
