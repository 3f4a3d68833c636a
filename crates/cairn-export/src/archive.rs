//! Export and import (`export_run`, `import_run`): everything remembered written to a folder
//! in open formats, and read back into another Cairn with nothing lost or duplicated.
//!
//! The folder:
//!
//! ```text
//! manifest.json                      format, version, Cairn's version, when, the filter,
//!                                    counts, and every other file with its sha256 and size
//! records/<framework>/<session>.jsonl   every stored revision of every record, one a line,
//!                                    whole (ids, revisions, times, content, chunks)
//! item-events.jsonl                  the item log, one event a line, each with the item's
//!                                    whole state
//! relations.jsonl                   the relations between the exported items
//! items/<id>.md                      each item's current state as Markdown (front matter:
//!                                    id, kind, title, project, dates, importance, sources,
//!                                    status), for people; the events are what import reads
//! notes.jsonl                        every note's metadata (deleted ones too)
//! note-versions.jsonl                every note's versions (redacted ones stay redacted)
//! notes/user/<path>.md               each live note: front matter (id, scope, project,
//! notes/projects/<dir>/<path>.md     path, title, versions, updated), then its content
//! ```
//!
//! An export is written into a hidden temporary folder with a random name next to the target
//! and renamed into place when whole; a non-empty target, or a target that is a link, is
//! refused. It is private: its folders are 0700 and its files 0600 (on Unix), each created
//! exclusively and never through a link ([`cairn_text::fsx`]). The store holds text scrubbed
//! of secrets already (capture and notes scrub before anything is written), so nothing is
//! scrubbed again.
//!
//! An import checks everything first — the manifest, every file's sha256 and every line and
//! front matter — and refuses the whole import, naming the file and line, when anything is
//! malformed; only then does it store (ids kept; what is stored already is skipped as a
//! duplicate, or kept and reported as a conflict when it differs). Every file it reads must
//! be a regular file inside the export (links, FIFOs and devices are refused, never followed
//! or opened for reading), at most [`MAX_IMPORT_FILE`] bytes (the manifest at most
//! [`MAX_MANIFEST`]), and no larger than the manifest says. Records go into the logs and
//! then the keyword and vector indexes as captured ones do; notes get their files.
use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cairn_core::api::{ExportReport, ExportReq, ImportCounts, ImportReport, ImportReq};
use cairn_notes::Notes;
use cairn_store::{
    ExportFilter, Imported, ItemEventRow, NoteMetaRow, NoteVersionExport, RecordRow, RelationRow,
    Store,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The manifest's `format`.
const FORMAT: &str = "cairn-export";
/// The manifest's `version` this Cairn writes and reads.
const VERSION: u32 = 1;
const MANIFEST: &str = "manifest.json";
const ITEM_EVENTS: &str = "item-events.jsonl";
const NOTES: &str = "notes.jsonl";
const RELATIONS: &str = "relations.jsonl";
const NOTE_VERSIONS: &str = "note-versions.jsonl";
/// Records stored per transaction on import.
const BATCH: usize = 500;
/// Conflicts named in a report.
const MAX_NAMED: usize = 100;
/// The largest file an import reads (a records file of a very large export is far smaller).
pub const MAX_IMPORT_FILE: u64 = 1 << 30;
/// The largest manifest an import reads.
pub const MAX_MANIFEST: u64 = 64 << 20;
/// The mode of an export's folders (Unix).
const DIR_MODE: u32 = 0o700;
/// The mode of an export's files (Unix).
const FILE_MODE: u32 = 0o600;

/// One file of an export, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    sha256: String,
    bytes: u64,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    format: String,
    version: u32,
    cairn_version: String,
    exported_at: String,
    project: Option<String>,
    since: Option<String>,
    counts: BTreeMap<String, u64>,
    files: BTreeMap<String, FileEntry>,
}

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Failed(format!("cannot {what} {}: {e}", path.display()))
}

/// Removes an unfinished export (a failure is logged: the export failed already).
fn discard(tmp: &Path) {
    if let Err(e) = fs_err::remove_dir_all(tmp) {
        tracing::warn!(error = %e, "could not remove an unfinished export");
    }
}

fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A file name for any text: itself when it is plain, else its plain part and a hash.
fn file_stem(raw: &str) -> String {
    let plain: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if plain == raw && !raw.starts_with('.') && !raw.is_empty() {
        plain
    } else {
        let plain = plain.trim_start_matches('.');
        format!("{plain}-{}", &sha_hex(raw.as_bytes())[..8])
    }
}

/// Where a live note's Markdown file goes in an export.
fn note_file(meta: &NoteMetaRow) -> String {
    let scope = match &meta.project {
        Some(p) if meta.scope == "project" => {
            format!("notes/projects/{}", cairn_notes::project_dir_name(p))
        }
        _ => "notes/user".to_owned(),
    };
    let path = if meta.path.ends_with(".md") {
        meta.path.clone()
    } else {
        format!("{}.md", meta.path)
    };
    format!("{scope}/{path}")
}

/// Front matter: `key: <JSON value>` lines (JSON values are YAML too).
fn front_matter(fields: &[(&str, serde_json::Value)], body: &str) -> String {
    let mut out = String::from("---\n");
    for (k, v) in fields {
        out.push_str(k);
        out.push_str(": ");
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out.push_str("---\n");
    out.push_str(body);
    out
}

/// Splits a Markdown file into its front matter and body (the exact text after the
/// closing `---` line).
fn parse_front_matter(
    file: &str,
    text: &str,
) -> Result<(BTreeMap<String, serde_json::Value>, String)> {
    let bad = |line: usize, why: String| {
        Error::Refused(format!("{file} line {line}: {why}; nothing was imported"))
    };
    let Some(rest) = text.strip_prefix("---\n") else {
        return Err(bad(
            1,
            "no front matter (the file must start with ---)".into(),
        ));
    };
    let mut fields = BTreeMap::new();
    let mut offset = 4;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        offset += line.len();
        let l = line.trim_end_matches('\n');
        if l == "---" {
            return Ok((fields, text[offset..].to_owned()));
        }
        let Some((k, v)) = l.split_once(": ") else {
            return Err(bad(i + 2, format!("{l:?} is not `key: value`")));
        };
        let v: serde_json::Value = serde_json::from_str(v)
            .map_err(|e| bad(i + 2, format!("the value of {k} is not JSON: {e}")))?;
        fields.insert(k.to_owned(), v);
    }
    Err(bad(
        1,
        "the front matter is not closed by a --- line".into(),
    ))
}

/// Writes files into one new folder of its own (0700) and remembers each one's sha256 and
/// size. Every folder and file in it is new: created exclusively, never through a link.
struct Writer {
    root: PathBuf,
    files: BTreeMap<String, FileEntry>,
    open: HashMap<String, std::io::BufWriter<fs_err::File>>,
}

impl Writer {
    fn create_parent(&self, rel: &str) -> Result<PathBuf> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            cairn_text::fsx::create_dirs(parent, &self.root, DIR_MODE).map_err(Error::from)?;
        }
        Ok(path)
    }

    /// A new file (0600) at `rel`.
    fn create(&self, rel: &str) -> Result<fs_err::File> {
        let path = self.create_parent(rel)?;
        cairn_text::fsx::create_new(&path, FILE_MODE).map_err(Error::from)
    }

    fn whole(&mut self, rel: &str, content: &[u8]) -> Result<()> {
        let mut f = self.create(rel)?;
        f.write_all(content)
            .map_err(|e| io_err("write", &self.root.join(rel), e))?;
        self.files.insert(
            rel.to_owned(),
            FileEntry {
                sha256: sha_hex(content),
                bytes: content.len() as u64,
            },
        );
        Ok(())
    }

    fn line<T: Serialize>(&mut self, rel: &str, row: &T) -> Result<()> {
        if !self.open.contains_key(rel) {
            let f = self.create(rel)?;
            self.open.insert(rel.to_owned(), std::io::BufWriter::new(f));
        }
        let mut text = serde_json::to_string(row).map_err(|e| Error::Failed(e.to_string()))?;
        text.push('\n');
        if let Some(w) = self.open.get_mut(rel) {
            w.write_all(text.as_bytes())
                .map_err(|e| io_err("write", &self.root.join(rel), e))?;
        }
        Ok(())
    }

    /// Closes the line files and hashes them.
    fn finish_lines(&mut self) -> Result<()> {
        for (rel, mut w) in std::mem::take(&mut self.open) {
            let path = self.root.join(&rel);
            w.flush().map_err(|e| io_err("write", &path, e))?;
            drop(w);
            let bytes =
                cairn_text::fsx::read_regular(&path, &self.root, u64::MAX).map_err(Error::from)?;
            self.files.insert(
                rel,
                FileEntry {
                    sha256: sha_hex(&bytes),
                    bytes: bytes.len() as u64,
                },
            );
        }
        Ok(())
    }
}

