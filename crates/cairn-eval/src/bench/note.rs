//! `cairn bench note`: the turn note at scale, and the hook's round trip.
//!
//! A synthetic store of N records (80 words each, `crate::bench::synthetic_record`) is
//! built at the service's own paths in a temporary home: the store, the keyword index, and
//! the embedded vector index with one synthetic low-rank vector per record (what the
//! service's dense sync makes for a record without chunks), kept in the store under the
//! embedder's vectors id as the service keeps them, the HNSW graph built, and the dense
//! state marked as synced so nothing is re-embedded. A real service (the models the
//! settings name, the real MiniLM embedder) then answers `turn_note` as a dry run for each
//! prompt — realistic coding prompts, prompts of the records' words at random, and requests
//! about one stored record of the asking project (eight of its words in a row) — and the
//! service's `latency_ms` and the wall time are reported with the process's RSS.
//!
//! The hook's round trip is measured as the agent sees it: `cairn hook claude-code
//! UserPromptSubmit` as a child process, from spawn to exit, first with the service down (an
//! empty home, no `service.json`), then with `cairn daemon` serving the synthetic store and
//! publishing the hooks' deadline (`hook.deadline_ms`, or `--deadline`). The records sit in
//! projects named as the hook names its working folder, so the hook asks under a project
//! the store holds. Each prompt is then asked again without a deadline (a dry run through
//! `cairn turn-note`): the notes the service decided on, against those the hook delivered.
//! `--load` runs a CPU hog on every core beside the hooks, as a build beside the agent would.
//!
//! Nothing here is asserted: these are figures (use a release build).
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_api::{Host as ServiceHost, Service, ServiceOptions};
use cairn_config::{Paths, Settings};
use cairn_core::VectorKind;
use cairn_core::api::TurnNoteReq;
use cairn_core::ports::VectorIndex;
use cairn_index::TextIndex;
use cairn_store::Store;
use cairn_vectors::EmbeddedIndex;
use cairn_vectors::synthetic::Gen;
use serde::Serialize;

use super::{Lcg, keep_vectors, ms, pct, record_point, rss_mib, synthetic_record};

/// The embedder's dimension (all-MiniLM-L6-v2).
pub(crate) const DIM: usize = 384;
/// The store setting where the service keeps how far its dense index is (`dense.rs`).
const DENSE_STATE_KEY: &str = "index.dense";
/// Hook runs per measurement.
const HOOK_RUNS: usize = 30;
/// Hook runs with a CPU hog beside them (enough for a 99th percentile).
const HOOK_RUNS_LOADED: usize = 200;
/// Projects the synthetic records are spread over.
pub(crate) const PROJECTS: usize = 8;

/// The working folder of the `p`-th project, and the project as the hook names it.
pub(crate) fn project_dirs() -> Vec<(String, String)> {
    (0..PROJECTS)
        .map(|p| {
            let cwd = format!("/home/dev/projects/p{p}");
            let project = cairn_text::project::identify(Path::new(&cwd));
            (cwd, project)
        })
        .collect()
}

/// Prompts an agent's user might send at the start of a turn.
const PROMPTS: [&str; 24] = [
    "fix the flaky auth session test, it fails about one run in ten on CI",
    "why does the redis cache return stale tokens after a deploy?",
    "add a retry with backoff to the http client when the server answers 503",
    "refactor the route handler so parsing the json body happens in one place",
    "the benchmark regressed after the dependency upgrade, can you find out why",
    "rename the module and update every import in the workspace",
    "what did we decide about the cookie header for the session token?",
    "write a migration that adds an index on the events table",
    "the borrow checker complains about the lifetime in the parser struct, help",
    "roll back the last upgrade of the serde crate and pin the version",
    "how do I run only the integration tests of this crate?",
    "the latency metrics span is missing from the traces, where did it go",
    "make the server shut down gracefully on SIGTERM",
    "continue with the refactor we started yesterday",
    "ok thanks",
    "can you explain what this generic trait bound does",
    "set up the cache eviction policy like we discussed last week",
    "the deploy script fails with permission denied on the key file",
    "add tests for the enum parsing edge cases",
    "why is the workspace build so slow on this machine",
    "update the README with the new config options",
    "the handler leaks a connection when auth fails, fix it",
    "review this diff for error handling problems",
    "what port does the dev server listen on again?",
];

