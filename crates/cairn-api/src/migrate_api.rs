//! `index_migrate`: the vector index copied to a remote Qdrant server or cluster from the
//! vectors the store keeps (no model call), checked, and named in the config file so the
//! next start uses it. Nothing changes when the server cannot be reached, the copy fails or
//! the count does not match: the embedded index stays in use and the config file as it was.
use std::sync::Arc;

use cairn_core::ErrorCode;
use cairn_core::api::{IndexMigrateReport, IndexMigrateReq, WorkerState};
use cairn_core::ports::VectorIndex;

use crate::{ApiError, Result, Service};

/// The collection Cairn uses on every Qdrant server.
const COLLECTION: &str = "cairn";
/// The worker the copy reports its progress as.
const WORKER: &str = crate::board::INDEXING;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("the migration's worker thread failed: {e}")))
}

impl Service {
    /// The `index_migrate` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn index_migrate(&self, req: IndexMigrateReq) -> Result<IndexMigrateReport> {
        if req.to != "remote" {
            return Err(ApiError::bad_request(format!(
                "the vector index can be migrated to \"remote\" (a Qdrant server or cluster), not {:?}",
                req.to
            )));
        }
        let settings = self.settings().index.clone();
        let url = req
            .url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| settings.url.clone());
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ApiError::bad_request(if url.is_empty() {
                "name the Qdrant server: --url https://qdrant.example.com:6334 (or index.url in the config file)".to_owned()
            } else {
                format!(
                    "{url:?} is not an http:// or https:// URL of a Qdrant server (its gRPC port, usually 6334)"
                )
            }));
        }
        if settings.backend == "remote" && settings.url == url {
            return Err(ApiError::bad_request(format!(
                "the vector index is already the remote one at {url}"
            )));
        }
        let started = std::time::Instant::now();
        // Reach the server first: nothing else is touched when it cannot be reached.
        let key = cairn_vectors::load_key(cairn_vectors::REMOTE_KEY_USER).unwrap_or_default();
        let (shards, replication) = (settings.shards, settings.replication);
        let target_url = url.clone();
        let target: Arc<dyn VectorIndex> = blocking(move || {
            cairn_vectors::ServerIndex::connect(&target_url, key, COLLECTION)
                .map(|i| Arc::new(i.with_layout(shards, replication)) as Arc<dyn VectorIndex>)
        })
        .await?
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                format!(
                    "cannot reach the Qdrant server at {url}: {}. Nothing was changed.",
                    e.message
                ),
            )
        })?;
        // A one-shot CLI has not loaded the models yet (the service's worker does it at
        // start); the vectors to copy are the ones kept for the loaded embedder.
        self.ensure_models().await;
        let Some(dense) = self.dense_parts().await else {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                "the embedding model is not loaded yet (the vectors are kept per model); try again in a moment. Nothing was changed.",
            ));
        };
        let board = self.workers().clone();
        board.report(
            WORKER,
            WorkerState::Running,
            Some(format!("copying the vector index to {url}")),
            Some(0.0),
        );
        let b = board.clone();
        let shown = url.clone();
        let copied = dense
            .copy_to(target.clone(), self.store(), &move |done, total| {
                b.report(
                    WORKER,
                    WorkerState::Running,
                    Some(format!(
                        "copying the vector index to {shown} ({done}/{total})"
                    )),
                    Some(if total == 0 {
                        1.0
                    } else {
                        done as f32 / total as f32
                    }),
                );
            })
            .await;
        let fail = |board: &crate::WorkerBoard, e: ApiError| {
            board.report(
                WORKER,
                WorkerState::Failed,
                Some(format!("migration to {url} failed: {}", e.message)),
                None,
            );
            ApiError::new(
                e.code,
                format!(
                    "the copy to {url} failed: {}. The config file was not changed; the local index stays in use.",
                    e.message
                ),
            )
        };
        let points = copied.map_err(|e| fail(&board, e))?;
        let t = target.clone();
        let count = blocking(move || t.count())
            .await?
            .map_err(|e| fail(&board, ApiError::new(ErrorCode::Unavailable, e.message)))?;
        if count != points {
            return Err(fail(
                &board,
                ApiError::internal(format!(
                    "the collection holds {count} points after {points} were written"
                )),
            ));
        }
        let file = self.config_file().to_path_buf();
        let mut next = settings.clone();
        next.backend = "remote".into();
        next.url = url.clone();
        let to_save = file.clone();
        blocking(move || cairn_config::save_index(&to_save, &next))
            .await?
            .map_err(|e| {
                fail(
                    &board,
                    ApiError::internal(format!("the config file could not be updated: {e}")),
                )
            })?;
        board.report(
            WORKER,
            WorkerState::Idle,
            Some(format!(
                "copied {points} vectors to {url}; in use from the next start"
            )),
            None,
        );
        tracing::info!(%url, points, "vector index migrated");
        Ok(IndexMigrateReport {
            to: "remote".into(),
            url,
            points,
            collection_points: count,
            config_file: file.display().to_string(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }
}
