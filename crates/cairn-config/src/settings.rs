use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Paths;

/// The shipped defaults, embedded in the binary: the single source of default values, and
/// (commented out) the example config file written on first run.
pub const DEFAULT_TOML: &str = include_str!("../default.toml");

/// Cairn's settings, after layering and validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The local service.
    pub service: ServiceSettings,
    /// Reading agents' session stores.
    pub capture: CaptureSettings,
    /// Local models.
    pub models: ModelSettings,
    /// The vector index.
    pub index: IndexSettings,
    /// The model provider of distillation.
    pub llm: LlmSettings,
    /// Agents' hooks.
    pub hook: HookSettings,
    /// Log files.
    pub log: LogSettings,
}

/// Overrides the hook's deadline for one hook process, in milliseconds (50 to 5,000), whatever
/// the service's `hook.deadline_ms` says. The agent's own hook timeout must stay above it.
pub const HOOK_DEADLINE_ENV: &str = "CAIRN_HOOK_DEADLINE_MS";

/// `[hook]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSettings {
    /// How long an agent's hook waits for the turn note, in milliseconds from its start
    /// ([`HookSettings::DEADLINE_MS`]).
    pub deadline_ms: u32,
}

impl HookSettings {
    /// The range `deadline_ms` may take: below the 2-second timeout `cairn integrate`
    /// gives each hook entry, with room for the process to start and exit.
    pub const DEADLINE_MS: std::ops::RangeInclusive<u32> = 50..=1_500;

    /// The built-in `deadline_ms` (`default.toml`'s `[hook]`, which the tests check parses).
    pub fn default_deadline_ms() -> u32 {
        DEFAULT_TOML
            .parse::<Table>()
            .ok()
            .and_then(|t| t.get("hook")?.get("deadline_ms")?.as_integer())
            .and_then(|ms| u32::try_from(ms).ok())
            .unwrap_or(*Self::DEADLINE_MS.end())
    }
}

/// `[models]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    /// Embedding model folder ("" = default, from the cache).
    pub embedder: String,
    /// Cross-encoder folder ("" = default, from the cache). Debug builds also take
    /// `test:reverse`, a stand-in for Cairn's own tests that reverses the fused order.
    pub reranker: String,
    /// Download missing default models on first use.
    pub download: bool,
    /// Re-rank explicit searches.
    pub rerank: bool,
}

/// `[llm]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// `""` (none), `claude-cli`, `codex-cli`, `gemini-cli`, `anthropic`, `openai` or `local`.
    pub provider: String,
    /// The model name (`""` = the provider's fast default).
    pub model: String,
    /// The endpoint of `anthropic` or `openai` (`""` = the public API).
    pub base_url: String,
    /// The GGUF file of `local`.
    pub model_path: String,
    /// Seconds one call may take.
    pub timeout_seconds: u64,
    /// Retries of a call that failed for a passing reason.
    pub retries: u32,
    /// Calls per day before distillation stops for the day.
    pub daily_calls: u32,
    /// Money (US dollars) per day before distillation stops for the day.
    pub daily_usd: f64,
    /// Whether the model also judges each turn note's best candidates (the LLM judge).
    pub judge: bool,
    /// How long the LLM judge may take, in milliseconds; a later answer is dropped.
    pub judge_ms: u64,
}

/// The provider names `llm.provider` accepts (besides `""`, none).
pub const LLM_PROVIDERS: [&str; 6] = [
    "claude-cli",
    "codex-cli",
    "gemini-cli",
    "anthropic",
    "openai",
    "local",
];

/// The longest model name `llm.model` takes.
pub const MODEL_NAME_MAX: usize = 128;

/// What is wrong with `name` as a model name, or `None` when it is one (or empty: the
/// provider's default). A model name is passed to a provider's program or API as a value, so
/// it is kept to letters, digits and `. - _ : / @`, starts with a letter or digit (never `-`,
/// which a program could read as a flag) and is at most [`MODEL_NAME_MAX`] characters.
pub fn model_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    if name.chars().count() > MODEL_NAME_MAX {
        return Some(format!("is longer than {MODEL_NAME_MAX} characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || ".-_:/@".contains(*c)))
    {
        return Some(format!(
            "{c:?} is not allowed in a model name (letters, digits and . - _ : / @ only)"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some("must start with a letter or a digit (a leading - reads as a flag)".into());
    }
    None
}

/// `[index]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSettings {
    /// `embedded`, `sidecar` or `remote`.
    pub backend: String,
    /// The qdrant binary (sidecar).
    pub qdrant_bin: String,
    /// The remote URL.
    pub url: String,
    /// Shards of the remote collection when Cairn creates it (a cluster: about twice its
    /// nodes).
    pub shards: u32,
    /// Copies of each shard on a remote cluster (2 survives losing a node).
    pub replication: u32,
}

/// `[service]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSettings {
    /// Loopback address of the HTTP API.
    pub bind: IpAddr,
    /// Port of the HTTP API (0 = a free one).
    pub port: u16,
    /// Folder of the built web UI ("" = look next to the program).
    pub ui_dir: String,
}

/// `[capture]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureSettings {
    /// Read agents' session stores at all.
    pub enabled: bool,
    /// First pass this long after start.
    pub startup_delay_seconds: u64,
    /// Period of the regular pass.
    pub interval_minutes: u64,
    /// Delay after a session file stops changing.
    pub settle_seconds: u64,
    /// Frameworks not to read.
    pub disabled: Vec<String>,
    /// Folders whose history files (Aider's, SpecStory's) are captured even when they came
    /// with a cloned repository (committed by someone else, unchanged here): absolute, or
    /// starting with `~/` (see [`CaptureSettings::trusted_folders_under`]).
    pub trusted_history_folders: Vec<PathBuf>,
    /// Aider.
    pub aider: AiderSettings,
    /// SpecStory.
    pub specstory: SpecStorySettings,
}

impl CaptureSettings {
    /// [`CaptureSettings::trusted_history_folders`] with a leading `~` replaced by `home`.
    pub fn trusted_folders_under(&self, home: &Path) -> Vec<PathBuf> {
        under_home(&self.trusted_history_folders, home)
    }
}

/// `[capture.specstory]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecStorySettings {
    /// Folders searched for SpecStory's session files (`.specstory/history/*.md`), besides the
    /// working folders of captured sessions: absolute, or starting with `~/` (see
    /// [`SpecStorySettings::folders_under`]).
    pub folders: Vec<PathBuf>,
}

