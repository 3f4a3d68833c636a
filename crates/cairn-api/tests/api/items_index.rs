//! The items' search index follows the item log inside the service's own indexes: an item is
//! found by what it means through the vector index it shares with the records (a records'
//! search never returns it), an archived item leaves it, a restart finds the items again with
//! no embedding and no rebuild, and Clear leaves nothing of them. Once in a one-shot CLI call
//! (the search puts the vectors in itself) and once in a daemon (its indexing worker does).
use std::sync::atomic::Ordering;

use cairn_api::{Host, Service};
use cairn_core::{Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent};
use serde_json::json;

use crate::embed_with::counting;
use crate::turn_note::{remember, start_as};

const PORT: &str = "The staging Postgres database listens on port 6543.";
const RELEASE: &str = "Releases are tagged from the main branch after the changelog is updated.";
/// Shares no word with [`PORT`]: found by meaning only.
const PORT_MEANING: &str =
    "which socket number does the pre-production sql server accept connections on";
const RELEASE_MEANING: &str = "how do we ship a new version";

fn item(id: &str, title: &str, summary: &str) -> Item {
    Item {
        id: ItemId::new(id),
        kind: ItemKind::Fact,
        title: title.into(),
        summary: summary.into(),
        body: summary.into(),
        cues: Vec::new(),
        concepts: Vec::new(),
        importance: 3,
        certainty: Certainty::Stated,
        project: None,
        sources: Vec::new(),
        happened_at: None,
        said_at: Some(chrono::Utc::now()),
        ended_at: None,
        superseded_by: None,
        archived: false,
        provenance: None,
    }
}

async fn event(service: &Service, kind: ItemEventKind, it: &Item) {
    service
        .store()
        .append_item_event(&NewItemEvent {
            kind,
            item: it.clone(),
            reason: None,
        })
        .await
        .unwrap();
}

/// (source, id) of each hit.
async fn search(
    service: &Service,
    query: &str,
    kinds: &[&str],
    mode: &str,
) -> Vec<(String, String)> {
    let res = service
        .dispatch(
            "search",
            json!({ "query": query, "kinds": kinds, "mode": mode, "rerank": false }),
        )
        .await
        .unwrap();
    res["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["source"].as_str().unwrap().to_owned(),
                h["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// How far the items' points are (the item log seq), as the service records it.
async fn items_progress(service: &Service) -> Option<i64> {
    service
        .store()
        .setting::<serde_json::Value>("index.items")
        .await
        .unwrap()
        .and_then(|(v, _)| v["seq"].as_i64())
}

/// A record that speaks of the database too, so the records' search has a near neighbour.
async fn add_record(service: &Service) {
    let rec = cairn_core::NewRecord {
        id: cairn_core::RecordId::derive("claude-code", "s-1", "1"),
        framework: "claude-code".into(),
        session_id: "s-1".into(),
        project: None,
        cwd: None,
        model: None,
        outcome: cairn_core::Outcome::Success,
        started_at: chrono::Utc::now(),
        ended_at: None,
        request: "is the staging database up?".into(),
        author: None,
        text: "is the staging database up?\n\nYes, staging Postgres answers.".into(),
        content: json!({}),
        source: None,
    };
    remember(service, &[(rec, Vec::new())]).await;
}

/// Searches by meaning until `id` comes first (the daemon's worker indexes in the
/// background), at most 60 s.
async fn first_by_meaning(service: &Service, query: &str, id: &str) -> Vec<(String, String)> {
    let mut hits = Vec::new();
    for _ in 0..120 {
        hits = search(service, query, &["item"], "dense").await;
        if hits.first().is_some_and(|h| h.1 == id) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    hits
}

async fn items_live_in_the_vector_index(host: Host) {
    let home = tempfile::tempdir().unwrap();
    let handle = start_as(home.path(), host).await;
    let service = handle.service();
    add_record(service).await;
    // No vectors are stored with these items: the index's sync embeds them.
    let port = item("it_port", "Staging database port", PORT);
    let release = item("it_release", "Release checklist", RELEASE);
    event(service, ItemEventKind::Created, &port).await;
    event(service, ItemEventKind::Created, &release).await;

    let hits = first_by_meaning(service, PORT_MEANING, "it_port").await;
    assert_eq!(
        hits.first(),
        Some(&("item".to_owned(), "it_port".to_owned())),
        "found by meaning alone: {hits:?}"
    );
    // The items' points follow the item log: as far as its newest event.
    let stamp = service.store().item_log_stamp().await.unwrap();
    assert_eq!(items_progress(service).await, Some(stamp.0));
    // Near the item and the record both: a records' search finds the record only.
    let records = search(service, "is staging postgres running", &["record"], "dense").await;
    assert!(!records.is_empty(), "the record is found by meaning");
    assert!(
        records.iter().all(|(source, _)| source == "record"),
        "a records' search never sees the items' points: {records:?}"
    );

    // Archived: gone from both sides, at once for keywords.
    let mut archived = port.clone();
    archived.archived = true;
    event(service, ItemEventKind::Archived, &archived).await;
    assert!(
        search(service, "staging Postgres port 6543", &["item"], "bm25")
            .await
            .iter()
            .all(|h| h.1 != "it_port"),
        "an archived item leaves the keyword side"
    );
    let mut gone = false;
    for _ in 0..120 {
        if search(service, PORT_MEANING, &["item"], "dense")
            .await
            .iter()
            .all(|h| h.1 != "it_port")
        {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(gone, "an archived item leaves the vector side");
    handle.shutdown().await;

    // After a restart the items are found at once: nothing is embedded but the queries.
    let handle = start_as(home.path(), host).await;
    let service = handle.service();
    let counting = counting(home.path(), None).await;
    service.embed_with(counting.clone()).await.unwrap();
    let hits = search(service, RELEASE_MEANING, &["item"], "dense").await;
    assert_eq!(
        hits.first(),
        Some(&("item".to_owned(), "it_release".to_owned())),
        "{hits:?}"
    );
    assert!(
        hits.iter().all(|h| h.1 != "it_port"),
        "still archived: {hits:?}"
    );
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        1,
        "only the query is embedded: the items' vectors were kept"
    );

    // Clear: nothing of the items is left, on either side or in the store.
    service.dispatch("clear", json!({})).await.unwrap();
    for (query, mode) in [
        (RELEASE_MEANING, "dense"),
        ("changelog main branch", "bm25"),
    ] {
        assert!(
            search(service, query, &["item"], mode).await.is_empty(),
            "{mode} after Clear"
        );
    }
    assert_eq!(
        items_progress(service).await,
        Some(0),
        "Clear starts the items' points afresh"
    );
    let kept = service
        .store()
        .vectors_of_many(
            &["it_release".to_owned()],
            &cairn_index::unit::vectors_id(counting.inner.model_id()),
        )
        .await
        .unwrap();
    assert!(kept.is_empty(), "Clear leaves no item vectors in the store");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_call_finds_items_by_meaning_in_the_vector_index_it_shares_with_the_records() {
    items_live_in_the_vector_index(Host::Direct).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_indexes_items_in_the_background_and_finds_them_by_meaning() {
    items_live_in_the_vector_index(Host::Daemon).await;
}
