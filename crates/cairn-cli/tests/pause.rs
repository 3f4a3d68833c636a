//! `cairn memory pause` end to end: status says paused and until when, what happens during
//! the pause is never captured (resumed early, or after the pause ended by itself with no
//! process there at that instant), and bad lengths are refused with a clear message.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::path::Path;
use std::process::{Command, Output};

use chrono::{DateTime, Duration, Utc};

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn cairn(home: &Path, cairn_home: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("HOME", home)
        .env("CAIRN_HOME", cairn_home)
        .env("CAIRN__CAPTURE__SETTLE_SECONDS", "0")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("OPENCODE_DB");
    c
}

fn run(c: &mut Command) -> Output {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn status(h: &Path, c: &Path) -> serde_json::Value {
    serde_json::from_slice(&run(cairn(h, c).args(["status", "--json"])).stdout).unwrap()
}

fn search(h: &Path, c: &Path, words: &str) -> usize {
    let out = run(cairn(h, c).args(["search", "--json", "--mode", "bm25", words]));
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout)
        .unwrap()
        .len()
}

/// One Claude Code turn at `at`, appended to the session file.
fn add_turn(home: &Path, id: &str, at: DateTime<Utc>, words: &str) {
    let dir = home.join(".claude/projects/-tmp-pause");
    fs_err::create_dir_all(&dir).unwrap();
    let file = dir.join("sess-pause.jsonl");
    let ts = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let u = serde_json::json!({"type":"user","uuid":format!("u-{id}"),"parentUuid":null,"sessionId":"sess-pause","timestamp":ts,"cwd":"/tmp/pause","message":{"role":"user","content":words}});
    let a = serde_json::json!({"type":"assistant","uuid":format!("a-{id}"),"parentUuid":format!("u-{id}"),"sessionId":"sess-pause","timestamp":ts,"cwd":"/tmp/pause","message":{"id":format!("m-{id}"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":"Noted."}],"stop_reason":"end_turn"}});
    let mut text = fs_err::read_to_string(&file).unwrap_or_default();
    text.push_str(&format!("{u}\n{a}\n"));
    fs_err::write(&file, text).unwrap();
}

fn time(v: &serde_json::Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

#[test]
fn memory_pause_shows_until_when_and_its_period_is_never_captured() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (h, c) = (home.path(), ch.path());

    // Paused for 15 minutes: status says so, with the end.
    let before = Utc::now();
    let out = run(cairn(h, c).args(["memory", "pause", "15m"]));
    assert!(
        stdout(&out).contains("Memory is paused until "),
        "{}",
        stdout(&out)
    );
    let s = status(h, c);
    assert_eq!(s["memory"]["enabled"], false);
    assert_eq!(s["memory"]["paused"], true);
    let until = time(&s["memory"]["paused_until"]);
    assert!(
        until >= before + Duration::minutes(15) - Duration::seconds(1)
            && until <= Utc::now() + Duration::minutes(15),
        "ends in 15 minutes: {until}"
    );
    assert!(
        s["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("Memory is paused until "),
        "{}",
        s["warnings"]
    );
    let text = stdout(&run(cairn(h, c).arg("status")));
    assert!(text.contains("Memory:   paused until "), "{text}");
    // Capture and search are stopped, as when memory is off.
    let out = cairn(h, c).args(["capture", "--once"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("memory is off"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A turn during the pause; resumed early with `memory on`; a turn after.
    add_turn(h, "during", Utc::now(), "PLANTEDgrebe during the pause");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = run(cairn(h, c).args(["memory", "on"]));
    assert_eq!(stdout(&out).trim(), "Memory is on.");
    let s = status(h, c);
    assert_eq!(
        (
            &s["memory"]["enabled"],
            &s["memory"]["paused"],
            &s["memory"]["paused_until"]
        ),
        (
            &serde_json::json!(true),
            &serde_json::json!(false),
            &serde_json::Value::Null
        )
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    add_turn(h, "after", Utc::now(), "PLANTEDcurlew after resuming");
    let report = stdout(&run(cairn(h, c).args(["capture", "--once", "--json"])));
    assert!(report.contains("while memory was off"), "{report}");
    assert_eq!(search(h, c, "PLANTEDgrebe"), 0, "captured during the pause");
    assert_eq!(search(h, c, "PLANTEDcurlew"), 1);

    // A pause that ends by itself, with no process running at that instant: an explicit
    // end two seconds ahead. The turn inside it is skipped for good; one after it is kept.
    let start = Utc::now();
    let end = start + Duration::seconds(2);
    let out = run(cairn(h, c).args([
        "memory",
        "pause",
        "--until",
        &end.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    ]));
    assert!(stdout(&out).contains("paused until"), "{}", stdout(&out));
    add_turn(
        h,
        "inside",
        start + Duration::milliseconds(900),
        "PLANTEDdunlin inside the short pause",
    );
    let wait = (end - Utc::now()).to_std().unwrap_or_default();
    std::thread::sleep(wait + std::time::Duration::from_millis(200));
    let s = status(h, c);
    assert_eq!(
        s["memory"]["enabled"], true,
        "the pause ended: {}",
        s["memory"]
    );
    assert_eq!(s["memory"]["paused"], false);
    assert!(
        !s["warnings"].to_string().contains("paused"),
        "{}",
        s["warnings"]
    );
    add_turn(
        h,
        "later",
        Utc::now(),
        "PLANTEDsanderling after the pause ended",
    );
    let report = stdout(&run(cairn(h, c).args(["capture", "--once", "--json"])));
    assert!(report.contains("while memory was off"), "{report}");
    assert_eq!(
        search(h, c, "PLANTEDdunlin"),
        0,
        "captured during the pause"
    );
    assert_eq!(search(h, c, "PLANTEDsanderling"), 1);
    assert_eq!(search(h, c, "PLANTEDcurlew"), 1);
    // A later pass, a restart, still skips it.
    run(cairn(h, c).args(["capture", "--once"]));
    assert_eq!(search(h, c, "PLANTEDdunlin"), 0);
    assert_eq!(status(h, c)["counts"]["records"], 2);
}

#[test]
fn memory_pause_choices_and_bad_lengths() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (h, c) = (home.path(), ch.path());
    for (arg, says) in [
        ("1h", "paused until "),
        ("90m", "paused until "),
        ("tomorrow", "paused until "),
        ("until-resumed", "paused until resumed"),
    ] {
        let out = run(cairn(h, c).args(["memory", "pause", arg]));
        assert!(stdout(&out).contains(says), "{arg}: {}", stdout(&out));
    }
    // Paused until resumed: no end, still paused.
    let s = status(h, c);
    assert_eq!(s["memory"]["paused"], true);
    assert!(s["memory"]["paused_until"].is_null());
    // Tomorrow: the next local midnight, within a day.
    run(cairn(h, c).args(["memory", "pause", "tomorrow"]));
    let until = time(&status(h, c)["memory"]["paused_until"]);
    let local = until.with_timezone(&chrono::Local);
    assert_eq!(
        chrono::Timelike::hour(&local) * 60 + chrono::Timelike::minute(&local),
        0,
        "{local}"
    );
    assert!(until > Utc::now() && until <= Utc::now() + Duration::hours(25));
    // `memory off` while paused: off for good, no end.
    run(cairn(h, c).args(["memory", "off"]));
    let s = status(h, c);
    assert_eq!(
        (&s["memory"]["enabled"], &s["memory"]["paused"]),
        (&serde_json::json!(false), &serde_json::json!(false))
    );

    for (arg, says) in [
        ("0m", "is not positive"),
        ("2d", "cannot read the pause length \"2d\""),
        ("fifteen", "cannot read the pause length"),
        ("721h", "over 30 days"),
    ] {
        let out = cairn(h, c).args(["memory", "pause", arg]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{arg}: {err}");
    }
    let out = cairn(h, c)
        .args(["memory", "pause", "--until", "2020-01-01T00:00:00Z"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("has passed"));
    // A refused pause changed nothing.
    assert_eq!(status(h, c)["memory"]["paused"], false);
}
