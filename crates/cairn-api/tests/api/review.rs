//! The review inbox (`review_list`, `review_act`, `review_undo`) on a real store and a real
//! working tree: each category is found from what is stored and what the project's folder
//! holds, each action changes the item log as it says, and undo puts everything back.
use std::path::Path;

use cairn_api::{ApiError, Service, ServiceHandle};
use cairn_core::{
    Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, NewRecord, Outcome, RecordId,
};
use chrono::TimeZone;
use serde_json::{Value, json};

const PROJECT: &str = "github.com/acme/heron";

async fn start(home: &Path) -> ServiceHandle {
    super::start_service(home, false, None).await
}

fn item(id: &str, kind: ItemKind, title: &str, summary: &str, body: &str, day: u32) -> Item {
    let at = chrono::Utc
        .with_ymd_and_hms(2026, 9, day, 10, 0, 0)
        .unwrap();
    Item {
        id: ItemId::new(id),
        kind,
        title: title.into(),
        summary: summary.into(),
        body: body.into(),
        cues: vec![format!("cue of {id}")],
        concepts: vec![],
        importance: 3,
        certainty: Certainty::Stated,
        project: Some(PROJECT.into()),
        sources: vec![RecordId::new(format!("r_{id}"))],
        happened_at: None,
        said_at: Some(at),
        ended_at: None,
        superseded_by: None,
        archived: false,
        provenance: None,
    }
}

fn record(id: &str, cwd: &Path) -> NewRecord {
    let at = chrono::Utc.with_ymd_and_hms(2026, 9, 1, 9, 0, 0).unwrap();
    NewRecord {
        id: RecordId::new(format!("r_{id}")),
        framework: "claude-code".into(),
        session_id: "s1".into(),
        project: Some(PROJECT.into()),
        cwd: Some(cwd.display().to_string()),
        model: None,
        outcome: Outcome::Success,
        started_at: at,
        ended_at: None,
        request: format!("request behind {id}"),
        author: None,
        text: format!("request behind {id}"),
        content: json!({}),
        source: None,
    }
}

/// Acts on an inbox entry.
async fn act(service: &Service, params: Value) -> Result<Value, ApiError> {
    service.dispatch("review_act", params).await
}

/// An item as it is now.
async fn now(service: &Service, id: &str) -> Item {
    service
        .store()
        .item(&ItemId::new(id))
        .await
        .unwrap()
        .unwrap()
}

