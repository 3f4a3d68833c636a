use std::path::PathBuf;

/// A store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database refused or failed a statement.
    #[error("database error: {0}")]
    Db(#[from] sea_orm::DbErr),
    /// The store file could not be opened.
    #[error("cannot open the store at {path}: {reason}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The store was written by a newer Cairn than this one.
    #[error(
        "the store at {path} has schema version {found}, newer than this Cairn understands ({supported}); update Cairn"
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// A stored value could not be decoded.
    #[error("corrupt value in {table}.{column}: {reason}")]
    Corrupt {
        /// Table.
        table: &'static str,
        /// Column.
        column: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A value could not be encoded.
    #[error("cannot encode {what}: {reason}")]
    Encode {
        /// What.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The caller asked for something that does not exist (a turn, an entry).
    #[error("{0}")]
    NotFound(String),
    /// The caller's input was refused (an unknown label, …).
    #[error("{0}")]
    Invalid(String),
    /// A file-system operation on the store's files failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The kind of failure, as callers branch on it: a store that cannot be opened (or is
    /// too new) is `unavailable`, what does not exist `not_found`, refused input
    /// `bad_request`, anything else `internal`.
    pub fn code(&self) -> cairn_core::ErrorCode {
        use cairn_core::ErrorCode;
        match self {
            Error::Open { .. } | Error::TooNew { .. } => ErrorCode::Unavailable,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Invalid(_) => ErrorCode::BadRequest,
            _ => ErrorCode::Internal,
        }
    }
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A stored value that cannot be read back: which table and column, and why.
pub(crate) fn corrupt(table: &'static str, column: &'static str, reason: String) -> Error {
    Error::Corrupt {
        table,
        column,
        reason,
    }
}
