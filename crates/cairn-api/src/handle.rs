//! A running service: the single-instance lock, `service.json`, the loopback HTTP server and
//! the background workers around a [`Service`]; and a service opened directly for one CLI
//! call. This is the top of the host: it starts what every other module provides.
use std::path::PathBuf;
use std::time::Duration;

use cairn_config::{Paths, Settings};
use cairn_core::ErrorCode;
use cairn_core::api::ServiceHost;
use tokio::sync::watch;

use crate::instance::{InstanceLock, LockError};
use crate::service_file::ServiceFile;
use crate::{ApiError, Service, ServiceOptions, http};

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Another Cairn process owns the store.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Anything else.
    #[error(transparent)]
    Api(#[from] ApiError),
}

/// A running service: the lock, the store, the HTTP server and the workers.
#[derive(Debug)]
pub struct ServiceHandle {
    service: Service,
    info: Option<ServiceFile>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    service_file: PathBuf,
    _lock: InstanceLock,
}

impl ServiceHandle {
    /// Takes the single-instance lock, opens the store, starts the HTTP server on a loopback
    /// port with a fresh token (written to `service.json`, mode 0600) and the workers.
    pub async fn start(opts: ServiceOptions) -> std::result::Result<Self, StartError> {
        opts.paths.create_all().map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                format!("cannot create Cairn's folders: {e}"),
            )
        })?;
        let service_file = opts.paths.service_file();
        let lock = InstanceLock::acquire(&opts.paths.lock_file(), &service_file)?;
        // A file left by a killed service is stale now that we hold the lock.
        match fs_err::remove_file(&service_file) {
            Ok(()) => tracing::info!("removed a stale service file"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ApiError::internal(format!(
                    "cannot remove stale {}: {e}",
                    service_file.display()
                ))
                .into());
            }
        }
        let service = Service::load(&opts).await?;
        let (shutdown, _) = watch::channel(false);
        let mut tasks = Vec::new();
        let mut info = None;
        if opts.serve_http {
            let settings = &opts.settings.service;
            let listener = tokio::net::TcpListener::bind((settings.bind, settings.port))
                .await
                .map_err(|e| {
                    ApiError::new(
                        ErrorCode::Unavailable,
                        format!(
                            "cannot listen on {}:{} (service.bind / service.port): {e}",
                            settings.bind, settings.port
                        ),
                    )
                })?;
            let addr = listener
                .local_addr()
                .map_err(|e| ApiError::internal(e.to_string()))?;
            let url = format!("http://{addr}");
            let token = http::fresh_token()?;
            let instance = http::fresh_instance_id()?;
            let file = ServiceFile {
                pid: std::process::id(),
                host: opts.host,
                version: env!("CARGO_PKG_VERSION").to_owned(),
                started_at: service.started_at().to_owned(),
                url: url.clone(),
                token: token.clone(),
                instance: Some(instance.clone().into()),
                hook_wait_ms: crate::service::hook_wait_ms(&service.llm_settings()),
                hook_deadline_ms: Some(service.hook_settings().deadline_ms),
            };
            file.write(&service_file).map_err(|e| {
                ApiError::internal(format!("cannot write {}: {e}", service_file.display()))
            })?;
            if !service.set_address(url) {
                tracing::warn!("service address was already set");
            }
            let ui_dir = opts.ui_dir.clone();
            let rx = shutdown.subscribe();
            let svc = service.clone();
            tasks.push(tokio::spawn(async move {
                if let Err(e) = http::serve(svc, listener, token, instance, ui_dir, rx).await {
                    tracing::error!(error = %e, "HTTP server stopped");
                }
            }));
            info = Some(file);
        }
        tasks.push(crate::workers::spawn_maintenance(
            service.clone(),
            shutdown.subscribe(),
        ));
        tasks.push(crate::memory_api::spawn_pause_timer(
            service.clone(),
            shutdown.subscribe(),
        ));
        tasks.push(crate::workers::spawn_capture(
            service.clone(),
            shutdown.subscribe(),
        ));
        tasks.push(crate::workers::spawn_indexing(
            service.clone(),
            shutdown.subscribe(),
        ));
        tasks.push(crate::distill_api::spawn_distillation(
            service.clone(),
            shutdown.subscribe(),
        ));
        tracing::info!(host = ?opts.host, pid = std::process::id(), "service started");
        Ok(Self {
            service,
            info,
            shutdown,
            tasks,
            service_file,
            _lock: lock,
        })
    }

    /// The service.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// The address and token, when the HTTP API is served.
    pub fn info(&self) -> Option<&ServiceFile> {
        self.info.as_ref()
    }

    /// Stops the server and the workers, checkpoints the store, removes `service.json` and
    /// releases the lock.
    pub async fn shutdown(self) {
        self.shutdown.send_replace(true);
        for task in self.tasks {
            if tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .is_err()
            {
                tracing::warn!("a task did not stop within 10 s");
            }
        }
        if let Err(e) = self.service.store().checkpoint().await {
            tracing::warn!(error = %e, "final checkpoint failed");
        }
        if self.info.is_some()
            && let Err(e) = fs_err::remove_file(&self.service_file)
        {
            tracing::warn!(error = %e, "cannot remove the service file");
        }
        tracing::info!("service stopped");
    }
}

/// Runs one method on a service opened directly (no HTTP, no workers), for the CLI when no
/// service is running. Takes the lock for the call's duration so a daemon cannot start
/// underneath it.
pub(crate) async fn open_direct(
    paths: &Paths,
    settings: &Settings,
    config_file: PathBuf,
) -> std::result::Result<(Service, InstanceLock), StartError> {
    paths.create_all().map_err(|e| {
        ApiError::new(
            ErrorCode::Unavailable,
            format!("cannot create Cairn's folders: {e}"),
        )
    })?;
    let lock = InstanceLock::acquire(&paths.lock_file(), &paths.service_file())?;
    let opts = ServiceOptions {
        paths: paths.clone(),
        settings: settings.clone(),
        config_file,
        host: ServiceHost::Direct,
        serve_http: false,
        ui_dir: None,
    };
    Ok((Service::load(&opts).await?, lock))
}