fn absolute(dir: &str) -> Result<PathBuf> {
    let p = PathBuf::from(dir);
    if dir.trim().is_empty() || !p.is_absolute() {
        return Err(Error::Refused(format!(
            "the folder must be an absolute path, not {dir:?}"
        )));
    }
    Ok(p)
}

fn item_markdown(item: &serde_json::Value, created: &str, updated: &str) -> String {
    let get = |k: &str| item.get(k).cloned().unwrap_or(serde_json::Value::Null);
    let status = if item.get("archived").and_then(serde_json::Value::as_bool) == Some(true) {
        "archived"
    } else if item.get("superseded_by").is_some_and(|v| !v.is_null()) {
        "superseded"
    } else {
        "active"
    };
    let fields = [
        ("id", get("id")),
        ("kind", get("kind")),
        ("title", get("title")),
        ("project", get("project")),
        ("created", created.into()),
        ("updated", updated.into()),
        ("said_at", get("said_at")),
        ("happened_at", get("happened_at")),
        ("ended_at", get("ended_at")),
        ("importance", get("importance")),
        ("certainty", get("certainty")),
        ("sources", get("sources")),
        ("status", status.into()),
        ("superseded_by", get("superseded_by")),
        ("cues", get("cues")),
        ("concepts", get("concepts")),
    ];
    let text = |k: &str| {
        item.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let body = format!("{}\n\n{}\n", text("summary"), text("body"));
    front_matter(&fields, &body)
}

/// Everything an import read and checked, before anything is stored.
#[derive(Default)]
struct Parsed {
    records: Vec<RecordRow>,
    events: Vec<ItemEventRow>,
    relations: Vec<RelationRow>,
    notes: Vec<NoteMetaRow>,
    versions: HashMap<String, Vec<NoteVersionExport>>,
    contents: HashMap<String, String>,
    files: u64,
}

fn jsonl<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row = serde_json::from_str(line).map_err(|e| {
            Error::Refused(format!(
                "{file} line {}: not a valid row: {e}; nothing was imported",
                i + 1
            ))
        })?;
        out.push(row);
    }
    Ok(out)
}

