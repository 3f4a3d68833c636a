//! Hostile paths through every command: each refused with `bad_request` and a message naming
//! the problem, and the whole temp tree (notes root and an `outside/` decoy) unchanged to
//! the byte.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
mod common;

use cairn_core::ErrorCode;
use cairn_core::api::{NoteCommandReq, NoteDeleteReq, NoteRenameReq, NoteSaveReq};
use cairn_notes::Caller;
use common::*;

/// (path, what the refusal must mention).
fn corpus() -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = [
        ("../x", "leaves the notes root (`..`)"),
        ("..", "leaves the notes root"),
        (".", "`.` component"),
        ("a/../../etc/passwd", "leaves the notes root"),
        ("a/..", "leaves the notes root"),
        ("a/./b", "`.` component"),
        ("./a.md", "`.` component"),
        ("a//b.md", "empty component"),
        ("a/", "empty component"),
        ("/etc/passwd", "absolute"),
        ("/x", "absolute"),
        ("%2e%2e%2fsecret", "URL encoding (`%2e`)"),
        ("%252e%252e%252f", "URL encoding (`%25`)"),
        ("..%2f", "URL encoding"),
        ("a%2Fb.md", "URL encoding"),
        ("%2E%2E/x", "URL encoding"),
        ("C:\\Windows\\win.ini", "Windows drive"),
        ("C:x", "Windows drive"),
        ("c:/x.md", "Windows drive"),
        ("\\\\?\\C:\\x", "UNC or device path"),
        ("\\\\server\\share\\x.md", "UNC or device path"),
        ("//server/share", "UNC or device path"),
        ("a\\..\\b", "backslash"),
        ("notes\\x.md", "backslash"),
        ("nul.md", "Windows device name `NUL`"),
        ("NUL", "Windows device name `NUL`"),
        ("COM1.txt", "Windows device name `COM1`"),
        ("con", "Windows device name `CON`"),
        ("a/lpt9.log", "Windows device name `LPT9`"),
        ("Aux.tar.gz", "Windows device name `AUX`"),
        ("prn .md", "Windows device name `PRN`"),
        ("a\u{0}b", "NUL character"),
        ("a\u{1b}[31mb.md", "control character U+001B"),
        ("a\nb.md", "control character U+000A"),
        ("a\rb.md", "control character"),
        ("a\u{7f}.md", "control character"),
        ("a/b\u{2215}..", "look-alike of `/`"),
        ("\u{ff0e}\u{ff0e}/x", "look-alike of `.`"),
        ("\u{2024}\u{2024}/etc", "look-alike of `.`"),
        ("a\u{ff0f}b", "look-alike of `/`"),
        ("a\u{2044}b", "look-alike of `/`"),
        ("a\u{ff3c}b", "look-alike of `\\`"),
        ("a\u{200b}.md", "invisible formatting character U+200B"),
        ("x\u{202e}dm.exe", "invisible formatting character U+202E"),
        (".hidden", "hidden"),
        ("a/.git/config", "hidden"),
        (".cairn-project", "hidden"),
        ("name.", "ends with a dot or a space"),
        ("name ", "ends with a dot or a space"),
        ("a. /b", "ends with a dot or a space"),
        ("x.tmp-cairn", "temporary files"),
        ("notes.md.TMP-CAIRN", "temporary files"),
        ("ab:stream.md", "`:`"),
        ("what?.md", "`?`"),
        ("a*b", "`*`"),
        ("<b>.md", "`<`"),
        ("|pipe", "`|`"),
        ("a/b/c/d/e/f/g/h/i.md", "9 levels deep; the limit is 8"),
    ]
    .into_iter()
    .map(|(p, r)| (p.to_owned(), r))
    .collect();
    v.push(("a/".repeat(5000), "10000 bytes long; the limit is 512"));
    v.push((
        format!("{}.md", "x".repeat(300)),
        "303 bytes long; the limit is 255",
    ));
    // Planted in the tree by `plant` below.
    v.push(("link".to_owned(), "`link` is a symbolic link"));
    v.push(("link/decoy.txt".to_owned(), "`link` is a symbolic link"));
    v.push(("link/new.md".to_owned(), "`link` is a symbolic link"));
    v.push(("link/../x.md".to_owned(), "leaves the notes root"));
    v.push(("evil.md".to_owned(), "`evil.md` is a symbolic link"));
    v.push(("evil.md/x".to_owned(), "`evil.md` is a symbolic link"));
    v.push(("hard.md".to_owned(), "other hard links"));
    v.push((
        "legit.md/below.md".to_owned(),
        "`legit.md` is a file, not a directory",
    ));
    // Every path again in the memory-tool contract's spelling, below `/memories`.
    let contract: Vec<(String, &'static str)> = v
        .iter()
        .filter(|(p, _)| !p.starts_with('/'))
        .map(|(p, r)| {
            let r: &'static str = if r.contains("bytes long; the limit is 512") {
                "bytes long; the limit is 512"
            } else {
                r
            };
            (format!("/memories/{p}"), r)
        })
        .collect();
    v.extend(contract);
    // A look-alike of the prefix is not the notes root.
    v.push((
        "/memoriesevil/x.md".to_owned(),
        "absolute outside /memories",
    ));
    v.push(("/memories/../x.md".to_owned(), "leaves the notes root"));
    v.push(("/memories//etc/passwd".to_owned(), "absolute"));
    v.push(("/Memories/x.md".to_owned(), "absolute outside /memories"));
    v
}

