use cairn_core::ErrorCode;
use cairn_core::api::ApiErrorBody;

/// A failed API call: a code to branch on and a sentence for people.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The kind of failure.
    pub code: ErrorCode,
    /// What went wrong, for people.
    pub message: String,
}

/// The API's result type.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

impl ApiError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// An unexpected failure.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// Says so plainly when the failure was a full disk (SQLite's `SQLITE_FULL`, `ENOSPC`
    /// from a file write): `unavailable`, naming the folder whose disk is full and that
    /// nothing is lost. Any other error is returned as it is.
    pub fn explain_disk_full(self, data_dir: &std::path::Path) -> Self {
        let m = self.message.to_lowercase();
        let full = [
            "disk is full",
            "no space left",
            "os error 28",
            "sqlite_full",
        ]
        .iter()
        .any(|s| m.contains(s));
        if !full || self.message.starts_with("The disk holding") {
            return self;
        }
        Self::new(
            ErrorCode::Unavailable,
            format!(
                "The disk holding {} is full; this could not be saved ({}). What is stored stays readable; free some space and Cairn catches up by itself.",
                data_dir.display(),
                self.message
            ),
        )
    }

    /// The body sent on every transport.
    pub fn body(&self) -> ApiErrorBody {
        ApiErrorBody {
            code: self.code,
            message: self.message.clone(),
        }
    }
}

impl From<ApiErrorBody> for ApiError {
    fn from(b: ApiErrorBody) -> Self {
        Self {
            code: b.code,
            message: b.message,
        }
    }
}

impl From<cairn_store::Error> for ApiError {
    fn from(e: cairn_store::Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

/// The turn note's errors carry their code already.
impl From<cairn_turn::Error> for ApiError {
    fn from(e: cairn_turn::Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

impl From<cairn_review::Error> for ApiError {
    fn from(e: cairn_review::Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

impl From<cairn_export::Error> for ApiError {
    fn from(e: cairn_export::Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}
