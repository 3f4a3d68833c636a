//! Either a running service (over HTTP) or the store opened directly, behind one `call`.
use std::path::PathBuf;

use cairn_config::{Paths, Settings};
use cairn_core::api::Status;

use crate::service::{StartError, open_direct};
use crate::{ApiError, Client, InstanceLock, Result, Service};

/// Where calls go.
#[derive(Debug)]
pub enum Backend {
    /// A running service (daemon or desktop app).
    Remote(Client),
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
    pub async fn connect_or_open_with(
        paths: &Paths,
        settings: &Settings,
        config_file: PathBuf,
    ) -> Result<Self> {
        if let Some(client) = Client::discover(&paths.service_file()) {
            return Ok(Backend::Remote(client));
        }
        match open_direct(paths, settings, config_file).await {
            Ok((service, lock)) => Ok(Backend::Direct(service, lock)),
            // A service is starting right now: wait for its file, then use it.
            Err(StartError::Lock(_)) => {
                for _ in 0..50 {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    if let Some(client) = Client::discover(&paths.service_file()) {
                        return Ok(Backend::Remote(client));
                    }
                }
                Err(ApiError::new(
                    cairn_core::ErrorCode::Unavailable,
                    "another Cairn process holds the store but does not answer; if it hangs, stop it and try again",
                ))
            }
            Err(StartError::Api(e)) => Err(e),
        }
    }

    /// Calls one method by name.
    pub async fn call(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value> {
        match self {
            Backend::Remote(client) => {
                let client = client.clone();
                let method = method.to_owned();
                tokio::task::spawn_blocking(move || client.call(&method, &params))
                    .await
                    .map_err(|e| ApiError::internal(e.to_string()))?
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
            Backend::Remote(_) => {}
        }
    }
}

impl Backend {
    /// For a long-lived host (the desktop app): starts the service in this process, or,
    /// when another Cairn process (a daemon) already owns the store, becomes its client.
    pub async fn host(opts: crate::ServiceOptions) -> Result<Self> {
        let service_file = opts.paths.service_file();
        match crate::ServiceHandle::start(opts).await {
            Ok(handle) => Ok(Backend::Hosted(Box::new(handle))),
            Err(StartError::Lock(e)) => {
                for _ in 0..50 {
                    if let Some(client) = Client::discover(&service_file) {
                        tracing::info!(url = %client.info().url, "another Cairn owns the store; using it");
                        return Ok(Backend::Remote(client));
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
