use std::path::PathBuf;

use cairn_core::ErrorCode;

/// A notes failure. Every message names the path (or the note) and the problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path was refused before anything was touched (traversal, links, encodings, device
    /// names, limits, …).
    #[error("refused path {shown}: {reason}")]
    Path {
        /// The path as the caller sent it, quoted and escaped (shortened when very long).
        shown: String,
        /// Why it was refused.
        reason: String,
    },
    /// A malformed request (a missing argument, a line out of range, no unique match, …).
    #[error("{0}")]
    BadRequest(String),
    /// The note, version or file does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The note changed since the caller read it (its sha256 differs), or the target
    /// exists already. Nothing was written.
    #[error("{message}")]
    Conflict {
        /// What happened, with the expected and the current sha256.
        message: String,
        /// The note's sha256 now, when it exists.
        current_sha256: Option<String>,
        /// The content the refused write would have stored (scrubbed), handed back so the
        /// caller can merge and retry: nothing is lost and nothing was overwritten.
        rejected: Option<String>,
    },
    /// The caller's access does not allow writes.
    #[error("{0}")]
    Forbidden(String),
    /// The store failed.
    #[error("notes store: {0}")]
    Store(#[from] cairn_store::Error),
    /// A file-system operation under the notes root failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`, `rename`, …).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The kind of failure, as callers branch on it.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Path { .. } | Error::BadRequest(_) => ErrorCode::BadRequest,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Conflict { .. } => ErrorCode::Conflict,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::Store(_) | Error::Io { .. } => ErrorCode::Internal,
        }
    }

    /// For a [`Error::Conflict`], the content the refused write carried (scrubbed).
    pub fn rejected_content(&self) -> Option<&str> {
        match self {
            Error::Conflict { rejected, .. } => rejected.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn path(raw: &str, reason: impl Into<String>) -> Self {
        Error::Path {
            shown: shown(raw),
            reason: reason.into(),
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// The path quoted and escaped for a message, at most 80 characters of it.
pub(crate) fn shown(raw: &str) -> String {
    const MAX: usize = 80;
    if raw.chars().count() <= MAX {
        format!("{raw:?}")
    } else {
        let head: String = raw.chars().take(MAX).collect();
        format!("{head:?}… ({} bytes)", raw.len())
    }
}

/// The notes result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
