//! Writing and reading files outside Cairn's own data folder without being led elsewhere by
//! links: agents' instruction files in a project (skills export), agents' config and hook
//! files, exports and their import, note files.
//!
//! It lives in `cairn-text` because every writer already depends on this crate and it
//! depends on no other Cairn crate: `cairn-notes`, `cairn-integrate`, `cairn-export` and
//! `cairn-review` can all use it without a new upward edge in the crate graph.
//!
//! - [`write_atomic`]: a new temporary file with a random name in the target's folder,
//!   created exclusively and never through a link (`O_CREAT|O_EXCL|O_NOFOLLOW`), its mode
//!   set on the open file (never by path), written, fsynced and renamed over the target;
//!   refused, naming the path, when the target or a folder on the way is a link.
//! - [`create_dirs`]: missing folders made one at a time, each checked to be a plain folder.
//! - [`create_new`] and [`create_dir_new`]: a new file or folder that must not exist yet.
//! - [`read_regular`]: a regular file only, opened with `O_NOFOLLOW|O_NONBLOCK` (a FIFO
//!   cannot block the open), its type checked on the open descriptor, read up to a limit
//!   (a device such as `/dev/zero` cannot exhaust memory).
//!
//! Every function takes the folder the caller trusts (a project's folder, the user's home,
//! the folder an export was named in): links at or above it are accepted, since the home
//! folder or `/tmp` are links on some systems; every component below it must be a plain
//! folder and the file itself must not be a link. Elsewhere than on Unix the same checks run
//! on the paths (there is no `O_NOFOLLOW`), a best effort.
use std::fmt;
use std::io::{Read as _, Write as _};
use std::path::{Component, Path, PathBuf};

/// The suffix of every temporary file Cairn makes beside a file it replaces.
pub const TEMP_SUFFIX: &str = ".tmp-cairn";

/// What went wrong, with the path it concerns.
#[derive(Debug)]
pub struct FsError {
    path: PathBuf,
    kind: FsErrorKind,
}

/// The kinds of [`FsError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum FsErrorKind {
    /// The path, or a folder on the way to it, is a symbolic link.
    Link,
    /// A component that must be a folder is something else.
    NotFolder,
    /// The file is not a regular file (the text says what it is: a FIFO, a device, …).
    NotRegular(&'static str),
    /// The file is larger than the caller accepts.
    TooLarge {
        /// Its size in bytes (at least `limit + 1` when it was found by reading).
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The path has a `..` component, or names no file.
    BadPath(&'static str),
    /// The operating system refused.
    Io {
        /// What was being done (`create`, `write`, `rename`, …).
        doing: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl FsError {
    fn new(path: &Path, kind: FsErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            kind,
        }
    }

    fn io(doing: &'static str, path: &Path, source: std::io::Error) -> Self {
        // fs-err's messages name the path already; keep the operating system's own words.
        let message = match source.get_ref().and_then(|inner| inner.source()) {
            Some(inner) => inner.to_string(),
            None => source.to_string(),
        };
        Self::new(
            path,
            FsErrorKind::Io {
                doing,
                source: std::io::Error::new(source.kind(), message),
            },
        )
    }

    /// The path the error concerns.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &FsErrorKind {
        &self.kind
    }

    /// Whether Cairn refused (a link, something that is not a plain file or folder, a size
    /// or path it does not accept) rather than the operating system failing.
    pub fn is_refusal(&self) -> bool {
        !matches!(self.kind, FsErrorKind::Io { .. })
    }

    /// The problem without the path, for callers whose messages name it already.
    pub fn reason(&self) -> String {
        match &self.kind {
            FsErrorKind::Link => "is a symbolic link; Cairn does not read or write through \
                                  links it did not expect"
                .to_owned(),
            FsErrorKind::NotFolder => "is not a folder".to_owned(),
            FsErrorKind::NotRegular(what) => format!("is {what}, not a regular file"),
            FsErrorKind::TooLarge { size, limit } => {
                format!("is {size} bytes; Cairn reads at most {limit} bytes here")
            }
            FsErrorKind::BadPath(why) => (*why).to_owned(),
            FsErrorKind::Io { doing, source } => format!("cannot {doing} it: {source}"),
        }
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FsErrorKind::Io { doing, source } => {
                write!(f, "cannot {doing} {}: {source}", self.path.display())
            }
            _ => write!(f, "{} {}", self.path.display(), self.reason()),
        }
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FsErrorKind::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A result of this module.
pub type Result<T> = std::result::Result<T, FsError>;

/// How [`write_atomic`] writes.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions<'a> {
    /// The folder the caller trusts: links at or above it are accepted, none below it.
    pub trusted: &'a Path,
    /// The file's Unix permission bits. `None` keeps those of the file it replaces (a new
    /// file gets 0666 less the umask).
    pub mode: Option<u32>,
    /// Missing folders on the way are created with this mode (less the umask); `None`: a
    /// missing folder is an error.
    pub dir_mode: Option<u32>,
}

impl<'a> WriteOptions<'a> {
    /// Links accepted at or above `trusted`; the mode kept; no folder created.
    pub fn new(trusted: &'a Path) -> Self {
        Self {
            trusted,
            mode: None,
            dir_mode: None,
        }
    }

    /// The file gets exactly `mode` (on Unix).
    pub fn mode(mut self, mode: u32) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Missing folders are created with `mode` (less the umask).
    pub fn create_dirs(mut self, mode: u32) -> Self {
        self.dir_mode = Some(mode);
        self
    }
}

/// The part of `path` below `trusted` (all of it, from the file-system root, when `path` is
/// not below `trusted`), and where that part starts.
fn below<'p>(path: &'p Path, trusted: &Path) -> Result<(PathBuf, Vec<&'p std::ffi::OsStr>)> {
    let (base, rest) = match path.strip_prefix(trusted) {
        Ok(rest) if !trusted.as_os_str().is_empty() => (trusted.to_path_buf(), rest),
        _ => (PathBuf::new(), path),
    };
    let mut base = base;
    let mut comps = Vec::new();
    for comp in rest.components() {
        match comp {
            Component::Normal(name) => comps.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(FsError::new(
                    path,
                    FsErrorKind::BadPath("has a `..` component; Cairn does not write through it"),
                ));
            }
            Component::RootDir | Component::Prefix(_) => base.push(comp.as_os_str()),
        }
    }
    Ok((base, comps))
}

