//! Secrets (API keys) in the OS keyring: Keychain, Windows Credential Manager, Secret Service.
//! Never in the config file, never in the logs.
use keyring::{Entry, Error};

/// The keyring service every Cairn secret is stored under.
pub const KEYRING_SERVICE: &str = "cairn";

/// Why a secret could not be stored or read.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SecretError {
    /// True when there is no OS keyring at all (a headless Linux without a Secret Service):
    /// the caller keeps the secret in memory for this run, or asks for it another way.
    pub unavailable: bool,
    /// What went wrong, naming the secret (never its value).
    pub message: String,
}

fn map_error(action: &str, user: &str, e: Error) -> SecretError {
    match e {
        Error::NoDefaultStore | Error::PlatformFailure(_) | Error::NoStorageAccess(_) => {
            SecretError {
                unavailable: true,
                message: format!(
                    "no OS keyring is available to {action} the `{user}` key ({e}); \
                     keep the key in memory for this run"
                ),
            }
        }
        _ => SecretError {
            unavailable: false,
            message: format!("cannot {action} the `{user}` key in the OS keyring: {e}"),
        },
    }
}

fn entry(action: &str, user: &str) -> Result<Entry, SecretError> {
    Entry::new(KEYRING_SERVICE, user).map_err(|e| map_error(action, user, e))
}

/// Stores `secret` for `user` under service [`KEYRING_SERVICE`], replacing any previous one.
pub fn store_secret(user: &str, secret: &str) -> Result<(), SecretError> {
    entry("store", user)?
        .set_password(secret)
        .map_err(|e| map_error("store", user, e))
}

/// The secret stored for `user`, or `None` if there is none.
pub fn load_secret(user: &str) -> Result<Option<String>, SecretError> {
    match entry("read", user)?.get_password() {
        Ok(key) => Ok(Some(key)),
        Err(Error::NoEntry) => Ok(None),
        Err(e) => Err(map_error("read", user, e)),
    }
}

/// Removes the secret stored for `user`; `false` when there was none.
pub fn delete_secret(user: &str) -> Result<bool, SecretError> {
    match entry("remove", user)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(Error::NoEntry) => Ok(false),
        Err(e) => Err(map_error("remove", user, e)),
    }
}
