//! The reader layer on real files: resuming from cursors at arbitrary split points, truncated
//! and replaced files, half-written lines, and bad input that must never stop a pass.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_capture::read::{read_lines, read_sqlite, read_whole};
use cairn_capture::{Reader, Turn};
use cairn_core::CaptureCursor;

const FIXTURE: &str = "tests/fixtures/jsonl/claude-code/projects/-home-dev-projects-demo-app/9d2e4f60-1a2b-4c3d-8e9f-0a1b2c3d4e5f.jsonl";
const FOREVER: Duration = Duration::from_secs(1_000_000);

fn claude() -> fn(&Path, Option<serde_json::Value>) -> Box<dyn cairn_capture::LineParser> {
    let spec = cairn_capture::frameworks::by_name("claude-code").unwrap();
    match spec.reader {
        Reader::Lines(make) => make,
        _ => panic!("claude-code is a line store"),
    }
}

/// Turns by message id, the last emission winning (what the store keeps as current).
fn by_id(turns: impl IntoIterator<Item = Turn>) -> BTreeMap<String, Turn> {
    turns
        .into_iter()
        .map(|t| (t.message_id.clone(), t))
        .collect()
}

fn full_read(path: &Path) -> BTreeMap<String, Turn> {
    let r = read_lines("claude-code", claude(), path, None, Duration::ZERO).unwrap();
    by_id(r.turns)
}

/// A small deterministic generator, so failures reproduce.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn fixture_bytes() -> Vec<u8> {
    fs_err::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap()
}

#[test]
fn appending_at_random_split_points_gives_the_same_turns_as_one_full_read() {
    let bytes = fixture_bytes();
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.jsonl");
    fs_err::write(&whole, &bytes).unwrap();
    let expected = full_read(&whole);
    assert!(expected.len() >= 2, "fixture has turns");
    for seed in 1..=25u64 {
        let mut rng = Lcg(seed);
        // Same file name (the session id comes from it), a folder per seed.
        let sub = dir.path().join(format!("seed-{seed}"));
        fs_err::create_dir_all(&sub).unwrap();
        let path = sub.join("whole.jsonl");
        fs_err::write(&path, b"").unwrap();
        let mut cursor: Option<CaptureCursor> = None;
        let mut seen = Vec::new();
        let mut written = 0;
        while written < bytes.len() {
            // Split anywhere, mid-line and mid-character included.
            let step = 1 + rng.next(400);
            let end = (written + step).min(bytes.len());
            let mut f = fs_err::OpenOptions::new().append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut f, &bytes[written..end]).unwrap();
            written = end;
            let r = read_lines("claude-code", claude(), &path, cursor.as_ref(), FOREVER).unwrap();
            // Round-trip the cursor through JSON, as the store does.
            let json = serde_json::to_string(&r.cursor).unwrap();
            cursor = Some(serde_json::from_str(&json).unwrap());
            seen.extend(r.turns);
        }
        // The file goes quiet: its open turn is stored too.
        let r = read_lines(
            "claude-code",
            claude(),
            &path,
            cursor.as_ref(),
            Duration::ZERO,
        )
        .unwrap();
        seen.extend(r.turns);
        assert_eq!(by_id(seen), expected, "seed {seed}");
    }
}

#[test]
fn a_half_written_last_line_waits_and_is_read_once_complete() {
    let bytes = fixture_bytes();
    let cut = bytes.iter().position(|&b| b == b'\n').unwrap() + 10;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs_err::write(&path, &bytes[..cut]).unwrap();
    let r = read_lines("claude-code", claude(), &path, None, FOREVER).unwrap();
    let first_line = bytes.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
    assert_eq!(r.cursor.offset, first_line, "stops before the partial line");
    assert_eq!(r.skipped, 0, "a partial line is not malformed");
}

