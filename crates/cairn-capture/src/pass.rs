//! One capture pass: find every framework's session stores, read what changed since the
//! last pass, scrub, store, and save the cursors. Nothing unscrubbed is ever written.
//!
//! Memory stays bounded whatever the size of a store: a file is read in batches
//! ([`BatchLimits`]: a few thousand turns or a few MiB), and each batch is scrubbed, stored
//! and its cursor saved before the next one is read (the reader runs one batch ahead on a
//! blocking thread). A pass killed at any point resumes from the last saved cursor; a batch
//! stored but not yet followed by its cursor is read again and recognised by the store, so
//! nothing is lost or stored twice. Whole-file JSON stores are bounded by their size limit
//! ([`crate::read::MAX_WHOLE_FILE`]).
//!
//! Aider and SpecStory keep their histories inside each project, so after the other frameworks
//! the pass looks for them in the working folders of every session stored so far (from any
//! other framework) and in the folders listed in settings ([`PassOptions::aider_folders`],
//! [`PassOptions::specstory_folders`]). A history file that came with a cloned repository
//! (committed by someone else, unchanged here) is not the user's and is not captured, unless
//! it is in a folder of [`PassOptions::trusted_history_folders`]; the report names each one
//! ([`CaptureReport::cloned_histories`], see [`crate::provenance`]).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_core::api::{CaptureReport, FrameworkCapture, SkipCount};
use cairn_store::Store;
use cairn_text::project::ProjectResolver;

use crate::frameworks::jsonl::aider;
use crate::frameworks::stores::specstory;
pub use crate::read::BatchLimits;
use crate::read::{Batch, read_lines_batched, read_sqlite, read_whole, send_in_batches};
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
    /// What must never be remembered again (before the last Clear, while memory was off).
    pub forget: cairn_core::Forgetting,
    /// Folders to search for Aider's chat history besides the working folders of the
    /// sessions already stored (`capture.aider.folders`). A missing or unreadable one is a
    /// warning.
    pub aider_folders: Vec<PathBuf>,
    /// Folders to search for SpecStory's session files (`.specstory/history/*.md`) besides
    /// the working folders of the sessions already stored (`capture.specstory.folders`).
    pub specstory_folders: Vec<PathBuf>,
    /// Folders whose history files are captured even when they came with a cloned repository
    /// (`capture.trusted_history_folders`; see [`crate::provenance`]).
    pub trusted_history_folders: Vec<PathBuf>,
    /// How much of a file is read before it is stored and its cursor saved.
    pub batch: BatchLimits,
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
    /// Batches stored so far in this pass (each followed by its cursor).
    pub batches: u64,
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

/// Whether a framework is read in this pass.
fn enabled(opts: &PassOptions, name: &str) -> bool {
    (opts.only.is_empty() || opts.only.iter().any(|n| n == name))
        && !opts.disabled.iter().any(|n| n == name)
}

/// At most this many warnings per pass.
const MAX_WARNINGS: usize = 20;

fn warn(warnings: &mut Vec<String>, w: String) {
    if warnings.len() < MAX_WARNINGS {
        warnings.push(w);
    }
}

/// Aider's history files in the project folders: the folders listed in settings (`listed`,
/// each searched up to three levels down; a missing one or one that is not a folder is a
/// warning) and the working folders of the sessions already stored (`known`; one that no
/// longer exists is skipped quietly, projects come and go). A known folder's repository
/// root (where Aider writes by default) is checked too. A folder that is a symbolic link is
/// not followed (a warning says so), and the home folder or any folder above it is checked
/// for the file itself only, never searched below.
pub fn discover_aider(
    env: &Env,
    listed: &[PathBuf],
    known: &[String],
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let finder = ProjectFinder {
        label: "Aider folder",
        setting: "capture.aider.folders",
        in_dir: |dir, w| aider::history_file_in(dir, w).into_iter().collect(),
        under: aider::find_histories,
    };
    finder.discover(env, listed, known, warnings)
}