/// What to measure.
#[derive(Debug, Clone)]
pub struct Args {
    /// Records in the synthetic store.
    pub records: usize,
    /// Turn notes asked.
    pub queries: usize,
    /// A CPU hog on every core beside the hook runs.
    pub load: bool,
    /// The hooks' deadline the daemon publishes.
    pub deadline_ms: u32,
    /// Hook runs with the service up (`None`: 30, or 200 with `load`).
    pub runs: Option<usize>,
    /// Print one JSON object instead of the table.
    pub json: bool,
}

/// The figures.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    records: u64,
    queries: u64,
    build_s: f64,
    note_p50_ms: f64,
    note_p95_ms: f64,
    note_max_ms: f64,
    wall_p50_ms: f64,
    wall_p95_ms: f64,
    candidates_mean: f64,
    noted_share: f64,
    rss_mib: f64,
    hook_down_runs: u64,
    hook_down_silent: u64,
    hook_down_p50_ms: f64,
    hook_down_p95_ms: f64,
    hook_down_max_ms: f64,
    hook_deadline_ms: u32,
    hook_load: bool,
    hook_up_runs: u64,
    hook_up_ok: u64,
    /// Runs that exited cleanly before the deadline (their answer, note or silence, whole).
    hook_up_in_time: u64,
    hook_up_noted: u64,
    hook_up_decided: u64,
    hook_up_delivered: u64,
    hook_up_p50_ms: Option<f64>,
    hook_up_p95_ms: Option<f64>,
    hook_up_p99_ms: Option<f64>,
    hook_up_max_ms: Option<f64>,
    hook_up_skipped_because: Option<String>,
}

pub(crate) fn backend(e: cairn_core::ports::BackendError) -> anyhow::Error {
    anyhow::anyhow!("vector index: {}", e.message)
}

/// The settings a benchmark's service runs with: the user's, over the embedded vector index
/// (a benchmark's synthetic home never writes to a remote one).
pub(crate) fn embedded(settings: &Settings) -> Settings {
    let mut settings = settings.clone();
    settings.index.backend = "embedded".into();
    settings
}

pub(crate) fn options(paths: &Paths, settings: &Settings) -> ServiceOptions {
    ServiceOptions {
        paths: paths.clone(),
        settings: settings.clone(),
        config_file: paths.config_file(),
        host: ServiceHost::Direct,
        serve_http: false,
        ui_dir: None,
    }
}

