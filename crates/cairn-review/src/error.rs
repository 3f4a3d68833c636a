//! What can go wrong in the inbox, classified the way the API answers it.
use cairn_core::ErrorCode;

/// A review failure: a request that names no entry or action, an item or note that is gone
/// or changed since, or the store or the notes failing underneath.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The inbox refused or failed, with the code to answer with: `bad_request` (an unknown
    /// category, action or entry key), `not_found` (the item, note, record or action named),
    /// `conflict` (changed since the inbox listed it, or undone already), `internal` (a
    /// logged action that cannot be read back).
    #[error("{message}")]
    Inbox {
        /// The kind of failure.
        code: ErrorCode,
        /// What went wrong, for people.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] cairn_store::Error),
    /// The notes failed.
    #[error(transparent)]
    Notes(#[from] cairn_notes::Error),
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error::Inbox {
            code,
            message: message.into(),
        }
    }

    /// The kind of failure, as callers branch on it.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Inbox { code, .. } => *code,
            Error::Store(e) => e.code(),
            Error::Notes(e) => e.code(),
        }
    }
}

/// The inbox's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
