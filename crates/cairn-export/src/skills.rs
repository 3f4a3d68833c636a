//! Skills export (`skills_preview`, `skills_write`): a project's live procedures and
//! pitfalls written as the instruction file each framework reads, inside a section Cairn
//! marks, so it can update or remove it later and nothing else in the file ever changes.
//!
//! - `CLAUDE.md` (Claude Code), `AGENTS.md` (Codex, OpenCode), `GEMINI.md` (Gemini CLI),
//!   `QWEN.md` (Qwen Code): Cairn's section sits between the [`SKILLS_BEGIN`] and
//!   [`SKILLS_END`] lines, at the end of the file the first time and in place afterwards;
//!   the file's line endings are kept. Removing it gives back the bytes the file had
//!   without it (a file that did not end with a newline keeps the one added before the
//!   section; a file Cairn created and that holds nothing else is deleted).
//! - Cursor: a rule file of Cairn's own, `.cursor/rules/cairn-skills.mdc`, always applied.
//! - Only what the user or the agent stated goes in: a procedure or pitfall stated only by
//!   outside text (tool output, files read, fetched pages), or distilled before Cairn
//!   checked that, is kept out and listed in the preview's `withheld`.
//! - Writes are atomic ([`cairn_text::fsx::write_atomic`]: a temporary file with a random
//!   name, created exclusively, renamed over the target); a link at the file or at a folder
//!   below the project's folder is refused, never followed, and a file over [`MAX_FILE`]
//!   bytes is refused.
use std::path::{Path, PathBuf};

use cairn_core::api::{ItemView, SkillEntry, SkillsPreview, SkillsReq, item_view};
use cairn_store::Store;
use cairn_text::marks::{SKILLS_BEGIN, SKILLS_END};

use crate::{Error, Result};

/// The line that opens Cairn's section.
const BEGIN: &str = SKILLS_BEGIN;
/// The line that closes it.
const END: &str = SKILLS_END;
/// The largest instruction file Cairn edits.
pub const MAX_FILE: u64 = 1 << 20;
/// The most items read: the project's newest.
const MAX_ITEMS: usize = 2_000;
/// The most items of each kind in the section.
const MAX_PER_KIND: usize = 20;
/// The most characters of an item's body.
const BODY_CHARS: usize = 400;

