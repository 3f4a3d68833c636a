//! A long service call with the progress of the worker doing it on a bar (standard error),
//! and the bar an evaluation counts its own steps on.
use std::io::IsTerminal;

use cairn_api::{ApiError, Backend};

/// Calls a long method while a progress bar follows the named worker on the board.
pub async fn call_with_progress<Res: serde::de::DeserializeOwned>(
    backend: &Backend,
    method: &str,
    worker: &str,
    quiet: bool,
) -> Result<Res, ApiError> {
    call_with_progress_req(backend, method, &serde_json::json!({}), worker, quiet).await
}

/// Calls `method` with `params`, showing the `worker`'s progress from the status board
/// meanwhile (unless `quiet` or not at a terminal).
pub async fn call_with_progress_req<Req: serde::Serialize, Res: serde::de::DeserializeOwned>(
    backend: &Backend,
    method: &str,
    params: &Req,
    worker: &str,
    quiet: bool,
) -> Result<Res, ApiError> {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(1000);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {prefix} [{bar:30}] {percent:>3}% {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(worker.to_owned());
        bar
    };
    let run = backend.call_typed::<_, Res>(method, params);
    tokio::pin!(run);
    loop {
        tokio::select! {
            res = &mut run => {
                bar.finish_and_clear();
                return res;
            }
            _ = tokio::time::sleep(std::time::Duration::from_millis(150)) => {
                if bar.is_hidden() {
                    continue;
                }
                if let Ok(status) = backend.status().await
                    && let Some(w) = status.workers.iter().find(|w| w.name == worker)
                {
                    if let Some(p) = w.progress {
                        bar.set_position((p.clamp(0.0, 1.0) * 1000.0) as u64);
                    }
                    if let Some(d) = &w.detail {
                        bar.set_message(d.clone());
                    }
                }
                bar.tick();
            }
        }
    }
}

/// A bar of `len` steps counting `what` (standard error), with a message after it.
pub(crate) fn bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what} {{msg}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}
