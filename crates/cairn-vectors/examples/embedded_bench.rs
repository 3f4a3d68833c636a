//! Measures the embedded index at scale: build time, RSS, query latency (quantized with
//! re-scoring), restart (open) time and recall@10 of the quantized search against exact.
//!
//! ```text
//! cargo run --release -p cairn-vectors --example embedded_bench -- [--points 150000]
//!     [--dim 384] [--queries 500] [--dir PATH] [--no-optimize] [--data lowrank]
//!     [--sweep 200,400,800] [--reuse] [--data real:VECTORS]
//! cargo run --release -p cairn-vectors --example embedded_bench -- --embed LOCOMO.json
//!     --model MINILM_DIR --out VECTORS
//! ```
//!
//! `--data real:VECTORS` makes every point and query from real text embeddings (a file of
//! little-endian f32 unit vectors of `--dim` each), three of them mixed at random per point
//! ([`Gen::from_real`]). `--embed` writes such a file: every turn and question of a
//! LoCoMo-format file, embedded with the model in `--model` (all-MiniLM-L6-v2).
//!
//! `--sweep` measures recall@10 and latency once per number of candidates re-scored (the
//! HNSW beam is as wide), side by side in one process. `--reuse` measures the index already
//! in `--dir` without building it again.
//!
//! It builds the index in this process, then starts itself again (`--phase query`) to
//! measure a cold open, RSS and queries in a fresh process. Without `--dir` it works in a
//! temporary folder, removed at the end. Linux reports RSS from `/proc/self/status`.
#![allow(clippy::unwrap_used, reason = "a measurement tool: fail loudly")]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_core::VectorKind;
use cairn_core::ports::{PointPayload, VectorFilter, VectorIndex, VectorPoint};
use cairn_vectors::EmbeddedIndex;
use cairn_vectors::synthetic::Gen;

const KINDS: [VectorKind; 3] = [VectorKind::Summary, VectorKind::Chunk, VectorKind::Cue];
const PROJECTS: [&str; 8] = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];

struct Args {
    points: usize,
    dim: usize,
    queries: usize,
    dir: Option<PathBuf>,
    phase_query: bool,
    optimize: bool,
    /// Vectors with a low intrinsic dimension (closer to real text embeddings) instead of
    /// uniformly random ones (the worst case for 1-bit codes and for HNSW).
    lowrank: bool,
    smaps: bool,
    /// Numbers of re-scored candidates to compare (empty: the index's default only).
    sweep: Vec<usize>,
    /// Measure the index in `--dir` as it is.
    reuse: bool,
    /// Real embeddings to make the points from (`--data real:FILE`).
    real: Option<PathBuf>,
    /// `--embed FILE --model DIR --out FILE`: write real embeddings and stop.
    embed: Option<(PathBuf, PathBuf, PathBuf)>,
}

fn args() -> Args {
    let mut out = Args {
        points: 150_000,
        dim: 384,
        queries: 500,
        dir: None,
        phase_query: false,
        optimize: true,
        lowrank: false,
        smaps: false,
        sweep: Vec::new(),
        reuse: false,
        real: None,
        embed: None,
    };
    let (mut embed_from, mut model, mut out_file) = (None, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--points" => out.points = it.next().unwrap().parse().unwrap(),
            "--dim" => out.dim = it.next().unwrap().parse().unwrap(),
            "--queries" => out.queries = it.next().unwrap().parse().unwrap(),
            "--dir" => out.dir = Some(PathBuf::from(it.next().unwrap())),
            "--phase" => out.phase_query = it.next().unwrap() == "query",
            "--no-optimize" => out.optimize = false,
            "--data" => {
                let data = it.next().unwrap();
                out.lowrank = data == "lowrank";
                out.real = data.strip_prefix("real:").map(PathBuf::from);
            }
            "--embed" => embed_from = Some(PathBuf::from(it.next().unwrap())),
            "--model" => model = Some(PathBuf::from(it.next().unwrap())),
            "--out" => out_file = Some(PathBuf::from(it.next().unwrap())),
            "--smaps" => out.smaps = true,
            "--sweep" => {
                out.sweep = it
                    .next()
                    .unwrap()
                    .split(',')
                    .map(|n| n.trim().parse().unwrap())
                    .collect();
            }
            "--reuse" => out.reuse = true,
            other => panic!("unknown argument {other}"),
        }
    }
    if let Some(from) = embed_from {
        out.embed = Some((
            from,
            model.expect("--embed needs --model DIR"),
            out_file.expect("--embed needs --out FILE"),
        ));
    }
    out
}

/// The real embeddings in `path` (little-endian f32, `dim` per vector).
fn read_real(path: &Path, dim: usize) -> std::sync::Arc<Vec<Vec<f32>>> {
    let bytes = fs_err::read(path).unwrap();
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert!(
        !floats.is_empty() && floats.len().is_multiple_of(dim),
        "{} does not hold vectors of {dim} dimensions",
        path.display()
    );
    std::sync::Arc::new(floats.chunks(dim).map(<[f32]>::to_vec).collect())
}

