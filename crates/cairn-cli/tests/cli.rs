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
        let mut child = cairn(home)
            .arg("daemon")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = loop {
            let line = lines
                .next()
                .expect("daemon exited before printing its address")
                .unwrap();
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
