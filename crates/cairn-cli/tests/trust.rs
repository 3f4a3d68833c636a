//! `cairn daemon` serves the web UI only from `--ui-dir`, `service.ui_dir` or the UI
//! installed with the program, never from the folder it was started in.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod hostile;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// Reads a starting `cairn daemon`'s address from its standard output (which is drained
/// afterwards): its base URL and its token. Panics, with its exit status, when it exits first.
fn address(child: &mut Child) -> (String, String) {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = loop {
        let Some(line) = lines.next() else {
            panic!(
                "daemon exited ({:?}) before printing its address",
                child.wait()
            );
        };
        let line = line.unwrap();
        if line.contains("http://127.0.0.1:") {
            break line;
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap();
    let (base, token) = url.split_once("/#token=").unwrap();
    (base.to_owned(), token.to_owned())
}

struct Daemon {
    child: Child,
    url: String,
}

impl Daemon {
    /// Starts `cairn daemon <args>` in `cwd` and waits for its address.
    fn start(home: &Path, cwd: &Path, args: &[&str]) -> Self {
        let mut c = Command::new(BIN);
        c.env("CAIRN_HOME", home).env_remove("CAIRN_LOG");
        for (k, _) in std::env::vars() {
            if k.starts_with("CAIRN__") {
                c.env_remove(k);
            }
        }
        let mut child = c
            .env("CAIRN__MODELS__DOWNLOAD", "false")
            .env("CAIRN__CAPTURE__ENABLED", "false")
            .current_dir(cwd)
            .arg("daemon")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (url, _token) = address(&mut child);
        Self { child, url }
    }

    /// `GET <path>`: the status and the body.
    fn get(&self, path: &str) -> (u16, String) {
        let out = Command::new("curl")
            .args(["-s", "-o", "-", "-w", "\n%{http_code}"])
            .arg(format!("{}{path}", self.url))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let (body, code) = text.rsplit_once('\n').unwrap();
        (code.parse().unwrap(), body.to_owned())
    }

    fn stop(mut self) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "daemon did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn the_ui_is_never_served_from_the_current_directory() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let planted = cwd.path().join("ui/dist");
    fs_err::create_dir_all(&planted).unwrap();
    fs_err::write(
        planted.join("index.html"),
        "<h1>planted in the working directory</h1>",
    )
    .unwrap();

    // No --ui-dir: the UI installed beside the program (none in a build tree), not ./ui/dist.
    let d = Daemon::start(home.path(), cwd.path(), &[]);
    for path in ["/", "/index.html", "/ui/dist/index.html"] {
        let (code, body) = d.get(path);
        assert_eq!(code, 404, "{path}: {body}");
        assert!(!body.contains("planted"), "{path}: {body}");
    }
    assert!(d.get("/").1.contains("web UI is not built"));
    d.stop();

    // A relative --ui-dir is the user's explicit choice; it is resolved once, at start.
    let d = Daemon::start(home.path(), cwd.path(), &["--ui-dir", "ui/dist"]);
    let (code, body) = d.get("/");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("planted"), "{body}");
    d.stop();

    // A relative service.ui_dir would depend on where Cairn starts: refused, saying why.
    let out = Command::new(BIN)
        .env("CAIRN_HOME", home.path())
        .env("CAIRN__SERVICE__UI_DIR", "ui/dist")
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .current_dir(cwd.path())
        .arg("daemon")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("service.ui_dir must be an absolute path"),
        "{err}"
    );
}
