//! The memory-tool commands agents send: `view`, `create`, `str_replace`, `insert`,
//! `delete`, `rename`.
use cairn_core::api::{NoteAccess, NoteCommandReq, NoteCommandRes, NoteScopeKind};
use cairn_store::{NoteAction, NoteRow};

use crate::error::{Error, Result};
use crate::fsx;
use crate::fsx::Resolved;
use crate::notes::{Caller, Current, Notes, check_expected, check_size, redaction_note, scrub};
use crate::path::{RelPath, Scope, parse_path};
use crate::text::{after_line, line_count, lines_word, match_lines, numbered, sha256_hex};

const WRITES: &[&str] = &["create", "str_replace", "insert", "delete", "rename"];

fn human_size(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n}B")
    } else if f < K * K {
        format!("{:.1}K", f / K)
    } else {
        format!("{:.1}M", f / K / K)
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn need<'a>(v: Option<&'a String>, command: &str, field: &str) -> Result<&'a str> {
    v.map(String::as_str)
        .ok_or_else(|| Error::BadRequest(format!("`{command}` needs `{field}`")))
}

impl Notes {
    /// Runs one memory-tool command. The caller's access may be lowered by `req.access`
    /// (never raised); versions record `c.author` (`req.author` when that is empty). The
    /// scope defaults to the project's when `req.project` is given, else the user's.
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
        let scope = Scope::new(kind, req.project.as_deref())?;
        let cmd = req.command.as_str();
        if cmd == "view" {
            let rel = parse_path(&req.path, true)?;
            return self.view(&scope, &rel, &req.path, req.view_range).await;
        }
        if !WRITES.contains(&cmd) {
            return Err(Error::BadRequest(format!(
                "unknown command {cmd:?}; use view, create, str_replace, insert, delete or rename"
            )));
        }
        let rel = parse_path(&req.path, false)?;
        let new_rel = if cmd == "rename" {
            let to = need(req.new_path.as_ref(), cmd, "new_path")?;
            Some(parse_path(to, false)?)
        } else {
            None
        };
        caller.require_write(&format!("`{cmd}` on {}", rel.text()))?;
        let expected = req.expected_sha256.as_deref();
        match cmd {
            "create" => {
                let text = need(req.file_text.as_ref(), cmd, "file_text")?;
                self.create(&caller, &scope, &rel, &req.path, text, expected)
                    .await
            }
            "str_replace" => {
                let old = need(req.old_str.as_ref(), cmd, "old_str")?;
                let new = req.new_str.as_deref().unwrap_or("");
                self.str_replace(&caller, &scope, &rel, &req.path, old, new, expected)
                    .await
            }
            "insert" => {
                let line = req
                    .insert_line
                    .ok_or_else(|| Error::BadRequest("`insert` needs `insert_line`".to_owned()))?;
                let text = need(req.insert_text.as_ref(), cmd, "insert_text")?;
                self.insert(&caller, &scope, &rel, &req.path, line, text, expected)
                    .await
            }
            "delete" => {
                self.remove(&caller, &scope, &rel, &req.path, expected)
                    .await
            }
            "rename" => {
                let to = new_rel.unwrap_or_else(|| rel.clone());
                let to_raw = req.new_path.as_deref().unwrap_or_default();
                let _guard = self.inner.lock.lock().await;
                let row = self
                    .rename_locked(&caller, &scope, (&rel, &req.path), (&to, to_raw), expected)
                    .await?;
                Ok(NoteCommandRes {
                    output: format!("Renamed {} to {}.", rel.text(), to.text()),
                    sha256: Some(row.sha256),
                })
            }
            _ => Err(Error::BadRequest(format!("unknown command {cmd:?}"))),
        }
    }

    async fn view(
        &self,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        range: Option<[i64; 2]>,
    ) -> Result<NoteCommandRes> {
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        let path = rel.text();
        if rel.is_root() || res.is_dir() {
            if range.is_some() {
                return Err(Error::BadRequest(format!(
                    "view_range applies to files; {} is a directory",
                    if rel.is_root() { "/" } else { &path }
                )));
            }
            let entries = if res.is_dir() {
                fsx::listing(&res.path, &path, 2)?
            } else {
                Vec::new()
            };
            if entries.is_empty() {
                let output = if rel.is_root() {
                    format!("{} are empty.", upper_first(&scope.describe()))
                } else {
                    format!("{path}/ is an empty directory.")
                };
                return Ok(NoteCommandRes {
                    output,
                    sha256: None,
                });
            }
            let mut output = format!(
                "Here are the files and directories up to 2 levels deep in {}:",
                if rel.is_root() {
                    format!("/ ({})", scope.describe())
                } else {
                    format!("{path}/")
                }
            );
            for e in entries {
                output.push_str(&format!("\n{:>7}\t{}", human_size(e.size), e.rel));
            }
            return Ok(NoteCommandRes {
                output,
                sha256: None,
            });
        }
        let cur = self.existing_file(scope, rel, raw, &res).await?;
        let n = line_count(&cur.content);
        let (start, end) = match range {
            None => (1, n),
            Some([s, e]) => {
                let bad = || {
                    Error::BadRequest(format!(
                        "view_range [{s}, {e}] is out of range for {path}, which has {}; use 1-based lines, end -1 for the end",
                        lines_word(n)
                    ))
                };
                let start = usize::try_from(s).map_err(|_| bad())?;
                let end = if e == -1 {
                    n
                } else {
                    usize::try_from(e).map_err(|_| bad())?
                };
                if start < 1 || start > n || end < start || end > n {
                    return Err(bad());
                }
                (start, end)
            }
        };
        let mut output = format!("Here's the content of {path} with line numbers:\n");
        if n == 0 {
            output.push_str("(the file is empty)");
        } else {
            output.push_str(&numbered(&cur.content, start, end));
        }
        Ok(NoteCommandRes {
            output,
            sha256: Some(cur.sha),
        })
    }

    async fn create(
        &self,
        c: &Caller,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        text: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let path = rel.text();
        check_size(text.len(), &path)?;
        let (stored, secrets) = scrub(text);
        check_size(stored.len(), &path)?;
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        if res.is_dir() {
            return Err(Error::BadRequest(format!(
                "{path} is a directory; `create` writes a file"
            )));
        }
        let cur = self.current(scope, rel, raw, &res).await?;
        check_expected(&path, expected, cur.as_ref(), Some(&stored))?;
        let lines = lines_word(line_count(&stored));
        let sha = sha256_hex(&stored);
        if let Some(cur) = &cur
            && cur.sha == sha
        {
            return Ok(NoteCommandRes {
                output: format!(
                    "No change: {path} already has this content ({lines}).{}",
                    redaction_note(secrets)
                ),
                sha256: Some(sha),
            });
        }
        let (id, action, verb) = match &cur {
            Some(cur) => (Some(cur.row.id.clone()), NoteAction::Edit, "Overwrote"),
            None => (None, NoteAction::Create, "Created"),
        };
        let row = self
            .commit(scope, rel, raw, &res, id, action, &stored, &c.author())
            .await?;
        Ok(NoteCommandRes {
            output: format!("{verb} {path} ({lines}).{}", redaction_note(secrets)),
            sha256: Some(row.sha256),
        })
    }

    #[allow(clippy::too_many_arguments, reason = "the command's own fields")]
    async fn str_replace(
        &self,
        c: &Caller,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        old: &str,
        new: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let path = rel.text();
        if old.is_empty() {
            return Err(Error::BadRequest(format!(
                "old_str is empty; give the exact text to replace in {path}"
            )));
        }
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        let cur = self.existing_file(scope, rel, raw, &res).await?;
        check_expected(&path, expected, Some(&cur), None)?;
        let lines = match_lines(&cur.content, old);
        match lines.len() {
            0 => {
                return Err(Error::BadRequest(format!(
                    "no match for old_str in {path}; view the file and copy the text exactly"
                )));
            }
            1 => {}
            n => {
                let at: Vec<String> = lines.iter().take(10).map(ToString::to_string).collect();
                return Err(Error::BadRequest(format!(
                    "{n} matches for old_str in {path} (lines {}); make old_str unique",
                    at.join(", ")
                )));
            }
        }
        let updated = cur.content.replacen(old, new, 1);
        let (row, secrets) = self
            .store_edit(c, scope, rel, raw, &res, &cur, &updated)
            .await?;
        Ok(NoteCommandRes {
            output: format!(
                "Replaced 1 occurrence in {path} (line {}).{}",
                lines[0],
                redaction_note(secrets)
            ),
            sha256: Some(row.sha256),
        })
    }

    #[allow(clippy::too_many_arguments, reason = "the command's own fields")]
    async fn insert(
        &self,
        c: &Caller,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        line: u64,
        text: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let path = rel.text();
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        let cur = self.existing_file(scope, rel, raw, &res).await?;
        check_expected(&path, expected, Some(&cur), None)?;
        let n = line_count(&cur.content);
        let at = usize::try_from(line)
            .ok()
            .and_then(|k| after_line(&cur.content, k))
            .ok_or_else(|| {
                Error::BadRequest(format!(
                    "insert_line {line} is beyond the end of {path}, which has {}; use 0 to {n}",
                    lines_word(n)
                ))
            })?;
        let (offset, newline_first) = at;
        let mut updated = String::with_capacity(cur.content.len() + text.len() + 2);
        updated.push_str(&cur.content[..offset]);
        if newline_first {
            updated.push('\n');
        }
        updated.push_str(text);
        if offset < cur.content.len() && !text.ends_with('\n') {
            updated.push('\n');
        }
        updated.push_str(&cur.content[offset..]);
        let (row, secrets) = self
            .store_edit(c, scope, rel, raw, &res, &cur, &updated)
            .await?;
        Ok(NoteCommandRes {
            output: format!(
                "Inserted {} after line {line} of {path}.{}",
                lines_word(line_count(text).max(1)),
                redaction_note(secrets)
            ),
            sha256: Some(row.sha256),
        })
    }

    /// Stores an edited file's new text as an `edit` version (scrubbed, size-checked); an
    /// edit that changes nothing stores nothing. Returns the row and how many secrets were
    /// redacted.
    #[allow(clippy::too_many_arguments, reason = "the command's own context")]
    async fn store_edit(
        &self,
        c: &Caller,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        res: &Resolved,
        cur: &Current,
        updated: &str,
    ) -> Result<(NoteRow, usize)> {
        let path = rel.text();
        check_size(updated.len(), &path)?;
        let (stored, secrets) = scrub(updated);
        check_size(stored.len(), &path)?;
        if sha256_hex(&stored) == cur.sha {
            return Ok((cur.row.clone(), secrets));
        }
        let row = self
            .commit(
                scope,
                rel,
                raw,
                res,
                Some(cur.row.id.clone()),
                NoteAction::Edit,
                &stored,
                &c.author(),
            )
            .await?;
        Ok((row, secrets))
    }

    async fn remove(
        &self,
        c: &Caller,
        scope: &Scope,
        rel: &RelPath,
        raw: &str,
        expected: Option<&str>,
    ) -> Result<NoteCommandRes> {
        let path = rel.text();
        let _guard = self.inner.lock.lock().await;
        self.sync_scope(scope, raw).await?;
        let res = self.resolve(scope, rel, raw)?;
        if res.is_dir() {
            let mut entries =
                std::fs::read_dir(&res.path).map_err(|e| Error::io("list", res.path.clone(), e))?;
            if entries.next().is_some() {
                return Err(Error::BadRequest(format!(
                    "{path}/ is a directory that is not empty; delete its notes first (only an empty directory can be deleted)"
                )));
            }
            std::fs::remove_dir(&res.path).map_err(|e| Error::io("delete", res.path.clone(), e))?;
            return Ok(NoteCommandRes {
                output: format!("Deleted the empty directory {path}/."),
                sha256: None,
            });
        }
        let cur = self.existing_file(scope, rel, raw, &res).await?;
        check_expected(&path, expected, Some(&cur), None)?;
        self.delete_file(&res, &cur, &c.author()).await?;
        Ok(NoteCommandRes {
            output: format!("Deleted {path}. Its versions are kept; restore one to bring it back."),
            sha256: None,
        })
    }
}
