//! The background workers' loops: maintenance, indexing and capture (distillation's is in
//! `distill_api`, the pause timer in `memory_api`). Each reports on the
//! [`WorkerBoard`](crate::WorkerBoard).
use cairn_core::api::WorkerState;

use crate::board::{CAPTURE, INDEXING};

const MAINTENANCE: &str = "maintenance";
const MAINTENANCE_PERIOD: std::time::Duration = std::time::Duration::from_secs(600);

/// The maintenance worker: keeps the WAL short with a periodic checkpoint, so a crash or a
/// copy of the data folder never carries a long tail of un-merged pages.
pub(crate) fn spawn_maintenance(
    service: crate::Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let board = service.workers().clone();
    board.report(
        MAINTENANCE,
        WorkerState::Idle,
        Some("keeps the store compact".into()),
        None,
    );
    tokio::spawn(async move {
        // The store's integrity check reads the whole file, so it runs here, after start,
        // not when the store opens (a year of history would hold start-up for seconds).
        let checked = tokio::select! {
            r = service.store().quick_check() => Some(r),
            _ = shutdown.changed() => None,
        };
        match checked {
            Some(Ok(Some(found))) => {
                let warning = format!(
                    "the store failed its integrity check ({found}); export what you can \
                     (`cairn export`) and keep a copy of {} before anything else",
                    service.store().path().display()
                );
                tracing::error!("{warning}");
                board.report(
                    MAINTENANCE,
                    WorkerState::Failed,
                    Some(warning.clone()),
                    None,
                );
                service.store_damaged(warning);
            }
            Some(Err(e)) => tracing::warn!(error = %e, "cannot run the store's integrity check"),
            Some(Ok(None)) | None => {}
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep(MAINTENANCE_PERIOD) => {}
                _ = shutdown.changed() => break,
            }
            if *shutdown.borrow() {
                break;
            }
            board.report(MAINTENANCE, WorkerState::Running, None, None);
            let result = {
                let _permit = service.write_permit().await;
                service.store().checkpoint().await
            };
            // New vectors are folded into the vector index's graph while nothing else runs
            // (searches go on meanwhile; only flushes wait).
            let optimized = service.optimize_vectors().await;
            if let Err(e) = &optimized {
                tracing::warn!(error = %e, "cannot optimize the vector index");
            }
            match result {
                Ok(()) => board.report(
                    MAINTENANCE,
                    WorkerState::Idle,
                    Some(if optimized == Ok(true) {
                        "checkpointed the store and optimized the vector index".into()
                    } else {
                        "checkpointed the store".into()
                    }),
                    None,
                ),
                Err(e) => board.report(
                    MAINTENANCE,
                    WorkerState::Failed,
                    Some(format!("checkpoint failed: {e}")),
                    None,
                ),
            }
        }
    })
}

/// The indexing worker: right after start it brings the keyword index up to date and
/// loads the models (retrying a failed load later, with backoff), then embeds new records
/// whenever a capture pass stored some. It takes the store's write permit per batch and
/// stops between batches when memory is switched off, Clear is asked for, or the service
/// stops, so none of them waits more than about a second. Searches never wait for it.
pub(crate) fn spawn_indexing(
    service: crate::Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = service.sync_index().await {
            tracing::warn!(error = %e, "cannot bring the keyword index up to date");
        }
        loop {
            if *shutdown.borrow() {
                break;
            }
            let loading = tokio::select! {
                () = service.ensure_models() => true,
                _ = shutdown.changed() => false,
            };
            if !loading || *shutdown.borrow() {
                break;
            }
            if service.memory_enabled() {
                match service.embed_pending(&shutdown).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(records = n, "embedded new records"),
                    Err(e) => {
                        tracing::warn!(error = %e, "embedding failed; new records are searchable by keyword");
                        service.workers().report(
                            INDEXING,
                            WorkerState::Failed,
                            Some(format!("embedding failed: {e}")),
                            None,
                        );
                    }
                }
                match service.sync_item_vectors().await {
                    Ok(0) => {}
                    Ok(n) => {
                        tracing::info!(items = n, "indexed changed items");
                        service.workers().report(
                            INDEXING,
                            WorkerState::Idle,
                            Some(format!("indexed {n} changed items")),
                            None,
                        );
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "indexing items failed; they are searchable by keyword");
                        service.workers().report(
                            INDEXING,
                            WorkerState::Failed,
                            Some(format!("indexing items failed: {e}")),
                            None,
                        );
                    }
                }
            }
            let retry = service.models_retry_at().await;
            tokio::select! {
                () = service.indexing_woken() => {}
                () = async {
                    match retry {
                        Some(t) => tokio::time::sleep_until(t).await,
                        None => std::future::pending().await,
                    }
                } => {}
                _ = shutdown.changed() => {}
            }
        }
    })
}