/// Embeds every turn (`speaker: text`) and question of a LoCoMo-format file and writes the
/// vectors to `out`.
fn embed(from: &Path, model: &Path, out: &Path) {
    use qdrant_edge::external::serde_json::{self, Value};
    let data: Value = serde_json::from_str(&fs_err::read_to_string(from).unwrap()).unwrap();
    let mut texts = Vec::new();
    for sample in data.as_array().expect("a LoCoMo file is a list of samples") {
        if let Some(conv) = sample.get("conversation").and_then(Value::as_object) {
            for turns in conv.values().filter_map(Value::as_array) {
                for turn in turns {
                    let speaker = turn.get("speaker").and_then(Value::as_str).unwrap_or("");
                    if let Some(text) = turn.get("text").and_then(Value::as_str) {
                        texts.push(format!("{speaker}: {text}"));
                    }
                }
            }
        }
        for qa in sample
            .get("qa")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(q) = qa.get("question").and_then(Value::as_str) {
                texts.push(q.to_string());
            }
        }
    }
    let embedder = cairn_models::BertEmbedder::load(model).unwrap();
    let started = Instant::now();
    let mut bytes = Vec::new();
    for batch in texts.chunks(64) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        for v in embedder.embed_texts(&refs).unwrap() {
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
    }
    fs_err::write(out, bytes).unwrap();
    println!(
        "embedded {} texts in {:.1} s into {}",
        texts.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
}

fn gen_for(seed: u64, args: &Args) -> Gen {
    if let Some(path) = &args.real {
        return Gen::from_real(seed, read_real(path, args.dim));
    }
    if args.lowrank {
        Gen::low_rank(seed, args.dim)
    } else {
        Gen::random(seed)
    }
}

/// The largest mappings by resident size (Linux), to see where the memory goes.
fn show_smaps(top: usize) {
    let Ok(smaps) = fs_err::read_to_string("/proc/self/smaps") else {
        return;
    };
    let mut by_name: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut name = String::new();
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            let path = line.split_whitespace().nth(5).unwrap_or("[anon]");
            // Keep the last three path parts: segment-level detail without the temp prefix.
            let parts: Vec<&str> = path.rsplit('/').take(3).collect();
            name = parts.into_iter().rev().collect::<Vec<_>>().join("/");
        } else if let Some(rest) = line.strip_prefix("Rss:") {
            let kb: u64 = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            *by_name.entry(name.clone()).or_default() += kb;
        }
    }
    let mut rows: Vec<_> = by_name.into_iter().collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.1));
    for (name, kb) in rows.into_iter().take(top) {
        println!("    {:>7.1} MiB  {name}", kb as f64 / 1024.0);
    }
}

