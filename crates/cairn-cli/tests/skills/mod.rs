//! `cairn skills`: a project's procedures and pitfalls as each framework's instruction file,
//! in a section Cairn marks — shown first, written only with `--write`, taken out with
//! `--remove`, every other byte of the file kept.
use std::path::Path;

use super::cairn;

const PROJECT: &str = "github.com/acme/app";

/// Items as distillation would have written them: two of the project's skills, and what
/// must stay out (another kind, an archived one, another project's).
fn put_items(home: &Path) {
    let conn = rusqlite::Connection::open(home.join("data/cairn.db")).unwrap();
    let item = |id: &str, kind: &str, title: &str, project: &str, archived: bool| {
        serde_json::json!({
            "id": id, "kind": kind, "title": title,
            "summary": format!("{title}, as the team settled it."),
            "body": format!("{title}: the details an agent needs, with the command to run."),
            "cues": [], "concepts": [], "importance": 4, "certainty": "stated",
            "project": project, "sources": [], "happened_at": "2026-08-20T09:00:00Z",
            "said_at": "2026-08-20T09:00:00Z", "ended_at": null, "superseded_by": null,
            "archived": archived, "provenance": "user",
        })
        .to_string()
    };
    for (id, kind, title, project, archived) in [
        (
            "i_sk1",
            "procedure",
            "Release builds need --locked",
            PROJECT,
            false,
        ),
        (
            "i_sk2",
            "pitfall",
            "Staging Postgres listens on 6543",
            PROJECT,
            false,
        ),
        ("i_sk3", "decision", "We chose SQLite", PROJECT, false),
        ("i_sk4", "procedure", "The old deploy script", PROJECT, true),
        (
            "i_sk5",
            "procedure",
            "Another project's habit",
            "github.com/acme/other",
            false,
        ),
    ] {
        conn.execute(
            "INSERT INTO item_events (item_id, kind, at, state, reason) VALUES (?1, 'created', '2026-08-21T10:00:00.000Z', ?2, 'test')",
            rusqlite::params![id, item(id, kind, title, project, archived)],
        )
        .unwrap();
    }
}

#[test]
fn skills_are_previewed_then_written_updated_and_removed_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let out = cairn(home.path())
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    put_items(home.path());
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("CLAUDE.md");
    let original = "# Team rules\r\n\r\nTabs, not spaces.\r\n";
    fs_err::write(&claude, original).unwrap();
    let skills = |framework: &str, extra: &[&str]| {
        let out = cairn(home.path())
            .args([
                "skills",
                "--framework",
                framework,
                "--project",
                PROJECT,
                "--dir",
            ])
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{framework} {extra:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };

    // The preview shows the section and writes nothing.
    let shown = skills("claude-code", &[]);
    assert!(shown.contains("has no section of Cairn's yet"), "{shown}");
    assert!(
        shown.contains("**Release builds need --locked**"),
        "{shown}"
    );
    assert!(
        shown.contains("**Staging Postgres listens on 6543**"),
        "{shown}"
    );
    for absent in [
        "We chose SQLite",
        "The old deploy script",
        "Another project's habit",
    ] {
        assert!(!shown.contains(absent), "{absent}: {shown}");
    }
    assert_eq!(fs_err::read_to_string(&claude).unwrap(), original);

    // Written: the original first, untouched, then the section, in the file's line endings.
    let res: serde_json::Value =
        serde_json::from_str(&skills("claude-code", &["--write", "--json"])).unwrap();
    assert_eq!(res["action"], "created", "{res}");
    let written = fs_err::read_to_string(&claude).unwrap();
    assert!(written.starts_with(original), "{written:?}");
    assert!(
        written.contains("<!-- cairn:skills begin -->\r\n"),
        "{written:?}"
    );
    assert!(
        !written.replace("\r\n", "").contains('\n'),
        "CRLF throughout: {written:?}"
    );
    // Procedures before pitfalls.
    assert!(written.find("Release builds").unwrap() < written.find("Staging Postgres").unwrap());
    let res: serde_json::Value =
        serde_json::from_str(&skills("claude-code", &["--write", "--json"])).unwrap();
    assert_eq!(res["action"], "unchanged");
    assert_eq!(fs_err::read_to_string(&claude).unwrap(), written);
    // The user's own edit below the section stays when the section is updated.
    fs_err::write(&claude, format!("{written}\r\nMy own line.\r\n")).unwrap();
    let conn = rusqlite::Connection::open(home.path().join("data/cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO item_events (item_id, kind, at, state, reason) VALUES ('i_sk1', 'archived', '2026-08-22T10:00:00.000Z', (SELECT replace(state, '\"archived\":false', '\"archived\":true') FROM item_events WHERE item_id = 'i_sk1'), 'test')",
        [],
    )
    .unwrap();
    let res: serde_json::Value =
        serde_json::from_str(&skills("claude-code", &["--write", "--json"])).unwrap();
    assert_eq!(res["action"], "updated", "{res}");
    let updated = fs_err::read_to_string(&claude).unwrap();
    assert!(
        !updated.contains("Release builds") && updated.contains("Staging Postgres"),
        "{updated}"
    );
    assert!(
        updated.starts_with(original) && updated.ends_with("\r\nMy own line.\r\n"),
        "{updated:?}"
    );
    // Removed: the file as it was, with the user's line.
    let res: serde_json::Value =
        serde_json::from_str(&skills("claude-code", &["--remove", "--json"])).unwrap();
    assert_eq!(res["action"], "removed");
    assert_eq!(
        fs_err::read_to_string(&claude).unwrap(),
        format!("{original}\r\nMy own line.\r\n")
    );

    // A file Cairn creates for its section alone goes away with it; Cursor's rule is Cairn's own.
    let agents = dir.path().join("AGENTS.md");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&skills("codex", &["--write", "--json"]))
            .unwrap()["action"],
        "created"
    );
    assert!(
        fs_err::read_to_string(&agents)
            .unwrap()
            .starts_with("<!-- cairn:skills begin -->")
    );
    skills("codex", &["--remove"]);
    assert!(!agents.exists());
    skills("cursor", &["--write"]);
    let rule = fs_err::read_to_string(dir.path().join(".cursor/rules/cairn-skills.mdc")).unwrap();
    assert!(
        rule.starts_with("---\n") && rule.contains("alwaysApply: true"),
        "{rule}"
    );
    assert!(rule.contains("Staging Postgres"), "{rule}");
    skills("cursor", &["--remove"]);
    assert!(!dir.path().join(".cursor/rules/cairn-skills.mdc").exists());

    // An instruction file that is a link: refused, and what it points to is untouched.
    #[cfg(unix)]
    {
        let outside = dir.path().join("outside.md");
        fs_err::write(&outside, "not Cairn's\n").unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("GEMINI.md")).unwrap();
        let out = cairn(home.path())
            .args([
                "skills",
                "--framework",
                "gemini-cli",
                "--project",
                PROJECT,
                "--write",
                "--dir",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
            "{out:?}"
        );
        assert_eq!(fs_err::read_to_string(&outside).unwrap(), "not Cairn's\n");
    }

    // A framework without an instruction file, and a folder that is not one: named errors.
    let out = cairn(home.path())
        .args([
            "skills",
            "--framework",
            "goose",
            "--project",
            PROJECT,
            "--dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("goose"),
        "{out:?}"
    );
    let out = cairn(home.path())
        .args([
            "skills",
            "--framework",
            "codex",
            "--project",
            PROJECT,
            "--dir",
            "/nonexistent/cairn/x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/nonexistent/cairn/x"),
        "{out:?}"
    );
}
