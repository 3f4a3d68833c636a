//! One process owns the store. It holds an OS file lock on `service.lock` in the runtime
//! dir for as long as it runs; the OS releases it when the process dies, even by `kill -9`.
//!
//! Two kinds of process take that lock: a service (the daemon or the desktop app) for as long
//! as it runs, and a CLI call in direct mode (no service running) for the call's duration.
//! A starting service must never lose to a short CLI call, so:
//! - a process about to start the service first declares a [`StartIntent`] (a shared lock on
//!   `service.starting.lock`); a CLI call that sees one waits for the service instead of
//!   opening the store itself;
//! - [`InstanceLock::acquire`] does not give up at once when the lock is held: it exits
//!   straight away only when a live service answers at the address in `service.json`, and
//!   otherwise waits (bounded, [`LOCK_WAIT`]) for the holder — a CLI call in direct mode, a
//!   service still starting or stopping — to let go.
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::service_file::ServiceFile;

/// How long [`InstanceLock::acquire`] waits for a holder that is not a live service.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// How often a held lock is tried again.
const POLL: Duration = Duration::from_millis(20);

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another Cairn process owns the store.
    #[error("{}", already_running_message(.0.as_deref()))]
    AlreadyRunning(Option<Box<ServiceFile>>),
    /// Another process kept the lock for the whole wait without serving the API: a long CLI
    /// call in direct mode, or a service that is slow to start or stop.
    #[error(
        "another Cairn process ({}) has held the store's lock {} for {}s without serving the API — a `cairn` command still running, or a service still starting or stopping; try again when it has finished",
        .pid.map_or_else(|| "pid unknown".to_owned(), |p| format!("pid {p}")),
        .path.display(),
        .waited.as_secs()
    )]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid, when it wrote one.
        pid: Option<u32>,
        /// How long this process waited.
        waited: Duration,
    },
    /// The lock file could not be opened.
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn already_running_message(info: Option<&ServiceFile>) -> String {
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

fn open_rw(path: &Path) -> Result<fs_err::File, LockError> {
    if let Some(dir) = path.parent() {
        fs_err::create_dir_all(dir).map_err(|source| LockError::Io {
            path: path.into(),
            source,
        })?;
    }
    fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|source| LockError::Io {
            path: path.into(),
            source,
        })
}

/// The service answering at the address in `service_file`, if any.
fn live_service(service_file: &Path) -> Option<ServiceFile> {
    Client::discover(service_file).map(|c| c.info().clone())
}

/// The pid the lock's holder wrote into the lock file.
fn holder_pid(lock_path: &Path) -> Option<u32> {
    fs_err::read_to_string(lock_path).ok()?.trim().parse().ok()
}

/// The held lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct InstanceLock {
    file: fs_err::File,
}

impl InstanceLock {
    /// Takes the lock, waiting up to [`LOCK_WAIT`] for a holder that is not a live service.
    /// Fails at once with [`LockError::AlreadyRunning`] when a live service holds it.
    pub fn acquire(lock_path: &Path, service_file: &Path) -> Result<Self, LockError> {
        Self::acquire_within(lock_path, service_file, LOCK_WAIT)
    }

