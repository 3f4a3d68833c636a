//! One capture pass: find every framework's session stores, read what changed since the
//! last pass, scrub, store, and save the cursors. Nothing unscrubbed is ever written.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_core::api::{CaptureReport, FrameworkCapture, SkipCount};
use cairn_store::Store;

use crate::project::ProjectResolver;
use crate::read::{FileRead, read_lines, read_sqlite, read_whole};
use crate::spec::{Env, FrameworkSpec, Reader};

/// How deep below a root discovery looks.
const MAX_DEPTH: usize = 8;
/// The environment variable set on every model call Cairn makes through an agent CLI; a
/// hook that sees it does nothing, and capture skips what such a call left behind.
pub const INTERNAL_ENV: &str = "CAIRN_INTERNAL";

/// What a pass reads.
#[derive(Debug, Clone)]
pub struct PassOptions {
    /// The user's home and environment.
    pub env: Env,
    /// The frameworks to read (by name); empty means all.
    pub only: Vec<String>,
    /// Frameworks switched off in settings.
    pub disabled: Vec<String>,
    /// How long a session file must be quiet before its open turn is stored.
    pub settle: Duration,
    /// Working directories of Cairn's own model calls: sessions there are never captured.
    pub internal_dirs: Vec<PathBuf>,
}

/// Progress of a pass, for a progress bar.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Files or stores done.
    pub done: usize,
    /// Files or stores to do.
    pub total: usize,
    /// The framework being read.
    pub framework: String,
}

#[derive(Default)]
struct Tally {
    sessions: u64,
    added: u64,
    revised: u64,
    skipped: BTreeMap<String, u64>,
}

impl Tally {
    fn skip(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.skipped.entry(reason.to_owned()).or_default() += n;
        }
    }
}

/// Finds every session store of the enabled frameworks: (framework spec, path).
pub fn discover(opts: &PassOptions, warnings: &mut Vec<String>) -> Vec<(FrameworkSpec, PathBuf)> {
    let mut found = Vec::new();
    for spec in crate::frameworks::all() {
        if (!opts.only.is_empty() && !opts.only.iter().any(|n| n == spec.name))
            || opts.disabled.iter().any(|n| n == spec.name)
        {
            continue;
        }
        let mut seen = std::collections::HashSet::new();
        for root in (spec.roots)(&opts.env) {
            if root.is_file() {
                if seen.insert(root.clone()) {
                    found.push((spec, root));
                }
                continue;
            }
            if !root.is_dir() {
                continue;
            }
            let mut files = Vec::new();
            walk(&root, &root, 0, &spec, &mut files, warnings);
            files.sort();
            for f in files {
                if seen.insert(f.clone()) {
                    found.push((spec, f));
                }
            }
        }
    }
    prefer_cursor_store(&mut found);
    found
}

/// Cursor keeps some sessions twice: an agent transcript (JSONL) and the chat's `store.db`,
/// which has the tool outputs, model and working directory too. Read only the store then.
fn prefer_cursor_store(found: &mut Vec<(FrameworkSpec, PathBuf)>) {
    let stores: std::collections::HashSet<String> = found
        .iter()
        .filter(|(s, p)| s.name == "cursor" && p.file_name().is_some_and(|n| n == "store.db"))
        .filter_map(|(_, p)| {
            p.parent()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .collect();
    if stores.is_empty() {
        return;
    }
    found.retain(|(s, p)| {
        !(s.name == "cursor"
            && p.extension().is_some_and(|e| e == "jsonl")
            && p.file_stem()
                .is_some_and(|stem| stores.contains(stem.to_string_lossy().as_ref())))
    });
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    spec: &FrameworkSpec,
    out: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) {
    let entries = match fs_err::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            if warnings.len() < 20 {
                warnings.push(format!("cannot read folder: {e}"));
            }
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // Links are not followed: no loops, no escaping the store.
        if kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            if depth < MAX_DEPTH {
                walk(root, &path, depth + 1, spec, out, warnings);
            }
        } else if kind.is_file()
            && let Ok(rel) = path.strip_prefix(root)
            && (spec.matches)(rel)
        {
            out.push(path);
        }
    }
}