/// The capture worker: a first pass shortly after start, then one every
/// `capture.interval_minutes`, and one `capture.settle_seconds` after a session file stops
/// changing (file watching, debounced). Paused while memory is off.
pub(crate) fn spawn_capture(
    service: crate::Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    use std::time::Duration;
    use tokio::time::Instant;
    let board = service.workers().clone();
    let s = service.settings().capture.clone();
    let startup = Duration::from_secs(s.startup_delay_seconds);
    let interval = Duration::from_secs(s.interval_minutes * 60);
    let settle = Duration::from_secs(s.settle_seconds);
    if !s.enabled {
        board.report(
            CAPTURE,
            WorkerState::Paused,
            Some("capture is switched off in settings (capture.enabled)".into()),
            None,
        );
        return tokio::spawn(async {});
    }
    board.report(
        CAPTURE,
        WorkerState::Idle,
        Some(format!("first pass in {} s", startup.as_secs())),
        None,
    );
    tokio::spawn(async move {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let _watcher = service
            .capture_options()
            .ok()
            .and_then(|opts| watch(&opts, tx));
        let mut next_periodic = Instant::now() + startup;
        let mut changed_at: Option<Instant> = None;
        loop {
            let deadline = match changed_at {
                Some(t) => (t + settle).min(next_periodic),
                None => next_periodic,
            };
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => {}
                Some(()) = rx.recv() => {
                    changed_at = Some(Instant::now());
                    continue;
                }
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                break;
            }
            let now = Instant::now();
            if now >= next_periodic {
                next_periodic = now + interval;
            }
            changed_at = None;
            if !service.memory_enabled() {
                board.report(
                    CAPTURE,
                    WorkerState::Paused,
                    Some("memory is off".into()),
                    None,
                );
                continue;
            }
            match service.capture_pass().await {
                Ok(r) => tracing::info!(
                    ms = r.duration_ms,
                    frameworks = r.frameworks.len(),
                    "capture pass done"
                ),
                Err(e) => tracing::warn!(error = %e, "capture pass failed"),
            }
        }
    })
}

/// Watches the folders that hold session stores; each change sends a signal.
fn watch(
    opts: &cairn_capture::pass::PassOptions,
    tx: tokio::sync::mpsc::UnboundedSender<()>,
) -> Option<notify::RecommendedWatcher> {
    use notify::{EventKind, RecursiveMode, Watcher};
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res
            && matches!(ev.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_))
            && tx.send(()).is_err()
        {
            tracing::debug!("capture worker gone; change ignored");
        }
    })
    .map_err(|e| tracing::warn!(error = %e, "file watching unavailable; capture runs on its schedule only"))
    .ok()?;
    for root in cairn_capture::pass::watch_roots(opts) {
        if let Err(e) = watcher.watch(&root, RecursiveMode::Recursive) {
            tracing::warn!(error = %e, root = %root.display(), "cannot watch a session folder");
        }
    }
    Some(watcher)
}
