//! The provider `[llm]` names.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_config::{LlmSettings, Paths};

use crate::{AgentCli, ApiKind, CliKind, HttpApi, Local, Provider};

/// Why the configured provider cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The agent CLI is not installed (not on `PATH`).
    #[error(
        "llm.provider is \"{provider}\" but `{program}` is not on PATH; install it, sign in \
         once, or pick another provider"
    )]
    MissingProgram {
        /// The provider.
        provider: String,
        /// The program looked for.
        program: String,
    },
    /// The provider cannot be run without being able to act (run commands, read files,
    /// reach the network), so Cairn does not call it; the message names the safer providers.
    #[error("{0}")]
    Refused(String),
    /// `llm.model` is not a model name (it could be read as a flag, or carries other
    /// characters); nothing is run.
    #[error("llm.model {model:?} is refused: {reason}")]
    BadModel {
        /// The configured value.
        model: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The provider could not be made ready (the GGUF file, …).
    #[error("{0}")]
    Provider(#[from] crate::ProviderError),
}

/// Finds `program` on `PATH` (with the platform's executable suffixes).
pub(crate) fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let exts: Vec<String> = if cfg!(windows) {
        std::env::var("PATHEXT")
            .unwrap_or_else(|_| ".EXE;.CMD;.BAT".into())
            .split(';')
            .map(|e| e.to_ascii_lowercase())
            .chain(std::iter::once(String::new()))
            .collect()
    } else {
        vec![String::new()]
    };
    std::env::split_paths(&path)
        .flat_map(|dir| exts.iter().map(move |e| dir.join(format!("{program}{e}"))))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = fs_err::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

fn expand_home(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest))
            .unwrap_or_else(|| PathBuf::from(p)),
        None => PathBuf::from(p),
    }
}

/// The provider `[llm]` configures, or `None` when `llm.provider` is `""` (no provider:
/// records stay searchable, items wait). Loading a local model takes a few seconds.
///
/// `llm.model` is checked first ([`cairn_config::model_name_problem`]); `codex-cli` is
/// refused ([`crate::CODEX_REFUSAL`]): Codex cannot be run without tools.
pub fn provider_from_settings(
    s: &LlmSettings,
    paths: &Paths,
) -> Result<Option<Arc<dyn Provider>>, SetupError> {
    if s.provider.is_empty() {
        return Ok(None);
    }
    if let Some(reason) = cairn_config::model_name_problem(&s.model) {
        return Err(SetupError::BadModel {
            model: s.model.clone(),
            reason,
        });
    }
    let cli = |kind: CliKind| -> Result<Option<Arc<dyn Provider>>, SetupError> {
        if let Some(why) = kind.refusal() {
            return Err(SetupError::Refused(why.into()));
        }
        let program = which(kind.program()).ok_or_else(|| SetupError::MissingProgram {
            provider: kind.provider_name().into(),
            program: kind.program().into(),
        })?;
        Ok(Some(Arc::new(AgentCli::new(
            kind,
            program,
            &s.model,
            paths.llm_workdir(),
        ))))
    };
    match s.provider.as_str() {
        "" => Ok(None),
        "claude-cli" => cli(CliKind::Claude),
        "codex-cli" => cli(CliKind::Codex),
        "gemini-cli" => cli(CliKind::Gemini),
        "anthropic" => Ok(Some(Arc::new(HttpApi::new(
            ApiKind::Anthropic,
            &s.base_url,
            &s.model,
            HttpApi::find_key(ApiKind::Anthropic),
        )))),
        "openai" => Ok(Some(Arc::new(HttpApi::new(
            ApiKind::OpenAi,
            &s.base_url,
            &s.model,
            HttpApi::find_key(ApiKind::OpenAi),
        )))),
        "local" => Ok(Some(Arc::new(Local::load(&expand_home(&s.model_path))?))),
        other => Err(SetupError::Provider(crate::ProviderError::fatal(format!(
            "llm.provider {other:?} is not a provider Cairn knows"
        )))),
    }
}