/// Reads and checks a whole export (see the module's doc).
fn read_export(dir: &Path) -> Result<Parsed> {
    let refuse = |m: String| Error::Refused(format!("{m}; nothing was imported"));
    let mpath = dir.join(MANIFEST);
    let bytes = cairn_text::fsx::read_regular(&mpath, dir, MAX_MANIFEST).map_err(|e| {
        refuse(format!(
            "{} is not a Cairn export: cannot read its {MANIFEST} ({e})",
            dir.display()
        ))
    })?;
    let text =
        String::from_utf8(bytes).map_err(|_| refuse(format!("{MANIFEST}: not UTF-8 text")))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| refuse(format!("{MANIFEST} is malformed: {e}")))?;
    if manifest.format != FORMAT {
        return Err(refuse(format!(
            "{MANIFEST}: format {:?} is not {FORMAT:?}",
            manifest.format
        )));
    }
    if manifest.version != VERSION {
        return Err(refuse(format!(
            "{MANIFEST}: format version {} is not one this Cairn reads ({VERSION})",
            manifest.version
        )));
    }
    let mut parsed = Parsed::default();
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    for (rel, entry) in &manifest.files {
        if rel
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
            || rel.starts_with('/')
        {
            return Err(refuse(format!(
                "{MANIFEST} lists a file outside the export: {rel:?}"
            )));
        }
        if entry.bytes > MAX_IMPORT_FILE {
            return Err(refuse(format!(
                "{rel}: the manifest says it is {} bytes; Cairn imports files up to {MAX_IMPORT_FILE} bytes",
                entry.bytes
            )));
        }
        let path = dir.join(rel);
        // Never more than the manifest says (and the limit): a larger file is refused
        // without being read whole.
        let bytes = cairn_text::fsx::read_regular(&path, dir, entry.bytes).map_err(|e| {
            refuse(match e.kind() {
                cairn_text::fsx::FsErrorKind::TooLarge { .. } => format!(
                    "{rel}: it is larger than the {} bytes the manifest says (the file was changed or damaged)",
                    entry.bytes
                ),
                _ if e.path() == path && e.is_refusal() => format!("{rel}: it {}", e.reason()),
                _ if e.path() == path => format!("{rel}: {}", e.reason()),
                _ => format!("{rel}: {e}"),
            })
        })?;
        if sha_hex(&bytes) != entry.sha256 || bytes.len() as u64 != entry.bytes {
            return Err(refuse(format!(
                "{rel}: its sha256 does not match the manifest (the file was changed or damaged)"
            )));
        }
        let text =
            String::from_utf8(bytes).map_err(|_| refuse(format!("{rel}: not UTF-8 text")))?;
        texts.insert(rel.clone(), text);
        parsed.files += 1;
    }
    for (rel, text) in &texts {
        if rel.starts_with("records/") && rel.ends_with(".jsonl") {
            parsed.records.extend(jsonl::<RecordRow>(rel, text)?);
        } else if rel == ITEM_EVENTS {
            let rows = jsonl::<ItemEventRow>(rel, text)?;
            for (i, r) in rows.iter().enumerate() {
                serde_json::from_value::<cairn_core::Item>(r.state.clone()).map_err(|e| {
                    refuse(format!(
                        "{rel} line {}: the item's state is malformed: {e}",
                        i + 1
                    ))
                })?;
            }
            parsed.events = rows;
        } else if rel == RELATIONS {
            parsed.relations = jsonl(rel, text)?;
        } else if rel == NOTES {
            parsed.notes = jsonl(rel, text)?;
        } else if rel == NOTE_VERSIONS {
            for v in jsonl::<NoteVersionExport>(rel, text)? {
                parsed
                    .versions
                    .entry(v.note_id.clone())
                    .or_default()
                    .push(v);
            }
        } else if rel.starts_with("items/") {
            let (fields, _) = parse_front_matter(rel, text)?;
            if !fields.get("id").is_some_and(serde_json::Value::is_string) {
                return Err(refuse(format!("{rel} line 1: the front matter has no id")));
            }
        }
    }
    for meta in &parsed.notes {
        if meta.deleted_at.is_some() {
            continue;
        }
        let rel = note_file(meta);
        let text = texts.get(&rel).ok_or_else(|| {
            refuse(format!(
                "note {} is live but its file {rel} is not in the export",
                meta.id
            ))
        })?;
        let (fields, body) = parse_front_matter(&rel, text)?;
        if fields.get("id").and_then(|v| v.as_str()) != Some(meta.id.as_str()) {
            return Err(refuse(format!("{rel} line 2: its id is not {}", meta.id)));
        }
        if sha_hex(body.as_bytes()) != meta.sha256 {
            return Err(refuse(format!(
                "{rel}: its content does not match the note's sha256 in {NOTES}"
            )));
        }
        parsed.contents.insert(meta.id.clone(), body);
    }
    Ok(parsed)
}

