//! cairn-api end to end: a real service on loopback (store, HTTP server, workers), driven
//! over raw TCP and through the real client.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

mod embed_with;
mod fake_judge;
mod files;
mod items_index;
mod llm_settings;
mod note_outcomes;
mod outside;
mod profiles;
mod ranker_status;
mod review;
mod trust;
mod turn_note;

use std::path::{Path, PathBuf};

use cairn_api::{Host, ServiceHandle, ServiceOptions};
use cairn_config::{Paths, Settings};

/// A daemon's service on a temporary home: no model download, no capture, a free port; the
/// HTTP server and the UI folder as asked.
pub(crate) async fn start_service(
    home: &Path,
    serve_http: bool,
    ui_dir: Option<PathBuf>,
) -> ServiceHandle {
    let paths = Paths::under(home);
    let env = [
        ("CAIRN__MODELS__DOWNLOAD", "false"),
        ("CAIRN__CAPTURE__ENABLED", "false"),
        ("CAIRN__SERVICE__PORT", "0"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let loaded = Settings::load(&paths, &Default::default(), env.into_iter()).unwrap();
    ServiceHandle::start(ServiceOptions {
        paths,
        settings: loaded.settings,
        config_file: loaded.file,
        host: Host::Daemon,
        serve_http,
        ui_dir,
    })
    .await
    .unwrap()
}

/// The store's integrity check is not on the start path (it reads the whole file); the
/// service runs it right after start, and a damaged page that opening never read is named
/// in status while everything else goes on answering.
#[tokio::test]
async fn a_damaged_page_of_the_store_is_reported_in_status_after_start() {
    use cairn_core::{Chunk, NewRecord, Outcome, RecordId};
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path());
    paths.create_all().unwrap();
    let store = cairn_store::Store::open(&paths.database()).await.unwrap();
    let batch: Vec<(NewRecord, Vec<Chunk>)> = (0..400)
        .map(|i| {
            let id = RecordId::derive("test", "session", &i.to_string());
            let text = format!("turn {i} {}", "words of a long turn ".repeat(80));
            let rec = NewRecord {
                id: id.clone(),
                framework: "test".into(),
                session_id: "session".into(),
                project: None,
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: chrono::Utc::now(),
                ended_at: None,
                request: format!("request {i}"),
                author: None,
                text: text.clone(),
                content: serde_json::json!({ "messages": [{ "role": "user", "text": text }] }),
                source: None,
            };
            let chunk = Chunk {
                record_id: id,
                ord: 0,
                start: 0,
                text,
            };
            (rec, vec![chunk])
        })
        .collect();
    store.append_records(&batch).await.unwrap();
    store.close().await.unwrap();
    let mut bytes = fs_err::read(paths.database()).unwrap();
    let at = (bytes.len() * 3 / 4) / 4096 * 4096;
    bytes[at..at + 3 * 4096].fill(0);
    fs_err::write(paths.database(), &bytes).unwrap();

    let handle = start_service(home.path(), false, None).await;
    let service = handle.service();
    let mut warnings = Vec::new();
    for _ in 0..150 {
        let status = service
            .dispatch("status", serde_json::json!({}))
            .await
            .unwrap();
        warnings = status["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect();
        if warnings.iter().any(|w| w.contains("integrity check")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let found = warnings
        .iter()
        .find(|w| w.contains("integrity check"))
        .unwrap_or_else(|| panic!("status never named the damage: {warnings:?}"));
    assert!(
        found.contains(&paths.database().display().to_string()),
        "{found}"
    );
    handle.shutdown().await;
}