/// Checks every existing folder of `dir` below `trusted`: a plain folder, not a link.
/// Stops at the first missing one (nothing below it exists).
pub fn check_dirs(dir: &Path, trusted: &Path) -> Result<()> {
    let (mut cur, comps) = below(dir, trusted)?;
    for name in comps {
        cur.push(name);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(FsError::new(&cur, FsErrorKind::Link));
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(FsError::new(&cur, FsErrorKind::NotFolder)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(FsError::io("inspect", &cur, e)),
        }
    }
    Ok(())
}

/// Creates `dir` and every missing folder on the way below `trusted`, one at a time with
/// `mode` (less the umask), refusing a link or anything that is not a folder. Returns the
/// folders created, outermost first.
pub fn create_dirs(dir: &Path, trusted: &Path, mode: u32) -> Result<Vec<PathBuf>> {
    let (mut cur, comps) = below(dir, trusted)?;
    let mut created = Vec::new();
    for name in comps {
        cur.push(name);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(FsError::new(&cur, FsErrorKind::Link));
            }
            Ok(m) if m.is_dir() => continue,
            Ok(_) => return Err(FsError::new(&cur, FsErrorKind::NotFolder)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(FsError::io("inspect", &cur, e)),
        }
        match dir_builder(mode).create(&cur) {
            Ok(()) => created.push(cur.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(FsError::io("create the folder", &cur, e)),
        }
        // Something may have raced in: check what is there now.
        let m = std::fs::symlink_metadata(&cur).map_err(|e| FsError::io("inspect", &cur, e))?;
        if m.file_type().is_symlink() {
            return Err(FsError::new(&cur, FsErrorKind::Link));
        }
        if !m.is_dir() {
            return Err(FsError::new(&cur, FsErrorKind::NotFolder));
        }
    }
    Ok(created)
}

fn dir_builder(mode: u32) -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(mode);
    }
    #[cfg(not(unix))]
    {
        let _ = mode;
    }
    builder
}

/// Creates the folder `dir`, which must not exist yet (a link there is never followed),
/// with `mode` (less the umask).
pub fn create_dir_new(dir: &Path, mode: u32) -> Result<()> {
    dir_builder(mode)
        .create(dir)
        .map_err(|e| FsError::io("create the folder", dir, e))
}

/// 16 random hex digits.
pub fn random_hex() -> String {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        // No randomness: the time still makes a name nobody planted in advance likely; the
        // exclusive create refuses any that exists.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = (nanos as u64 ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn open_options() -> fs_err::OpenOptions {
    let mut opts = fs_err::OpenOptions::new();
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    opts
}

