//! The loopback API accepts only its own clients, and a client gives its token only to the
//! service that wrote `service.json`.
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_api::{Client, ServiceFile, ServiceHandle};
use cairn_config::Paths;
use cairn_core::api::ServiceHost;

async fn start(home: &Path, ui_dir: Option<PathBuf>) -> ServiceHandle {
    super::start_service(home, true, ui_dir).await
}

/// Sends `request` as it is and returns the status and the body.
fn raw(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn get(path: &str, headers: &[String]) -> String {
    let mut r = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for h in headers {
        r.push_str(h);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r
}

fn post(path: &str, headers: &[String], body: &str) -> String {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        r.push_str(h);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r.push_str(body);
    r
}

/// Every request whose Host is not the service's own loopback address, or that carries a
/// foreign Origin, is refused with 403 and a `{code, message}` body naming the reason —
/// the health check and the UI included, and even with the right token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_for_other_hosts_or_from_other_origins_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let ui = tempfile::tempdir().unwrap();
    fs_err::write(ui.path().join("index.html"), "<h1>the cairn ui</h1>").unwrap();
    let handle = start(home.path(), Some(ui.path().to_owned())).await;
    let info = handle.info().unwrap().clone();
    let port: u16 = info.url.rsplit(':').next().unwrap().parse().unwrap();
    let other = if port == 65535 { port - 1 } else { port + 1 };
    let auth = format!("Authorization: Bearer {}", info.token);
    let own = format!("Host: 127.0.0.1:{port}");

    let hostile: Vec<(&str, String)> = vec![
        (
            "foreign Host on the health check",
            get("/api/health", &[format!("Host: evil.example:{port}")]),
        ),
        (
            "loopback Host with another port",
            get("/api/health", &[format!("Host: 127.0.0.1:{other}")]),
        ),
        (
            "localhost with another port",
            get("/api/health", &[format!("Host: localhost:{other}")]),
        ),
        (
            "Host without a port",
            get("/api/health", &["Host: localhost".to_owned()]),
        ),
        (
            "a rebinding name that starts like loopback",
            get("/api/health", &[format!("Host: 127.0.0.1.nip.io:{port}")]),
        ),
        (
            "no Host at all (HTTP/1.0)",
            "GET /api/health HTTP/1.0\r\n\r\n".to_owned(),
        ),
        (
            "foreign Host on the UI",
            get("/", &[format!("Host: evil.example:{port}")]),
        ),
        (
            "foreign Host on a UI asset",
            get("/index.html", &[format!("Host: evil.example:{port}")]),
        ),
        (
            "foreign Host with the right token",
            post(
                "/api/rpc/status",
                &[format!("Host: evil.example:{port}"), auth.clone()],
                "{}",
            ),
        ),
        (
            "absolute-form request for another host",
            get(
                &format!("http://evil.example:{port}/api/health"),
                std::slice::from_ref(&own),
            ),
        ),
        (
            "foreign Origin with the right token",
            post(
                "/api/rpc/status",
                &[
                    own.clone(),
                    auth.clone(),
                    "Origin: http://evil.example".to_owned(),
                ],
                "{}",
            ),
        ),
        (
            "foreign Origin on the health check",
            get(
                "/api/health",
                &[own.clone(), format!("Origin: http://evil.example:{port}")],
            ),
        ),
        (
            "opaque Origin (null)",
            post(
                "/api/rpc/status",
                &[own.clone(), auth.clone(), "Origin: null".to_owned()],
                "{}",
            ),
        ),
        (
            "loopback Origin with another port",
            post(
                "/api/rpc/status",
                &[
                    own.clone(),
                    auth.clone(),
                    format!("Origin: http://127.0.0.1:{other}"),
                ],
                "{}",
            ),
        ),
        (
            "https Origin",
            post(
                "/api/rpc/status",
                &[
                    own.clone(),
                    auth.clone(),
                    format!("Origin: https://127.0.0.1:{port}"),
                ],
                "{}",
            ),
        ),
        (
            "two Host headers",
            get(
                "/api/health",
                &[own.clone(), format!("Host: evil.example:{port}")],
            ),
        ),
    ];
    let mut refused = 0;
    for (what, request) in &hostile {
        let request = request.clone();
        let (status, body) = tokio::task::spawn_blocking(move || raw(port, &request))
            .await
            .unwrap();
        assert_eq!(status, 403, "{what}: {status} {body}");
        let body: serde_json::Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{what}: body is not JSON ({e}): {body}"));
        assert_eq!(body["code"], "forbidden", "{what}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.starts_with("refused:"), "{what}: {message}");
        assert!(!message.contains(&info.token), "{what}: the token leaked");
        refused += 1;
    }
    assert_eq!(refused, hostile.len());
    eprintln!(
        "requests refused by Host/Origin: {refused} of {} distinct hostile requests",
        hostile.len()
    );

    // The allowed forms pass.
    let allowed: Vec<(&str, String, &str)> = vec![
        (
            "127.0.0.1",
            get("/api/health", std::slice::from_ref(&own)),
            "\"ok\":true",
        ),
        (
            "localhost",
            get("/api/health", &[format!("Host: localhost:{port}")]),
            "\"ok\":true",
        ),
        (
            "LOCALHOST",
            get("/api/health", &[format!("Host: LOCALHOST:{port}")]),
            "\"ok\":true",
        ),
        (
            "[::1]",
            get("/api/health", &[format!("Host: [::1]:{port}")]),
            "\"ok\":true",
        ),
        (
            "the UI",
            get("/", std::slice::from_ref(&own)),
            "the cairn ui",
        ),
        (
            "a call without Origin (CLI, MCP)",
            post("/api/rpc/status", &[own.clone(), auth.clone()], "{}"),
            "\"memory\"",
        ),
        (
            "a call from the UI the service serves",
            post(
                "/api/rpc/status",
                &[
                    format!("Host: localhost:{port}"),
                    auth.clone(),
                    format!("Origin: http://localhost:{port}"),
                ],
                "{}",
            ),
            "\"memory\"",
        ),
        (
            "[::1] Origin",
            post(
                "/api/rpc/status",
                &[
                    format!("Host: [::1]:{port}"),
                    auth.clone(),
                    format!("Origin: http://[::1]:{port}"),
                ],
                "{}",
            ),
            "\"memory\"",
        ),
    ];
    for (what, request, expect) in allowed {
        let (status, body) = tokio::task::spawn_blocking(move || raw(port, &request))
            .await
            .unwrap();
        assert_eq!(status, 200, "{what}: {body}");
        assert!(body.contains(expect), "{what}: {body}");
    }
    // Host and Origin checks come before the token check, which still holds.
    let (status, _) = tokio::task::spawn_blocking(move || {
        raw(
            port,
            &post(
                "/api/rpc/status",
                &[format!("Host: 127.0.0.1:{port}")],
                "{}",
            ),
        )
    })
    .await
    .unwrap();
    assert_eq!(status, 401);
    handle.shutdown().await;
}

/// The health check reports the instance id written to `service.json`, and the real client
/// finds and uses the service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_finds_the_service_that_wrote_service_json() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path(), None).await;
    let file = Paths::under(home.path()).service_file();
    let written = ServiceFile::read(&file).unwrap();
    let instance = written.instance.clone().unwrap();
    assert_eq!(instance.len(), 32);
    let port: u16 = written.url.rsplit(':').next().unwrap().parse().unwrap();
    let (status, body) = tokio::task::spawn_blocking(move || {
        raw(
            port,
            &get("/api/health", &[format!("Host: 127.0.0.1:{port}")]),
        )
    })
    .await
    .unwrap();
    assert_eq!(status, 200);
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["instance"], &*instance);
    assert!(!body.contains(&written.token));

    let status = tokio::task::spawn_blocking(move || {
        let client = Client::discover_checked(&file).unwrap().unwrap();
        client.call("status", &serde_json::json!({}))
    })
    .await
    .unwrap()
    .unwrap();
    assert!(status.get("memory").is_some(), "{status}");
    handle.shutdown().await;
}

