//! The declarative table of frameworks: each entry says where its stores live, which
//! environment variables move them, which files under a root are session stores, and which
//! reader family parses them.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::turn::Turn;

/// The operating system whose conventions apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unix desktops (XDG).
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

/// The user's home and environment, as capture sees them. Tests build one around a fake
/// home; the service uses [`Env::from_process`].
#[derive(Debug, Clone)]
pub struct Env {
    /// The home directory (`HOME`, or the profile folder on Windows).
    pub home: PathBuf,
    /// Environment variables.
    pub vars: BTreeMap<String, String>,
    /// Whose conventions apply.
    pub os: Os,
}

impl Env {
    /// The current process's home and environment.
    pub fn from_process() -> Option<Self> {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        let home = vars
            .get("HOME")
            .or_else(|| vars.get("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)?;
        let os = if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        };
        Some(Self { home, vars, os })
    }

    /// A fake home on Linux conventions, with the given variables (tests).
    pub fn fake(home: &Path, vars: &[(&str, &str)]) -> Self {
        let mut map = BTreeMap::new();
        map.insert("HOME".to_owned(), home.display().to_string());
        for (k, v) in vars {
            map.insert((*k).to_owned(), (*v).to_owned());
        }
        Self {
            home: home.to_path_buf(),
            vars: map,
            os: Os::Linux,
        }
    }

    /// A non-empty environment variable.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A path from a variable, or `default` under the home.
    pub fn dir_from(&self, var: &str, default: &str) -> PathBuf {
        match self.var(var) {
            Some(v) => PathBuf::from(v),
            None => self.home.join(default),
        }
    }

    /// `$XDG_DATA_HOME` or its platform equivalent (`~/.local/share`, `~/Library/Application
    /// Support`, `%APPDATA%`).
    pub fn data_home(&self) -> PathBuf {
        match self.os {
            Os::Linux => self.dir_from("XDG_DATA_HOME", ".local/share"),
            Os::MacOs => self.home.join("Library/Application Support"),
            Os::Windows => self.dir_from("APPDATA", "AppData/Roaming"),
        }
    }

    /// `$XDG_CONFIG_HOME` or its platform equivalent.
    pub fn config_home(&self) -> PathBuf {
        match self.os {
            Os::Linux => self.dir_from("XDG_CONFIG_HOME", ".config"),
            Os::MacOs => self.home.join("Library/Application Support"),
            Os::Windows => self.dir_from("APPDATA", "AppData/Roaming"),
        }
    }

    /// The `globalStorage/<extension>` folders of every VS Code family editor that may hold
    /// an extension's data (Code, Insiders, VSCodium, Cursor, Windsurf).
    pub fn vscode_global_storage(&self, extension: &str) -> Vec<PathBuf> {
        ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"]
            .iter()
            .map(|app| {
                self.config_home()
                    .join(app)
                    .join("User/globalStorage")
                    .join(extension)
            })
            .collect()
    }
}

/// How a framework's stores are read.
#[derive(Clone, Copy)]
pub enum Reader {
    /// (a) Append-only JSONL (or any append-only line format): resumed from a byte offset
    /// with the parser's saved state.
    Lines(fn(path: &Path, saved: Option<serde_json::Value>) -> Box<dyn LineParser>),
    /// (b) SQLite updated in place: opened read-only, read by high-water mark.
    Sqlite(SqliteReadFn),
    /// (c) Whole-file JSON rewritten on change: re-parsed when its modification time changes.
    WholeFile(fn(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String>),
}

/// Reads the sessions of an SQLite store that changed after `since` (the high-water mark
/// from the previous pass, in the store's own units, as text). Returns every turn of each
/// changed session (unchanged turns are recognised and skipped when stored) and the new
/// high-water mark.
pub type SqliteReadFn = fn(
    conn: &rusqlite::Connection,
    path: &Path,
    since: Option<&str>,
) -> Result<SqliteBatch, String>;

/// What one SQLite read returns.
#[derive(Debug, Default)]
pub struct SqliteBatch {
    /// Turns of the sessions that changed.
    pub turns: Vec<Turn>,
    /// The new high-water mark (unchanged when nothing changed).
    pub high_water: Option<String>,
    /// Rows that could not be understood, each a sentence (counted as warnings).
    pub warnings: Vec<String>,
}

/// A resumable parser for an append-only line store. The reader hands it complete lines
/// only, and saves its state with the byte offset after each pass.
pub trait LineParser: Send {
    /// Consumes one complete line (without its newline). Turns whose end was seen are pushed
    /// to `out`. An `Err` is a warning about this line (malformed, unknown shape): the line
    /// is skipped and reading goes on.
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String>;
    /// The turn still open after the last line, if any.
    fn open_turn(&self) -> Option<Turn>;
    /// The whole parser state, to resume at the saved offset on the next pass.
    fn save(&self) -> serde_json::Value;
}

/// One framework in the table.
#[derive(Clone, Copy)]
pub struct FrameworkSpec {
    /// Stable name used in records and settings (`claude-code`, `codex`, …).
    pub name: &'static str,
    /// Name for people.
    pub display: &'static str,
    /// Environment variables that move its stores (documentation and `status`).
    pub env_vars: &'static [&'static str],
    /// The folders (or files) under which its stores live, for this home and environment.
    pub roots: fn(&Env) -> Vec<PathBuf>,
    /// Whether a file found under a root is one of its session stores (`rel` is relative to
    /// the root).
    pub matches: fn(rel: &Path) -> bool,
    /// How to read a store.
    pub reader: Reader,
}

impl std::fmt::Debug for FrameworkSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameworkSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
