//! `cairn bench replay`: how long `cairn eval replay` takes over a large history. A synthetic
//! Claude Code store of `requests` requests (sessions of 20, two hours apart, in one project)
//! is written into a temporary user home; in it, every session sets up a service whose file
//! and port a session three later names and goes on to reuse, so about one request in twenty
//! needs an earlier session. The store is captured by `cairn capture --once` and replayed by `cairn
//! eval replay --json`, each in a child process of this program over a temporary Cairn home
//! (the user's own home and settings are never touched; `CAIRN__…` settings in the
//! environment, such as the embedder's folder, apply). Both children show their progress.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use cairn_core::api::ReplayReport;

use super::Lcg;

/// Requests per synthetic session.
const PER_SESSION: usize = 20;
/// A session reuses what the session this many before it set up.
const REUSE_AFTER: usize = 3;

/// What `--json` prints.
#[derive(serde::Serialize)]
struct Figures {
    requests: usize,
    sessions: usize,
    /// `None` when the store captured by an earlier run in the same `--home` was replayed again.
    capture_s: Option<f64>,
    replay_s: f64,
    requests_per_s: f64,
    report: ReplayReport,
}

/// The service of session `s`: a name, its config file and its port, rare in the store.
fn service(s: usize) -> (String, String, u32) {
    let name = format!("svc{s:05}");
    let file = format!("config/{name}.toml");
    (name, file, 20_000 + s as u32)
}

/// One session's JSONL: `turns` requests, each answered; the first sets up the session's
/// service, the second (from the fourth session on) reuses an earlier session's.
fn session(rng: &mut Lcg, s: usize, turns: usize) -> String {
    let id = format!("bench-replay-{s:05}");
    let start =
        chrono::DateTime::from_timestamp(1_780_000_000 + s as i64 * 7_200, 0).unwrap_or_default();
    let mut body = String::new();
    for t in 0..turns {
        let (request, reply) = match t {
            0 => {
                let (name, file, port) = service(s);
                (
                    format!(
                        "set up the {name} worker with its own config, {}",
                        rng.words(8)
                    ),
                    format!(
                        "Done: {name} reads {file} and listens on port {port}; {}",
                        rng.words(40)
                    ),
                )
            }
            1 if s >= REUSE_AFTER => {
                let (name, file, port) = service(s - REUSE_AFTER);
                (
                    format!("{name} from last time cannot connect, {}", rng.words(8)),
                    format!(
                        "It was pointed at the wrong place. {name} reads {file} and listens on \
                         port {port}, so I changed the client to match; {}",
                        rng.words(30)
                    ),
                )
            }
            _ => (
                format!("{} ?", rng.words(14)),
                format!("{}.", rng.words(50)),
            ),
        };
        let at = |secs: i64| {
            (start + chrono::Duration::seconds(t as i64 * 240 + secs))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        };
        let u = format!("{id}-u{t}");
        let user = serde_json::json!({"type":"user","uuid":u,"parentUuid":null,"sessionId":id,
            "timestamp":at(0),"cwd":"/home/dev/projects/bench",
            "message":{"role":"user","content":request}});
        let answer = serde_json::json!({"type":"assistant","uuid":format!("{id}-a{t}"),
            "parentUuid":u,"sessionId":id,"timestamp":at(30),"cwd":"/home/dev/projects/bench",
            "message":{"id":format!("{id}-m{t}"),"role":"assistant","model":"claude-bench",
                "content":[{"type":"text","text":reply}],"stop_reason":"end_turn"}});
        body.push_str(&format!("{user}\n{answer}\n"));
    }
    body
}

/// `cairn` itself as a child over the temporary homes, its progress on this terminal.
fn child(user: &Path, home: &Path) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("cannot find this program to run it again")?;
    let mut c = Command::new(exe);
    c.env("HOME", user)
        .env("CAIRN_HOME", home)
        .env("CAIRN__CAPTURE__SETTLE_SECONDS", "0")
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "COPILOT_HOME",
    ] {
        c.env_remove(var);
    }
    Ok(c)
}

