//! The notes contract on a real store and real files.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
mod common;

use cairn_core::ErrorCode;
use cairn_core::api::{
    NoteAccess, NoteCommandReq, NoteDeleteReq, NoteRenameReq, NoteSaveReq, NoteScopeKind,
    NoteVersionReq, NotesListReq, NotesTitlesReq,
};
use cairn_notes::{Caller, Notes, sha256_hex};
use common::*;

const APP: &str = "github.com/acme/app";
const OTHER: &str = "github.com/acme/other";

fn save_req(note: cairn_core::api::NoteRef, content: &str, expected: Option<&str>) -> NoteSaveReq {
    NoteSaveReq {
        note,
        content: content.to_owned(),
        expected_sha256: expected.map(str::to_owned),
        create_only: false,
    }
}

fn vreq(note: cairn_core::api::NoteRef, version: u64) -> NoteVersionReq {
    NoteVersionReq {
        note,
        version,
        expected_sha256: None,
    }
}

#[tokio::test]
async fn create_view_and_view_range() {
    let env = Env::new().await;
    let res = env
        .ok(create(
            "notes/db.md",
            "# Database\nUse sqlx.\nMigrations live in db/.\n",
        ))
        .await;
    assert_eq!(
        res.output,
        "File created successfully at: /memories/notes/db.md"
    );
    let sha = res.sha256.unwrap();
    assert_eq!(
        sha,
        sha256_hex("# Database\nUse sqlx.\nMigrations live in db/.\n")
    );

    // Both spellings name the same note; answers use the contract's.
    let v = env.ok(view("notes/db.md")).await;
    let whole = "Here's the content of /memories/notes/db.md with line numbers:\n     1\t# Database\n     2\tUse sqlx.\n     3\tMigrations live in db/.\n     4\t";
    assert_eq!(v.output, whole);
    assert_eq!(v.sha256.as_deref(), Some(sha.as_str()));
    assert_eq!(env.ok(view("/memories/notes/db.md")).await.output, whole);

    let ranged = |r: [i64; 2]| {
        let mut q = view("/memories/notes/db.md");
        q.view_range = Some(r.to_vec());
        q
    };
    assert_eq!(
        env.ok(ranged([2, 3])).await.output,
        "Here's the content of /memories/notes/db.md with line numbers:\n     2\tUse sqlx.\n     3\tMigrations live in db/."
    );
    assert!(
        env.ok(ranged([3, -1]))
            .await
            .output
            .ends_with("     3\tMigrations live in db/.\n     4\t")
    );
    // Out-of-range ranges are cut to the file, as the contract's reference does.
    assert_eq!(
        env.ok(ranged([0, 1])).await.output,
        "Here's the content of /memories/notes/db.md with line numbers:\n     1\t# Database"
    );
    assert_eq!(
        env.ok(ranged([9, 12])).await.output,
        "Here's the content of /memories/notes/db.md with line numbers:\n"
    );

    // create never overwrites by surprise: only with the current hash.
    let e = env
        .run(create("notes/db.md", "# Database\n"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert_eq!(e.to_string(), "File /memories/notes/db.md already exists");
    let mut over = create("notes/db.md", "# Database\n");
    over.expected_sha256 = Some(sha.clone());
    assert_eq!(
        env.ok(over).await.output,
        "File overwritten successfully at: /memories/notes/db.md"
    );
    env.ok(create("top.md", "hello\n")).await;
    env.ok(create("/memories/notes/deeper/far/away.md", "x\n"))
        .await;
    let listing = env.ok(view("/memories")).await.output;
    let mut expected = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n19B\t/memories".to_owned();
    for (size, path) in [
        ("13B", "notes/"),
        ("11B", "notes/db.md"),
        ("2B", "notes/deeper/"),
        ("6B", "top.md"),
    ] {
        expected.push_str(&format!("\n{size}\t/memories/{path}"));
    }
    assert_eq!(listing, expected);
    for root in ["", "/", "/memories/"] {
        let listing = env.ok(view(root)).await.output;
        assert!(
            listing.starts_with("Here're the files"),
            "{root}: {listing}"
        );
    }
    let sub = env.ok(view("notes")).await.output;
    assert!(sub.contains("/memories/notes/deeper/far/"), "{sub}");
    assert!(!sub.contains("away.md"), "two levels only: {sub}");

    let missing = env.run(view("/memories/nope.md")).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
    assert_eq!(
        missing.to_string(),
        "The path /memories/nope.md does not exist. Please provide a valid path."
    );
}

#[tokio::test]
async fn an_empty_scope_lists_only_its_root() {
    let env = Env::new().await;
    let empty = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories";
    assert_eq!(env.ok(view("/memories")).await.output, empty);
    let r = env.ok(in_project(view(""), APP)).await;
    assert_eq!(r.output, empty);
}

#[tokio::test]
async fn str_replace_insert_and_their_errors() {
    let env = Env::new().await;
    env.ok(create("a.md", "one\ntwo\nthree\ntwo\n")).await;
    let e = env.run(str_replace("a.md", "four", "4")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert_eq!(
        e.to_string(),
        "No replacement was performed, old_str `four` did not appear verbatim in /memories/a.md."
    );
    let e = env.run(str_replace("a.md", "two", "2")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert_eq!(
        e.to_string(),
        "No replacement was performed. Multiple occurrences of old_str `two` in lines: 2, 4. Please ensure it is unique"
    );
    let r = env
        .ok(str_replace("/memories/a.md", "two\nthree", "2\n3"))
        .await;
    assert_eq!(
        r.output,
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\t2\n     3\t3\n     4\ttwo"
    );
    assert_eq!(r.sha256.unwrap(), sha256_hex("one\n2\n3\ntwo\n"));
    // new_str may be empty; a missing new_str means empty too.
    env.ok(str_replace("a.md", "one\n", "")).await;
    let mut r = str_replace("a.md", "3\n", "");
    r.new_str = None;
    env.ok(r).await;
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("a.md")).unwrap(),
        "2\ntwo\n"
    );
    let e = env.run(str_replace("a.md", "", "x")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    let e = env
        .run(str_replace("missing.md", "a", "b"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);

    // insert: top, middle, end, beyond; every file ends with a newline afterwards.
    assert_eq!(
        env.ok(insert("a.md", 0, "top")).await.output,
        "The file /memories/a.md has been edited."
    );
    env.ok(insert("a.md", 1, "after top\n")).await;
    env.ok(insert("/memories/a.md", 4, "end 1\nend 2")).await;
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("a.md")).unwrap(),
        "top\nafter top\n2\ntwo\nend 1\nend 2\n"
    );
    env.ok(insert("a.md", 6, "last")).await;
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("a.md")).unwrap(),
        "top\nafter top\n2\ntwo\nend 1\nend 2\nlast\n"
    );
    for bad in [8, -1] {
        let e = env.run(insert("a.md", bad, "x")).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadRequest);
        assert_eq!(
            e.to_string(),
            format!(
                "Invalid `insert_line` parameter: {bad}. It should be within the range [0, 7]."
            )
        );
    }
    let mut r = insert("a.md", 0, "x");
    r.insert_line = None;
    assert_eq!(env.run(r).await.unwrap_err().code(), ErrorCode::BadRequest);
    let mut r = create("b.md", "x");
    r.file_text = None;
    assert_eq!(
        env.run(r).await.unwrap_err().to_string(),
        "`create` needs `file_text`"
    );
    let mut r = view("a.md");
    r.command = "frobnicate".into();
    assert_eq!(env.run(r).await.unwrap_err().code(), ErrorCode::BadRequest);
}