/// A stand-in for whatever took the service's port: answers every request, the health check
/// with `health`, and records every request it got.
struct Impostor {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Impostor {
    fn start(health: serde_json::Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, done) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !done.load(Ordering::Acquire) && Instant::now() < deadline {
                let mut stream = match listener.accept() {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                };
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(2)))
                    .unwrap();
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let body = if text.starts_with("GET /api/health") {
                    health.to_string()
                } else {
                    "{\"memory\":{}}".to_owned()
                };
                seen.lock().unwrap().push(text);
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                if let Err(e) = stream.write_all(answer.as_bytes()) {
                    eprintln!("impostor: cannot answer: {e}");
                }
            }
        });
        Self {
            port,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

const TOKEN: &str = "0123456789abcdef0123456789abcdef-the-secret-token";

fn service_file(dir: &Path, port: u16, instance: Option<&str>) -> PathBuf {
    let path = dir.join("service.json");
    ServiceFile {
        pid: 1,
        host: ServiceHost::Daemon,
        version: "0.1.0".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        url: format!("http://127.0.0.1:{port}"),
        token: TOKEN.into(),
        instance: instance.map(Into::into),
        hook_wait_ms: None,
        hook_deadline_ms: None,
    }
    .write(&path)
    .unwrap();
    path
}

/// Whatever answers at `service.json`'s address without being the service that wrote it —
/// another instance id, the right id replayed without knowing the token, or a file from a
/// Cairn that wrote no id — gets no token: not from discovery, not from a call.
#[test]
fn the_client_never_sends_the_token_to_an_impostor() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "another instance id",
            serde_json::json!({"ok": true, "instance": "someone-else"}),
            Some("the-real-one"),
        ),
        (
            "the right id replayed, no proof",
            serde_json::json!({"ok": true, "instance": "the-real-one"}),
            Some("the-real-one"),
        ),
        (
            "the right id with a made-up proof",
            serde_json::json!({"ok": true, "instance": "the-real-one", "proof": "00".repeat(32)}),
            Some("the-real-one"),
        ),
        (
            "no id in the health check",
            serde_json::json!({"ok": true}),
            Some("the-real-one"),
        ),
        (
            "a service.json without an instance id",
            serde_json::json!({"ok": true, "instance": "whatever"}),
            None,
        ),
    ];
    for (what, health, instance) in cases {
        let impostor = Impostor::start(health);
        let file = service_file(dir.path(), impostor.port, instance);

        let err = Client::discover_checked(&file).unwrap_err();
        assert!(
            err.message
                .contains("is not the one that wrote service.json")
                && err
                    .message
                    .contains(&format!("127.0.0.1:{}", impostor.port))
                && err.message.contains("token was not sent"),
            "{what}: {}",
            err.message
        );
        assert!(Client::discover(&file).is_none(), "{what}");

        // A client made straight from the file checks before its first call too.
        let client = Client::new(ServiceFile::read(&file).unwrap());
        let err = client.call("status", &serde_json::json!({})).unwrap_err();
        assert!(
            err.message
                .contains("is not the one that wrote service.json"),
            "{what}: {}",
            err.message
        );

        let requests = impostor.requests();
        assert!(
            !requests.is_empty(),
            "{what}: the impostor was asked who it is"
        );
        for request in &requests {
            assert!(
                request.starts_with("GET /api/health"),
                "{what}: only the health check reached it: {request}"
            );
            assert!(
                !request.to_ascii_lowercase().contains("authorization"),
                "{what}: an Authorization header reached the impostor: {request}"
            );
            assert!(
                !request.contains(TOKEN),
                "{what}: the token reached the impostor"
            );
        }
    }
}

/// A stale file whose address nobody answers means no service runs: no error, no client.
#[test]
fn a_stale_service_json_nobody_answers_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let file = service_file(dir.path(), port, Some("gone"));
    assert!(Client::discover_checked(&file).unwrap().is_none());
}
