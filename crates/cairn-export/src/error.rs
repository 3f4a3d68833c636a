//! What can go wrong writing memory out or reading it back, classified the way the API
//! answers it.
use cairn_core::ErrorCode;

/// An export, import or skills failure. Nothing half-done is left behind: an export that
/// fails is removed, an import refused is refused whole, an instruction file is replaced
/// atomically or not at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request or a file it names was refused: a relative folder, a link on the way, a
    /// malformed or altered export, an instruction file Cairn does not edit.
    #[error("{0}")]
    Refused(String),
    /// The target is in the way (a folder that is not empty).
    #[error("{0}")]
    Conflict(String),
    /// A file could not be read or written, or a worker thread failed.
    #[error("{0}")]
    Failed(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] cairn_store::Error),
    /// The notes failed.
    #[error(transparent)]
    Notes(#[from] cairn_notes::Error),
}

impl Error {
    /// The kind of failure, as callers branch on it.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Refused(_) => ErrorCode::BadRequest,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::Failed(_) => ErrorCode::Internal,
            Error::Store(e) => e.code(),
            Error::Notes(e) => e.code(),
        }
    }
}

/// A refusal from [`cairn_text::fsx`] (a link, not a plain file) is the request's fault;
/// anything else is the machine's.
impl From<cairn_text::fsx::FsError> for Error {
    fn from(e: cairn_text::fsx::FsError) -> Self {
        if e.is_refusal() {
            Error::Refused(e.to_string())
        } else {
            Error::Failed(e.to_string())
        }
    }
}

/// The result type of exports, imports and skills.
pub type Result<T, E = Error> = std::result::Result<T, E>;