/// Runs one pass over every enabled framework. `progress` is called after each file.
pub async fn run(
    store: &Store,
    opts: &PassOptions,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<CaptureReport, cairn_store::Error> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut warnings = Vec::new();
    let env = opts.clone();
    let files = tokio::task::spawn_blocking(move || {
        let mut w = Vec::new();
        let f = discover(&env, &mut w);
        (f, w)
    })
    .await
    .map_err(|e| cairn_store::Error::Io(std::io::Error::other(e.to_string())))?;
    let (files, discover_warnings) = files;
    warnings.extend(discover_warnings);
    let total = files.len();
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut projects = ProjectResolver::default();
    let scrubber = crate::scrub::scrubber();
    let mut secrets = 0u64;
    for (done, (spec, path)) in files.into_iter().enumerate() {
        let tally = tallies.entry(spec.name).or_default();
        let key = path.display().to_string();
        let prev = store.cursor(spec.name, &key).await?;
        let settle = opts.settle;
        let read_path = path.clone();
        let result = tokio::task::spawn_blocking(move || -> std::io::Result<FileRead> {
            match spec.reader {
                Reader::Lines(make) => {
                    read_lines(spec.name, make, &read_path, prev.as_ref(), settle)
                }
                Reader::Sqlite(read) => read_sqlite(spec.name, read, &read_path, prev.as_ref()),
                Reader::WholeFile(parse) => read_whole(spec.name, parse, &read_path, prev.as_ref()),
            }
        })
        .await
        .map_err(|e| cairn_store::Error::Io(std::io::Error::other(e.to_string())))?;
        let read = match result {
            Ok(r) => r,
            Err(e) => {
                let reason = match e.kind() {
                    std::io::ErrorKind::NotFound => "file vanished",
                    std::io::ErrorKind::PermissionDenied => "permission denied",
                    _ => "unreadable store",
                };
                tally.skip(reason, 1);
                if warnings.len() < 20 {
                    warnings.push(format!("{}: {e}", path.display()));
                }
                progress(Progress {
                    done: done + 1,
                    total,
                    framework: spec.name.to_owned(),
                });
                continue;
            }
        };
        tally.skip("malformed or unknown lines", read.skipped);
        for w in read.warnings {
            if warnings.len() < 20 {
                warnings.push(w);
            }
        }
        if read.changed {
            tally.sessions += 1;
        }
        let fallback = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map(chrono::DateTime::<chrono::Utc>::from)
            .unwrap_or_else(|_| chrono::Utc::now());
        let mut batch = Vec::with_capacity(read.turns.len());
        for turn in &read.turns {
            if let Some(cwd) = &turn.cwd
                && opts
                    .internal_dirs
                    .iter()
                    .any(|d| Path::new(cwd).starts_with(d))
            {
                tally.skip("Cairn's own model calls", 1);
                continue;
            }
            let project = turn.cwd.as_deref().map(|c| projects.identify(c));
            let (rec, n) =
                crate::record::to_record(spec.name, turn, project, &key, fallback, scrubber);
            secrets += n;
            batch.push(rec);
        }
        if !batch.is_empty() {
            let report = store.append_records(&batch).await?;
            tally.added += report.added;
            tally.revised += report.revised;
        }
        if !read.changed && batch.is_empty() {
            progress(Progress {
                done: done + 1,
                total,
                framework: spec.name.to_owned(),
            });
            continue;
        }
        // A parser's saved state may hold an open turn's text: it is scrubbed like a record.
        let mut cursor = read.cursor;
        if let Some(state) = cursor.state.as_mut() {
            scrubber.scrub_json(state);
        }
        store.save_cursor(&cursor).await?;
        progress(Progress {
            done: done + 1,
            total,
            framework: spec.name.to_owned(),
        });
    }
    let frameworks = tallies
        .into_iter()
        .map(|(name, t)| FrameworkCapture {
            framework: name.to_owned(),
            sessions: t.sessions,
            added: t.added,
            revised: t.revised,
            skipped: t
                .skipped
                .into_iter()
                .map(|(reason, count)| SkipCount { reason, count })
                .collect(),
        })
        .collect();
    Ok(CaptureReport {
        started_at,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        frameworks,
        warnings,
        secrets_redacted: secrets,
    })
}

/// The existing folders to watch for changes: every enabled framework's roots (for a root
/// that is a file, its folder).
pub fn watch_roots(opts: &PassOptions) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for spec in crate::frameworks::all() {
        if opts.disabled.iter().any(|n| n == spec.name) {
            continue;
        }
        for root in (spec.roots)(&opts.env) {
            let dir = if root.is_file() {
                root.parent().map(Path::to_path_buf)
            } else {
                Some(root)
            };
            if let Some(d) = dir.filter(|d| d.is_dir())
                && !out.iter().any(|o| d.starts_with(o))
            {
                out.retain(|o| !o.starts_with(&d));
                out.push(d);
            }
        }
    }
    out
}
