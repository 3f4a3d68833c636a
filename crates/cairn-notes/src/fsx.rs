//! The file-system side: resolving checked paths without following links, reading with
//! `O_NOFOLLOW`, atomic writes (temporary file in the same directory, fsync, rename), owner-
//! only permissions, and walking a scope. Reads and writes go through `cairn_text::fsx`,
//! the one helper every Cairn writer outside its data folder uses.
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::path::{MAX_DEPTH, RelPath, Scope, TEMP_SUFFIX, component_problem};

/// Largest note content, in bytes.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;

/// A file's size and modification time (ns since the epoch), to notice outside edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub(crate) size: u64,
    pub(crate) mtime: i64,
}

impl FileStat {
    pub(crate) fn of(m: &Metadata) -> Self {
        let mtime = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Self {
            size: m.len(),
            mtime,
        }
    }
}

/// What a checked path leads to.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The full path (under the canonical root).
    pub(crate) path: PathBuf,
    /// The final component's own metadata (links are never followed), if it exists.
    pub(crate) meta: Option<Metadata>,
}

impl Resolved {
    pub(crate) fn is_dir(&self) -> bool {
        self.meta.as_ref().is_some_and(Metadata::is_dir)
    }

    pub(crate) fn is_file(&self) -> bool {
        self.meta.as_ref().is_some_and(Metadata::is_file)
    }
}

fn link_count(m: &Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.nlink()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        1
    }
}

/// Walks `root` / scope dirs / `rel` one component at a time with `symlink_metadata`,
/// refusing any link (the scope's own directories included), a file used as a directory,
/// and anything that is neither a plain file nor a directory; then checks that the deepest
/// existing part canonicalises to a path under `root`. `raw` is the caller's path, for
/// messages.
pub(crate) fn resolve(root: &Path, scope: &Scope, rel: &RelPath, raw: &str) -> Result<Resolved> {
    let scope_dirs = scope.dirs();
    let total = scope_dirs.len() + rel.components().len();
    let mut cur = root.to_path_buf();
    let mut existing = root.to_path_buf();
    let mut meta = None;
    let mut shown = String::new();
    for (i, comp) in scope_dirs.iter().chain(rel.components()).enumerate() {
        cur.push(comp);
        let in_scope = i >= scope_dirs.len();
        if in_scope {
            if !shown.is_empty() {
                shown.push('/');
            }
            shown.push_str(comp);
        }
        let what = if in_scope {
            format!("`{shown}`")
        } else {
            format!("the scope's directory `{}`", scope_dirs[..=i].join("/"))
        };
        match std::fs::symlink_metadata(&cur) {
            Ok(m) => {
                let last = i + 1 == total;
                if m.file_type().is_symlink() {
                    return Err(Error::path(
                        raw,
                        format!("{what} is a symbolic link; notes never follow links"),
                    ));
                }
                if m.is_file() {
                    if !last {
                        return Err(Error::path(
                            raw,
                            format!("{what} is a file, not a directory"),
                        ));
                    }
                    if link_count(&m) > 1 {
                        return Err(Error::path(
                            raw,
                            format!("{what} has other hard links; notes never follow links"),
                        ));
                    }
                } else if !m.is_dir() {
                    return Err(Error::path(
                        raw,
                        format!("{what} is neither a file nor a directory"),
                    ));
                }
                existing = cur.clone();
                if last {
                    meta = Some(m);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Nothing below a missing component exists either.
                for rest in scope_dirs.iter().chain(rel.components()).skip(i + 1) {
                    cur.push(rest);
                }
                break;
            }
            Err(e) => return Err(Error::io("inspect", cur, e)),
        }
    }
    let canonical = existing
        .canonicalize()
        .map_err(|e| Error::io("resolve", existing.clone(), e))?;
    if !canonical.starts_with(root) {
        return Err(Error::path(
            raw,
            format!(
                "it resolves to {}, outside the notes root",
                canonical.display()
            ),
        ));
    }
    Ok(Resolved { path: cur, meta })
}

/// Creates `dir` and every missing parent below `root` with mode 0700, refusing links.
pub(crate) fn create_dirs(root: &Path, dir: &Path, raw: &str) -> Result<()> {
    let rel = dir
        .strip_prefix(root)
        .map_err(|_| Error::path(raw, format!("{} is outside the notes root", dir.display())))?;
    let mut cur = root.to_path_buf();
    for comp in rel.components() {
        cur.push(comp);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() && !m.file_type().is_symlink() => continue,
            Ok(_) => {
                return Err(Error::path(
                    raw,
                    format!("{} is not a plain directory", cur.display()),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("inspect", cur, e)),
        }
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(&cur) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("create directory", cur, e)),
        }
        // Someone may have raced a link in; check what is there now.
        let m =
            std::fs::symlink_metadata(&cur).map_err(|e| Error::io("inspect", cur.clone(), e))?;
        if m.file_type().is_symlink() || !m.is_dir() {
            return Err(Error::path(
                raw,
                format!("{} is not a plain directory", cur.display()),
            ));
        }
    }
    Ok(())
}

/// Why a file cannot be a note.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// Over [`MAX_CONTENT_BYTES`].
    TooLarge(u64),
    /// Not UTF-8.
    NotText,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::TooLarge(n) => {
                write!(f, "it is {n} bytes; notes hold at most {MAX_CONTENT_BYTES}")
            }
            Unreadable::NotText => f.write_str("it is not UTF-8 text"),
        }
    }
}

