//! SpecStory's Markdown histories (`tests/fixtures/stores/specstory/`: one file of each
//! generation of the format, written for these tests) read into turns, captured by a pass
//! incrementally and scrubbed; and history files that came with a cloned repository left out
//! (a real git repository made by each test).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cairn_capture::frameworks::stores::specstory;
use cairn_capture::pass::{BatchLimits, CLONED_REASON, PassOptions, run};
use cairn_capture::provenance::{self, Verdict};
use cairn_capture::{Env, Reader, Step, Turn};
use cairn_core::Timestamp;
use cairn_core::api::CaptureReport;
use cairn_store::Store;
use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};

const SECRET: &str = "ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio";
const CLAUDE: &str = "2026-07-13_13-40-49Z-fix-the-flaky-test.md";
const CURSOR: &str = "2025-10-01_23-30Z-avatars-stopped-moving.md";
const OLDEST: &str = "2024-12-28_07-52-enhance-the-colors.md";

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores/specstory/demo-app")
}

fn history(name: &str) -> PathBuf {
    project().join(".specstory/history").join(name)
}

fn read(path: &Path) -> Vec<Turn> {
    let Reader::WholeFile(parse) = specstory::spec().reader else {
        panic!("SpecStory is read as whole files");
    };
    parse(path, &fs_err::read(path).unwrap()).unwrap()
}

