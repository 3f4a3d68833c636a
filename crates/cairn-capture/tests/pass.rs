//! Whole capture passes into a real store: Aider found in the project folders Cairn knows
//! and in listed ones, hostile folders that warn and never fail, and a large session file
//! stored in bounded batches, exactly once, even when a pass is killed half-way.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cairn_capture::Env;
use cairn_capture::pass::{BatchLimits, PassOptions, Progress, run};
use cairn_core::api::CaptureReport;
use cairn_store::Store;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn options(home: &Path, aider_folders: Vec<PathBuf>) -> PassOptions {
    PassOptions {
        env: Env::fake(home, &[]),
        only: Vec::new(),
        disabled: Vec::new(),
        settle: Duration::ZERO,
        internal_dirs: Vec::new(),
        forget: Default::default(),
        aider_folders,
        specstory_folders: Vec::new(),
        trusted_history_folders: Vec::new(),
        batch: BatchLimits::default(),
    }
}

fn added(report: &CaptureReport, framework: &str) -> u64 {
    report
        .frameworks
        .iter()
        .find(|f| f.framework == framework)
        .map_or(0, |f| f.added)
}

fn changed(report: &CaptureReport) -> u64 {
    report.frameworks.iter().map(|f| f.added + f.revised).sum()
}

/// One Claude Code session whose working directory is `cwd`.
fn claude_session(home: &Path, cwd: &Path) {
    let dir = home.join(".claude/projects/-work-proj");
    fs_err::create_dir_all(&dir).unwrap();
    let cwd = cwd.display().to_string();
    let lines = [
        serde_json::json!({"type":"user","uuid":"u-1","parentUuid":null,"sessionId":"sess-proj","timestamp":"2026-08-20T09:00:00Z","cwd":cwd,"message":{"role":"user","content":"Why is the build slow?"}}),
        serde_json::json!({"type":"assistant","uuid":"a-1","parentUuid":"u-1","sessionId":"sess-proj","timestamp":"2026-08-20T09:00:05Z","cwd":cwd,"message":{"id":"msg-1","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Incremental builds are off."}],"stop_reason":"end_turn"}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs_err::write(dir.join("sess-proj.jsonl"), body).unwrap();
}

const LISTED_HISTORY: &str = "# aider chat started at 2026-08-21 10:00:00\n\n\
> Main model: gpt-test with diff edit format\n\n\
#### where is the PLANTEDotter config read?\n\n\
In `src/config.rs`.\n\n\
#### and its defaults?\n\n\
In `default.toml`.\n";

fn aider_records(db: &Path) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT session_id, request FROM records WHERE framework = 'aider' ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn aider_is_captured_from_known_project_folders_and_listed_folders_incrementally() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    // A project folder known only from a Claude Code session's working directory.
    let proj = work.join("proj");
    fs_err::create_dir_all(&proj).unwrap();
    claude_session(&home, &proj);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jsonl/aider/demo-app/.aider.chat.history.md");
    fs_err::copy(&fixture, proj.join(".aider.chat.history.md")).unwrap();
    // A folder only listed in settings, its history one level down.
    let listed = work.join("listed");
    fs_err::create_dir_all(listed.join("site")).unwrap();
    let listed_file = listed.join("site/.aider.chat.history.md");
    fs_err::write(&listed_file, LISTED_HISTORY).unwrap();
    // Hostile: a listed folder that does not exist, one that is a link, a linked history
    // file inside a known project, and a linked folder inside a listed one.
    let missing = work.join("missing");
    let linked_dir = work.join("linked");
    std::os::unix::fs::symlink(&listed, &linked_dir).unwrap();
    fs_err::create_dir_all(proj.join("sub")).unwrap();
    std::os::unix::fs::symlink(&listed_file, proj.join("sub/.aider.chat.history.md")).unwrap();
    std::os::unix::fs::symlink(&proj, listed.join("loop")).unwrap();

    let db = tmp.path().join("cairn.db");
    let opts = options(
        &home,
        vec![listed.clone(), missing.clone(), linked_dir.clone()],
    );
    let rt = runtime();
    rt.block_on(async {
        let store = Store::open(&db).await.unwrap();
        let first = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(added(&first, "claude-code"), 1, "{first:?}");
        let warned = |needle: &str, path: &Path| {
            first
                .warnings
                .iter()
                .any(|w| w.contains(needle) && w.contains(&path.display().to_string()))
        };
        assert!(warned("does not exist", &missing), "{:?}", first.warnings);
        assert!(warned("symbolic link", &linked_dir), "{:?}", first.warnings);
        assert!(
            warned("symbolic link", &proj.join("sub")),
            "{:?}",
            first.warnings
        );
        let recs = aider_records(&db);
        let from = |dir: &Path| {
            recs.iter()
                .filter(|(s, _)| s.starts_with(&dir.display().to_string()))
                .count()
        };
        let in_proj = from(&proj.join(".aider.chat.history.md"));
        let in_listed = from(&listed_file);
        assert!(in_proj >= 2, "the known project's history: {recs:?}");
        assert_eq!(in_listed, 2, "the listed folder's history: {recs:?}");
        assert_eq!(
            in_proj + in_listed,
            recs.len(),
            "nothing read through a link: {recs:?}"
        );
        assert_eq!(added(&first, "aider"), recs.len() as u64);
        let cursors = store.cursors("aider").await.unwrap();
        assert_eq!(cursors.len(), 2, "{cursors:?}");

        // Nothing changed: nothing added.
        let second = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(changed(&second), 0, "{second:?}");

        // A new request appended to the listed history: only it is added.
        let mut f = fs_err::OpenOptions::new()
            .append(true)
            .open(&listed_file)
            .unwrap();
        f.write_all(b"\n#### now rename PLANTEDbadger\n\nRenamed.\n")
            .unwrap();
        drop(f);
        let third = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(added(&third, "aider"), 1, "{third:?}");
        assert_eq!(added(&third, "claude-code"), 0, "{third:?}");
        let recs = aider_records(&db);
        assert_eq!(
            recs.last().map(|(_, r)| r.as_str()),
            Some("now rename PLANTEDbadger")
        );

        // Aider switched off: its folders are not even searched.
        let mut off = opts.clone();
        off.disabled = vec!["aider".into()];
        let quiet = run(&store, &off, &|_| {}).await.unwrap();
        assert!(quiet.frameworks.iter().all(|f| f.framework != "aider"));
    });
}

