//! Finding model files: settings folder, cache with recorded checks, downloads off. No test
//! here touches the network (`allow_download` is always false).
use std::path::Path;

use cairn_core::ports::{BackendError, BackendErrorKind};
use cairn_models::{ModelError, ModelFile, ModelSpec, resolve, sha256_file};

fn no_progress(_: u64, _: u64) {}

/// A spec for three small files written into `dir`, pinned to their real sha256s.
fn spec_for(dir: &Path) -> ModelSpec {
    let files = [
        ("model.safetensors", "weights"),
        ("tokenizer.json", "{}"),
        ("config.json", "{ }"),
    ];
    fs_err::create_dir_all(dir).unwrap();
    let files = files
        .iter()
        .map(|(name, content)| {
            fs_err::write(dir.join(name), content).unwrap();
            ModelFile::new(*name, Some(&sha256_file(&dir.join(name)).unwrap()))
        })
        .collect();
    ModelSpec {
        name: "tiny".into(),
        repo: "example/tiny".into(),
        revision: "0123456789abcdef0123456789abcdef01234567".into(),
        files,
    }
}

#[test]
fn a_settings_folder_is_used_as_is_when_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    let spec = spec_for(&dir);
    fs_err::write(dir.join("config.json"), "{\"edited\": true}").unwrap();
    let found = resolve(
        &spec,
        Some(&dir),
        &tmp.path().join("cache"),
        false,
        &no_progress,
    );
    assert_eq!(found.unwrap(), dir);
}

#[test]
fn a_settings_folder_missing_a_file_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    let spec = spec_for(&dir);
    fs_err::remove_file(dir.join("tokenizer.json")).unwrap();
    let err = resolve(
        &spec,
        Some(&dir),
        &tmp.path().join("cache"),
        false,
        &no_progress,
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::MissingFile { .. }));
    let backend = BackendError::from(err);
    assert_eq!(backend.kind, BackendErrorKind::Unavailable);
    assert!(backend.message.contains("tokenizer.json"), "{backend}");
}

#[test]
fn a_complete_cache_is_verified_once_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let spec = spec_for(&cache.join("tiny"));
    let found = resolve(&spec, None, &cache, false, &no_progress).unwrap();
    assert_eq!(found, cache.join("tiny"));
    let stamp = fs_err::read_to_string(found.join(".cairn-verified.json")).unwrap();
    assert!(
        stamp.contains(&spec.revision) && stamp.contains(spec.files[0].sha256.as_ref().unwrap())
    );
    assert_eq!(
        resolve(&spec, None, &cache, false, &no_progress).unwrap(),
        found
    );

    // A file without a pin is vouched for by the recorded check of the same revision.
    let mut unpinned = spec.clone();
    unpinned.files[1].sha256 = None;
    assert_eq!(
        resolve(&unpinned, None, &cache, false, &no_progress).unwrap(),
        found
    );
}

#[test]
fn a_damaged_cached_file_is_caught_by_its_sha256_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let spec = spec_for(&cache.join("tiny"));
    resolve(&spec, None, &cache, false, &no_progress).unwrap();
    fs_err::write(cache.join("tiny").join("model.safetensors"), "weightz!").unwrap();
    let err = resolve(&spec, None, &cache, false, &no_progress).unwrap_err();
    assert!(matches!(err, ModelError::Checksum { .. }), "{err}");
    let backend = BackendError::from(err);
    assert_eq!(backend.kind, BackendErrorKind::Unavailable);
    assert!(backend.message.contains("model.safetensors"), "{backend}");
}

#[test]
fn an_empty_cache_with_downloads_off_says_so_without_touching_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = ModelSpec::all_minilm_l6_v2();
    let err = resolve(&spec, None, tmp.path(), false, &no_progress).unwrap_err();
    assert!(matches!(err, ModelError::DownloadDisabled { .. }), "{err}");
    let backend = BackendError::from(err);
    assert_eq!(backend.kind, BackendErrorKind::Unavailable);
    assert!(backend.message.contains("all-MiniLM-L6-v2"), "{backend}");
}

#[test]
fn an_unpinned_file_nobody_recorded_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let mut spec = spec_for(&cache.join("tiny"));
    spec.files[0].sha256 = None;
    let err = resolve(&spec, None, &cache, false, &no_progress).unwrap_err();
    assert!(matches!(err, ModelError::Unverified { .. }), "{err}");
    assert!(err.to_string().contains("model.safetensors"));
}

/// Issue 9 part 7: a file with no pinned sha256 is never downloaded, even with downloads on
/// (the answer comes before any connection is made).
#[test]
fn an_unpinned_file_is_never_downloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let mut spec = spec_for(&cache.join("tiny"));
    fs_err::remove_file(cache.join("tiny").join(&spec.files[1].name)).unwrap();
    spec.files[1].sha256 = None;
    spec.repo = "cairn-test/does-not-exist".into();
    let err = resolve(&spec, None, &cache, true, &no_progress).unwrap_err();
    assert!(matches!(err, ModelError::Unpinned { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains(&spec.files[1].name), "{message}");
    assert!(message.contains("no sha256 is pinned"), "{message}");
    assert!(
        !cache.join(".download-tiny").exists(),
        "nothing was fetched"
    );
}

#[test]
fn the_default_specs_are_pinned() {
    for spec in [
        ModelSpec::all_minilm_l6_v2(),
        ModelSpec::ms_marco_minilm_l6_v2(),
    ] {
        assert_eq!(spec.revision.len(), 40);
        assert!(spec.revision.chars().all(|c| c.is_ascii_hexdigit()));
        let names: Vec<&str> = spec.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["model.safetensors", "tokenizer.json", "config.json"]
        );
    }
    assert!(
        ModelSpec::all_minilm_l6_v2()
            .files
            .iter()
            .all(|f| f.sha256.is_some())
    );
}
