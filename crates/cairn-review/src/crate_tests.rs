//! The inbox without the service: a real store, its notes and a real working tree. A
//! duplicate pair, a stale item and a copied note are found; a merge and a note's archiving
//! are logged, undone, and the notes' watcher is told each time notes change.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Inbox;
use cairn_core::api::{
    NoteRef, NoteSaveReq, NoteScopeKind, ReviewActReq, ReviewInbox, ReviewReq, ReviewUndoReq,
};
use cairn_core::{Item, ItemEventKind, ItemId, NewItemEvent, NewRecord};
use cairn_notes::{Caller, Notes};
use cairn_store::Store;
use serde_json::json;

const PROJECT: &str = "github.com/acme/wren";

/// A stored request asked in `cwd`, and an item distilled from it.
fn said(id: &str, cwd: &std::path::Path, title: &str, summary: &str) -> (NewRecord, Item) {
    let record = json!({
        "id": format!("r_{id}"), "framework": "codex", "session_id": "s1",
        "project": PROJECT, "cwd": cwd.display().to_string(), "outcome": "success",
        "started_at": "2026-09-01T09:00:00Z", "request": format!("about {title}"),
        "text": format!("about {title}"), "content": {},
    });
    let item = json!({
        "id": id, "kind": "fact", "title": title, "summary": summary, "body": "",
        "cues": [], "concepts": [], "importance": 3, "certainty": "stated",
        "project": PROJECT, "sources": [format!("r_{id}")],
        "said_at": format!("2026-09-0{}T10:00:00Z", id.len() % 9 + 1),
        "archived": false, "provenance": "user",
    });
    (
        serde_json::from_value(record).unwrap(),
        serde_json::from_value(item).unwrap(),
    )
}

fn keys(inbox: &ReviewInbox) -> Vec<&str> {
    inbox.entries.iter().map(|e| e.key.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_finds_acts_and_undoes_over_a_store_and_a_tree() {
    let data = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(tree.path().join(".git")).unwrap();
    fs_err::create_dir_all(tree.path().join("src")).unwrap();
    fs_err::write(tree.path().join("src/lib.rs"), "pub fn open_wal() {}\n").unwrap();
    let store = Store::open(&data.path().join("cairn.db")).await.unwrap();
    let notes = Notes::open(data.path().join("notes"), store.clone())
        .await
        .unwrap();
    let told = AtomicUsize::new(0);
    let changed = || {
        told.fetch_add(1, Ordering::SeqCst);
    };
    let inbox = Inbox {
        store: &store,
        notes: &notes,
        notes_changed: &changed,
    };

    let said = [
        said(
            "i_a",
            tree.path(),
            "Releases need the locked flag",
            "Release builds run cargo build --locked so the lock file is honoured",
        ),
        said(
            "i_bb",
            tree.path(),
            "Releases need the locked flag",
            "Release builds run cargo build --locked so the lock file is honoured",
        ),
        said(
            "i_stale",
            tree.path(),
            "Where the journal opens",
            "The journal opens in src/journal.rs through `open_journal_file`",
        ),
        said(
            "i_fresh",
            tree.path(),
            "Where the log opens",
            "The write-ahead log opens in src/lib.rs through `open_wal`",
        ),
    ];
    let records: Vec<_> = said.iter().map(|(r, _)| (r.clone(), vec![])).collect();
    store.append_records(&records).await.unwrap();
    for (_, item) in &said {
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: item.clone(),
                reason: None,
            })
            .await
            .unwrap();
    }
    for path in ["deploys.md", "deploys-copy.md"] {
        let note = NoteRef {
            scope: NoteScopeKind::Project,
            project: Some(PROJECT.into()),
            path: path.into(),
        };
        let req = NoteSaveReq {
            note,
            content: "Deploys go out on Tuesdays after the staging soak passes.".into(),
            expected_sha256: None,
            create_only: true,
        };
        notes.save(&Caller::user(), &req).await.unwrap();
    }

    let found = inbox.list(&ReviewReq::default(), None).await.unwrap();
    let listed = keys(&found);
    assert!(listed.contains(&"duplicate:i_a+i_bb"), "{listed:?}");
    assert!(listed.contains(&"stale:i_stale"), "{listed:?}");
    assert!(!listed.contains(&"stale:i_fresh"), "{listed:?}");
    let stale = found.entries.iter().find(|e| e.key == "stale:i_stale");
    let why = &stale.unwrap().reason;
    assert!(
        why.contains("src/journal.rs") && why.contains("open_journal_file"),
        "{why}"
    );
    let copy = found
        .entries
        .iter()
        .find(|e| e.category == "duplicate" && e.subjects[0].kind == "note")
        .expect("the copied note");
    assert_eq!(copy.actions, ["archive", "keep"]);
    assert_eq!(found.counts.duplicate, 2);

    // A merge supersedes the other item, and its undo makes it active again.
    let merge = ReviewActReq {
        entry: "duplicate:i_a+i_bb".into(),
        action: "merge".into(),
        keep: Some("i_a".into()),
    };
    let merged = inbox.act(&merge).await.unwrap();
    assert_eq!(merged.changed, ["i_a", "i_bb"]);
    let other = store.item(&ItemId::new("i_bb")).await.unwrap().unwrap();
    assert_eq!(other.superseded_by, Some(ItemId::new("i_a")));
    let again = inbox.act(&merge).await.unwrap_err();
    assert_eq!(again.code(), cairn_core::ErrorCode::Conflict, "{again}");
    let undo = ReviewUndoReq {
        action: merged.id.clone(),
    };
    assert!(inbox.undo(&undo).await.unwrap().undone_at.is_some());
    let back = store.item(&ItemId::new("i_bb")).await.unwrap().unwrap();
    assert!(back.superseded_by.is_none() && !back.archived);
    assert_eq!(told.load(Ordering::SeqCst), 0, "no note changed yet");

    // Archiving the copied note deletes it; undo restores it; each time the watcher hears.
    let archive = ReviewActReq {
        entry: copy.key.clone(),
        action: "archive".into(),
        keep: None,
    };
    let archived = inbox.act(&archive).await.unwrap();
    assert_eq!(told.load(Ordering::SeqCst), 1);
    let live = notes.list(&Default::default()).await.unwrap();
    assert_eq!(live.len(), 1);
    inbox
        .undo(&ReviewUndoReq {
            action: archived.id,
        })
        .await
        .unwrap();
    assert_eq!(told.load(Ordering::SeqCst), 2);
    assert_eq!(notes.list(&Default::default()).await.unwrap().len(), 2);
    let after = inbox.list(&ReviewReq::default(), None).await.unwrap();
    assert_eq!(after.recent.len(), 2, "both actions are in the log");
    assert!(after.recent.iter().all(|a| a.undone_at.is_some()));
}
