//! The memory-tool commands agents send (`view`, `create`, `str_replace`, `insert`,
//! `delete`, `rename`), answered with the same structure and messages as the contract's
//! reference implementation; and Cairn's `versions`, `version` and `redact` over a note's
//! kept versions.
//!
//! Paths are spelt as the contract writes them (`/memories`, `/memories/notes.md`) or
//! relative to the root; answers always name them the contract's way. Extra stores mounted
//! for the caller appear as directories under `/memories` ([`NoteMount`]).
use cairn_core::api::{
    NoteAccess, NoteCommandReq, NoteCommandRes, NoteMount, NotePrecondition, NoteRef,
    NoteScopeKind, NoteVersionReq,
};
use cairn_store::{NoteAction, NoteRow};

use crate::error::{Error, Result};
use crate::fsx;
use crate::fsx::Resolved;
use crate::notes::{Caller, Current, Notes, check_expected, check_size, redaction_note, scrub};
use crate::path::{MEMORIES, RelPath, Scope, component_problem, contract_rest, parse_path};
use crate::text::sha256_hex;

const WRITES: &[&str] = &[
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
    "redact",
];

/// At most this many stores for one caller: its own and seven mounted ones.
pub const MAX_MOUNTS: usize = 8;

/// Width of the line numbers in views and snippets.
const NUMBER_WIDTH: usize = 6;

/// A size the way the reference prints it: `0B`, `512B`, `4K`, `1.5K`, `2M`.
fn human_size(n: u64) -> String {
    if n == 0 {
        return "0B".to_owned();
    }
    let units = ["B", "K", "M", "G"];
    let i = ((63 - n.leading_zeros()) / 10).min(3) as usize;
    #[allow(
        clippy::cast_precision_loss,
        reason = "a display size; 2^53 bytes is far beyond a note"
    )]
    let size = n as f64 / 1024f64.powi(i as i32);
    if size.fract() == 0.0 {
        format!("{size:.0}{}", units[i])
    } else {
        format!("{size:.1}{}", units[i])
    }
}

fn need<'a>(v: Option<&'a String>, command: &str, field: &str) -> Result<&'a str> {
    v.map(String::as_str)
        .ok_or_else(|| Error::BadRequest(format!("`{command}` needs `{field}`")))
}

/// Lines as the reference counts them for `view`: split on `\n`, so text ending with a
/// newline has an empty last line.
fn view_lines(content: &str) -> Vec<&str> {
    content.split('\n').collect()
}

/// Lines as the reference counts them for `insert`: split on `\n` without the empty tail a
/// final newline leaves.
fn insert_lines(content: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

fn number(lines: &[&str], first: usize) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>NUMBER_WIDTH$}\t{l}", i + first))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A Python-style slice end: negative counts from the end; clamped to `0..=len`.
fn slice_end(end: i64, len: usize) -> usize {
    if end < 0 {
        len.saturating_sub(usize::try_from(end.unsigned_abs()).unwrap_or(usize::MAX))
    } else {
        usize::try_from(end).map_or(len, |e| e.min(len))
    }
}

