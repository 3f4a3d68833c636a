//! Qdrant API keys in the OS keyring (through `cairn_config::secrets`).
use cairn_config::secrets::{self, SecretError};
use cairn_core::ports::BackendError;
#[cfg(doc)]
use cairn_core::ports::BackendErrorKind;

use crate::common::{other, unavailable};

pub use cairn_config::secrets::KEYRING_SERVICE;
/// The keyring user of the sidecar's API key (made fresh for each run).
pub const SIDECAR_KEY_USER: &str = "qdrant-sidecar";
/// The keyring user of a remote cluster's API key.
pub const REMOTE_KEY_USER: &str = "qdrant-remote";

fn map_error(e: SecretError) -> BackendError {
    if e.unavailable {
        unavailable(e.message)
    } else {
        other(e.message)
    }
}

/// Stores `key` for `user` (for example [`SIDECAR_KEY_USER`]) under service
/// [`KEYRING_SERVICE`], replacing any previous one. With no keyring (a headless Linux without
/// a Secret Service) the error has kind [`BackendErrorKind::Unavailable`]: the caller keeps
/// the key in memory only, and says so.
pub fn store_key(user: &str, key: &str) -> Result<(), BackendError> {
    secrets::store_secret(user, key).map_err(map_error)
}

/// The key stored for `user`, or `None` if there is none. No keyring is an error of kind
/// [`BackendErrorKind::Unavailable`].
pub fn load_key(user: &str) -> Result<Option<String>, BackendError> {
    secrets::load_secret(user).map_err(map_error)
}
