//! Reading one session file or store from where the last pass stopped, for each reader
//! family. Blocking: the pass runs these on a blocking thread.
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, SystemTime};

use cairn_core::CaptureCursor;

use crate::spec::{LineParser, SqliteReadFn};
use crate::turn::Turn;

/// A line longer than this is skipped (with a warning), never held in memory whole.
pub const MAX_LINE: usize = 16 << 20;
/// A whole-file store larger than this is skipped.
pub const MAX_WHOLE_FILE: u64 = 256 << 20;

/// What reading one file or store gave.
#[derive(Debug)]
pub struct FileRead {
    /// Turns found (complete ones, and the open one when the file went quiet).
    pub turns: Vec<Turn>,
    /// Where to start next time.
    pub cursor: CaptureCursor,
    /// Whether anything changed since the last pass.
    pub changed: bool,
    /// Lines or rows skipped, with a sentence each (the first few) and a count.
    pub skipped: u64,
    /// Sentences about what was skipped (at most a few per file).
    pub warnings: Vec<String>,
}

const WARNINGS_PER_FILE: usize = 5;

fn push_warning(w: &mut Vec<String>, s: String) {
    if w.len() < WARNINGS_PER_FILE {
        w.push(s);
    }
}

fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

/// The file's identity: device and inode on Unix; elsewhere its creation time.
fn file_key(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        format!("{}:{}", meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        meta.created().map(rfc3339).unwrap_or_default()
    }
}

fn quiet_for(meta: &std::fs::Metadata, settle: Duration) -> bool {
    meta.modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= settle)
}

/// Reads one line up to `\n`, keeping at most `max` bytes of it. Returns (bytes consumed,
/// whether the line ended with `\n`, whether it was longer than `max`).
fn read_line_capped(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool, bool)> {
    let mut total = 0;
    let mut overlong = false;
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok((total, false, overlong));
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        if !overlong {
            if buf.len() + take > max {
                overlong = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&avail[..take]);
            }
        }
        r.consume(take);
        total += take;
        if done {
            return Ok((total, true, overlong));
        }
    }
}

/// Reads an append-only line store from the saved offset. A replaced or truncated file is
/// read again from the start (the store skips what it already has). A half-written last
/// line waits for the next pass, unless the file has been quiet for `settle`.
pub fn read_lines(
    source: &str,
    make: fn(&Path, Option<serde_json::Value>) -> Box<dyn LineParser>,
    path: &Path,
    prev: Option<&CaptureCursor>,
    settle: Duration,
) -> std::io::Result<FileRead> {
    let meta = fs_err::metadata(path)?;
    let size = meta.len();
    let key = file_key(&meta);
    let mtime = meta.modified().ok().map(rfc3339);
    let same_file =
        prev.is_some_and(|c| c.file_key.as_deref() == Some(key.as_str()) && size >= c.offset);
    let (mut offset, state) = match prev {
        Some(c) if same_file => (c.offset, c.state.clone()),
        _ => (0, None),
    };
    let unchanged = same_file && prev.is_some_and(|c| c.size == size && c.mtime == mtime);
    let quiet = quiet_for(&meta, settle);
    let mut parser = make(path, state);
    let mut turns = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = 0;
    if !unchanged {
        let mut file = fs_err::File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let start = offset;
            let (n, complete, overlong) = read_line_capped(&mut reader, &mut buf, MAX_LINE)?;
            if n == 0 {
                break;
            }
            // A half-written last line waits, unless the file went quiet without a final newline.
            if !complete && !quiet {
                break;
            }
            offset += n as u64;
            if overlong {
                skipped += 1;
                push_warning(
                    &mut warnings,
                    format!(
                        "{}: line at byte {start} is longer than {} MiB; skipped",
                        path.display(),
                        MAX_LINE >> 20
                    ),
                );
                continue;
            }
            let line = String::from_utf8_lossy(&buf);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            if let Err(w) = parser.feed(line, &mut turns) {
                skipped += 1;
                push_warning(
                    &mut warnings,
                    format!("{}: line at byte {start}: {w}", path.display()),
                );
            }
        }
    }
    if quiet && let Some(open) = parser.open_turn() {
        turns.push(open);
    }
    let cursor = CaptureCursor {
        source: source.to_owned(),
        path: path.display().to_string(),
        file_key: Some(key),
        size,
        offset,
        mtime,
        high_water: None,
        state: Some(parser.save()),
    };
    Ok(FileRead {
        turns,
        cursor,
        changed: !unchanged,
        skipped,
        warnings,
    })
}