/// The vectors id the service keeps its vectors under: a service over the empty home loads
/// its models, embeds the first record for real (creating the vector index) and records it.
pub(crate) async fn vectors_id(
    paths: &Paths,
    settings: &Settings,
    first: cairn_core::NewRecord,
) -> anyhow::Result<String> {
    let service = Service::load(&options(paths, settings))
        .await
        .map_err(|e| anyhow::anyhow!("cannot start a service in the temporary home: {e}"))?;
    service
        .store()
        .append_records(&[(first, Vec::new())])
        .await?;
    service
        .sync_dense()
        .await
        .map_err(|e| anyhow::anyhow!("cannot load the embedding model: {e}"))?;
    let state = service
        .store()
        .setting::<serde_json::Value>(DENSE_STATE_KEY)
        .await?
        .map(|(v, _)| v);
    let id = state
        .as_ref()
        .and_then(|s| s["model"].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .context(
            "the service loaded no embedding model: set models.embedder (or \
             CAIRN__MODELS__EMBEDDER) to a folder with model.safetensors, config.json and \
             tokenizer.json, or allow models.download",
        )?;
    drop(service);
    Ok(id)
}

/// Grows the synthetic store at the service's paths to `n` records (the first is there
/// already); returns how long it took.
pub(crate) async fn build(
    paths: &Paths,
    settings: &Settings,
    model: &str,
    rng: &mut Lcg,
    n: usize,
    projects: &[(String, String)],
    quiet: bool,
) -> anyhow::Result<(Duration, Held)> {
    let started = Instant::now();
    let mut held: Held = vec![Vec::new(); PROJECTS];
    // The records prompts ask about carry their real embedding (the others a synthetic
    // vector), so such a prompt finds its record by meaning as well as by words, as a real
    // one would.
    // The service's own embedder, as its settings name it.
    let embedder = cairn_api::models_for_eval(paths, settings)
        .await
        .0
        .context("the settings name no embedding model the benchmark can load")?;
    let store = Store::open(&paths.database()).await?;
    let text = TextIndex::open(&paths.index_dir().join("text"))?;
    let vectors = EmbeddedIndex::open(&paths.index_dir().join("vectors")).map_err(backend)?;
    vectors.ensure(DIM).map_err(backend)?;
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(n as u64)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} records {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("(store and vectors)");
    let mut vecs = Gen::low_rank(1, DIM);
    let mut have = 1usize;
    bar.inc(1);
    while have < n {
        let step = 2_000.min(n - have);
        let mut records = Vec::with_capacity(step);
        let mut points = Vec::with_capacity(step);
        for i in have..have + step {
            let r = synthetic_record(rng, i, &projects[i % PROJECTS].1);
            let vector = if i % HELD_EVERY == 1 {
                held[i % PROJECTS].push(r.text.clone());
                let text = cairn_index::unit::embed_text(&r, &r.text);
                embedder
                    .embed(&[text.as_str()])
                    .map_err(backend)?
                    .pop()
                    .context("the embedder returned no vector")?
            } else {
                vecs.vector(DIM)
            };
            points.push(record_point(&r, VectorKind::Chunk, 0, vector));
            records.push((r, Vec::new()));
        }
        store.append_records(&records).await?;
        keep_vectors(&store, &points, model).await?;
        vectors.upsert(&points).map_err(backend)?;
        have += step;
        bar.inc(step as u64);
    }
    bar.set_message("(keyword index)");
    text.sync(&store).await?;
    bar.set_message("(HNSW graph)");
    vectors.optimize().map_err(backend)?;
    vectors.flush().map_err(backend)?;
    bar.finish_and_clear();
    // The dense index is up to date with the log: the service embeds nothing at start.
    store
        .set_setting(
            DENSE_STATE_KEY,
            &serde_json::json!({"model": model, "seq": text.indexed_seq()}),
        )
        .await?;
    drop(text);
    drop(vectors);
    store.close().await?;
    Ok((started.elapsed(), held))
}

/// Of the records the store is built from, every `HELD_EVERY`-th is kept (per project) for
/// prompts that ask about it.
const HELD_EVERY: usize = 997;

/// The texts of some stored records, by project (the index of [`project_dirs`]).
pub(crate) type Held = Vec<Vec<String>>;

/// The `i`-th prompt, asked from project `i % PROJECTS`: a third realistic requests, a third
/// the records' words at random, and a third a request about one stored record of that
/// project (eight of its words in a row: a turn whose answer the memory holds, so the note
/// has something to show and its delivery is measured on notes).
fn prompt(i: usize, rng: &mut Lcg, held: &Held) -> String {
    let of_project = &held[i % PROJECTS];
    match i % 3 {
        0 => PROMPTS[(i / 3) % PROMPTS.len()].to_owned(),
        2 if !of_project.is_empty() => {
            let text = &of_project[(i / 3) % of_project.len()];
            let words: Vec<&str> = text.split_whitespace().collect();
            let start = rng.next(words.len().saturating_sub(8).max(1));
            words[start..(start + 8).min(words.len())].join(" ")
        }
        _ => {
            let n = 4 + rng.next(12);
            rng.words(n)
        }
    }
}

/// `cairn` (this program) over the synthetic home: its `CAIRN_HOME`, a user home of its own,
/// no recursion guard and no log filter inherited from the benchmark's environment.
fn cairn(exe: &Path, home: &Path, fake_home: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.env("CAIRN_HOME", home)
        .env("HOME", fake_home)
        .env_remove(cairn_config::RECURSION_GUARD)
        .env_remove("CAIRN_LOG");
    cmd
}

/// One hook run: spawn to exit, with `input` on standard input.
fn hook_once(
    home: &Path,
    fake_home: &Path,
    input: &[u8],
) -> anyhow::Result<(Duration, bool, String)> {
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut cmd = cairn(&exe, home, fake_home);
    cmd.env_remove(cairn_config::HOOK_DEADLINE_ENV)
        .args(["hook", "claude-code", "UserPromptSubmit"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().context("cannot start `cairn hook`")?;
    if let Some(mut stdin) = child.stdin.take() {
        // The hook may stop reading early; a failed write is not the figure's business.
        let _ignored = stdin.write_all(input);
    }
    let out = child
        .wait_with_output()
        .context("cannot wait for `cairn hook`")?;
    let took = started.elapsed();
    let ok = out.status.success() && out.stderr.is_empty();
    Ok((took, ok, String::from_utf8_lossy(&out.stdout).into_owned()))
}

fn hook_input(i: usize, cwd: &str, prompt: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": format!("bench-hook-{i}"),
        "transcript_path": format!("/home/dev/.claude/projects/{}/bench-hook-{i}.jsonl", cwd.replace('/', "-")),
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string()
    .into_bytes()
}

/// A `cairn daemon` serving `home`, killed when dropped.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ignored = self.0.kill();
        let _ignored = self.0.wait();
    }
}

/// Starts `cairn daemon` over the synthetic home and waits for its address (at most
/// `wait`).
fn start_daemon(
    home: &Path,
    fake_home: &Path,
    deadline_ms: u32,
    wait: Duration,
) -> anyhow::Result<Daemon> {
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut child = cairn(&exe, home, fake_home)
        .env("CAIRN__HOOK__DEADLINE_MS", deadline_ms.to_string())
        .env("CAIRN__CAPTURE__STARTUP_DELAY_SECONDS", "3600")
        .env("CAIRN__INDEX__BACKEND", "embedded")
        .env("CAIRN__LLM__PROVIDER", "")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start `cairn daemon`")?;
    let stdout = child.stdout.take().context("the daemon has no stdout")?;
    let daemon = Daemon(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut said = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !said && line.contains("http://127.0.0.1:") {
                said = true;
                let _ignored = tx.send(());
            }
        }
    });
    rx.recv_timeout(wait).map_err(|_| {
        anyhow::anyhow!(
            "`cairn daemon` printed no address within {} s",
            wait.as_secs()
        )
    })?;
    Ok(daemon)
}

