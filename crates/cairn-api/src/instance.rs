//! One process owns the store. It holds an OS file lock on `service.lock` in the runtime
//! dir for as long as it runs; the OS releases it when the process dies, even by `kill -9`.
use std::path::{Path, PathBuf};

use crate::client::ServiceFile;

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another Cairn process owns the store.
    #[error("{}", already_running_message(.0))]
    AlreadyRunning(Option<ServiceFile>),
    /// The lock file could not be opened.
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn already_running_message(info: &Option<ServiceFile>) -> String {
    match info {
        Some(f) => format!(
            "Cairn is already running (pid {}, {}, started {}); its UI is at {}",
            f.pid,
            match f.host {
                cairn_core::api::ServiceHost::Desktop => "the desktop app",
                _ => "cairn daemon",
            },
            f.started_at,
            f.url
        ),
        None => {
            "Cairn is already running (another process holds its lock and is still starting)".into()
        }
    }
}

/// The held lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct InstanceLock {
    file: fs_err::File,
}

impl InstanceLock {
    /// Takes the lock, or says who holds it.
    pub fn acquire(lock_path: &Path, service_file: &Path) -> Result<Self, LockError> {
        if let Some(dir) = lock_path.parent() {
            fs_err::create_dir_all(dir).map_err(|source| LockError::Io {
                path: lock_path.into(),
                source,
            })?;
        }
        let file = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(lock_path)
            .map_err(|source| LockError::Io {
                path: lock_path.into(),
                source,
            })?;
        match file.file().try_lock() {
            Ok(()) => Ok(Self { file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::AlreadyRunning(
                ServiceFile::read(service_file).ok(),
            )),
            Err(std::fs::TryLockError::Error(source)) => Err(LockError::Io {
                path: lock_path.into(),
                source,
            }),
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        if let Err(e) = self.file.file().unlock() {
            tracing::warn!(error = %e, "cannot release the instance lock");
        }
    }
}
