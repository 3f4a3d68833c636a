//! `cairn daemon`: the headless service in the foreground, until Ctrl-C or SIGTERM.
use std::io::Write;
use std::path::PathBuf;

use cairn_api::{ApiError, Host, ServiceHandle, ServiceOptions, StartError, StartIntent};
use cairn_config::{Paths, Settings};

use super::{Ctx, Failure};
use crate::cli::DaemonArgs;

/// Runs the service with these settings until stopped.
pub async fn run(ctx: Ctx, args: DaemonArgs) -> Result<(), Failure> {
    daemon(ctx.paths, ctx.settings, ctx.file, args.ui_dir).await
}

async fn daemon(
    paths: Paths,
    settings: Settings,
    config_file: PathBuf,
    ui_dir: Option<PathBuf>,
) -> Result<(), Failure> {
    // Listen for SIGTERM before anything is printed: a stop sent the moment the address
    // appears (a service manager, a test) must shut down cleanly, never kill.
    let stop = StopSignals::listen();
    // Made absolute now: the folder served must not change with the working directory.
    let ui_dir = match ui_dir {
        Some(dir) => Some(
            fs_err::canonicalize(&dir)
                .map_err(|e| ApiError::bad_request(format!("--ui-dir {}: {e}", dir.display())))?,
        ),
        None => cairn_api::http::find_ui_dir(&settings)?,
    };
    let opts = ServiceOptions {
        paths,
        settings,
        config_file,
        host: Host::Daemon,
        serve_http: true,
        ui_dir: ui_dir.clone(),
    };
    // CLI calls wait for a service that has declared it is starting instead of opening the
    // store themselves; the intent ends once the service serves (or has failed to start).
    let intent = StartIntent::declare(&opts.paths.lock_file())?;
    let started = ServiceHandle::start(opts).await;
    drop(intent);
    let handle = match started {
        Ok(h) => h,
        Err(StartError::Lock(e)) => {
            return Err(Failure {
                code: 3,
                error: e.into(),
            });
        }
        Err(StartError::Api(e)) => return Err(e.into()),
    };
    if let Some(info) = handle.info() {
        println!("Cairn is running. Open the UI at {}", info.ui_url());
        if ui_dir.is_none() {
            println!(
                "(The web UI is not built: run `npm run app` in the Cairn checkout, or pass --ui-dir.)"
            );
        }
        println!("Press Ctrl-C to stop.");
        std::io::stdout().flush()?;
    }
    stop.wait().await;
    println!("Stopping…");
    handle.shutdown().await;
    Ok(())
}

/// The signals that stop the daemon, registered when made (not when first awaited).
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let term = match signal(SignalKind::terminate()) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C still stops");
                    None
                }
            };
            Self { term }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Waits for SIGTERM or Ctrl-C.
    async fn wait(self) {
        #[cfg(unix)]
        if let Some(mut term) = self.term {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot watch Ctrl-C");
        }
    }
}