#[tokio::test]
async fn delete_and_rename_with_their_rules() {
    let env = Env::new().await;
    env.ok(create("dir/a.md", "# A\n")).await;
    env.ok(create("b.md", "# B\n")).await;
    let id = env.notes.get(&user_ref("dir/a.md")).await.unwrap().note.id;

    // The contract's spelling: old_path and new_path.
    let mut r = rename("", "/memories/moved/deep/a2.md");
    r.old_path = Some("/memories/dir/a.md".into());
    let r = env.ok(r).await;
    assert_eq!(
        r.output,
        "Successfully renamed /memories/dir/a.md to /memories/moved/deep/a2.md"
    );
    let doc = env.notes.get(&user_ref("moved/deep/a2.md")).await.unwrap();
    assert_eq!(doc.note.id, id, "the id survives a rename");
    assert_eq!(doc.content, "# A\n");
    assert!(!env.user_dir().join("dir/a.md").exists());

    let e = env
        .run(rename("b.md", "moved/deep/a2.md"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert_eq!(
        e.to_string(),
        "The destination /memories/moved/deep/a2.md already exists"
    );
    let e = env.run(rename("nope.md", "x.md")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(e.to_string(), "The path /memories/nope.md does not exist");
    let e = env.run(rename("/memories", "x")).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot rename the /memories directory itself"
    );

    // A directory moves with its notes, each keeping its id.
    let r = env.ok(rename("moved", "elsewhere")).await;
    assert_eq!(
        r.output,
        "Successfully renamed /memories/moved to /memories/elsewhere"
    );
    let doc = env
        .notes
        .get(&user_ref("elsewhere/deep/a2.md"))
        .await
        .unwrap();
    assert_eq!(doc.note.id, id);
    assert!(!env.user_dir().join("moved").exists());

    // A directory is deleted with its notes, whose versions are kept.
    env.ok(create("elsewhere/b2.md", "# B2\n")).await;
    assert_eq!(
        env.ok(delete("/memories/elsewhere")).await.output,
        "Successfully deleted /memories/elsewhere"
    );
    assert!(!env.user_dir().join("elsewhere").exists());
    let versions = env
        .notes
        .versions(&user_ref("elsewhere/deep/a2.md"))
        .await
        .unwrap();
    assert_eq!(versions.versions[0].action, "delete");
    assert_eq!(
        env.ok(delete("b.md")).await.output,
        "Successfully deleted /memories/b.md"
    );
    assert!(!env.user_dir().join("b.md").exists());
    let e = env.run(delete("b.md")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(e.to_string(), "The path /memories/b.md does not exist");
    assert_eq!(
        env.run(delete("/memories")).await.unwrap_err().to_string(),
        "Cannot delete the /memories directory itself"
    );
    // A new note may take a deleted note's path; it is a different note.
    env.ok(create("b.md", "# B again\n")).await;
    let again = env.notes.get(&user_ref("b.md")).await.unwrap();
    assert_eq!(again.note.versions, 1);
}

#[tokio::test]
async fn mounted_stores_sit_under_memories_with_their_own_access() {
    use cairn_core::api::{NoteAccess, NoteMount, NotePrecondition, NoteScopeKind};
    let env = Env::new().await;
    // A shared reference (the user's notes, read-only) next to the project's own notes.
    env.ok(create("style.md", "# Style\nTabs.\n")).await;
    let mount = |mut r: NoteCommandReq| {
        r.scope = Some(NoteScopeKind::Project);
        r.project = Some(APP.to_owned());
        r.mounts = vec![NoteMount {
            name: "shared".into(),
            scope: NoteScopeKind::User,
            project: None,
            access: NoteAccess::ReadOnly,
        }];
        r
    };
    env.ok(mount(create("/memories/todo.md", "# Todo\n"))).await;
    let listing = env.ok(mount(view("/memories"))).await.output;
    assert_eq!(
        listing,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n21B\t/memories\n14B\t/memories/shared/\n14B\t/memories/shared/style.md\n7B\t/memories/todo.md"
    );
    let v = env.ok(mount(view("/memories/shared/style.md"))).await;
    assert!(
        v.output.ends_with("     2\tTabs.\n     3\t"),
        "{}",
        v.output
    );
    let e = env
        .run(mount(str_replace(
            "/memories/shared/style.md",
            "Tabs",
            "Spaces",
        )))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden, "{e}");
    // The project's own notes stay writable, with the memory stores' precondition.
    let sha = sha256_hex("# Todo\n");
    let mut w = mount(insert("/memories/todo.md", 1, "- ship"));
    w.precondition = Some(NotePrecondition::ContentSha256 {
        content_sha256: sha256_hex("stale"),
    });
    assert_eq!(
        env.run(w.clone()).await.unwrap_err().code(),
        ErrorCode::Conflict
    );
    w.precondition = Some(NotePrecondition::ContentSha256 {
        content_sha256: sha,
    });
    env.ok(w).await;
    // Renames stay inside one store.
    let e = env
        .run(mount(rename(
            "/memories/todo.md",
            "/memories/shared/todo.md",
        )))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden, "{e}");
    // At most eight stores.
    let mut many = mount(view("/memories"));
    many.mounts = (0..8)
        .map(|i| NoteMount {
            name: format!("m{i}"),
            scope: NoteScopeKind::User,
            project: None,
            access: NoteAccess::ReadOnly,
        })
        .collect();
    let e = env.run(many).await.unwrap_err();
    assert!(e.to_string().contains("at most 8"), "{e}");
}

#[tokio::test]
async fn versions_are_listed_fetched_and_redacted_through_the_commands() {
    let env = Env::new().await;
    env.ok(create("/memories/log.md", "first\n")).await;
    env.ok(str_replace("/memories/log.md", "first", "second"))
        .await;
    let cmd = |name: &str, version: Option<u64>| NoteCommandReq {
        command: name.into(),
        path: "/memories/log.md".into(),
        version,
        ..Default::default()
    };
    let list = env.ok(cmd("versions", None)).await.output;
    assert!(list.starts_with("Versions of /memories/log.md"), "{list}");
    assert!(
        list.contains("     2\t") && list.contains("\tedit\t"),
        "{list}"
    );
    assert!(
        list.contains("     1\t") && list.contains("\tcreate\t"),
        "{list}"
    );
    let one = env.ok(cmd("version", Some(1))).await.output;
    assert!(one.ends_with("     1\tfirst\n     2\t"), "{one}");
    let red = env.ok(cmd("redact", Some(1))).await.output;
    assert!(
        red.starts_with("Redacted version 1 of /memories/log.md"),
        "{red}"
    );
    let e = env.run(cmd("version", Some(1))).await.unwrap_err();
    assert!(e.to_string().contains("was redacted"), "{e}");
    assert!(
        env.ok(cmd("versions", None))
            .await
            .output
            .contains("redacted")
    );
    // The current file is untouched; a read-only caller may list but not redact.
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("log.md")).unwrap(),
        "second\n"
    );
    let mut ro = cmd("redact", Some(2));
    ro.access = Some(cairn_core::api::NoteAccess::ReadOnly);
    assert_eq!(env.run(ro).await.unwrap_err().code(), ErrorCode::Forbidden);
}

