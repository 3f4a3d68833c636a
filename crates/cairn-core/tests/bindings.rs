//! The committed TypeScript in `ui/src/generated/` must match what the Rust types generate.
//! Run with `CAIRN_UPDATE_BINDINGS=1` to rewrite it after changing a type.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::path::PathBuf;

#[test]
fn typescript_bindings_are_fresh() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/generated");
    let update = std::env::var_os("CAIRN_UPDATE_BINDINGS").is_some();
    let files = cairn_core::api::typescript_files();
    let mut stale = Vec::new();
    if update {
        fs_err::create_dir_all(&dir).unwrap();
        for entry in fs_err::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "ts") {
                fs_err::remove_file(&path).unwrap();
            }
        }
    }
    for (name, content) in &files {
        let path = dir.join(format!("{name}.ts"));
        if update {
            fs_err::write(&path, content).unwrap();
        } else if fs_err::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    if !update {
        let expected: std::collections::BTreeSet<String> =
            files.iter().map(|(n, _)| format!("{n}.ts")).collect();
        for entry in fs_err::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".ts") && !expected.contains(&name) {
                stale.push(format!("{name} (no longer generated)"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "ui/src/generated is stale: {stale:?}\nrun `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-core --test bindings` and commit the result"
    );
}
