//! The embedder on the real all-MiniLM-L6-v2 weights.
use cairn_core::ports::Embedder;
use cairn_models::ModelSpec;

use crate::common::{cosine, embedder, max_diff, minilm_dir};

#[test]
fn minilm_loads_with_dim_384_and_an_id_naming_model_and_weights() {
    let Some(model) = embedder() else { return };
    assert_eq!(model.dim(), 384);
    assert_eq!(model.max_tokens(), 256);
    let id = model.model_id();
    let (name, hash) = id.split_once('@').unwrap();
    assert_eq!(name, "all-MiniLM-L6-v2");
    assert_eq!(hash.len(), 12);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
}

#[test]
fn packaged_files_match_the_pinned_sha256s() {
    let Some(dir) = minilm_dir() else { return };
    cairn_models::verify(&ModelSpec::all_minilm_l6_v2(), &dir).unwrap();
}

#[test]
fn vectors_have_unit_length() {
    let Some(model) = embedder() else { return };
    let vectors = model
        .embed(&[
            "cargo test fails with a linker error about libssl",
            "The user prefers tabs over spaces in Go files.",
            "x",
        ])
        .unwrap();
    assert_eq!(vectors.len(), 3);
    for v in &vectors {
        assert_eq!(v.len(), 384);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }
}

#[test]
fn a_query_is_closer_to_the_relevant_memory_than_to_an_unrelated_one() {
    let Some(model) = embedder() else { return };
    let cases = [
        (
            "why does the build fail to link openssl?",
            "cargo build failed: the linker could not find -lssl; installing libssl-dev fixed it",
            "The team standup moved to 10am on Tuesdays.",
        ),
        (
            "which test framework does this project use?",
            "Tests in this repository use pytest with fixtures in conftest.py.",
            "The database password rotates every 90 days.",
        ),
        (
            "how do I run the database migrations?",
            "Run `sea-orm-cli migrate up` from crates/cairn-store to apply the migrations.",
            "The user likes dark mode in the editor.",
        ),
        (
            "what formatting style does the user want?",
            "The user wants rustfmt with max_width 100 and no trailing commas in one-liners.",
            "The CI machine has two cores and 24 GB of RAM.",
        ),
    ];
    for (query, relevant, unrelated) in cases {
        let v = model.embed(&[query, relevant, unrelated]).unwrap();
        let (good, bad) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
        assert!(
            good > bad + 0.1,
            "{query}: relevant {good} vs unrelated {bad}"
        );
    }
}

#[test]
fn embedding_is_deterministic() {
    let Some(model) = embedder() else { return };
    let texts = [
        "the migration failed on a NOT NULL column",
        "restart the daemon",
    ];
    let first = model.embed(&texts).unwrap();
    let second = model.embed(&texts).unwrap();
    assert_eq!(first, second);
}

#[test]
fn a_batch_gives_the_same_vectors_as_one_text_at_a_time() {
    let Some(model) = embedder() else { return };
    let long = "The capture worker follows every session file, scrubs secrets and stores records. "
        .repeat(6);
    let texts = [
        "short",
        "a medium length sentence about the index",
        long.as_str(),
        "",
    ];
    let batch = model.embed(&texts).unwrap();
    for (text, batched) in texts.iter().zip(&batch) {
        let single = model.embed(&[text]).unwrap().remove(0);
        let diff = max_diff(&single, batched);
        assert!(diff < 1e-5, "{text:?}: batch and single differ by {diff}");
    }
}

#[test]
fn long_texts_are_cut_at_256_tokens_not_at_the_tokenizers_baked_in_128() {
    let Some(model) = embedder() else { return };
    // "the " is one token: 300 of them fill the whole window, so the endings are cut off.
    let filler = "the ".repeat(300);
    let a = format!("{filler} the database migration failed");
    let b = format!("{filler} it rained all day in the mountains");
    let v = model.embed(&[&a, &b]).unwrap();
    assert!(
        max_diff(&v[0], &v[1]) < 1e-6,
        "text past 256 tokens must be ignored"
    );

    // 150 tokens of filler: past the tokenizer.json's 128, inside the 256 window.
    let filler = "the ".repeat(150);
    let c = format!("{filler} kubernetes pod stuck in a crash loop");
    let d = format!("{filler} a recipe for chocolate cake");
    let v = model.embed(&[&c, &d]).unwrap();
    assert!(
        cosine(&v[0], &v[1]) < 0.999,
        "text after token 128 must count"
    );

    let huge = "Stack trace line from a failing integration test run. ".repeat(2000);
    let v = model.embed(&[&huge]).unwrap();
    assert_eq!(v[0].len(), 384);
}

