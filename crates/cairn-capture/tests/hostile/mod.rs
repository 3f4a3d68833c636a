//! Hostile inputs for the property-based fuzz tests (issue 9, part 11), shared by the test
//! binaries of several crates (`#[path]`-included): random bytes, real fixture text mutated
//! and truncated, deep nesting, huge numbers, invalid UTF-8 and Unicode tricks, and a
//! per-input time guard. Stable Rust only: proptest drives the generation and shrinks a
//! failing input to a small one.
#![allow(dead_code, reason = "each test binary uses a part")]

use std::time::{Duration, Instant};

use proptest::prelude::*;

/// Inputs per fuzz target (issue 9: at least 10,000 each).
pub const CASES: u32 = 10_000;

/// One input taking longer than this is a hang.
pub const HANG: Duration = Duration::from_secs(1);

/// The proptest configuration every fuzz target uses: 10,000 cases, no persistence files in
/// the source tree, a fixed seed unless `PROPTEST_RNG_SEED` says otherwise (so a failure in CI
/// reproduces), and no forking.
pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        rng_seed: match std::env::var("PROPTEST_RNG_SEED") {
            Ok(s) => proptest::test_runner::RngSeed::Fixed(s.parse().unwrap_or(9)),
            Err(_) => proptest::test_runner::RngSeed::Fixed(9),
        },
        ..ProptestConfig::default()
    }
}

/// Runs `f` on one input and fails the case when it takes longer than [`HANG`].
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    if took > HANG {
        return Err(TestCaseError::fail(format!(
            "{what}: one input took {took:?} (> {HANG:?})"
        )));
    }
    Ok(out)
}

/// Short fragments that break parsers: quotes, brackets, escapes, lone surrogates, huge and
/// odd numbers, NUL, BOM, right-to-left marks, path tricks.
pub const SNIPPETS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\udfff\\ud800",
    "\u{0}",
    "\u{feff}",
    "\u{202e}",
    "\u{200b}",
    "\u{10ffff}",
    "1e999999",
    "-1e-999999",
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999999999999999999999999999999",
    "1.7976931348623157e309",
    "NaN",
    "-0",
    "0x10",
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"type\":",
    "\"role\":\"assistant\"",
    "\"content\":[",
    "\"text\":",
    "\"id\":",
    "\"timestamp\":\"9999-99-99T99:99:99Z\"",
    "\"timestamp\":-1",
    "../",
    "..\\",
    "/etc/passwd",
    "C:\\",
    "%2e%2e%2f",
    "\r\n",
    "\n",
    "\t",
    "é",
    "😀",
    "\u{301}",
];

/// A JSON value that is deep, wide, numerically extreme or strangely keyed.
pub fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        2 => Just(Value::Null),
        2 => any::<bool>().prop_map(Value::Bool),
        2 => any::<i64>().prop_map(Value::from),
        2 => any::<u64>().prop_map(Value::from),
        2 => any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        4 => ".{0,24}".prop_map(Value::String),
        4 => prop::sample::select(SNIPPETS).prop_map(|s| Value::String(s.to_owned())),
        1 => (0usize..70_000).prop_map(|n| Value::String("x".repeat(n))),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// An object key: usually one that the readers look for, sometimes anything.
pub fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => ".{0,12}",
    ]
}

/// Keys the framework readers and request types look for.
pub const KEYS: &[&str] = &[
    "type",
    "role",
    "content",
    "text",
    "message",
    "id",
    "uuid",
    "parentUuid",
    "sessionId",
    "session_id",
    "timestamp",
    "cwd",
    "model",
    "tool_use_id",
    "tool_use",
    "tool_result",
    "input",
    "output",
    "name",
    "payload",
    "parts",
    "data",
    "messages",
    "history",
    "request",
    "response",
    "value",
    "kind",
    "ts",
    "time",
    "created",
    "updated",
    "status",
    "is_error",
    "query",
    "limit",
    "since",
    "until",
    "project",
    "kinds",
    "rerank",
    "path",
    "scope",
    "command",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "new_path",
    "view_range",
    "expected_sha256",
    "note",
    "depth",
    "concept",
    "enabled",
    "confirm",
    "body",
    "title",
    "version",
    "offset",
    "cursor",
    "state",
    "pending",
    "open",
];

