//! Where the user's home is and which environment variables are set, captured once so tests
//! can point every framework at a temporary directory.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// The home directory and environment variables that decide where agents keep their config.
///
/// ```
/// use cairn_integrate::Env;
/// let env = Env::for_home("/tmp/home").with_var("CODEX_HOME", "/tmp/codex");
/// assert_eq!(env.var("CODEX_HOME"), Some("/tmp/codex"));
/// assert_eq!(env.var("XDG_CONFIG_HOME"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// The user's home directory (`~`).
    pub home: PathBuf,
    vars: HashMap<String, String>,
}

impl Env {
    /// The current process's home directory and environment variables. Variables whose name or
    /// value is not valid Unicode are skipped.
    pub fn from_process() -> Result<Self> {
        let home = std::env::home_dir()
            .filter(|home| !home.as_os_str().is_empty())
            .ok_or(Error::NoHome)?;
        let vars = std::env::vars_os()
            .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        Ok(Self { home, vars })
    }

    /// A home directory with no environment variables set (for tests and previews).
    pub fn for_home(home: impl Into<PathBuf>) -> Self {
        Self {
            home: home.into(),
            vars: HashMap::new(),
        }
    }

    /// The same environment with one more variable set.
    #[must_use]
    pub fn with_var(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(key.into(), value.into());
        self
    }

    /// A variable's value; an empty value counts as unset, as the agents treat it.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }

    /// A directory named by a variable, else `~/<default>`.
    pub(crate) fn dir(&self, key: &str, default_under_home: &str) -> PathBuf {
        match self.var(key) {
            Some(dir) => PathBuf::from(dir),
            None => self.home.join(default_under_home),
        }
    }
}