impl SpecStorySettings {
    /// The folders with a leading `~` replaced by `home`.
    pub fn folders_under(&self, home: &Path) -> Vec<PathBuf> {
        under_home(&self.folders, home)
    }
}

/// Folders with a leading `~` replaced by `home`.
fn under_home(folders: &[PathBuf], home: &Path) -> Vec<PathBuf> {
    folders
        .iter()
        .map(|f| match f.strip_prefix("~") {
            Ok(rest) => home.join(rest),
            Err(_) => f.clone(),
        })
        .collect()
}

/// `[capture.aider]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AiderSettings {
    /// Folders searched for Aider's chat history, besides the working folders of captured
    /// sessions: absolute, or starting with `~/` (see [`AiderSettings::folders_under`]).
    pub folders: Vec<PathBuf>,
}

impl AiderSettings {
    /// The folders with a leading `~` replaced by `home`.
    pub fn folders_under(&self, home: &Path) -> Vec<PathBuf> {
        self.folders
            .iter()
            .map(|f| match f.strip_prefix("~") {
                Ok(rest) => home.join(rest),
                Err(_) => f.clone(),
            })
            .collect()
    }
}

/// `[log]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// A tracing filter.
    pub level: String,
    /// Days of log files kept.
    pub keep_days: u32,
}

/// Where a setting's value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The defaults embedded in the binary.
    Default,
    /// The config file.
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line override.
    Cli,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("the built-in defaults"),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Env(var) => write!(f, "environment variable {var}"),
            Origin::Cli => f.write_str("the command line (--set)"),
        }
    }
}

/// Command-line overrides: `section.key=value` pairs.
#[derive(Debug, Clone, Default)]
pub struct Overrides(pub Vec<String>);

/// A settings problem. Every variant names the key, the value and where it came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A value is of the wrong type, out of range, or not allowed.
    #[error("invalid setting `{key}` = {value} (from {origin}): {reason}")]
    Invalid {
        /// `section.key`
        key: String,
        /// The value as written.
        value: String,
        /// Where it came from.
        origin: Origin,
        /// What is wrong.
        reason: String,
    },
    /// A key that Cairn does not know.
    #[error("unknown setting `{key}` (from {origin}); see the commented example in {example}")]
    Unknown {
        /// `section.key`
        key: String,
        /// Where it came from.
        origin: Origin,
        /// The config file, which lists every known key.
        example: PathBuf,
    },
    /// The config file is not valid TOML.
    #[error("cannot parse config file {path}: {reason}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message (line and column).
        reason: String,
    },
    /// A `--set` override is not `section.key=value`.
    #[error("invalid --set {0:?}: expected section.key=value")]
    Override(String),
    /// The config file could not be read or the example could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Settings with the file they were read from.
#[derive(Debug, Clone)]
pub struct LoadedSettings {
    /// The validated settings.
    pub settings: Settings,
    /// The config file (it may not exist).
    pub file: PathBuf,
    /// Whether this load wrote the commented example file.
    pub wrote_example: bool,
}

type Table = toml::Table;

