//! What Cairn created while installing, so removal can undo exactly that: a file that did not
//! exist (and its directories), or a servers (or hooks) key that was not there. Kept as
//! `<backup dir>/ledger.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::files;

/// What the config file was before Cairn's first install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "text")]
pub(crate) enum Prior {
    /// It did not exist.
    Absent,
    /// It held only whitespace (this text).
    Blank(String),
    /// It had contents.
    Content,
}

/// One framework's install record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The file edited.
    pub(crate) path: PathBuf,
    pub(crate) prior: Prior,
    /// Whether Cairn added the servers key itself.
    pub(crate) created_container: bool,
    /// Directories Cairn created for the file, outermost first.
    #[serde(default)]
    pub(crate) created_dirs: Vec<PathBuf>,
    /// Keys under the container Cairn added (hook events it created a list for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) created_keys: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Ledger {
    #[serde(default)]
    entries: BTreeMap<String, Record>,
}

fn path(dir: &Path) -> PathBuf {
    dir.join("ledger.json")
}

impl Ledger {
    /// The ledger in `dir`; a missing or unreadable one counts as empty (removal then keeps
    /// what it cannot prove Cairn created).
    pub(crate) fn load(dir: &Path) -> Self {
        fs_err::read_to_string(path(dir))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// The record for `framework` if it is about `target`.
    pub(crate) fn get(&self, framework: &str, target: &Path) -> Option<&Record> {
        self.entries
            .get(framework)
            .filter(|record| record.path == target)
    }

    pub(crate) fn set(&mut self, framework: &str, record: Record) {
        self.entries.insert(framework.to_owned(), record);
    }

    /// Forget `framework`; whether there was anything to forget.
    pub(crate) fn forget(&mut self, framework: &str) -> bool {
        self.entries.remove(framework).is_some()
    }

    pub(crate) fn save(&self, dir: &Path) -> Result<()> {
        files::private_dir(dir)?;
        let text = serde_json::to_string_pretty(self).map_err(|error| Error::Write {
            path: path(dir),
            source: std::io::Error::other(error),
        })?;
        files::write_atomic(&path(dir), &format!("{text}\n"), files::owner_only())
    }
}
