//! Loading and failing to load, on tiny synthetic folders (always run: no model needed).
use std::path::Path;

use cairn_core::ports::{BackendError, BackendErrorKind, Embedder, Reranker};
use cairn_models::{BertEmbedder, CrossEncoder, EmbedderOptions, ModelError};

use crate::common::max_diff;
use crate::synthetic::{Tiny, write_tiny};

const ENCODER: Tiny = Tiny {
    head: false,
    labels: 1,
};
const CROSS: Tiny = Tiny {
    head: true,
    labels: 1,
};

/// The error as the pipeline sees it: kind `Unavailable`, and a message naming `file`.
fn assert_unavailable_naming(err: ModelError, file: &str) {
    let backend = BackendError::from(err);
    assert_eq!(backend.kind, BackendErrorKind::Unavailable, "{backend}");
    assert!(
        backend.message.contains(file),
        "{file} not named in: {backend}"
    );
}

fn embedder_error(dir: &Path) -> ModelError {
    BertEmbedder::load(dir).map(|_| ()).unwrap_err()
}

fn cross_error(dir: &Path) -> ModelError {
    CrossEncoder::load(dir).map(|_| ()).unwrap_err()
}

#[test]
fn tiny_encoder_embeds_with_unit_norms_despite_a_baked_in_tokenizer_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-bert");
    write_tiny(&dir, 1, ENCODER);
    let model = BertEmbedder::load(&dir).unwrap();
    assert_eq!(model.dim(), 8);
    assert!(model.model_id().starts_with("tiny-bert@"));
    // The tokenizer.json cuts at 5 tokens: texts that differ after word 5 must still differ.
    let v = model
        .embed(&[
            "the build failed the test the linker error",
            "the build failed the test fix path",
        ])
        .unwrap();
    assert!(max_diff(&v[0], &v[1]) > 1e-4);
    for vector in &v {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

#[test]
fn tiny_encoder_batches_like_single_texts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-bert");
    write_tiny(&dir, 2, ENCODER);
    let options = EmbedderOptions {
        batch_size: 2,
        ..EmbedderOptions::default()
    };
    let model = BertEmbedder::load_with(&dir, &options).unwrap();
    let texts = [
        "cargo",
        "the build failed the test the linker error again",
        "",
        "memory note",
        "x",
    ];
    let batch = model.embed(&texts).unwrap();
    for (text, batched) in texts.iter().zip(&batch) {
        let single = model.embed(&[text]).unwrap().remove(0);
        assert!(max_diff(&single, batched) < 1e-5, "{text:?}");
    }
}

#[test]
fn same_weights_give_the_same_id_and_other_weights_another() {
    let tmp = tempfile::tempdir().unwrap();
    write_tiny(&tmp.path().join("a"), 3, ENCODER);
    write_tiny(&tmp.path().join("b"), 4, ENCODER);
    let named = EmbedderOptions {
        name: Some("tiny".into()),
        ..EmbedderOptions::default()
    };
    let a = BertEmbedder::load_with(&tmp.path().join("a"), &named).unwrap();
    let a2 = BertEmbedder::load_with(&tmp.path().join("a"), &named).unwrap();
    let b = BertEmbedder::load_with(&tmp.path().join("b"), &named).unwrap();
    assert_eq!(a.model_id(), a2.model_id());
    assert_ne!(a.model_id(), b.model_id());
}

#[test]
fn tiny_cross_encoder_scores_pairs_batched_like_single() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-cross");
    write_tiny(&dir, 5, CROSS);
    let model = CrossEncoder::load(&dir).unwrap();
    let passages = [
        "the linker error",
        "weather is nice today",
        "",
        "fix the build path memory note",
    ];
    let batch = model.score("build failed", &passages).unwrap();
    let single: Vec<f32> = passages
        .iter()
        .map(|p| model.score("build failed", &[p]).unwrap()[0])
        .collect();
    assert!(max_diff(&batch, &single) < 1e-5, "{batch:?} vs {single:?}");
}

#[test]
fn a_missing_file_is_unavailable_and_named() {
    for file in ["model.safetensors", "tokenizer.json", "config.json"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        write_tiny(&dir, 6, CROSS);
        fs_err::remove_file(dir.join(file)).unwrap();
        let err = embedder_error(&dir);
        assert!(matches!(err, ModelError::MissingFile { .. }), "{err}");
        assert_unavailable_naming(err, file);
        assert_unavailable_naming(cross_error(&dir), file);
    }
}

#[test]
fn damaged_weights_are_unavailable_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    write_tiny(&dir, 7, ENCODER);
    let weights = dir.join("model.safetensors");
    let bytes = fs_err::read(&weights).unwrap();
    fs_err::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    assert_unavailable_naming(embedder_error(&dir), "model.safetensors");
    fs_err::write(&weights, b"not a safetensors file at all").unwrap();
    assert_unavailable_naming(embedder_error(&dir), "model.safetensors");
    fs_err::write(&weights, b"").unwrap();
    assert_unavailable_naming(embedder_error(&dir), "model.safetensors");
}

#[test]
fn a_damaged_config_or_tokenizer_is_unavailable_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    write_tiny(&dir, 8, ENCODER);
    let config = fs_err::read_to_string(dir.join("config.json")).unwrap();
    fs_err::write(dir.join("config.json"), "{ not json").unwrap();
    assert_unavailable_naming(embedder_error(&dir), "config.json");
    fs_err::write(dir.join("config.json"), r#"{"model_type": "bert"}"#).unwrap();
    assert_unavailable_naming(embedder_error(&dir), "config.json");
    fs_err::write(dir.join("config.json"), &config).unwrap();
    fs_err::write(dir.join("tokenizer.json"), "[1, 2, 3]").unwrap();
    assert_unavailable_naming(embedder_error(&dir), "tokenizer.json");
}

#[test]
fn weights_that_do_not_fit_the_config_are_unavailable_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    write_tiny(&dir, 9, ENCODER);
    let text = fs_err::read_to_string(dir.join("config.json")).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["hidden_size"] = 16.into();
    fs_err::write(dir.join("config.json"), config.to_string()).unwrap();
    assert_unavailable_naming(embedder_error(&dir), "model.safetensors");
}

#[test]
fn a_cross_encoder_without_its_classifier_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    write_tiny(&plain, 10, ENCODER);
    let err = cross_error(&plain);
    assert!(
        err.to_string().contains("pooler") || err.to_string().contains("classifier"),
        "{err}"
    );
    assert_unavailable_naming(err, "model.safetensors");

    let two = tmp.path().join("two-labels");
    write_tiny(
        &two,
        11,
        Tiny {
            head: true,
            labels: 2,
        },
    );
    assert_unavailable_naming(cross_error(&two), "config.json");
}