/// SpecStory's session files (`.specstory/history/*.md`) in the project folders, found the
/// way [`discover_aider`] finds Aider's: in the folders listed in settings
/// (`capture.specstory.folders`) and the working folders of the sessions already stored, and
/// the repository root of each.
pub fn discover_specstory(
    env: &Env,
    listed: &[PathBuf],
    known: &[String],
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let finder = ProjectFinder {
        label: "SpecStory folder",
        setting: "capture.specstory.folders",
        in_dir: specstory::history_files_in,
        under: specstory::find_histories,
    };
    finder.discover(env, listed, known, warnings)
}

/// How one framework's history files are found inside project folders.
struct ProjectFinder {
    /// How warnings name a folder (`Aider folder`).
    label: &'static str,
    /// The setting that lists folders.
    setting: &'static str,
    /// The files in a folder itself.
    in_dir: fn(&Path, &mut Vec<String>) -> Vec<PathBuf>,
    /// The files in a folder and below.
    under: fn(&Path, &mut Vec<String>) -> Vec<PathBuf>,
}

impl ProjectFinder {
    fn discover(
        &self,
        env: &Env,
        listed: &[PathBuf],
        known: &[String],
        warnings: &mut Vec<String>,
    ) -> Vec<PathBuf> {
        let mut found = BTreeSet::new();
        let mut visited = BTreeSet::new();
        let mut local = Vec::new();
        let folders = listed
            .iter()
            .map(|p| (p.clone(), true))
            .chain(known.iter().map(|c| (PathBuf::from(c), false)));
        let (label, setting) = (self.label, self.setting);
        for (dir, is_listed) in folders {
            if !dir.is_absolute() || !visited.insert(dir.clone()) {
                continue;
            }
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    local.push(format!(
                        "{label} {}: a symbolic link; not followed",
                        dir.display()
                    ));
                    continue;
                }
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    if is_listed {
                        local.push(format!(
                            "{label} {} ({setting}) is not a folder; skipped",
                            dir.display()
                        ));
                    }
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if is_listed {
                        local.push(format!(
                            "{label} {} ({setting}) does not exist; skipped",
                            dir.display()
                        ));
                    }
                    continue;
                }
                Err(e) => {
                    local.push(format!("{label} {}: {e}; skipped", dir.display()));
                    continue;
                }
            }
            if env.home.starts_with(&dir) {
                found.extend((self.in_dir)(&dir, &mut local));
            } else {
                found.extend((self.under)(&dir, &mut local));
            }
            if !is_listed
                && let Some(root) = repository_root(&dir, &env.home)
                && root != dir
            {
                found.extend((self.in_dir)(&root, &mut local));
            }
        }
        for w in local {
            warn(warnings, w);
        }
        found.into_iter().collect()
    }
}

/// The reason in a framework's skipped counts for history files that came with a cloned
/// repository.
pub const CLONED_REASON: &str = "history files that came with cloned repositories";

/// The history files found inside project folders (Aider's and SpecStory's), sorted by whose
/// they are.
#[derive(Debug, Default)]
pub struct ProjectHistories {
    /// The user's own files: to be captured.
    pub files: Vec<(FrameworkSpec, PathBuf)>,
    /// Files that came with a cloned repository (committed by someone else, unchanged here,
    /// in no folder of `capture.trusted_history_folders`): not captured.
    pub cloned: Vec<(FrameworkSpec, PathBuf)>,
    /// Folders that could not be searched, links not followed.
    pub warnings: Vec<String>,
}

