//! Bootstrap of the turn note's ranker model, until `cairn ranker train` writes the real one
//! from the labelled set in `data/ranker/`.
//!
//! `cargo run -p cairn-turn --example ranker-bootstrap -- --out crates/cairn-turn/ranker/model.txt`
//! trains a small model (150 trees) on a synthetic feature matrix with the pipeline's
//! feature columns, so `Ranker::shipped()` has a model of the right shape. The matrix is
//! made up: the model's scores mean nothing.
//!
//! `-- --bench [rows]` instead times a cross-fitted training (default 50,000 rows: 5,000
//! groups of 10 candidates, 150 trees, 5 folds) and the prediction of 60 rows.
use std::time::Instant;

use cairn_turn::ranker::{Example, Ranker, TrainOptions, train};

/// The pipeline's feature vector, in order.
const NAMES: [&str; cairn_turn::note::FEATURES.len()] = cairn_turn::note::FEATURES;

/// SplitMix64, uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn u(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn coin(&mut self, p: f64) -> bool {
        self.u() < p
    }
}

/// Synthetic groups: about half the requests need one or two of their candidates; a needed
/// candidate tends to score higher on every similarity and judge.
fn synthetic(groups: usize, per_group: usize, seed: u64) -> Vec<Example> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(groups * per_group);
    for g in 0..groups {
        let needed = if r.coin(0.45) {
            1 + usize::from(r.coin(0.25))
        } else {
            0
        };
        let query_words = (3.0 + r.u() * 25.0).floor();
        // A request that needs something mostly uses words the memory knows.
        let known = if needed > 0 {
            (0.6 + 0.4 * r.u()).min(1.0)
        } else {
            r.u()
        };
        // Most requests name nothing (NaN); one naming things the memory knows is more
        // often about it.
        let names_known = if r.u() < 0.7 {
            f64::NAN
        } else if needed > 0 {
            (0.5 + 0.5 * r.u()).min(1.0)
        } else {
            r.u()
        };
        let mut rows: Vec<(Vec<f64>, bool)> = (0..per_group)
            .map(|c| {
                let label = c < needed;
                let lift = if label { 0.25 } else { 0.0 };
                let dense = (0.2 + 0.5 * r.u() + lift).min(1.0);
                let keyword = (0.6 * r.u() + lift).min(1.0);
                let fused = 0.5 * dense + 0.5 * keyword;
                let item = r.coin(0.3);
                let features = vec![
                    fused,
                    dense,
                    keyword,
                    0.0,
                    0.0,
                    0.0,
                    (r.u() * 120.0).floor(),
                    f64::from(u8::from(r.coin(if label { 0.8 } else { 0.5 }))),
                    f64::from(u8::from(r.coin(0.5))),
                    if item {
                        (r.u() * 6.0).floor()
                    } else {
                        f64::NAN
                    },
                    if item { r.u() } else { f64::NAN },
                    (r.u() * 4.0).floor(),
                    f64::from(u8::from(r.coin(0.05))),
                    query_words,
                    (r.u() * 0.6 + lift).min(1.0),
                    (r.u() * 0.5 + lift).min(1.0),
                    known,
                    names_known,
                ];
                (features, label)
            })
            .collect();
        rows.sort_by(|a, b| b.0[0].total_cmp(&a.0[0]));
        let top = rows[0].0[0];
        for (rank, (mut features, label)) in rows.into_iter().enumerate() {
            features[3] = rank as f64;
            features[4] = top - features[0];
            features[5] = top;
            out.push(Example {
                group: format!("g{g}"),
                fold: String::new(),
                features,
                label,
                weight: 1.0,
                after: 1.0,
            });
        }
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = TrainOptions::default();
    match args.first().map(String::as_str) {
        Some("--out") => {
            let out = args.get(1).ok_or("--out needs a path")?;
            let examples = synthetic(400, 10, 20_260_512);
            let (text, cf) = train(&examples, &NAMES, &opts)?;
            fs_err::write(out, &text)?;
            eprintln!(
                "wrote {out}: {} trees; cross-fitted AUC {:.3} on {} synthetic rows",
                Ranker::from_text(&text)?.trees(),
                cf.auc,
                cf.examples
            );
        }
        Some("--bench") => {
            let rows: usize = args.get(1).map_or(Ok(50_000), |s| s.parse())?;
            let examples = synthetic(rows / 10, 10, 1);
            let started = Instant::now();
            let (text, cf) = train(&examples, &NAMES, &opts)?;
            let took = started.elapsed();
            println!(
                "train: {} rows x {} features, {} trees, {} folds + final: {:.1} s (AUC {:.3})",
                cf.examples,
                NAMES.len(),
                opts.trees,
                cf.folds,
                took.as_secs_f64(),
                cf.auc
            );
            let ranker = Ranker::from_text(&text)?;
            let batch: Vec<Vec<f64>> = examples[..60].iter().map(|e| e.features.clone()).collect();
            ranker.predict(&batch)?;
            let runs = 200;
            let started = Instant::now();
            for _ in 0..runs {
                ranker.predict(&batch)?;
            }
            println!(
                "predict: 60 rows in {:.0} µs (mean of {runs})",
                started.elapsed().as_secs_f64() * 1e6 / f64::from(runs)
            );
            let started = Instant::now();
            for _ in 0..runs {
                ranker.predict(&batch[..1])?;
            }
            println!(
                "predict: 1 row in {:.0} µs (mean of {runs})",
                started.elapsed().as_secs_f64() * 1e6 / f64::from(runs)
            );
            let started = Instant::now();
            Ranker::from_text(&text)?;
            println!(
                "load: {} bytes of model text in {:.1} ms",
                text.len(),
                started.elapsed().as_secs_f64() * 1e3
            );
        }
        _ => return Err("usage: ranker-bootstrap --out <model.txt> | --bench [rows]".into()),
    }
    Ok(())
}