/// Fingerprint of an SQLite store and its WAL: (size, mtime) of both.
fn sqlite_fingerprint(path: &Path) -> (u64, Option<String>) {
    let mut size = 0;
    let mut newest: Option<SystemTime> = None;
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    for p in [path, wal.as_path()] {
        if let Ok(m) = std::fs::metadata(p) {
            size += m.len();
            if let Ok(t) = m.modified() {
                newest = Some(newest.map_or(t, |n| n.max(t)));
            }
        }
    }
    (size, newest.map(rfc3339))
}

/// Reads an SQLite store updated in place: opened read-only with a busy timeout, never
/// holding a lock, asked only for what changed after the saved high-water mark.
pub fn read_sqlite(
    source: &str,
    read: SqliteReadFn,
    path: &Path,
    prev: Option<&CaptureCursor>,
) -> std::io::Result<FileRead> {
    use rusqlite::OpenFlags;
    let (size, mtime) = sqlite_fingerprint(path);
    let mut cursor = CaptureCursor {
        source: source.to_owned(),
        path: path.display().to_string(),
        file_key: None,
        size,
        offset: 0,
        mtime: mtime.clone(),
        high_water: prev.and_then(|c| c.high_water.clone()),
        state: None,
    };
    if prev.is_some_and(|c| c.size == size && c.mtime == mtime) {
        return Ok(FileRead {
            turns: Vec::new(),
            cursor,
            changed: false,
            skipped: 0,
            warnings: Vec::new(),
        });
    }
    let open = || -> rusqlite::Result<rusqlite::Connection> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(Duration::from_secs(2))?;
        Ok(conn)
    };
    let conn = open().map_err(|e| {
        std::io::Error::other(format!("cannot open {} read-only: {e}", path.display()))
    })?;
    let batch = read(&conn, path, cursor.high_water.as_deref())
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
    drop(conn);
    let skipped = batch.warnings.len() as u64;
    let mut warnings = Vec::new();
    for w in batch.warnings {
        push_warning(&mut warnings, format!("{}: {w}", path.display()));
    }
    if batch.high_water.is_some() {
        cursor.high_water = batch.high_water;
    }
    Ok(FileRead {
        turns: batch.turns,
        cursor,
        changed: true,
        skipped,
        warnings,
    })
}

/// Reads a whole-file JSON store again when its size or modification time changed.
pub fn read_whole(
    source: &str,
    parse: fn(&Path, &[u8]) -> Result<Vec<Turn>, String>,
    path: &Path,
    prev: Option<&CaptureCursor>,
) -> std::io::Result<FileRead> {
    let meta = fs_err::metadata(path)?;
    let size = meta.len();
    let mtime = meta.modified().ok().map(rfc3339);
    let cursor = CaptureCursor {
        source: source.to_owned(),
        path: path.display().to_string(),
        file_key: Some(file_key(&meta)),
        size,
        offset: size,
        mtime: mtime.clone(),
        high_water: None,
        state: None,
    };
    if prev.is_some_and(|c| c.size == size && c.mtime == mtime) {
        return Ok(FileRead {
            turns: Vec::new(),
            cursor,
            changed: false,
            skipped: 0,
            warnings: Vec::new(),
        });
    }
    if size > MAX_WHOLE_FILE {
        return Ok(FileRead {
            turns: Vec::new(),
            cursor,
            changed: true,
            skipped: 1,
            warnings: vec![format!(
                "{}: {} MiB is larger than {} MiB; skipped",
                path.display(),
                size >> 20,
                MAX_WHOLE_FILE >> 20
            )],
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    fs_err::File::open(path)?.read_to_end(&mut bytes)?;
    match parse(path, &bytes) {
        Ok(turns) => Ok(FileRead {
            turns,
            cursor,
            changed: true,
            skipped: 0,
            warnings: Vec::new(),
        }),
        // A file caught mid-rewrite: keep the old cursor's view so the next pass retries.
        Err(e) => Ok(FileRead {
            turns: Vec::new(),
            cursor: CaptureCursor {
                size: 0,
                mtime: None,
                ..cursor
            },
            changed: true,
            skipped: 1,
            warnings: vec![format!("{}: {e}", path.display())],
        }),
    }
}