impl Settings {
    /// Layers defaults → config file → environment → overrides, then validates.
    ///
    /// `env` is the process environment (pass `std::env::vars()`); only `CAIRN__…` variables
    /// are read. When the config file does not exist, a commented example is written there.
    pub fn load(
        paths: &Paths,
        overrides: &Overrides,
        env: impl Iterator<Item = (String, String)>,
    ) -> Result<LoadedSettings, SettingsError> {
        let file = paths.config_file();
        let mut origins: BTreeMap<String, Origin> = BTreeMap::new();
        let mut merged: Table =
            DEFAULT_TOML
                .parse()
                .map_err(|e: toml::de::Error| SettingsError::Syntax {
                    path: "default.toml".into(),
                    reason: e.to_string(),
                })?;
        record_origins(&merged, "", &Origin::Default, &mut origins);

        let mut wrote_example = false;
        match fs_err::read_to_string(&file) {
            Ok(text) => {
                let layer: Table =
                    text.parse()
                        .map_err(|e: toml::de::Error| SettingsError::Syntax {
                            path: file.clone(),
                            reason: e.to_string(),
                        })?;
                merge(
                    &mut merged,
                    layer,
                    "",
                    &Origin::File(file.clone()),
                    &mut origins,
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                write_example(&file)?;
                wrote_example = true;
            }
            Err(e) => return Err(e.into()),
        }

        let mut env: Vec<(String, String)> =
            env.filter(|(k, _)| k.starts_with("CAIRN__")).collect();
        env.sort();
        for (var, raw) in env {
            let parts: Vec<String> = var["CAIRN__".len()..]
                .split("__")
                .map(|p| p.to_ascii_lowercase())
                .collect();
            let layer = nested(&parts, parse_scalar(&raw));
            merge(
                &mut merged,
                layer,
                "",
                &Origin::Env(var.clone()),
                &mut origins,
            );
        }

        for o in &overrides.0 {
            let (key, raw) = o
                .split_once('=')
                .ok_or_else(|| SettingsError::Override(o.clone()))?;
            let parts: Vec<String> = key.trim().split('.').map(str::to_owned).collect();
            if parts.len() < 2 || parts.iter().any(String::is_empty) {
                return Err(SettingsError::Override(o.clone()));
            }
            let layer = nested(&parts, parse_scalar(raw.trim()));
            merge(&mut merged, layer, "", &Origin::Cli, &mut origins);
        }

        let settings = deserialize(&merged, &origins, &file)?;
        settings.validate(&merged, &origins)?;
        Ok(LoadedSettings {
            settings,
            file,
            wrote_example,
        })
    }

    /// These settings with `llm` in place of `[llm]`, validated as a whole; an error names
    /// the key, the value and `origin` (where the change came from, e.g. the config file it
    /// is to be saved in).
    pub fn with_llm(&self, llm: LlmSettings, origin: &Origin) -> Result<Settings, SettingsError> {
        Settings {
            llm,
            ..self.clone()
        }
        .checked("llm", origin)
    }

    /// These settings with `hook` in place of `[hook]`, validated as [`Settings::with_llm`]
    /// validates.
    pub fn with_hook(
        &self,
        hook: HookSettings,
        origin: &Origin,
    ) -> Result<Settings, SettingsError> {
        Settings {
            hook,
            ..self.clone()
        }
        .checked("hook", origin)
    }

    /// These settings validated as a whole, every value from `origin` (`section` names the
    /// changed table when they cannot be written as TOML at all).
    fn checked(self, section: &str, origin: &Origin) -> Result<Settings, SettingsError> {
        let merged = Table::try_from(&self).map_err(|e| SettingsError::Invalid {
            key: section.into(),
            value: String::new(),
            origin: origin.clone(),
            reason: format!("cannot be written as TOML: {e}"),
        })?;
        let mut origins = BTreeMap::new();
        record_origins(&merged, "", origin, &mut origins);
        self.validate(&merged, &origins)?;
        Ok(self)
    }

    /// The settings as TOML (what `cairn config show` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render settings: {e}\n"))
    }