#[tokio::test]
async fn expected_sha256_guards_every_write() {
    let env = Env::new().await;
    let sha = env.ok(create("a.md", "one\n")).await.sha256.unwrap();
    let stale = sha256_hex("something else");
    let path = env.user_dir().join("a.md");
    let with = |mut r: NoteCommandReq, s: &str| {
        r.expected_sha256 = Some(s.to_owned());
        r
    };
    for req in [
        create("a.md", "two\n"),
        str_replace("a.md", "one", "two"),
        insert("a.md", 0, "two"),
        delete("a.md"),
        rename("a.md", "b.md"),
    ] {
        let label = req.command.clone();
        let e = env.run(with(req, &stale)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict, "{label}");
        assert_eq!(
            e.to_string().split(';').next().unwrap(),
            format!("a.md changed since you read it (expected {stale}, now {sha})"),
            "{label}"
        );
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "one\n", "{label}");
    }
    // A create expecting a file that does not exist.
    let e = env
        .run(with(create("new.md", "x"), &sha))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(!env.user_dir().join("new.md").exists());
    // The right sha passes (in any case).
    let r = env
        .ok(with(str_replace("a.md", "one", "two"), &sha.to_uppercase()))
        .await;
    assert_eq!(r.sha256.unwrap(), sha256_hex("two\n"));
    let versions = env.notes.versions(&user_ref("a.md")).await.unwrap();
    assert_eq!(versions.versions.len(), 2, "refused writes left no version");

    // create_only on save.
    let e = env
        .notes
        .save(
            &Caller::user(),
            &NoteSaveReq {
                create_only: true,
                ..save_req(user_ref("a.md"), "x", None)
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert_eq!(e.rejected_content(), Some("x"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_with_the_same_sha_one_wins_and_nothing_is_lost() {
    let env = Env::new().await;
    for round in 0..10 {
        let path = format!("race-{round}.md");
        let sha = env.ok(create(&path, "base\n")).await.sha256.unwrap();
        let mut tasks = Vec::new();
        for who in ["alpha", "beta"] {
            let notes: Notes = env.notes.clone();
            let (path, sha) = (path.clone(), sha.clone());
            tasks.push(tokio::spawn(async move {
                let content = format!("written by {who}\n");
                let res = notes
                    .save(
                        &Caller::agent(who, NoteAccess::ReadWrite),
                        &save_req(user_ref(&path), &content, Some(&sha)),
                    )
                    .await;
                (content, res)
            }));
        }
        let mut wins = Vec::new();
        let mut losses = Vec::new();
        for t in tasks {
            let (content, res) = t.await.unwrap();
            match res {
                Ok(doc) => wins.push((content, doc)),
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::Conflict, "{e}");
                    assert_eq!(
                        e.rejected_content(),
                        Some(content.as_str()),
                        "the loser's text comes back"
                    );
                    losses.push(content);
                }
            }
        }
        assert_eq!((wins.len(), losses.len()), (1, 1), "round {round}");
        let (winner, doc) = &wins[0];
        assert_eq!(&doc.content, winner);
        let on_disk = fs_err::read_to_string(env.user_dir().join(&path)).unwrap();
        assert_eq!(&on_disk, winner);
        let versions = env.notes.versions(&user_ref(&path)).await.unwrap().versions;
        assert_eq!(versions.len(), 2);
        let v2 = env
            .notes
            .version(&vreq(user_ref(&path), versions[0].version))
            .await
            .unwrap();
        assert_eq!(v2.content.as_deref(), Some(winner.as_str()));
        assert_ne!(&losses[0], winner);
    }
}

#[tokio::test]
async fn read_only_callers_read_but_never_write() {
    let env = Env::new().await;
    env.ok(create("a.md", "# A\nbody\n")).await;
    let sha = sha256_hex("# A\nbody\n");
    let before = snapshot(env.tree.path());
    let ro = Caller::agent("codex", NoteAccess::ReadOnly);
    for req in [
        create("a.md", "x"),
        create("new.md", "x"),
        str_replace("a.md", "body", "x"),
        insert("a.md", 0, "x"),
        delete("a.md"),
        rename("a.md", "b.md"),
    ] {
        let label = req.command.clone();
        let e = env.notes.command(&ro, &req).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "{label}");
        assert!(
            e.to_string().contains("agent:codex has read-only access"),
            "{e}"
        );
        // A read-write caller lowered by the request is read-only too.
        let mut lowered = req.clone();
        lowered.access = Some(NoteAccess::ReadOnly);
        let e = env.run(lowered).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "{label} lowered");
    }
    let r = user_ref("a.md");
    let forbidden = [
        env.notes
            .save(&ro, &save_req(r.clone(), "x", None))
            .await
            .map(drop),
        env.notes
            .rename(
                &ro,
                &NoteRenameReq {
                    note: r.clone(),
                    new_path: "b.md".into(),
                    expected_sha256: None,
                },
            )
            .await
            .map(drop),
        env.notes
            .delete(
                &ro,
                &NoteDeleteReq {
                    note: r.clone(),
                    expected_sha256: None,
                },
            )
            .await
            .map(drop),
        env.notes.restore(&ro, &vreq(r.clone(), 1)).await.map(drop),
        env.notes.redact(&ro, &vreq(r.clone(), 1)).await.map(drop),
    ];
    for f in forbidden {
        assert_eq!(f.unwrap_err().code(), ErrorCode::Forbidden);
    }
    assert_eq!(before, snapshot(env.tree.path()));
    // Reads work.
    let v = env.notes.command(&ro, &view("a.md")).await.unwrap();
    assert_eq!(v.sha256.as_deref(), Some(sha.as_str()));
    assert!(env.notes.command(&ro, &view("")).await.is_ok());
    assert_eq!(env.notes.get(&r).await.unwrap().content, "# A\nbody\n");
    assert_eq!(env.notes.list(&Default::default()).await.unwrap().len(), 1);
    assert_eq!(env.notes.versions(&r).await.unwrap().versions.len(), 1);
    assert_eq!(
        env.notes
            .titles(&Default::default())
            .await
            .unwrap()
            .titles
            .len(),
        1
    );
}

