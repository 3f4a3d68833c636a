use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_core::NoteId;
use cairn_core::api::{
    NoteAccess, NoteDeleteReq, NoteDoc, NoteRef, NoteRenameReq, NoteSaveReq, NoteScopeKind,
    NoteSummary, NoteTitle, NoteTitles, NoteVersion, NoteVersionDoc, NoteVersionList,
    NoteVersionReq, NotesListReq, NotesTitlesReq,
};
use cairn_store::{NewNoteVersion, NoteAction, NoteRow, NoteVersionRow, Store};

use crate::error::{Error, Result};
use crate::fsx::{self, FileStat, MAX_CONTENT_BYTES, Resolved};
use crate::path::{RelPath, Scope, parse_path, project_dir_name};
use crate::text::{sha256_hex, title_of};

/// The author of changes noticed in the files themselves (edited outside Cairn).
pub(crate) const FILE_AUTHOR: &str = "file";

/// Whether a version's author is an agent (`agent`, `agent:<client>`), not the user.
pub fn is_agent(author: &str) -> bool {
    author == "agent" || author.starts_with("agent:")
}
/// The hidden file naming a project directory's project, so a full scan finds it.
const PROJECT_MARKER: &str = ".cairn-project";

/// Who is calling, and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Read-only callers may view but never write.
    pub access: NoteAccess,
    /// Kept in the versions: `user` (the app) or `agent:<client>`.
    pub author: String,
}

impl Caller {
    /// The owner, in the app: read-write, author `user`.
    pub fn user() -> Self {
        Self {
            access: NoteAccess::ReadWrite,
            author: "user".to_owned(),
        }
    }

    /// An agent client (`agent:<client>`) with the given access.
    pub fn agent(client: &str, access: NoteAccess) -> Self {
        Self {
            access,
            author: format!("agent:{client}"),
        }
    }

    pub(crate) fn author(&self) -> String {
        let a: String = self
            .author
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect();
        if a.trim().is_empty() {
            "unknown".to_owned()
        } else {
            a
        }
    }

    pub(crate) fn require_write(&self, what: &str) -> Result<()> {
        if self.access == NoteAccess::ReadOnly {
            return Err(Error::Forbidden(format!(
                "{what} refused: {} has read-only access to notes",
                self.author()
            )));
        }
        Ok(())
    }
}

/// The notes: files under a root, metadata and versions in the store. Cheap to clone; all
/// clones share one write lock.
#[derive(Debug, Clone)]
pub struct Notes {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// The canonical notes root.
    pub(crate) root: PathBuf,
    pub(crate) store: Store,
    /// Serialises every operation, so a precondition check and its write are atomic.
    pub(crate) lock: tokio::sync::Mutex<()>,
}

/// A note's file as it is now, with its metadata.
#[derive(Debug, Clone)]
pub(crate) struct Current {
    pub(crate) row: NoteRow,
    pub(crate) content: String,
    pub(crate) sha: String,
}

pub(crate) fn rfc3339(t: &cairn_core::Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub(crate) fn summary(row: &NoteRow) -> NoteSummary {
    NoteSummary {
        id: row.id.as_str().to_owned(),
        scope: row.scope,
        project: row.project.clone(),
        path: row.path.clone(),
        title: row.title.clone(),
        sha256: row.sha256.clone(),
        bytes: row.bytes,
        updated_at: rfc3339(&row.updated_at),
        versions: row.versions,
    }
}

fn version_of(v: &NoteVersionRow) -> NoteVersion {
    NoteVersion {
        version: v.version,
        action: v.action.as_str().to_owned(),
        path: v.path.clone(),
        sha256: v.sha256.clone(),
        author: v.author.clone(),
        at: rfc3339(&v.at),
        bytes: v.content.as_ref().map_or(0, |c| c.len() as u64),
        redacted_at: v.redacted_at.as_ref().map(rfc3339),
        redacted_by: v.redacted_by.clone(),
    }
}

fn scope_of(row: &NoteRow) -> Scope {
    Scope {
        kind: row.scope,
        project: row.project.clone(),
    }
}

/// Scrubs secrets out of a text: the text to store and how many secrets were redacted.
pub(crate) fn scrub(text: &str) -> (String, usize) {
    let (clean, findings) = cairn_text::scrub::scrubber().scrub(text);
    (clean.into_owned(), findings.len())
}

pub(crate) fn check_size(bytes: usize, path: &str) -> Result<()> {
    if bytes > MAX_CONTENT_BYTES {
        return Err(Error::BadRequest(format!(
            "the content for {path} is {bytes} bytes; a note holds at most {MAX_CONTENT_BYTES} bytes (1 MiB)"
        )));
    }
    Ok(())
}

/// `expected_sha256` against what is there now. `rejected` is the content the refused
/// write carried, handed back in the error.
pub(crate) fn check_expected(
    path: &str,
    expected: Option<&str>,
    current: Option<&Current>,
    rejected: Option<&str>,
) -> Result<()> {
    let Some(expected) = expected.map(str::trim) else {
        return Ok(());
    };
    match current {
        None => Err(Error::Conflict {
            message: format!(
                "{path} changed since you read it (expected {expected}, now it does not exist); nothing was written"
            ),
            current_sha256: None,
            rejected: rejected.map(str::to_owned),
        }),
        Some(c) if !c.sha.eq_ignore_ascii_case(expected) => Err(Error::Conflict {
            message: format!(
                "{path} changed since you read it (expected {expected}, now {}); nothing was written: view it again and retry",
                c.sha
            ),
            current_sha256: Some(c.sha.clone()),
            rejected: rejected.map(str::to_owned),
        }),
        Some(_) => Ok(()),
    }
}

pub(crate) fn redaction_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " Redacted 1 secret before saving.".to_owned(),
        n => format!(" Redacted {n} secrets before saving."),
    }
}

