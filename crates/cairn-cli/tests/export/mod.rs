//! `cairn export` and `cairn import` end to end: a store filled by capturing a fake home,
//! notes written (edited, renamed, deleted) through `cairn memory-tool` and items put in the
//! item log, exported, imported into an empty Cairn, and the two stores compared table by
//! table and note file by note file; a second import adds nothing; a malformed export (a bad
//! line, a changed file) is refused with the file named and nothing imported.
use std::collections::BTreeMap;
use std::path::Path;

use super::{cairn, fake_home, ok};

/// Every row of a table, its log position left out (it is the store's own).
fn rows(db: &Path, sql: &str) -> Vec<Vec<String>> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    let mut out: Vec<Vec<String>> = stmt
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    let v: rusqlite::types::Value = r.get(i)?;
                    Ok(format!("{v:?}"))
                })
                .collect()
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    out.sort();
    out
}

/// What must survive a round trip, per table.
const TABLES: [(&str, &str); 6] = [
    (
        "records",
        "SELECT id, rev, framework, session_id, project, cwd, model, outcome, started_at, ended_at, captured_at, request, author, text, content, source FROM records",
    ),
    (
        "chunks",
        "SELECT record_id, rev, ord, start, text FROM chunks",
    ),
    (
        "item_events",
        "SELECT item_id, kind, at, state, reason FROM item_events",
    ),
    (
        "relations",
        "SELECT from_id, to_id, kind, weight, created_at FROM relations",
    ),
    (
        "notes",
        "SELECT id, scope, project, path, title, sha256, bytes, created_at, updated_at, deleted_at FROM notes",
    ),
    (
        "note_versions",
        "SELECT note_id, version, sha256, content, author, at, redacted_at, redacted_by, action, path FROM note_versions",
    ),
];

fn snapshot(ch: &Path) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    let db = ch.join("data/cairn.db");
    TABLES.iter().map(|(t, sql)| (*t, rows(&db, sql))).collect()
}

/// Every note file under the notes root, by relative path.
fn note_files(ch: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = fs_err::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, fs_err::read_to_string(&p).unwrap());
            }
        }
    }
    let root = ch.join("data/notes");
    let mut out = BTreeMap::new();
    walk(&root, &root, &mut out);
    out
}

