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
        let code = match &e {
            cairn_store::Error::Open { .. } | cairn_store::Error::TooNew { .. } => {
                ErrorCode::Unavailable
            }
            _ => ErrorCode::Internal,
        };
        Self::new(code, e.to_string())
    }
}