/// Every command the path can go through, as `(label, request)`; `legit.md` exists.
fn requests(path: &str) -> Vec<(&'static str, NoteCommandReq)> {
    let with_sha = |mut r: NoteCommandReq| {
        r.expected_sha256 = Some("0".repeat(64));
        r
    };
    vec![
        ("view", view(path)),
        ("create", create(path, "# pwned\n")),
        ("create+sha", with_sha(create(path, "# pwned\n"))),
        ("str_replace", str_replace(path, "a", "b")),
        ("insert", insert(path, 0, "pwned\n")),
        ("delete", delete(path)),
        ("rename from", rename(path, "moved.md")),
        ("rename to", rename("legit.md", path)),
    ]
}

async fn assert_all_refused(env: &Env, cases: &[(String, &'static str)]) {
    let before = snapshot(env.tree.path());
    let versions_before = env.notes.versions(&user_ref("legit.md")).await.ok();
    let mut checked = 0;
    for (path, reason) in cases {
        for (label, req) in requests(path) {
            let err = match env.run(req).await {
                Ok(res) => panic!("{label} {path:?} was accepted: {}", res.output),
                Err(e) => e,
            };
            let msg = err.to_string();
            if label == "view" && reason.ends_with("is a file, not a directory") {
                // The contract's reference: a path below a file does not exist.
                assert_eq!(err.code(), ErrorCode::NotFound, "{label} {path:?}: {msg}");
                assert!(msg.contains("does not exist"), "{label} {path:?}: {msg}");
                checked += 1;
                continue;
            }
            assert_eq!(err.code(), ErrorCode::BadRequest, "{label} {path:?}: {msg}");
            assert!(
                msg.starts_with("refused path \""),
                "{label} {path:?}: {msg}"
            );
            assert!(
                msg.contains(reason),
                "{label} {path:?}: {msg:?} should mention {reason:?}"
            );
            assert!(msg.len() < 400, "{label}: the message stays short: {msg}");
            checked += 1;
        }
        // The app's calls refuse the same paths.
        let c = Caller::user();
        let api: Vec<cairn_notes::Result<()>> = vec![
            env.notes.get(&user_ref(path)).await.map(drop),
            env.notes
                .save(
                    &c,
                    &NoteSaveReq {
                        note: user_ref(path),
                        content: "x".into(),
                        expected_sha256: None,
                        create_only: false,
                    },
                )
                .await
                .map(drop),
            env.notes
                .delete(
                    &c,
                    &NoteDeleteReq {
                        note: user_ref(path),
                        expected_sha256: None,
                    },
                )
                .await
                .map(drop),
            env.notes
                .rename(
                    &c,
                    &NoteRenameReq {
                        note: user_ref("legit.md"),
                        new_path: path.clone(),
                        expected_sha256: None,
                    },
                )
                .await
                .map(drop),
        ];
        for r in api {
            let e = r.expect_err(path);
            assert_eq!(e.code(), ErrorCode::BadRequest, "{path:?}: {e}");
        }
    }
    assert!(checked >= 30 * 8);
    let after = snapshot(env.tree.path());
    assert_eq!(before, after, "the tree changed");
    assert_eq!(
        env.notes.versions(&user_ref("legit.md")).await.ok(),
        versions_before,
        "the legit note's history changed"
    );
}

#[cfg(unix)]
fn plant(env: &Env) {
    let user = env.user_dir();
    std::os::unix::fs::symlink(&env.outside, user.join("link")).unwrap();
    std::os::unix::fs::symlink(env.outside.join("decoy.txt"), user.join("evil.md")).unwrap();
    fs_err::write(env.outside.join("hard.txt"), DECOY).unwrap();
    std::fs::hard_link(env.outside.join("hard.txt"), user.join("hard.md")).unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn every_hostile_path_is_refused_by_every_command_and_nothing_changes() {
    let env = Env::new().await;
    env.ok(create("legit.md", "# Legit\nabc\n")).await;
    plant(&env);
    let cases = corpus();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    assert_all_refused(&env, &cases).await;
    // The planted links are invisible to listings, and the legit note still works.
    let listing = env.ok(view("")).await.output;
    assert!(listing.contains("legit.md"), "{listing}");
    for hidden in ["link", "evil.md", "hard.md", "decoy"] {
        assert!(!listing.contains(hidden), "{hidden} listed: {listing}");
    }
    let titles = env.notes.titles(&Default::default()).await.unwrap().text;
    assert_eq!(titles, "- Legit (legit.md)");
    assert_eq!(
        fs_err::read_to_string(env.outside.join("decoy.txt")).unwrap(),
        DECOY
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_swapped_in_for_the_scope_root_is_refused() {
    let env = Env::new().await;
    env.ok(create("legit.md", "# Legit\n")).await;
    // Someone replaces the user scope's directory with a link to outside/.
    let user = env.user_dir();
    fs_err::rename(&user, env.tree.path().join("user-moved")).unwrap();
    std::os::unix::fs::symlink(&env.outside, &user).unwrap();
    let before = snapshot(env.tree.path());
    for path in ["decoy.txt", "new.md", "legit.md"] {
        let mut reqs = requests(path);
        reqs.push(("view root", view("")));
        reqs.push(("rename into", rename("decoy.txt", path)));
        for (label, req) in reqs {
            let err = env.run(req).await.expect_err(label);
            let msg = err.to_string();
            assert_eq!(err.code(), ErrorCode::BadRequest, "{label}: {msg}");
            assert!(
                msg.contains("the scope's directory `user` is a symbolic link"),
                "{label} {path}: {msg}"
            );
        }
    }
    for r in [
        env.notes.list(&Default::default()).await.map(drop),
        env.notes.titles(&Default::default()).await.map(drop),
    ] {
        let e = r.expect_err("listing through a linked scope root");
        assert_eq!(e.code(), ErrorCode::BadRequest, "{e}");
    }
    assert_eq!(before, snapshot(env.tree.path()));
    assert_eq!(
        fs_err::read_to_string(env.outside.join("decoy.txt")).unwrap(),
        DECOY
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_linked_projects_directory_is_refused_too() {
    let env = Env::new().await;
    fs_err::create_dir_all(&env.root).unwrap();
    std::os::unix::fs::symlink(&env.outside, env.root.join("projects")).unwrap();
    let before = snapshot(env.tree.path());
    let err = env
        .run(in_project(create("a.md", "x"), "github.com/acme/app"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
    assert!(
        err.to_string()
            .contains("the scope's directory `projects` is a symbolic link"),
        "{err}"
    );
    assert_eq!(before, snapshot(env.tree.path()));
}

#[cfg(unix)]
#[tokio::test]
async fn written_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new().await;
    env.ok(create("deep/er/note.md", "x\n")).await;
    let mode =
        |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.user_dir().join("deep/er/note.md")), 0o600);
    assert_eq!(mode(&env.user_dir().join("deep/er")), 0o700);
    assert_eq!(mode(&env.user_dir()), 0o700);
    // No temporary file is left behind.
    let snap = snapshot(&env.root);
    assert!(snap.keys().all(|k| !k.contains("tmp-cairn")), "{snap:?}");
}

// ---------------------------------------------------------------------------------------------
// Property-based fuzzing (issue 9, part 11): 10,000 generated hostile paths through every
// command of the path guard, on a real notes root with links planted towards `outside/`.
// No panic, no input over a second, and nothing outside the notes root ever changes.

#[path = "../../cairn-capture/tests/hostile/mod.rs"]
mod hostile;

mod fuzz {
    use cairn_core::api::{NoteCommandReq, NoteScopeKind};
    use proptest::prelude::*;

    use super::common::*;
    use super::hostile;

    /// Components that mean something to some file system or decoder.
    const PARTS: &[&str] = &[
        "..",
        ".",
        "",
        "a.md",
        "notes",
        "link",
        "evil.md",
        "hard.md",
        "CON",
        "nul.md",
        "COM1",
        ".hidden",
        ".git",
        "x.tmp-cairn",
        "a:b",
        "name.",
        "name ",
        "%2e%2e",
        "%252e",
        "C:",
        "\\\\?\\C:",
        "\u{ff0e}\u{ff0e}",
        "\u{2215}",
        "\u{200b}",
        "\u{202e}",
        "\u{0}",
        "\u{1b}",
        "ü.md",
        "e\u{301}.md",
        "Ⅻ.md",
        "😀.md",
    ];
    const SEPARATORS: &[&str] = &["/", "/", "/", "\\", "//", "/./", "%2f", "\u{ff0f}"];

    fn path() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            3 => prop::sample::select(PARTS).prop_map(str::to_owned),
            2 => "[a-zA-Z0-9 ._-]{0,12}",
            1 => ".{0,12}",
            1 => (1usize..300).prop_map(|n| "x".repeat(n)),
        ];
        let joined = (
            prop::option::of(prop::sample::select(&["/", "\\", "C:", "~/"][..])),
            prop::collection::vec((part, prop::sample::select(SEPARATORS)), 1..11),
        )
            .prop_map(|(lead, parts)| {
                let mut s = lead.unwrap_or("").to_owned();
                for (i, (p, sep)) in parts.iter().enumerate() {
                    if i > 0 {
                        s.push_str(sep);
                    }
                    s.push_str(p);
                }
                s
            });
        let seeds: Vec<Vec<u8>> = super::corpus()
            .into_iter()
            .map(|(p, _)| p.into_bytes())
            .collect();
        prop_oneof![
            3 => joined,
            2 => hostile::bytes_from(seeds).prop_map(|b| hostile::text(&b)),
        ]
    }

    fn request() -> impl Strategy<Value = NoteCommandReq> {
        let command = prop::sample::select(
            &[
                "view",
                "create",
                "str_replace",
                "insert",
                "delete",
                "rename",
                "list",
                "",
            ][..],
        );
        let project = prop_oneof![
            3 => Just(None),
            1 => prop::sample::select(&["demo", "../x", "/etc", "", ".", "\u{0}", "a/b"][..])
                .prop_map(|p| Some(p.to_owned())),
            1 => ".{0,40}".prop_map(Some),
        ];
        (
            command,
            path(),
            path(),
            project,
            any::<u64>(),
            prop::option::of(any::<[i64; 2]>()),
        )
            .prop_map(
                |(command, path, other, project, line, view_range)| NoteCommandReq {
                    command: command.to_owned(),
                    scope: project.as_ref().map(|_| NoteScopeKind::Project),
                    project,
                    path,
                    view_range: view_range.map(Vec::from),
                    file_text: Some("# fuzz\n\nbody\n".into()),
                    old_str: Some("body".into()),
                    new_str: Some("changed".into()),
                    insert_line: Some(i64::try_from(line % 8).unwrap()),
                    insert_text: Some("more\n".into()),
                    new_path: Some(other),
                    ..Default::default()
                },
            )
    }

    #[test]
    fn hostile_paths_never_panic_hang_or_touch_anything_outside_the_root() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let env = rt.block_on(Env::new());
        rt.block_on(env.ok(create("a.md", "# A\n\nbody\n")));
        let user = env.user_dir();
        std::os::unix::fs::symlink(&env.outside, user.join("link")).unwrap();
        std::os::unix::fs::symlink(env.outside.join("decoy.txt"), user.join("evil.md")).unwrap();
        let outside_before = snapshot(&env.outside);
        let mut runner = proptest::test_runner::TestRunner::new(hostile::config());
        let started = std::time::Instant::now();
        let accepted = std::cell::Cell::new(0u32);
        runner
            .run(&request(), |req| {
                let what = format!("{} {:?}", req.command, req.path);
                let result = hostile::timed(&what, || rt.block_on(env.run(req)))?;
                if result.is_ok() {
                    accepted.set(accepted.get() + 1);
                }
                Ok(())
            })
            .unwrap();
        eprintln!(
            "{} hostile note commands in {:?}, {accepted} accepted",
            hostile::CASES,
            started.elapsed(),
            accepted = accepted.get()
        );
        assert_eq!(outside_before, snapshot(&env.outside));
        let top: Vec<String> = fs_err::read_dir(env.tree.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            top.iter().all(|n| n == "notes" || n == "outside"),
            "{top:?}"
        );
        // Every file under the root is a real file or one of the links planted above.
        for e in walk(&env.root) {
            let meta = fs_err::symlink_metadata(&e).unwrap();
            if meta.file_type().is_symlink() {
                assert!(e == user.join("link") || e == user.join("evil.md"), "{e:?}");
            }
        }
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in fs_err::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let link = fs_err::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink();
            if p.is_dir() && !link {
                out.extend(walk(&p));
            }
            out.push(p);
        }
        out
    }
}