/// Counts what storing one row did; a conflict is named too (the first [`MAX_NAMED`]), by
/// what `name` says.
fn tally(
    counts: &mut ImportCounts,
    conflicts: &mut Vec<String>,
    what: Imported,
    name: impl FnOnce() -> String,
) {
    match what {
        Imported::Added => counts.added += 1,
        Imported::Duplicate => counts.duplicates += 1,
        Imported::Conflict => {
            counts.conflicts += 1;
            if conflicts.len() < MAX_NAMED {
                conflicts.push(name());
            }
        }
    }
}

/// Export and import over one store and its notes.
pub struct Archive<'a> {
    /// The logs: records, the item log, relations, notes' metadata and versions.
    pub store: &'a Store,
    /// The notes: files edited outside Cairn are recorded before an export; an import writes
    /// the notes' files.
    pub notes: &'a Notes,
    /// Told how a long export or import goes: what it is doing, and the fraction done when
    /// known.
    pub progress: &'a (dyn Fn(String, Option<f32>) + Send + Sync),
}

impl std::fmt::Debug for Archive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive").finish_non_exhaustive()
    }
}

impl Archive<'_> {
    /// Exports into `req.dir` (`export_run`): a new or empty folder, filled through a hidden
    /// temporary folder beside it and renamed into place when whole.
    pub async fn export(&self, req: &ExportReq) -> Result<ExportReport> {
        let started = Instant::now();
        let dir = absolute(&req.dir)?;
        // The folder named may not be a link: the export would land elsewhere.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Refused(format!(
                "{} is a symbolic link; export into a plain folder (Cairn does not write through links)",
                dir.display()
            )));
        }
        if let Ok(mut entries) = fs_err::read_dir(&dir) {
            if entries.next().is_some() {
                return Err(Error::Conflict(format!(
                    "{} is not empty: export into a new or empty folder",
                    dir.display()
                )));
            }
        } else if dir.exists() {
            return Err(Error::Refused(format!(
                "{} exists and is not a folder",
                dir.display()
            )));
        }
        let since = req
            .since
            .as_deref()
            .map(|s| cairn_core::api::parse_date(s, false).map_err(Error::Refused))
            .transpose()?;
        let filter = ExportFilter {
            project: req.project.clone().filter(|p| !p.is_empty()),
            since,
        };
        let parent = dir
            .parent()
            .ok_or_else(|| Error::Refused(format!("{} has no parent folder", dir.display())))?;
        // The folder the export is named in is the user's choice, links above it included.
        if !parent.is_dir() {
            fs_err::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "export".into());
        let tmp = parent.join(format!(
            ".{name}.cairn-export-{}",
            cairn_text::fsx::random_hex()
        ));
        // New, private, and never a planted link: creating it fails if the name exists.
        cairn_text::fsx::create_dir_new(&tmp, DIR_MODE).map_err(Error::from)?;
        let mut w = Writer {
            root: tmp.clone(),
            files: BTreeMap::new(),
            open: HashMap::new(),
        };
        let res = self.write_export(&mut w, &filter, &dir).await;
        let mut report = match res {
            Ok(r) => r,
            Err(e) => {
                drop(w);
                discard(&tmp);
                return Err(e);
            }
        };
        // An empty target folder gives way to the finished export (a link put there since
        // is refused, and a rename would replace it, never write through it).
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            discard(&tmp);
            return Err(Error::Refused(format!(
                "{} is a symbolic link; export into a plain folder (Cairn does not write through links)",
                dir.display()
            )));
        }
        if dir.exists()
            && let Err(e) = fs_err::remove_dir(&dir)
        {
            discard(&tmp);
            return Err(io_err("replace the empty folder", &dir, e));
        }
        if let Err(e) = fs_err::rename(&tmp, &dir) {
            discard(&tmp);
            return Err(io_err("move the finished export to", &dir, e));
        }
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(report)
    }

    async fn write_export(
        &self,
        w: &mut Writer,
        filter: &ExportFilter,
        dir: &Path,
    ) -> Result<ExportReport> {
        let store = self.store;
        let mut report = ExportReport {
            dir: dir.display().to_string(),
            ..Default::default()
        };
        let total = store.counts().await?.records.max(1);
        // Records, a page at a time, into one file per session.
        let mut after = 0;
        let mut names: HashMap<(String, String), String> = HashMap::new();
        loop {
            let page = store.export_records_page(filter, after, 500).await?;
            let Some((last, _)) = page.last() else { break };
            after = *last;
            for (_, row) in &page {
                let key = (row.framework.clone(), row.session_id.clone());
                let rel = names
                    .entry(key)
                    .or_insert_with(|| {
                        format!(
                            "records/{}/{}.jsonl",
                            file_stem(&row.framework),
                            file_stem(&row.session_id)
                        )
                    })
                    .clone();
                w.line(&rel, row)?;
                report.records += 1;
            }
            (self.progress)(
                format!("exporting records ({} written)", report.records),
                Some((report.records as f32 / total as f32).min(1.0) * 0.8),
            );
        }
        // The item log, and each item's latest state as Markdown.
        let events = store.export_item_events(filter).await?;
        let mut latest: BTreeMap<String, (String, String, serde_json::Value)> = BTreeMap::new();
        for e in &events {
            w.line(ITEM_EVENTS, e)?;
            report.item_events += 1;
            let entry = latest
                .entry(e.item_id.clone())
                .or_insert_with(|| (e.at.clone(), e.at.clone(), e.state.clone()));
            entry.1 = e.at.clone();
            entry.2 = e.state.clone();
        }
        for (id, (created, updated, state)) in &latest {
            let md = item_markdown(state, created, updated);
            w.whole(&format!("items/{}.md", file_stem(id)), md.as_bytes())?;
            report.items += 1;
        }
        let filtered = filter.project.is_some() || filter.since.is_some();
        let ids: std::collections::HashSet<String> = latest.keys().cloned().collect();
        for r in store.export_relations(filtered.then_some(&ids)).await? {
            w.line(RELATIONS, &r)?;
            report.relations += 1;
        }
        (self.progress)("exporting notes".into(), Some(0.9));
        // Notes: metadata and versions as lines, live ones as Markdown.
        // Files edited outside Cairn since the last look are recorded first, so the export
        // holds what the files hold.
        self.notes.all().await?;
        for (meta, versions) in store.export_notes(filter).await? {
            w.line(NOTES, &meta)?;
            report.notes += 1;
            let mut current = None;
            for v in &versions {
                w.line(NOTE_VERSIONS, v)?;
                report.note_versions += 1;
                if v.sha256 == meta.sha256 && v.content.is_some() {
                    current = v.content.clone();
                }
            }
            if meta.deleted_at.is_none() {
                let content = match current {
                    Some(c) => c,
                    None => {
                        let doc = self.notes.get_by_id(&meta.id).await?;
                        doc.content
                    }
                };
                let fields = [
                    ("id", meta.id.clone().into()),
                    ("scope", meta.scope.clone().into()),
                    ("project", meta.project.clone().into()),
                    ("path", meta.path.clone().into()),
                    ("title", meta.title.clone().into()),
                    ("versions", versions.len().into()),
                    ("updated", meta.updated_at.clone().into()),
                ];
                w.whole(
                    &note_file(&meta),
                    front_matter(&fields, &content).as_bytes(),
                )?;
            }
        }
        // Every kind has its file, even when empty, so an import can tell nothing from lost.
        for rel in [ITEM_EVENTS, RELATIONS, NOTES, NOTE_VERSIONS] {
            if !w.open.contains_key(rel) {
                w.whole(rel, b"")?;
            }
        }
        w.finish_lines()?;
        let mut counts = BTreeMap::new();
        counts.insert("records".to_owned(), report.records);
        counts.insert("item_events".to_owned(), report.item_events);
        counts.insert("items".to_owned(), report.items);
        counts.insert("relations".to_owned(), report.relations);
        counts.insert("notes".to_owned(), report.notes);
        counts.insert("note_versions".to_owned(), report.note_versions);
        let manifest = Manifest {
            format: FORMAT.into(),
            version: VERSION,
            cairn_version: env!("CARGO_PKG_VERSION").into(),
            exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            project: filter.project.clone(),
            since: filter
                .since
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            counts,
            files: w.files.clone(),
        };
        let text =
            serde_json::to_vec_pretty(&manifest).map_err(|e| Error::Failed(e.to_string()))?;
        let mpath = w.root.join(MANIFEST);
        let mut f = w.create(MANIFEST)?;
        f.write_all(&text)
            .and_then(|()| f.sync_all())
            .map_err(|e| io_err("write", &mpath, e))?;
        report.files = w.files.len() as u64 + 1;
        report.bytes = w.files.values().map(|f| f.bytes).sum::<u64>() + text.len() as u64;
        Ok(report)
    }

    /// Imports the export in `req.dir` (`import_run`): checked whole first, then stored (ids
    /// kept, what is stored already skipped). The records it adds are in the logs only: the
    /// caller brings its keyword and vector indexes up to date.
    pub async fn import(&self, req: &ImportReq) -> Result<ImportReport> {
        let started = Instant::now();
        let dir = absolute(&req.dir)?;
        (self.progress)("checking the export".into(), Some(0.0));
        let check = dir.clone();
        let parsed = tokio::task::spawn_blocking(move || read_export(&check))
            .await
            .map_err(|e| Error::Failed(format!("reading the export failed: {e}")))??;
        let store = self.store;
        let mut report = ImportReport {
            dir: dir.display().to_string(),
            files: parsed.files,
            ..Default::default()
        };
        let total = parsed.records.len().max(1);
        for (n, batch) in parsed.records.chunks(BATCH).enumerate() {
            let done = store.import_records(batch).await?;
            for (row, what) in batch.iter().zip(done) {
                tally(&mut report.records, &mut report.conflicts, what, || {
                    format!("record {} rev {}", row.id, row.rev)
                });
            }
            let so_far = ((n + 1) * BATCH).min(total);
            (self.progress)(
                format!("importing records ({so_far}/{})", parsed.records.len()),
                Some(so_far as f32 / total as f32 * 0.8),
            );
        }
        for batch in parsed.events.chunks(BATCH) {
            let done = store.import_item_events(batch).await?;
            for (row, what) in batch.iter().zip(done) {
                tally(&mut report.item_events, &mut report.conflicts, what, || {
                    format!("item event {} {} {}", row.item_id, row.kind, row.at)
                });
            }
        }
        for batch in parsed.relations.chunks(BATCH) {
            let done = store.import_relations(batch).await?;
            for (row, what) in batch.iter().zip(done) {
                tally(&mut report.relations, &mut report.conflicts, what, || {
                    format!("relation {} {} {}", row.from_id, row.kind, row.to_id)
                });
            }
        }
        (self.progress)("importing notes".into(), Some(0.9));
        let notes = self.notes;
        let empty = Vec::new();
        for meta in &parsed.notes {
            let versions = parsed.versions.get(&meta.id).unwrap_or(&empty);
            let content = parsed.contents.get(&meta.id).map(String::as_str);
            let what = notes.import(meta, versions, content).await?;
            tally(&mut report.notes, &mut report.conflicts, what, || {
                format!("note {} ({})", meta.id, meta.path)
            });
        }
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_round_trips_the_body_exactly() {
        let body = "# Title\n---\nnot: front matter\n\ntrailing";
        let text = front_matter(&[("id", "n_1".into()), ("title", "a: \"b\"".into())], body);
        let (fields, back) = parse_front_matter("x.md", &text).expect("parses");
        assert_eq!(back, body);
        assert_eq!(fields["title"], "a: \"b\"");
    }

    #[test]
    fn a_file_stem_is_plain_or_hashed() {
        assert_eq!(file_stem("abc-1.2"), "abc-1.2");
        let s = file_stem("../etc/passwd");
        assert!(!s.contains('/') && !s.starts_with('.'), "{s}");
        assert_ne!(file_stem("a/b"), file_stem("a_b"));
    }
}
