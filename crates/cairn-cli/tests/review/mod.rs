//! `cairn review`: the inbox as the CLI prints it (text and JSON), an action taken on an
//! entry, and its undo — what the README promises at the surface people meet.
use std::path::Path;

use super::cairn;

const PROJECT: &str = "github.com/acme/app";

/// Two near-identical facts and a contradicting pair, as distillation would store them.
fn put_items(home: &Path) {
    let conn = rusqlite::Connection::open(home.join("data/cairn.db")).unwrap();
    let item = |id: &str, title: &str, summary: &str, body: &str, day: u32| {
        serde_json::json!({
            "id": id, "kind": "fact", "title": title, "summary": summary, "body": body,
            "cues": [], "concepts": [], "importance": 3, "certainty": "stated",
            "project": PROJECT, "sources": [], "happened_at": null,
            "said_at": format!("2026-08-{day:02}T09:00:00Z"), "ended_at": null,
            "superseded_by": null, "archived": false,
        })
        .to_string()
    };
    let rows = [
        (
            "i_rv1",
            item(
                "i_rv1",
                "Release builds need the locked flag",
                "Release builds need cargo build --locked so the lock file is honoured",
                "Run it with --release.",
                10,
            ),
        ),
        (
            "i_rv2",
            item(
                "i_rv2",
                "Release builds need the locked flag",
                "Release builds need cargo build --locked so the lock file is honoured",
                "CI failed without it.",
                11,
            ),
        ),
        (
            "i_rv3",
            item(
                "i_rv3",
                "Staging Postgres port",
                "Staging Postgres listens on port 6543",
                "psql -p 6543",
                12,
            ),
        ),
        (
            "i_rv4",
            item(
                "i_rv4",
                "Staging Postgres port",
                "Staging Postgres listens on port 5432",
                "psql -p 5432",
                20,
            ),
        ),
    ];
    for (id, state) in rows {
        conn.execute(
            "INSERT INTO item_events (item_id, kind, at, state, reason) VALUES (?1, 'created', '2026-08-21T10:00:00.000Z', ?2, 'test')",
            rusqlite::params![id, state],
        )
        .unwrap();
    }
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn review_lists_acts_and_undoes_as_printed() {
    let home = tempfile::tempdir().unwrap();
    ok(&cairn(home.path())
        .args(["status", "--json"])
        .output()
        .unwrap());
    put_items(home.path());

    let text = ok(&cairn(home.path()).args(["review"]).output().unwrap());
    assert!(
        text.contains("1 contradictions, 1 likely duplicates, 0 stale, 0 junk"),
        "{text}"
    );
    assert!(text.contains("duplicate:i_rv1+i_rv2"), "{text}");
    assert!(text.contains("contradiction:i_rv3+i_rv4"), "{text}");
    assert!(
        text.find("[contradiction]").unwrap() < text.find("[duplicate]").unwrap(),
        "contradictions come first: {text}"
    );

    let only: serde_json::Value = serde_json::from_str(&ok(&cairn(home.path())
        .args(["review", "--category", "duplicate", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(only["entries"].as_array().unwrap().len(), 1);
    assert_eq!(only["entries"][0]["key"], "duplicate:i_rv1+i_rv2");

    let acted: serde_json::Value = serde_json::from_str(&ok(&cairn(home.path())
        .args([
            "review",
            "act",
            "contradiction:i_rv3+i_rv4",
            "supersede",
            "--keep",
            "i_rv4",
            "--json",
        ])
        .output()
        .unwrap()))
    .unwrap();
    let id = acted["id"].as_str().unwrap().to_owned();
    let open: serde_json::Value = serde_json::from_str(&ok(&cairn(home.path())
        .args(["open", "i_rv3", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(open["item"]["item"]["superseded_by"], "i_rv4", "{open}");
    let after = ok(&cairn(home.path()).args(["review"]).output().unwrap());
    assert!(
        after.contains("0 contradictions, 1 likely duplicates"),
        "{after}"
    );

    let undone = ok(&cairn(home.path())
        .args(["review", "undo", &id])
        .output()
        .unwrap());
    assert!(undone.starts_with(&format!("Undid {id}")), "{undone}");
    let open: serde_json::Value = serde_json::from_str(&ok(&cairn(home.path())
        .args(["open", "i_rv3", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert!(open["item"]["item"]["superseded_by"].is_null(), "{open}");

    let bad = cairn(home.path())
        .args(["review", "act", "stale:i_rv1+i_rv2", "archive"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("not a review entry key"), "{err}");
}