    fn validate(
        &self,
        merged: &Table,
        origins: &BTreeMap<String, Origin>,
    ) -> Result<(), SettingsError> {
        let fail = |key: &str, reason: &str| {
            Err(SettingsError::Invalid {
                key: key.into(),
                value: lookup(merged, key)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
                origin: origins.get(key).cloned().unwrap_or(Origin::Default),
                reason: reason.into(),
            })
        };
        if !self.service.bind.is_loopback() {
            return fail(
                "service.bind",
                "must be a loopback address such as 127.0.0.1 or ::1",
            );
        }
        if self.capture.interval_minutes == 0 {
            return fail("capture.interval_minutes", "must be at least 1");
        }
        if self.capture.startup_delay_seconds > 86_400 {
            return fail(
                "capture.startup_delay_seconds",
                "must be at most 86400 (a day)",
            );
        }
        for (key, folders) in [
            ("capture.aider.folders", &self.capture.aider.folders),
            ("capture.specstory.folders", &self.capture.specstory.folders),
            (
                "capture.trusted_history_folders",
                &self.capture.trusted_history_folders,
            ),
        ] {
            if let Some(bad) = folders
                .iter()
                .find(|f| !(f.is_absolute() || f.starts_with("~")))
            {
                return fail(
                    key,
                    &format!(
                        "{:?} is not an absolute path: give each folder in full (or starting \
                         with ~/)",
                        bad.display().to_string()
                    ),
                );
            }
        }
        if !self.llm.provider.is_empty() && !LLM_PROVIDERS.contains(&self.llm.provider.as_str()) {
            return fail(
                "llm.provider",
                &format!("must be \"\" (none) or one of {}", LLM_PROVIDERS.join(", ")),
            );
        }
        if self.llm.provider == "local" && self.llm.model_path.is_empty() {
            return fail(
                "llm.model_path",
                "must name a GGUF file when llm.provider is \"local\"",
            );
        }
        let model_path = &self.llm.model_path;
        if !(model_path.is_empty()
            || Path::new(model_path).is_absolute()
            || model_path.starts_with('~'))
        {
            return fail(
                "llm.model_path",
                "is not an absolute path: give the file in full (or starting with ~/)",
            );
        }
        if let Some(why) = model_name_problem(&self.llm.model) {
            return fail("llm.model", &why);
        }
        if self.llm.provider == "openai" && self.llm.model.is_empty() {
            return fail(
                "llm.model",
                "must name the model when llm.provider is \"openai\" (for example \"qwen2.5:3b\")",
            );
        }
        let base = &self.llm.base_url;
        if !(base.is_empty() || base.starts_with("http://") || base.starts_with("https://")) {
            return fail("llm.base_url", "must start with http:// or https://");
        }
        if self.llm.timeout_seconds == 0 || self.llm.timeout_seconds > 3_600 {
            return fail("llm.timeout_seconds", "must be between 1 and 3600");
        }
        if self.llm.retries > 10 {
            return fail("llm.retries", "must be at most 10");
        }
        if !(self.llm.daily_usd.is_finite() && self.llm.daily_usd >= 0.0) {
            return fail("llm.daily_usd", "must be a number of dollars, 0 or more");
        }
        if !HookSettings::DEADLINE_MS.contains(&self.hook.deadline_ms) {
            return fail(
                "hook.deadline_ms",
                &format!(
                    "must be {} to {} (milliseconds)",
                    HookSettings::DEADLINE_MS.start(),
                    HookSettings::DEADLINE_MS.end()
                ),
            );
        }
        if !(100..=10_000).contains(&self.llm.judge_ms) {
            return fail(
                "llm.judge_ms",
                "must be between 100 and 10000 (milliseconds)",
            );
        }
        if self.log.keep_days == 0 {
            return fail("log.keep_days", "must be at least 1");
        }
        if !["embedded", "sidecar", "remote"].contains(&self.index.backend.as_str()) {
            return fail(
                "index.backend",
                "must be \"embedded\", \"sidecar\" or \"remote\"",
            );
        }
        if self.index.backend == "sidecar" && self.index.qdrant_bin.is_empty() {
            return fail(
                "index.qdrant_bin",
                "must name the qdrant binary when index.backend is \"sidecar\"",
            );
        }
        if self.index.backend == "remote"
            && !(self.index.url.starts_with("http://") || self.index.url.starts_with("https://"))
        {
            return fail(
                "index.url",
                "must be an http:// or https:// URL when index.backend is \"remote\"",
            );
        }
        if !(1..=64).contains(&self.index.shards) {
            return fail("index.shards", "must be between 1 and 64");
        }
        if !(1..=8).contains(&self.index.replication) {
            return fail("index.replication", "must be between 1 and 8");
        }
        if let Err(reason) = test_reranker_allowed(&self.models.reranker, cfg!(debug_assertions)) {
            return fail("models.reranker", &reason);
        }
        let levels = ["error", "warn", "info", "debug", "trace", "off"];
        let level_ok = self.log.level.split(',').all(|part| {
            let lvl = part
                .rsplit('=')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            levels.contains(&lvl.as_str())
        });
        if !level_ok {
            return fail(
                "log.level",
                "must be error, warn, info, debug, trace or off (optionally per target: \"info,cairn_store=debug\")",
            );
        }
        Ok(())
    }
}

/// Whether `models.reranker` may name a test re-ranker (`test:…`): only `test:reverse`, and
/// only in a debug build (Cairn's own tests); a release build refuses every one.
fn test_reranker_allowed(reranker: &str, debug_build: bool) -> Result<(), String> {
    let Some(name) = reranker.strip_prefix("test:") else {
        return Ok(());
    };
    if !debug_build {
        return Err(format!(
            "the test re-ranker \"test:{name}\" exists only in debug builds, for Cairn's own tests, and this is a release build; use a cross-encoder folder, or \"\" for the default"
        ));
    }
    if name != "reverse" {
        return Err("the only test re-ranker is \"test:reverse\"".into());
    }
    Ok(())
}

fn deserialize(
    merged: &Table,
    origins: &BTreeMap<String, Origin>,
    file: &Path,
) -> Result<Settings, SettingsError> {
    let value = toml::Value::Table(merged.clone());
    serde_path_to_error::deserialize::<_, Settings>(value).map_err(|err| {
        let key = err.path().to_string();
        let inner = err.into_inner().to_string();
        // The deserializer appends "in `key`" on its own line; the key is named already.
        let inner = inner.lines().next().unwrap_or_default().trim().to_owned();
        if let Some(rest) = inner.strip_prefix("unknown field `") {
            let field = rest.split('`').next().unwrap_or(rest);
            let full = if key == "." || key.is_empty() {
                field.to_owned()
            } else {
                format!("{key}.{field}")
            };
            let origin = origins
                .get(&full)
                .cloned()
                .unwrap_or(Origin::File(file.to_path_buf()));
            return SettingsError::Unknown {
                key: full,
                origin,
                example: file.to_path_buf(),
            };
        }
        SettingsError::Invalid {
            value: lookup(merged, &key)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "(missing)".into()),
            origin: origins.get(&key).cloned().unwrap_or(Origin::Default),
            key,
            reason: inner,
        }
    })
}

fn lookup<'a>(table: &'a Table, dotted: &str) -> Option<&'a toml::Value> {
    let mut parts = dotted.split('.');
    let mut cur = table.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_table()?.get(p)?;
    }
    Some(cur)
}

