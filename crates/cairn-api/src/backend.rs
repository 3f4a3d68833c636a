//! Either a running service (over HTTP) or the store opened directly, behind one `call`.
use std::path::PathBuf;

use cairn_config::{Paths, Settings};
use cairn_core::api::Status;

use crate::handle::{StartError, open_direct};
use crate::{ApiError, Client, InstanceLock, LockError, Result, Service, StartIntent};

/// How long a CLI call waits for a service that is starting before it gives up.
pub const START_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// What a CLI's backend needs to find the store again: a call that could not reach a service
/// that has just stopped goes to whatever owns the store now (another service, or the store
/// opened directly), instead of failing.
#[derive(Debug, Clone)]
pub struct Reconnect {
    paths: Paths,
    settings: Settings,
    config_file: PathBuf,
}

/// Whether `e` says the request never reached the service: nothing listens any more, or a
/// service shutting down closed the connection before taking the request in (a graceful
/// shutdown finishes every request it has taken; a broken pipe is a write of the request
/// itself that found the connection closed). Sending it elsewhere cannot run it twice.
fn not_delivered(e: &ApiError, client: &Client) -> bool {
    let unreachable = format!("cannot reach Cairn at {}", client.info().url);
    let gone = [
        "Connection refused",
        "os error 111",
        "Connection reset",
        "os error 104",
        "Broken pipe",
        "os error 32",
    ];
    e.code == cairn_core::ErrorCode::Unavailable
        && (e.message == unreachable
            || (e.message.starts_with(&unreachable) && gone.iter().any(|g| e.message.contains(g))))
}

async fn remote_call(
    client: &Client,
    method: &str,
    params: serde_json::Value,
) -> Result<serde_json::Value> {
    let client = client.clone();
    let method = method.to_owned();
    tokio::task::spawn_blocking(move || client.call(&method, &params))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
}

/// Where calls go.
#[derive(Debug)]
pub enum Backend {
    /// A running service (daemon or desktop app), and, for a CLI, how to find the store again
    /// when that service stops before a call reaches it.
    Remote(Client, Option<Box<Reconnect>>),
    /// No service runs: the store is opened in this process, under the instance lock.
    Direct(Service, InstanceLock),
    /// The service runs in this process, with its HTTP API and workers (the desktop app).
    Hosted(Box<crate::ServiceHandle>),
}

impl Backend {
    /// Connects to the running service, or opens the store directly when none runs.
    pub async fn connect_or_open(paths: &Paths, settings: &Settings) -> Result<Self> {
        Self::connect_or_open_with(paths, settings, paths.config_file()).await
    }