/// Figures of the hook runs with the service up.
#[derive(Default)]
struct HookUp {
    runs: u64,
    ok: u64,
    /// Runs that exited cleanly before the deadline: their answer, a note or silence, was
    /// not cut by it.
    in_time: u64,
    noted: u64,
    decided: u64,
    delivered: u64,
    times: Vec<f64>,
}

/// `cairn turn-note --dry-run --json` against the daemon (no deadline): whether the
/// service decides on a note for `prompt`.
fn decided(
    exe: &Path,
    home: &Path,
    fake_home: &Path,
    project: &str,
    session: &str,
    prompt: &str,
) -> anyhow::Result<bool> {
    let out = cairn(exe, home, fake_home)
        .args([
            "turn-note",
            prompt,
            "--dry-run",
            "--json",
            "--project",
            project,
        ])
        .args(["--session", session])
        .stdin(Stdio::null())
        .output()
        .context("cannot run `cairn turn-note`")?;
    anyhow::ensure!(
        out.status.success(),
        "`cairn turn-note` against the daemon failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let note: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("`cairn turn-note --json` printed no JSON")?;
    Ok(note["note"].is_string())
}

/// Waits until the daemon says (`cairn status --json`, worker `models`) that it loaded its
/// models, at most `wait`; an error names what it said last.
fn wait_for_models(
    exe: &Path,
    home: &Path,
    fake_home: &Path,
    wait: Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut last = String::from("nothing");
    while started.elapsed() < wait {
        let out = cairn(exe, home, fake_home)
            .args(["status", "--json"])
            .stdin(Stdio::null())
            .output()
            .context("cannot run `cairn status`")?;
        if let Ok(status) = serde_json::from_slice::<serde_json::Value>(&out.stdout)
            && let Some(models) = status["workers"]
                .as_array()
                .and_then(|w| w.iter().find(|w| w["name"] == "models"))
        {
            let detail = models["detail"].as_str().unwrap_or_default();
            if models["state"] == "idle" && detail.starts_with("embedder:") {
                anyhow::ensure!(
                    !detail.starts_with("embedder: none"),
                    "the daemon loaded no embedder ({detail}): the hook runs would be keyword-only"
                );
                return Ok(());
            }
            last = format!("{} ({detail})", models["state"]);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    anyhow::bail!(
        "the daemon had not loaded its models after {} s (last: {last})",
        wait.as_secs()
    )
}

/// A busy loop on every core until dropped: a build running beside the agent.
struct Hog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        for i in 0..100_000u64 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i),
                            );
                        }
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ignored = t.join();
        }
    }
}