/// Finds the history files of the frameworks that keep them inside projects (Aider,
/// SpecStory) in the folders listed in settings and the working folders of the sessions
/// stored so far, and sorts out those that came with cloned repositories
/// ([`crate::provenance`]) unless they are in a folder of
/// [`PassOptions::trusted_history_folders`].
pub async fn project_histories(
    store: &Store,
    opts: &PassOptions,
) -> Result<ProjectHistories, cairn_store::Error> {
    type Discover = fn(&Env, &[PathBuf], &[String], &mut Vec<String>) -> Vec<PathBuf>;
    let kinds: [(FrameworkSpec, Vec<PathBuf>, Discover); 2] = [
        (aider::spec(), opts.aider_folders.clone(), discover_aider),
        (
            specstory::spec(),
            opts.specstory_folders.clone(),
            discover_specstory,
        ),
    ];
    let mut jobs = Vec::new();
    for (spec, listed, discover) in kinds {
        if enabled(opts, spec.name) {
            jobs.push((spec, listed, discover, store.known_cwds(spec.name).await?));
        }
    }
    let env = opts.env.clone();
    let trusted = opts.trusted_history_folders.clone();
    tokio::task::spawn_blocking(move || {
        let mut out = ProjectHistories::default();
        for (spec, listed, discover, known) in jobs {
            let mut w = Vec::new();
            for path in discover(&env, &listed, &known, &mut w) {
                let trusted = trusted.iter().any(|t| path.starts_with(t));
                match crate::provenance::verdict(&path) {
                    crate::provenance::Verdict::Cloned { .. } if !trusted => {
                        out.cloned.push((spec, path));
                    }
                    _ => out.files.push((spec, path)),
                }
            }
            for x in w {
                warn(&mut out.warnings, x);
            }
        }
        out
    })
    .await
    .map_err(|e| cairn_store::Error::Io(std::io::Error::other(e.to_string())))
}

/// The nearest folder at or above `dir` (and below `home`) that holds a `.git`.
fn repository_root(dir: &Path, home: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|d| !home.starts_with(d))
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Everything one pass keeps between files.
struct PassState {
    tallies: BTreeMap<&'static str, Tally>,
    projects: ProjectResolver,
    secrets: u64,
    warnings: Vec<String>,
    batches: u64,
}

/// Runs one pass over every enabled framework. `progress` is called after each batch stored
/// and after each file.
pub async fn run(
    store: &Store,
    opts: &PassOptions,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<CaptureReport, cairn_store::Error> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let env = opts.clone();
    let (files, warnings) = tokio::task::spawn_blocking(move || {
        let mut w = Vec::new();
        let f = discover(&env, &mut w);
        (f, w)
    })
    .await
    .map_err(|e| cairn_store::Error::Io(std::io::Error::other(e.to_string())))?;
    let mut st = PassState {
        tallies: BTreeMap::new(),
        projects: ProjectResolver::default(),
        secrets: 0,
        warnings,
        batches: 0,
    };
    let mut total = files.len();
    let mut done = 0;
    capture_files(store, opts, files, &mut st, &mut done, total, progress).await?;
    // Aider and SpecStory last: the sessions just stored may name the project folders that
    // hold their files.
    let histories = project_histories(store, opts).await?;
    for w in histories.warnings {
        warn(&mut st.warnings, w);
    }
    let mut cloned = Vec::with_capacity(histories.cloned.len());
    for (spec, path) in histories.cloned {
        st.tallies
            .entry(spec.name)
            .or_default()
            .skip(CLONED_REASON, 1);
        cloned.push(path.display().to_string());
    }
    total += histories.files.len();
    capture_files(
        store,
        opts,
        histories.files,
        &mut st,
        &mut done,
        total,
        progress,
    )
    .await?;
    let frameworks = st
        .tallies
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
        warnings: st.warnings,
        secrets_redacted: st.secrets,
        cloned_histories: cloned,
    })
}

