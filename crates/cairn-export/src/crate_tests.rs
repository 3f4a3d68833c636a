//! Memory written out and read back without the service: a real store and its notes
//! exported, imported into a second store whole and once, an altered export refused with
//! nothing stored; a project's procedure spliced into its instruction file and taken out
//! again byte for byte.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Archive, skills};
use cairn_core::api::{ExportReq, ImportReq, NoteSaveReq, NotesListReq, SkillsReq};
use cairn_core::{ErrorCode, Item, ItemEventKind, ItemId, NewItemEvent, NewRecord};
use cairn_notes::{Caller, Notes};
use cairn_store::Store;
use serde_json::json;

const PROJECT: &str = "github.com/acme/kite";

async fn open(dir: &std::path::Path) -> (Store, Notes) {
    let store = Store::open(&dir.join("cairn.db")).await.unwrap();
    let notes = Notes::open(dir.join("notes"), store.clone()).await.unwrap();
    (store, notes)
}

/// Stores two turns, an item learned from the first (of `kind`, stated by `provenance`)
/// and a project note.
async fn remember(store: &Store, notes: &Notes, kind: &str, provenance: &str) {
    let turns: Vec<(NewRecord, Vec<cairn_core::Chunk>)> = ["r_one", "r_two"]
        .iter()
        .map(|id| {
            let at = "2026-09-01T09:00:00Z";
            let v = json!({"id": id, "framework": "claude-code", "session_id": "s-1",
                "project": PROJECT, "outcome": "success", "started_at": at,
                "request": format!("turn {id}"), "text": format!("turn {id}"), "content": {}});
            (serde_json::from_value(v).unwrap(), vec![])
        })
        .collect();
    store.append_records(&turns).await.unwrap();
    let learned: Item = serde_json::from_value(json!({"id": "i_release", "kind": kind,
        "title": "Cut a release", "summary": "Tag the commit, then run the release job.",
        "body": "The job signs the packages.", "cues": [], "concepts": [], "importance": 4,
        "certainty": "stated", "project": PROJECT, "sources": ["r_one"],
        "said_at": "2026-09-01T09:00:00Z", "archived": false, "provenance": provenance}))
    .unwrap();
    let created = NewItemEvent {
        kind: ItemEventKind::Created,
        item: learned,
        reason: None,
    };
    store.append_item_event(&created).await.unwrap();
    let save: NoteSaveReq = serde_json::from_value(json!({"create_only": true,
        "note": {"scope": "project", "project": PROJECT, "path": "release.md"},
        "content": "# Release\n\nSigned packages only.\n"}))
    .unwrap();
    notes.save(&Caller::user(), &save).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imports_whole_and_once_and_an_altered_one_is_refused() {
    let (a, b, c, out) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (store, notes) = open(a.path()).await;
    remember(&store, &notes, "procedure", "user").await;
    let steps = AtomicUsize::new(0);
    let progress = |_: String, _: Option<f32>| {
        steps.fetch_add(1, Ordering::SeqCst);
    };
    let archive = Archive {
        store: &store,
        notes: &notes,
        progress: &progress,
    };
    let dir = out.path().join("export");
    let req = ExportReq {
        dir: dir.display().to_string(),
        project: None,
        since: None,
    };
    let report = archive.export(&req).await.unwrap();
    assert_eq!(
        (report.records, report.items, report.notes),
        (2, 1, 1),
        "{report:?}"
    );
    assert!(dir.join("manifest.json").is_file() && dir.join("items/i_release.md").is_file());
    assert!(steps.load(Ordering::SeqCst) > 0, "progress was told");
    let again = archive.export(&req).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::Conflict, "{again}");

    // Into another store: everything once; a second import adds nothing.
    let (store_b, notes_b) = open(b.path()).await;
    let into_b = Archive {
        store: &store_b,
        notes: &notes_b,
        progress: &|_, _| {},
    };
    let import = ImportReq {
        dir: dir.display().to_string(),
    };
    let first = into_b.import(&import).await.unwrap();
    assert_eq!(
        (
            first.records.added,
            first.item_events.added,
            first.notes.added
        ),
        (2, 1, 1)
    );
    let id = ItemId::new("i_release");
    assert_eq!(
        store_b.item(&id).await.unwrap(),
        store.item(&id).await.unwrap()
    );
    let listed = notes_b.list(&NotesListReq::default()).await.unwrap();
    assert_eq!(listed.len(), 1);
    let second = into_b.import(&import).await.unwrap();
    assert_eq!((second.records.added, second.records.duplicates), (0, 2));
    assert_eq!(second.notes.added, 0);

    // A changed file: refused whole, nothing stored.
    let session = dir.join("records/claude-code/s-1.jsonl");
    let mut text = fs_err::read_to_string(&session).unwrap();
    text = text.replace("turn r_two", "turn r_2");
    fs_err::write(&session, text).unwrap();
    let (store_c, notes_c) = open(c.path()).await;
    let into_c = Archive {
        store: &store_c,
        notes: &notes_c,
        progress: &|_, _| {},
    };
    let refused = into_c.import(&import).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::BadRequest);
    assert!(refused.to_string().contains("sha256"), "{refused}");
    assert_eq!(store_c.counts().await.unwrap().records, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_go_into_the_instruction_file_and_come_out_byte_for_byte() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (store, notes) = open(data.path()).await;
    remember(&store, &notes, "procedure", "user").await;
    let original = "# Rules\r\n\r\nUse tabs.\r\n";
    let file = project.path().join("CLAUDE.md");
    fs_err::write(&file, original).unwrap();
    let mut req = SkillsReq {
        project: PROJECT.into(),
        framework: "claude-code".into(),
        dir: project.path().display().to_string(),
        remove: false,
    };
    let preview = skills::preview(&store, &req).await.unwrap();
    assert_eq!(preview.entries.len(), 1);
    assert!(preview.exists && !preview.up_to_date && preview.current.is_none());
    let written = skills::write(&store, &req).await.unwrap();
    assert_eq!(written.action.as_deref(), Some("created"));
    let with = fs_err::read_to_string(&file).unwrap();
    assert!(
        with.starts_with(original) && with.contains("**Cut a release**"),
        "{with}"
    );
    assert!(
        !with.replace("\r\n", "").contains('\n'),
        "the file's CRLF kept"
    );
    let again = skills::write(&store, &req).await.unwrap();
    assert_eq!(again.action.as_deref(), Some("unchanged"));
    req.remove = true;
    let removed = skills::write(&store, &req).await.unwrap();
    assert_eq!(removed.action.as_deref(), Some("removed"));
    assert_eq!(fs_err::read_to_string(&file).unwrap(), original);

    // What only outside text stated never becomes an instruction.
    let other = tempfile::tempdir().unwrap();
    let (store_o, notes_o) = open(other.path()).await;
    remember(&store_o, &notes_o, "pitfall", "outside").await;
    req.remove = false;
    let withheld = skills::preview(&store_o, &req).await.unwrap();
    assert!(withheld.entries.is_empty() && withheld.section.is_empty());
    assert_eq!(withheld.withheld.len(), 1);
    let unknown = SkillsReq {
        framework: "vim".into(),
        ..req
    };
    let refused = skills::preview(&store, &unknown).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::BadRequest);
}
