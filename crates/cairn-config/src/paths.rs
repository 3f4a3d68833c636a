use std::path::{Path, PathBuf};

/// The environment variable that moves every Cairn directory under one folder.
pub const CAIRN_HOME: &str = "CAIRN_HOME";

/// Set (to `1`) in the environment of every agent CLI Cairn runs for its own model calls.
/// Cairn's hooks see it and do nothing, so such a call never recalls memory or gets captured
/// as one of the user's conversations.
pub const RECURSION_GUARD: &str = "CAIRN_INTERNAL_CALL";

/// A failure to work out where Cairn's files live.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    /// No home directory could be found and `CAIRN_HOME` is not set.
    #[error("cannot find a home directory for Cairn's files; set CAIRN_HOME to a folder")]
    NoHome,
    /// `CAIRN_HOME` is set but is not an absolute path.
    #[error("CAIRN_HOME must be an absolute path, got {0:?}")]
    RelativeHome(PathBuf),
}

/// Every directory Cairn uses. Nothing else in Cairn builds a path to its own files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Logs, index, notes: everything remembered.
    pub data: PathBuf,
    /// The config file.
    pub config: PathBuf,
    /// Rolling log files.
    pub logs: PathBuf,
    /// The running service's address, token and lock.
    pub runtime: PathBuf,
}

impl Paths {
    /// The directories for this user: `CAIRN_HOME` when set, else the OS conventions
    /// (Linux: XDG data/config/state/runtime dirs; macOS: Application Support, Logs;
    /// Windows: AppData\Roaming and AppData\Local).
    pub fn from_env() -> Result<Self, PathsError> {
        if let Some(home) = std::env::var_os(CAIRN_HOME).filter(|h| !h.is_empty()) {
            let home = PathBuf::from(home);
            if !home.is_absolute() {
                return Err(PathsError::RelativeHome(home));
            }
            return Ok(Self::under(&home));
        }
        let dirs =
            directories::ProjectDirs::from("dev", "Cairn", "Cairn").ok_or(PathsError::NoHome)?;
        let data = dirs.data_dir().to_path_buf();
        let logs = match dirs.state_dir() {
            Some(state) => state.join("logs"),
            None => dirs.data_local_dir().join("logs"),
        };
        let runtime = match dirs.runtime_dir() {
            Some(rt) => rt.to_path_buf(),
            None => dirs.data_local_dir().join("run"),
        };
        Ok(Self {
            data,
            config: dirs.config_dir().to_path_buf(),
            logs,
            runtime,
        })
    }

    /// All directories under one folder (what `CAIRN_HOME` does).
    pub fn under(home: &Path) -> Self {
        Self {
            data: home.join("data"),
            config: home.join("config"),
            logs: home.join("logs"),
            runtime: home.join("run"),
        }
    }

    /// The SQLite store: the logs that are the source of truth.
    pub fn database(&self) -> PathBuf {
        self.data.join("cairn.db")
    }

    /// The search index folder (rebuildable from the logs).
    pub fn index_dir(&self) -> PathBuf {
        self.data.join("index")
    }

    /// The notes root.
    pub fn notes_dir(&self) -> PathBuf {
        self.data.join("notes")
    }

    /// The working folder of the agent CLIs Cairn runs for its own model calls. Capture
    /// never reads a conversation held in it.
    pub fn llm_workdir(&self) -> PathBuf {
        self.data.join("model-calls")
    }

    /// A ranker trained on this machine (`cairn ranker train --labels`); the service uses it
    /// instead of the shipped one when it is there.
    pub fn ranker_model(&self) -> PathBuf {
        self.data.join("ranker").join("model.txt")
    }

    /// The latest `cairn eval note` figures, shown in the app.
    pub fn note_eval(&self) -> PathBuf {
        self.data.join("note-eval.json")
    }

    /// The secret that makes the marks around what Cairn injects into agents' context
    /// checkable (`cairn_text::marks::MarkKey`; owner-only).
    pub fn mark_key(&self) -> PathBuf {
        self.data.join("mark.key")
    }

    /// The config file.
    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    /// Held (locked) by the one process that owns the store.
    pub fn lock_file(&self) -> PathBuf {
        self.runtime.join("service.lock")
    }

    /// The running service's address and token (mode 0600).
    pub fn service_file(&self) -> PathBuf {
        self.runtime.join("service.json")
    }

    /// Creates every directory (owner-only where the OS supports it).
    pub fn create_all(&self) -> std::io::Result<()> {
        for dir in [&self.data, &self.config, &self.logs, &self.runtime] {
            fs_err::create_dir_all(dir)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_keeps_everything_inside_home() {
        let p = Paths::under(Path::new("/tmp/x"));
        for dir in [&p.data, &p.config, &p.logs, &p.runtime] {
            assert!(dir.starts_with("/tmp/x"), "{dir:?}");
        }
        assert!(p.database().starts_with(&p.data));
        assert!(p.service_file().starts_with(&p.runtime));
        assert_ne!(p.data, p.runtime);
    }
}