/// Reads one file or store from its cursor and stores it batch by batch: each batch's turns
/// are scrubbed and stored, then its cursor is saved. `stored` is called after each batch.
async fn capture_file(
    store: &Store,
    opts: &PassOptions,
    spec: FrameworkSpec,
    path: PathBuf,
    st: &mut PassState,
    stored: &(dyn Fn(u64) + Send + Sync),
) -> Result<(), cairn_store::Error> {
    let tally = st.tallies.entry(spec.name).or_default();
    let key = path.display().to_string();
    let prev = store.cursor(spec.name, &key).await?;
    let fallback = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map(chrono::DateTime::<chrono::Utc>::from)
        .unwrap_or_else(|_| chrono::Utc::now());
    let scrubber = cairn_text::scrub::scrubber();
    // One batch in the channel and one being read: the reader stays a batch ahead.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Batch>(1);
    let (settle, limits, read_path) = (opts.settle, opts.batch, path.clone());
    let reader = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let mut sink = |b: Batch| tx.blocking_send(b).is_ok();
        let prev = prev.as_ref();
        match spec.reader {
            Reader::Lines(make) => {
                read_lines_batched(spec.name, make, &read_path, prev, settle, limits, &mut sink)
            }
            Reader::Sqlite(read) => {
                send_in_batches(
                    read_sqlite(spec.name, read, &read_path, prev)?,
                    limits,
                    &mut sink,
                );
                Ok(())
            }
            Reader::WholeFile(parse) => {
                send_in_batches(
                    read_whole(spec.name, parse, &read_path, prev)?,
                    limits,
                    &mut sink,
                );
                Ok(())
            }
        }
    });
    let mut counted = false;
    while let Some(batch) = rx.recv().await {
        if batch.changed && !counted {
            tally.sessions += 1;
            counted = true;
        }
        tally.skip("malformed or unknown lines", batch.skipped);
        for w in batch.warnings {
            warn(&mut st.warnings, w);
        }
        let mut records = Vec::with_capacity(batch.turns.len());
        for turn in batch.turns {
            if let Some(cwd) = &turn.cwd
                && opts
                    .internal_dirs
                    .iter()
                    .any(|d| Path::new(cwd).starts_with(d))
            {
                tally.skip("Cairn's own model calls", 1);
                continue;
            }
            // Forgotten turns are dropped before anything (even the scrubber) sees them.
            let id = cairn_core::RecordId::derive(spec.name, &turn.session_id, &turn.message_id);
            if let Some(why) = opts.forget.skips(&id, turn.started_at.unwrap_or(fallback)) {
                tally.skip(why.reason(), 1);
                continue;
            }
            let project = turn.cwd.as_deref().map(|c| st.projects.identify(c));
            let (rec, n) =
                crate::record::to_record(spec.name, &turn, project, &key, fallback, scrubber);
            st.secrets += n;
            records.push(rec);
        }
        if !records.is_empty() {
            let report = store.append_records(&records).await?;
            tally.added += report.added;
            tally.revised += report.revised;
        }
        // Saved only once the batch's records are stored: a pass killed in between reads
        // the batch again, and the store recognises what it already has.
        if let Some(mut cursor) = batch.cursor
            && (batch.changed || !records.is_empty())
        {
            // A parser's saved state may hold an open turn's text: it is scrubbed like a record.
            if let Some(state) = cursor.state.as_mut() {
                scrubber.scrub_json(state);
            }
            store.save_cursor(&cursor).await?;
        }
        drop(records);
        st.batches += 1;
        stored(st.batches);
    }
    match reader.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "file vanished",
                std::io::ErrorKind::PermissionDenied => "permission denied",
                _ => "unreadable store",
            };
            tally.skip(reason, 1);
            warn(&mut st.warnings, format!("{}: {e}", path.display()));
        }
        Err(e) => return Err(cairn_store::Error::Io(std::io::Error::other(e.to_string()))),
    }
    Ok(())
}

/// Captures each file in turn, reporting progress after every batch and every file;
/// `done` counts the files finished so far in the pass, `total` the files it knows of.
async fn capture_files(
    store: &Store,
    opts: &PassOptions,
    files: Vec<(FrameworkSpec, PathBuf)>,
    st: &mut PassState,
    done: &mut usize,
    total: usize,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<(), cairn_store::Error> {
    for (spec, path) in files {
        let finished = *done;
        capture_file(store, opts, spec, path, st, &|batches| {
            progress(Progress {
                done: finished,
                total,
                framework: spec.name.to_owned(),
                batches,
            })
        })
        .await?;
        *done += 1;
        progress(Progress {
            done: *done,
            total,
            framework: spec.name.to_owned(),
            batches: st.batches,
        });
    }
    Ok(())
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