/// Whether an open error means the path was a link (`O_NOFOLLOW` says `ELOOP`, some
/// systems `EMLINK` or `EFTYPE`).
fn is_link_error(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EMLINK)) || e.raw_os_error() == eftype()
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(any(target_os = "freebsd", target_os = "dragonfly", target_os = "netbsd"))]
fn eftype() -> Option<i32> {
    Some(libc::EFTYPE)
}

#[cfg(all(
    unix,
    not(any(target_os = "freebsd", target_os = "dragonfly", target_os = "netbsd"))
))]
fn eftype() -> Option<i32> {
    None
}

/// Creates the file `path`, which must not exist yet (`O_CREAT|O_EXCL|O_NOFOLLOW`: a link
/// there is refused, never followed), with exactly `mode` set on the open file (Unix).
pub fn create_new(path: &Path, mode: u32) -> Result<fs_err::File> {
    let mut opts = open_options();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        opts.mode(mode & 0o777);
    }
    let file = opts.open(path).map_err(|e| {
        if is_link_error(&e) {
            FsError::new(path, FsErrorKind::Link)
        } else {
            FsError::io("create", path, e)
        }
    })?;
    set_mode(&file, mode, path)?;
    Ok(file)
}

fn set_mode(file: &fs_err::File, mode: u32, path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))
            .map_err(|e| FsError::io("set the mode of", path, e))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode, path);
        Ok(())
    }
}

fn unix_mode(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o777
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0o666
    }
}

/// What a file that is not a regular one is, for messages.
fn what_is(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_symlink() {
        return "a symbolic link";
    }
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    "not a plain file"
}

/// Writes `bytes` to `path` atomically: a temporary file with a random name in the same
/// folder (created exclusively, never through a link, its mode set on the open file),
/// written, fsynced and renamed over `path`; the folder is fsynced after. Refused, naming
/// the path, when `path` or a folder between `options.trusted` and it is a link, or `path`
/// is not a regular file. A planted file or link at any temporary name is left alone.
pub fn write_atomic(path: &Path, bytes: &[u8], options: &WriteOptions<'_>) -> Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(FsError::new(path, FsErrorKind::BadPath("names no file")));
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    match options.dir_mode {
        Some(mode) => {
            create_dirs(dir, options.trusted, mode)?;
        }
        None => check_dirs(dir, options.trusted)?,
    }
    let existing = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(FsError::new(path, FsErrorKind::Link));
        }
        Ok(m) if !m.is_file() => {
            return Err(FsError::new(path, FsErrorKind::NotRegular(what_is(&m))));
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(FsError::io("inspect", path, e)),
    };
    // The exact mode asked for, or the replaced file's; a new file without one gets the
    // usual 0666 less the umask.
    let exact = options
        .mode
        .or_else(|| existing.as_ref().map(unix_mode))
        .map(|m| m & 0o777);
    // A short, valid stem: the whole temporary name stays within a file name's 255 bytes.
    let mut stem: String = name.to_string_lossy().chars().take(64).collect();
    while stem.len() > 200 {
        stem.pop();
    }
    let (tmp, mut file) = {
        let mut attempt = 0;
        loop {
            let tmp = dir.join(format!(".{stem}.{}{TEMP_SUFFIX}", random_hex()));
            let mut opts = open_options();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use fs_err::os::unix::fs::OpenOptionsExt as _;
                // Private while it is written; the final mode is set below.
                opts.mode(exact.map_or(0o666, |m| m & 0o600));
            }
            match opts.open(&tmp) {
                Ok(f) => break (tmp, f),
                Err(e)
                    if attempt < 8
                        && (e.kind() == std::io::ErrorKind::AlreadyExists || is_link_error(&e)) =>
                {
                    attempt += 1;
                }
                Err(e) => return Err(FsError::io("create a temporary file in", dir, e)),
            }
        }
    };
    let written = (|| {
        if let Some(mode) = exact {
            set_mode(&file, mode, &tmp)?;
        }
        file.write_all(bytes)
            .map_err(|e| FsError::io("write", &tmp, e))?;
        file.sync_all().map_err(|e| FsError::io("sync", &tmp, e))?;
        drop(file);
        // Checked again just before the rename, which replaces a name and never writes
        // through one.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(FsError::new(path, FsErrorKind::Link));
        }
        fs_err::rename(&tmp, path).map_err(|e| FsError::io("replace", path, e))
    })();
    if written.is_err() && fs_err::remove_file(&tmp).is_err() {
        // Nothing more to do: the error below is the one that matters.
    }
    written?;
    sync_dir(dir);
    Ok(())
}

