//! `cairn bench embed`: how fast the sentence embedder turns captured text into vectors, one
//! batch at a time against batches side by side (`EmbedderOptions::parallel`).
//!
//! The texts are synthetic record chunks: most fill the model's 256-token window (tool output,
//! long answers), some are short (requests, short answers), as captured histories are. They go
//! to the embedder in calls of a page of the indexing worker (its 16 records' chunks), as the
//! dense index's sync gives them. Each setting loads its own embedder in this process, embeds
//! one call to warm up, then every text; its vectors are compared with the first setting's.
//! Then a query (one short text, as search and the turn note embed it) is timed alone, and
//! again and again while another thread embeds the texts once more: how long a turn note's
//! query waits while the indexing worker embeds.
use std::path::PathBuf;
use std::time::Instant;

use cairn_core::ports::Embedder;
use cairn_models::{BertEmbedder, EmbedderOptions, ModelSpec};
use serde::Serialize;

use super::{Lcg, embedder_dir, pct, peak_rss_mib, reset_peak_rss, rss_mib};

/// The query timed alone and beside the bulk embedding.
const QUERY: &str = "why did the postgres migration time out in CI";

/// What to measure.
#[derive(Debug, Clone)]
pub struct Args {
    /// Texts embedded per setting.
    pub texts: usize,
    /// Texts in one call to the embedder.
    pub per_call: usize,
    /// Texts in one batch through the model (`EmbedderOptions::batch_size`).
    pub batch_size: usize,
    /// The settings of `EmbedderOptions::parallel` to measure (0: the default on this machine).
    pub parallel: Vec<usize>,
    /// The embedding model's folder.
    pub embedder: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    pub json: bool,
}

/// One setting's figures.
#[derive(Debug, Serialize)]
pub struct Row {
    /// `EmbedderOptions::parallel` as asked (0: the default).
    pub asked: usize,
    /// Batches embedded at once.
    pub parallel: usize,
    /// Texts embedded.
    pub texts: usize,
    /// How long they took.
    pub seconds: f64,
    /// Texts a second.
    pub texts_per_s: f64,
    /// Milliseconds a text.
    pub ms_per_text: f64,
    /// Peak resident memory while this setting embedded, in MiB.
    pub peak_rss_mib: Option<f64>,
    /// The largest difference of any vector component from the first setting's.
    pub max_diff_from_first: f32,
    /// A query embedded alone: median milliseconds over 20.
    pub query_idle_p50_ms: f64,
    /// Queries embedded one after another while another thread embeds every text again.
    pub queries_beside: usize,
    /// Their median and 95th percentile, in milliseconds.
    pub query_beside_p50_ms: f64,
    /// See `query_beside_p50_ms`.
    pub query_beside_p95_ms: f64,
}

/// The whole run.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The embedder's model id.
    pub model: String,
    /// This machine's cores.
    pub cores: usize,
    /// Texts embedded per setting.
    pub texts: usize,
    /// Of them, those of more than 1,000 characters (they fill the token window).
    pub long_texts: usize,
    /// Texts in one call.
    pub per_call: usize,
    /// Texts in one batch.
    pub batch_size: usize,
    /// One row per setting, in the order asked.
    pub rows: Vec<Row>,
}

/// Synthetic chunks: about two in three fill the token window, the rest are short.
pub(crate) fn texts(n: usize) -> Vec<String> {
    let mut rng = Lcg(2026);
    (0..n)
        .map(|i| {
            let words = if rng.next(3) < 2 {
                180 + rng.next(80)
            } else {
                4 + rng.next(40)
            };
            format!("step {i}: {}", rng.words(words))
        })
        .collect()
}