/// The hook with `cairn daemon` serving the synthetic store (publishing `deadline_ms` for
/// the hooks): the daemon warmed with three turn notes first, then the runs (with a CPU hog
/// beside them when `load`), then each prompt asked again without a deadline.
fn hook_up(
    home: &Path,
    fake_home: &Path,
    projects: &[(String, String)],
    held: &Held,
    args: &Args,
) -> anyhow::Result<HookUp> {
    let (load, deadline_ms, quiet) = (args.load, args.deadline_ms, args.json);
    let _daemon = start_daemon(home, fake_home, deadline_ms, Duration::from_secs(120))?;
    // The daemon loads its embedder and vector index in the background after it starts, and
    // until then its notes are keyword-only: the runs wait for them, so each hook asks what
    // the later re-ask without a deadline asks. Then a warm-up through `cairn turn-note
    // --dry-run` (a client of the daemon with no deadline) loads the ranker.
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let started = Instant::now();
    wait_for_models(&exe, home, fake_home, Duration::from_secs(180))?;
    for (i, p) in PROMPTS[..3].iter().enumerate() {
        decided(&exe, home, fake_home, &projects[i].1, "bench-warm-up", p)?;
    }
    if !quiet {
        eprintln!(
            "  daemon warmed in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let runs = args
        .runs
        .unwrap_or(if load { HOOK_RUNS_LOADED } else { HOOK_RUNS });
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(runs as u64)
    };
    let mut up = HookUp::default();
    let mut asked = Vec::with_capacity(runs);
    let mut rng = Lcg(4242);
    {
        let _hog = load.then(Hog::start);
        for i in 0..runs {
            let p = prompt(i, &mut rng, held);
            let (cwd, project) = &projects[i % PROJECTS];
            let (took, ok, out) = hook_once(home, fake_home, &hook_input(i, cwd, &p))?;
            up.runs += 1;
            up.ok += u64::from(ok);
            // The hook's deadline runs from its own start, inside the child: a round trip
            // (spawn to exit) under it means the deadline cut nothing.
            up.in_time += u64::from(ok && ms(took) < f64::from(deadline_ms));
            let noted = out.contains("cairn-memory");
            up.noted += u64::from(noted);
            up.times.push(ms(took));
            asked.push((i, project.clone(), p, noted));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if !quiet {
        eprintln!("  asking the {runs} prompts again without a deadline…");
    }
    for (i, project, p, noted) in asked {
        if decided(
            &exe,
            home,
            fake_home,
            &project,
            &format!("bench-hook-{i}"),
            &p,
        )? {
            up.decided += 1;
            up.delivered += u64::from(noted);
        }
    }
    up.times.sort_by(f64::total_cmp);
    Ok(up)
}

/// Runs the benchmark and prints the figures.
pub async fn run(settings: &Settings, args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.records > 0, "--records must be at least 1");
    anyhow::ensure!(args.queries > 0, "--queries must be at least 1");
    anyhow::ensure!(args.runs != Some(0), "--runs must be at least 1");
    let settings = embedded(settings);
    let quiet = args.json;
    let temp = tempfile::tempdir().context("cannot make a temporary home")?;
    let home = temp.path().join("home");
    let fake_home = temp.path().join("user");
    fs_err::create_dir_all(&fake_home)?;
    let paths = Paths::under(&home);
    paths
        .create_all()
        .context("cannot create the temporary home's folders")?;

    let projects = project_dirs();
    let mut rng = Lcg(7);
    let first = synthetic_record(&mut rng, 0, &projects[0].1);
    let model = vectors_id(&paths, &settings, first).await?;
    if !quiet {
        eprintln!("building a synthetic store of {} records…", args.records);
    }
    let (build_time, held) = build(
        &paths,
        &settings,
        &model,
        &mut rng,
        args.records,
        &projects,
        quiet,
    )
    .await?;
    let held = &held;
    if !quiet {
        eprintln!("  built in {:.1} s", build_time.as_secs_f64());
    }

    let service = Service::load(&options(&paths, &settings))
        .await
        .map_err(|e| anyhow::anyhow!("cannot start a service over the synthetic store: {e}"))?;
    let ask = |i: usize, prompt: String| TurnNoteReq {
        framework: "claude-code".into(),
        project: Some(projects[i % PROJECTS].1.clone()),
        session_id: Some(format!("bench-note-{i}")),
        turn_id: None,
        prompt,
        context: Vec::new(),
        dry_run: true,
        at: None,
    };
    // Warm-up: the models, the vector index and the ranker load on first use.
    let mut rng = Lcg(99);
    for i in 0..3 {
        service
            .turn_note_whole(ask(i, prompt(i, &mut rng, held)))
            .await
            .map_err(|e| anyhow::anyhow!("the turn note failed: {e}"))?;
    }
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(args.queries as u64)
    };
    let mut latency = Vec::with_capacity(args.queries);
    let mut wall = Vec::with_capacity(args.queries);
    let mut candidates = 0usize;
    let mut noted = 0usize;
    let mut rng = Lcg(1234);
    for i in 0..args.queries {
        let req = ask(i, prompt(i, &mut rng, held));
        let t = Instant::now();
        let (note, cands) = service
            .turn_note_whole(req)
            .await
            .map_err(|e| anyhow::anyhow!("the turn note failed: {e}"))?;
        wall.push(ms(t.elapsed()));
        latency.push(f64::from(note.latency_ms));
        candidates += cands.len();
        noted += usize::from(note.note.is_some());
        bar.inc(1);
    }
    bar.finish_and_clear();
    let rss = rss_mib();
    drop(service);
    latency.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);

    // The hook with the service down: an empty home, no service.json.
    let empty = temp.path().join("empty-home");
    fs_err::create_dir_all(&empty)?;
    let mut down = Vec::with_capacity(HOOK_RUNS);
    let mut silent = 0u64;
    let mut rng = Lcg(77);
    for i in 0..HOOK_RUNS {
        let p = prompt(i, &mut rng, held);
        let (took, ok, out) = hook_once(
            &empty,
            &fake_home,
            &hook_input(i, &projects[i % PROJECTS].0, &p),
        )?;
        down.push(ms(took));
        silent += u64::from(ok && out.is_empty());
    }
    down.sort_by(f64::total_cmp);

    if !quiet {
        eprintln!("starting `cairn daemon` over the synthetic store for the hook round trip…");
    }
    let (up, skipped) = match hook_up(&home, &fake_home, &projects, held, &args) {
        Ok(up) => (up, None),
        Err(e) => (HookUp::default(), Some(format!("{e:#}"))),
    };

    let n = args.queries as f64;
    let figures = Figures {
        records: args.records as u64,
        queries: args.queries as u64,
        build_s: build_time.as_secs_f64(),
        note_p50_ms: pct(&latency, 0.5),
        note_p95_ms: pct(&latency, 0.95),
        note_max_ms: pct(&latency, 1.0),
        wall_p50_ms: pct(&wall, 0.5),
        wall_p95_ms: pct(&wall, 0.95),
        candidates_mean: candidates as f64 / n,
        noted_share: noted as f64 / n,
        rss_mib: rss,
        hook_down_runs: HOOK_RUNS as u64,
        hook_down_silent: silent,
        hook_down_p50_ms: pct(&down, 0.5),
        hook_down_p95_ms: pct(&down, 0.95),
        hook_down_max_ms: pct(&down, 1.0),
        hook_deadline_ms: args.deadline_ms,
        hook_load: args.load,
        hook_up_runs: up.runs,
        hook_up_ok: up.ok,
        hook_up_in_time: up.in_time,
        hook_up_noted: up.noted,
        hook_up_decided: up.decided,
        hook_up_delivered: up.delivered,
        hook_up_p50_ms: (!up.times.is_empty()).then(|| pct(&up.times, 0.5)),
        hook_up_p95_ms: (!up.times.is_empty()).then(|| pct(&up.times, 0.95)),
        hook_up_p99_ms: (!up.times.is_empty()).then(|| pct(&up.times, 0.99)),
        hook_up_max_ms: (!up.times.is_empty()).then(|| pct(&up.times, 1.0)),
        hook_up_skipped_because: skipped,
    };
    if args.json {
        println!("{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    let f = &figures;
    println!(
        "cairn bench note ({} synthetic records, one vector each; real query embedding; embedded index)",
        f.records
    );
    println!("store built in {:.1} s", f.build_s);
    println!("| what | p50 | p95 | max | other |");
    println!("|---|---|---|---|---|");
    println!(
        "| turn note, service latency ({} dry runs) | {:.1} ms | {:.1} ms | {:.1} ms | {:.0}% with a note, {:.1} candidates, RSS {:.0} MiB |",
        f.queries,
        f.note_p50_ms,
        f.note_p95_ms,
        f.note_max_ms,
        f.noted_share * 100.0,
        f.candidates_mean,
        f.rss_mib
    );
    println!(
        "| turn note, wall | {:.1} ms | {:.1} ms | | |",
        f.wall_p50_ms, f.wall_p95_ms
    );
    println!(
        "| hook round trip, service down ({} runs) | {:.1} ms | {:.1} ms | {:.1} ms | {} printed nothing and exited 0 |",
        f.hook_down_runs,
        f.hook_down_p50_ms,
        f.hook_down_p95_ms,
        f.hook_down_max_ms,
        f.hook_down_silent
    );
    match (
        &f.hook_up_skipped_because,
        f.hook_up_p50_ms,
        f.hook_up_p95_ms,
        f.hook_up_max_ms,
    ) {
        (None, Some(p50), Some(p95), Some(max)) => println!(
            "| hook round trip, service up ({} runs{}, deadline {} ms) | {p50:.1} ms | {p95:.1} ms | {max:.1} ms | p99 {:.1} ms; {} of {} runs answered before the deadline (a note or silence, nothing cut); {} of the {} notes the service decided on reached the agent ({} printed a note), {} exited 0 cleanly |",
            f.hook_up_runs,
            if f.hook_load {
                ", a CPU hog on every core beside"
            } else {
                ""
            },
            f.hook_deadline_ms,
            f.hook_up_p99_ms.unwrap_or(max),
            f.hook_up_in_time,
            f.hook_up_runs,
            f.hook_up_delivered,
            f.hook_up_decided,
            f.hook_up_noted,
            f.hook_up_ok
        ),
        (why, ..) => println!(
            "| hook round trip, service up | | | | not measured: {} |",
            why.as_deref().unwrap_or("no runs")
        ),
    }
    println!(
        "target: note p50 ≤ 50 ms, p95 ≤ 100 ms; hook with the service down ≤ 150 ms; with --load, ≥ 99% of decided notes delivered (the runs answered before the deadline measure it on every run, not only the ones with a note)"
    );
    Ok(())
}
