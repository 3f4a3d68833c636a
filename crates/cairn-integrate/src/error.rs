//! The one error type of this crate. Every variant that concerns a file names it.

use std::path::PathBuf;

/// What went wrong while reading, editing or writing an agent's config file.
///
/// Whenever an error is returned, the config file was left exactly as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The framework id is not one of [`crate::Integrations::frameworks`].
    #[error("unknown framework `{0}` (known: {known})", known = crate::ids::ids().join(", "))]
    UnknownFramework(String),
    /// No home directory could be found for the current user.
    #[error("no home directory found for the current user")]
    NoHome,
    /// The file could not be read (permissions, a directory in the way, …).
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than Cairn is willing to edit.
    #[error("{path} is {size} bytes; Cairn does not edit config files over {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file's contents cannot be used: not UTF-8, not valid JSON/TOML/YAML, the wrong
    /// shape (top level not an object, the servers key holding something else), or a form
    /// Cairn does not edit safely (e.g. YAML flow style). The message says which.
    #[error("{path}: {problem}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong, for a person to read.
        problem: String,
    },
    /// The file changed on disk while Cairn was editing it; nothing was written.
    #[error("{path} changed while Cairn was editing it; nothing was written, try again")]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// Cairn's own edit did not check out when the new text was parsed again. This is a bug in
    /// Cairn; the file was not written.
    #[error("{path}: Cairn's edit did not verify ({problem}); the file was not written")]
    Verify {
        /// The file.
        path: PathBuf,
        /// What the check found.
        problem: String,
    },
    /// Writing the file, its backup or a directory failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the request or the user's file is at fault (an unknown framework, a file Cairn
    /// cannot or will not edit), as opposed to the machine or Cairn itself (I/O, a concurrent
    /// change, a failed self-check).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::UnknownFramework(_) | Error::Malformed { .. } | Error::TooLarge { .. }
        )
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
