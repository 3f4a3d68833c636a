//! Property-based fuzzing of the settings loader (issue 9, part 11): 10,000 generated hostile
//! layers — config files (the real defaults mutated, truncated, deeply nested, random bytes,
//! invalid UTF-8), `CAIRN__…` environment variables and `--set` overrides. Loading never
//! panics, never takes over a second, a failure is a message naming the problem, and what
//! loads renders to TOML that loads back to the same settings.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

#[path = "../../cairn-capture/tests/hostile/mod.rs"]
mod hostile;

use cairn_config::{DEFAULT_TOML, Overrides, Paths, Settings};
use proptest::prelude::*;

/// Sections and keys the loader knows, plus some it does not.
const SECTIONS: &[&str] = &[
    "service", "capture", "models", "index", "log", "aider", "x", "",
];
const NAMES: &[&str] = &[
    "bind",
    "port",
    "ui_dir",
    "enabled",
    "startup_delay_seconds",
    "interval_minutes",
    "settle_seconds",
    "disabled",
    "folders",
    "embedder",
    "reranker",
    "download",
    "rerank",
    "backend",
    "qdrant_bin",
    "url",
    "level",
    "keep_days",
    "aider",
    "",
    "x",
];

fn key_part() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(SECTIONS).prop_map(str::to_owned),
        3 => prop::sample::select(NAMES).prop_map(str::to_owned),
        1 => ".{0,10}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(hostile::SNIPPETS).prop_map(str::to_owned),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("18446744073709551616".to_owned()),
        1 => Just("[1, [2, [3]]]".to_owned()),
        1 => Just("{ a = 1 }".to_owned()),
        1 => Just("true".to_owned()),
        2 => ".{0,30}",
        1 => (0usize..5000).prop_map(|n| "[".repeat(n)),
    ]
}

fn env() -> impl Strategy<Value = Vec<(String, String)>> {
    let var = (
        prop::collection::vec(key_part(), 0..5),
        prop::sample::select(&["__", "_", "___", "."][..]),
        value(),
    )
        .prop_map(|(parts, sep, v)| (format!("CAIRN__{}", parts.join(sep).to_uppercase()), v));
    prop::collection::vec(var, 0..4)
}

fn overrides() -> impl Strategy<Value = Vec<String>> {
    let one = (
        prop::collection::vec(key_part(), 0..5),
        prop::sample::select(&["=", "", "==", " = "][..]),
        value(),
    )
        .prop_map(|(parts, eq, v)| format!("{}{eq}{v}", parts.join(".")));
    prop::collection::vec(one, 0..3)
}

/// The defaults, the defaults with every commented example line uncommented, and each line
/// alone.
fn corpus() -> Vec<Vec<u8>> {
    let mut out = vec![DEFAULT_TOML.as_bytes().to_vec()];
    let uncommented: String = DEFAULT_TOML
        .lines()
        .map(|l| l.strip_prefix("# ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    out.push(uncommented.into_bytes());
    out.extend(DEFAULT_TOML.lines().map(|l| l.as_bytes().to_vec()));
    out
}

#[test]
fn the_settings_loader_survives_hostile_files_environments_and_overrides() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path());
    fs_err::create_dir_all(&paths.config).unwrap();
    let file = prop::option::of(hostile::bytes_from(corpus()));
    let mut runner = proptest::test_runner::TestRunner::new(hostile::config());
    let started = std::time::Instant::now();
    let loaded = std::cell::Cell::new(0u32);
    runner
        .run(&(file, env(), overrides()), |(file, env, set)| {
            match &file {
                Some(bytes) => fs_err::write(paths.config_file(), bytes).unwrap(),
                None => {
                    let _absent = fs_err::remove_file(paths.config_file());
                }
            }
            let result = hostile::timed("Settings::load", || {
                Settings::load(&paths, &Overrides(set.clone()), env.clone().into_iter())
            })?;
            match result {
                Ok(s) => {
                    loaded.set(loaded.get() + 1);
                    // What loads renders, and the rendering loads back to the same settings.
                    let text = s.settings.to_toml();
                    fs_err::write(paths.config_file(), &text).unwrap();
                    let again = Settings::load(&paths, &Overrides::default(), std::iter::empty())
                        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
                    prop_assert_eq!(again.settings, s.settings);
                }
                Err(e) => {
                    let message = e.to_string();
                    prop_assert!(!message.trim().is_empty());
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!(
        "{} hostile settings layers in {:?}, {} loaded",
        hostile::CASES,
        started.elapsed(),
        loaded.get()
    );
}