#[test]
fn the_empty_string_and_an_empty_batch_work() {
    let Some(model) = embedder() else { return };
    let v = model.embed(&[""]).unwrap();
    assert_eq!(v.len(), 1);
    let norm = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
    assert!(model.embed(&[]).unwrap().is_empty());
}

#[test]
fn batches_side_by_side_give_the_same_vectors_in_the_same_order_as_one_at_a_time() {
    let Some(dir) = minilm_dir() else { return };
    let load = |parallel| {
        cairn_models::BertEmbedder::load_with(
            &dir,
            &cairn_models::EmbedderOptions {
                name: Some(ModelSpec::all_minilm_l6_v2().name),
                parallel,
                batch_size: 4,
                ..cairn_models::EmbedderOptions::default()
            },
        )
        .unwrap()
    };
    let (one, three) = (load(1), load(3));
    assert_eq!(one.parallel(), 1);
    assert_eq!(three.parallel(), 3);
    // Five batches of four, of lengths that differ so the longest-first order shuffles them.
    let texts: Vec<String> = (0..19)
        .map(|i| {
            format!("record {i}: the migration of table t{i} failed; ").repeat(1 + (i * 7) % 11)
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let sequential = one.embed(&refs).unwrap();
    let side_by_side = three.embed(&refs).unwrap();
    assert_eq!(sequential.len(), refs.len());
    assert_eq!(
        sequential, side_by_side,
        "batches embedded side by side must give the very same vectors, each at its text's place"
    );
    // Each vector is its own text's: a text alone gives (within float noise) the same.
    for i in [0, 7, 18] {
        let alone = one.embed(&[refs[i]]).unwrap().remove(0);
        let diff = max_diff(&alone, &side_by_side[i]);
        assert!(
            diff < 1e-5,
            "text {i}: side-by-side vector differs by {diff}"
        );
    }
}

/// Bulk embedding yields the cores: the pool's threads run at the lowest priority (nice 19 on
/// Linux), while the caller's thread keeps its own.
#[cfg(target_os = "linux")]
#[test]
fn the_threads_that_embed_batches_side_by_side_run_at_the_lowest_priority() {
    let Some(dir) = minilm_dir() else { return };
    let model = cairn_models::BertEmbedder::load_with(
        &dir,
        &cairn_models::EmbedderOptions {
            name: Some(ModelSpec::all_minilm_l6_v2().name),
            parallel: 2,
            batch_size: 2,
            ..cairn_models::EmbedderOptions::default()
        },
    )
    .unwrap();
    // A call of several batches runs on the pool, so its threads have started.
    model.embed(&["a", "b", "c", "d", "e"]).unwrap();
    let nice = |stat: &str| -> i64 {
        // Fields after the command's closing parenthesis; nice is field 19 of the line.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split_whitespace().nth(16).unwrap().parse().unwrap()
    };
    let mut seen = 0;
    for task in fs_err::read_dir("/proc/self/task").unwrap() {
        let task = task.unwrap().path();
        let comm = fs_err::read_to_string(task.join("comm")).unwrap_or_default();
        if comm.trim().starts_with("cairn-embed-") {
            let stat = fs_err::read_to_string(task.join("stat")).unwrap();
            assert_eq!(nice(&stat), 19, "{}: {stat}", comm.trim());
            seen += 1;
        }
    }
    assert!(seen >= 2, "the embedder's threads were not found ({seen})");
    let own = fs_err::read_to_string("/proc/thread-self/stat").unwrap();
    assert!(
        nice(&own) < 19,
        "the caller's thread must keep its priority: {own}"
    );
}