/// Reads a note file (never through a link, never a FIFO or a device: see
/// [`cairn_text::fsx::read_regular`]) as text. The outer error is an I/O failure; the inner
/// one says why the file is not a note.
pub(crate) fn read_text(path: &Path) -> Result<std::result::Result<String, Unreadable>> {
    let trusted = path.parent().unwrap_or(path);
    let buf = match cairn_text::fsx::read_regular(path, trusted, MAX_CONTENT_BYTES as u64) {
        Ok(buf) => buf,
        Err(e) => {
            if let cairn_text::fsx::FsErrorKind::TooLarge { size, .. } = e.kind() {
                return Ok(Err(Unreadable::TooLarge(*size)));
            }
            return Err(fs_error("read", e));
        }
    };
    Ok(String::from_utf8(buf).map_err(|_| Unreadable::NotText))
}

/// A [`cairn_text::fsx`] failure as a notes error: a refusal names the path and the reason.
fn fs_error(op: &'static str, e: cairn_text::fsx::FsError) -> Error {
    match e.kind() {
        cairn_text::fsx::FsErrorKind::Io { source, .. } => Error::io(
            op,
            e.path(),
            std::io::Error::new(source.kind(), source.to_string()),
        ),
        _ => Error::path(&e.path().display().to_string(), e.reason()),
    }
}

pub(crate) fn random_hex() -> String {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = (nanos as u64).to_le_bytes();
    }
    hex::encode(b)
}

/// Writes `content` to `path` atomically with [`cairn_text::fsx::write_atomic`]: a new
/// temporary file (mode 0600, a random name ending in [`TEMP_SUFFIX`], created exclusively,
/// never through a link) in the same directory, fsync, rename over `path`, fsync the
/// directory. The directory was checked already ([`resolve`]); `path` itself must not be a
/// link. Returns the written file's metadata.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> Result<Metadata> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::BadRequest(format!("{} has no directory", path.display())))?;
    let options = cairn_text::fsx::WriteOptions::new(dir).mode(0o600);
    cairn_text::fsx::write_atomic(path, content, &options).map_err(|e| fs_error("write", e))?;
    std::fs::symlink_metadata(path).map_err(|e| Error::io("inspect", path, e))
}

/// Makes a rename or removal in `dir` durable (best effort).
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs_err::File::open(dir)
        && let Err(e) = d.sync_all()
    {
        tracing::debug!(error = %e, dir = %dir.display(), "directory fsync failed");
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
}

/// A note file found by [`walk`].
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) path: PathBuf,
}

/// Every plain file under `dir` (at most [`MAX_DEPTH`] components deep) whose relative path
/// is one a caller could name, by relative path. Links, hidden and temporary names, files
/// with other hard links and anything else are skipped, never followed.
pub(crate) fn walk(dir: &Path) -> Result<BTreeMap<String, Found>> {
    let mut out = BTreeMap::new();
    walk_into(dir, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn walk_into(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut BTreeMap<String, Found>,
) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if component_problem(&name).is_some() || name.ends_with(TEMP_SUFFIX) {
            continue;
        }
        let path = entry.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if m.file_type().is_symlink() {
            continue;
        }
        if m.is_dir() {
            if prefix.len() + 1 < MAX_DEPTH {
                prefix.push(name);
                walk_into(&path, prefix, out)?;
                prefix.pop();
            }
        } else if m.is_file() && link_count(&m) == 1 {
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{}/{name}", prefix.join("/"))
            };
            if rel.len() <= crate::path::MAX_PATH_BYTES {
                out.insert(rel, Found { path });
            }
        }
    }
    Ok(())
}

/// One line of a memory-tool directory view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    /// The path relative to the viewed directory; directories end with `/`.
    pub(crate) rel: String,
    /// A file's size, or the total size of the files below a directory.
    pub(crate) size: u64,
}

/// The visible entries under `dir` up to `depth` levels, in the memory tool's order: each
/// directory's names sorted, a directory followed by its own entries. Links and names a
/// caller could not use are skipped, never followed.
pub(crate) fn tree(dir: &Path, depth: usize) -> Result<Vec<TreeEntry>> {
    let mut out = Vec::new();
    tree_into(dir, "", 1, depth, &mut out)?;
    Ok(out)
}

/// Appends `dir`'s entries (level `level`) to `out` and returns the total file size below.
fn tree_into(
    dir: &Path,
    prefix: &str,
    level: usize,
    depth: usize,
    out: &mut Vec<TreeEntry>,
) -> Result<u64> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if component_problem(&name).is_some() {
            continue;
        }
        names.push((name, entry.path()));
    }
    names.sort();
    let mut total = 0;
    for (name, path) in names {
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if m.file_type().is_symlink() {
            continue;
        }
        let rel = format!("{prefix}{name}");
        if m.is_dir() {
            let at = out.len();
            if level <= depth {
                out.push(TreeEntry {
                    rel: format!("{rel}/"),
                    size: 0,
                });
            }
            let mut below = Vec::new();
            let size = tree_into(&path, &format!("{rel}/"), level + 1, depth, &mut below)?;
            if level <= depth {
                out[at].size = size;
                out.extend(below);
            }
            total += size;
        } else if m.is_file() && link_count(&m) <= 1 {
            if level <= depth {
                out.push(TreeEntry { rel, size: m.len() });
            }
            total += m.len();
        }
    }
    Ok(total)
}
