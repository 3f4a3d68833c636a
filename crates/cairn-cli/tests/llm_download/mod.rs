//! `cairn llm download` end to end against a loopback server named by `HF_ENDPOINT` (no outside
//! network): nothing else reaches for the model, the download asks for the pinned file at the
//! pinned revision, and a download that breaks off is refused with nothing left in the cache.
//! (The check of the sha256 itself is tested in cairn-models, on a served SmolLM2 file.)
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::{cairn, walk};

/// The offered file's pinned size.
const SIZE: u64 = 1_117_320_736;
/// Where the pinned file is asked for.
const PATH: &str = "/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/\
                    91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf";

/// A loopback server that announces the pinned size, sends 64 KiB and hangs up; it records
/// each request line.
fn breaking_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                    break;
                }
            }
            log.lock().unwrap().push(line.trim().to_owned());
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {SIZE}\r\nContent-Type: \
                 application/octet-stream\r\nConnection: close\r\n\r\n"
            );
            // The client may hang up early (a refused download): that is not the server's error.
            let sent = stream
                .write_all(head.as_bytes())
                .and_then(|()| stream.write_all(&[0_u8; 64 * 1024]))
                .and_then(|()| stream.flush());
            if let Err(err) = sent {
                eprintln!("the test server's answer was cut short: {err}");
            }
        }
    });
    (endpoint, seen)
}

#[test]
fn llm_download_fetches_only_when_asked_and_a_broken_download_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (endpoint, seen) = breaking_server();

    // Other commands never reach for the model.
    let out = cairn(home.path())
        .args(["llm", "usage", "--json"])
        .env("HF_ENDPOINT", &endpoint)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing is downloaded unasked"
    );

    let out = cairn(home.path())
        .args(["llm", "download"])
        .env("HF_ENDPOINT", &endpoint)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The offer is printed before the download: size, memory, speed, licence.
    assert!(
        stdout.contains("Qwen2.5-1.5B-Instruct (Q4_K_M) (Apache-2.0)"),
        "{stdout}"
    );
    assert!(stdout.contains("(1117320736 bytes)"), "{stdout}");
    assert!(stdout.contains("Memory:   9.0 GB"), "{stdout}");
    assert!(
        stdout.contains("Speed:    measured after the first call"),
        "{stdout}"
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "unavailable: {stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("qwen2.5-1.5b-instruct-q4_k_m.gguf")
            && stderr.contains("after 65536 bytes"),
        "{stderr}"
    );
    assert_eq!(*seen.lock().unwrap(), [format!("GET {PATH} HTTP/1.1")]);
    let left: Vec<_> = walk(&home.path().join("data"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("qwen"))
        .collect();
    assert!(left.is_empty(), "nothing of the download stays: {left:?}");

    // An endpoint that does not answer is named, and the exit code says it failed.
    let out = cairn(home.path())
        .args(["llm", "download", "--json"])
        .env("HF_ENDPOINT", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
}

/// Puts a stand-in for an earlier verified download in the cache: a sparse file of the pinned
/// size and the stamp Cairn writes after checking a download (size, time, sha256). Written for
/// this test: the real file (1.1 GB) cannot be fetched here.
fn stand_in_download(home: &std::path::Path) -> std::path::PathBuf {
    let dir = home.join("data/models/qwen2.5-1.5b-instruct");
    fs_err::create_dir_all(&dir).unwrap();
    let file = dir.join("qwen2.5-1.5b-instruct-q4_k_m.gguf");
    fs_err::File::create(&file).unwrap().set_len(SIZE).unwrap();
    let modified_ns = fs_err::metadata(&file)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let stamp = serde_json::json!({
        "repo": "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        "revision": "91cad51170dc346986eccefdc2dd33a9da36ead9",
        "files": {"qwen2.5-1.5b-instruct-q4_k_m.gguf": {
            "size": SIZE,
            "modified_ns": modified_ns,
            "sha256": "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e"
        }}
    });
    fs_err::write(dir.join(".cairn-verified.json"), stamp.to_string()).unwrap();
    file
}

#[test]
fn llm_download_of_a_model_already_there_fetches_nothing_and_uses_it_only_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let file = stand_in_download(home.path());
    let (endpoint, seen) = breaking_server();
    let run = |args: &[&str]| {
        let out = cairn(home.path())
            .args(args)
            .env("HF_ENDPOINT", &endpoint)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };

    let res = run(&["llm", "download", "--json"]);
    assert_eq!(res["fetched_bytes"], 0);
    assert_eq!(res["offer"]["downloaded"], true);
    assert_eq!(res["offer"]["in_use"], false);
    assert_eq!(res["offer"]["path"], file.display().to_string());
    // Not asked to use it: the provider is as it was.
    assert_eq!(run(&["llm", "usage", "--json"])["provider"], "");

    let res = run(&["llm", "download", "--use", "--json"]);
    assert_eq!(res["fetched_bytes"], 0);
    assert_eq!(res["offer"]["in_use"], true);
    let status = run(&["llm", "usage", "--json"]);
    assert_eq!(status["provider"], "local");
    assert_eq!(status["model_path"], file.display().to_string());
    assert!(seen.lock().unwrap().is_empty(), "nothing was fetched");
}