/// RSS, peak RSS, and the RSS's anonymous and file-backed parts.
fn rss_mib() -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let Ok(status) = fs_err::read_to_string("/proc/self/status") else {
        return (None, None, None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (
        field("VmRSS:"),
        field("VmHWM:"),
        field("RssAnon:"),
        field("RssFile:"),
    )
}

fn show_rss(label: &str) {
    match rss_mib() {
        (Some(rss), Some(peak), Some(anon), Some(file)) => println!(
            "{label}: RSS {rss:.0} MiB (peak {peak:.0} MiB; anonymous {anon:.0}, file-backed {file:.0})"
        ),
        _ => println!("{label}: RSS not available on this platform"),
    }
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in fs_err::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            dir_size(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn latencies(
    index: &EmbeddedIndex,
    args: &Args,
    filter: &VectorFilter,
    exact: bool,
    n: usize,
) -> (f64, f64) {
    let mut rng = gen_for(0xbeef, args);
    let mut times = Vec::with_capacity(n);
    for q in 0..n {
        let query = rng.vector(args.dim);
        let started = Instant::now();
        let hits = index
            .search(KINDS[q % 3], &query, filter, 10, exact)
            .unwrap();
        times.push(ms(started.elapsed()));
        assert!(!hits.is_empty());
    }
    times.sort_by(f64::total_cmp);
    (percentile(&times, 0.5), percentile(&times, 0.95))
}

fn build(args: &Args, dir: &Path) {
    let started = Instant::now();
    let index = EmbeddedIndex::create(dir).unwrap();
    index.ensure(args.dim).unwrap();
    let mut rng = gen_for(1, args);
    let mut batch = Vec::with_capacity(1000);
    for i in 0..args.points {
        let kind = KINDS[i % 3];
        batch.push(VectorPoint {
            owner: format!("owner-{}", i / 3),
            vector_kind: kind,
            ord: 0,
            vector: rng.vector(args.dim),
            payload: PointPayload {
                project: Some(PROJECTS[i % PROJECTS.len()].to_string()),
                framework: Some("claude-code".into()),
                kind: Some("record".into()),
                session: Some(format!("s{}", i / 500)),
                timestamp_ms: 1_700_000_000_000 + i as i64,
            },
        });
        if batch.len() == 1000 {
            index.upsert(&batch).unwrap();
            batch.clear();
        }
    }
    index.upsert(&batch).unwrap();
    index.flush().unwrap();
    println!(
        "built {} points of dim {} in {:.1} s",
        args.points,
        args.dim,
        started.elapsed().as_secs_f64()
    );
    show_rss("after load (building process)");
    let (p50, p95) = latencies(&index, args, &VectorFilter::default(), false, 200);
    println!(
        "before optimize (appendable segment, scan of 1-bit codes): p50 {p50:.2} ms, p95 {p95:.2} ms"
    );
    if args.optimize {
        let started = Instant::now();
        index.optimize().unwrap();
        index.flush().unwrap();
        println!(
            "optimize (HNSW over the codes): {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    drop(index);
    let shards = dir.join("shards");
    let wal: u64 = ["summary", "chunk", "cue"]
        .iter()
        .map(|k| dir_size(&shards.join(k).join("wal")))
        .sum();
    println!(
        "on disk: {:.0} MiB (of which WAL {:.0} MiB)",
        dir_size(dir) as f64 / 1048576.0,
        wal as f64 / 1048576.0
    );
}

fn query(args: &Args, dir: &Path) {
    show_rss("fresh process before open");
    let started = Instant::now();
    let index = EmbeddedIndex::open(dir).unwrap();
    let opened = started.elapsed();
    let count = index.count().unwrap();
    println!("restart: open {:.0} ms ({} points)", ms(opened), count);
    show_rss("after open");
    if args.smaps {
        show_smaps(12);
    }
    let (p50, p95) = latencies(&index, args, &VectorFilter::default(), false, args.queries);
    println!("query (1 vector, top 10, quantized + re-scoring): p50 {p50:.2} ms, p95 {p95:.2} ms");
    show_rss("after queries");
    if args.smaps {
        show_smaps(12);
    }
    let filter = VectorFilter {
        project: Some("p3".into()),
        ..Default::default()
    };
    let (p50, p95) = latencies(&index, args, &filter, false, args.queries);
    println!("query with a project filter (1/8 of points): p50 {p50:.2} ms, p95 {p95:.2} ms");
    let (p50, p95) = latencies(&index, args, &VectorFilter::default(), true, 50);
    println!("exact query (full vectors, no quantization): p50 {p50:.2} ms, p95 {p95:.2} ms");

    if args.sweep.is_empty() {
        let recall = recall_at_10(&index, args, 200);
        println!("recall@10 quantized vs exact (200 queries): {recall:.3}");
    }
    for &candidates in &args.sweep {
        index.set_min_candidates(candidates);
        let (p50, p95) = latencies(&index, args, &VectorFilter::default(), false, args.queries);
        let recall = recall_at_10(&index, args, 200);
        println!(
            "{candidates} candidates re-scored: recall@10 {recall:.3}, p50 {p50:.2} ms, p95 {p95:.2} ms"
        );
    }
    show_rss("at the end");
}

/// Mean recall@10 of the quantized search against exact search over `n` queries.
fn recall_at_10(index: &EmbeddedIndex, args: &Args, n: usize) -> f64 {
    let mut rng = gen_for(0xfeed, args);
    let mut recall = 0.0;
    for q in 0..n {
        let query = rng.vector(args.dim);
        let kind = KINDS[q % 3];
        let exact = index
            .search(kind, &query, &VectorFilter::default(), 10, true)
            .unwrap();
        let approx = index
            .search(kind, &query, &VectorFilter::default(), 10, false)
            .unwrap();
        let want: HashSet<_> = exact.iter().map(|h| (h.owner.clone(), h.ord)).collect();
        recall += approx
            .iter()
            .filter(|h| want.contains(&(h.owner.clone(), h.ord)))
            .count() as f64
            / 10.0;
    }
    recall / n as f64
}

fn main() {
    let args = args();
    if let Some((from, model, out)) = &args.embed {
        embed(from, model, out);
        return;
    }
    if args.phase_query {
        query(&args, args.dir.as_deref().unwrap());
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().join("index"));
    if !args.reuse {
        build(&args, &dir);
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--phase",
            "query",
            "--dim",
            &args.dim.to_string(),
            "--queries",
            &args.queries.to_string(),
        ])
        .args([
            "--data".to_string(),
            match &args.real {
                Some(path) => format!("real:{}", path.display()),
                None if args.lowrank => "lowrank".to_string(),
                None => "random".to_string(),
            },
        ])
        .args(args.smaps.then_some("--smaps"))
        .args(
            (!args.sweep.is_empty())
                .then(|| {
                    let list: Vec<String> = args.sweep.iter().map(|n| n.to_string()).collect();
                    ["--sweep".to_string(), list.join(",")]
                })
                .into_iter()
                .flatten(),
        )
        .arg("--dir")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
}