fn entry<'a>(inbox: &'a Value, category: &str, id: &str) -> Option<&'a Value> {
    inbox["entries"].as_array().unwrap().iter().find(|e| {
        e["category"] == category
            && e["subjects"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == id)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_finds_each_category_and_every_action_is_logged_and_undone() {
    let home = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    fs_err::create_dir_all(root.join(".git")).unwrap();
    fs_err::create_dir_all(root.join("src/net")).unwrap();
    fs_err::create_dir_all(root.join(".github/workflows")).unwrap();
    fs_err::write(root.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    fs_err::write(
        root.join("src/net/listen.rs"),
        "pub fn bind_listener(port: u16) {}\n",
    )
    .unwrap();
    fs_err::write(
        root.join("CLAUDE.md"),
        "# Rules\n\n- Run cargo fmt before every commit.\n",
    )
    .unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let store = service.store();

    let items = [
        // A near-duplicate pair: the same fact said twice.
        item(
            "i_dup1",
            ItemKind::Fact,
            "Release builds need the locked flag",
            "Release builds need cargo build --locked so the lock file is honoured",
            "Run cargo build --release --locked.",
            2,
        ),
        item(
            "i_dup2",
            ItemKind::Fact,
            "Release builds need the locked flag",
            "Release builds need cargo build --locked so the lock file is honoured",
            "CI failed without --locked on the release job.",
            3,
        ),
        // A contradiction: the same setting, different numbers.
        item(
            "i_port1",
            ItemKind::Fact,
            "Staging Postgres port",
            "Staging Postgres listens on port 6543",
            "Connect with psql -p 6543.",
            4,
        ),
        item(
            "i_port2",
            ItemKind::Fact,
            "Staging Postgres port",
            "Staging Postgres listens on port 5432",
            "Moved back to the default port.",
            8,
        ),
        // Stale: cites a file and a symbol the tree no longer has; and one that is current.
        item(
            "i_stale",
            ItemKind::Architecture,
            "Where the HTTP server starts",
            "The HTTP server starts in src/server/boot.rs through `start_http_server`",
            "See src/server/boot.rs.",
            5,
        ),
        item(
            "i_fresh",
            ItemKind::Architecture,
            "Where the listener binds",
            "The listener binds in src/net/listen.rs through `bind_listener`",
            "See `listen.rs`; CI runs it from .github/workflows/ci.yml.",
            5,
        ),
        // Junk: nearly empty; Cairn's own note read back; a restated instruction.
        item("i_empty", ItemKind::Observation, "ok", "ok", "", 6),
        item(
            "i_echo",
            ItemKind::Fact,
            "Earlier records",
            "<cairn-memory> From Cairn's memory of earlier sessions </cairn-memory>",
            "a note Cairn showed",
            6,
        ),
        item(
            "i_rule",
            ItemKind::Procedure,
            "Format before commit",
            "Run cargo fmt before every commit",
            "The team rule.",
            7,
        ),
    ];
    let mut batch = Vec::new();
    for i in &items {
        batch.push((record(i.id.as_str(), root), vec![]));
    }
    store.append_records(&batch).await.unwrap();
    for i in &items {
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: i.clone(),
                reason: None,
            })
            .await
            .unwrap();
    }

    let inbox = service.dispatch("review_list", json!({})).await.unwrap();
    let dup = entry(&inbox, "duplicate", "i_dup1").expect("the duplicate pair");
    assert_eq!(dup["key"], "duplicate:i_dup1+i_dup2");
    assert_eq!(dup["actions"], json!(["merge", "archive", "keep"]));
    let conflict = entry(&inbox, "contradiction", "i_port1").expect("the port contradiction");
    assert_eq!(
        conflict["subjects"][0]["id"], "i_port2",
        "the newer is suggested to stay"
    );
    assert!(
        conflict["reason"].as_str().unwrap().contains("6543"),
        "{conflict}"
    );
    assert!(
        entry(&inbox, "duplicate", "i_port1").is_none(),
        "a contradiction is not also a duplicate"
    );
    let stale = entry(&inbox, "stale", "i_stale").expect("the stale item");
    let why = stale["reason"].as_str().unwrap();
    assert!(
        why.contains("src/server/boot.rs") && why.contains("start_http_server"),
        "{why}"
    );
    assert!(entry(&inbox, "stale", "i_fresh").is_none(), "{inbox:#}");
    for id in ["i_empty", "i_echo", "i_rule"] {
        assert!(
            entry(&inbox, "junk", id).is_some(),
            "{id} is junk: {inbox:#}"
        );
    }
    assert!(
        entry(&inbox, "junk", "i_rule").unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("CLAUDE.md")
    );
    assert_eq!(
        inbox["counts"],
        json!({"duplicate": 1, "contradiction": 1, "stale": 1, "junk": 3})
    );
    assert_eq!(inbox["entries"][0]["category"], "contradiction");

    // Merge keeps every source and cue of both; the other is superseded by it.
    let merged = act(
        &service,
        json!({"entry": "duplicate:i_dup1+i_dup2", "action": "merge", "keep": "i_dup1"}),
    )
    .await
    .unwrap();
    let merge_id = merged["id"].as_str().unwrap().to_owned();
    assert!(merge_id.starts_with("rv_"));
    let kept = now(&service, "i_dup1").await;
    assert_eq!(kept.sources.len(), 2);
    assert!(
        kept.body.contains("CI failed without --locked"),
        "{}",
        kept.body
    );
    assert!(kept.cues.contains(&"cue of i_dup2".to_owned()));
    let gone = now(&service, "i_dup2").await;
    assert_eq!(gone.superseded_by, Some(ItemId::new("i_dup1")));
    // Supersede: the older port is replaced by the newer.
    let sup = act(
        &service,
        json!({"entry": "contradiction:i_port1+i_port2", "action": "supersede"}),
    )
    .await
    .unwrap();
    assert_eq!(
        now(&service, "i_port1").await.superseded_by,
        Some(ItemId::new("i_port2")),
        "{sup}"
    );
    // Archive the stale item; keep the restated rule.
    act(
        &service,
        json!({"entry": "stale:i_stale", "action": "archive"}),
    )
    .await
    .unwrap();
    assert!(now(&service, "i_stale").await.archived);
    let keep = act(&service, json!({"entry": "junk:i_rule", "action": "keep"}))
        .await
        .unwrap();

    let after = service.dispatch("review_list", json!({})).await.unwrap();
    assert_eq!(
        after["counts"],
        json!({"duplicate": 0, "contradiction": 0, "stale": 0, "junk": 2}),
        "{after:#}"
    );
    assert_eq!(after["recent"].as_array().unwrap().len(), 4);
    assert_eq!(after["recent"][0]["id"], keep["id"], "newest first");

    // Undo everything, newest first: the inbox is as it was.
    for a in after["recent"].as_array().unwrap() {
        let undone = service
            .dispatch("review_undo", json!({"action": a["id"]}))
            .await
            .unwrap();
        assert!(undone["undone_at"].is_string());
    }
    let again = service.dispatch("review_list", json!({})).await.unwrap();
    assert_eq!(
        again["entries"], inbox["entries"],
        "undo gives the inbox back"
    );
    let restored = now(&service, "i_dup1").await;
    assert_eq!(restored, items[0], "the merged item is back as it was");
    assert_eq!(now(&service, "i_dup2").await, items[1]);
    let history = store.item_history(&ItemId::new("i_dup2")).await.unwrap();
    let kinds: Vec<_> = history.iter().map(|e| e.event.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ItemEventKind::Created,
            ItemEventKind::Superseded,
            ItemEventKind::Restored
        ],
        "nothing in the log is rewritten"
    );
    let twice = service
        .dispatch("review_undo", json!({"action": merge_id}))
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("already undone"), "{twice}");

    // An undo that would lose a later change is refused, and changes nothing.
    let arch = act(
        &service,
        json!({"entry": "junk:i_empty", "action": "archive"}),
    )
    .await
    .unwrap();
    let mut later = now(&service, "i_empty").await;
    later.archived = false;
    later.body = "restored by hand with more in it".into();
    store
        .append_item_event(&NewItemEvent {
            kind: ItemEventKind::Restored,
            item: later.clone(),
            reason: None,
        })
        .await
        .unwrap();
    let refused = service
        .dispatch("review_undo", json!({"action": arch["id"]}))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("changed after"), "{refused}");
    assert_eq!(now(&service, "i_empty").await, later);

    // Bad requests name the problem and change nothing.
    for (params, says) in [
        (
            json!({"entry": "nonsense", "action": "keep"}),
            "not a review entry key",
        ),
        (
            json!({"entry": "stale:i_fresh", "action": "explode"}),
            "unknown review action",
        ),
        (
            json!({"entry": "stale:i_fresh", "action": "merge"}),
            "does not apply",
        ),
        (
            json!({"entry": "duplicate:i_dup1+i_dup2", "action": "merge", "keep": "i_x"}),
            "not one of",
        ),
        (
            json!({"entry": "stale:i_nothere", "action": "archive"}),
            "no item i_nothere",
        ),
    ] {
        let e = act(&service, params.clone()).await.unwrap_err();
        assert!(e.to_string().contains(says), "{params}: {e}");
    }
    let e = service
        .dispatch("review_list", json!({"category": "weird"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("unknown review category"), "{e}");

    // Clear empties the review log with the items it held.
    service.dispatch("clear", json!({})).await.unwrap();
    let empty = service.dispatch("review_list", json!({})).await.unwrap();
    assert_eq!(empty["entries"], json!([]));
    assert_eq!(empty["recent"], json!([]));
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_and_empty_notes_are_archived_and_come_back_on_undo() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let text = "# Deploy\n\nDeploys go out on Tuesdays after the staging soak passes.\n";
    for path in ["deploy.md", "deploy-copy.md"] {
        service
            .dispatch(
                "note_save",
                json!({"note": {"scope": "user", "path": path}, "content": text}),
            )
            .await
            .unwrap();
    }
    service
        .dispatch(
            "note_save",
            json!({"note": {"scope": "user", "path": "scratch.md"}, "content": "x"}),
        )
        .await
        .unwrap();
    let inbox = service.dispatch("review_list", json!({})).await.unwrap();
    let dup = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["category"] == "duplicate")
        .expect("the copied note");
    assert_eq!(dup["actions"], json!(["archive", "keep"]));
    let titles: Vec<&str> = dup["subjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"deploy.md") && titles.contains(&"deploy-copy.md"));
    let junk = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["category"] == "junk")
        .expect("the empty note");
    assert_eq!(junk["subjects"][0]["title"], "scratch.md");

    let copy = dup["subjects"][1]["title"].as_str().unwrap().to_owned();
    let act = act(&service, json!({"entry": dup["key"], "action": "archive"}))
        .await
        .unwrap();
    let gone = service
        .dispatch("note_get", json!({"scope": "user", "path": copy}))
        .await;
    assert!(gone.is_err(), "the copy is deleted");
    service
        .dispatch("review_undo", json!({"action": act["id"]}))
        .await
        .unwrap();
    let back = service
        .dispatch("note_get", json!({"scope": "user", "path": copy}))
        .await
        .unwrap();
    assert_eq!(back["content"], text);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_stored_twice_is_archived_out_of_search_and_back_on_undo() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let text = "How do we rotate the staging TLS certificate?\n\nRun scripts/rotate-cert.sh \
                staging, then restart the edge proxy; the old certificate stays valid for a \
                day, so nothing drops. Check the expiry with openssl s_client afterwards.";
    let mut batch = Vec::new();
    for (n, (framework, session, day)) in [
        ("claude-code", "s-original", 3),
        ("claude-code", "s-resumed", 5),
        ("codex", "s-other", 6),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = record(&format!("i_turn{n}"), home.path());
        r.framework = framework.into();
        r.session_id = session.into();
        r.started_at = chrono::Utc.with_ymd_and_hms(2026, 9, day, 9, 0, 0).unwrap();
        r.request = "How do we rotate the staging TLS certificate?".into();
        r.text = if n < 2 {
            text.into()
        } else {
            format!("{text} A different answer follows.")
        };
        batch.push((r, vec![]));
    }
    service.store().append_records(&batch).await.unwrap();
    service.dispatch("index_rebuild", json!({})).await.unwrap();
    let found = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let search = json!({"query": "rotate staging TLS certificate", "mode": "bm25"});
    let before = found(&service.dispatch("search", search.clone()).await.unwrap());
    assert_eq!(before.len(), 3, "{before:?}");

    let inbox = service.dispatch("review_list", json!({})).await.unwrap();
    let dups: Vec<&Value> = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["category"] == "duplicate")
        .collect();
    assert_eq!(dups.len(), 1, "only the identical pair: {inbox:#}");
    let dup = dups[0];
    assert_eq!(dup["key"], "duplicate:r_i_turn0+r_i_turn1");
    assert_eq!(dup["subjects"][0]["id"], "r_i_turn0", "the oldest stays");
    assert_eq!(dup["subjects"][0]["kind"], "record");
    assert_eq!(dup["actions"], json!(["archive", "keep"]));
    let merge = act(&service, json!({"entry": dup["key"], "action": "merge"}))
        .await
        .unwrap_err();
    assert!(merge.to_string().contains("records"), "{merge}");

    let act = act(&service, json!({"entry": dup["key"], "action": "archive"}))
        .await
        .unwrap();
    let after = found(&service.dispatch("search", search.clone()).await.unwrap());
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(!after.contains(&"r_i_turn1".to_owned()), "{after:?}");
    let opened = service
        .dispatch("open", json!({"id": "r_i_turn1"}))
        .await
        .unwrap();
    assert_eq!(opened["kind"], "record", "the log keeps it");
    let inbox = service.dispatch("review_list", json!({})).await.unwrap();
    assert_eq!(inbox["counts"]["duplicate"], 0);

    service
        .dispatch("review_undo", json!({"action": act["id"]}))
        .await
        .unwrap();
    let back = found(&service.dispatch("search", search).await.unwrap());
    assert_eq!(back.len(), 3, "{back:?}");
    handle.shutdown().await;
}