/// The 1-based lines where `needle` starts, counting overlapping matches (as the
/// reference lists them).
fn occurrence_lines(content: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(pos) = content.get(start..).and_then(|s| s.find(needle)) {
        let at = start + pos;
        out.push(content[..at].matches('\n').count() + 1);
        start = at + content[at..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Where one command acts: the store (the caller's own or a mounted one), the path in it,
/// the path as answers name it, and the access there.
#[derive(Debug, Clone)]
struct Target {
    scope: Scope,
    rel: RelPath,
    shown: String,
    access: NoteAccess,
    /// The mount's name, when the path lies in a mounted store.
    mount: Option<String>,
}

impl Target {
    /// The root of the caller's whole `/memories` (not a mounted store's root).
    fn is_top(&self) -> bool {
        self.mount.is_none() && self.rel.is_root()
    }

    fn note_ref(&self) -> NoteRef {
        NoteRef {
            scope: self.scope.kind,
            project: self.scope.project.clone(),
            path: self.rel.text(),
        }
    }
}

/// The stores of one caller: its own at `/memories`, the mounted ones below it.
struct Mounts {
    own: Scope,
    own_access: NoteAccess,
    extra: Vec<(NoteMount, Scope)>,
}

impl Mounts {
    fn new(own: Scope, own_access: NoteAccess, mounts: &[NoteMount]) -> Result<Self> {
        if mounts.len() + 1 > MAX_MOUNTS {
            return Err(Error::BadRequest(format!(
                "{} stores are mounted; at most {MAX_MOUNTS} (the caller's own and {} more)",
                mounts.len() + 1,
                MAX_MOUNTS - 1
            )));
        }
        let mut extra: Vec<(NoteMount, Scope)> = Vec::new();
        for m in mounts {
            if let Some(why) = component_problem(&m.name) {
                return Err(Error::BadRequest(format!(
                    "mount name {}: {why}",
                    crate::error::shown(&m.name)
                )));
            }
            if m.name.contains('/') || m.name.contains('\\') {
                return Err(Error::BadRequest(format!(
                    "mount name {} must be one path component",
                    crate::error::shown(&m.name)
                )));
            }
            if extra.iter().any(|(e, _)| e.name == m.name) {
                return Err(Error::BadRequest(format!(
                    "two stores are mounted as {MEMORIES}/{}",
                    m.name
                )));
            }
            let scope = Scope::new(m.scope, m.project.as_deref())?;
            extra.push((m.clone(), scope));
        }
        Ok(Self {
            own,
            own_access,
            extra,
        })
    }

    /// Resolves a caller's path to a store and a path in it.
    fn target(&self, raw: &str, allow_root: bool) -> Result<Target> {
        let rel = parse_path(raw, true)?;
        let first = rel.components().first().cloned();
        if let Some(first) = first
            && let Some((m, scope)) = self.extra.iter().find(|(m, _)| m.name == first)
        {
            let rest = RelPath::from_checked(rel.components()[1..].to_vec());
            if rest.is_root() && !allow_root {
                return Err(Error::path(
                    raw,
                    format!("it names the mounted store {first} itself; name a file in it"),
                ));
            }
            let access = if m.access == NoteAccess::ReadOnly {
                NoteAccess::ReadOnly
            } else {
                self.own_access
            };
            return Ok(Target {
                scope: scope.clone(),
                shown: shown(raw, &rel),
                rel: rest,
                access,
                mount: Some(first),
            });
        }
        if rel.is_root() && !allow_root {
            // The reference's own refusal for the root comes later (delete, rename); other
            // commands get the path checker's reason.
            parse_path(raw, false)?;
        }
        Ok(Target {
            scope: self.own.clone(),
            shown: shown(raw, &rel),
            rel,
            access: self.own_access,
            mount: None,
        })
    }
}

/// The path as answers name it: as the caller wrote it when spelt the contract's way,
/// else `/memories/<path>`.
fn shown(raw: &str, rel: &RelPath) -> String {
    if contract_rest(raw).is_some() {
        raw.to_owned()
    } else if rel.is_root() {
        MEMORIES.to_owned()
    } else {
        format!("{MEMORIES}/{}", rel.text())
    }
}

fn missing(t: &Target) -> Error {
    Error::NotFound(format!(
        "The path {} does not exist. Please provide a valid path.",
        t.shown
    ))
}

impl Notes {
    /// Runs one memory-tool command. The caller's access may be lowered by `req.access`
    /// (never raised); versions record `c.author` (`req.author` when that is empty). The
    /// caller's own store is the project's when `req.project` is given, else the user's;
    /// `req.mounts` add stores under `/memories/<name>/`.
    pub async fn command(&self, c: &Caller, req: &NoteCommandReq) -> Result<NoteCommandRes> {
        let mut caller = c.clone();
        if req.access == Some(NoteAccess::ReadOnly) {
            caller.access = NoteAccess::ReadOnly;
        }
        if caller.author.trim().is_empty()
            && let Some(a) = &req.author
        {
            caller.author.clone_from(a);
        }
        let kind = req.scope.unwrap_or(if req.project.is_some() {
            NoteScopeKind::Project
        } else {
            NoteScopeKind::User
        });
        let own = Scope::new(kind, req.project.as_deref())?;
        let mounts = Mounts::new(own, caller.access, &req.mounts)?;
        let cmd = req.command.as_str();
        let expected = match (&req.expected_sha256, &req.precondition) {
            (Some(e), Some(NotePrecondition::ContentSha256 { content_sha256 }))
                if !e.trim().eq_ignore_ascii_case(content_sha256.trim()) =>
            {
                return Err(Error::BadRequest(
                    "expected_sha256 and the content_sha256 precondition differ; send one"
                        .to_owned(),
                ));
            }
            (Some(e), _) => Some(e.as_str()),
            (None, Some(NotePrecondition::ContentSha256 { content_sha256 })) => {
                Some(content_sha256.as_str())
            }
            (None, None) => None,
        };
        match cmd {
            "view" => {
                let t = mounts.target(&req.path, true)?;
                let range = match req.view_range.as_deref() {
                    Some(&[s, e]) => Some([s, e]),
                    _ => None,
                };
                return self.view(&mounts, &t, range).await;
            }
            "versions" => {
                let t = mounts.target(&req.path, false)?;
                return self.versions_text(&t).await;
            }
            "version" => {
                let t = mounts.target(&req.path, false)?;
                let v = req.version.ok_or_else(|| {
                    Error::BadRequest("`version` needs `version` (a number from `versions`)".into())
                })?;
                return self.version_text(&t, v).await;
            }
            _ => {}
        }
        if !WRITES.contains(&cmd) {
            return Err(Error::BadRequest(format!(
                "unknown command {cmd:?}; use view, create, str_replace, insert, delete or rename (or versions, version, redact)"
            )));
        }
        let from_raw = if cmd == "rename" {
            match (&req.old_path, req.path.is_empty()) {
                (Some(old), _) => old.as_str(),
                (None, false) => req.path.as_str(),
                (None, true) => {
                    return Err(Error::BadRequest("`rename` needs `old_path`".to_owned()));
                }
            }
        } else {
            req.path.as_str()
        };
        let t = mounts.target(from_raw, matches!(cmd, "delete" | "rename"))?;
        if cmd == "rename" {
            let to_raw = need(req.new_path.as_ref(), cmd, "new_path")?;
            let to = mounts.target(to_raw, true)?;
            let mut who = caller.clone();
            who.access = worst(t.access, to.access);
            who.require_write(&format!("`rename` of {} to {}", t.shown, to.shown))?;
            return self.rename_cmd(&who, &t, &to, expected).await;
        }
        let mut who = caller.clone();
        who.access = t.access;
        who.require_write(&format!("`{cmd}` on {}", t.shown))?;
        match cmd {
            "create" => {
                let text = need(req.file_text.as_ref(), cmd, "file_text")?;
                self.create(&who, &t, text, expected).await
            }
            "str_replace" => {
                let old = need(req.old_str.as_ref(), cmd, "old_str")?;
                let new = req.new_str.as_deref().unwrap_or("");
                self.str_replace(&who, &t, old, new, expected).await
            }
            "insert" => {
                let line = req
                    .insert_line
                    .ok_or_else(|| Error::BadRequest("`insert` needs `insert_line`".to_owned()))?;
                let text = need(req.insert_text.as_ref(), cmd, "insert_text")?;
                self.insert(&who, &t, line, text, expected).await
            }
            "delete" => self.remove(&who, &t, expected).await,
            "redact" => {
                let v = req.version.ok_or_else(|| {
                    Error::BadRequest("`redact` needs `version` (a number from `versions`)".into())
                })?;
                self.redact_text(&who, &t, v).await
            }
            _ => Err(Error::BadRequest(format!("unknown command {cmd:?}"))),
        }
    }

    async fn view(
        &self,
        mounts: &Mounts,
        t: &Target,
        range: Option<[i64; 2]>,
    ) -> Result<NoteCommandRes> {
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&t.scope, &t.shown).await?;
        let res = match self.resolve(&t.scope, &t.rel, &t.shown) {
            // A path below a file names nothing, as the reference answers.
            Err(Error::Path { reason, .. }) if reason.ends_with("is a file, not a directory") => {
                return Err(missing(t));
            }
            r => r?,
        };
        if t.rel.is_root() || res.is_dir() {
            let mut entries = if res.is_dir() {
                fsx::tree(&res.path, 2)?
            } else {
                Vec::new()
            };
            if t.is_top() && !mounts.extra.is_empty() {
                // The mounted stores are directories of the top level, in name order.
                for (m, scope) in &mounts.extra {
                    self.sync_scope(scope, &t.shown).await?;
                    let root = self.resolve(scope, &RelPath::from_checked(Vec::new()), &t.shown)?;
                    let below = if root.is_dir() {
                        fsx::tree(&root.path, 1)?
                    } else {
                        Vec::new()
                    };
                    let name = format!("{}/", m.name);
                    entries.retain(|e| !e.rel.starts_with(&name));
                    let at = entries
                        .iter()
                        .position(|e| top_name(&e.rel) > m.name.as_str())
                        .unwrap_or(entries.len());
                    let mut group = vec![fsx::TreeEntry {
                        rel: name.clone(),
                        size: below.iter().map(|e| e.size).sum(),
                    }];
                    group.extend(below.into_iter().map(|e| fsx::TreeEntry {
                        rel: format!("{name}{}", e.rel),
                        size: e.size,
                    }));
                    entries.splice(at..at, group);
                }
            }
            let total: u64 = entries
                .iter()
                .filter(|e| {
                    !e.rel.contains('/')
                        || (e.rel.ends_with('/') && e.rel.matches('/').count() == 1)
                })
                .map(|e| e.size)
                .sum();
            let mut output = format!(
                "Here're the files and directories up to 2 levels deep in {}, excluding hidden items:\n{}\t{}",
                t.shown,
                human_size(total),
                t.shown
            );
            // Entries are `<viewed path>/<entry>`, as written (the reference gives
            // `/memories//a.md` for a view of `/memories/`).
            for e in entries {
                output.push_str(&format!("\n{}\t{}/{}", human_size(e.size), t.shown, e.rel));
            }
            return Ok(NoteCommandRes {
                output,
                sha256: None,
            });
        }
        if !res.is_file() {
            return Err(missing(t));
        }
        let cur = self.existing(t, &res).await?;
        let lines = view_lines(&cur.content);
        let (shown_lines, first) = match range {
            None => (&lines[..], 1),
            Some([s, e]) => {
                let start = usize::try_from(s.max(1) - 1).unwrap_or(0);
                let end = if e == -1 {
                    lines.len()
                } else {
                    slice_end(e, lines.len())
                };
                let start_c = start.min(lines.len());
                (&lines[start_c..end.max(start_c)], start + 1)
            }
        };
        let output = format!(
            "Here's the content of {} with line numbers:\n{}",
            t.shown,
            number(shown_lines, first)
        );
        Ok(NoteCommandRes {
            output,
            sha256: Some(cur.sha),
        })
    }

    /// The file at `t` (a directory is "not a file"; nothing there is "does not exist").
    async fn existing(&self, t: &Target, res: &Resolved) -> Result<Current> {
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "The path {} is not a file.",
                t.shown
            )));
        }
        match self.current(&t.scope, &t.rel, &t.shown, res).await? {
            Some(cur) => Ok(cur),
            None => Err(missing(t)),
        }
    }

    async fn create(
        &self,
        c: &Caller,
        t: &Target,
        text: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let path = t.rel.text();
        check_size(text.len(), &t.shown)?;
        let (stored, secrets) = scrub(text);
        check_size(stored.len(), &t.shown)?;
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&t.scope, &t.shown).await?;
        let res = self.resolve(&t.scope, &t.rel, &t.shown)?;
        if res.is_dir() {
            return Err(Error::Conflict {
                message: format!("File {} already exists", t.shown),
                current_sha256: None,
                rejected: None,
            });
        }
        let cur = self.current(&t.scope, &t.rel, &t.shown, &res).await?;
        if cur.is_some() && expected.is_none() {
            // Cairn's addition: `create` over an existing file with its current
            // `expected_sha256` overwrites it; without one it is refused, as the contract's
            // reference does.
            return Err(Error::Conflict {
                message: format!("File {} already exists", t.shown),
                current_sha256: cur.map(|c| c.sha),
                rejected: Some(stored),
            });
        }
        check_expected(&path, expected, cur.as_ref(), Some(&stored))?;
        let sha = sha256_hex(&stored);
        let (id, action, verb) = match &cur {
            Some(cur) => (Some(cur.row.id.clone()), NoteAction::Edit, "overwritten"),
            None => (None, NoteAction::Create, "created"),
        };
        if let Some(cur) = &cur
            && cur.sha == sha
        {
            return Ok(NoteCommandRes {
                output: format!(
                    "File {verb} successfully at: {} (its content was already this).{}",
                    t.shown,
                    redaction_note(secrets)
                ),
                sha256: Some(sha),
            });
        }
        let row = self
            .commit(
                &t.scope,
                &t.rel,
                &t.shown,
                &res,
                id,
                action,
                &stored,
                &c.author(),
            )
            .await?;
        Ok(NoteCommandRes {
            output: format!(
                "File {verb} successfully at: {}{}",
                t.shown,
                redaction_note(secrets)
            ),
            sha256: Some(row.sha256),
        })
    }

    async fn str_replace(
        &self,
        c: &Caller,
        t: &Target,
        old: &str,
        new: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        if old.is_empty() {
            return Err(Error::BadRequest(format!(
                "No replacement was performed, old_str is empty; give the exact text to replace in {}.",
                t.shown
            )));
        }
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&t.scope, &t.shown).await?;
        let res = self.resolve(&t.scope, &t.rel, &t.shown)?;
        let cur = self.existing(t, &res).await?;
        check_expected(&t.rel.text(), expected, Some(&cur), None)?;
        let count = cur.content.matches(old).count();
        if count == 0 {
            return Err(Error::BadRequest(format!(
                "No replacement was performed, old_str `{old}` did not appear verbatim in {}.",
                t.shown
            )));
        }
        if count > 1 {
            let lines: Vec<String> = occurrence_lines(&cur.content, old)
                .iter()
                .map(ToString::to_string)
                .collect();
            return Err(Error::BadRequest(format!(
                "No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {}. Please ensure it is unique",
                lines.join(", ")
            )));
        }
        let pos = cur.content.find(old).unwrap_or(0);
        let changed = cur.content[..pos].matches('\n').count();
        let updated = cur.content.replacen(old, new, 1);
        let (row, secrets, stored) = self.store_edit(c, t, &res, &cur, &updated).await?;
        let lines = view_lines(&stored);
        let from = changed.saturating_sub(2);
        let to = (changed + 3).min(lines.len());
        Ok(NoteCommandRes {
            output: format!(
                "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}{}",
                number(&lines[from.min(to)..to], from + 1),
                redaction_note(secrets)
            ),
            sha256: Some(row.sha256),
        })
    }

    async fn insert(
        &self,
        c: &Caller,
        t: &Target,
        line: i64,
        text: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&t.scope, &t.shown).await?;
        let res = self.resolve(&t.scope, &t.rel, &t.shown)?;
        let cur = self.existing(t, &res).await?;
        check_expected(&t.rel.text(), expected, Some(&cur), None)?;
        let mut lines = insert_lines(&cur.content);
        let at = usize::try_from(line)
            .ok()
            .filter(|&n| n <= lines.len())
            .ok_or_else(|| {
                Error::BadRequest(format!(
                    "Invalid `insert_line` parameter: {line}. It should be within the range [0, {}].",
                    lines.len()
                ))
            })?;
        lines.insert(at, text.trim_end_matches('\n'));
        let mut updated = lines.join("\n");
        if !updated.ends_with('\n') {
            updated.push('\n');
        }
        let (row, secrets, _) = self.store_edit(c, t, &res, &cur, &updated).await?;
        Ok(NoteCommandRes {
            output: format!(
                "The file {} has been edited.{}",
                t.shown,
                redaction_note(secrets)
            ),
            sha256: Some(row.sha256),
        })
    }

    /// Stores an edited file's new text as an `edit` version (scrubbed, size-checked); an
    /// edit that changes nothing stores nothing. Returns the row, how many secrets were
    /// redacted and the text stored.
    async fn store_edit(
        &self,
        c: &Caller,
        t: &Target,
        res: &Resolved,
        cur: &Current,
        updated: &str,
    ) -> Result<(NoteRow, usize, String)> {
        check_size(updated.len(), &t.shown)?;
        let (stored, secrets) = scrub(updated);
        check_size(stored.len(), &t.shown)?;
        if sha256_hex(&stored) == cur.sha {
            return Ok((cur.row.clone(), secrets, stored));
        }
        let row = self
            .commit(
                &t.scope,
                &t.rel,
                &t.shown,
                res,
                Some(cur.row.id.clone()),
                NoteAction::Edit,
                &stored,
                &c.author(),
            )
            .await?;
        Ok((row, secrets, stored))
    }

    async fn remove(
        &self,
        c: &Caller,
        t: &Target,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        if t.rel.is_root() {
            return Err(Error::BadRequest(match &t.mount {
                None => format!("Cannot delete the {MEMORIES} directory itself"),
                Some(m) => format!("Cannot delete the mounted store {MEMORIES}/{m} itself"),
            }));
        }
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&t.scope, &t.shown).await?;
        let res = self.resolve(&t.scope, &t.rel, &t.shown)?;
        if res.is_dir() {
            if expected.is_some() {
                return Err(Error::BadRequest(format!(
                    "{} is a directory; expected_sha256 applies to one file",
                    t.shown
                )));
            }
            // Every note below goes (each keeps its versions), then the directories.
            let files = fsx::walk(&res.path)?;
            for rel in files.keys() {
                let mut comps = t.rel.components().to_vec();
                comps.extend(rel.split('/').map(str::to_owned));
                let rel = RelPath::from_checked(comps);
                let r = self.resolve(&t.scope, &rel, &t.shown)?;
                if let Some(cur) = self.current(&t.scope, &rel, &t.shown, &r).await? {
                    self.delete_file(&r, &cur, &c.author()).await?;
                }
            }
            fs_err::remove_dir_all(&res.path)
                .map_err(|e| Error::io("delete", res.path.clone(), e))?;
            if let Some(dir) = res.path.parent() {
                fsx::sync_dir(dir);
            }
            return Ok(NoteCommandRes {
                output: format!("Successfully deleted {}", t.shown),
                sha256: None,
            });
        }
        if !res.is_file() {
            return Err(Error::NotFound(format!(
                "The path {} does not exist",
                t.shown
            )));
        }
        let cur = self.existing(t, &res).await?;
        check_expected(&t.rel.text(), expected, Some(&cur), None)?;
        self.delete_file(&res, &cur, &c.author()).await?;
        Ok(NoteCommandRes {
            output: format!("Successfully deleted {}", t.shown),
            sha256: None,
        })
    }

    async fn rename_cmd(
        &self,
        c: &Caller,
        from: &Target,
        to: &Target,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        if from.rel.is_root() {
            return Err(Error::BadRequest(match &from.mount {
                None => format!("Cannot rename the {MEMORIES} directory itself"),
                Some(m) => format!("Cannot rename the mounted store {MEMORIES}/{m} itself"),
            }));
        }
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(&from.scope, &from.shown).await?;
        self.sync_scope(&to.scope, &to.shown).await?;
        let res = self.resolve(&from.scope, &from.rel, &from.shown)?;
        let to_res = self.resolve(&to.scope, &to.rel, &to.shown)?;
        if to.rel.is_root() || to_res.meta.is_some() {
            return Err(Error::Conflict {
                message: format!("The destination {} already exists", to.shown),
                current_sha256: None,
                rejected: None,
            });
        }
        if res.meta.is_none() {
            return Err(Error::NotFound(format!(
                "The path {} does not exist",
                from.shown
            )));
        }
        if from.scope != to.scope {
            return Err(Error::BadRequest(format!(
                "{} and {} are in different stores; `rename` moves inside one (create the note there and delete this one)",
                from.shown, to.shown
            )));
        }
        if to.rel.starts_with(&from.rel) {
            return Err(Error::BadRequest(format!(
                "{} lies inside {}; a note or directory cannot move into itself",
                to.shown, from.shown
            )));
        }
        let sha = if res.is_dir() {
            if expected.is_some() {
                return Err(Error::BadRequest(format!(
                    "{} is a directory; expected_sha256 applies to one file",
                    from.shown
                )));
            }
            // Every note below moves (each records its rename), then the emptied tree goes.
            let files = fsx::walk(&res.path)?;
            for rel in files.keys() {
                let tail: Vec<String> = rel.split('/').map(str::to_owned).collect();
                let mut a = from.rel.components().to_vec();
                a.extend(tail.iter().cloned());
                let mut b = to.rel.components().to_vec();
                b.extend(tail);
                let (a, b) = (RelPath::from_checked(a), RelPath::from_checked(b));
                self.rename_locked(c, &from.scope, (&a, &from.shown), (&b, &to.shown), None)
                    .await?;
            }
            remove_empty_tree(&res.path)?;
            if to_res.meta.is_none() {
                // An empty directory moves as itself.
                fsx::create_dirs(self.root(), &to_res.path, &to.shown)?;
            }
            None
        } else {
            let row = self
                .rename_locked(
                    c,
                    &from.scope,
                    (&from.rel, &from.shown),
                    (&to.rel, &to.shown),
                    expected,
                )
                .await?;
            Some(row.sha256)
        };
        Ok(NoteCommandRes {
            output: format!("Successfully renamed {} to {}", from.shown, to.shown),
            sha256: sha,
        })
    }

    async fn versions_text(&self, t: &Target) -> Result<NoteCommandRes> {
        let list = self.versions(&t.note_ref()).await?;
        let mut output = format!(
            "Versions of {} (note {}), newest first: version, when, change, by whom, sha256, size:",
            t.shown, list.id
        );
        for v in &list.versions {
            let size = match (&v.redacted_at, &v.redacted_by) {
                (Some(at), Some(by)) => format!("redacted {at} by {by}"),
                (Some(at), None) => format!("redacted {at}"),
                _ => human_size(v.bytes),
            };
            output.push_str(&format!(
                "\n{:>NUMBER_WIDTH$}\t{}\t{}\t{}\t{}\t{size}",
                v.version,
                v.at,
                v.action,
                v.author,
                &v.sha256[..v.sha256.len().min(12)]
            ));
        }
        Ok(NoteCommandRes {
            output,
            sha256: None,
        })
    }

    async fn version_text(&self, t: &Target, version: u64) -> Result<NoteCommandRes> {
        let doc = self
            .version(&NoteVersionReq {
                note: t.note_ref(),
                version,
                expected_sha256: None,
            })
            .await?;
        let v = &doc.version;
        let Some(content) = doc.content else {
            return Err(Error::NotFound(format!(
                "Version {version} of {} was redacted ({}{}); its content is gone, who made it and when are kept.",
                t.shown,
                v.redacted_at.as_deref().unwrap_or("at an unknown time"),
                v.redacted_by
                    .as_deref()
                    .map(|b| format!(" by {b}"))
                    .unwrap_or_default()
            )));
        };
        Ok(NoteCommandRes {
            output: format!(
                "Here's version {version} of {} ({} by {} at {}) with line numbers:\n{}",
                t.shown,
                v.action,
                v.author,
                v.at,
                number(&view_lines(&content), 1)
            ),
            sha256: Some(v.sha256.clone()),
        })
    }

    async fn redact_text(&self, c: &Caller, t: &Target, version: u64) -> Result<NoteCommandRes> {
        let v = self
            .redact(
                c,
                &NoteVersionReq {
                    note: t.note_ref(),
                    version,
                    expected_sha256: None,
                },
            )
            .await?;
        Ok(NoteCommandRes {
            output: format!(
                "Redacted version {} of {}: its content is gone for good; who made it ({}) and when ({}) are kept. The current file is unchanged.",
                v.version, t.shown, v.author, v.at
            ),
            sha256: None,
        })
    }
}

