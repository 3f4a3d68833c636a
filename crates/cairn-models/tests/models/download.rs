//! Downloading the offered GGUF model, through the same code as the real offer, from a
//! loopback HTTP server written here (no outside network): a file whose sha256 matches the
//! pin is put in place and loads; one that differs, or whose length is not the pinned size,
//! is refused and nothing is left in the cache. The served file is the SmolLM2 GGUF of
//! `CAIRN_TEST_LLM_GGUF` (the tests fail without it).
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_models::gguf::{GenerateRequest, GgufModel};
use cairn_models::{GgufOffer, ModelError, ModelFile, download_gguf, sha256_file};

/// A loopback HTTP/1.1 server answering `GET <path>` with `body` (any other path: 404), one
/// connection at a time. Counts the requests it answered.
struct Server {
    endpoint: String,
    hits: Arc<AtomicUsize>,
}

fn serve(path: String, body: Vec<u8>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                    break;
                }
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let wanted = format!("GET {path} ");
            let (status, content): (&str, &[u8]) = if request_line.starts_with(&wanted) {
                ("200 OK", &body)
            } else {
                ("404 Not Found", b"no such file")
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: \
                 application/octet-stream\r\nConnection: close\r\n\r\n",
                content.len()
            );
            // The client may hang up early (a refused download): that is not the server's error.
            let sent = stream
                .write_all(head.as_bytes())
                .and_then(|()| stream.write_all(content))
                .and_then(|()| stream.flush());
            if let Err(err) = sent {
                eprintln!("the test server's answer was cut short: {err}");
            }
        }
    });
    Server { endpoint, hits }
}

/// The real offer with its file, size and sha256 replaced: the same download code path.
fn offer_for(name: &str, size: u64, sha256: &str) -> GgufOffer {
    let mut offer = GgufOffer::qwen2_5_1_5b_instruct();
    offer.spec.name = "smollm2-test".to_owned();
    offer.spec.files = vec![ModelFile::new(name, Some(sha256))];
    offer.size = size;
    offer
}

fn url_path(offer: &GgufOffer) -> String {
    offer.url("")
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

#[test]
fn download_puts_a_file_matching_its_pin_in_place_and_it_loads() {
    let fixture = crate::gguf::llm_gguf();
    let sha = sha256_file(&fixture).unwrap();
    let bytes = fs_err::read(&fixture).unwrap();
    let offer = offer_for("SmolLM2-135M-Instruct.Q4_1.gguf", bytes.len() as u64, &sha);
    let server = serve(url_path(&offer), bytes.clone());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("models");
    assert_eq!(offer.cached(&cache).unwrap(), None);

    let seen = Mutex::new(Vec::new());
    let path = download_gguf(&offer, &server.endpoint, &cache, &|done, total| {
        seen.lock().unwrap().push((done, total));
    })
    .unwrap();
    assert_eq!(path, offer.path(&cache));
    assert_eq!(sha256_file(&path).unwrap(), sha);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.first(), Some(&(0, bytes.len() as u64)));
    assert_eq!(seen.last(), Some(&(bytes.len() as u64, bytes.len() as u64)));
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "progress goes forward"
    );
    // Only the file and the stamp that records its check: no temporary file left.
    let mut names: Vec<String> = files_under(&cache)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".cairn-verified.json", "SmolLM2-135M-Instruct.Q4_1.gguf"]
    );

    // Present and checked: a second call fetches nothing.
    assert_eq!(offer.cached(&cache).unwrap(), Some(path.clone()));
    assert_eq!(
        download_gguf(&offer, &server.endpoint, &cache, &|_, _| {}).unwrap(),
        path
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);

    let model = GgufModel::load(&path).unwrap();
    let answer = model
        .generate(&GenerateRequest {
            system: "",
            prompt: "Say hi.",
            prefill: "",
            max_tokens: 2,
            deadline: None,
            stop: &[],
        })
        .unwrap();
    assert!(answer.output_tokens >= 1, "{answer:?}");
}

#[test]
fn download_refuses_a_file_whose_sha256_differs_and_leaves_nothing() {
    let fixture = crate::gguf::llm_gguf();
    let bytes = fs_err::read(&fixture).unwrap();
    let actual = sha256_file(&fixture).unwrap();
    let pinned = "0".repeat(64);
    let offer = offer_for(
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        bytes.len() as u64,
        &pinned,
    );
    let server = serve(url_path(&offer), bytes);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("models");

    let err = download_gguf(&offer, &server.endpoint, &cache, &|_, _| {}).unwrap_err();
    match &err {
        ModelError::Checksum {
            expected,
            actual: got,
            ..
        } => {
            assert_eq!(expected, &pinned);
            assert_eq!(got, &actual);
        }
        other => panic!("expected a checksum refusal, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&pinned) && message.contains(&actual),
        "{message}"
    );
    assert_eq!(files_under(&cache), Vec::<PathBuf>::new());
    assert_eq!(offer.cached(&cache).unwrap(), None);
}

#[test]
fn download_refuses_a_file_of_another_size_and_a_missing_one() {
    let body = b"GGUF but not the pinned length".to_vec();
    let sha = {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        fs_err::write(tmp.path(), &body).unwrap();
        sha256_file(tmp.path()).unwrap()
    };
    let offer = offer_for("tiny.gguf", body.len() as u64 + 1, &sha);
    let server = serve(url_path(&offer), body);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("models");

    let err = download_gguf(&offer, &server.endpoint, &cache, &|_, _| {}).unwrap_err();
    assert!(matches!(err, ModelError::Download { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("announces 30 bytes; the pinned file has 31"),
        "{err}"
    );
    assert_eq!(files_under(&cache), Vec::<PathBuf>::new());

    // Another revision is not served: the error names the file and the status.
    let mut elsewhere = offer.clone();
    elsewhere.spec.revision = "f".repeat(40);
    let err = download_gguf(&elsewhere, &server.endpoint, &cache, &|_, _| {}).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("tiny.gguf") && message.contains("404"),
        "{message}"
    );
    assert_eq!(files_under(&cache), Vec::<PathBuf>::new());
}

#[test]
fn the_offer_is_pinned_and_sized() {
    let offer = GgufOffer::qwen2_5_1_5b_instruct();
    assert_eq!(
        offer.url("https://huggingface.co/"),
        "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/\
         91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf"
    );
    assert_eq!(offer.size, 1_117_320_736);
    assert_eq!(
        offer.sha256(),
        "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e"
    );
    assert_eq!(offer.model_id(), "qwen2.5-1.5b-instruct-q4_k_m");
    // f32 weights with the tied embedding twice, and a full 32,768-token f32 KV cache.
    assert_eq!(offer.weights_bytes(), 7_108_352_000);
    assert_eq!(offer.kv_cache_bytes(), 1_879_048_192);
    assert_eq!(offer.memory_bytes(), 8_987_400_192);
}
