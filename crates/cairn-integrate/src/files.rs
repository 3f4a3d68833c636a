//! Reading, backing up and atomically writing config files. Writes go through
//! [`cairn_text::fsx::write_atomic`]: a temporary file with a random name beside the file,
//! created exclusively and never through a link, its mode set on the open file, fsynced and
//! renamed over it; a config file that is (or has become) a link at the moment of writing is
//! refused. A link the user made to their config file is followed once, when it is read
//! ([`load`]): the write then goes to the file it names.

use std::io::{ErrorKind, Write as _};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

/// Cairn refuses to edit config files larger than this (16 MiB).
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// A config file as found on disk.
pub(crate) struct Loaded {
    /// The file that is read and written: the configured path, or a symlink's final target.
    pub(crate) target: PathBuf,
    /// The configured path when it is a symlink.
    pub(crate) via_symlink: Option<PathBuf>,
    /// The contents; `None` when the file does not exist.
    pub(crate) bytes: Option<Vec<u8>>,
    /// The file's permissions, kept on rewrite.
    pub(crate) permissions: Option<std::fs::Permissions>,
}

impl Loaded {
    /// The contents as text (`None` when the file does not exist).
    pub(crate) fn text(&self) -> Result<Option<&str>> {
        match &self.bytes {
            None => Ok(None),
            Some(bytes) => std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|error| Error::Malformed {
                    path: self.target.clone(),
                    problem: format!("not UTF-8 text ({error})"),
                }),
        }
    }
}

fn read_error(path: &Path, error: std::io::Error) -> Error {
    Error::Read {
        path: path.to_owned(),
        source: std::io::Error::new(error.kind(), strip_path(&error)),
    }
}

fn write_error(path: &Path, error: std::io::Error) -> Error {
    Error::Write {
        path: path.to_owned(),
        source: std::io::Error::new(error.kind(), strip_path(&error)),
    }
}

/// The operating system's message without fs-err's own "… `path`" prefix (our messages name
/// the path already).
fn strip_path(error: &std::io::Error) -> String {
    match error.get_ref().and_then(|inner| inner.source()) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}

/// Read `path`, following a symlink to the file it names.
pub(crate) fn load(path: &Path) -> Result<Loaded> {
    let (target, via_symlink) = match fs_err::symlink_metadata(path) {
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Ok(Loaded {
                target: path.to_owned(),
                via_symlink: None,
                bytes: None,
                permissions: None,
            });
        }
        Err(error) => return Err(read_error(path, error)),
        Ok(meta) if meta.file_type().is_symlink() => match fs_err::canonicalize(path) {
            Ok(target) => (target, Some(path.to_owned())),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(Error::Malformed {
                    path: path.to_owned(),
                    problem: "is a symlink to a file that does not exist".to_owned(),
                });
            }
            Err(error) => return Err(read_error(path, error)),
        },
        Ok(_) => (path.to_owned(), None),
    };
    let meta = fs_err::metadata(&target).map_err(|error| read_error(&target, error))?;
    if !meta.is_file() {
        return Err(Error::Malformed {
            path: target,
            problem: "is not a regular file".to_owned(),
        });
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(Error::TooLarge {
            path: target,
            size: meta.len(),
            limit: MAX_CONFIG_BYTES,
        });
    }
    let bytes = fs_err::read(&target).map_err(|error| read_error(&target, error))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::TooLarge {
            path: target,
            size: bytes.len() as u64,
            limit: MAX_CONFIG_BYTES,
        });
    }
    Ok(Loaded {
        target,
        via_symlink,
        bytes: Some(bytes),
        permissions: Some(meta.permissions()),
    })
}

/// Fail with [`Error::Changed`] if the file no longer holds what was read.
pub(crate) fn ensure_unchanged(loaded: &Loaded) -> Result<()> {
    let now = match fs_err::read(&loaded.target) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == ErrorKind::NotFound => None,
        Err(error) => return Err(read_error(&loaded.target, error)),
    };
    if now == loaded.bytes {
        Ok(())
    } else {
        Err(Error::Changed {
            path: loaded.target.clone(),
        })
    }
}

/// How many backups of each config file are kept: the newest; older ones are deleted when a
/// new one is made.
pub const BACKUPS_KEPT: usize = 5;

/// The length of a backup's timestamp prefix (`20260102T030405.123456Z`).
const STAMP_LEN: usize = 23;

/// One backup copy of a config file, made before Cairn changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Backup {
    /// Where the copy is.
    pub path: PathBuf,
    /// The name of the file it is a copy of.
    pub file_name: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Create `dir` (and missing ancestors) readable by the owner only, and make it so if it
/// already existed: backups are verbatim copies of agents' config files, which may hold
/// other servers' API keys.
pub(crate) fn private_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|error| write_error(dir, error))?;
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|error| write_error(dir, error))
    }
    #[cfg(not(unix))]
    {
        fs_err::create_dir_all(dir).map_err(|error| write_error(dir, error))
    }
}

/// The timestamp and attempt number of a backup's file name, and the name of the file it
/// copies: `<stamp>-<name>` or `<stamp>-<attempt>-<name>`.
fn parse_backup_name(file_name: &str) -> Option<(chrono::NaiveDateTime, u32, &str)> {
    let stamp = file_name.get(..STAMP_LEN)?;
    let when = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%S%.fZ").ok()?;
    let rest = file_name.get(STAMP_LEN..)?.strip_prefix('-')?;
    if let Some((attempt, name)) = rest.split_once('-')
        && !attempt.is_empty()
        && !attempt.starts_with('0')
        && attempt.bytes().all(|b| b.is_ascii_digit())
        && let Ok(attempt) = attempt.parse::<u32>()
        && attempt < 100
        && !name.is_empty()
    {
        return Some((when, attempt, name));
    }
    (!rest.is_empty()).then_some((when, 0, rest))
}

