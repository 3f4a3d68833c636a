//! Property-based fuzzing of request decoding (issue 9, part 11): 10,000 generated hostile
//! request bodies — real requests mutated and truncated, random bytes, invalid UTF-8, deep
//! nesting, huge numbers, wrong types — decoded the way the HTTP server and the dispatch table
//! decode them (`serde_json::from_slice` to a value, then the method's request type), for
//! every method of the API. No panic, no input over a second; what decodes serialises and
//! decodes again to the same request.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

#[path = "../../cairn-capture/tests/hostile/mod.rs"]
mod hostile;

use proptest::prelude::*;
use serde_json::Value;

/// Real request bodies to mutate.
const EXAMPLES: &[&str] = &[
    r#"{}"#,
    r#"{"enabled": true}"#,
    r#"{"confirm": "clear", "notes": true}"#,
    r#"{"launch_at_login": false}"#,
    r#"{"query": "why did the build fail", "limit": 10, "since": "2026-08-20", "until": "2026-08-21T10:00:00Z", "project": "demo", "kinds": ["record", "note"], "rerank": true}"#,
    r#"{"project": "demo", "framework": "claude-code", "limit": 50, "offset": 0}"#,
    r#"{"id": "r_0123456789abcdef"}"#,
    r#"{"id": "r_0123456789abcdef", "concept": "tokio", "depth": 3, "limit": 20}"#,
    r#"{"scope": "project", "project": "demo", "path": "db/migrations.md"}"#,
    r#"{"note": {"scope": "user", "path": "a.md"}, "content": "x", "expected_sha256": "00"}"#,
    r#"{"note": {"scope": "user", "path": "a.md"}, "new_path": "b.md"}"#,
    r#"{"note": {"scope": "user", "path": "a.md"}, "version": 2}"#,
    r#"{"command": "str_replace", "scope": "user", "path": "a.md", "old_str": "a", "new_str": "b", "view_range": [1, -1], "insert_line": 3}"#,
    r#"{"framework": "cursor", "enabled": true}"#,
];

macro_rules! decoders {
    ($($name:ident($req:ty) -> $res:ty, $doc:literal;)*) => {
        /// Decodes `params` as each method's request, as `Service::dispatch` does, and checks
        /// that what decodes round-trips.
        fn decode_all(params: &Value) -> Result<usize, TestCaseError> {
            let mut decoded = 0;
            $({
                let p = if params.is_null() { serde_json::json!({}) } else { params.clone() };
                let req = hostile::timed(stringify!($name), || {
                    serde_json::from_value::<$req>(p)
                })?;
                if let Ok(req) = req {
                    decoded += 1;
                    let again: $req = serde_json::from_value(serde_json::to_value(&req).unwrap())
                        .map_err(|e| TestCaseError::fail(format!("{}: {e}", stringify!($name))))?;
                    prop_assert_eq!(
                        serde_json::to_value(&again).unwrap(),
                        serde_json::to_value(&req).unwrap(),
                        "{}", stringify!($name)
                    );
                }
            })*
            Ok(decoded)
        }
    };
}
cairn_core::for_each_method!(decoders);

#[test]
fn every_request_type_decodes_hostile_bodies_without_panic_or_hang() {
    let corpus: Vec<Vec<u8>> = EXAMPLES.iter().map(|s| s.as_bytes().to_vec()).collect();
    let body = prop_oneof![
        3 => hostile::bytes_from(corpus),
        1 => prop::collection::vec((hostile::key(), hostile::json_value()), 0..8)
            .prop_map(|kv| serde_json::to_vec(&Value::Object(kv.into_iter().collect())).unwrap()),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(hostile::config());
    let started = std::time::Instant::now();
    let decoded = std::cell::Cell::new(0usize);
    runner
        .run(&body, |bytes| {
            let value = hostile::timed("from_slice", || {
                if bytes.is_empty() {
                    Ok(Value::Null)
                } else {
                    serde_json::from_slice::<Value>(&bytes)
                }
            })?;
            if let Ok(v) = value {
                decoded.set(decoded.get() + decode_all(&v)?);
            }
            Ok(())
        })
        .unwrap();
    eprintln!(
        "{} hostile bodies × every method in {:?}; {} (body, method) pairs decoded",
        hostile::CASES,
        started.elapsed(),
        decoded.get()
    );
    assert!(
        decoded.get() > 0,
        "nothing ever decoded: the generator is too hostile"
    );
}