    /// As [`InstanceLock::acquire`], waiting at most `wait`.
    pub fn acquire_within(
        lock_path: &Path,
        service_file: &Path,
        wait: Duration,
    ) -> Result<Self, LockError> {
        let mut file = open_rw(lock_path)?;
        let started = Instant::now();
        loop {
            match file.file().try_lock() {
                Ok(()) => {
                    // Who holds it, for the message another process shows while it waits.
                    let pid = std::process::id().to_string();
                    let mut write_pid = || -> std::io::Result<()> {
                        file.set_len(0)?;
                        file.rewind()?;
                        file.write_all(pid.as_bytes())
                    };
                    let written = write_pid();
                    if let Err(e) = written {
                        tracing::debug!(error = %e, "cannot write the pid into the lock file");
                    }
                    return Ok(Self { file });
                }
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(source)) => {
                    return Err(LockError::Io {
                        path: lock_path.into(),
                        source,
                    });
                }
            }
            // A service that answers holds it: nothing to wait for.
            if service_file.exists()
                && let Some(info) = live_service(service_file)
            {
                return Err(LockError::AlreadyRunning(Some(Box::new(info))));
            }
            let waited = started.elapsed();
            if waited >= wait {
                return Err(LockError::Busy {
                    path: lock_path.into(),
                    pid: holder_pid(lock_path),
                    waited,
                });
            }
            std::thread::sleep(POLL);
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

/// The file a starting service holds (shared) while it starts, next to the lock file.
fn intent_path(lock_path: &Path) -> PathBuf {
    lock_path.with_extension("starting.lock")
}

/// Declared by a process about to start the service, held until the service serves (or has
/// failed to start). While any process holds one, CLI calls wait for the service instead of
/// opening the store directly ([`StartIntent::declared`]), so a stream of CLI calls cannot
/// keep a starting service from the instance lock.
#[derive(Debug)]
pub struct StartIntent {
    file: fs_err::File,
}

impl StartIntent {
    /// Declares the intent to start the service that owns `lock_path`.
    pub fn declare(lock_path: &Path) -> Result<Self, LockError> {
        let path = intent_path(lock_path);
        let file = open_rw(&path)?;
        // Shared: two services starting at once both declare; the lock decides between them.
        // A CLI call holds this file exclusively only for the instant it checks.
        file.file()
            .lock_shared()
            .map_err(|source| LockError::Io { path, source })?;
        Ok(Self { file })
    }

    /// Whether some process (this one included) has declared the intent to start the
    /// service that owns `lock_path`.
    pub fn declared(lock_path: &Path) -> bool {
        let path = intent_path(lock_path);
        let Ok(file) = fs_err::OpenOptions::new().read(true).open(&path) else {
            return false;
        };
        match file.file().try_lock() {
            Ok(()) => {
                // Nobody holds it: release the probe at once.
                if let Err(e) = file.file().unlock() {
                    tracing::debug!(error = %e, "cannot release the start-intent probe");
                }
                false
            }
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::debug!(error = %e, path = %path.display(), "cannot probe the start intent");
                false
            }
        }
    }
}

impl Drop for StartIntent {
    fn drop(&mut self) {
        if let Err(e) = self.file.file().unlock() {
            tracing::warn!(error = %e, "cannot release the start intent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_waited_for_and_taken_when_released() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("run/service.lock");
        let service = dir.path().join("run/service.json");
        let first = InstanceLock::acquire(&lock, &service).unwrap();
        assert_eq!(holder_pid(&lock), Some(std::process::id()));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let started = Instant::now();
        let second = InstanceLock::acquire_within(&lock, &service, Duration::from_secs(5));
        assert!(second.is_ok(), "{second:?}");
        assert!(started.elapsed() >= Duration::from_millis(250));
        t.join().unwrap();
    }

    #[test]
    fn a_lock_held_too_long_fails_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("service.lock");
        let service = dir.path().join("service.json");
        let _first = InstanceLock::acquire(&lock, &service).unwrap();
        let err = InstanceLock::acquire_within(&lock, &service, Duration::from_millis(200))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())) && err.contains("try again"),
            "{err}"
        );
    }

    #[test]
    fn a_start_intent_is_seen_while_held_and_shared_between_starters() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("run/service.lock");
        assert!(!StartIntent::declared(&lock));
        let a = StartIntent::declare(&lock).unwrap();
        let b = StartIntent::declare(&lock).unwrap();
        assert!(StartIntent::declared(&lock));
        drop(a);
        assert!(StartIntent::declared(&lock));
        drop(b);
        assert!(!StartIntent::declared(&lock));
    }
}
