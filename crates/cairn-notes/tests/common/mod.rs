//! Shared helpers: a real store on a temp file, a notes root in a temp tree with an
//! `outside/` sibling holding a decoy, commands, and a byte-for-byte tree snapshot.
#![allow(dead_code, reason = "each test binary uses a different subset")]
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_core::api::{NoteCommandReq, NoteCommandRes, NoteRef, NoteScopeKind};
use cairn_notes::{Caller, Notes};
use cairn_store::Store;

pub const DECOY: &str = "decoy: nothing under outside/ may ever change\n";

pub struct Env {
    pub db_dir: tempfile::TempDir,
    pub tree: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub store: Store,
    pub notes: Notes,
}

impl Env {
    pub async fn new() -> Env {
        let db_dir = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path().join("notes");
        let outside = tree.path().join("outside");
        fs_err::create_dir_all(&outside).unwrap();
        fs_err::write(outside.join("decoy.txt"), DECOY).unwrap();
        let store = Store::open(&db_dir.path().join("cairn.db")).await.unwrap();
        let notes = Notes::open(root.clone(), store.clone()).await.unwrap();
        let root = notes.root().to_path_buf();
        Env {
            db_dir,
            tree,
            root,
            outside,
            store,
            notes,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.db_dir.path().join("cairn.db")
    }

    pub fn user_dir(&self) -> PathBuf {
        self.root.join("user")
    }

    pub async fn run(&self, req: NoteCommandReq) -> cairn_notes::Result<NoteCommandRes> {
        self.notes.command(&Caller::user(), &req).await
    }

    pub async fn ok(&self, req: NoteCommandReq) -> NoteCommandRes {
        let what = format!("{} {:?}", req.command, req.path);
        match self.run(req).await {
            Ok(r) => r,
            Err(e) => panic!("{what} failed: {e}"),
        }
    }
}

pub fn user_ref(path: &str) -> NoteRef {
    NoteRef {
        scope: NoteScopeKind::User,
        project: None,
        path: path.to_owned(),
    }
}

pub fn project_ref(project: &str, path: &str) -> NoteRef {
    NoteRef {
        scope: NoteScopeKind::Project,
        project: Some(project.to_owned()),
        path: path.to_owned(),
    }
}

pub fn view(path: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "view".into(),
        path: path.into(),
        ..Default::default()
    }
}

pub fn create(path: &str, text: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "create".into(),
        path: path.into(),
        file_text: Some(text.into()),
        ..Default::default()
    }
}

pub fn str_replace(path: &str, old: &str, new: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "str_replace".into(),
        path: path.into(),
        old_str: Some(old.into()),
        new_str: Some(new.into()),
        ..Default::default()
    }
}

pub fn insert(path: &str, line: i64, text: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "insert".into(),
        path: path.into(),
        insert_line: Some(line),
        insert_text: Some(text.into()),
        ..Default::default()
    }
}

pub fn delete(path: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "delete".into(),
        path: path.into(),
        ..Default::default()
    }
}

pub fn rename(path: &str, new_path: &str) -> NoteCommandReq {
    NoteCommandReq {
        command: "rename".into(),
        path: path.into(),
        new_path: Some(new_path.into()),
        ..Default::default()
    }
}

pub fn in_project(mut req: NoteCommandReq, project: &str) -> NoteCommandReq {
    req.scope = Some(NoteScopeKind::Project);
    req.project = Some(project.into());
    req
}

/// What a tree holds: every entry with its kind and bytes (files), target (links) and mode.
pub fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    snap_into(dir, dir, &mut out);
    out
}

fn snap_into(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(base).unwrap().display().to_string();
        let m = std::fs::symlink_metadata(&p).unwrap();
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            m.permissions().mode()
        };
        #[cfg(not(unix))]
        let mode = 0;
        if m.file_type().is_symlink() {
            let target = std::fs::read_link(&p).unwrap();
            out.insert(rel, format!("link -> {}", target.display()));
        } else if m.is_dir() {
            out.insert(rel, format!("dir {mode:o}"));
            snap_into(base, &p, out);
        } else {
            let bytes = fs_err::read(&p).unwrap();
            out.insert(rel, format!("file {mode:o} {}", bytes.escape_ascii()));
        }
    }
}

/// The files of `dir` (db, -wal, -shm) whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let bytes = fs_err::read(&p).unwrap();
            if bytes.windows(needle.len()).any(|w| w == needle) {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}
