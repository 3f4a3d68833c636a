//! `cairn bench search`: the search side at scale. A synthetic store grows step by step
//! (15,000 → 150,000 records by default, nine body chunks each, so ~1.35 M points at the end:
//! a captured record is embedded as its chunks, never as a summary key or cues, which are an
//! item's); at each step a fresh process opens it (restart time, RSS at idle) and measures one
//! query vector (quantized with re-scoring), an exact query, recall@10 of the quantized search
//! against exact search, and the full fused query the service runs (query embedding with the
//! real model + BM25 + the chunk search + fusion, neighbours, sessions and hit text).
//!
//! With `--remote URL` the vectors go to a Qdrant server's collection `cairn-bench` instead
//! of the embedded index (emptied at the first step); the store and keyword index stay local,
//! as the service keeps them with a remote backend.
//!
//! The record vectors are synthetic (low-rank, shaped like text embeddings): embedding 1.35 M
//! chunks with the real model would take hours on a laptop and measure the embedder, not the
//! index. The query embedding is real, so the fused latency includes it.
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use cairn_core::VectorKind;
use cairn_core::ports::{Embedder, VectorFilter, VectorIndex};
use cairn_index::{TextIndex, TextQuery};
use cairn_models::BertEmbedder;
use cairn_recall::{Corpus, Query, Retriever, SearchMode, Tuning};
use cairn_store::Store;
use cairn_vectors::synthetic::Gen;
use cairn_vectors::{EmbeddedIndex, ServerIndex};
use serde::{Deserialize, Serialize};

use super::{
    Lcg, embedder_dir, keep_vectors, ms, pct, record_point, reset_peak_rss, rss_mib, status_mib,
    synthetic_record,
};

const DIM: usize = 384;

/// A query's exact nearest points: owner and position.
type Nearest = HashSet<(String, u32)>;

/// What to measure.
#[derive(Debug, Clone)]
pub struct Args {
    /// Record counts at which to measure, ascending.
    pub steps: Vec<usize>,
    /// Vectors per record.
    pub points_per_record: usize,
    /// Queries per measurement.
    pub queries: usize,
    /// Keep the synthetic store here (default: a temporary folder).
    pub dir: Option<PathBuf>,
    /// The embedding model's folder (default: `models.embedder`, else the PyPI test copy).
    pub embedder: Option<PathBuf>,
    /// Print one JSON object per step instead of the table.
    pub json: bool,
    /// Besides the index's default, the service query measured again at each of these
    /// numbers of candidates re-scored per kind of vector (empty: none).
    pub candidates: Vec<usize>,
    /// A Qdrant server's gRPC URL: the vectors go there instead of the embedded index.
    pub remote: Option<String>,
}

/// The collection `--remote` uses on the server.
const REMOTE_COLLECTION: &str = "cairn-bench";

/// The collection [`REMOTE_COLLECTION`] on the Qdrant server at `url`, with the key
/// `cairn index set-key` stored, if any.
fn remote_index(url: &str) -> anyhow::Result<ServerIndex> {
    let key = cairn_vectors::load_key(cairn_vectors::REMOTE_KEY_USER).unwrap_or_default();
    ServerIndex::connect(url, key, REMOTE_COLLECTION).map_err(|e| anyhow::anyhow!("{}", e.message))
}

/// The vector index the benchmark grows and measures: the embedded one in `dir`, or
/// [`remote_index`]. `fresh` empties it first (the next `ensure` creates it again).
fn open_vectors(
    dir: &Path,
    remote: Option<&str>,
    fresh: bool,
) -> anyhow::Result<std::sync::Arc<dyn VectorIndex>> {
    let err = |e: cairn_core::ports::BackendError| anyhow::anyhow!("{}", e.message);
    Ok(match remote {
        None if fresh => {
            std::sync::Arc::new(EmbeddedIndex::create(&dir.join("vectors")).map_err(err)?)
        }
        None => std::sync::Arc::new(EmbeddedIndex::open(&dir.join("vectors")).map_err(err)?),
        Some(url) => {
            let index = remote_index(url)?;
            if fresh {
                index.delete_collection().map_err(err)?;
            }
            std::sync::Arc::new(index)
        }
    })
}