fn worst(a: NoteAccess, b: NoteAccess) -> NoteAccess {
    if a == NoteAccess::ReadOnly || b == NoteAccess::ReadOnly {
        NoteAccess::ReadOnly
    } else {
        NoteAccess::ReadWrite
    }
}

/// The first component of a listing path (`a` for `a/`, `a/b.md` and `a`).
fn top_name(rel: &str) -> &str {
    rel.split('/').next().unwrap_or(rel)
}

/// Removes a directory tree that holds no file any more (only directories).
fn remove_empty_tree(dir: &std::path::Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", dir, e))?;
        let path = entry.path();
        let m = std::fs::symlink_metadata(&path).map_err(|e| Error::io("inspect", &path, e))?;
        if m.is_dir() && !m.file_type().is_symlink() {
            remove_empty_tree(&path)?;
        } else {
            return Err(Error::BadRequest(format!(
                "{} is still there after its note moved; nothing else was removed",
                path.display()
            )));
        }
    }
    fs_err::remove_dir(dir).map_err(|e| Error::io("delete", dir, e))?;
    if let Some(parent) = dir.parent() {
        fsx::sync_dir(parent);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_like_the_reference() {
        assert_eq!(human_size(0), "0B");
        assert_eq!(human_size(512), "512B");
        assert_eq!(human_size(1024), "1K");
        assert_eq!(human_size(1536), "1.5K");
        assert_eq!(human_size(4096), "4K");
        assert_eq!(human_size(3 * 1024 * 1024), "3M");
    }

    #[test]
    fn line_helpers_follow_the_reference() {
        assert_eq!(view_lines("a\nb\n"), vec!["a", "b", ""]);
        assert_eq!(insert_lines("a\nb\n"), vec!["a", "b"]);
        assert!(insert_lines("").is_empty());
        assert_eq!(slice_end(-2, 5), 3);
        assert_eq!(slice_end(9, 5), 5);
        assert_eq!(occurrence_lines("aaa\nxaa", "aa"), vec![1, 1, 2]);
    }
}