fn ts(s: &str) -> Timestamp {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// (name, input as text, output) of each tool step; the texts of the others.
fn tools(turn: &Turn) -> Vec<(String, String, String)> {
    turn.steps
        .iter()
        .filter_map(|s| match s {
            Step::Tool {
                name,
                input,
                output,
                ..
            } => Some((
                name.clone(),
                input.as_str().unwrap_or_default().to_owned(),
                output.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn texts(turn: &Turn) -> Vec<String> {
    turn.steps
        .iter()
        .filter_map(|s| match s {
            Step::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn markdown_v2_claude_code_session() {
    let turns = read(&history(CLAUDE));
    assert_eq!(turns.len(), 2, "{turns:#?}");
    let (t1, t2) = (&turns[0], &turns[1]);
    for t in &turns {
        assert_eq!(t.session_id, "5c7d5c23-0691-4467-b98e-0fb865b4a639");
        assert_eq!(
            t.cwd.as_deref(),
            Some(project().display().to_string().as_str())
        );
        assert_eq!(
            t.model.as_deref(),
            Some("claude-opus-4-5-20251101 (Claude Code)")
        );
        assert!(t.complete);
    }
    assert_ne!(t1.message_id, t2.message_id);
    assert!(
        t1.request
            .starts_with("the release job fails on test_retry_budget")
    );
    assert!(t1.request.contains(SECRET), "scrubbing happens when stored");
    assert_eq!(t1.started_at, Some(ts("2026-07-13T13:40:49Z")));
    assert_eq!(t1.ended_at, Some(ts("2026-07-13T13:42:30Z")));
    let names: Vec<String> = tools(t1).into_iter().map(|t| t.0).collect();
    assert_eq!(names, ["Bash", "Read", "sub-agent", "Edit"]);
    let bash = &tools(t1)[0];
    assert!(
        bash.1.contains("cargo test -p jobs retry_budget"),
        "{bash:?}"
    );
    assert!(
        bash.2.contains("test retry::test_retry_budget ... FAILED"),
        "{bash:?}"
    );
    let sub = &tools(t1)[2];
    assert!(
        sub.1.starts_with("Find every test that compares"),
        "{sub:?}"
    );
    assert!(sub.2.contains("Only `test_retry_budget`"), "{sub:?}");
    let said = texts(t1);
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(said[0], "I'll run the failing test first.");
    // A header inside a code block of the answer is text, not a new turn.
    assert!(
        said[1].contains("_**User**_\ncargo test -p jobs retry_budget"),
        "{said:?}"
    );
    let all = format!("{turns:?}");
    assert!(
        !all.contains("The user wants the flaky test fixed"),
        "thinking is left out"
    );
    assert!(!all.contains("tool-use"), "no markup is kept");
    assert_eq!(t2.request, "thanks. also run the whole suite twice");
    assert_eq!(t2.started_at, Some(ts("2026-07-13T13:46:28Z")));
    assert_eq!(t2.ended_at, Some(ts("2026-07-13T13:47:02Z")));
    assert_eq!(tools(t2)[0].0, "Bash");
    assert_eq!(texts(t2), ["Both runs pass: 84 tests, no failures."]);
}

#[test]
fn cursor_extension_session_of_2025() {
    let turns = read(&history(CURSOR));
    assert_eq!(turns.len(), 2, "an empty request adds no turn: {turns:#?}");
    let (t1, t2) = (&turns[0], &turns[1]);
    assert_eq!(t1.session_id, "198f391d-8ae2-4788-975c-8c8e23345506");
    assert_eq!(
        t1.model.as_deref(),
        Some("claude-4.5-sonnet-thinking (Cursor)")
    );
    assert_eq!(t1.request, "the avatars on the wall do not move any more");
    assert_eq!(t1.started_at, Some(ts("2025-10-01T23:30:00Z")));
    let t = tools(t1);
    assert_eq!(
        t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["read_file", "grep", "search_replace"]
    );
    assert_eq!(t[0].1, "Read file: /home/dev/demo-app/web/wall.js");
    assert!(
        t[1].1.starts_with("Grep for \"requestAnimationFrame\""),
        "{t:?}"
    );
    assert!(
        t[1].2
            .contains("| `// requestAnimationFrame(step)` | L88 |"),
        "{t:?}"
    );
    assert!(
        t[2].1.contains("Edit file: /home/dev/demo-app/web/wall.js"),
        "{t:?}"
    );
    assert!(t[2].2.contains("+   requestAnimationFrame(step)"), "{t:?}");
    // Prose before and after the tools: two texts.
    assert_eq!(
        texts(t1),
        [
            "I'll look at the animation code.",
            "The call to `requestAnimationFrame` had been commented out in line 88, so nothing \
             scheduled the next frame; it is back.\n\nReload the page: the avatars should drift \
             again."
        ]
    );
    assert!(!format!("{turns:?}").contains("animation loop is in wall.js"));
    assert_eq!(t2.request, "works, thanks");
    assert_eq!(t2.started_at, Some(ts("2025-10-01T23:45:00Z")));
    assert_eq!(texts(t2), ["Glad it works."]);
}

#[test]
fn extension_session_of_2024_without_ids_or_header_times() {
    let turns = read(&history(OLDEST));
    assert_eq!(turns.len(), 2, "{turns:#?}");
    let (t1, t2) = (&turns[0], &turns[1]);
    let stem = OLDEST.trim_end_matches(".md");
    assert_eq!(
        (t1.session_id.as_str(), t2.session_id.as_str()),
        (stem, stem)
    );
    assert_eq!(t1.model, None);
    // The title's time, written in the local time of the machine.
    let local = Local
        .from_local_datetime(
            &NaiveDateTime::parse_from_str("2024-12-28 07:52:19", "%Y-%m-%d %H:%M:%S").unwrap(),
        )
        .earliest()
        .unwrap()
        .with_timezone(&Utc);
    assert_eq!(t1.started_at, Some(local));
    assert_eq!(
        t2.started_at,
        Some(local),
        "no time of its own: the one before"
    );
    assert_eq!(t1.request, "use rich colours in the task list output");
    let t = tools(t1);
    assert_eq!(
        t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["listed_current_directory", "read_file", "edit_file"]
    );
    assert!(t[0].2.contains("`tasks.py`"), "{t:?}");
    assert_eq!(t[1].1, "tasks.py");
    assert!(t[2].2.contains("+     \"rich>=13.7.0\","), "{t:?}");
    assert_eq!(
        texts(t1),
        [
            "I'll look at how the task list is printed first.",
            "I added `rich` to the dependencies; the task list now prints through a `rich` table \
             with one colour per project."
        ]
    );
    assert_eq!(t2.request, "and the overdue ones in red?");
    assert_eq!(
        texts(t2),
        ["Overdue tasks now use the `danger` style, which is bold red."]
    );
}

#[test]
fn a_file_without_timestamps_or_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("app/.specstory/history");
    fs_err::create_dir_all(&dir).unwrap();
    let file = dir.join("2025-05-12_14-03-22Z-fix-the-login-bug.md");
    fs_err::write(
        &file,
        "<!-- Generated by SpecStory -->\n\n_**User**_\n\nfix the login bug\n\n---\n\n\
         _**Assistant**_\n\nFixed.\n\n---\n",
    )
    .unwrap();
    let turns = read(&file);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].started_at, Some(ts("2025-05-12T14:03:22Z")));
    assert_eq!(
        turns[0].session_id,
        "2025-05-12_14-03-22Z-fix-the-login-bug"
    );
    let notes = dir.join("notes.md");
    fs_err::write(&notes, "# just notes\n\nnothing here\n").unwrap();
    assert!(read(&notes).is_empty());
    let Reader::WholeFile(parse) = specstory::spec().reader else {
        unreachable!()
    };
    let err = parse(&notes, b"\xff\xfe not text").unwrap_err();
    assert!(err.contains("not UTF-8"), "{err}");
    assert_eq!(
        specstory::find_histories(tmp.path(), &mut Vec::new()),
        [file.clone(), notes.clone()]
    );
}

// ---------------------------------------------------------------------------------------------
// Passes

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn options(home: &Path, specstory_folders: Vec<PathBuf>, trusted: Vec<PathBuf>) -> PassOptions {
    PassOptions {
        env: Env::fake(home, &[]),
        only: Vec::new(),
        disabled: Vec::new(),
        settle: Duration::ZERO,
        internal_dirs: Vec::new(),
        forget: Default::default(),
        aider_folders: Vec::new(),
        specstory_folders,
        trusted_history_folders: trusted,
        batch: BatchLimits::default(),
    }
}

fn counts(report: &CaptureReport, framework: &str) -> (u64, u64) {
    report
        .frameworks
        .iter()
        .find(|f| f.framework == framework)
        .map_or((0, 0), |f| (f.added, f.revised))
}

/// Whether `needle` is anywhere in the store's files (the database and its WAL).
fn stored_anywhere(db: &Path, needle: &str) -> bool {
    let dir = db.parent().unwrap();
    fs_err::read_dir(dir).unwrap().flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("cairn.db") {
            return false;
        }
        // The shared-memory file may go as the store closes: a file gone holds nothing.
        match fs_err::read(e.path()) {
            Ok(b) => b.windows(needle.len()).any(|w| w == needle.as_bytes()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => false,
            Err(err) => panic!("{err}"),
        }
    })
}

fn records(db: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT session_id, request, started_at FROM records WHERE framework = 'specstory' \
             ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn captured_incrementally_and_scrubbed() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let app = tmp.path().join("work/app");
    let dir = app.join(".specstory/history");
    fs_err::create_dir_all(&dir).unwrap();
    fs_err::create_dir_all(&home).unwrap();
    for name in [CLAUDE, CURSOR, OLDEST] {
        fs_err::copy(history(name), dir.join(name)).unwrap();
    }
    let db = tmp.path().join("store/cairn.db");
    fs_err::create_dir_all(db.parent().unwrap()).unwrap();
    let opts = options(&home, vec![tmp.path().join("work")], Vec::new());
    let rt = runtime();
    rt.block_on(async {
        let store = Store::open(&db).await.unwrap();
        let first = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(counts(&first, "specstory"), (6, 0), "{first:?}");
        assert!(first.secrets_redacted >= 1, "{first:?}");
        assert!(first.cloned_histories.is_empty(), "{first:?}");
        let again = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(counts(&again, "specstory"), (0, 0), "{again:?}");

        // The session goes on: SpecStory writes the whole file again with one more turn.
        let file = dir.join(CLAUDE);
        let mut text = fs_err::read_to_string(&file).unwrap();
        text.push_str(
            "\n---\n\n_**User (2026-07-13 13:50:00Z)**_\n\nnow tag the release\n\n---\n\n\
             _**Agent (claude-opus-4-5-20251101 2026-07-13 13:50:05Z)**_\n\nTagged v1.4.2.\n",
        );
        let tmp_file = dir.join(".rewrite");
        fs_err::write(&tmp_file, text).unwrap();
        fs_err::rename(&tmp_file, &file).unwrap();
        let third = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(counts(&third, "specstory"), (1, 0), "{third:?}");
        drop(store);
    });
    let recs = records(&db);
    assert_eq!(recs.len(), 7, "{recs:?}");
    let tagged = recs.iter().find(|r| r.1 == "now tag the release").unwrap();
    assert_eq!(tagged.0, "5c7d5c23-0691-4467-b98e-0fb865b4a639");
    assert!(tagged.2.starts_with("2026-07-13T13:50:00"), "{tagged:?}");
    let first = recs
        .iter()
        .find(|r| r.1.starts_with("the release job fails"))
        .unwrap();
    assert!(first.1.contains("[REDACTED:github-token]"), "{first:?}");
    assert!(
        !stored_anywhere(&db, SECRET),
        "the secret reached the store"
    );
    assert!(
        !stored_anywhere(&db, "ghp_k3Tq9ZLm2VxB7"),
        "part of the secret reached the store"
    );
}

// ---------------------------------------------------------------------------------------------
// Histories that came with cloned repositories

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs (the tests of cloned histories need git)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit_as(dir: &Path, email: &str, message: &str) {
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            &format!("user.email={email}"),
            "-c",
            "user.name=Someone",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

/// A repository whose SpecStory history (and Aider history) was committed by someone else,
/// with the local user me@example.com: what a clone of a public repository looks like.
fn cloned_repo(at: &Path) -> (PathBuf, PathBuf) {
    let dir = at.join(".specstory/history");
    fs_err::create_dir_all(&dir).unwrap();
    let file = dir.join(CURSOR);
    fs_err::copy(history(CURSOR), &file).unwrap();
    let aider = at.join(".aider.chat.history.md");
    fs_err::write(
        &aider,
        "# aider chat started at 2026-08-21 10:00:00\n\n#### where is the config read?\n\n\
         In `src/config.rs`.\n",
    )
    .unwrap();
    git(at, &["init", "-q"]);
    git(at, &["config", "user.email", "me@example.com"]);
    commit_as(at, "other@example.com", "histories");
    (file, aider)
}

#[test]
fn whose_history_a_file_is() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let (file, aider) = cloned_repo(&repo);
    assert_eq!(
        provenance::verdict(&file),
        Verdict::Cloned {
            author: "other@example.com".into()
        }
    );
    assert!(matches!(
        provenance::verdict(&aider),
        Verdict::Cloned { .. }
    ));
    // Changed on this machine: the user's.
    let mut text = fs_err::read_to_string(&file).unwrap();
    text.push_str("\n_**User (2025-10-02 08:00Z)**_\n\nnow the colours\n");
    fs_err::write(&file, &text).unwrap();
    assert_eq!(provenance::verdict(&file), Verdict::Own);
    // Committed by the user: the user's.
    commit_as(&repo, "Me@Example.com", "my turn");
    assert_eq!(provenance::verdict(&file), Verdict::Own);
    // Untracked: the user's.
    let new = repo.join(".specstory/history/2025-11-01_10-00Z-new.md");
    fs_err::copy(history(CLAUDE), &new).unwrap();
    assert_eq!(provenance::verdict(&new), Verdict::Own);
    // Outside any repository: the user's.
    let loose = tmp.path().join("loose/.specstory/history");
    fs_err::create_dir_all(&loose).unwrap();
    fs_err::copy(history(CLAUDE), loose.join(CLAUDE)).unwrap();
    assert_eq!(provenance::verdict(&loose.join(CLAUDE)), Verdict::Own);
}

#[test]
fn cloned_histories_are_not_captured_unless_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    fs_err::create_dir_all(&home).unwrap();
    let clone = tmp.path().join("work/clone");
    let (file, aider) = cloned_repo(&clone);
    let trusted_repo = tmp.path().join("forks/other");
    let (trusted_file, _) = cloned_repo(&trusted_repo);
    let db = tmp.path().join("store/cairn.db");
    fs_err::create_dir_all(db.parent().unwrap()).unwrap();
    let mut opts = options(
        &home,
        vec![tmp.path().join("work"), tmp.path().join("forks")],
        vec![tmp.path().join("forks")],
    );
    opts.aider_folders = vec![clone.clone()];
    let rt = runtime();
    rt.block_on(async {
        let store = Store::open(&db).await.unwrap();
        let first = run(&store, &opts, &|_| {}).await.unwrap();
        let names = |r: &CaptureReport| r.cloned_histories.clone();
        assert_eq!(
            names(&first),
            [aider.display().to_string(), file.display().to_string()],
            "{first:?}"
        );
        let skipped = |r: &CaptureReport, fw: &str| {
            r.frameworks
                .iter()
                .find(|f| f.framework == fw)
                .and_then(|f| f.skipped.iter().find(|s| s.reason == CLONED_REASON))
                .map_or(0, |s| s.count)
        };
        assert_eq!(skipped(&first, "specstory"), 1, "{first:?}");
        assert_eq!(skipped(&first, "aider"), 1, "{first:?}");
        assert_eq!(counts(&first, "aider"), (0, 0), "{first:?}");
        // Only the trusted folder's copy was captured.
        let recs = records(&db);
        assert_eq!(recs.len(), 2, "{recs:?}");
        assert!(
            store_sources(&db)
                .iter()
                .all(|s| s == &trusted_file.display().to_string()),
            "{:?}",
            store_sources(&db)
        );

        // The user goes on with the session in the clone: now it is theirs.
        let mut text = fs_err::read_to_string(&file).unwrap();
        text.push_str(
            "\n_**User (2025-10-02 08:00Z)**_\n\nmake them faster\n\n---\n\n\
             _**Assistant (claude-4.5-sonnet-thinking)**_\n\nDoubled the speed.\n",
        );
        fs_err::write(&file, &text).unwrap();
        let second = run(&store, &opts, &|_| {}).await.unwrap();
        assert_eq!(names(&second), [aider.display().to_string()], "{second:?}");
        // The two turns it shares with the trusted copy (the same session) are stored already.
        assert_eq!(counts(&second, "specstory"), (1, 0), "{second:?}");
        assert!(records(&db).iter().any(|r| r.1 == "make them faster"));
        drop(store);
    });
}

fn store_sources(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT DISTINCT source FROM records WHERE framework = 'specstory'")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