/// The service query at one number of candidates re-scored per kind of vector.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AtCandidates {
    /// Candidates re-scored per kind (the HNSW beam is as wide).
    candidates: usize,
    fused_p50_ms: f64,
    fused_p95_ms: f64,
    /// The median of the vector searches' sum (a records search: the chunk search alone).
    vectors_p50_ms: f64,
    /// The share of the top 10 the service query returns (at the service's number) that
    /// this number returns too, over the same queries.
    agree_at_10: f64,
    /// The retriever's vector search at this number (its pool of 100): how many of the exact
    /// ten nearest its first ten hold.
    #[serde(default)]
    recall_at_10: f64,
}

/// One step as `--json` prints it (the names `docs/figures/search.md`'s table explains).
#[derive(Debug, Clone, Serialize)]
struct StepJson {
    records: u64,
    points: u64,
    restart_s: f64,
    /// Of the restart: opening the store, the keyword index and the vector index.
    restart_store_s: f64,
    restart_text_s: f64,
    restart_vectors_s: f64,
    rss_idle_mib: f64,
    rss_after_mib: f64,
    /// The most RSS while the service's queries ran, models loaded.
    rss_peak_mib: f64,
    /// The first quantized search after opening (cold pages).
    first_search_ms: f64,
    recall_at_10: f64,
    /// The retriever's vector search (its pool, re-scoring `Tuning::candidates`): how many of
    /// the exact ten nearest its first ten hold.
    service_recall_at_10: f64,
    fused_p50_ms: f64,
    fused_p95_ms: f64,
    vector_p50_ms: f64,
    vector_p95_ms: f64,
    exact_p50_ms: f64,
    embed_p50_ms: f64,
    /// Of the fused query: the median of each stage (`cairn_recall::Stages`).
    stages_p50_ms: BTreeMap<String, f64>,
    /// The service query at other numbers of candidates (`--candidates`).
    at_candidates: Vec<AtCandidates>,
    graph_build_s: f64,
    /// The most RSS of the process that grew the store while it built the graph.
    graph_build_peak_mib: f64,
}

/// One step's figures, measured in a fresh process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figures {
    records: u64,
    points: u64,
    restart_ms: f64,
    open_store_ms: f64,
    open_text_ms: f64,
    open_vectors_ms: f64,
    idle_rss_mib: f64,
    vector_p50_ms: f64,
    vector_p95_ms: f64,
    exact_p50_ms: f64,
    recall_at_10: f64,
    fused_p50_ms: f64,
    fused_p95_ms: f64,
    embed_p50_ms: f64,
    stages_p50_ms: BTreeMap<String, f64>,
    #[serde(default)]
    at_candidates: Vec<AtCandidates>,
    after_rss_mib: f64,
    peak_rss_mib: f64,
    first_search_ms: f64,
    #[serde(default)]
    service_recall_at_10: f64,
}