/// The instruction file of a framework, relative to the project's folder.
fn file_of(framework: &str) -> Result<&'static str> {
    Ok(match framework {
        "claude-code" => "CLAUDE.md",
        "codex" | "opencode" => "AGENTS.md",
        "gemini-cli" => "GEMINI.md",
        "qwen-code" => "QWEN.md",
        "cursor" => ".cursor/rules/cairn-skills.mdc",
        other => {
            return Err(Error::Refused(format!(
                "skills export knows no instruction file for framework {other:?}; use claude-code, codex, opencode, gemini-cli, qwen-code or cursor"
            )));
        }
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn entry(i: &ItemView) -> SkillEntry {
    SkillEntry {
        id: i.id.clone(),
        kind: i.kind.clone(),
        title: i.title.clone(),
    }
}

/// The section for these items (procedures first), or `""` when there are none.
pub(crate) fn section(project: &str, items: &[ItemView]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{BEGIN}\n## What earlier sessions learned in this project (from Cairn)\n\n\
         Kept up to date by Cairn from this project's procedures and pitfalls ({project}). \
         Change them in Cairn: edits between these marks are replaced.\n"
    );
    for (kind, heading) in [("procedure", "How we do things"), ("pitfall", "Pitfalls")] {
        let of_kind: Vec<&ItemView> = items.iter().filter(|i| i.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        out.push_str(&format!("\n### {heading}\n\n"));
        for i in of_kind {
            out.push_str(&format!(
                "- **{}**: {}",
                one_line(&i.title),
                one_line(&i.summary)
            ));
            let body = one_line(&i.body);
            if !body.is_empty() && body != one_line(&i.summary) {
                out.push_str(&format!(
                    "\n  {}",
                    cairn_text::chunk::cut(&body, BODY_CHARS)
                ));
            }
            out.push('\n');
        }
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// The Cursor rule file around a section.
fn cursor_rule(section: &str) -> String {
    format!(
        "---\ndescription: What earlier sessions learned in this project (from Cairn)\nalwaysApply: true\n---\n{section}"
    )
}

/// Where Cairn's section lies in `text` (byte range, whole lines), if it has one.
fn find(text: &str) -> Result<Option<std::ops::Range<usize>>> {
    let mut start = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']).trim();
        if t == BEGIN {
            if start.is_some() {
                return Err(Error::Refused(
                    "the file holds Cairn's section twice; remove one by hand, then write again"
                        .into(),
                ));
            }
            start = Some(at);
        } else if t == END {
            let Some(s) = start else {
                return Err(Error::Refused(
                    "the file holds the end of Cairn's section without its beginning; fix it by hand, then write again".into(),
                ));
            };
            return Ok(Some(s..at + line.len()));
        }
        at += line.len();
    }
    match start {
        Some(_) => Err(Error::Refused(
            "the file holds the beginning of Cairn's section without its end; fix it by hand, then write again".into(),
        )),
        None => Ok(None),
    }
}

/// `section` with the file's line endings.
fn with_endings(section: &str, crlf: bool) -> String {
    if crlf {
        section.replace('\n', "\r\n")
    } else {
        section.to_owned()
    }
}

/// The file's text with Cairn's section set to `section` (`""`: taken out).
pub(crate) fn splice(text: &str, section: &str) -> Result<String> {
    let crlf = text.contains("\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let section = with_endings(section, crlf);
    match find(text)? {
        Some(range) if section.is_empty() => {
            // Take out the section and the one blank line Cairn put before it.
            let mut before = &text[..range.start];
            let after = &text[range.end..];
            if let Some(b) = before.strip_suffix(nl)
                && (b.is_empty() || b.ends_with(nl))
            {
                before = b;
            }
            Ok(format!("{before}{after}"))
        }
        Some(range) => Ok(format!(
            "{}{section}{}",
            &text[..range.start],
            &text[range.end..]
        )),
        None if section.is_empty() => Ok(text.to_owned()),
        None if text.is_empty() => Ok(section),
        None => {
            let mut out = text.to_owned();
            if !out.ends_with(nl) {
                out.push_str(nl);
            }
            out.push_str(nl);
            out.push_str(&section);
            Ok(out)
        }
    }
}

/// The instruction file's path, checked: the folder exists, nothing on the way is a link.
fn target(dir: &str, rel: &str) -> Result<PathBuf> {
    let dir = Path::new(dir);
    if !dir.is_absolute() {
        return Err(Error::Refused(format!(
            "the project folder {dir:?} is not an absolute path"
        )));
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| {
        Error::Refused(format!(
            "the project folder {} cannot be read: {e}",
            dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(Error::Refused(format!("{} is not a folder", dir.display())));
    }
    let path = dir.join(rel);
    let mut cur = dir.to_path_buf();
    for comp in Path::new(rel).components() {
        cur.push(comp);
        if let Ok(m) = std::fs::symlink_metadata(&cur)
            && m.file_type().is_symlink()
        {
            return Err(Error::Refused(format!(
                "{} is a symbolic link; Cairn does not write through links",
                cur.display()
            )));
        }
    }
    Ok(path)
}

/// The file's text (`None` when it does not exist), refusing what is not a text file Cairn
/// should edit. `dir` is the project's folder.
fn read_file(dir: &Path, path: &Path) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Failed(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
        Ok(m) if !m.is_file() => Err(Error::Refused(format!(
            "{} is not a plain file",
            path.display()
        ))),
        Ok(m) if m.len() > MAX_FILE => Err(Error::Refused(format!(
            "{} is {} bytes; Cairn edits instruction files up to 1 MiB",
            path.display(),
            m.len()
        ))),
        Ok(_) => {
            let bytes = cairn_text::fsx::read_regular(path, dir, MAX_FILE).map_err(Error::from)?;
            String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| Error::Refused(format!("{} is not UTF-8 text", path.display())))
        }
    }
}

/// Writes `text` to `path` atomically through [`cairn_text::fsx::write_atomic`]: a new file
/// with a random name beside it, never through a link, its mode set on the open file (the
/// replaced file's), renamed over it. `dir` is the project's folder: nothing below it may be
/// a link.
fn write_file(dir: &Path, path: &Path, text: &str) -> Result<()> {
    let options = cairn_text::fsx::WriteOptions::new(dir).create_dirs(0o777);
    cairn_text::fsx::write_atomic(path, text.as_bytes(), &options).map_err(Error::from)
}

/// The project's live procedures and pitfalls, most important first, and those kept
/// out: stated only by outside text (tool output, files read, fetched pages) or never
/// checked. Outside text never becomes an instruction to an agent.
async fn skill_items(store: &Store, project: &str) -> Result<(Vec<ItemView>, Vec<ItemView>)> {
    // The project's active items, the newest first.
    let mut items = store.items(false).await?;
    items.retain(|i| i.is_active() && i.project.as_deref() == Some(project));
    items.sort_by_key(|i| std::cmp::Reverse(i.said_at));
    items.truncate(MAX_ITEMS);
    let mut out = Vec::new();
    let (trusted, withheld): (Vec<ItemView>, Vec<ItemView>) = items
        .iter()
        .map(item_view)
        .filter(|i| i.kind == "procedure" || i.kind == "pitfall")
        .partition(|i| i.provenance == "user" || i.provenance == "agent");
    for kind in ["procedure", "pitfall"] {
        let mut of_kind: Vec<ItemView> =
            trusted.iter().filter(|i| i.kind == kind).cloned().collect();
        of_kind.sort_by(|a, b| {
            b.importance
                .cmp(&a.importance)
                .then(b.said_at.cmp(&a.said_at))
        });
        of_kind.truncate(MAX_PER_KIND);
        out.extend(of_kind);
    }
    Ok((out, withheld))
}

/// What Cairn would write, and the file now.
async fn skills_state(
    store: &Store,
    req: &SkillsReq,
) -> Result<(PathBuf, Option<String>, SkillsPreview)> {
    if req.project.trim().is_empty() {
        return Err(Error::Refused("skills export needs a project".into()));
    }
    let rel = file_of(&req.framework)?;
    let path = target(&req.dir, rel)?;
    let (items, withheld) = skill_items(store, &req.project).await?;
    let section = section(&req.project, &items);
    let existing = read_file(Path::new(&req.dir), &path)?;
    let current = match &existing {
        Some(text) => find(text)?.map(|r| text[r].replace("\r\n", "\n")),
        None => None,
    };
    let up_to_date = match &current {
        Some(c) => *c == section,
        None => section.is_empty(),
    };
    let preview = SkillsPreview {
        framework: req.framework.clone(),
        file: path.display().to_string(),
        exists: existing.is_some(),
        section,
        entries: items.iter().map(entry).collect(),
        withheld: withheld.iter().map(entry).collect(),
        current,
        up_to_date,
        action: None,
    };
    Ok((path, existing, preview))
}

/// What Cairn would write for `req` (`skills_preview`), and the file as it is now.
pub async fn preview(store: &Store, req: &SkillsReq) -> Result<SkillsPreview> {
    Ok(skills_state(store, req).await?.2)
}

/// Sets (or, with `req.remove`, removes) Cairn's section (`skills_write`); the rest of the
/// file is kept byte for byte.
pub async fn write(store: &Store, req: &SkillsReq) -> Result<SkillsPreview> {
    let (path, existing, mut preview) = skills_state(store, req).await?;
    let cursor = req.framework == "cursor";
    let wanted = if req.remove {
        String::new()
    } else {
        preview.section.clone()
    };
    let action = match (&existing, cursor) {
        // Cursor's rule file is Cairn's own.
        (Some(_), true) if wanted.is_empty() => {
            fs_err::remove_file(&path)
                .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", path.display())))?;
            "removed"
        }
        (None, _) if wanted.is_empty() => "absent",
        (Some(text), true) if *text == cursor_rule(&wanted) => "unchanged",
        (_, true) => {
            write_file(Path::new(&req.dir), &path, &cursor_rule(&wanted))?;
            if existing.is_some() {
                "updated"
            } else {
                "created"
            }
        }
        (None, false) => {
            write_file(Path::new(&req.dir), &path, &wanted)?;
            "created"
        }
        (Some(text), false) => {
            let had = find(text)?.is_some();
            let new = splice(text, &wanted)?;
            if new == *text {
                if wanted.is_empty() {
                    "absent"
                } else {
                    "unchanged"
                }
            } else if new.trim().is_empty() && wanted.is_empty() {
                // The file held only Cairn's section.
                fs_err::remove_file(&path)
                    .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", path.display())))?;
                "removed"
            } else {
                write_file(Path::new(&req.dir), &path, &new)?;
                match (had, wanted.is_empty()) {
                    (_, true) => "removed",
                    (true, false) => "updated",
                    (false, false) => "created",
                }
            }
        }
    };
    tracing::info!(file = %path.display(), action, "skills section");
    preview.action = Some(action.to_owned());
    preview.exists = path.exists();
    preview.current = if req.remove || preview.section.is_empty() {
        None
    } else {
        Some(preview.section.clone())
    };
    preview.up_to_date = !req.remove;
    Ok(preview)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: &str, title: &str) -> ItemView {
        let v = serde_json::json!({"id": format!("i_{title}"), "kind": kind, "title": title,
            "summary": format!("{title} summary."), "body": "Longer body.", "cues": [],
            "concepts": [], "importance": 3, "certainty": "stated", "project": "p",
            "sources": [], "happened_at": null, "said_at": null, "ended_at": null,
            "superseded_by": null, "archived": false, "provenance": "user"});
        serde_json::from_value(v).expect("an item view")
    }

    #[test]
    fn the_section_lists_procedures_then_pitfalls_between_the_marks() {
        let s = section(
            "p",
            &[item("pitfall", "Trap"), item("procedure", "Release")],
        );
        assert!(s.starts_with(BEGIN) && s.ends_with(&format!("{END}\n")));
        let (how, trap) = (s.find("**Release**").unwrap(), s.find("**Trap**").unwrap());
        assert!(how < trap, "{s}");
        assert!(s.contains("\n  Longer body.\n"), "{s}");
        assert_eq!(section("p", &[]), "");
    }

    #[test]
    fn splicing_keeps_every_other_byte_and_removing_gives_the_file_back() {
        let sec = section("p", &[item("procedure", "Release")]);
        for original in [
            "",
            "# Rules\r\n\r\nUse tabs.\r\n",
            "# Rules\n\nNo newline at end",
            "x\n",
        ] {
            let with = splice(original, &sec).unwrap();
            assert!(with.contains("**Release**"));
            assert!(with.starts_with(original.trim_end_matches(['\r', '\n'])));
            if original.contains("\r\n") {
                assert!(
                    !with.replace("\r\n", "").contains('\n'),
                    "CRLF kept: {with:?}"
                );
            }
            // Again: nothing changes; a new section replaces the old in place.
            assert_eq!(splice(&with, &sec).unwrap(), with);
            let other = section("p", &[item("pitfall", "Trap")]);
            let updated = splice(&with, &other).unwrap();
            assert!(updated.contains("**Trap**") && !updated.contains("**Release**"));
            let back = splice(&updated, "").unwrap();
            let expected = if original.ends_with('\n') || original.is_empty() {
                original.to_owned()
            } else {
                format!("{original}\n")
            };
            assert_eq!(back, expected, "{original:?}");
        }
        assert!(splice(&format!("{BEGIN}\nx\n"), "").is_err());
        assert!(splice(&format!("x\n{END}\n"), "").is_err());
    }
}