/// A Claude Code session of about `mib` MiB: complete turns with tool calls and outputs of
/// varied length. Returns the file and its number of turns.
fn large_session(home: &Path, mib: usize) -> (PathBuf, usize) {
    let dir = home.join(".claude/projects/-work-big");
    fs_err::create_dir_all(&dir).unwrap();
    let path = dir.join("big-session.jsonl");
    let mut out = std::io::BufWriter::new(fs_err::File::create(&path).unwrap());
    let filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ";
    let mut written = 0usize;
    let mut turns = 0usize;
    while written < mib << 20 {
        let i = turns;
        let output = filler.repeat(8 + (i * 37) % 300);
        let ts = |s: usize| {
            format!(
                "2026-08-{:02}T{:02}:{:02}:{:02}Z",
                1 + (i / 3600) % 28,
                (i / 60) % 24,
                i % 60,
                s
            )
        };
        let lines = [
            serde_json::json!({"type":"user","uuid":format!("u-{i}"),"parentUuid":null,"sessionId":"big-session","timestamp":ts(0),"cwd":"/work/big","message":{"role":"user","content":format!("request number {i}: why does step {i} fail?")}}),
            serde_json::json!({"type":"assistant","uuid":format!("a-{i}-1"),"parentUuid":format!("u-{i}"),"sessionId":"big-session","timestamp":ts(1),"cwd":"/work/big","message":{"id":format!("m-{i}-1"),"role":"assistant","model":"claude-test","content":[{"type":"tool_use","id":format!("t-{i}"),"name":"Bash","input":{"command":format!("cargo test step_{i}")}}],"stop_reason":"tool_use"}}),
            serde_json::json!({"type":"user","uuid":format!("r-{i}"),"parentUuid":format!("a-{i}-1"),"sessionId":"big-session","timestamp":ts(2),"cwd":"/work/big","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("t-{i}"),"content":output}]}}),
            serde_json::json!({"type":"assistant","uuid":format!("a-{i}-2"),"parentUuid":format!("r-{i}"),"sessionId":"big-session","timestamp":ts(3),"cwd":"/work/big","message":{"id":format!("m-{i}-2"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":format!("Step {i} fails because {}", filler.repeat(3))}],"stop_reason":"end_turn"}}),
        ];
        for l in lines {
            let line = format!("{l}\n");
            written += line.len();
            out.write_all(line.as_bytes()).unwrap();
        }
        turns += 1;
    }
    out.flush().unwrap();
    (path, turns)
}

#[test]
fn a_large_session_is_stored_in_batches_exactly_once_even_when_a_pass_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (path, turns) = large_session(&home, 32);
    let size = fs_err::metadata(&path).unwrap().len();
    let db = tmp.path().join("cairn.db");
    let mut opts = options(&home, Vec::new());
    opts.only = vec!["claude-code".into()];
    let rt = runtime();
    rt.block_on(async {
        let store = Store::open(&db).await.unwrap();
        // A pass killed after its third batch was stored (dropped at its next await).
        let batches = Arc::new(AtomicU64::new(0));
        let (tx, rx) = tokio::sync::watch::channel(false);
        let seen = batches.clone();
        let progress = move |p: Progress| {
            seen.store(p.batches, Ordering::SeqCst);
            if p.batches >= 3 {
                tx.send_replace(true);
            }
        };
        let mut rx = rx;
        tokio::select! {
            r = run(&store, &opts, &progress) => panic!("the pass was meant to be killed: {r:?}"),
            _ = rx.wait_for(|&stop| stop) => {}
        }
        let killed_after = batches.load(Ordering::SeqCst);
        assert!(killed_after >= 3);
        let cursor = store
            .cursor("claude-code", &path.display().to_string())
            .await
            .unwrap()
            .expect("a cursor was saved after the first batches");
        assert!(
            cursor.offset > 0 && cursor.offset < size,
            "the cursor stopped inside the file: {} of {size}",
            cursor.offset
        );

        // The next pass resumes from the cursor and finishes, batch by batch.
        let batches = Arc::new(AtomicU64::new(0));
        let seen = batches.clone();
        let report = run(&store, &opts, &move |p: Progress| {
            seen.store(p.batches, Ordering::SeqCst);
        })
        .await
        .unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let stored_batches = killed_after + batches.load(Ordering::SeqCst);
        // 32 MiB in batches of at most 8 MiB (each followed by its cursor): at least four.
        assert!(stored_batches >= 4, "{stored_batches} batches");
        let cursor = store
            .cursor("claude-code", &path.display().to_string())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(cursor.offset, size, "the cursor ends at the file's end");
        assert_eq!(cursor.size, size);

        // Every turn stored exactly once: no revision, no duplicate, none missing.
        let conn = rusqlite::Connection::open(&db).unwrap();
        let (rows, ids): (i64, i64) = conn
            .query_row(
                "SELECT COUNT(*), COUNT(DISTINCT id) FROM records WHERE framework = 'claude-code'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(ids, turns as i64, "every turn stored");
        assert_eq!(rows, ids, "none stored twice");
        // And a pass over the finished file adds nothing.
        let again = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(changed(&again), 0, "{again:?}");
    });
}