/// Runs the benchmark and prints a table.
pub async fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(!args.steps.is_empty(), "give at least one step (--steps)");
    anyhow::ensure!(
        args.points_per_record >= 1,
        "--points-per-record must be at least 1 (a record has at least one chunk)"
    );
    let embedder = embedder_dir(args.embedder.clone())?;
    let temp = tempfile::tempdir().context("temp dir")?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().join("bench"));
    fs_err::create_dir_all(&dir)?;
    // The store keeps every vector under the embedder's id, as the service does (the
    // retriever reads neighbours' vectors from it).
    let model_id = cairn_index::unit::vectors_id(cairn_core::ports::Embedder::model_id(
        &BertEmbedder::load(&embedder)?,
    ));
    let mut rng = Lcg(7);
    let mut vecs = Gen::low_rank(1, DIM);
    let mut have = 0usize;
    let mut rows = Vec::new();
    for (step, &target) in args.steps.iter().enumerate() {
        // Opened for each step and closed before the measuring process opens them (the
        // keyword index takes a writer lock).
        let store = Store::open(&dir.join("cairn.db")).await?;
        let text = TextIndex::open(&dir.join("text"))?;
        let vectors = open_vectors(&dir, args.remote.as_deref(), step == 0)?;
        vectors
            .ensure(DIM)
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        eprintln!(
            "growing the store to {target} records ({} vectors)…",
            target * args.points_per_record
        );
        let bar = indicatif::ProgressBar::new((target - have.min(target)) as u64);
        let t = Instant::now();
        while have < target {
            let n = 2_000.min(target - have);
            let mut records = Vec::with_capacity(n);
            let mut points = Vec::with_capacity(n * args.points_per_record);
            for i in have..have + n {
                let r = synthetic_record(&mut rng, i, &format!("p{}", i % 8));
                // As the service embeds a record: its chunks (cairn_recall::CHUNKS).
                for ord in 0..args.points_per_record {
                    points.push(record_point(
                        &r,
                        VectorKind::Chunk,
                        ord as u32,
                        vecs.vector(DIM),
                    ));
                }
                records.push((r, Vec::new()));
            }
            store.append_records(&records).await?;
            keep_vectors(&store, &points, &model_id).await?;
            vectors
                .upsert(&points)
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            have += n;
            bar.inc(n as u64);
        }
        bar.finish_and_clear();
        let load = t.elapsed();
        let t = Instant::now();
        text.sync(&store).await?;
        let indexed = t.elapsed();
        // The graph build's peak memory, from here.
        reset_peak_rss();
        let before_build = rss_mib();
        let t = Instant::now();
        vectors
            .optimize()
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        vectors
            .flush()
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        if let Some(url) = &args.remote {
            // The server builds its graph on its own: wait for it, as the time to build it.
            eprintln!("  waiting for the server to index the collection…");
            remote_index(url)?
                .wait_indexed(std::time::Duration::from_secs(3_600))
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        }
        let optimized = t.elapsed();
        let build_peak = status_mib("VmHWM:");
        eprintln!(
            "  loaded in {:.1} s, BM25 indexed in {:.1} s, HNSW built in {:.1} s (RSS {:.0} MiB \
             before the build, peak {:.0} MiB during it)",
            load.as_secs_f64(),
            indexed.as_secs_f64(),
            optimized.as_secs_f64(),
            before_build,
            build_peak
        );
        drop(text);
        drop(vectors);
        store.close().await?;
        let figures: Figures = super::measure(
            Command::new(std::env::current_exe()?)
                .args(["bench", "search-phase", "--queries"])
                .arg(args.queries.to_string())
                .arg("--dir")
                .arg(&dir)
                .arg("--embedder")
                .arg(&embedder)
                .args(
                    args.remote
                        .iter()
                        .flat_map(|url| ["--remote", url.as_str()]),
                )
                .args(
                    (!args.candidates.is_empty())
                        .then(|| {
                            let list: Vec<String> =
                                args.candidates.iter().map(|n| n.to_string()).collect();
                            ["--candidates".to_string(), list.join(",")]
                        })
                        .into_iter()
                        .flatten(),
                ),
        )?;
        if args.json {
            let f = &figures;
            println!(
                "{}",
                serde_json::to_string(&StepJson {
                    records: f.records,
                    points: f.points,
                    restart_s: f.restart_ms / 1000.0,
                    restart_store_s: f.open_store_ms / 1000.0,
                    restart_text_s: f.open_text_ms / 1000.0,
                    restart_vectors_s: f.open_vectors_ms / 1000.0,
                    rss_idle_mib: f.idle_rss_mib,
                    rss_after_mib: f.after_rss_mib,
                    rss_peak_mib: f.peak_rss_mib,
                    first_search_ms: f.first_search_ms,
                    recall_at_10: f.recall_at_10,
                    service_recall_at_10: f.service_recall_at_10,
                    fused_p50_ms: f.fused_p50_ms,
                    fused_p95_ms: f.fused_p95_ms,
                    vector_p50_ms: f.vector_p50_ms,
                    vector_p95_ms: f.vector_p95_ms,
                    exact_p50_ms: f.exact_p50_ms,
                    embed_p50_ms: f.embed_p50_ms,
                    stages_p50_ms: f.stages_p50_ms.clone(),
                    at_candidates: f.at_candidates.clone(),
                    graph_build_s: optimized.as_secs_f64(),
                    graph_build_peak_mib: build_peak,
                })?
            );
        }
        rows.push((figures, optimized, build_peak));
    }
    if args.json {
        return Ok(());
    }
    println!(
        "cairn bench search (synthetic store; real query embedding; release build; vectors {})",
        args.remote
            .as_deref()
            .map_or("embedded".to_string(), |url| format!(
                "on the Qdrant server {url}"
            ))
    );
    println!(
        "| records | points | restart (store / keywords / vectors) | RSS idle | 1 query vector p50 / p95 | exact p50 | recall@10 | fused query p50 / p95 (embedding p50) | RSS after (peak) | first search | graph build (peak RSS) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (f, built, build_peak) in &rows {
        println!(
            "| {} | {} | {:.2} s ({:.2} / {:.2} / {:.2}) | {:.0} MiB | {:.2} / {:.2} ms | {:.1} ms | {:.3} | {:.1} / {:.1} ms ({:.1} ms) | {:.0} MiB ({:.0} MiB) | {:.1} ms | {:.1} s ({:.0} MiB) |",
            f.records,
            f.points,
            f.restart_ms / 1000.0,
            f.open_store_ms / 1000.0,
            f.open_text_ms / 1000.0,
            f.open_vectors_ms / 1000.0,
            f.idle_rss_mib,
            f.vector_p50_ms,
            f.vector_p95_ms,
            f.exact_p50_ms,
            f.recall_at_10,
            f.fused_p50_ms,
            f.fused_p95_ms,
            f.embed_p50_ms,
            f.after_rss_mib,
            f.peak_rss_mib,
            f.first_search_ms,
            built.as_secs_f64(),
            build_peak
        );
    }
    println!(
        "\nWhere the fused query's time goes (median ms per stage; embed runs beside keyword):"
    );
    for (f, ..) in &rows {
        let parts: Vec<String> = f
            .stages_p50_ms
            .iter()
            .map(|(stage, v)| format!("{stage} {v:.1}"))
            .collect();
        println!("- {} records: {}", f.records, parts.join(", "));
        println!(
            "  the retriever's vector search (pool {}, {} re-scored) holds {:.3} of the exact ten nearest in its first ten",
            Tuning::default().pool,
            Tuning::default().candidates,
            f.service_recall_at_10
        );
    }
    for (f, ..) in rows.iter().filter(|(f, ..)| !f.at_candidates.is_empty()) {
        println!(
            "\nThe service query at {} records by candidates re-scored per kind of vector (the service re-scores {}):",
            f.records,
            Tuning::default().candidates
        );
        println!(
            "| candidates | fused p50 / p95 | vector search p50 | top 10 as at the default | vector top 10 against exact |"
        );
        println!("|---|---|---|---|---|");
        for c in &f.at_candidates {
            println!(
                "| {} | {:.1} / {:.1} ms | {:.1} ms | {:.3} | {:.3} |",
                c.candidates,
                c.fused_p50_ms,
                c.fused_p95_ms,
                c.vectors_p50_ms,
                c.agree_at_10,
                c.recall_at_10
            );
        }
    }
    if let [(first, ..), .., (last, ..)] = rows.as_slice() {
        let x = |a: f64, b: f64| b / a;
        println!(
            "growth {}→{} records: restart ×{:.1}, RSS idle ×{:.1}, query vector p50 ×{:.1}, fused p50 ×{:.1}",
            first.records,
            last.records,
            x(first.restart_ms, last.restart_ms),
            x(first.idle_rss_mib, last.idle_rss_mib),
            x(first.vector_p50_ms, last.vector_p50_ms),
            x(first.fused_p50_ms, last.fused_p50_ms)
        );
    }
    Ok(())
}