#[test]
fn a_truncated_or_replaced_file_is_read_again_from_the_start() {
    let bytes = fixture_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs_err::write(&path, &bytes).unwrap();
    let first = read_lines("claude-code", claude(), &path, None, Duration::ZERO).unwrap();
    assert_eq!(first.cursor.offset, bytes.len() as u64);
    // Truncated to its first half: the cursor is past the end, so reading starts over.
    let half = bytes[..bytes.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    fs_err::write(&path, &bytes[..half]).unwrap();
    let again = read_lines(
        "claude-code",
        claude(),
        &path,
        Some(&first.cursor),
        Duration::ZERO,
    )
    .unwrap();
    assert!(again.cursor.offset <= half as u64);
    assert!(!again.turns.is_empty(), "re-read from the start");
    // Replaced by another file (new inode) of the same size: read from the start too.
    let other = dir.path().join("other.jsonl");
    fs_err::write(&other, &bytes).unwrap();
    fs_err::rename(&other, &path).unwrap();
    let replaced = read_lines(
        "claude-code",
        claude(),
        &path,
        Some(&first.cursor),
        Duration::ZERO,
    )
    .unwrap();
    assert_ne!(replaced.cursor.file_key, first.cursor.file_key);
    assert_eq!(by_id(replaced.turns), by_id(first.turns));
    // Unchanged since the last pass: nothing is read.
    let same = read_lines(
        "claude-code",
        claude(),
        &path,
        Some(&replaced.cursor),
        FOREVER,
    )
    .unwrap();
    assert!(!same.changed);
    assert!(same.turns.is_empty());
}

#[test]
fn bad_lines_are_skipped_with_a_warning_and_everything_else_is_read() {
    let bytes = fixture_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut mixed = Vec::new();
    mixed.extend_from_slice(b"{not json at all\n");
    mixed.extend_from_slice(&[0xff, 0xfe, b'{', b'}', b'\n']); // not UTF-8
    // A 20 MiB line: longer than a line may be; never held whole.
    mixed.push(b'{');
    mixed.extend(std::iter::repeat_n(b'a', 20 << 20));
    mixed.extend_from_slice(b"}\n");
    mixed.extend_from_slice(b"{\"type\":\"some-future-record\",\"x\":1}\n");
    mixed.extend_from_slice(&bytes);
    fs_err::write(&path, &mixed).unwrap();
    let r = read_lines("claude-code", claude(), &path, None, Duration::ZERO).unwrap();
    assert!(r.skipped >= 2, "skipped {}", r.skipped);
    assert!(
        r.warnings.iter().any(|w| w.contains("longer than")),
        "{:?}",
        r.warnings
    );
    let clean_dir = dir.path().join("clean");
    fs_err::create_dir_all(&clean_dir).unwrap();
    let clean = clean_dir.join("s.jsonl");
    fs_err::write(&clean, &bytes).unwrap();
    assert_eq!(
        by_id(r.turns),
        full_read(&clean),
        "every good line still read"
    );
}

#[test]
fn a_vanished_file_is_an_error_for_that_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let gone: PathBuf = dir.path().join("gone.jsonl");
    let err = read_lines("claude-code", claude(), &gone, None, Duration::ZERO).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    let spec = cairn_capture::frameworks::all()
        .into_iter()
        .find(|s| matches!(s.reader, Reader::WholeFile(_)))
        .unwrap();
    let Reader::WholeFile(parse) = spec.reader else {
        unreachable!()
    };
    assert!(read_whole(spec.name, parse, &gone, None).is_err());
}

#[test]
fn a_corrupt_or_locked_sqlite_store_is_reported_not_fatal() {
    let spec = cairn_capture::frameworks::by_name("opencode").unwrap();
    let read = cairn_capture::frameworks::all()
        .into_iter()
        .filter(|s| s.name == "opencode")
        .find_map(|s| match s.reader {
            Reader::Sqlite(f) => Some(f),
            _ => None,
        })
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("opencode.db");
    fs_err::write(&corrupt, vec![7u8; 4096]).unwrap();
    let err = read_sqlite(spec.name, read, &corrupt, None).unwrap_err();
    assert!(err.to_string().contains("opencode.db"), "{err}");
    // A store another process holds an exclusive lock on: the read gives up after its busy
    // timeout with an error, and the writer is not disturbed.
    let locked = dir.path().join("locked.db");
    let sql = fs_err::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/stores/opencode/opencode-db.sql"),
    )
    .unwrap();
    let writer = rusqlite::Connection::open(&locked).unwrap();
    writer.execute_batch(&sql).unwrap();
    writer
        .execute_batch(
            "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; UPDATE session SET title = title;",
        )
        .unwrap();
    let res = read_sqlite(spec.name, read, &locked, None);
    assert!(
        res.is_err() || res.as_ref().is_ok_and(|r| r.turns.is_empty()),
        "{:?}",
        res.map(|r| r.turns.len())
    );
    writer.execute_batch("COMMIT").unwrap();
    let ok = read_sqlite(spec.name, read, &locked, None).unwrap();
    assert!(!ok.turns.is_empty(), "readable once the lock is gone");
}
