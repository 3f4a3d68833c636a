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
/// A whole-file JSON store larger than this is skipped, with a warning naming the limit.
/// Such a store has no resume point (it is rewritten whole on each change), so it is parsed
/// in one piece, which takes a few times its size in memory; the limit keeps that within the
/// pass's memory bound (line stores are read in bounded batches whatever their size).
/// Real whole-file sessions (Cline, Roo Code, Continue, Amp, legacy Gemini CLI) are far smaller.
pub const MAX_WHOLE_FILE: u64 = 64 << 20;

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

/// How much one batch of a read may hold before it is handed over to be stored: the pass
/// stores each batch and saves its cursor before the next one is read, so memory stays
/// bounded by a batch (plus one open turn) whatever the size of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// At most this many turns per batch.
    pub max_turns: usize,
    /// At most about this many bytes of the file read per batch (a batch ends at the first
    /// line boundary past it).
    pub max_bytes: u64,
}

impl Default for BatchLimits {
    fn default() -> Self {
        Self {
            max_turns: 2_000,
            max_bytes: 8 << 20,
        }
    }
}

/// One bounded part of a read, handed over to be stored before the next one is read.
#[derive(Debug)]
pub struct Batch {
    /// Turns found in this part.
    pub turns: Vec<Turn>,
    /// Where to resume once these turns (and those of the batches before) are stored:
    /// save it only after they are. `None` for a store that can only be resumed as a whole
    /// (SQLite, whole-file JSON): its last batch carries the cursor.
    pub cursor: Option<CaptureCursor>,
    /// Whether anything changed since the last pass (the same in every batch of a read).
    pub changed: bool,
    /// Lines or rows skipped in this part.
    pub skipped: u64,
    /// Sentences about what was skipped (at most a few per file, over all its batches).
    pub warnings: Vec<String>,
    /// Whether this is the read's last batch (which always comes, with a cursor).
    pub last: bool,
}

/// Where each batch of a read goes. It returns `false` to stop the read (the receiver is
/// gone); what was not handed over is read again next time.
pub type Sink<'a> = dyn FnMut(Batch) -> bool + 'a;

/// Reads an append-only line store from the saved offset. A replaced or truncated file is
/// read again from the start (the store skips what it already has). A half-written last
/// line waits for the next pass, unless the file has been quiet for `settle`.
///
/// Everything is returned at once; the pass uses [`read_lines_batched`] instead.
pub fn read_lines(
    source: &str,
    make: fn(&Path, Option<serde_json::Value>) -> Box<dyn LineParser>,
    path: &Path,
    prev: Option<&CaptureCursor>,
    settle: Duration,
) -> std::io::Result<FileRead> {
    collect(|sink| {
        read_lines_batched(
            source,
            make,
            path,
            prev,
            settle,
            BatchLimits {
                max_turns: usize::MAX,
                max_bytes: u64::MAX,
            },
            sink,
        )
    })
}

/// Runs a batched read and gathers its batches into one [`FileRead`].
fn collect(read: impl FnOnce(&mut Sink<'_>) -> std::io::Result<()>) -> std::io::Result<FileRead> {
    let mut turns = Vec::new();
    let mut cursor = None;
    let mut changed = false;
    let mut skipped = 0;
    let mut warnings = Vec::new();
    read(&mut |b: Batch| {
        turns.extend(b.turns);
        if b.cursor.is_some() {
            cursor = b.cursor;
        }
        changed |= b.changed;
        skipped += b.skipped;
        warnings.extend(b.warnings);
        true
    })?;
    let cursor =
        cursor.ok_or_else(|| std::io::Error::other("a read ended without its last batch"))?;
    Ok(FileRead {
        turns,
        cursor,
        changed,
        skipped,
        warnings,
    })
}

/// [`read_lines`] in bounded batches: each is handed to `sink` with the cursor to resume
/// from once its turns are stored. Only a batch's lines and turns are in memory (plus the
/// parser's open turn), never the file. The last batch (always sent, with the final cursor)
/// holds the open turn when the file has gone quiet.
pub fn read_lines_batched(
    source: &str,
    make: fn(&Path, Option<serde_json::Value>) -> Box<dyn LineParser>,
    path: &Path,
    prev: Option<&CaptureCursor>,
    settle: Duration,
    limits: BatchLimits,
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
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
    let mut warned = 0;
    let mut skipped = 0;
    // A resume point inside the file: `size` is where reading got to and `mtime` is unset,
    // so the next pass never takes the file for unchanged and goes on from `offset`.
    let cursor_at =
        |offset: u64, state: serde_json::Value, size: u64, mtime: Option<String>| CaptureCursor {
            source: source.to_owned(),
            path: path.display().to_string(),
            file_key: Some(key.clone()),
            size,
            offset,
            mtime,
            high_water: None,
            state: Some(state),
        };
    if !unchanged {
        let mut file = fs_err::File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut buf = Vec::new();
        let mut batch_start = offset;
        loop {
            if turns.len() >= limits.max_turns
                || offset.saturating_sub(batch_start) >= limits.max_bytes
            {
                let batch = Batch {
                    turns: std::mem::take(&mut turns),
                    cursor: Some(cursor_at(offset, parser.save(), offset, None)),
                    changed: true,
                    skipped: std::mem::take(&mut skipped),
                    warnings: std::mem::take(&mut warnings),
                    last: false,
                };
                if !sink(batch) {
                    return Ok(());
                }
                batch_start = offset;
            }
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
                if warned < WARNINGS_PER_FILE {
                    warned += 1;
                    warnings.push(format!(
                        "{}: line at byte {start} is longer than {} MiB; skipped",
                        path.display(),
                        MAX_LINE >> 20
                    ));
                }
                continue;
            }
            let line = String::from_utf8_lossy(&buf);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            if let Err(w) = parser.feed(line, &mut turns) {
                skipped += 1;
                if warned < WARNINGS_PER_FILE {
                    warned += 1;
                    warnings.push(format!("{}: line at byte {start}: {w}", path.display()));
                }
            }
        }
    }
    if quiet && let Some(open) = parser.open_turn() {
        turns.push(open);
    }
    sink(Batch {
        turns,
        cursor: Some(cursor_at(offset, parser.save(), size, mtime)),
        changed: !unchanged,
        skipped,
        warnings,
        last: true,
    });
    Ok(())
}

/// Hands a read that came whole (SQLite, whole-file JSON) to `sink` in batches of at most
/// `limits.max_turns` turns; the last one carries the cursor.
pub fn send_in_batches(read: FileRead, limits: BatchLimits, sink: &mut Sink<'_>) {
    let FileRead {
        turns,
        cursor,
        changed,
        mut skipped,
        mut warnings,
    } = read;
    let mut cursor = Some(cursor);
    let mut turns = turns.into_iter().peekable();
    loop {
        let part: Vec<Turn> = turns.by_ref().take(limits.max_turns.max(1)).collect();
        let last = turns.peek().is_none();
        let batch = Batch {
            turns: part,
            cursor: if last { cursor.take() } else { None },
            changed,
            skipped: std::mem::take(&mut skipped),
            warnings: std::mem::take(&mut warnings),
            last,
        };
        if !sink(batch) || last {
            return;
        }
    }
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
                "{}: {} MiB is larger than the {} MiB limit for a whole-file JSON store \
                 (it would be parsed in one piece); skipped",
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
