//! Qdrant API keys in the OS keyring (Keychain, Windows Credential Manager, Secret Service).
use cairn_core::ports::BackendError;
#[cfg(doc)]
use cairn_core::ports::BackendErrorKind;
use keyring::{Entry, Error};

use crate::common::{other, unavailable};

/// The keyring service every Cairn secret is stored under.
pub const KEYRING_SERVICE: &str = "cairn";
/// The keyring user of the sidecar's API key (made fresh for each run).
pub const SIDECAR_KEY_USER: &str = "qdrant-sidecar";
/// The keyring user of a remote cluster's API key.
pub const REMOTE_KEY_USER: &str = "qdrant-remote";

fn map_error(action: &str, user: &str, e: Error) -> BackendError {
    match e {
        Error::NoDefaultStore | Error::PlatformFailure(_) | Error::NoStorageAccess(_) => {
            unavailable(format!(
                "no OS keyring is available to {action} the `{user}` key ({e}); \
                 keep the key in memory for this run"
            ))
        }
        _ => other(format!(
            "cannot {action} the `{user}` key in the OS keyring: {e}"
        )),
    }
}

fn entry(action: &str, user: &str) -> Result<Entry, BackendError> {
    Entry::new(KEYRING_SERVICE, user).map_err(|e| map_error(action, user, e))
}

/// Stores `key` for `user` (for example [`SIDECAR_KEY_USER`]) under service
/// [`KEYRING_SERVICE`], replacing any previous one. With no keyring (a headless Linux without
/// a Secret Service) the error has kind [`BackendErrorKind::Unavailable`]: the caller keeps
/// the key in memory only, and says so.
pub fn store_key(user: &str, key: &str) -> Result<(), BackendError> {
    entry("store", user)?
        .set_password(key)
        .map_err(|e| map_error("store", user, e))
}

/// The key stored for `user`, or `None` if there is none. No keyring is an error of kind
/// [`BackendErrorKind::Unavailable`].
pub fn load_key(user: &str) -> Result<Option<String>, BackendError> {
    match entry("read", user)?.get_password() {
        Ok(key) => Ok(Some(key)),
        Err(Error::NoEntry) => Ok(None),
        Err(e) => Err(map_error("read", user, e)),
    }
}
