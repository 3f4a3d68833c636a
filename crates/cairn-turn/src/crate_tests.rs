//! The turn note's decision without a service: a real store in a temporary folder, a real
//! keyword index over it, the shipped ranker and the injection log, gathered as the host
//! gathers them ([`Memory`]); no embedder or cross-encoder (the note goes by keywords, as it
//! does before the models are loaded).
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::sync::Arc;

use crate::{Memory, note};
use cairn_core::api::{InjectionsReq, TurnNoteReq, WhyReq};
use cairn_core::{Chunk, NewRecord};
use cairn_index::TextIndex;
use cairn_store::Store;

const T0: i64 = 1_780_000_000;

/// A captured request with its answer, `minute`s after the first one.
fn record(id: &str, session: &str, minute: i64, request: &str, answer: &str) -> NewRecord {
    let at = chrono::DateTime::from_timestamp(T0 + minute * 60, 0).unwrap();
    serde_json::from_value(serde_json::json!({
        "id": id, "framework": "claude-code", "session_id": session,
        "project": "github.com/acme/shop", "outcome": "success", "started_at": at,
        "request": request, "text": format!("{request}\n\n{answer}"),
        "content": {"steps": [{"type": "text", "text": answer}]},
    }))
    .unwrap()
}

/// A memory of a few sessions, and the handles a turn reads.
async fn memory(home: &std::path::Path) -> Memory {
    let paths = cairn_config::Paths::under(home);
    paths.create_all().unwrap();
    let store = Store::open(&paths.database()).await.unwrap();
    let batch: Vec<(NewRecord, Vec<Chunk>)> = [
        record(
            "r_pool",
            "s1",
            0,
            "why does the staging database refuse connections?",
            "The pgbouncer pool listens on port 6543 for staging; set PGPORT=6543 in .env.staging.",
        ),
        record(
            "r_css",
            "s2",
            10,
            "fix the navbar overflow on mobile",
            "Added overflow-x: hidden to the navbar container in styles/nav.css.",
        ),
        record(
            "r_later",
            "s3",
            600,
            "staging database port again?",
            "Still pgbouncer on 6543 for the staging database.",
        ),
        record(
            "r_own",
            "s4",
            300,
            "which port does the staging database use?",
            "Looking into the staging database port now.",
        ),
    ]
    .into_iter()
    .map(|r| (r, Vec::new()))
    .collect();
    store.append_records(&batch).await.unwrap();
    let text = Arc::new(TextIndex::open(&paths.index_dir().join("text")).unwrap());
    text.sync(&store).await.unwrap();
    let llm = cairn_config::Settings::load(&paths, &Default::default(), std::iter::empty())
        .unwrap()
        .settings
        .llm;
    Memory {
        store,
        paths,
        llm,
        memory_on: true,
        text,
        vectors: None,
        embedder: None,
        reranker: None,
        items: None,
        notes: None,
        state: Arc::default(),
    }
}

fn ask(prompt: &str, at: Option<i64>, dry_run: bool) -> TurnNoteReq {
    TurnNoteReq {
        framework: "claude-code".into(),
        project: Some("github.com/acme/shop".into()),
        session_id: Some("s4".into()),
        turn_id: None,
        prompt: prompt.into(),
        context: Vec::new(),
        dry_run,
        at: at.map(|m| {
            cairn_core::api::timestamp(&chrono::DateTime::from_timestamp(T0 + m * 60, 0).unwrap())
        }),
    }
}

#[tokio::test]
async fn the_note_decides_from_the_memory_held_at_the_turn_and_logs_every_candidate() {
    let home = tempfile::tempdir().unwrap();
    let memory = memory(home.path()).await;
    let prompt = "which port does the staging database use with pgbouncer?";

    // Asked at minute 300: the later session is not remembered yet, and the asking
    // conversation's own record is never a candidate.
    let (note, cands) = memory.note(ask(prompt, Some(300), false)).await.unwrap();
    let ids: Vec<&str> = cands.iter().map(|c| c.meta.id.as_str()).collect();
    assert!(ids.contains(&"r_pool"), "{ids:?}");
    assert!(
        !ids.contains(&"r_later"),
        "asked before it was said: {ids:?}"
    );
    assert!(!ids.contains(&"r_own"), "the asking conversation: {ids:?}");
    for c in &cands {
        assert_eq!(c.features.len(), note::FEATURES.len());
        assert!((0.0..=1.0).contains(&c.probability), "{}", c.probability);
    }
    // The record that holds the answer ranks above the unrelated one.
    let p = |id: &str| {
        cands
            .iter()
            .find(|c| c.meta.id == id)
            .map(|c| c.probability)
    };
    if let Some(css) = p("r_css") {
        assert!(p("r_pool").unwrap() > css, "{cands:?}");
    }
    // Shown or silent, the note says which and the bar is the model's.
    assert_eq!(note.entries.is_empty(), note.note.is_none());
    assert_eq!(note.entries.is_empty(), note.silent_because.is_some());
    assert!(note.entries.len() <= note::MAX_ENTRIES);
    assert!(note.entries.iter().all(|e| e.probability >= note.bar));

    // The turn is in the injection log with every candidate and the ranker's inputs.
    assert!(note.turn.starts_with("t_"), "{}", note.turn);
    let why = crate::log::why(
        &memory.store,
        WhyReq {
            turn: "last".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(why.turn, note.turn);
    assert_eq!(why.entries.len(), cands.len());
    assert!(
        why.entries
            .iter()
            .all(|e| e.features.len() == note::FEATURES.len())
    );

    // Asked now, the later session is a candidate too; a dry run is logged nowhere.
    let (dry, cands) = memory.note(ask(prompt, None, true)).await.unwrap();
    assert!(dry.turn.is_empty());
    assert!(cands.iter().any(|c| c.meta.id == "r_later"));
    let log = crate::log::list(
        &memory.store,
        &memory.paths,
        InjectionsReq {
            limit: None,
            shown_only: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(log.turns, 1);
}

#[tokio::test]
async fn with_memory_off_or_an_empty_message_the_note_is_silent_and_a_missing_framework_refused() {
    let home = tempfile::tempdir().unwrap();
    let mut memory = memory(home.path()).await;
    let (note, cands) = memory.note(ask("   ", None, false)).await.unwrap();
    assert_eq!(note.silent_because.as_deref(), Some("the message is empty"));
    assert!(cands.is_empty());

    let mut bad = ask("which port?", None, false);
    bad.framework = String::new();
    let err = memory.note(bad).await.unwrap_err();
    assert_eq!(err.code(), cairn_core::ErrorCode::BadRequest);

    memory.memory_on = false;
    let (note, cands) = memory
        .note(ask("which port does staging use?", None, false))
        .await
        .unwrap();
    assert_eq!(note.silent_because.as_deref(), Some("memory is off"));
    assert!(note.turn.is_empty() && cands.is_empty());
}