    /// As [`Backend::connect_or_open`], naming the config file the settings came from.
    ///
    /// A service that is starting wins over this call: while one has declared its
    /// [`StartIntent`], or holds the lock without answering yet, the call waits for it (up to
    /// [`START_WAIT`]) and then goes through it; when the store's lock is free it opens the
    /// store directly.
    pub async fn connect_or_open_with(
        paths: &Paths,
        settings: &Settings,
        config_file: PathBuf,
    ) -> Result<Self> {
        let service_file = paths.service_file();
        let lock_file = paths.lock_file();
        let started = std::time::Instant::now();
        loop {
            if let Some(client) = Client::discover(&service_file) {
                let again = Reconnect {
                    paths: paths.clone(),
                    settings: settings.clone(),
                    config_file: config_file.clone(),
                };
                return Ok(Backend::Remote(client, Some(Box::new(again))));
            }
            if started.elapsed() >= START_WAIT {
                return Err(ApiError::new(
                    cairn_core::ErrorCode::Unavailable,
                    format!(
                        "a Cairn service is starting but has not answered within {}s; check `cairn daemon`'s output or the log in {}, then try again",
                        START_WAIT.as_secs(),
                        paths.logs.display()
                    ),
                ));
            }
            // A service is starting: wait for it rather than take the store from under it.
            if StartIntent::declared(&lock_file) {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            match open_direct(paths, settings, config_file.clone()).await {
                Ok((service, lock)) => return Ok(Backend::Direct(service, lock)),
                // A service answers now (it started while we waited): use it.
                Err(StartError::Lock(LockError::AlreadyRunning(Some(_)))) => {}
                // Held by a process that is neither serving nor letting go.
                Err(StartError::Lock(e)) => {
                    return Err(ApiError::new(
                        cairn_core::ErrorCode::Unavailable,
                        e.to_string(),
                    ));
                }
                Err(StartError::Api(e)) => return Err(e),
            }
        }
    }

    /// Calls one method by name.
    pub async fn call(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value> {
        match self {
            Backend::Remote(client, again) => {
                let out = remote_call(client, method, params.clone()).await;
                match (out, again) {
                    // The service stopped between finding it and this call, which never
                    // reached it: send it to whatever owns the store now.
                    (Err(e), Some(again)) if not_delivered(&e, client) => {
                        tracing::info!(error = %e, "the service has stopped; calling again");
                        let backend = Backend::connect_or_open_with(
                            &again.paths,
                            &again.settings,
                            again.config_file.clone(),
                        )
                        .await?;
                        let out = match &backend {
                            Backend::Remote(c, _) => remote_call(c, method, params).await,
                            Backend::Direct(service, _) => service.dispatch(method, params).await,
                            Backend::Hosted(handle) => {
                                handle.service().dispatch(method, params).await
                            }
                        };
                        backend.close().await;
                        out
                    }
                    (out, _) => out,
                }
            }
            Backend::Direct(service, _) => service.dispatch(method, params).await,
            Backend::Hosted(handle) => handle.service().dispatch(method, params).await,
        }
    }

    /// Calls a method with typed request and response.
    pub async fn call_typed<Req: serde::Serialize, Res: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Res> {
        let params = serde_json::to_value(req).map_err(|e| ApiError::internal(e.to_string()))?;
        let value = self.call(method, params).await?;
        serde_json::from_value(value)
            .map_err(|e| ApiError::internal(format!("unexpected answer to {method}: {e}")))
    }

    /// The status.
    pub async fn status(&self) -> Result<Status> {
        self.call_typed("status", &serde_json::json!({})).await
    }

    /// Closes a directly opened store cleanly, stops a hosted service (a no-op for a remote one).
    pub async fn close(self) {
        match self {
            Backend::Direct(service, lock) => {
                if let Err(e) = service.store().checkpoint().await {
                    tracing::warn!(error = %e, "checkpoint on close failed");
                }
                drop(lock);
            }
            Backend::Hosted(handle) => handle.shutdown().await,
            Backend::Remote(..) => {}
        }
    }
}

impl Backend {
    /// For a long-lived host (the desktop app): starts the service in this process, or,
    /// when another Cairn process (a daemon) already owns the store, becomes its client.
    pub async fn host(opts: crate::ServiceOptions) -> Result<Self> {
        let service_file = opts.paths.service_file();
        let intent = StartIntent::declare(&opts.paths.lock_file())
            .map_err(|e| ApiError::new(cairn_core::ErrorCode::Unavailable, e.to_string()))?;
        let started = crate::ServiceHandle::start(opts).await;
        drop(intent);
        match started {
            Ok(handle) => Ok(Backend::Hosted(Box::new(handle))),
            Err(StartError::Lock(e)) => {
                for _ in 0..50 {
                    if let Some(client) = Client::discover(&service_file) {
                        tracing::info!(url = %client.info().url, "another Cairn owns the store; using it");
                        return Ok(Backend::Remote(client, None));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(ApiError::new(
                    cairn_core::ErrorCode::Unavailable,
                    e.to_string(),
                ))
            }
            Err(StartError::Api(e)) => Err(e),
        }
    }
}

/// A backend shared by a long-lived host and closed once, on quit. Calls after the close
/// answer `unavailable`.
#[derive(Debug, Clone)]
pub struct SharedBackend(std::sync::Arc<tokio::sync::RwLock<Option<Backend>>>);

impl SharedBackend {
    /// Shares `backend`.
    pub fn new(backend: Backend) -> Self {
        Self(std::sync::Arc::new(tokio::sync::RwLock::new(Some(backend))))
    }

    /// Calls one method by name.
    pub async fn call(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value> {
        match self.0.read().await.as_ref() {
            Some(b) => b.call(method, params).await,
            None => Err(ApiError::new(
                cairn_core::ErrorCode::Unavailable,
                "Cairn is shutting down",
            )),
        }
    }

    /// Calls a method with typed request and response.
    pub async fn call_typed<Req: serde::Serialize, Res: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Res> {
        match self.0.read().await.as_ref() {
            Some(b) => b.call_typed(method, req).await,
            None => Err(ApiError::new(
                cairn_core::ErrorCode::Unavailable,
                "Cairn is shutting down",
            )),
        }
    }

    /// Stops a hosted service (or closes a direct store) once; later calls do nothing.
    pub async fn close(&self) {
        if let Some(b) = self.0.write().await.take() {
            b.close().await;
        }
    }
}