fn new_id(scope: &Scope, path: &str) -> NoteId {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    NoteId::derive(
        &format!(
            "{:?}:{}",
            scope.kind,
            scope.project.as_deref().unwrap_or("")
        ),
        path,
        &format!("{nanos}-{}", fsx::random_hex()),
    )
}

impl Notes {
    /// Opens the notes under `root` (created with mode 0700 when missing), keeping their
    /// metadata in `store`.
    pub async fn open(root: PathBuf, store: Store) -> Result<Notes> {
        if std::fs::symlink_metadata(&root).is_err() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder
                .create(&root)
                .map_err(|e| Error::io("create directory", root.clone(), e))?;
        }
        let root = root
            .canonicalize()
            .map_err(|e| Error::io("resolve", root.clone(), e))?;
        if !root.is_dir() {
            return Err(Error::BadRequest(format!(
                "the notes root {} is not a directory",
                root.display()
            )));
        }
        Ok(Notes {
            inner: Arc::new(Inner {
                root,
                store,
                lock: tokio::sync::Mutex::new(()),
            }),
        })
    }

    /// The notes root (canonical).
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    pub(crate) fn resolve(&self, scope: &Scope, rel: &RelPath, raw: &str) -> Result<Resolved> {
        fsx::resolve(&self.inner.root, scope, rel, raw)
    }

    /// Notes, by scope (the user's first), project and path. With a project and no scope:
    /// that project's notes and the user's; with neither: every note (the owner's view);
    /// the project scope without a project: every project's notes.
    pub async fn list(&self, req: &NotesListReq) -> Result<Vec<NoteSummary>> {
        let _guard = self.inner.lock.lock().await;
        let scopes = match (req.scope, req.project.as_deref()) {
            (Some(kind), Some(p)) => vec![Scope::new(kind, Some(p))?],
            (Some(NoteScopeKind::User), None) => vec![Scope::user()],
            (None, Some(p)) => vec![Scope::new(NoteScopeKind::Project, Some(p))?, Scope::user()],
            (Some(NoteScopeKind::Project), None) => {
                let mut all = self.known_scopes().await?;
                all.retain(|s| s.kind == NoteScopeKind::Project);
                all
            }
            (None, None) => self.known_scopes().await?,
        };
        let mut rows = Vec::new();
        for scope in &scopes {
            self.sync_scope(scope, "").await?;
            rows.extend(
                self.store()
                    .live_notes_in(scope.kind, scope.project.as_deref())
                    .await?,
            );
        }
        rows.sort_by(|a, b| (a.scope, &a.project, &a.path).cmp(&(b.scope, &b.project, &b.path)));
        Ok(rows.iter().map(summary).collect())
    }

    /// The projects that have live notes.
    pub async fn projects(&self) -> Result<Vec<String>> {
        let _guard = self.inner.lock.lock().await;
        for scope in self.known_scopes().await? {
            self.sync_scope_lenient(&scope).await;
        }
        Ok(self.store().note_projects(false).await?)
    }

    /// One note whole.
    pub async fn get(&self, r: &NoteRef) -> Result<NoteDoc> {
        let scope = Scope::new(r.scope, r.project.as_deref())?;
        let rel = parse_path(&r.path, false)?;
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&scope, &r.path).await?;
        let res = self.resolve(&scope, &rel, &r.path)?;
        let cur = self.existing_file(&scope, &rel, &r.path, &res).await?;
        Ok(NoteDoc {
            note: summary(&cur.row),
            content: cur.content,
        })
    }

    /// One note by id (`open n_…`). A deleted note is `not_found`.
    pub async fn get_by_id(&self, id: &str) -> Result<NoteDoc> {
        let _guard = self.inner.lock.lock().await;
        let nid = NoteId::new(id);
        let Some(row) = self.store().note(&nid).await? else {
            return Err(Error::NotFound(format!("no note has the id {id:?}")));
        };
        let scope = scope_of(&row);
        self.sync_scope(&scope, &row.path).await?;
        let row = self.store().note(&nid).await?.unwrap_or(row);
        if row.deleted_at.is_some() {
            return Err(Error::NotFound(format!(
                "note {id} ({}) was deleted; its versions are kept",
                row.path
            )));
        }
        let rel = parse_path(&row.path, false)?;
        let res = self.resolve(&scope, &rel, &row.path)?;
        let cur = self.existing_file(&scope, &rel, &row.path, &res).await?;
        Ok(NoteDoc {
            note: summary(&cur.row),
            content: cur.content,
        })
    }

    /// Writes a note whole (the editor's save): creates it, or replaces its content when
    /// `expected_sha256` (if given) still matches. `create_only` refuses an existing note.
    pub async fn save(&self, c: &Caller, req: &NoteSaveReq) -> Result<NoteDoc> {
        let scope = Scope::new(req.note.scope, req.note.project.as_deref())?;
        let raw = &req.note.path;
        let rel = parse_path(raw, false)?;
        c.require_write(&format!("saving {}", rel.text()))?;
        let path = rel.text();
        check_size(req.content.len(), &path)?;
        let (stored, _) = scrub(&req.content);
        check_size(stored.len(), &path)?;
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&scope, raw).await?;
        let res = self.resolve(&scope, &rel, raw)?;
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{path} is a directory, not a note"
            )));
        }
        let cur = self.current(&scope, &rel, raw, &res).await?;
        if req.create_only
            && let Some(cur) = &cur
        {
            return Err(Error::Conflict {
                message: format!(
                    "{path} already exists (sha256 {}); nothing was written",
                    cur.sha
                ),
                current_sha256: Some(cur.sha.clone()),
                rejected: Some(stored),
            });
        }
        check_expected(
            &path,
            req.expected_sha256.as_deref(),
            cur.as_ref(),
            Some(&stored),
        )?;
        let row = match &cur {
            Some(cur) if cur.sha == sha256_hex(&stored) => cur.row.clone(),
            _ => {
                let (id, action) = match &cur {
                    Some(cur) => (Some(cur.row.id.clone()), NoteAction::Edit),
                    None => (None, NoteAction::Create),
                };
                self.commit(&scope, &rel, raw, &res, id, action, &stored, &c.author())
                    .await?
            }
        };
        Ok(NoteDoc {
            note: summary(&row),
            content: stored,
        })
    }

    /// Moves a note inside its scope; `new_path` must not exist.
    pub async fn rename(&self, c: &Caller, req: &NoteRenameReq) -> Result<NoteSummary> {
        let scope = Scope::new(req.note.scope, req.note.project.as_deref())?;
        let rel = parse_path(&req.note.path, false)?;
        let to = parse_path(&req.new_path, false)?;
        c.require_write(&format!("renaming {}", rel.text()))?;
        let _guard = self.inner.lock.lock().await;
        let row = self
            .rename_locked(
                c,
                &scope,
                (&rel, &req.note.path),
                (&to, &req.new_path),
                req.expected_sha256.as_deref(),
            )
            .await?;
        Ok(summary(&row))
    }

    /// Deletes a note (its versions stay, the last one holding its last content). Returns
    /// the `delete` version.
    pub async fn delete(&self, c: &Caller, req: &NoteDeleteReq) -> Result<NoteVersion> {
        let scope = Scope::new(req.note.scope, req.note.project.as_deref())?;
        let raw = &req.note.path;
        let rel = parse_path(raw, false)?;
        c.require_write(&format!("deleting {}", rel.text()))?;
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&scope, raw).await?;
        let res = self.resolve(&scope, &rel, raw)?;
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{} is a directory, not a note",
                rel.text()
            )));
        }
        let cur = self.existing_file(&scope, &rel, raw, &res).await?;
        check_expected(
            &rel.text(),
            req.expected_sha256.as_deref(),
            Some(&cur),
            None,
        )?;
        let v = self.delete_file(&res, &cur, &c.author()).await?;
        Ok(version_of(&v))
    }

    /// A note's versions, newest first; works for deleted notes (the one last at the path).
    pub async fn versions(&self, r: &NoteRef) -> Result<NoteVersionList> {
        let _guard = self.inner.lock.lock().await;
        let row = self.note_for_ref(r).await?;
        let versions = self.store().note_versions(&row.id).await?;
        Ok(NoteVersionList {
            id: row.id.as_str().to_owned(),
            versions: versions.iter().map(version_of).collect(),
        })
    }

    /// One version with its content (`None` once redacted).
    pub async fn version(&self, req: &NoteVersionReq) -> Result<NoteVersionDoc> {
        let _guard = self.inner.lock.lock().await;
        let row = self.note_for_ref(&req.note).await?;
        let v = self.version_row(&row, req.version).await?;
        Ok(NoteVersionDoc {
            version: version_of(&v),
            content: v.content,
        })
    }

    /// Writes an old version's content as a new `restore` version, honouring
    /// `expected_sha256`. Brings a deleted note back at the path it had (refused with
    /// `conflict` if another note lives there now). A redacted version cannot be restored.
    pub async fn restore(&self, c: &Caller, req: &NoteVersionReq) -> Result<NoteDoc> {
        c.require_write(&format!("restoring {}", req.note.path))?;
        let _guard = self.inner.lock.lock().await;
        let row = self.note_for_ref(&req.note).await?;
        let v = self.version_row(&row, req.version).await?;
        let Some(content) = v.content.clone() else {
            return Err(Error::BadRequest(format!(
                "version {} of {} was redacted{}; its content is gone, so it cannot be restored",
                v.version,
                row.path,
                match (&v.redacted_at, &v.redacted_by) {
                    (Some(at), Some(by)) => format!(" on {} by {by}", rfc3339(at)),
                    _ => String::new(),
                }
            )));
        };
        let (stored, _) = scrub(&content);
        let scope = scope_of(&row);
        let rel = parse_path(&row.path, false)?;
        let res = self.resolve(&scope, &rel, &row.path)?;
        let path = rel.text();
        if row.deleted_at.is_some() {
            if let Some(expected) = &req.expected_sha256 {
                return Err(Error::Conflict {
                    message: format!(
                        "{path} changed since you read it (expected {expected}, now it is deleted); nothing was written"
                    ),
                    current_sha256: None,
                    rejected: Some(stored),
                });
            }
            if res.meta.is_some() {
                let other = self
                    .store()
                    .note_by_path(scope.kind, scope.project.as_deref(), &path)
                    .await?
                    .filter(|r| r.deleted_at.is_none());
                return Err(Error::Conflict {
                    message: match other {
                        Some(o) => format!(
                            "another note ({}) now lives at {path}; rename or delete it before restoring {}",
                            o.id, row.id
                        ),
                        None => format!(
                            "{path} is taken by something that is not a note; move it before restoring {}",
                            row.id
                        ),
                    },
                    current_sha256: None,
                    rejected: Some(stored),
                });
            }
            let row = self
                .commit(
                    &scope,
                    &rel,
                    &row.path,
                    &res,
                    Some(row.id.clone()),
                    NoteAction::Restore,
                    &stored,
                    &c.author(),
                )
                .await?;
            return Ok(NoteDoc {
                note: summary(&row),
                content: stored,
            });
        }
        let cur = self.existing_file(&scope, &rel, &row.path, &res).await?;
        check_expected(
            &path,
            req.expected_sha256.as_deref(),
            Some(&cur),
            Some(&stored),
        )?;
        let row = if cur.sha == sha256_hex(&stored) {
            cur.row
        } else {
            self.commit(
                &scope,
                &rel,
                &row.path,
                &res,
                Some(row.id.clone()),
                NoteAction::Restore,
                &stored,
                &c.author(),
            )
            .await?
        };
        Ok(NoteDoc {
            note: summary(&row),
            content: stored,
        })
    }

    /// Strips one version's content for good, keeping who made it and when, and records
    /// who redacted it. Afterwards the text is in no file of the store (the WAL is
    /// checkpointed; the store runs with `secure_delete`). The current file is not touched,
    /// even when this version is its content.
    pub async fn redact(&self, c: &Caller, req: &NoteVersionReq) -> Result<NoteVersion> {
        c.require_write(&format!("redacting a version of {}", req.note.path))?;
        let _guard = self.inner.lock.lock().await;
        let row = self.note_for_ref(&req.note).await?;
        let v = self.version_row(&row, req.version).await?;
        if v.content.is_none() {
            return Err(Error::BadRequest(format!(
                "version {} of {} is redacted already{}",
                v.version,
                row.path,
                match (&v.redacted_at, &v.redacted_by) {
                    (Some(at), Some(by)) => format!(" (on {} by {by})", rfc3339(at)),
                    _ => String::new(),
                }
            )));
        }
        let Some(done) = self
            .store()
            .redact_note_version(&row.id, v.version, &c.author())
            .await?
        else {
            return Err(Error::NotFound(format!(
                "{} has no version {}",
                row.path, v.version
            )));
        };
        Ok(version_of(&done))
    }

    /// Titles for an agent's instructions: the project's notes first, then the user's, each
    /// most recently changed first, one `- <title> (<path>)` line each, stopping before the
    /// text would exceed `max_chars` (1,500 by default and at most).
    ///
    /// A user-scope note opens every session in every project, so it is listed only while
    /// the user stands behind its latest version: one an agent wrote or changed last
    /// ([`is_agent`]) stays readable with the notes tool but is not announced until the user
    /// saves it (in the app, or by editing the file). Versions written before authors were
    /// told apart name no agent, so they count as the user's.
    pub async fn titles(&self, req: &NotesTitlesReq) -> Result<NoteTitles> {
        let max = req
            .max_chars
            .unwrap_or(crate::MAX_TITLES_CHARS)
            .min(crate::MAX_TITLES_CHARS) as usize;
        let mut scopes = Vec::new();
        if let Some(p) = &req.project {
            scopes.push(Scope::new(NoteScopeKind::Project, Some(p))?);
        }
        scopes.push(Scope::user());
        let _guard = self.inner.lock.lock().await;
        let mut rows = Vec::new();
        for scope in &scopes {
            self.sync_scope(scope, "").await?;
            let mut these = self
                .store()
                .live_notes_in(scope.kind, scope.project.as_deref())
                .await?;
            these.sort_by_key(|r| std::cmp::Reverse(r.last_seq));
            if scope.kind == NoteScopeKind::User {
                let mut theirs = Vec::with_capacity(these.len());
                for row in these {
                    let last = self.store().note_version(&row.id, row.versions).await?;
                    if !last.is_some_and(|v| is_agent(&v.author)) {
                        theirs.push(row);
                    }
                }
                these = theirs;
            }
            rows.extend(these);
        }
        let mut out = NoteTitles {
            titles: Vec::new(),
            omitted: 0,
            text: String::new(),
        };
        let mut used = 0usize;
        for (i, row) in rows.iter().enumerate() {
            let line = format!("- {} ({})", row.title, row.path);
            let add = line.chars().count() + usize::from(!out.text.is_empty());
            if used + add > max {
                out.omitted = (rows.len() - i) as u64;
                break;
            }
            if !out.text.is_empty() {
                out.text.push('\n');
            }
            out.text.push_str(&line);
            used += add;
            out.titles.push(NoteTitle {
                scope: row.scope,
                path: row.path.clone(),
                title: row.title.clone(),
            });
        }
        Ok(out)
    }

    /// Every live note with its content (for the search index).
    pub async fn all(&self) -> Result<Vec<NoteDoc>> {
        let _guard = self.inner.lock.lock().await;
        for scope in self.known_scopes().await? {
            self.sync_scope_lenient(&scope).await;
        }
        let mut out = Vec::new();
        for row in self.store().live_notes().await? {
            let scope = scope_of(&row);
            let Ok(rel) = parse_path(&row.path, false) else {
                continue;
            };
            let res = match self.resolve(&scope, &rel, &row.path) {
                Ok(r) if r.is_file() => r,
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!(note = %row.id, error = %e, "skipping a note that cannot be read safely");
                    continue;
                }
            };
            match self.current(&scope, &rel, &row.path, &res).await {
                Ok(Some(cur)) => out.push(NoteDoc {
                    note: summary(&cur.row),
                    content: cur.content,
                }),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(note = %row.id, error = %e, "skipping a note that cannot be read");
                }
            }
        }
        Ok(out)
    }

    /// Deletes every file and directory under the notes root (Clear with notes; the store's
    /// own clear deletes the metadata and versions). Links are removed, never followed.
    pub async fn wipe_files(&self) -> Result<()> {
        let _guard = self.inner.lock.lock().await;
        let root = &self.inner.root;
        let entries = std::fs::read_dir(root).map_err(|e| Error::io("list", root.clone(), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("list", root.clone(), e))?;
            let path = entry.path();
            let m = std::fs::symlink_metadata(&path)
                .map_err(|e| Error::io("inspect", path.clone(), e))?;
            if m.is_dir() && !m.file_type().is_symlink() {
                fs_err::remove_dir_all(&path).map_err(|e| Error::io("remove", path.clone(), e))?;
            } else {
                fs_err::remove_file(&path).map_err(|e| Error::io("remove", path.clone(), e))?;
            }
        }
        fsx::sync_dir(root);
        Ok(())
    }

    // ----- internals (the caller holds the lock) -----

    /// The note a reference names: the live one at the path, else the one deleted there
    /// last.
    async fn note_for_ref(&self, r: &NoteRef) -> Result<NoteRow> {
        let scope = Scope::new(r.scope, r.project.as_deref())?;
        let rel = parse_path(&r.path, false)?;
        self.sync_scope(&scope, &r.path).await?;
        self.store()
            .note_by_path(scope.kind, scope.project.as_deref(), &rel.text())
            .await?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "there is no note at {} in {}, live or deleted",
                    rel.text(),
                    scope.describe()
                ))
            })
    }

    async fn version_row(&self, row: &NoteRow, version: u64) -> Result<NoteVersionRow> {
        self.store()
            .note_version(&row.id, version)
            .await?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "{} has no version {version} (it has {})",
                    row.path, row.versions
                ))
            })
    }

    /// Every scope that may hold notes: the user's, every project with metadata, and every
    /// project directory whose marker names a project that hashes to it.
    async fn known_scopes(&self) -> Result<Vec<Scope>> {
        let mut projects = self.store().note_projects(true).await?;
        projects.extend(self.marked_projects());
        projects.sort();
        projects.dedup();
        let mut scopes = vec![Scope::user()];
        scopes.extend(
            projects
                .into_iter()
                .filter_map(|p| Scope::new(NoteScopeKind::Project, Some(&p)).ok()),
        );
        Ok(scopes)
    }

    fn marked_projects(&self) -> Vec<String> {
        let dir = self.inner.root.join("projects");
        let plain_dir = |p: &Path| {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink())
        };
        if !plain_dir(&dir) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if !plain_dir(&path) {
                continue;
            }
            let marker = path.join(PROJECT_MARKER);
            let ok =
                std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file() && m.len() <= 4096);
            if !ok {
                continue;
            }
            if let Ok(Ok(p)) = fsx::read_text(&marker)
                && entry.file_name().to_str() == Some(project_dir_name(&p).as_str())
            {
                out.push(p);
            }
        }
        out
    }

    async fn sync_scope_lenient(&self, scope: &Scope) {
        if let Err(e) = self.sync_scope(scope, "").await {
            tracing::warn!(scope = %scope.describe(), error = %e, "could not scan notes");
        }
    }

    /// Brings the metadata in line with the files of one scope: files changed outside Cairn
    /// become `edit` versions, new files `create` versions, vanished files `delete`
    /// versions, all by `file`. Size and mtime are compared before anything is read.
    pub(crate) async fn sync_scope(&self, scope: &Scope, raw: &str) -> Result<()> {
        let res = self.resolve(scope, &RelPath::from_checked(Vec::new()), raw)?;
        let mut files = if res.is_dir() {
            fsx::walk(&res.path)?
        } else {
            Default::default()
        };
        let rows = self
            .store()
            .live_notes_in(scope.kind, scope.project.as_deref())
            .await?;
        for row in rows {
            match files.remove(&row.path) {
                None => self.record_vanished(&row).await?,
                Some(found) => {
                    self.reconcile(scope, &row.path, &found.path, Some(&row), false)
                        .await?;
                }
            }
        }
        for (rel, found) in files {
            self.reconcile(scope, &rel, &found.path, None, false)
                .await?;
        }
        Ok(())
    }

    async fn record_vanished(&self, row: &NoteRow) -> Result<()> {
        let last = self.store().note_versions(&row.id).await?;
        let content = last.first().and_then(|v| v.content.clone());
        tracing::info!(note = %row.id, "a note's file vanished; recording it as deleted");
        self.store()
            .append_note_version(&NewNoteVersion {
                id: row.id.clone(),
                scope: row.scope,
                project: row.project.clone(),
                path: row.path.clone(),
                title: row.title.clone(),
                sha256: row.sha256.clone(),
                bytes: row.bytes,
                file_size: None,
                file_mtime: None,
                action: NoteAction::Delete,
                content,
                author: FILE_AUTHOR.to_owned(),
            })
            .await?;
        Ok(())
    }

    /// Records what one file holds now, if it changed (or is new). Unless `force`, a file
    /// whose size and mtime match the metadata is taken as unchanged. A file holding a
    /// secret is rewritten scrubbed. Returns the metadata afterwards (`None`: the file is
    /// not a note — too large or not text — and is left alone).
    async fn reconcile(
        &self,
        scope: &Scope,
        rel: &str,
        path: &Path,
        row: Option<&NoteRow>,
        force: bool,
    ) -> Result<Option<NoteRow>> {
        let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io("inspect", path, e))?;
        let stat = FileStat::of(&meta);
        if let Some(row) = row
            && !force
            && row.file_size == Some(stat.size)
            && row.file_mtime == Some(stat.mtime)
        {
            return Ok(Some(row.clone()));
        }
        let raw = match fsx::read_text(path)? {
            Ok(t) => t,
            Err(why) => {
                tracing::warn!(path = %path.display(), "not a note: {why}");
                return Ok(row.cloned());
            }
        };
        let (stored, secrets) = scrub(&raw);
        let stat = if secrets > 0 {
            tracing::info!(path = %path.display(), secrets, "scrubbed secrets out of a note edited outside Cairn");
            FileStat::of(&fsx::write_atomic(path, stored.as_bytes())?)
        } else {
            stat
        };
        let sha = sha256_hex(&stored);
        if let Some(row) = row
            && row.sha256 == sha
        {
            self.store()
                .set_note_file_stat(&row.id, Some(stat.size), Some(stat.mtime))
                .await?;
            return Ok(self.store().note(&row.id).await?);
        }
        let (id, action) = match row {
            Some(r) => (r.id.clone(), NoteAction::Edit),
            None => (new_id(scope, rel), NoteAction::Create),
        };
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.store()
            .append_note_version(&NewNoteVersion {
                id: id.clone(),
                scope: scope.kind,
                project: scope.project.clone(),
                path: rel.to_owned(),
                title: title_of(&stored, name),
                sha256: sha,
                bytes: stored.len() as u64,
                file_size: Some(stat.size),
                file_mtime: Some(stat.mtime),
                action,
                content: Some(stored),
                author: FILE_AUTHOR.to_owned(),
            })
            .await?;
        Ok(self.store().note(&id).await?)
    }

    /// The note file at a resolved path as it is now (`None` if there is none). Refuses a
    /// file that cannot be a note.
    pub(crate) async fn current(
        &self,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        res: &Resolved,
    ) -> Result<Option<Current>> {
        if !res.is_file() {
            return Ok(None);
        }
        let path = rel.text();
        let read = |p: &Path| -> Result<String> {
            fsx::read_text(p)?.map_err(|why| {
                Error::BadRequest(format!(
                    "{path} exists but is not a note Cairn can use: {why}"
                ))
            })
        };
        let content = read(&res.path)?;
        let sha = sha256_hex(&content);
        let row = self
            .store()
            .note_by_path(scope.kind, scope.project.as_deref(), &path)
            .await?
            .filter(|r| r.deleted_at.is_none());
        if let Some(row) = &row
            && row.sha256 == sha
        {
            return Ok(Some(Current {
                row: row.clone(),
                content,
                sha,
            }));
        }
        // It changed after the last scan: record that first.
        let row = self
            .reconcile(scope, &path, &res.path, row.as_ref(), true)
            .await?;
        let content = read(&res.path)?;
        let sha = sha256_hex(&content);
        match row {
            Some(row) if row.sha256 == sha => Ok(Some(Current { row, content, sha })),
            _ => Err(Error::Conflict {
                message: format!(
                    "{} changed while Cairn was reading it; try again",
                    crate::error::shown(raw)
                ),
                current_sha256: Some(sha),
                rejected: None,
            }),
        }
    }

    /// Like [`Notes::current`], but the file must exist.
    pub(crate) async fn existing_file(
        &self,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        res: &Resolved,
    ) -> Result<Current> {
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{} is a directory, not a note",
                rel.text()
            )));
        }
        self.current(scope, rel, raw, res).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "{} does not exist in {}",
                rel.text(),
                scope.describe()
            ))
        })
    }

    /// Creates the scope's directories (0700; a project's with its marker) and `res`'s
    /// parents.
    pub(crate) fn make_parents(&self, scope: &Scope, res: &Resolved, raw: &str) -> Result<()> {
        let root = &self.inner.root;
        let mut scope_dir = root.clone();
        for d in scope.dirs() {
            scope_dir.push(d);
        }
        fsx::create_dirs(root, &scope_dir, raw)?;
        if let Some(p) = &scope.project {
            let marker = scope_dir.join(PROJECT_MARKER);
            if std::fs::symlink_metadata(&marker).is_err() {
                fsx::write_atomic(&marker, p.as_bytes())?;
            }
        }
        if let Some(parent) = res.path.parent() {
            fsx::create_dirs(root, parent, raw)?;
        }
        Ok(())
    }

    /// Writes `stored` (already scrubbed) to the resolved path and records the version.
    #[allow(
        clippy::too_many_arguments,
        reason = "one internal call shape for every write"
    )]
    pub(crate) async fn commit(
        &self,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        res: &Resolved,
        id: Option<NoteId>,
        action: NoteAction,
        stored: &str,
        author: &str,
    ) -> Result<NoteRow> {
        self.make_parents(scope, res, raw)?;
        // The parents may be new: check again that nothing on the way is a link.
        let res = self.resolve(scope, rel, raw)?;
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{} is a directory, not a note",
                rel.text()
            )));
        }
        let meta = fsx::write_atomic(&res.path, stored.as_bytes())?;
        let stat = FileStat::of(&meta);
        let path = rel.text();
        let id = id.unwrap_or_else(|| new_id(scope, &path));
        self.store()
            .append_note_version(&NewNoteVersion {
                id: id.clone(),
                scope: scope.kind,
                project: scope.project.clone(),
                path: path.clone(),
                title: title_of(stored, rel.name()),
                sha256: sha256_hex(stored),
                bytes: stored.len() as u64,
                file_size: Some(stat.size),
                file_mtime: Some(stat.mtime),
                action,
                content: Some(stored.to_owned()),
                author: author.to_owned(),
            })
            .await?;
        self.store()
            .note(&id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("note {id} vanished after it was written")))
    }

    /// Removes a note's file and records a `delete` version holding its last content.
    pub(crate) async fn delete_file(
        &self,
        res: &Resolved,
        cur: &Current,
        author: &str,
    ) -> Result<NoteVersionRow> {
        fs_err::remove_file(&res.path).map_err(|e| Error::io("delete", res.path.clone(), e))?;
        if let Some(dir) = res.path.parent() {
            fsx::sync_dir(dir);
        }
        Ok(self
            .store()
            .append_note_version(&NewNoteVersion {
                id: cur.row.id.clone(),
                scope: cur.row.scope,
                project: cur.row.project.clone(),
                path: cur.row.path.clone(),
                title: cur.row.title.clone(),
                sha256: cur.sha.clone(),
                bytes: cur.content.len() as u64,
                file_size: None,
                file_mtime: None,
                action: NoteAction::Delete,
                content: Some(cur.content.clone()),
                author: author.to_owned(),
            })
            .await?)
    }

    /// Moves one note (the lock is held). `from`/`to`: checked path and the caller's text.
    pub(crate) async fn rename_locked(
        &self,
        c: &Caller,
        scope: &Scope,
        from: (&RelPath, &str),
        to: (&RelPath, &str),
        expected: Option<&str>,
    ) -> Result<NoteRow> {
        let (rel, raw) = from;
        let (to_rel, to_raw) = to;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        let to_res = self.resolve(scope, to_rel, to_raw)?;
        let (path, new_path) = (rel.text(), to_rel.text());
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{path} is a directory; `rename` moves one note at a time"
            )));
        }
        let cur = self.existing_file(scope, rel, raw, &res).await?;
        if to_rel == rel {
            return Err(Error::BadRequest(format!(
                "{path} and the new path are the same"
            )));
        }
        if to_rel.starts_with(rel) {
            return Err(Error::BadRequest(format!(
                "{new_path} lies below {path}, which is a file"
            )));
        }
        if to_res.meta.is_some() {
            return Err(Error::Conflict {
                message: format!(
                    "{new_path} already exists in {}; choose another path or delete it first",
                    scope.describe()
                ),
                current_sha256: None,
                rejected: None,
            });
        }
        check_expected(&path, expected, Some(&cur), None)?;
        self.make_parents(scope, &to_res, to_raw)?;
        let to_res = self.resolve(scope, to_rel, to_raw)?;
        if to_res.meta.is_some() {
            return Err(Error::Conflict {
                message: format!("{new_path} appeared while renaming; nothing was moved"),
                current_sha256: None,
                rejected: None,
            });
        }
        fs_err::rename(&res.path, &to_res.path)
            .map_err(|e| Error::io("rename", res.path.clone(), e))?;
        for dir in [res.path.parent(), to_res.path.parent()]
            .into_iter()
            .flatten()
        {
            fsx::sync_dir(dir);
        }
        let meta = std::fs::symlink_metadata(&to_res.path)
            .map_err(|e| Error::io("inspect", to_res.path.clone(), e))?;
        let stat = FileStat::of(&meta);
        self.store()
            .append_note_version(&NewNoteVersion {
                id: cur.row.id.clone(),
                scope: scope.kind,
                project: scope.project.clone(),
                path: new_path,
                title: title_of(&cur.content, to_rel.name()),
                sha256: cur.sha.clone(),
                bytes: cur.content.len() as u64,
                file_size: Some(stat.size),
                file_mtime: Some(stat.mtime),
                action: NoteAction::Rename,
                content: Some(cur.content.clone()),
                author: c.author(),
            })
            .await?;
        self.store().note(&cur.row.id).await?.ok_or_else(|| {
            Error::NotFound(format!("note {} vanished after the rename", cur.row.id))
        })
    }
}