/// `depth` nested arrays or objects, closed or not.
pub fn deep_nesting() -> impl Strategy<Value = Vec<u8>> {
    (1usize..20_000, any::<bool>(), any::<bool>()).prop_map(|(depth, objects, close)| {
        let (open, end) = if objects {
            ("{\"a\":", "}")
        } else {
            ("[", "]")
        };
        let mut s = open.repeat(depth);
        s.push('1');
        if close {
            s.push_str(&end.repeat(depth));
        }
        s.into_bytes()
    })
}

/// One edit of a byte string.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Keep only the first `n` per mille.
    Truncate(u16),
    /// Replace the byte at (position per mille) with `b`.
    Set(u16, u8),
    /// Insert a snippet at (position per mille).
    Insert(u16, &'static str),
    /// Insert raw (maybe invalid UTF-8) bytes.
    InsertBytes(u16, Vec<u8>),
    /// Remove `len` bytes at (position per mille).
    Remove(u16, u16),
    /// Repeat the slice at (position per mille) of length `len` `times` times.
    Repeat(u16, u16, u16),
}

pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0u16..=1000).prop_map(Edit::Truncate),
        (0u16..=1000, any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        (0u16..=1000, prop::sample::select(SNIPPETS)).prop_map(|(p, s)| Edit::Insert(p, s)),
        (0u16..=1000, prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(p, b)| Edit::InsertBytes(p, b)),
        (0u16..=1000, 1u16..64).prop_map(|(p, n)| Edit::Remove(p, n)),
        (0u16..=1000, 1u16..32, 1u16..200).prop_map(|(p, n, t)| Edit::Repeat(p, n, t)),
    ]
}

fn at(len: usize, per_mille: u16) -> usize {
    len * usize::from(per_mille.min(1000)) / 1000
}

/// Applies the edits to a copy of `base`.
pub fn apply(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = base.to_vec();
    for e in edits {
        match e {
            Edit::Truncate(p) => b.truncate(at(b.len(), *p)),
            Edit::Set(p, v) => {
                let i = at(b.len(), *p);
                if let Some(slot) = b.get_mut(i) {
                    *slot = *v;
                }
            }
            Edit::Insert(p, s) => {
                let i = at(b.len(), *p);
                b.splice(i..i, s.bytes());
            }
            Edit::InsertBytes(p, s) => {
                let i = at(b.len(), *p);
                b.splice(i..i, s.iter().copied());
            }
            Edit::Remove(p, n) => {
                let i = at(b.len(), *p);
                let j = (i + usize::from(*n)).min(b.len());
                b.drain(i..j);
            }
            Edit::Repeat(p, n, t) => {
                let i = at(b.len(), *p);
                let j = (i + usize::from(*n)).min(b.len());
                let piece = b[i..j].to_vec();
                let extra: Vec<u8> = piece
                    .iter()
                    .copied()
                    .cycle()
                    .take(piece.len() * usize::from(*t))
                    .collect();
                b.splice(j..j, extra);
            }
        }
    }
    b
}

/// Bytes derived from one of `corpus`: mutated real text (most often), random bytes, a
/// generated JSON value, or deep nesting.
pub fn bytes_from(corpus: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = corpus.len().max(1);
    let corpus = std::sync::Arc::new(corpus);
    prop_oneof![
        6 => (0..n, prop::collection::vec(edit(), 0..6)).prop_map(move |(i, edits)| {
            apply(corpus.get(i).map_or(&[][..], Vec::as_slice), &edits)
        }),
        2 => prop::collection::vec(any::<u8>(), 0..512),
        2 => json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        1 => deep_nesting(),
    ]
}

/// Lossy text of `bytes` (invalid UTF-8 becomes U+FFFD), as a reader that decoded it would
/// hand it on.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
