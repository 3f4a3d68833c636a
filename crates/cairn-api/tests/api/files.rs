//! Files Cairn writes or reads outside its data folder, on a real service: the skills export
//! into a project's instruction files, exports and imports, the web UI's response headers
//! and the review inbox's look at a project's working tree. A link planted where Cairn
//! writes is refused or left alone, never written through; exports are private; an import
//! reads regular files only, never hanging on a FIFO; the review inbox never looks outside
//! the project.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_api::{ApiError, Service, ServiceHandle};
use cairn_core::{Item, ItemEventKind, NewItemEvent, NewRecord};
use serde_json::{Value, json};

const PROJECT: &str = "github.com/acme/files";

fn mode(p: &Path) -> u32 {
    fs_err::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

fn is_link(p: &Path) -> bool {
    fs_err::symlink_metadata(p)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// An item as distillation would have stored it (built from JSON, so fields the item gains
/// later keep their defaults), stated by the user.
fn item(id: &str, kind: &str, title: &str, summary: &str, cwd_record: &str) -> Item {
    serde_json::from_value(json!({
        "id": id, "kind": kind, "title": title, "summary": summary,
        "body": format!("{summary} The details an agent needs."),
        "cues": [], "concepts": [], "importance": 4, "certainty": "stated",
        "project": PROJECT, "sources": [cwd_record],
        "happened_at": null, "said_at": "2026-09-01T10:00:00Z", "ended_at": null,
        "superseded_by": null, "archived": false, "provenance": "user",
    }))
    .unwrap()
}

fn record(id: &str, cwd: &Path) -> NewRecord {
    serde_json::from_value(json!({
        "id": id, "framework": "claude-code", "session_id": "s1", "project": PROJECT,
        "cwd": cwd.display().to_string(), "model": null, "outcome": "success",
        "started_at": "2026-09-01T09:00:00Z", "ended_at": null,
        "request": format!("request {id}"), "text": format!("request {id}"),
        "content": {}, "source": null,
    }))
    .unwrap()
}

/// Stores `items`, each with a source request whose working folder is `cwd`.
async fn put(service: &Service, cwd: &Path, items: &[Item]) {
    let store = service.store();
    let records: Vec<_> = items
        .iter()
        .map(|i| (record(i.sources[0].as_str(), cwd), vec![]))
        .collect();
    store.append_records(&records).await.unwrap();
    for i in items {
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: i.clone(),
                reason: None,
            })
            .await
            .unwrap();
    }
}

async fn start(home: &Path) -> ServiceHandle {
    super::start_service(home, false, None).await
}

fn skills(framework: &str, dir: &Path) -> Value {
    json!({"project": PROJECT, "framework": framework, "dir": dir.display().to_string()})
}

/// A cloned repository ships links at the names Cairn writes (a temporary name pointing at
/// `.git/hooks/pre-commit`, the instruction file itself, the Cursor rules folder): the hook
/// never gets Cairn's text or an executable mode, the links stay as they were, and a linked
/// target is refused with its path named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_export_never_writes_through_a_planted_link() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let hooks = dir.join(".git/hooks");
    fs_err::create_dir_all(&hooks).unwrap();
    let victim = hooks.join("pre-commit");
    let hook = "#!/bin/sh\necho the hook the user wrote\n";
    fs_err::write(&victim, hook).unwrap();
    fs_err::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The repository's CLAUDE.md is executable, so a mode copied by path would land on the
    // hook too.
    let claude = dir.join("CLAUDE.md");
    fs_err::write(&claude, "# Rules\n").unwrap();
    fs_err::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let planted = [
        ".CLAUDE.md.cairn-tmp",
        ".AGENTS.md.cairn-tmp",
        ".CLAUDE.md.tmp-cairn",
        ".AGENTS.md.tmp-cairn",
    ];
    for name in planted {
        link(&victim, &dir.join(name));
    }

    let handle = start(home.path()).await;
    let service = handle.service().clone();
    put(
        &service,
        dir,
        &[item(
            "i_release",
            "procedure",
            "Release builds need --locked",
            "Release builds need cargo build --locked so the lock file is honoured.",
            "r_release",
        )],
    )
    .await;

    for framework in ["claude-code", "codex"] {
        let done = service
            .dispatch("skills_write", skills(framework, dir))
            .await
            .unwrap_or_else(|e| panic!("{framework}: {e}"));
        assert_eq!(done["action"], "created", "{done:#}");
    }
    assert!(
        fs_err::read_to_string(&claude)
            .unwrap()
            .contains("--locked")
    );
    assert_eq!(mode(&claude), 0o755, "the file's own mode is kept");
    assert!(
        fs_err::read_to_string(dir.join("AGENTS.md"))
            .unwrap()
            .contains("--locked")
    );
    for name in planted {
        assert!(is_link(&dir.join(name)), "{name} was replaced");
    }
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), hook);
    assert_eq!(mode(&victim), 0o644, "the hook was made executable");

    // The instruction file itself a link: refused, naming it.
    fs_err::remove_file(&claude).unwrap();
    link(&victim, &claude);
    let e = service
        .dispatch("skills_write", skills("claude-code", dir))
        .await
        .unwrap_err();
    assert!(e.to_string().contains(&claude.display().to_string()), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    // The Cursor rules' folder a link out of the project: refused, nothing written there.
    let elsewhere = tempfile::tempdir().unwrap();
    link(elsewhere.path(), &dir.join(".cursor"));
    let e = service
        .dispatch("skills_write", skills("cursor", dir))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains(&dir.join(".cursor").display().to_string()),
        "{e}"
    );
    assert_eq!(fs_err::read_dir(elsewhere.path()).unwrap().count(), 0);
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), hook);
    assert_eq!(mode(&victim), 0o644);
    handle.shutdown().await;
}

