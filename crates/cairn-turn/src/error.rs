//! The turn note's errors: the store's own, or a code to branch on with a sentence for
//! people. The host maps each to its error type by [`Error::code`] and its text.
use cairn_core::ErrorCode;

/// A failed turn note, log read, replay or outcome pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed (classified by [`cairn_store::Error::code`]).
    #[error(transparent)]
    Store(#[from] cairn_store::Error),
    /// Anything else: its kind, and what went wrong.
    #[error("{1}")]
    Failed(ErrorCode, String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The kind of failure, as the API classifies it.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Store(e) => e.code(),
            Self::Failed(code, _) => *code,
        }
    }

    /// A malformed request.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::Failed(ErrorCode::BadRequest, message.into())
    }

    /// An unexpected failure.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::Failed(ErrorCode::Internal, message.into())
    }
}

/// A failed search: the store's failure as the store classifies it, anything else a query
/// the retriever could not run.
impl From<cairn_recall::Error> for Error {
    fn from(e: cairn_recall::Error) -> Self {
        match e {
            cairn_recall::Error::Store(e) => e.into(),
            other => Self::bad_request(other.to_string()),
        }
    }
}
