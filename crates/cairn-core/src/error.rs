use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kind of a failure, as the UI, the CLI and agents see it.
///
/// Every library error maps to one of these at the edge (HTTP status, exit code, MCP error),
/// so callers branch on the kind and never on a message string. A variant is added only
/// when a consumer needs to tell it apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request was malformed or named something invalid.
    BadRequest,
    /// The caller did not present the service's token.
    Unauthorized,
    /// The method, record or item does not exist.
    NotFound,
    /// The state changed underneath the caller (optimistic concurrency).
    Conflict,
    /// Memory is switched off, so the operation is refused.
    MemoryOff,
    /// The caller's access does not allow this (a read-only client writing a note).
    Forbidden,
    /// A dependency (the store, the service) is not reachable right now.
    Unavailable,
    /// A bug or an unexpected failure.
    Internal,
}

impl ErrorCode {
    /// The stable snake_case name used on every wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::MemoryOff => "memory_off",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
