//! The cross-encoder on a synthetic checkpoint with the ms-marco-MiniLM-L6-v2 layout. Its
//! scores are meaningless: these tests check loading, shapes, determinism and padding
//! invariance, not ranking quality (only measurable with the real model).
use cairn_core::ports::Reranker;
use cairn_models::sigmoid;

use crate::common::{cross_encoder, max_diff};

const QUERY: &str = "why does the build fail to link openssl?";

#[test]
fn synthetic_ms_marco_layout_loads_and_gives_one_finite_score_per_passage() {
    let Some(model) = cross_encoder() else { return };
    assert!(
        model
            .model_id()
            .starts_with("ms-marco-MiniLM-L6-v2-synthetic@")
    );
    assert_eq!(model.max_tokens(), 512);
    let passages = [
        "installing libssl-dev fixed the linker error",
        "the standup moved to 10am",
        "pytest fixtures live in conftest.py",
    ];
    let scores = model.score(QUERY, &passages).unwrap();
    assert_eq!(scores.len(), 3);
    assert!(scores.iter().all(|s| s.is_finite()));
    assert!(
        scores.windows(2).any(|w| w[0] != w[1]),
        "scores all equal: {scores:?}"
    );
    assert!(model.score(QUERY, &[]).unwrap().is_empty());
}

#[test]
fn scores_are_deterministic() {
    let Some(model) = cross_encoder() else { return };
    let passages = [
        "restart the daemon after changing settings",
        "the weather is nice",
    ];
    assert_eq!(
        model.score(QUERY, &passages).unwrap(),
        model.score(QUERY, &passages).unwrap()
    );
}

#[test]
fn a_batch_scores_like_one_pair_at_a_time() {
    let Some(model) = cross_encoder() else { return };
    let passages = [
        "cargo build failed: the linker could not find -lssl",
        "installing libssl-dev fixed it",
        "the user prefers tabs",
        "",
    ];
    let batch = model.score(QUERY, &passages).unwrap();
    let single: Vec<f32> = passages
        .iter()
        .map(|p| model.score(QUERY, &[p]).unwrap()[0])
        .collect();
    assert!(max_diff(&batch, &single) < 1e-4, "{batch:?} vs {single:?}");
}

#[test]
fn padding_does_not_change_a_short_pairs_score() {
    let Some(model) = cross_encoder() else { return };
    let short = "libssl-dev";
    let long = "A very long passage about linkers, shared libraries and build scripts. ".repeat(40);
    let alone = model.score(QUERY, &[short]).unwrap()[0];
    let padded = model.score(QUERY, &[long.as_str(), short]).unwrap()[1];
    assert!(
        (alone - padded).abs() < 1e-4,
        "{alone} alone vs {padded} next to a long passage"
    );
}

#[test]
fn very_long_pairs_are_truncated_not_rejected() {
    let Some(model) = cross_encoder() else { return };
    let huge = "log line from a failing run ".repeat(3000);
    let scores = model.score(&huge, &[huge.as_str(), "short"]).unwrap();
    assert!(scores.iter().all(|s| s.is_finite()));
}

#[test]
fn sigmoid_turns_logits_into_probabilities_in_order() {
    assert!((sigmoid(0.0) - 0.5).abs() < 1e-7);
    assert!(sigmoid(-11.0) < 1e-4 && sigmoid(11.0) > 0.9999);
    assert!(sigmoid(1.0) > sigmoid(0.5));
}