/// Runs the benchmark and prints its figures.
pub fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.texts >= 1, "--texts must be at least 1");
    anyhow::ensure!(args.per_call >= 1, "--per-call must be at least 1");
    anyhow::ensure!(args.batch_size >= 1, "--batch-size must be at least 1");
    anyhow::ensure!(
        !args.parallel.is_empty(),
        "give at least one setting (--parallel)"
    );
    let dir = embedder_dir(args.embedder.clone())?;
    let texts = texts(args.texts);
    let long_texts = texts.iter().filter(|t| t.len() > 1000).count();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut first: Option<Vec<Vec<f32>>> = None;
    let mut rows = Vec::new();
    let mut model = String::new();
    for &asked in &args.parallel {
        let options = EmbedderOptions {
            name: Some(ModelSpec::all_minilm_l6_v2().name),
            parallel: asked,
            batch_size: args.batch_size,
            ..EmbedderOptions::default()
        };
        let embedder = BertEmbedder::load_with(&dir, &options)?;
        model = embedder.model_id().to_string();
        let parallel = embedder.parallel();
        if !args.json {
            eprintln!(
                "embedding {} texts, {} batches at once …",
                refs.len(),
                parallel
            );
        }
        embedder.embed(&refs[..args.per_call.min(refs.len())])?;
        reset_peak_rss();
        let start = Instant::now();
        let mut vectors = Vec::with_capacity(refs.len());
        for (done, call) in refs.chunks(args.per_call).enumerate() {
            vectors.extend(embedder.embed(call)?);
            if !args.json && done % 5 == 4 {
                eprintln!(
                    "  {} of {} texts",
                    ((done + 1) * args.per_call).min(refs.len()),
                    refs.len()
                );
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let peak = peak_rss_mib().or_else(|| {
            let now = rss_mib();
            (!now.is_nan()).then_some(now)
        });
        let max_diff = first.as_ref().map_or(0.0, |f| {
            f.iter()
                .zip(&vectors)
                .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
                .fold(0.0f32, f32::max)
        });
        if first.is_none() {
            first = Some(vectors);
        }
        let (query_idle_p50_ms, beside) = query_times(&embedder, &refs, args.per_call)?;
        rows.push(Row {
            asked,
            parallel,
            texts: refs.len(),
            seconds,
            texts_per_s: refs.len() as f64 / seconds,
            ms_per_text: seconds * 1000.0 / refs.len() as f64,
            peak_rss_mib: peak,
            max_diff_from_first: max_diff,
            query_idle_p50_ms,
            queries_beside: beside.len(),
            query_beside_p50_ms: pct(&beside, 0.5),
            query_beside_p95_ms: pct(&beside, 0.95),
        });
    }
    let report = Report {
        model,
        cores,
        texts: refs.len(),
        long_texts,
        per_call: args.per_call,
        batch_size: args.batch_size,
        rows,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    println!(
        "{} on {} cores: {} texts ({} filling the 256-token window), {} a call, batches of {}",
        report.model,
        report.cores,
        report.texts,
        report.long_texts,
        report.per_call,
        report.batch_size
    );
    println!(
        "{:>8} {:>9} {:>10} {:>8} {:>10} {:>9} {:>16} {:>8} {:>14} {:>7}",
        "parallel",
        "batches",
        "seconds",
        "texts/s",
        "ms/text",
        "peak MiB",
        "diff from first",
        "speed",
        "query alone ms",
        "beside"
    );
    let base = report.rows.first().map_or(1.0, |r| r.texts_per_s);
    for r in &report.rows {
        let asked = if r.asked == 0 {
            "default".to_string()
        } else {
            r.asked.to_string()
        };
        println!(
            "{:>8} {:>9} {:>10.1} {:>8.2} {:>10.1} {:>9} {:>16.2e} {:>8} {:>14.1} {:>7}",
            asked,
            r.parallel,
            r.seconds,
            r.texts_per_s,
            r.ms_per_text,
            r.peak_rss_mib
                .map_or_else(|| "-".to_string(), |m| format!("{m:.0}")),
            r.max_diff_from_first,
            format!("×{:.2}", r.texts_per_s / base),
            r.query_idle_p50_ms,
            r.queries_beside
        );
    }
    println!(
        "a query while every text is embedded again (ms): {}",
        report
            .rows
            .iter()
            .map(|r| format!(
                "parallel {}: p50 {:.1}, p95 {:.1}",
                r.parallel, r.query_beside_p50_ms, r.query_beside_p95_ms
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    Ok(())
}

/// A query's time alone (median of 20), and each query's time while another thread embeds
/// every text again in calls of `per_call` (queries one after another, 20 ms apart).
fn query_times(
    embedder: &BertEmbedder,
    refs: &[&str],
    per_call: usize,
) -> anyhow::Result<(f64, Vec<f64>)> {
    let time_one = || -> anyhow::Result<f64> {
        let t = Instant::now();
        embedder.embed(&[QUERY])?;
        Ok(t.elapsed().as_secs_f64() * 1000.0)
    };
    let mut alone = (0..20)
        .map(|_| time_one())
        .collect::<anyhow::Result<Vec<_>>>()?;
    alone.sort_by(f64::total_cmp);
    let done = std::sync::atomic::AtomicBool::new(false);
    let beside = std::thread::scope(|scope| -> anyhow::Result<Vec<f64>> {
        let bulk = scope.spawn(|| -> anyhow::Result<()> {
            let result = refs
                .chunks(per_call)
                .try_for_each(|call| embedder.embed(call).map(|_| ()));
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(result?)
        });
        let mut times = Vec::new();
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            times.push(time_one()?);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        bulk.join()
            .map_err(|_| anyhow::anyhow!("the bulk embedding thread panicked"))??;
        Ok(times)
    })?;
    let mut beside = beside;
    beside.sort_by(f64::total_cmp);
    Ok((pct(&alone, 0.5), beside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_mix_window_filling_chunks_with_short_ones_and_repeat() {
        let t = texts(300);
        let long = t.iter().filter(|s| s.len() > 1000).count();
        let short = t.iter().filter(|s| s.len() < 400).count();
        assert!((150..250).contains(&long), "{long} long of 300");
        assert!((50..150).contains(&short), "{short} short of 300");
        assert_eq!(t, texts(300), "the same texts every run");
    }
}