fn record_origins(t: &Table, prefix: &str, origin: &Origin, out: &mut BTreeMap<String, Origin>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) => record_origins(sub, &key, origin, out),
            _ => {
                out.insert(key, origin.clone());
            }
        }
    }
}

fn merge(
    base: &mut Table,
    layer: Table,
    prefix: &str,
    origin: &Origin,
    origins: &mut BTreeMap<String, Origin>,
) {
    for (k, v) in layer {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(l)) => {
                merge(b, l, &key, origin, origins)
            }
            (_, v) => {
                record_origins_value(&v, &key, origin, origins);
                base.insert(k, v);
            }
        }
    }
}

fn record_origins_value(
    v: &toml::Value,
    key: &str,
    origin: &Origin,
    origins: &mut BTreeMap<String, Origin>,
) {
    match v {
        toml::Value::Table(t) => record_origins(t, key, origin, origins),
        _ => {
            origins.insert(key.to_owned(), origin.clone());
        }
    }
}

fn nested(parts: &[String], value: toml::Value) -> Table {
    let mut t = Table::new();
    match parts {
        [] => {}
        [last] => {
            t.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            t.insert(first.clone(), toml::Value::Table(nested(rest, value)));
        }
    }
    t
}

/// An environment or command-line value: a TOML scalar when it parses as one (`7420`,
/// `true`, `"x"`), else the raw text as a string.
fn parse_scalar(raw: &str) -> toml::Value {
    format!("v = {raw}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_owned()))
}

/// The `[llm]` keys [`save_llm`] writes, with their values.
fn llm_pairs(llm: &LlmSettings) -> [(&'static str, toml::Value); 8] {
    [
        ("provider", toml::Value::String(llm.provider.clone())),
        ("model", toml::Value::String(llm.model.clone())),
        ("base_url", toml::Value::String(llm.base_url.clone())),
        ("model_path", toml::Value::String(llm.model_path.clone())),
        (
            "daily_calls",
            toml::Value::Integer(i64::from(llm.daily_calls)),
        ),
        ("daily_usd", toml::Value::Float(llm.daily_usd)),
        ("judge", toml::Value::Boolean(llm.judge)),
        (
            "judge_ms",
            toml::Value::Integer(i64::try_from(llm.judge_ms).unwrap_or(i64::MAX)),
        ),
    ]
}

/// Writes the provider, model, endpoint, model file, daily budget and judge of `llm` into the
/// `[llm]` table of the config file `file`, keeping every other line (comments included) as
/// written: a key already set there is replaced in place, a missing one goes right under the
/// table's header, and a file with no `[llm]` table gets one at its end. The file is replaced
/// atomically (a temporary file renamed over it).
pub fn save_llm(file: &Path, llm: &LlmSettings) -> Result<(), SettingsError> {
    save_table(file, "llm", &llm_pairs(llm))
}

/// Writes `hook` into the `[hook]` table of the config file `file`, the way [`save_llm`]
/// edits `[llm]`.
pub fn save_hook(file: &Path, hook: &HookSettings) -> Result<(), SettingsError> {
    save_table(
        file,
        "hook",
        &[(
            "deadline_ms",
            toml::Value::Integer(i64::from(hook.deadline_ms)),
        )],
    )
}

/// Writes the backend, URL, shards and replication of `index` into the `[index]` table of the
/// config file `file`, the way [`save_llm`] edits `[llm]`.
pub fn save_index(file: &Path, index: &IndexSettings) -> Result<(), SettingsError> {
    save_table(
        file,
        "index",
        &[
            ("backend", toml::Value::String(index.backend.clone())),
            ("url", toml::Value::String(index.url.clone())),
            ("shards", toml::Value::Integer(i64::from(index.shards))),
            (
                "replication",
                toml::Value::Integer(i64::from(index.replication)),
            ),
        ],
    )
}

/// Sets `pairs` in the table `[name]` of the config file, keeping every other line.
fn save_table(
    file: &Path,
    name: &str,
    pairs: &[(&'static str, toml::Value)],
) -> Result<(), SettingsError> {
    let text = match fs_err::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.into()),
    };
    let header_text = format!("[{name}]");
    let line_of = |key: &str, value: &toml::Value| format!("{key} = {value}");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix(header_text.as_str())
            .is_some_and(|rest| {
                let rest = rest.trim();
                rest.is_empty() || rest.starts_with('#')
            })
    });
    match header {
        Some(h) => {
            let end = lines[h + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with('['))
                .map_or(lines.len(), |i| h + 1 + i);
            let mut missing = Vec::new();
            for (key, value) in pairs {
                let found = (h + 1..end).find(|&i| {
                    let t = lines[i].trim_start();
                    t.strip_prefix(key)
                        .is_some_and(|rest| rest.trim_start().starts_with('='))
                });
                match found {
                    Some(i) => lines[i] = line_of(key, value),
                    None => missing.push(line_of(key, value)),
                }
            }
            lines.splice(h + 1..h + 1, missing);
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push(header_text.clone());
            lines.extend(pairs.iter().map(|(k, v)| line_of(k, v)));
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    // The result must read back as exactly what was asked, or nothing is written.
    let parsed: Table = out
        .parse()
        .map_err(|e: toml::de::Error| SettingsError::Syntax {
            path: file.to_path_buf(),
            reason: format!("the {header_text} table could not be updated in place: {e}"),
        })?;
    for (key, value) in pairs {
        if lookup(&parsed, &format!("{name}.{key}")) != Some(value) {
            return Err(SettingsError::Invalid {
                key: format!("{name}.{key}"),
                value: value.to_string(),
                origin: Origin::File(file.to_path_buf()),
                reason: format!(
                    "the config file sets it in a way Cairn cannot edit in place \
                     (outside its {header_text} table); edit the file by hand"
                ),
            });
        }
    }
    if let Some(dir) = file.parent() {
        fs_err::create_dir_all(dir)?;
    }
    let tmp = file.with_extension("toml.saving");
    fs_err::write(&tmp, out)?;
    fs_err::rename(&tmp, file)?;
    Ok(())
}

/// The example file: the defaults with every setting commented out.
fn write_example(file: &Path) -> std::io::Result<()> {
    let mut out = String::new();
    for line in DEFAULT_TOML.lines() {
        let t = line.trim_start();
        if !t.is_empty() && !t.starts_with('#') && !t.starts_with('[') {
            out.push_str("# ");
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(dir) = file.parent() {
        fs_err::create_dir_all(dir)?;
    }
    // Never clobber a file another process wrote meanwhile.
    match fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
    {
        Ok(mut f) => std::io::Write::write_all(&mut f, out.as_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(
        home: &Path,
        file: Option<&str>,
        env: &[(&str, &str)],
        set: &[&str],
    ) -> Result<LoadedSettings, SettingsError> {
        let paths = Paths::under(home);
        if let Some(text) = file {
            fs_err::create_dir_all(&paths.config).unwrap();
            fs_err::write(paths.config_file(), text).unwrap();
        }
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        Settings::load(
            &paths,
            &Overrides(set.iter().map(|s| s.to_string()).collect()),
            env,
        )
    }

    #[test]
    fn defaults_load_and_first_run_writes_a_commented_example_that_parses_to_the_defaults() {
        let home = tempfile::tempdir().unwrap();
        let first = load(home.path(), None, &[], &[]).unwrap();
        assert!(first.wrote_example);
        let text = fs_err::read_to_string(&first.file).unwrap();
        assert!(text.contains("# port = 0"), "{text}");
        let second = load(home.path(), None, &[], &[]).unwrap();
        assert!(!second.wrote_example);
        assert_eq!(first.settings, second.settings);
        assert_eq!(second.settings.service.port, 0);
        assert!(second.settings.capture.enabled);
    }

    #[test]
    fn the_hook_deadline_defaults_saves_and_refuses_what_is_out_of_range() {
        let home = tempfile::tempdir().unwrap();
        let loaded = load(home.path(), None, &[], &[]).unwrap();
        assert_eq!(
            loaded.settings.hook.deadline_ms,
            HookSettings::default_deadline_ms()
        );
        assert!(HookSettings::DEADLINE_MS.contains(&HookSettings::default_deadline_ms()));
        save_hook(&loaded.file, &HookSettings { deadline_ms: 750 }).unwrap();
        let again = load(home.path(), None, &[], &[]).unwrap();
        assert_eq!(again.settings.hook.deadline_ms, 750);
        let e = load(
            home.path(),
            None,
            &[("CAIRN__HOOK__DEADLINE_MS", "20")],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("hook.deadline_ms") && e.contains("CAIRN__HOOK__DEADLINE_MS"),
            "{e}"
        );
        let e = again
            .settings
            .with_hook(
                HookSettings { deadline_ms: 9_000 },
                &Origin::File(again.file.clone()),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("hook.deadline_ms") && e.contains("9000"), "{e}");
    }

    #[test]
    fn layers_apply_in_order_file_env_cli() {
        let home = tempfile::tempdir().unwrap();
        let file =
            "[service]\nport = 1111\n[capture]\ninterval_minutes = 5\n[log]\nlevel = \"debug\"\n";
        let s = load(
            home.path(),
            Some(file),
            &[
                ("CAIRN__SERVICE__PORT", "2222"),
                ("CAIRN__CAPTURE__ENABLED", "false"),
                ("OTHER", "x"),
            ],
            &["service.port=3333"],
        )
        .unwrap()
        .settings;
        assert_eq!(s.service.port, 3333);
        assert!(!s.capture.enabled);
        assert_eq!(s.capture.interval_minutes, 5);
        assert_eq!(s.log.level, "debug");
    }

    #[test]
    fn a_bad_value_names_key_value_and_file() {
        let home = tempfile::tempdir().unwrap();
        let err = load(home.path(), Some("[service]\nport = \"abc\"\n"), &[], &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("service.port"), "{msg}");
        assert!(msg.contains("\"abc\""), "{msg}");
        assert!(msg.contains("config.toml"), "{msg}");
    }

    #[test]
    fn out_of_range_and_non_loopback_values_are_refused_with_their_origin() {
        let home = tempfile::tempdir().unwrap();
        let msg = load(home.path(), None, &[("CAIRN__SERVICE__PORT", "70000")], &[])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("service.port")
                && msg.contains("70000")
                && msg.contains("CAIRN__SERVICE__PORT"),
            "{msg}"
        );
        let msg = load(home.path(), None, &[], &["service.bind=\"0.0.0.0\""])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("service.bind")
                && msg.contains("loopback")
                && msg.contains("command line"),
            "{msg}"
        );
        let msg = load(home.path(), None, &[("CAIRN__LOG__LEVEL", "loud")], &[])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("log.level") && msg.contains("loud"), "{msg}");
    }

    #[test]
    fn the_test_reranker_is_for_debug_builds_only() {
        // This test runs in a debug build: `test:reverse` loads, another test name does not.
        let home = tempfile::tempdir().unwrap();
        let ok = load(
            home.path(),
            None,
            &[("CAIRN__MODELS__RERANKER", "test:reverse")],
            &[],
        )
        .unwrap();
        assert_eq!(ok.settings.models.reranker, "test:reverse");
        let msg = load(
            home.path(),
            None,
            &[("CAIRN__MODELS__RERANKER", "test:shuffle")],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            msg.contains("models.reranker") && msg.contains("test:reverse"),
            "{msg}"
        );
        // What a release build says, and that a real folder is never taken for a test name.
        let msg = test_reranker_allowed("test:reverse", false).unwrap_err();
        assert!(
            msg.contains("only in debug builds") && msg.contains("release build"),
            "{msg}"
        );
        assert!(test_reranker_allowed("/models/ms-marco", false).is_ok());
        assert!(test_reranker_allowed("", false).is_ok());
    }

    #[test]
    fn unknown_keys_and_bad_syntax_are_named() {
        let home = tempfile::tempdir().unwrap();
        let msg = load(home.path(), Some("[service]\nprot = 1\n"), &[], &[])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("service.prot"), "{msg}");
        let msg = load(home.path(), Some("[service\nport = 1\n"), &[], &[])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("cannot parse") && msg.contains("config.toml"),
            "{msg}"
        );
        let fresh = tempfile::tempdir().unwrap();
        let msg = load(fresh.path(), None, &[], &["justakey"])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("justakey"), "{msg}");
    }

    #[test]
    fn aider_folders_come_from_a_toml_list_and_must_be_absolute() {
        let home = tempfile::tempdir().unwrap();
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert!(s.capture.aider.folders.is_empty());
        let text = fs_err::read_to_string(Paths::under(home.path()).config_file()).unwrap();
        assert!(text.contains("[capture.aider]\n"), "{text}");
        assert!(text.contains("# folders = []"), "{text}");
        let s = load(
            home.path(),
            None,
            &[(
                "CAIRN__CAPTURE__AIDER__FOLDERS",
                r#"["/srv/app", "~/src/site"]"#,
            )],
            &[],
        )
        .unwrap()
        .settings;
        assert_eq!(
            s.capture.aider.folders_under(Path::new("/home/me")),
            [
                PathBuf::from("/srv/app"),
                PathBuf::from("/home/me/src/site")
            ]
        );
        let file = "[capture.aider]\nfolders = [\"/srv/app\"]\n";
        let s = load(home.path(), Some(file), &[], &[]).unwrap().settings;
        assert_eq!(s.capture.aider.folders, [PathBuf::from("/srv/app")]);
        let msg = load(
            home.path(),
            None,
            &[("CAIRN__CAPTURE__AIDER__FOLDERS", r#"["src/app"]"#)],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            msg.contains("capture.aider.folders")
                && msg.contains("src/app")
                && msg.contains("absolute")
                && msg.contains("CAIRN__CAPTURE__AIDER__FOLDERS"),
            "{msg}"
        );
        let msg = load(
            home.path(),
            None,
            &[("CAIRN__CAPTURE__AIDER__FOLDERS", "/srv/app")],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("capture.aider.folders"), "{msg}");
    }

    #[test]
    fn trusted_history_and_specstory_folders_are_absolute_lists() {
        let home = tempfile::tempdir().unwrap();
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert!(s.capture.trusted_history_folders.is_empty());
        assert!(s.capture.specstory.folders.is_empty());
        let text = fs_err::read_to_string(Paths::under(home.path()).config_file()).unwrap();
        assert!(text.contains("# trusted_history_folders = []"), "{text}");
        assert!(text.contains("[capture.specstory]\n"), "{text}");
        let file = "[capture]\ntrusted_history_folders = [\"~/src/forks\"]\n\
                    [capture.specstory]\nfolders = [\"/srv/site\"]\n";
        let s = load(home.path(), Some(file), &[], &[]).unwrap().settings;
        assert_eq!(
            s.capture.trusted_folders_under(Path::new("/home/me")),
            [PathBuf::from("/home/me/src/forks")]
        );
        assert_eq!(
            s.capture.specstory.folders_under(Path::new("/home/me")),
            [PathBuf::from("/srv/site")]
        );
        let msg = load(
            home.path(),
            None,
            &[("CAIRN__CAPTURE__TRUSTED_HISTORY_FOLDERS", r#"["forks"]"#)],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            msg.contains("capture.trusted_history_folders")
                && msg.contains("forks")
                && msg.contains("absolute"),
            "{msg}"
        );
        let msg = load(
            home.path(),
            None,
            &[("CAIRN__CAPTURE__SPECSTORY__FOLDERS", r#"["site"]"#)],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("capture.specstory.folders"), "{msg}");
    }

    #[test]
    fn a_model_name_that_could_read_as_a_flag_or_carry_anything_else_is_refused() {
        let home = tempfile::tempdir().unwrap();
        for bad in [
            "--yolo",
            "-m --yolo",
            "haiku; rm -rf ~",
            "a\nb",
            &"x".repeat(129),
        ] {
            let msg = load(
                home.path(),
                None,
                &[("CAIRN__LLM__MODEL", bad)],
                &["llm.provider=gemini-cli"],
            )
            .unwrap_err()
            .to_string();
            assert!(
                msg.contains("llm.model") && msg.contains("CAIRN__LLM__MODEL"),
                "{bad:?}: {msg}"
            );
        }
        for good in [
            "",
            "haiku",
            "qwen2.5:3b",
            "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
            "claude-3-5-haiku@20241022",
            "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        ] {
            assert_eq!(model_name_problem(good), None, "{good}");
            let s = load(home.path(), None, &[("CAIRN__LLM__MODEL", good)], &[]).unwrap();
            assert_eq!(s.settings.llm.model, good);
        }
        assert!(model_name_problem("-x").unwrap().contains("leading -"));
    }

    fn llm(provider: &str, base_url: &str) -> LlmSettings {
        let mut l = load(tempfile::tempdir().unwrap().path(), None, &[], &[])
            .unwrap()
            .settings
            .llm;
        l.provider = provider.into();
        l.base_url = base_url.into();
        l.daily_calls = 50;
        l.daily_usd = 0.25;
        l
    }

    #[test]
    fn save_llm_edits_the_example_file_in_place_and_loads_back() {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::under(home.path());
        // The first load writes the commented example.
        let first = load(home.path(), None, &[], &[]).unwrap();
        assert!(first.wrote_example);
        save_llm(&paths.config_file(), &llm("claude-cli", "")).unwrap();
        let text = fs_err::read_to_string(paths.config_file()).unwrap();
        assert!(
            text.contains("# The model that distils settled conversations"),
            "{text}"
        );
        assert!(text.contains("[log]"), "{text}");
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert_eq!(s.llm.provider, "claude-cli");
        assert_eq!((s.llm.daily_calls, s.llm.daily_usd), (50, 0.25));
        // A second save replaces the keys it wrote, once each.
        let mut local_server = llm("openai", "http://127.0.0.1:11434/v1");
        local_server.model = "qwen2.5:3b".into();
        save_llm(&paths.config_file(), &local_server).unwrap();
        let text = fs_err::read_to_string(paths.config_file()).unwrap();
        assert_eq!(text.matches("\nprovider = ").count(), 1, "{text}");
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert_eq!(s.llm.provider, "openai");
        assert_eq!(s.llm.base_url, "http://127.0.0.1:11434/v1");
    }

    #[test]
    fn save_index_names_the_remote_backend_in_place_and_loads_back() {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::under(home.path());
        fs_err::create_dir_all(&paths.config).unwrap();
        let mine = "[index]\n# my own comment\nbackend = \"embedded\"\n\n[service]\nport = 7420\n";
        fs_err::write(paths.config_file(), mine).unwrap();
        let mut index = load(home.path(), None, &[], &[]).unwrap().settings.index;
        index.backend = "remote".into();
        index.url = "https://qdrant.example.com:6334".into();
        index.shards = 6;
        index.replication = 2;
        save_index(&paths.config_file(), &index).unwrap();
        let text = fs_err::read_to_string(paths.config_file()).unwrap();
        assert!(text.contains("# my own comment\n"), "{text}");
        assert!(text.ends_with("[service]\nport = 7420\n"), "{text}");
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert_eq!(s.index, index);
        assert_eq!(s.service.port, 7420);
        // A layout out of range is refused with the key named.
        let err = load(home.path(), None, &[("CAIRN__INDEX__SHARDS", "0")], &[]).unwrap_err();
        assert!(err.to_string().contains("index.shards"), "{err}");
    }

    #[test]
    fn save_llm_adds_a_table_to_a_file_without_one_and_keeps_the_rest() {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::under(home.path());
        fs_err::create_dir_all(&paths.config).unwrap();
        fs_err::write(paths.config_file(), "[service]\nport = 7420 # mine\n").unwrap();
        save_llm(&paths.config_file(), &llm("gemini-cli", "")).unwrap();
        let text = fs_err::read_to_string(paths.config_file()).unwrap();
        assert!(
            text.starts_with("[service]\nport = 7420 # mine\n"),
            "{text}"
        );
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        assert_eq!(
            (s.service.port, s.llm.provider.as_str()),
            (7420, "gemini-cli")
        );
    }

    #[test]
    fn with_llm_refuses_a_bad_choice_naming_key_value_and_file() {
        let home = tempfile::tempdir().unwrap();
        let s = load(home.path(), None, &[], &[]).unwrap().settings;
        let origin = Origin::File(home.path().join("config.toml"));
        let msg = s
            .with_llm(llm("openai", "ftp://nowhere"), &origin)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("llm.") && msg.contains("config.toml"), "{msg}");
        let mut ok = llm("openai", "http://127.0.0.1:1/v1");
        ok.model = "qwen2.5:3b".into();
        assert_eq!(s.with_llm(ok.clone(), &origin).unwrap().llm, ok);
        let msg = s
            .with_llm(llm("nobody", ""), &origin)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("llm.provider") && msg.contains("nobody"),
            "{msg}"
        );
    }
}
