//! `ranker_status` and `ranker_reset` through a real service: the shipped model until a
//! personal one is written at `Paths::ranker_model` (with its figures beside it), then that
//! one with the bar its training chose and both models' figures, and the shipped one again
//! after the reset removes it. A model trained on other inputs is not used, and says why.
use cairn_config::Paths;
use cairn_turn::ranker::{Example, TrainOptions, train};
use serde_json::{Value, json};

/// Synthetic examples over the turn note's inputs: the label follows the first two.
fn examples() -> Vec<Example> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut u = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = cairn_turn::note::FEATURES.len();
    (0..80)
        .flat_map(|g| (0..6).map(move |c| (g, c)))
        .map(|(g, _)| {
            let f: Vec<f64> = (0..n).map(|_| u()).collect();
            let label = f[0] + 0.5 * f[1] > 1.0;
            Example {
                group: format!("t{g}"),
                fold: format!("project:{}", g % 8),
                features: f,
                label,
                weight: 1.0,
                after: 1.0,
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranker_status_reports_shipped_then_personal_and_reset_goes_back() {
    let home = tempfile::tempdir().unwrap();
    let handle = crate::start_service(home.path(), false, None).await;
    let service = handle.service().clone();
    let paths = Paths::under(home.path());
    let model = paths.ranker_model();

    let status = service.dispatch("ranker_status", json!({})).await.unwrap();
    assert_eq!(status["model"], "shipped", "{status}");
    let shipped_bar = status["bar"].as_f64().unwrap();
    assert!(shipped_bar > 0.0 && shipped_bar < 1.0, "{status}");
    assert!(status["shipped"].is_null(), "{status}");
    assert_eq!(status["path"], model.display().to_string());

    // A personal model, trained as `--from-store` trains one, with its figures beside it.
    let ex = examples();
    let opts = TrainOptions {
        trees: 20,
        ..TrainOptions::default()
    };
    let (text, cf) = train(&ex, &cairn_turn::note::FEATURES, &opts).unwrap();
    let chosen = cf.chosen.clone().unwrap();
    let figures = json!({
        "source": "store",
        "trained_at": "2026-12-04T18:00:00Z",
        "personal": {"bar": chosen.bar, "auc": cf.auc, "requests": chosen.report.requests,
                     "precision": chosen.report.precision, "hit_rate": chosen.report.hit_rate,
                     "silence": chosen.report.silence, "with_note": chosen.report.with_note},
        "shipped": {"bar": shipped_bar, "auc": 0.61, "requests": chosen.report.requests,
                    "precision": 0.5, "hit_rate": 0.4, "silence": 0.9, "with_note": 0.3},
        "cross_fit": cf,
    });
    fs_err::create_dir_all(model.parent().unwrap()).unwrap();
    fs_err::write(model.with_extension("json"), figures.to_string()).unwrap();
    fs_err::write(&model, &text).unwrap();

    let status = service.dispatch("ranker_status", json!({})).await.unwrap();
    assert_eq!(status["model"], "personal", "{status}");
    assert_eq!(status["source"], "store");
    assert_eq!(status["trained_at"], "2026-12-04T18:00:00Z");
    let bar = status["bar"].as_f64().unwrap();
    assert!((bar - chosen.bar).abs() < 1e-6, "{status}");
    assert!((status["figures"]["auc"].as_f64().unwrap() - cf.auc).abs() < 1e-9);
    assert_eq!(status["shipped"]["auc"], 0.61);
    assert_eq!(status["shipped"]["bar"].as_f64().unwrap(), shipped_bar);
    assert!(status["problem"].is_null(), "{status}");

    let reset = service.dispatch("ranker_reset", json!({})).await.unwrap();
    assert_eq!(reset["model"], "shipped", "{reset}");
    assert_eq!(reset["bar"].as_f64().unwrap(), shipped_bar);
    assert!(!model.exists() && !model.with_extension("json").exists());
    let again: Value = service.dispatch("ranker_status", json!({})).await.unwrap();
    assert_eq!(again, reset);
    // A second reset finds nothing to remove.
    service.dispatch("ranker_reset", json!({})).await.unwrap();

    // A model trained on other inputs is not used, and the status says why.
    let names: Vec<String> = (0..cairn_turn::note::FEATURES.len())
        .map(|i| format!("other_{i}"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (other, _) = train(&ex, &names, &opts).unwrap();
    fs_err::write(&model, other).unwrap();
    let status = service.dispatch("ranker_status", json!({})).await.unwrap();
    assert_eq!(status["model"], "shipped", "{status}");
    assert!(
        status["problem"]
            .as_str()
            .unwrap()
            .contains("trained on other inputs"),
        "{status}"
    );
    handle.shutdown().await;
}