/// The backups in `dir`, newest first.
pub(crate) fn list_backups(dir: &Path) -> Result<Vec<Backup>> {
    let entries = match fs_err::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(read_error(dir, error)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| read_error(dir, error))?;
        let meta =
            fs_err::symlink_metadata(entry.path()).map_err(|error| read_error(dir, error))?;
        if !meta.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((when, attempt, copied)) = parse_backup_name(&name) else {
            continue;
        };
        found.push((
            when,
            attempt,
            Backup {
                path: entry.path(),
                file_name: copied.to_owned(),
                created_at: when
                    .and_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                size: meta.len(),
            },
        ));
    }
    found.sort_by_key(|b| std::cmp::Reverse((b.0, b.1)));
    Ok(found.into_iter().map(|(_, _, backup)| backup).collect())
}

/// Delete all but the newest [`BACKUPS_KEPT`] backups of the file named `name` in `dir`.
fn prune(dir: &Path, name: &str) -> Result<()> {
    let old = list_backups(dir)?
        .into_iter()
        .filter(|backup| backup.file_name == name)
        .skip(BACKUPS_KEPT);
    for backup in old {
        fs_err::remove_file(&backup.path).map_err(|error| write_error(&backup.path, error))?;
    }
    Ok(())
}

/// Copy the original bytes into `dir/<UTC timestamp>-<file name>` (never overwriting an
/// earlier backup), readable by the owner only (0600, in a 0700 folder), then keep only the
/// newest [`BACKUPS_KEPT`] of that file. Returns the backup's path.
pub(crate) fn backup(dir: &Path, loaded: &Loaded) -> Result<Option<PathBuf>> {
    let Some(bytes) = &loaded.bytes else {
        return Ok(None);
    };
    if let Some(root) = dir.parent() {
        private_dir(root)?;
    }
    private_dir(dir)?;
    let name = loaded
        .target
        .file_name()
        .map_or_else(|| "config".into(), |name| name.to_string_lossy());
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ");
    for attempt in 0..100 {
        let file_name = if attempt == 0 {
            format!("{stamp}-{name}")
        } else {
            format!("{stamp}-{attempt}-{name}")
        };
        let path = dir.join(file_name);
        let mut options = fs_err::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use fs_err::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        match options.open(&path) {
            Ok(file) => {
                write_file(file, bytes, owner_only(), &path)?;
                prune(dir, &name)?;
                return Ok(Some(path));
            }
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
            Err(error) => return Err(write_error(&path, error)),
        }
    }
    Err(write_error(
        dir,
        std::io::Error::new(ErrorKind::AlreadyExists, "no free backup file name"),
    ))
}

/// Permissions for the owner only (0600), where the platform has them.
pub(crate) fn owner_only() -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(std::fs::Permissions::from_mode(0o600))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

fn write_file(
    mut file: fs_err::File,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
    path: &Path,
) -> Result<()> {
    if let Some(permissions) = permissions {
        file.file()
            .set_permissions(permissions)
            .map_err(|error| write_error(path, error))?;
    }
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|error| write_error(path, error))
}

fn fsx_error(error: cairn_text::fsx::FsError) -> Error {
    match error.kind() {
        cairn_text::fsx::FsErrorKind::Io { source, .. } => Error::Write {
            path: error.path().to_owned(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
        _ => Error::Malformed {
            path: error.path().to_owned(),
            problem: error.reason(),
        },
    }
}

/// Create `dir` and its missing ancestors one at a time below the nearest folder that exists
/// (a link there is the user's own); a link standing where a folder is missing (one that
/// leads nowhere) is refused, never followed. Returns the folders created, outermost first.
pub(crate) fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut existing = Some(dir);
    while let Some(path) = existing {
        if path.as_os_str().is_empty() || path.is_dir() {
            break;
        }
        existing = path.parent();
    }
    let trusted = existing.unwrap_or(Path::new(""));
    cairn_text::fsx::create_dirs(dir, trusted, 0o777).map_err(fsx_error)
}

/// Write `text` to `path` through a temporary file in the same directory and a rename, so the
/// file is either the old one or the new one, never half-written. `permissions`: the file's
/// (kept on rewrite); `None` for a new file. The folder holding `path` is trusted as it is
/// (the user's own layout, links included); the file itself must not be a link.
pub(crate) fn write_atomic(
    path: &Path,
    text: &str,
    permissions: Option<std::fs::Permissions>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = cairn_text::fsx::WriteOptions::new(dir);
    #[cfg(unix)]
    if let Some(permissions) = &permissions {
        use std::os::unix::fs::PermissionsExt as _;
        options = options.mode(permissions.mode());
    }
    #[cfg(not(unix))]
    {
        let _ = &permissions;
    }
    cairn_text::fsx::write_atomic(path, text.as_bytes(), &options).map_err(fsx_error)
}

/// Delete a file Cairn created, then the directories it created for it if they are empty.
pub(crate) fn delete(path: &Path, created_dirs: &[PathBuf]) -> Result<()> {
    fs_err::remove_file(path).map_err(|error| write_error(path, error))?;
    for dir in created_dirs.iter().rev() {
        if fs_err::remove_dir(dir).is_err() {
            break;
        }
    }
    Ok(())
}
