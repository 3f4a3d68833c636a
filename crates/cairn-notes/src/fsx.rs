//! The file-system side: resolving checked paths without following links, reading with
//! `O_NOFOLLOW`, atomic writes (temporary file in the same directory, fsync, rename), owner-
//! only permissions, and walking a scope.
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::io::{Read, Write};
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

fn nofollow(opts: &mut fs_err::OpenOptions) {
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    {
        let _ = opts;
    }
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

/// Reads a note file (never through a link) as text. The outer error is an I/O failure;
/// the inner one says why the file is not a note.
pub(crate) fn read_text(path: &Path) -> Result<std::result::Result<String, Unreadable>> {
    let mut opts = fs_err::OpenOptions::new();
    opts.read(true);
    nofollow(&mut opts);
    let file = opts.open(path).map_err(|e| Error::io("open", path, e))?;
    let mut buf = Vec::new();
    file.take(MAX_CONTENT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", path, e))?;
    if buf.len() > MAX_CONTENT_BYTES {
        let size = std::fs::symlink_metadata(path).map_or(buf.len() as u64, |m| m.len());
        return Ok(Err(Unreadable::TooLarge(size)));
    }
    Ok(String::from_utf8(buf).map_err(|_| Unreadable::NotText))
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

/// Writes `content` to `path` atomically: a new temporary file (mode 0600, created
/// exclusively, never through a link) in the same directory, fsync, rename over `path`,
/// fsync the directory. Returns the written file's metadata.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> Result<Metadata> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::BadRequest(format!("{} has no directory", path.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem: String = name.chars().take(64).collect();
    while stem.len() > 200 {
        stem.pop();
    }
    let tmp = dir.join(format!(".{stem}.{}{TEMP_SUFFIX}", random_hex()));
    let result = (|| -> Result<()> {
        let mut opts = fs_err::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use fs_err::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        nofollow(&mut opts);
        let mut file = opts.open(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
        file.write_all(content)
            .map_err(|e| Error::io("write", &tmp, e))?;
        file.sync_all().map_err(|e| Error::io("sync", &tmp, e))?;
        drop(file);
        fs_err::rename(&tmp, path).map_err(|e| Error::io("rename", &tmp, e))?;
        Ok(())
    })();
    if result.is_err()
        && std::fs::symlink_metadata(&tmp).is_ok()
        && let Err(e) = fs_err::remove_file(&tmp)
    {
        tracing::warn!(error = %e, "could not remove a temporary note file");
    }
    result?;
    sync_dir(dir);
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
    pub(crate) stat: FileStat,
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
                out.insert(
                    rel,
                    Found {
                        path,
                        stat: FileStat::of(&m),
                    },
                );
            }
        }
    }
    Ok(())
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Path relative to the scope root; directories end with `/`.
    pub(crate) rel: String,
    /// Bytes (the total of the files below, for a directory).
    pub(crate) size: u64,
}

/// The entries under `dir` up to `depth` levels, as [`walk`] sees them (links and hidden
/// names skipped), sorted by path. `base` is `dir`'s path relative to the scope root.
pub(crate) fn listing(dir: &Path, base: &str, depth: usize) -> Result<Vec<Entry>> {
    let files = walk(dir)?;
    let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
    let prefix = if base.is_empty() {
        String::new()
    } else {
        format!("{base}/")
    };
    for (rel, f) in &files {
        let parts: Vec<&str> = rel.split('/').collect();
        for level in 1..=parts.len().min(depth) {
            let is_file = level == parts.len();
            let mut key = format!("{prefix}{}", parts[..level].join("/"));
            if !is_file {
                key.push('/');
            }
            *sizes.entry(key).or_default() += f.stat.size;
        }
    }
    // Directories with nothing visible below still show.
    list_dirs(dir, &prefix, depth, &mut sizes)?;
    Ok(sizes
        .into_iter()
        .map(|(rel, size)| Entry { rel, size })
        .collect())
}

fn list_dirs(
    dir: &Path,
    prefix: &str,
    depth: usize,
    sizes: &mut BTreeMap<String, u64>,
) -> Result<()> {
    if depth == 0 {
        return Ok(());
    }
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
        if component_problem(&name).is_some() {
            continue;
        }
        let path = entry.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if m.is_dir() && !m.file_type().is_symlink() {
            let key = format!("{prefix}{name}/");
            sizes.entry(key.clone()).or_default();
            list_dirs(&path, &key, depth - 1, sizes)?;
        }
    }
    Ok(())
}