fn run_child(mut c: Command, what: &str) -> anyhow::Result<String> {
    let out = c
        .output()
        .with_context(|| format!("cannot start `cairn {what}`"))?;
    if !out.status.success() {
        bail!("`cairn {what}` failed ({})", out.status);
    }
    String::from_utf8(out.stdout).with_context(|| format!("`cairn {what}` printed non-UTF-8"))
}

/// Runs the benchmark and prints its figures.
pub fn run(requests: usize, json: bool, keep: Option<&Path>) -> anyhow::Result<()> {
    anyhow::ensure!(requests > 0, "--requests must be at least 1");
    let temp = tempfile::tempdir().context("cannot make a temporary folder")?;
    let base = keep.unwrap_or(temp.path());
    let user = base.join("user");
    let home = base.join("cairn-home");
    let dir = user.join(".claude/projects/-home-dev-projects-bench");
    let sessions = requests.div_ceil(PER_SESSION);
    // A folder an earlier run left whole (its marker names the same number of requests) is
    // replayed again without writing and capturing the history a second time.
    let marker = base.join("bench-replay.json");
    let captured = fs_err::read_to_string(&marker)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("requests").and_then(serde_json::Value::as_u64))
        == Some(requests as u64);
    let capture_s = if captured {
        if !json {
            eprintln!(
                "replaying the {requests} requests captured earlier in {}…",
                base.display()
            );
        }
        None
    } else {
        if keep.is_some() && base.exists() && fs_err::read_dir(base)?.next().is_some() {
            bail!(
                "{} is not empty and holds no whole bench replay of {requests} requests; give an \
                 empty or new folder",
                base.display()
            );
        }
        fs_err::create_dir_all(&dir)?;
        fs_err::create_dir_all(&home)?;
        let mut rng = Lcg(2027);
        let mut left = requests;
        for s in 0..sessions {
            let turns = left.min(PER_SESSION);
            left -= turns;
            fs_err::write(
                dir.join(format!("bench-replay-{s:05}.jsonl")),
                session(&mut rng, s, turns),
            )?;
        }
        if !json {
            eprintln!("capturing {requests} synthetic requests in {sessions} sessions…");
        }
        let started = Instant::now();
        let mut capture = child(&user, &home)?;
        capture.args(["capture", "--once", "--json"]);
        run_child(capture, "capture --once")?;
        let capture_s = started.elapsed().as_secs_f64();
        if keep.is_some() {
            fs_err::write(
                &marker,
                serde_json::json!({ "requests": requests }).to_string(),
            )?;
        }
        if !json {
            eprintln!("  captured and indexed in {capture_s:.1} s; replaying…");
        }
        Some(capture_s)
    };
    let started = Instant::now();
    let mut replay = child(&user, &home)?;
    replay.args(["eval", "replay", "--json"]);
    let out = run_child(replay, "eval replay")?;
    let replay_s = started.elapsed().as_secs_f64();
    let report: ReplayReport =
        serde_json::from_str(&out).context("`cairn eval replay --json` printed no report")?;
    let figures = Figures {
        requests,
        sessions,
        capture_s,
        replay_s,
        requests_per_s: report.note.requests as f64 / replay_s.max(f64::EPSILON),
        report,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
        return Ok(());
    }
    let captured = figures.capture_s.map_or_else(
        || "captured by an earlier run".to_owned(),
        |s| format!("captured and indexed in {s:.1} s"),
    );
    println!(
        "{} requests in {} sessions: {captured}; replayed in {:.1} s ({:.1} requests/s, the \
         child process's whole run).",
        figures.requests, figures.sessions, figures.replay_s, figures.requests_per_s
    );
    crate::replay::print_report(&figures.report);
    Ok(())
}
