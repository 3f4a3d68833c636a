//! Re-ranking decides the order callers get. Records and notes are ranked as one list; a real
//! daemon told to use the test re-ranker (`models.reranker = "test:reverse"`, which scores
//! each candidate by its fused position) must hand back exactly the reversed fused order, notes
//! and records interleaved, at every surface: `cairn search --json`, `POST /api/rpc/search`
//! with the token from `service.json`, and the MCP `search` tool. `reranked` is true only when
//! the re-ranker ran.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_cairn");
const QUERY: &str = "kestrel migration";
const STUB: &str = "test:reverse";

/// The environment of every process: a private home, no model downloads (so no real
/// cross-encoder or embedder: keyword search), and the stub re-ranker when `stub`.
fn env(c: &mut Command, home: &Path, ch: &Path, stub: bool) {
    c.env("HOME", home)
        .env("CAIRN_HOME", ch)
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .env("CAIRN__CAPTURE__STARTUP_DELAY_SECONDS", "3600")
        .env_remove("CAIRN__MODELS__EMBEDDER")
        .env_remove("CAIRN_LOG")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME");
    if stub {
        c.env("CAIRN__MODELS__RERANKER", STUB);
    } else {
        c.env_remove("CAIRN__MODELS__RERANKER");
    }
}

/// A home with one Claude Code conversation of three turns about the kestrel migration,
/// each matching the query to a different degree.
fn fake_home(home: &Path) {
    let dir = home.join(".claude/projects/-tmp-kestrel");
    fs_err::create_dir_all(&dir).unwrap();
    let turns = [
        (
            "Why does the kestrel migration time out? The kestrel migration hangs.",
            "The kestrel migration holds a lock on the orders table; run the migration in batches.",
        ),
        (
            "How do we batch the kestrel migration?",
            "Use the --batch-size flag of the runner; 500 rows keeps the lock short.",
        ),
        (
            "Unrelated: how do I rename a branch in git, and also what was kestrel again?",
            "Use git branch -m old new; then push the new name and delete the old one on the remote.",
        ),
    ];
    let mut body = String::new();
    for (n, (ask, answer)) in turns.iter().enumerate() {
        let n = n + 1;
        let u = format!("u-{n}");
        for l in [
            json!({"type":"user","uuid":u,"parentUuid":null,"sessionId":"sess-kestrel","timestamp":format!("2026-09-0{n}T09:00:00Z"),"cwd":"/tmp/kestrel","message":{"role":"user","content":ask}}),
            json!({"type":"assistant","uuid":format!("a-{n}"),"parentUuid":u,"sessionId":"sess-kestrel","timestamp":format!("2026-09-0{n}T09:00:05Z"),"cwd":"/tmp/kestrel","message":{"id":format!("m-{n}"),"role":"assistant","model":"claude-test","content":[{"type":"text","text":answer}],"stop_reason":"end_turn"}}),
        ] {
            body.push_str(&format!("{l}\n"));
        }
    }
    fs_err::write(dir.join("sess-kestrel.jsonl"), body).unwrap();
}

struct Daemon(Child);

impl Daemon {
    fn start(home: &Path, ch: &Path, stub: bool) -> Self {
        let mut c = Command::new(BIN);
        env(&mut c, home, ch, stub);
        let mut child = c
            .arg("daemon")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next().expect("daemon exited early").unwrap();
            if line.contains("http://127.0.0.1:") {
                break;
            }
        }
        std::thread::spawn(move || for _ in lines {});
        Self(child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ignored = self.0.kill();
        let _ignored = self.0.wait();
    }
}

async fn mcp_client(home: &Path, ch: &Path, stub: bool) -> RunningService<RoleClient, ()> {
    let mut c = Command::new(BIN);
    env(&mut c, home, ch, stub);
    c.args(["mcp", "--project", "/tmp/kestrel"])
        .stderr(Stdio::null());
    let c = tokio::process::Command::from(c);
    ().serve(TokioChildProcess::new(c).unwrap()).await.unwrap()
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments are an object")
    };
    c.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
        .await
        .unwrap()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `POST /api/rpc/{method}` on the running service, with the URL and token `service.json`
/// gives, over a plain socket: the HTTP API as any client sees it.
fn http(ch: &Path, method: &str, body: &Value) -> Value {
    let file: Value =
        serde_json::from_str(&fs_err::read_to_string(ch.join("run/service.json")).unwrap())
            .unwrap();
    let url = file["url"].as_str().unwrap();
    let token = file["token"].as_str().unwrap();
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let payload = body.to_string();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        s,
        "POST /api/rpc/{method} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{method}: {head}\n{body}");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{method}: {e}: {body}"))
}

/// The body of a chunked HTTP/1.1 response.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
}