/// Every folder and file under `dir` (the folder included).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_owned()];
    for e in fs_err::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if fs_err::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(tree(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).unwrap();
    for e in fs_err::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            fs_err::copy(&p, &dest).unwrap();
        }
    }
}

async fn import(service: &Service, dir: &Path) -> Result<Value, ApiError> {
    service
        .dispatch("import_run", json!({"dir": dir.display().to_string()}))
        .await
}

/// Exports are private (folders 0700, files 0600), and a target that is a link is refused.
/// An import refuses a listed file that is a link (even to an identical copy), a FIFO
/// (without hanging), or larger than the manifest says or than Cairn reads, naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_are_private_and_imports_read_only_regular_files() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    put(
        &service,
        work.path(),
        &[item(
            "i_port",
            "fact",
            "Staging Postgres port",
            "Staging Postgres listens on port 6543.",
            "r_port",
        )],
    )
    .await;

    let out = tempfile::tempdir().unwrap();
    let export = out.path().join("export");
    let report = service
        .dispatch("export_run", json!({"dir": export.display().to_string()}))
        .await
        .unwrap();
    assert!(report["files"].as_u64().unwrap() >= 6, "{report:#}");
    let all = tree(&export);
    assert!(all.len() > 8, "{all:?}");
    for p in &all {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(p), want, "{}", p.display());
    }

    // A link as the target folder: refused, the folder it names stays empty.
    let empty = tempfile::tempdir().unwrap();
    let linked = out.path().join("linked");
    link(empty.path(), &linked);
    let e = service
        .dispatch("export_run", json!({"dir": linked.display().to_string()}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains(&linked.display().to_string()), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(fs_err::read_dir(empty.path()).unwrap().count(), 0);

    let tampered = |name: &str| {
        let dir = out.path().join(name);
        copy_tree(&export, &dir);
        dir
    };
    // A listed file that is a link to an identical copy elsewhere.
    let copy = out.path().join("item-events.copy");
    fs_err::copy(export.join("item-events.jsonl"), &copy).unwrap();
    let via_link = tampered("via-link");
    fs_err::remove_file(via_link.join("item-events.jsonl")).unwrap();
    link(&copy, &via_link.join("item-events.jsonl"));
    let e = import(&service, &via_link).await.unwrap_err().to_string();
    assert!(
        e.contains("item-events.jsonl") && e.contains("symbolic link"),
        "{e}"
    );
    // A listed file that is a FIFO: refused at once, never read.
    let fifo_dir = tampered("fifo");
    let fifo = fifo_dir.join("relations.jsonl");
    fs_err::remove_file(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let res = tokio::time::timeout(Duration::from_secs(20), import(&service, &fifo_dir)).await;
    let Ok(res) = res else {
        // Let the blocked reader go before failing.
        drop(fs_err::OpenOptions::new().write(true).open(&fifo));
        panic!("the import hung on a FIFO");
    };
    let e = res.unwrap_err().to_string();
    assert!(e.contains("relations.jsonl") && e.contains("FIFO"), "{e}");
    // A listed file larger than the manifest says: refused without reading it whole.
    let grown = tampered("grown");
    let mut big = fs_err::read(grown.join("notes.jsonl")).unwrap();
    big.extend(std::iter::repeat_n(b' ', 4 << 20));
    fs_err::write(grown.join("notes.jsonl"), big).unwrap();
    let e = import(&service, &grown).await.unwrap_err().to_string();
    assert!(
        e.contains("notes.jsonl") && e.contains("larger than"),
        "{e}"
    );
    // A manifest that claims a file over the limit: refused before it is opened.
    let huge = tampered("huge");
    let mpath = huge.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&fs_err::read_to_string(&mpath).unwrap()).unwrap();
    manifest["files"]["notes.jsonl"]["bytes"] = json!(3u64 << 30);
    fs_err::write(&mpath, serde_json::to_string(&manifest).unwrap()).unwrap();
    let e = import(&service, &huge).await.unwrap_err().to_string();
    assert!(e.contains("notes.jsonl") && e.contains("up to"), "{e}");
    // The untouched export still imports (everything a duplicate).
    let done = import(&service, &export).await.unwrap();
    assert_eq!(done["item_events"]["duplicates"], 1, "{done:#}");
    handle.shutdown().await;
}

/// The web UI and the API answer with a Content-Security-Policy that allows only the
/// service's own scripts, styles and calls and forbids framing, and the other security
/// headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_ui_carries_the_security_headers() {
    use std::io::{Read as _, Write as _};
    let home = tempfile::tempdir().unwrap();
    let ui = tempfile::tempdir().unwrap();
    fs_err::write(ui.path().join("index.html"), "<h1>the cairn ui</h1>").unwrap();
    let handle = super::start_service(home.path(), true, Some(ui.path().to_owned())).await;
    let port: u16 = handle
        .info()
        .unwrap()
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    for path in ["/", "/index.html", "/api/health"] {
        let answer = tokio::task::spawn_blocking(move || {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            write!(
                s,
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        })
        .await
        .unwrap();
        let head = answer
            .split("\r\n\r\n")
            .next()
            .unwrap()
            .to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{path}: {answer}");
        for want in [
            "content-security-policy: default-src 'self'; script-src 'self'; style-src 'self';",
            "frame-ancestors 'none'",
            "connect-src 'self'",
            "x-frame-options: deny",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ] {
            assert!(head.contains(want), "{path} lacks {want:?}: {head}");
        }
        if path != "/api/health" {
            assert!(answer.contains("the cairn ui"), "{answer}");
        }
    }
    handle.shutdown().await;
}

/// The review inbox looks for cited files inside the project only: a citation through a link
/// that leads out of the project, or with `..`, is neither present nor missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_inbox_never_looks_outside_the_project() {
    let home = tempfile::tempdir().unwrap();
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("repo");
    fs_err::create_dir_all(root.join(".git")).unwrap();
    fs_err::create_dir_all(root.join("src")).unwrap();
    fs_err::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let outside = tree.path().join("outside");
    fs_err::create_dir_all(&outside).unwrap();
    fs_err::write(outside.join("present.py"), "x = 1\n").unwrap();
    link(&outside, &root.join("docs"));
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    put(
        &service,
        &root,
        &[
            item(
                "i_out",
                "architecture",
                "Where the setup script lives",
                "The setup runs from docs/setup_gone.py and ../outside/secret.py in this repo.",
                "r_out",
            ),
            item(
                "i_mixed",
                "architecture",
                "Where the server boots",
                "The server boots in src/boot_gone.rs and docs/also_gone.py then docs/present.py.",
                "r_mixed",
            ),
        ],
    )
    .await;
    let inbox = service.dispatch("review_list", json!({})).await.unwrap();
    let stale: Vec<&Value> = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["category"] == "stale")
        .collect();
    let of = |id: &str| stale.iter().find(|e| e["subjects"][0]["id"] == id).copied();
    assert!(
        of("i_out").is_none(),
        "a path through a link out of the project was judged: {inbox:#}"
    );
    let mixed = of("i_mixed").unwrap_or_else(|| panic!("the missing file inside: {inbox:#}"));
    let why = mixed["reason"].as_str().unwrap();
    assert!(why.contains("src/boot_gone.rs"), "{why}");
    assert!(!why.contains("docs/"), "{why}");
    handle.shutdown().await;
}
