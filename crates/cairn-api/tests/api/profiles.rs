//! `profiles_list`: the profiles the nightly tidy-up wrote (each project's, then the
//! machine's), with their dated timelines; none before any was written, none after Clear.
use std::path::Path;

use cairn_api::ServiceHandle;
use cairn_store::{Profile, ProfileEntry, ProfileKind};
use chrono::TimeZone;
use serde_json::json;

async fn start(home: &Path) -> ServiceHandle {
    super::start_service(home, false, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_list_shows_each_subjects_summary_and_timeline_projects_first() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();

    assert_eq!(
        service.dispatch("profiles_list", json!({})).await.unwrap(),
        json!({"profiles": []}),
        "no profile before the tidy-up wrote one"
    );
    let err = service
        .dispatch("profiles_list", json!({"subject": "x"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("profiles_list") && err.contains("subject"),
        "{err}"
    );

    let at = chrono::Utc.with_ymd_and_hms(2026, 3, 4, 5, 6, 7).unwrap();
    let machine = Profile {
        kind: ProfileKind::Machine,
        subject: "machine".into(),
        summary: "Debian with two cores.".into(),
        timeline: vec![ProfileEntry {
            date: "2026-02-01".into(),
            text: "Rust 1.90 installed.".into(),
        }],
        items_hash: "m1".into(),
        item_count: 1,
        updated_at: at,
    };
    let project = Profile {
        kind: ProfileKind::Project,
        subject: "github.com/acme/relay".into(),
        summary: "A relay server.".into(),
        timeline: vec![
            ProfileEntry {
                date: "2026-03-01".into(),
                text: "Listens on port 7420.".into(),
            },
            ProfileEntry {
                date: "2026-03-02".into(),
                text: "Moved to port 7421.".into(),
            },
        ],
        items_hash: "p1".into(),
        item_count: 3,
        updated_at: at,
    };
    service.store().put_profile(&machine).await.unwrap();
    service.store().put_profile(&project).await.unwrap();

    let list = service.dispatch("profiles_list", json!({})).await.unwrap();
    assert_eq!(
        list,
        json!({"profiles": [
            {"subject": "github.com/acme/relay", "kind": "project", "summary": "A relay server.",
             "timeline": [{"date": "2026-03-01", "text": "Listens on port 7420."},
                          {"date": "2026-03-02", "text": "Moved to port 7421."}],
             "item_count": 3, "updated_at": "2026-03-04T05:06:07Z"},
            {"subject": "machine", "kind": "machine", "summary": "Debian with two cores.",
             "timeline": [{"date": "2026-02-01", "text": "Rust 1.90 installed."}],
             "item_count": 1, "updated_at": "2026-03-04T05:06:07Z"},
        ]})
    );

    service.dispatch("clear", json!({})).await.unwrap();
    assert_eq!(
        service.dispatch("profiles_list", json!({})).await.unwrap(),
        json!({"profiles": []}),
        "Clear removes the profiles"
    );
    handle.shutdown().await;
}