#[tokio::test]
async fn scopes_are_isolated() {
    let env = Env::new().await;
    env.ok(in_project(create("secret-plan.md", "# App plan\n"), APP))
        .await;
    env.ok(in_project(create("other.md", "# Other\n"), OTHER))
        .await;
    env.ok(create("me.md", "# Mine\n")).await;
    // Layout on disk.
    let dir = env
        .root
        .join("projects")
        .join(cairn_notes::project_dir_name(APP));
    assert!(dir.join("secret-plan.md").is_file());
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("github-com-acme-app-"),
        "{dir:?}"
    );
    assert!(env.user_dir().join("me.md").is_file());

    // Another project and the user scope never see it.
    let e = env
        .run(in_project(view("secret-plan.md"), OTHER))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(
        env.run(view("secret-plan.md")).await.unwrap_err().code(),
        ErrorCode::NotFound
    );
    let listing = env.ok(in_project(view(""), OTHER)).await.output;
    assert!(!listing.contains("secret-plan"), "{listing}");
    assert!(!env.ok(view("")).await.output.contains("secret-plan"));
    assert!(
        env.notes
            .get(&project_ref(OTHER, "secret-plan.md"))
            .await
            .is_err()
    );

    let list = |scope, project: Option<&str>| NotesListReq {
        scope,
        project: project.map(str::to_owned),
    };
    let paths =
        |v: Vec<cairn_core::api::NoteSummary>| v.into_iter().map(|n| n.path).collect::<Vec<_>>();
    assert_eq!(
        paths(env.notes.list(&list(None, Some(OTHER))).await.unwrap()),
        ["me.md", "other.md"]
    );
    assert_eq!(
        paths(
            env.notes
                .list(&list(Some(NoteScopeKind::Project), Some(OTHER)))
                .await
                .unwrap()
        ),
        ["other.md"]
    );
    assert_eq!(
        paths(
            env.notes
                .list(&list(Some(NoteScopeKind::User), None))
                .await
                .unwrap()
        ),
        ["me.md"]
    );
    assert_eq!(
        paths(env.notes.list(&list(None, None)).await.unwrap()),
        ["me.md", "secret-plan.md", "other.md"]
    );
    let all = env.notes.list(&list(None, None)).await.unwrap();
    assert_eq!(all[0].scope, NoteScopeKind::User);
    assert_eq!(all[1].project.as_deref(), Some(APP));
    let titles = env
        .notes
        .titles(&NotesTitlesReq {
            project: Some(OTHER.into()),
            max_chars: None,
        })
        .await
        .unwrap();
    assert!(!titles.text.contains("App plan"), "{}", titles.text);

    // The scope rules.
    let e = env
        .notes
        .list(&list(Some(NoteScopeKind::User), Some(APP)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    let mut r = view("");
    r.scope = Some(NoteScopeKind::Project);
    assert_eq!(env.run(r).await.unwrap_err().code(), ErrorCode::BadRequest);
    let mut r = view("");
    r.scope = Some(NoteScopeKind::User);
    r.project = Some(APP.into());
    assert_eq!(env.run(r).await.unwrap_err().code(), ErrorCode::BadRequest);

    assert_eq!(
        env.notes.projects().await.unwrap(),
        vec![APP.to_owned(), OTHER.to_owned()]
    );
    let id = env
        .notes
        .get(&project_ref(APP, "secret-plan.md"))
        .await
        .unwrap()
        .note
        .id;
    let doc = env.notes.get_by_id(&id).await.unwrap();
    assert_eq!(doc.note.project.as_deref(), Some(APP));
    assert_eq!(
        env.notes.get_by_id("n_nope").await.unwrap_err().code(),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn versions_restore_and_redact() {
    let env = Env::new().await;
    let u = Caller::user();
    env.ok(create("v.md", "# V\nfirst\n")).await; // 1 create
    env.ok(str_replace("v.md", "first", "second")).await; // 2 edit
    env.ok(rename("v.md", "w.md")).await; // 3 rename
    env.ok(delete("w.md")).await; // 4 delete
    let list = env.notes.versions(&user_ref("w.md")).await.unwrap();
    let actions: Vec<_> = list
        .versions
        .iter()
        .map(|v| (v.version, v.action.as_str(), v.path.as_str()))
        .collect();
    assert_eq!(
        actions,
        [
            (4, "delete", "w.md"),
            (3, "rename", "w.md"),
            (2, "edit", "v.md"),
            (1, "create", "v.md")
        ]
    );
    assert!(list.versions.iter().all(|v| v.author == "user"));
    let v1 = env.notes.version(&vreq(user_ref("w.md"), 1)).await.unwrap();
    assert_eq!(v1.content.as_deref(), Some("# V\nfirst\n"));
    let v4 = env.notes.version(&vreq(user_ref("w.md"), 4)).await.unwrap();
    assert_eq!(
        v4.content.as_deref(),
        Some("# V\nsecond\n"),
        "a delete keeps the last content"
    );
    assert_eq!(
        env.notes
            .version(&vreq(user_ref("w.md"), 9))
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );

    // Restore a deleted note: it comes back at its path, same id.
    let doc = env
        .notes
        .restore(&u, &vreq(user_ref("w.md"), 1))
        .await
        .unwrap();
    assert_eq!(doc.content, "# V\nfirst\n");
    assert_eq!(doc.note.id, list.id);
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("w.md")).unwrap(),
        "# V\nfirst\n"
    );
    let latest = &env
        .notes
        .versions(&user_ref("w.md"))
        .await
        .unwrap()
        .versions[0];
    assert_eq!((latest.version, latest.action.as_str()), (5, "restore"));

    // Restore honours expected_sha256.
    let mut stale = vreq(user_ref("w.md"), 2);
    stale.expected_sha256 = Some(sha256_hex("nope"));
    assert_eq!(
        env.notes.restore(&u, &stale).await.unwrap_err().code(),
        ErrorCode::Conflict
    );
    stale.expected_sha256 = Some(doc.note.sha256.clone());
    assert_eq!(
        env.notes.restore(&u, &stale).await.unwrap().content,
        "# V\nsecond\n"
    );

    // Redact version 2: gone for good, who and when kept, cannot be restored or redacted again.
    let red = env
        .notes
        .redact(&u, &vreq(user_ref("w.md"), 2))
        .await
        .unwrap();
    assert_eq!(red.redacted_by.as_deref(), Some("user"));
    assert!(red.redacted_at.is_some());
    assert_eq!((red.author.as_str(), red.bytes), ("user", 0));
    assert_eq!(
        env.notes
            .version(&vreq(user_ref("w.md"), 2))
            .await
            .unwrap()
            .content,
        None
    );
    let e = env
        .notes
        .restore(&u, &vreq(user_ref("w.md"), 2))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert!(
        e.to_string().contains("version 2 of w.md was redacted"),
        "{e}"
    );
    assert!(e.to_string().contains("cannot be restored"), "{e}");
    let e = env
        .notes
        .redact(&u, &vreq(user_ref("w.md"), 2))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("redacted already"), "{e}");
    // The current file is untouched even though version 6 has the same text.
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("w.md")).unwrap(),
        "# V\nsecond\n"
    );

    // A deleted note cannot come back over a new note at its path.
    env.ok(delete("w.md")).await;
    env.ok(create("w.md", "# Newcomer\n")).await;
    let versions = env.notes.versions(&user_ref("w.md")).await.unwrap();
    assert_ne!(versions.id, list.id, "the live note is the newcomer");
    assert_eq!(versions.versions.len(), 1);
}

