//! `cairn ranker train --from-store`, `status` and `reset` on a home with nothing logged:
//! training refuses with the numbers and writes nothing; the shipped model stays in use.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

fn cairn(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .env("CAIRN_HOME", home)
        .env("CAIRN__MODELS__DOWNLOAD", "false")
        .env("CAIRN__CAPTURE__ENABLED", "false")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn from_store_on_an_empty_home_refuses_with_the_numbers_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = cairn(&home, &["ranker", "train", "--from-store"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("too few labelled turn-note entries")
            && stderr.contains("0 labelled candidates (0 needed, 0 not needed)")
            && stderr.contains("at least 200"),
        "{stderr}"
    );
    let model = cairn_config::Paths::under(&home).ranker_model();
    assert!(!model.exists() && !model.with_extension("json").exists());
    assert!(!model.parent().unwrap().exists(), "{}", model.display());

    // A file and --from-store are one or the other.
    let out = cairn(&home, &["ranker", "train", "x.json", "--from-store"]);
    assert!(!out.status.success());

    let out = cairn(&home, &["ranker", "status", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["model"], "shipped", "{status}");
    assert!(
        status["nightly"]
            .as_str()
            .unwrap()
            .starts_with("Sleep trains a personal model each night"),
        "{status}"
    );
    let out = cairn(&home, &["ranker", "reset"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("uses the shipped model"), "{stdout}");
    assert!(stdout.contains("Nightly training is off since"), "{stdout}");
}