fn memory_tool(home: &Path, ch: &Path, project: Option<&str>, cmd: serde_json::Value) {
    let mut c = cairn(home, ch);
    c.args(["memory-tool", "--json"]);
    if let Some(p) = project {
        c.args(["--project", p]);
    }
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(cmd.to_string().as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let res: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(res["is_error"], false, "{cmd} → {res}");
}

/// Two items, one with a later event, as distillation would have written them.
fn put_items(ch: &Path) {
    let conn = rusqlite::Connection::open(ch.join("data/cairn.db")).unwrap();
    let record: String = conn
        .query_row("SELECT id FROM records ORDER BY seq LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    let item = |id: &str, title: &str, archived: bool| {
        let v = serde_json::json!({
            "id": id, "kind": "decision", "title": title,
            "summary": format!("{title}: the summary."), "body": "Why, at length.",
            "cues": ["heron"], "concepts": ["index"], "importance": 7, "certainty": "stated",
            "project": "/tmp/heron", "sources": [record], "happened_at": "2026-08-20T09:00:00Z",
            "said_at": "2026-08-20T09:00:00Z", "ended_at": null, "superseded_by": null,
            "archived": archived,
        });
        // The state must be an item as the store reads it.
        serde_json::from_value::<cairn_core::Item>(v.clone()).unwrap();
        v.to_string()
    };
    for (id, kind, at, state) in [
        (
            "i_heron1",
            "created",
            "2026-08-21T10:00:00.000Z",
            item("i_heron1", "Keep the heron index", false),
        ),
        (
            "i_heron2",
            "created",
            "2026-08-21T10:00:01.000Z",
            item("i_heron2", "Use WAL", false),
        ),
        (
            "i_heron2",
            "archived",
            "2026-08-22T10:00:00.000Z",
            item("i_heron2", "Use WAL", true),
        ),
    ] {
        conn.execute(
            "INSERT INTO item_events (item_id, kind, at, state, reason) VALUES (?1, ?2, ?3, ?4, 'test')",
            rusqlite::params![id, kind, at, state],
        )
        .unwrap();
    }
}

fn put_relation(ch: &Path) {
    let conn = rusqlite::Connection::open(ch.join("data/cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO relations (from_id, to_id, kind, weight, created_at) VALUES ('i_heron1', 'i_heron2', 'related', 0.8731, '2026-08-23T01:00:00.000Z')",
        [],
    )
    .unwrap();
}

fn json_of(c: &mut std::process::Command) -> serde_json::Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn export_then_import_restores_everything_once_and_refuses_a_malformed_export() {
    let home = tempfile::tempdir().unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    fake_home(home.path());
    ok(cairn(home.path(), a.path()).args(["capture", "--once", "--json"]));
    put_items(a.path());
    put_relation(a.path());
    let (h, ca) = (home.path(), a.path());
    memory_tool(
        h,
        ca,
        None,
        serde_json::json!({"command": "create", "path": "/memories/prefs.md", "file_text": "# Prefs\nTabs, not spaces.\n"}),
    );
    memory_tool(
        h,
        ca,
        None,
        serde_json::json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "Tabs", "new_str": "Spaces"}),
    );
    memory_tool(
        h,
        ca,
        Some("/tmp/heron"),
        serde_json::json!({"command": "create", "path": "/memories/design/index.md", "file_text": "# Index\nThe heron index is rebuilt nightly.\n"}),
    );
    memory_tool(
        h,
        ca,
        Some("/tmp/heron"),
        serde_json::json!({"command": "create", "path": "/memories/old.md", "file_text": "gone soon\n"}),
    );
    memory_tool(
        h,
        ca,
        Some("/tmp/heron"),
        serde_json::json!({"command": "rename", "old_path": "/memories/old.md", "new_path": "/memories/older.md"}),
    );
    memory_tool(
        h,
        ca,
        Some("/tmp/heron"),
        serde_json::json!({"command": "delete", "path": "/memories/older.md"}),
    );
    let before = snapshot(ca);
    assert!(
        before["records"].len() >= 4,
        "{:?}",
        before["records"].len()
    );
    assert_eq!(before["item_events"].len(), 3);
    assert_eq!(before["notes"].len(), 3);
    assert!(before["note_versions"].len() >= 6);

    // A note edited outside Cairn: the export records it first and holds the file's text.
    let design = note_files(ca)
        .into_keys()
        .find(|k| k.ends_with("design/index.md"))
        .unwrap();
    fs_err::write(
        ca.join("data/notes").join(&design),
        "# Index\nThe heron index is rebuilt hourly.\n",
    )
    .unwrap();

    // Export: one file per session, item, live note; a manifest with a sha256 per file.
    let dir = out.path().join("export");
    let report = json_of(cairn(h, ca).args(["export", "--json"]).arg(&dir));
    let versions = before["note_versions"].len();
    let before = snapshot(ca);
    assert_eq!(
        before["note_versions"].len(),
        versions + 1,
        "the edit is a version"
    );
    assert_eq!(
        report["records"].as_u64().unwrap(),
        before["records"].len() as u64
    );
    assert_eq!(report["item_events"], 3);
    assert_eq!(report["items"], 2);
    assert_eq!(report["relations"], 1);
    assert_eq!(report["notes"], 3);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_object().unwrap();
    assert!(
        files.keys().any(|k| k.starts_with("records/claude-code/")),
        "{files:?}"
    );
    assert!(files.contains_key("items/i_heron1.md"));
    assert!(files.contains_key("notes/user/prefs.md"));
    assert!(
        files
            .keys()
            .any(|k| k.starts_with("notes/projects/") && k.ends_with("/design/index.md"))
    );
    let exported_design = files
        .keys()
        .find(|k| k.ends_with("/design/index.md"))
        .unwrap();
    assert!(
        fs_err::read_to_string(dir.join(exported_design))
            .unwrap()
            .ends_with("---\n# Index\nThe heron index is rebuilt hourly.\n")
    );
    let item = fs_err::read_to_string(dir.join("items/i_heron2.md")).unwrap();
    assert!(
        item.starts_with("---\nid: \"i_heron2\"\nkind: \"decision\""),
        "{item}"
    );
    assert!(item.contains("status: \"archived\""), "{item}");
    let note = fs_err::read_to_string(dir.join("notes/user/prefs.md")).unwrap();
    assert!(
        note.ends_with("---\n# Prefs\nSpaces, not spaces.\n"),
        "{note}"
    );
    // An existing, non-empty folder is refused.
    let again = cairn(h, ca).arg("export").arg(&dir).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));

    // Filters: one project's records, items and notes; nothing after a future date; a date
    // that is not one is refused.
    let db = ca.join("data/cairn.db");
    let count = |sql: &str| -> u64 {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64
    };
    let project: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT project FROM records WHERE session_id = 'sess-heron' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let one = json_of(
        cairn(h, ca)
            .args(["export", "--json", "--project", &project])
            .arg(out.path().join("one")),
    );
    let q = project.replace('\'', "''");
    assert_eq!(
        one["records"].as_u64().unwrap(),
        count(&format!(
            "SELECT COUNT(*) FROM records WHERE project = '{q}'"
        ))
    );
    assert!(one["records"].as_u64().unwrap() < report["records"].as_u64().unwrap());
    assert_eq!(
        one["notes"].as_u64().unwrap(),
        count(&format!("SELECT COUNT(*) FROM notes WHERE project = '{q}'"))
    );
    let heron_items = if project == "/tmp/heron" { 3 } else { 0 };
    assert_eq!(one["item_events"], heron_items, "{project}");
    let none = json_of(
        cairn(h, ca)
            .args(["export", "--json", "--since", "2099-01-01"])
            .arg(out.path().join("none")),
    );
    for kind in ["records", "item_events", "notes"] {
        assert_eq!(none[kind], 0, "{kind}: {none}");
    }
    let res = cairn(h, ca)
        .args(["export", "--since", "last tuesday"])
        .arg(out.path().join("never"))
        .output()
        .unwrap();
    assert_eq!(res.status.code(), Some(2));
    assert!(!out.path().join("never").exists());

    // Import into an empty Cairn: the same rows and the same note files.
    let cb = b.path();
    let first = json_of(cairn(h, cb).args(["import", "--json"]).arg(&dir));
    assert_eq!(
        first["records"]["added"].as_u64().unwrap(),
        before["records"].len() as u64
    );
    assert_eq!(first["item_events"]["added"], 3);
    assert_eq!(first["relations"]["added"], 1);
    assert_eq!(first["notes"]["added"], 3);
    assert_eq!(first["conflicts"], serde_json::json!([]));
    let after = snapshot(cb);
    for (t, _) in TABLES {
        assert_eq!(
            before[t], after[t],
            "table {t} differs after the round trip"
        );
    }
    assert_eq!(note_files(ca), note_files(cb));
    // Imported records are searchable, imported notes readable through Cairn.
    let hits = json_of(cairn(h, cb).args(["search", "--json", "PLANTEDheron"]));
    assert!(hits.to_string().contains("PLANTEDheron"), "{hits}");

    // The same export again adds nothing.
    let second = json_of(cairn(h, cb).args(["import", "--json"]).arg(&dir));
    for kind in ["records", "item_events", "relations", "notes"] {
        assert_eq!(second[kind]["added"], 0, "{kind}: {second}");
        assert_eq!(second[kind]["conflicts"], 0, "{kind}: {second}");
    }
    assert_eq!(second["notes"]["duplicates"], 3);
    assert_eq!(snapshot(cb), after);

    // A malformed export is refused whole, naming the file; nothing is imported from it.
    let c = tempfile::tempdir().unwrap();
    let bad = out.path().join("bad");
    copy_dir(&dir, &bad);
    let events = bad.join("item-events.jsonl");
    let mut text = fs_err::read_to_string(&events).unwrap();
    text.push_str("{not json\n");
    fs_err::write(&events, &text).unwrap();
    let res = cairn(h, c.path()).arg("import").arg(&bad).output().unwrap();
    assert_eq!(res.status.code(), Some(2));
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(
        err.contains("item-events.jsonl")
            && (err.contains("sha256") || err.contains("larger than")),
        "{err}"
    );
    // Even with the manifest's sha256 brought in line, the bad line is named.
    let mut manifest = manifest.clone();
    manifest["files"]["item-events.jsonl"] = serde_json::json!({
        "sha256": sha256_hex(text.as_bytes()), "bytes": text.len()
    });
    fs_err::write(bad.join("manifest.json"), manifest.to_string()).unwrap();
    let res = cairn(h, c.path()).arg("import").arg(&bad).output().unwrap();
    assert_eq!(res.status.code(), Some(2));
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(err.contains("item-events.jsonl line 4"), "{err}");
    let empty = snapshot(c.path());
    assert!(empty.values().all(Vec::is_empty), "{empty:?}");
    assert!(note_files(c.path()).is_empty());
}

fn copy_dir(src: &Path, dst: &Path) {
    fs_err::create_dir_all(dst).unwrap();
    for e in fs_err::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            fs_err::copy(e.path(), to).unwrap();
        }
    }
}

/// The sha256 of some bytes (coreutils' `sha256sum`, not Cairn's own code).
fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}