/// Makes a rename or removal in `dir` durable (best effort).
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs_err::File::open(dir)
        && d.sync_all().is_err()
    {
        // Durability is best effort here; the rename itself succeeded.
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
}

/// Reads the regular file `path` whole, up to `limit` bytes: a link (the file or a folder
/// between `trusted` and it) is refused, never followed; it is opened with `O_NONBLOCK` so
/// a FIFO cannot block the open, its type is checked on the open descriptor, and it is read
/// through a bounded reader, so a FIFO, a device or a file growing underneath cannot hang
/// the caller or exhaust memory.
pub fn read_regular(path: &Path, trusted: &Path, limit: u64) -> Result<Vec<u8>> {
    if let Some(dir) = path.parent() {
        check_dirs(dir, trusted)?;
    }
    if let Ok(m) = std::fs::symlink_metadata(path)
        && m.file_type().is_symlink()
    {
        return Err(FsError::new(path, FsErrorKind::Link));
    }
    let mut opts = open_options();
    opts.read(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = opts.open(path).map_err(|e| {
        if is_link_error(&e) {
            FsError::new(path, FsErrorKind::Link)
        } else {
            FsError::io("open", path, e)
        }
    })?;
    let meta = file
        .metadata()
        .map_err(|e| FsError::io("inspect", path, e))?;
    if !meta.is_file() {
        return Err(FsError::new(path, FsErrorKind::NotRegular(what_is(&meta))));
    }
    if meta.len() > limit {
        return Err(FsError::new(
            path,
            FsErrorKind::TooLarge {
                size: meta.len(),
                limit,
            },
        ));
    }
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| FsError::io("read", path, e))?;
    if buf.len() as u64 > limit {
        return Err(FsError::new(
            path,
            FsErrorKind::TooLarge {
                size: buf.len() as u64,
                limit,
            },
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        write_atomic(&path, b"one", &WriteOptions::new(dir.path())).unwrap();
        write_atomic(&path, b"two", &WriteOptions::new(dir.path())).unwrap();
        assert_eq!(fs_err::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs_err::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_refused_below_the_trusted_folder_and_accepted_above_it() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        fs_err::create_dir(&real).unwrap();
        let victim = root.path().join("victim");
        fs_err::write(&victim, "keep").unwrap();
        let linked = root.path().join("linked");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        // The trusted folder itself may be a link.
        write_atomic(&linked.join("f"), b"x", &WriteOptions::new(&linked)).unwrap();
        assert_eq!(fs_err::read(real.join("f")).unwrap(), b"x");
        // Below it, a linked folder or a linked file is refused, naming it.
        let e = write_atomic(&linked.join("f"), b"y", &WriteOptions::new(root.path())).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::Link), "{e}");
        assert!(e.to_string().contains(&linked.display().to_string()), "{e}");
        std::os::unix::fs::symlink(&victim, real.join("g")).unwrap();
        let e = write_atomic(&real.join("g"), b"y", &WriteOptions::new(&real)).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::Link), "{e}");
        assert_eq!(fs_err::read_to_string(&victim).unwrap(), "keep");
        let e = read_regular(&real.join("g"), &real, 10).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::Link), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_exact_kept_or_the_default() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs_err::metadata(p).unwrap().permissions().mode() & 0o777;
        let path = dir.path().join("sub/private");
        write_atomic(
            &path,
            b"x",
            &WriteOptions::new(dir.path()).mode(0o600).create_dirs(0o700),
        )
        .unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("sub")), 0o700);
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"y", &WriteOptions::new(dir.path())).unwrap();
        assert_eq!(mode(&path), 0o640, "kept");
    }

    #[test]
    fn a_read_stops_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        fs_err::write(&path, vec![b'a'; 100]).unwrap();
        assert_eq!(read_regular(&path, dir.path(), 100).unwrap().len(), 100);
        let e = read_regular(&path, dir.path(), 99).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::TooLarge { .. }), "{e}");
        let e = read_regular(dir.path(), dir.path(), 99).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::NotRegular(_)), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_refused_without_reading() {
        let e = read_regular(Path::new("/dev/zero"), Path::new("/dev"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
    }
}