/// The measuring half, in a fresh process: prints one JSON object of [`Figures`].
pub async fn phase(
    dir: &Path,
    queries: usize,
    embedder: &Path,
    candidates: &[usize],
    remote: Option<&str>,
) -> anyhow::Result<()> {
    let t = Instant::now();
    let store = Store::open(&dir.join("cairn.db")).await?;
    let open_store = t.elapsed();
    let text = TextIndex::open(&dir.join("text"))?;
    let open_text = t.elapsed() - open_store;
    let vectors = open_vectors(dir, remote, false)?;
    let restart = t.elapsed();
    let open_vectors = restart - open_store - open_text;
    let records = store.counts().await?.records;
    let points = vectors
        .count()
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let idle = rss_mib();

    let mut vecs = Gen::low_rank(0xfeed, DIM);
    let mut times = Vec::new();
    let mut exact_times = Vec::new();
    let mut recall = 0.0;
    // Each query vector with its exact ten nearest, for the retriever's vector search below.
    let mut probes: Vec<(Vec<f32>, Nearest)> = Vec::with_capacity(queries);
    let all = VectorFilter::default();
    let err = |e: cairn_core::ports::BackendError| anyhow::anyhow!("{}", e.message);
    for _ in 0..queries {
        let v = vecs.vector(DIM);
        let kind = VectorKind::Chunk;
        let t = Instant::now();
        let approx = vectors.search(kind, &v, &all, 10, false).map_err(err)?;
        times.push(ms(t.elapsed()));
        let t = Instant::now();
        let exact = vectors.search(kind, &v, &all, 10, true).map_err(err)?;
        exact_times.push(ms(t.elapsed()));
        let want: Nearest = exact.iter().map(|h| (h.owner.clone(), h.ord)).collect();
        recall += approx
            .iter()
            .filter(|h| want.contains(&(h.owner.clone(), h.ord)))
            .count() as f64
            / exact.len().max(1) as f64;
        probes.push((v, want));
    }
    // The retriever's own vector search (its pool, re-scoring `candidates`): how many of the
    // exact ten nearest its first ten hold.
    let pool = Tuning::default().pool;
    let retriever_recall = |candidates: usize| -> anyhow::Result<f64> {
        let mut sum = 0.0;
        for (v, want) in &probes {
            let hits = vectors
                .search_rescoring(VectorKind::Chunk, v, &all, pool, candidates)
                .map_err(err)?;
            sum += hits
                .iter()
                .take(10)
                .filter(|h| want.contains(&(h.owner.clone(), h.ord)))
                .count() as f64
                / want.len().max(1) as f64;
        }
        Ok(sum / probes.len().max(1) as f64)
    };
    let service_recall_at_10 = retriever_recall(Tuning::default().candidates)?;
    let first_search_ms = times.first().copied().unwrap_or(f64::NAN);
    times.sort_by(f64::total_cmp);
    exact_times.sort_by(f64::total_cmp);

    let model = BertEmbedder::load(embedder)?;
    // The first call warms the model up; it is not counted.
    model
        .embed(&["warm up"])
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    // The service's own query path: the retriever over the store, its keyword index and
    // its vectors (neighbours, sessions and hit text read from the store).
    let model: std::sync::Arc<dyn cairn_core::ports::Embedder> = std::sync::Arc::new(model);
    let retriever = Retriever {
        corpora: vec![Corpus {
            text: std::sync::Arc::new(text),
            vectors: Some(vectors.clone()),
            keep: None,
            store: Some(store.clone()),
            before: None,
            kinds: cairn_recall::CHUNKS,
        }],
        embedder: Some(model.clone()),
        reranker: None,
        tuning: Tuning::default(),
    };
    // The peak is measured over the service's own load from here (models loaded): the
    // exact searches above, which only this benchmark runs over a whole kind, map every full
    // vector of it.
    reset_peak_rss();
    let mut rng = Lcg(99);
    let mut fused = Vec::new();
    let mut embed = Vec::new();
    let mut stages = super::StageTimes::default();
    let mut asked = Vec::with_capacity(queries);
    let mut top10 = Vec::with_capacity(queries);
    for _ in 0..queries {
        let n = 2 + rng.next(5);
        let words = rng.words(n);
        let t = Instant::now();
        model
            .embed(&[words.as_str()])
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        embed.push(ms(t.elapsed()));
        let t = Instant::now();
        let (hits, notes) = retriever
            .search(&Query {
                text: TextQuery::new(&words, 20),
                mode: SearchMode::Hybrid,
                rerank: false,
                now: chrono::Utc::now(),
                recent_project: None,
            })
            .await?;
        fused.push(ms(t.elapsed()));
        stages.add(&notes.stages)?;
        top10.push(first_ten(&hits));
        asked.push(words);
    }
    fused.sort_by(f64::total_cmp);
    embed.sort_by(f64::total_cmp);
    // The same queries again at each other number of candidates re-scored per kind.
    let mut at_candidates = Vec::new();
    for &n in candidates {
        let retriever = Retriever {
            tuning: Tuning {
                candidates: n,
                ..Tuning::default()
            },
            ..retriever.clone()
        };
        let (mut took, mut dense, mut agree) = (Vec::new(), Vec::new(), 0.0);
        for (words, before) in asked.iter().zip(&top10) {
            let t = Instant::now();
            let (hits, notes) = retriever
                .search(&Query {
                    text: TextQuery::new(words, 20),
                    mode: SearchMode::Hybrid,
                    rerank: false,
                    now: chrono::Utc::now(),
                    recent_project: None,
                })
                .await?;
            took.push(ms(t.elapsed()));
            let s = &notes.stages;
            dense.push(s.vector_chunk + s.vector_summary + s.vector_cue);
            let now = first_ten(&hits);
            agree += now.iter().filter(|id| before.contains(id)).count() as f64
                / before.len().max(1) as f64;
        }
        took.sort_by(f64::total_cmp);
        dense.sort_by(f64::total_cmp);
        at_candidates.push(AtCandidates {
            candidates: n,
            fused_p50_ms: pct(&took, 0.5),
            fused_p95_ms: pct(&took, 0.95),
            vectors_p50_ms: pct(&dense, 0.5),
            agree_at_10: agree / asked.len().max(1) as f64,
            recall_at_10: retriever_recall(n)?,
        });
    }
    let figures = Figures {
        records,
        points,
        restart_ms: ms(restart),
        open_store_ms: ms(open_store),
        open_text_ms: ms(open_text),
        open_vectors_ms: ms(open_vectors),
        idle_rss_mib: idle,
        vector_p50_ms: pct(&times, 0.5),
        vector_p95_ms: pct(&times, 0.95),
        exact_p50_ms: pct(&exact_times, 0.5),
        recall_at_10: recall / queries as f64,
        fused_p50_ms: pct(&fused, 0.5),
        fused_p95_ms: pct(&fused, 0.95),
        embed_p50_ms: pct(&embed, 0.5),
        stages_p50_ms: stages.p50(),
        after_rss_mib: rss_mib(),
        peak_rss_mib: status_mib("VmHWM:"),
        first_search_ms,
        at_candidates,
        service_recall_at_10,
    };
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

/// The ids of a result's first ten hits.
fn first_ten(hits: &[cairn_recall::Hit]) -> Vec<String> {
    hits.iter()
        .take(10)
        .map(|h| h.hit.record_id.clone())
        .collect()
}
