//! # cairn-config
//!
//! Two things every Cairn process needs before it does anything else:
//!
//! - [`Paths`]: the data, config, log and runtime directories, following each operating
//!   system's conventions. `CAIRN_HOME` moves all of them under one folder (tests, portable
//!   use).
//! - [`Settings`]: one typed, validated settings value, layered as defaults embedded in the
//!   binary (`default.toml`, the single source of defaults) → the config file →
//!   `CAIRN__SECTION__KEY` environment variables → command-line overrides.
//!
//! ```
//! use cairn_config::{Paths, Settings, Overrides};
//! let home = tempfile::tempdir().unwrap();
//! let paths = Paths::under(home.path());
//! let loaded = Settings::load(&paths, &Overrides::default(), std::iter::empty()).unwrap();
//! assert_eq!(loaded.settings.capture.interval_minutes, 15);
//! ```
#![deny(missing_docs)]

mod paths;
pub mod secrets;
mod settings;

pub use paths::{CAIRN_HOME, Paths, PathsError, RECURSION_GUARD};
pub use settings::{
    CaptureSettings, DEFAULT_TOML, HOOK_DEADLINE_ENV, HookSettings, IndexSettings, LLM_PROVIDERS,
    LlmSettings, LoadedSettings, LogSettings, MODEL_NAME_MAX, ModelSettings, Origin, Overrides,
    ServiceSettings, Settings, SettingsError, model_name_problem, save_hook, save_index, save_llm,
};