/// Waits until the service has loaded its models (or found it has none): the summary the
/// models worker leaves names the re-ranker. A search asks for them too.
fn models_ready(ch: &Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let status = http(ch, "status", &json!({}));
        let models = status["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == "models" && w["state"] == "idle")
            .and_then(|w| w["detail"].as_str())
            .filter(|d| d.contains("re-ranker:"))
            .map(str::to_owned);
        if let Some(d) = models {
            return d;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the models never finished loading: {status}"
        );
        let _warm = http(ch, "search", &json!({"query": QUERY, "rerank": false}));
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The ids of a search result's hits, in order.
fn ids(hits: &Value) -> Vec<String> {
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `cairn search QUERY --json` (through the running daemon): the ids, and what it said on
/// stderr.
fn cli(home: &Path, ch: &Path, stub: bool) -> (Vec<String>, String) {
    let mut c = Command::new(BIN);
    env(&mut c, home, ch, stub);
    let out = c
        .args(["search", QUERY, "--rerank", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    (ids(&hits), stderr)
}

async fn mcp(home: &Path, ch: &Path, stub: bool) -> Value {
    let c = mcp_client(home, ch, stub).await;
    let r = call(&c, "search", json!({"query": QUERY, "limit": 20})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let v = r.structured_content.clone().unwrap();
    // The text the agent reads lists the hits in the same order.
    let t = text(&r);
    let at: Vec<usize> = ids(&v["hits"])
        .iter()
        .map(|id| t.find(id.as_str()).unwrap_or_else(|| panic!("{id} in {t}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{t}");
    c.cancel().await.unwrap();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rerankers_order_reaches_the_cli_http_and_mcp_with_notes_and_records_in_one_list() {
    let home = tempfile::tempdir().unwrap();
    let ch = tempfile::tempdir().unwrap();
    let (home, ch) = (home.path(), ch.path());
    fake_home(home);
    let mut cap = Command::new(BIN);
    env(&mut cap, home, ch, false);
    let out = cap.args(["capture", "--once", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // No re-ranker: the fused order, and `reranked: false` everywhere.
    let fused = {
        let _daemon = Daemon::start(home, ch, false);
        let c = mcp_client(home, ch, false).await;
        for (path, body) in [
            (
                "kestrel-runbook.md",
                "# Kestrel runbook\nThe kestrel migration: kestrel kestrel migration in batches.\n",
            ),
            (
                "kestrel-aside.md",
                "# Aside\nA note that names kestrel once among many other words about lunch, coffee and naming.\n",
            ),
        ] {
            let r = call(
                &c,
                "notes",
                json!({"command": "create", "scope": "user", "path": path, "file_text": body}),
            )
            .await;
            assert_ne!(r.is_error, Some(true), "{}", text(&r));
        }
        c.cancel().await.unwrap();
        let models = models_ready(ch);
        assert!(models.contains("re-ranker: none"), "{models}");

        let res = http(ch, "search", &json!({"query": QUERY, "rerank": true}));
        assert_eq!(res["reranked"], false, "{res}");
        assert!(
            res["notes"].to_string().contains("not re-ranked"),
            "says why: {res}"
        );
        let fused = ids(&res["hits"]);
        let kinds: String = res["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| match h["source"].as_str().unwrap() {
                "record" => 'r',
                _ => 'n',
            })
            .collect();
        assert_eq!(kinds.matches('r').count(), 3, "every turn is found: {res}");
        assert_eq!(kinds.matches('n').count(), 2, "both notes are found: {res}");
        // One list: neither kind is simply appended after the other.
        assert!(
            kinds.contains("rn") && kinds.contains("nr"),
            "records and notes interleave: {kinds}"
        );

        let (cli_ids, stderr) = cli(home, ch, false);
        assert_eq!(cli_ids, fused, "the CLI shows the fused order");
        assert!(stderr.contains("not re-ranked"), "{stderr}");

        let v = mcp(home, ch, false).await;
        assert_eq!(ids(&v["hits"]), fused, "MCP shows the fused order");
        assert_eq!(v["reranked"], false);
        fused
    };
    let mut reversed = fused.clone();
    reversed.reverse();

    // The stub re-ranker: its order, reversed, is what every surface gets.
    let _daemon = Daemon::start(home, ch, true);
    let models = models_ready(ch);
    assert!(models.contains(&format!("re-ranker: {STUB}")), "{models}");
    let res = http(ch, "search", &json!({"query": QUERY, "rerank": true}));
    assert_eq!(res["reranked"], true, "{res}");
    assert!(!res["notes"].to_string().contains("re-ranked"), "{res}");
    assert_eq!(ids(&res["hits"]), reversed, "HTTP: the re-ranker decides");

    // Asked not to re-rank: the fused order, and not reported as re-ranked.
    let res = http(ch, "search", &json!({"query": QUERY, "rerank": false}));
    assert_eq!(res["reranked"], false, "{res}");
    assert_eq!(ids(&res["hits"]), fused);

    let (cli_ids, stderr) = cli(home, ch, true);
    assert_eq!(cli_ids, reversed, "CLI: the re-ranker decides");
    assert!(!stderr.contains("re-ranked"), "{stderr}");

    let v = mcp(home, ch, true).await;
    assert_eq!(v["reranked"], true, "{v}");
    assert_eq!(ids(&v["hits"]), reversed, "MCP: the re-ranker decides");
}
