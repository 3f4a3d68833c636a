//! Measures the embedded index at scale: build time, RSS, query latency (quantized with
//! re-scoring), restart (open) time and recall@10 of the quantized search against exact.
//!
//! ```text
//! cargo run --release -p cairn-vectors --example embedded_bench -- [--points 150000]
//!     [--dim 384] [--queries 500] [--dir PATH] [--no-optimize] [--data lowrank]
//!     [--sweep 200,400,800] [--reuse]
//! ```
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
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--points" => out.points = it.next().unwrap().parse().unwrap(),
            "--dim" => out.dim = it.next().unwrap().parse().unwrap(),
            "--queries" => out.queries = it.next().unwrap().parse().unwrap(),
            "--dir" => out.dir = Some(PathBuf::from(it.next().unwrap())),
            "--phase" => out.phase_query = it.next().unwrap() == "query",
            "--no-optimize" => out.optimize = false,
            "--data" => out.lowrank = it.next().unwrap() == "lowrank",
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
    out
}

fn gen_for(seed: u64, args: &Args) -> Gen {
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

/// Resident and peak memory in MiB (Linux).
fn rss_mib() -> (Option<f64>, Option<f64>) {
    let Ok(status) = fs_err::read_to_string("/proc/self/status") else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn show_rss(label: &str) {
    match rss_mib() {
        (Some(rss), Some(peak)) => println!("{label}: RSS {rss:.0} MiB (peak {peak:.0} MiB)"),
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
        .args(["--data", if args.lowrank { "lowrank" } else { "random" }])
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
