//! `cairn bench …`: benchmarks that print figures (never asserted in tests: these machines
//! are shared and noisy). Run them on a release build:
//! `cargo run --release -p cairn-cli -- bench capture`.
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_capture::Env;
use cairn_capture::pass::{PassOptions, run};
use cairn_core::{Chunk, NewRecord, Outcome, RecordId};
use cairn_index::{TextIndex, TextQuery};
use cairn_store::Store;

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
    let status = fs_err::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn claude_turn(rng: &mut Lcg, session: &str, turn: usize, minute: usize) -> String {
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
        serde_json::json!({"type":"user","uuid":format!("{u}-r"),"parentUuid":format!("{a}-1"),"sessionId":session,"timestamp":ts(4),"cwd":"/home/dev/projects/bench","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tool,"content":rng.words(40)}]}}),
        serde_json::json!({"type":"assistant","uuid":format!("{a}-2"),"parentUuid":format!("{u}-r"),"sessionId":session,"timestamp":ts(6),"cwd":"/home/dev/projects/bench","message":{"id":format!("m2-{a}"),"role":"assistant","model":"claude-bench","content":[{"type":"text","text":rng.words(60)}],"stop_reason":"end_turn"}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn pass_options(home: &Path) -> PassOptions {
    PassOptions {
        env: Env::fake(home, &[]),
        only: vec!["claude-code".into()],
        disabled: Vec::new(),
        settle: Duration::from_secs(20),
        internal_dirs: Vec::new(),
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
