//! The crate's one error type.
use std::path::PathBuf;

use cairn_core::ports::{BackendError, BackendErrorKind};

/// Why a model could not be found, fetched, loaded or run.
///
/// Every variant about files names the file. Convert to the pipeline's [`BackendError`] with
/// `From` (or `?`): all file and download problems become [`BackendErrorKind::Unavailable`], so
/// the caller degrades (no reranker: cosine only; no embedder: keyword search only).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A file the model needs is not there.
    #[error("model file {} is missing", path.display())]
    MissingFile {
        /// The file that was looked for.
        path: PathBuf,
    },
    /// A file could not be read or written (the message names the path).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A file's content does not match its pinned sha256.
    #[error("model file {} is corrupt: sha256 {actual}, expected {expected}", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// The pinned sha256.
        expected: String,
        /// What the file hashes to.
        actual: String,
    },
    /// A cached file has no pinned sha256 and no record of a verified download, so it
    /// cannot be trusted.
    #[error(
        "model file {} cannot be verified (no pinned sha256, no record of its download)",
        path.display()
    )]
    Unverified {
        /// The file.
        path: PathBuf,
    },
    /// A file the model needs is not cached and has no pinned sha256: Cairn downloads only
    /// files it can check against a pin.
    #[error(
        "Cairn does not download {file} of {repo}@{revision}: no sha256 is pinned for it, so what \
         arrives could not be checked; put the model's files in a folder and point \
         models.embedder or models.reranker at it"
    )]
    Unpinned {
        /// The repository.
        repo: String,
        /// The pinned revision.
        revision: String,
        /// The file.
        file: String,
    },
    /// The model is not available locally and downloading is turned off.
    #[error("model {name} is not in {} and downloading models is turned off", dir.display())]
    DownloadDisabled {
        /// The model's name.
        name: String,
        /// Where it was looked for.
        dir: PathBuf,
    },
    /// Downloading a file failed (offline, blocked, no such revision).
    #[error("downloading {file} of {repo}@{revision} failed: {message}")]
    Download {
        /// The repository.
        repo: String,
        /// The pinned revision.
        revision: String,
        /// The file.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// A file is present but cannot be parsed or does not fit the model (truncated weights,
    /// a missing tensor, bad JSON).
    #[error("cannot load model file {}: {message}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The model failed while running on some input.
    #[error("model inference failed: {0}")]
    Inference(String),
}

impl ModelError {
    /// The kind of backend failure this is.
    pub fn kind(&self) -> BackendErrorKind {
        match self {
            Self::Inference(_) => BackendErrorKind::Other,
            Self::MissingFile { .. }
            | Self::Io(_)
            | Self::Checksum { .. }
            | Self::Unverified { .. }
            | Self::Unpinned { .. }
            | Self::DownloadDisabled { .. }
            | Self::Download { .. }
            | Self::Load { .. } => BackendErrorKind::Unavailable,
        }
    }

    pub(crate) fn load(path: impl Into<PathBuf>, message: impl ToString) -> Self {
        Self::Load {
            path: path.into(),
            message: message.to_string(),
        }
    }

    pub(crate) fn inference(err: impl ToString) -> Self {
        Self::Inference(err.to_string())
    }
}

impl From<ModelError> for BackendError {
    fn from(err: ModelError) -> Self {
        BackendError::new(err.kind(), err.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;
