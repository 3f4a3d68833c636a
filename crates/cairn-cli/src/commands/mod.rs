//! Each command's body, one module per command (or per family: `export` holds export and
//! import, `turn` the turn note and `why`). A command gets the settings in effect ([`Ctx`])
//! and its parsed flags (`crate::cli`), talks to the running service or the store through a
//! `Backend`, prints, and ends in a [`Failure`] with its exit code when it fails. The
//! evaluations and benchmarks themselves live in `cairn-eval`; `eval`, `bench` and `ranker`
//! only call them.
use std::path::PathBuf;

use cairn_api::{ApiError, Backend};
use cairn_config::{Paths, Settings};
use cairn_core::ErrorCode;

pub mod bench;
pub mod capture;
pub mod clear;
pub mod config;
pub mod daemon;
pub mod distill;
pub mod eval;
pub mod export;
pub mod hook;
pub mod index;
pub mod integrate;
pub mod items;
pub mod llm;
pub mod mcp;
pub mod memory;
pub mod memory_tool;
pub mod notes;
pub mod open;
pub mod ranker;
pub mod review;
pub mod search;
pub mod skills;
pub mod status;
pub mod turn;

/// What a command runs with: where the data lives, the settings in effect (defaults, file,
/// environment and `--set` layered) and the config file they were read from.
pub struct Ctx {
    /// Where the data, config, logs and runtime files live.
    pub paths: Paths,
    /// The validated settings.
    pub settings: Settings,
    /// The config file (it may not exist).
    pub file: PathBuf,
}

impl Ctx {
    /// The running service, else the store opened directly.
    pub async fn backend(&self) -> Result<Backend, ApiError> {
        Backend::connect_or_open_with(&self.paths, &self.settings, self.file.clone()).await
    }
}

/// A failure with its exit code.
pub struct Failure {
    /// The process's exit code (see `main`).
    pub code: u8,
    /// What went wrong; printed unless empty.
    pub error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error = e.into();
        let code = match error.downcast_ref::<ApiError>().map(|e| e.code) {
            Some(ErrorCode::BadRequest) => 2,
            Some(ErrorCode::Unavailable) => 4,
            _ => 1,
        };
        Self { code, error }
    }
}

/// The project of the working directory, as capture identifies projects.
fn current_project() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|d| cairn_text::project::identify(&d))
}