#[tokio::test]
async fn a_deleted_note_is_not_restored_over_something_else() {
    let env = Env::new().await;
    let u = Caller::user();
    env.ok(create("x.md", "old\n")).await;
    env.ok(delete("x.md")).await;
    // Something that is not a note now sits at the path.
    fs_err::write(env.user_dir().join("x.md"), [0xff, 0x00]).unwrap();
    let e = env
        .notes
        .restore(&u, &vreq(user_ref("x.md"), 1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(
        e.to_string()
            .contains("is taken by something that is not a note"),
        "{e}"
    );
    assert_eq!(e.rejected_content(), Some("old\n"));
    assert_eq!(
        fs_err::read(env.user_dir().join("x.md")).unwrap(),
        [0xff, 0x00]
    );
    // Once it is out of the way, the note comes back.
    fs_err::remove_file(env.user_dir().join("x.md")).unwrap();
    let doc = env
        .notes
        .restore(&u, &vreq(user_ref("x.md"), 1))
        .await
        .unwrap();
    assert_eq!(doc.content, "old\n");
    // A deleted note refuses an expected sha: there is nothing to match.
    env.ok(delete("x.md")).await;
    let mut r = vreq(user_ref("x.md"), 1);
    r.expected_sha256 = Some(sha256_hex("old\n"));
    assert_eq!(
        env.notes.restore(&u, &r).await.unwrap_err().code(),
        ErrorCode::Conflict
    );
}

#[tokio::test]
async fn a_redacted_text_is_left_in_no_store_file() {
    let env = Env::new().await;
    let u = Caller::user();
    let planted = "zebra-marmalade-planted-phrase";
    env.ok(create(
        "p.md",
        &format!("# P\nThe phrase is {planted} here.\n"),
    ))
    .await;
    env.ok(str_replace(
        "p.md",
        &format!("The phrase is {planted} here."),
        "Nothing to see.",
    ))
    .await;
    let db_dir = env.db_dir.path();
    assert!(
        !files_containing(db_dir, planted.as_bytes()).is_empty(),
        "the phrase is stored before the redaction"
    );
    env.notes
        .redact(&u, &vreq(user_ref("p.md"), 1))
        .await
        .unwrap();
    assert_eq!(
        files_containing(db_dir, planted.as_bytes()),
        Vec::<String>::new(),
        "redacted text left in the store files"
    );
    // The store keeps working and the text stays gone after more writes and a reopen.
    env.ok(create("q.md", "more\n")).await;
    env.store.checkpoint().await.unwrap();
    assert!(files_containing(db_dir, planted.as_bytes()).is_empty());
    assert!(
        !fs_err::read_to_string(env.user_dir().join("p.md"))
            .unwrap()
            .contains(planted)
    );
}

#[tokio::test]
async fn secrets_are_scrubbed_before_anything_is_written() {
    let env = Env::new().await;
    let aws = "AKIAQ7R2M5X9K3L8P4ZD";
    let gh = "ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio";
    let text = format!("# Deploy\nAWS_ACCESS_KEY_ID={aws}\nexport GITHUB_TOKEN={gh}\n");
    let r = env.ok(create("deploy.md", &text)).await;
    assert_eq!(
        r.output,
        "File created successfully at: /memories/deploy.md Redacted 2 secrets before saving."
    );
    let on_disk = fs_err::read_to_string(env.user_dir().join("deploy.md")).unwrap();
    assert!(!on_disk.contains(aws) && !on_disk.contains(gh), "{on_disk}");
    assert!(on_disk.contains("[REDACTED:"), "{on_disk}");
    assert_eq!(
        r.sha256.unwrap(),
        sha256_hex(&on_disk),
        "the sha is of the stored content"
    );
    let v = env
        .notes
        .version(&vreq(user_ref("deploy.md"), 1))
        .await
        .unwrap();
    assert_eq!(v.content.as_deref(), Some(on_disk.as_str()));

    // Through str_replace, insert and save too.
    let r = env
        .ok(str_replace(
            "deploy.md",
            "# Deploy",
            &format!("# Deploy {gh}"),
        ))
        .await;
    assert!(
        r.output.ends_with("Redacted 1 secret before saving."),
        "{}",
        r.output
    );
    env.ok(insert("deploy.md", 0, &format!("key {aws}"))).await;
    let doc = env
        .notes
        .save(
            &Caller::user(),
            &save_req(user_ref("saved.md"), &format!("token={gh}\n"), None),
        )
        .await
        .unwrap();
    assert!(!doc.content.contains(gh));

    // A file edited outside Cairn with a secret is scrubbed in place when noticed.
    fs_err::write(
        env.user_dir().join("outside-edit.md"),
        format!("# X\n{gh}\n"),
    )
    .unwrap();
    let doc = env.notes.get(&user_ref("outside-edit.md")).await.unwrap();
    assert!(!doc.content.contains(gh));
    assert!(
        !fs_err::read_to_string(env.user_dir().join("outside-edit.md"))
            .unwrap()
            .contains(gh)
    );

    env.store.checkpoint().await.unwrap();
    for secret in [aws, gh] {
        assert!(
            files_containing(env.db_dir.path(), secret.as_bytes()).is_empty(),
            "{secret} in the store"
        );
        assert!(
            snapshot(&env.root).values().all(|v| !v.contains(secret)),
            "{secret} under the notes root"
        );
    }
}

#[tokio::test]
async fn size_limits() {
    let env = Env::new().await;
    let big = "x".repeat(cairn_notes::MAX_CONTENT_BYTES + 1);
    let e = env.run(create("big.md", &big)).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert!(
        e.to_string()
            .contains("a note holds at most 1048576 bytes (1 MiB)"),
        "{e}"
    );
    assert!(!env.user_dir().join("big.md").exists());
    let almost = "y".repeat(cairn_notes::MAX_CONTENT_BYTES - 1);
    env.ok(create("almost.md", &almost)).await;
    let e = env.run(insert("almost.md", 1, "more")).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert_eq!(
        fs_err::read_to_string(env.user_dir().join("almost.md"))
            .unwrap()
            .len(),
        almost.len()
    );
}

#[tokio::test]
async fn files_changed_outside_cairn_are_picked_up() {
    let env = Env::new().await;
    env.ok(create("kept.md", "# Kept\n")).await;
    let user = env.user_dir();
    // A new file appears.
    fs_err::create_dir_all(user.join("ext")).unwrap();
    fs_err::write(user.join("ext/new.md"), "# From my editor\n").unwrap();
    let list = env.notes.list(&Default::default()).await.unwrap();
    let found = list.iter().find(|n| n.path == "ext/new.md").unwrap();
    assert_eq!(found.title, "From my editor");
    let vs = env
        .notes
        .versions(&user_ref("ext/new.md"))
        .await
        .unwrap()
        .versions;
    assert_eq!(
        (vs[0].action.as_str(), vs[0].author.as_str()),
        ("create", "file")
    );

    // It is edited (the size changes).
    fs_err::write(
        user.join("ext/new.md"),
        "# From my editor\nwith more words\n",
    )
    .unwrap();
    let doc = env.notes.get(&user_ref("ext/new.md")).await.unwrap();
    assert_eq!(doc.content, "# From my editor\nwith more words\n");
    assert_eq!(doc.note.sha256, sha256_hex(&doc.content));
    let vs = env
        .notes
        .versions(&user_ref("ext/new.md"))
        .await
        .unwrap()
        .versions;
    assert_eq!(
        (vs.len(), vs[0].action.as_str(), vs[0].author.as_str()),
        (2, "edit", "file")
    );
    // An agent's expected sha from before the outside edit is stale now.
    let mut r = str_replace("ext/new.md", "more", "fewer");
    r.expected_sha256 = Some(sha256_hex("# From my editor\n"));
    assert_eq!(env.run(r).await.unwrap_err().code(), ErrorCode::Conflict);

    // Same size, different bytes: the mtime tells.
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs_err::write(user.join("kept.md"), "# Kopt\n").unwrap();
    let v = env.ok(view("kept.md")).await;
    assert!(v.output.contains("# Kopt"), "{}", v.output);

    // It vanishes.
    fs_err::remove_file(user.join("ext/new.md")).unwrap();
    let list = env.notes.list(&Default::default()).await.unwrap();
    assert!(list.iter().all(|n| n.path != "ext/new.md"));
    let vs = env
        .notes
        .versions(&user_ref("ext/new.md"))
        .await
        .unwrap()
        .versions;
    assert_eq!(
        (vs[0].action.as_str(), vs[0].author.as_str()),
        ("delete", "file")
    );
    // And can be restored.
    env.notes
        .restore(&Caller::user(), &vreq(user_ref("ext/new.md"), 2))
        .await
        .unwrap();
    assert!(user.join("ext/new.md").is_file());

    // Files that cannot be notes are left alone.
    fs_err::write(user.join("binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    let list = env.notes.list(&Default::default()).await.unwrap();
    assert!(list.iter().all(|n| n.path != "binary.md"));
    let e = env.run(view("binary.md")).await.unwrap_err();
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}

#[tokio::test]
async fn titles_put_the_project_first_and_keep_the_budget() {
    let env = Env::new().await;
    env.ok(create("u1.md", "# User one\n")).await;
    env.ok(in_project(create("p1.md", "# Project one\n"), APP))
        .await;
    env.ok(create("u2.md", "no heading here\nsecond line\n"))
        .await;
    env.ok(in_project(create("db/p2.md", "# Project two\n"), APP))
        .await;
    env.ok(in_project(create("p3.md", ""), OTHER)).await;
    let t = env
        .notes
        .titles(&NotesTitlesReq {
            project: Some(APP.into()),
            max_chars: None,
        })
        .await
        .unwrap();
    assert_eq!(
        t.text,
        "- Project two (db/p2.md)\n- Project one (p1.md)\n- no heading here (u2.md)\n- User one (u1.md)"
    );
    assert_eq!(t.omitted, 0);
    assert_eq!(t.titles[0].scope, NoteScopeKind::Project);
    assert_eq!(t.titles[3].scope, NoteScopeKind::User);
    // Editing makes a note the most recent.
    env.ok(in_project(str_replace("p1.md", "one", "uno"), APP))
        .await;
    // A tight budget: whole lines only, the rest counted.
    let t = env
        .notes
        .titles(&NotesTitlesReq {
            project: Some(APP.into()),
            max_chars: Some(50),
        })
        .await
        .unwrap();
    assert_eq!(t.text, "- Project uno (p1.md)\n- Project two (db/p2.md)");
    assert_eq!((t.titles.len(), t.omitted), (2, 2));
    assert!(t.text.chars().count() <= 50);
    // Without a project: the user's only; the empty note is titled by its file name.
    let t = env.notes.titles(&Default::default()).await.unwrap();
    assert_eq!(t.text, "- no heading here (u2.md)\n- User one (u1.md)");
    let t = env
        .notes
        .titles(&NotesTitlesReq {
            project: Some(OTHER.into()),
            max_chars: None,
        })
        .await
        .unwrap();
    assert!(t.text.starts_with("- p3 (p3.md)\n"), "{}", t.text);

    // The default budget, and the maximum, is 1,500 characters.
    for i in 0..80 {
        env.ok(create(
            &format!("many/n{i:02}.md"),
            &format!("# A fairly long title number {i:02}\n"),
        ))
        .await;
    }
    for max in [None, Some(100_000)] {
        let t = env
            .notes
            .titles(&NotesTitlesReq {
                project: None,
                max_chars: max,
            })
            .await
            .unwrap();
        let n = t.text.chars().count();
        assert!(n <= 1500 && n > 1400, "{n}");
        assert_eq!(t.titles.len() as u64 + t.omitted, 82);
        assert!(t.omitted > 0);
        assert_eq!(t.text.lines().count(), t.titles.len());
    }
}

#[tokio::test]
async fn all_notes_for_the_index_and_wiping_the_files() {
    let env = Env::new().await;
    env.ok(create("a.md", "# A\n")).await;
    env.ok(in_project(create("b.md", "# B\n"), APP)).await;
    env.ok(create("gone.md", "# Gone\n")).await;
    env.ok(delete("gone.md")).await;
    let all = env.notes.all().await.unwrap();
    let mut paths: Vec<_> = all
        .iter()
        .map(|d| (d.note.path.as_str(), d.content.as_str()))
        .collect();
    paths.sort();
    assert_eq!(paths, [("a.md", "# A\n"), ("b.md", "# B\n")]);

    // A project directory found on disk (by its marker) is listed even with no metadata.
    let env2 = Env::new().await;
    let notes2 = Notes::open(env.root.clone(), env2.store.clone())
        .await
        .unwrap();
    let list = notes2.list(&Default::default()).await.unwrap();
    assert_eq!(list.len(), 2, "{list:?}");

    env.notes.wipe_files().await.unwrap();
    assert_eq!(std::fs::read_dir(&env.root).unwrap().count(), 0);
    assert!(env.outside.join("decoy.txt").is_file());
    env.store.clear(true).await.unwrap();
    assert!(
        env.notes
            .list(&Default::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(env.ok(view("")).await.output.ends_with("\n0B\t/memories"));
}
