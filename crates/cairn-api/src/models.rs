//! Loading the local models and the vector index the settings ask for. Nothing here panics:
//! what cannot be had becomes a warning in status, and search degrades (no re-ranking, then
//! keywords only).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_config::{Paths, Settings};
use cairn_core::api::WorkerState;
use cairn_core::ports::{BackendError, BackendErrorKind, Embedder, Reranker, VectorIndex};
use cairn_models::{BertEmbedder, CrossEncoder, CrossEncoderOptions, EmbedderOptions, ModelSpec};
use cairn_vectors::{EmbeddedIndex, MemoryIndex, ServerIndex, Sidecar};

use crate::WorkerBoard;
use crate::dense::Dense;

/// The worker board's name for model loading and downloads.
const MODELS: &str = "models";
/// The collection Cairn keeps its vectors in on a Qdrant server.
const COLLECTION: &str = "cairn";

/// What could be loaded.
pub(crate) struct Loaded {
    pub dense: Option<Dense>,
    pub reranker: Option<Arc<dyn Reranker>>,
    pub warnings: Vec<String>,
    /// The vector index was missing or damaged and was made afresh: it must be refilled
    /// from the store (no model call).
    pub fresh_index: bool,
}

fn setting_path(s: &str) -> Option<PathBuf> {
    if s.is_empty() {
        None
    } else {
        Some(PathBuf::from(s))
    }
}

fn resolve(
    spec: &ModelSpec,
    setting: &str,
    paths: &Paths,
    settings: &Settings,
    board: &WorkerBoard,
) -> Result<PathBuf, BackendError> {
    let name = spec.name.clone();
    let b = board.clone();
    let progress = move |done: u64, total: u64| {
        b.report(
            MODELS,
            WorkerState::Running,
            Some(format!(
                "downloading {name} ({} of {} MB)",
                done >> 20,
                total.max(done) >> 20
            )),
            (total > 0).then(|| done as f32 / total as f32),
        );
    };
    cairn_models::resolve(
        spec,
        setting_path(setting).as_deref(),
        &paths.data.join("models"),
        settings.models.download,
        &progress,
    )
    .map_err(BackendError::from)
}

fn load_embedder(
    paths: &Paths,
    settings: &Settings,
    board: &WorkerBoard,
) -> Result<Arc<dyn Embedder>, BackendError> {
    let spec = ModelSpec::all_minilm_l6_v2();
    let dir = resolve(&spec, &settings.models.embedder, paths, settings, board)?;
    let name = if settings.models.embedder.is_empty() {
        Some(spec.name.clone())
    } else {
        None
    };
    let e = BertEmbedder::load_with(
        &dir,
        &EmbedderOptions {
            name,
            ..EmbedderOptions::default()
        },
    )?;
    Ok(Arc::new(crate::query_memo::QueryMemo::new(Arc::new(e))))
}

fn load_reranker(
    paths: &Paths,
    settings: &Settings,
    board: &WorkerBoard,
) -> Result<Arc<dyn Reranker>, BackendError> {
    if let Some(name) = settings.models.reranker.strip_prefix("test:") {
        return test_reranker(name);
    }
    let spec = ModelSpec::ms_marco_minilm_l6_v2();
    let dir = resolve(&spec, &settings.models.reranker, paths, settings, board)?;
    let name = if settings.models.reranker.is_empty() {
        Some(spec.name.clone())
    } else {
        None
    };
    let r = CrossEncoder::load_with(
        &dir,
        &CrossEncoderOptions {
            name,
            ..CrossEncoderOptions::default()
        },
    )?;
    Ok(Arc::new(r))
}

/// Scores each passage by its position, so the fused order comes back reversed: a stand-in
/// for the cross-encoder in Cairn's own tests (`models.reranker = "test:reverse"`), which
/// shows that its order is the one callers get. Debug builds only.
#[cfg(debug_assertions)]
struct ReverseReranker;

#[cfg(debug_assertions)]
impl Reranker for ReverseReranker {
    fn model_id(&self) -> &str {
        "test:reverse"
    }

    fn score(&self, _query: &str, passages: &[&str]) -> Result<Vec<f32>, BackendError> {
        Ok((0..passages.len()).map(|i| i as f32).collect())
    }
}

/// The test re-ranker `test:<name>`.
#[cfg(debug_assertions)]
fn test_reranker(name: &str) -> Result<Arc<dyn Reranker>, BackendError> {
    match name {
        "reverse" => Ok(Arc::new(ReverseReranker)),
        other => Err(BackendError::new(
            BackendErrorKind::BadInput,
            format!("unknown test re-ranker \"test:{other}\": the only one is \"test:reverse\""),
        )),
    }
}

/// Release builds have no test re-ranker.
#[cfg(not(debug_assertions))]
fn test_reranker(name: &str) -> Result<Arc<dyn Reranker>, BackendError> {
    Err(BackendError::new(
        BackendErrorKind::BadInput,
        format!(
            "the test re-ranker \"test:{name}\" exists only in debug builds, and this is a release build: set models.reranker to a cross-encoder folder, or to \"\" for the default"
        ),
    ))
}

/// An opened vector index: (index, a sidecar to keep alive, made afresh).
type OpenedIndex = (Arc<dyn VectorIndex>, Option<Arc<Sidecar>>, bool);

/// The vector index the settings name.
fn open_index(
    paths: &Paths,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Result<OpenedIndex, BackendError> {
    match settings.index.backend.as_str() {
        "sidecar" => {
            let sidecar = Sidecar::start(
                Path::new(&settings.index.qdrant_bin),
                &paths.index_dir().join("qdrant"),
            )?;
            // The key is fresh for each run; keep it in the OS keyring when there is one.
            if let Err(e) =
                cairn_vectors::store_key(cairn_vectors::SIDECAR_KEY_USER, sidecar.api_key())
            {
                warnings.push(format!("The sidecar's API key is kept in memory only: {e}"));
            }
            let index = ServerIndex::connect_sidecar(&sidecar, COLLECTION)?;
            Ok((Arc::new(index), Some(Arc::new(sidecar)), false))
        }
        "remote" => {
            let key = match cairn_vectors::load_key(cairn_vectors::REMOTE_KEY_USER) {
                Ok(k) => k,
                Err(e) => {
                    warnings.push(format!(
                        "No OS keyring for the remote Qdrant key ({e}); connecting without a key."
                    ));
                    None
                }
            };
            let index = ServerIndex::connect(&settings.index.url, key, COLLECTION)?
                .with_layout(settings.index.shards, settings.index.replication);
            Ok((Arc::new(index), None, false))
        }
        _ => {
            let dir = paths.index_dir().join("vectors");
            match EmbeddedIndex::open(&dir) {
                Ok(i) => Ok((Arc::new(i), None, false)),
                Err(e) if e.kind == BackendErrorKind::Corrupt => {
                    if dir.exists() {
                        tracing::warn!(error = %e, "the vector index is damaged; rebuilding it from the store");
                    }
                    let i = EmbeddedIndex::create(&dir)?;
                    Ok((Arc::new(i), None, true))
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// Loads the embedder, the vector index and the cross-encoder (blocking work runs on the
/// blocking pool).
pub(crate) async fn load(paths: &Paths, settings: &Settings, board: &WorkerBoard) -> Loaded {
    let (paths, settings, board) = (paths.clone(), settings.clone(), board.clone());
    let done = tokio::task::spawn_blocking(move || load_blocking(&paths, &settings, &board)).await;
    done.unwrap_or_else(|e| Loaded {
        dense: None,
        reranker: None,
        warnings: vec![format!(
            "Loading the models failed ({e}); search uses keywords only."
        )],
        fresh_index: false,
    })
}

fn load_blocking(paths: &Paths, settings: &Settings, board: &WorkerBoard) -> Loaded {
    let mut warnings = Vec::new();
    board.report(
        MODELS,
        WorkerState::Running,
        Some("loading models".into()),
        None,
    );
    let embedder = match load_embedder(paths, settings, board) {
        Ok(e) => Some(e),
        Err(e) => {
            warnings.push(format!(
                "No embedding model ({e}); search uses keywords only."
            ));
            None
        }
    };
    let mut fresh_index = false;
    let dense = match embedder {
        Some(embedder) => match open_index(paths, settings, &mut warnings) {
            Ok((index, sidecar, fresh)) => {
                fresh_index = fresh;
                Some(Dense {
                    embedder,
                    index,
                    sidecar,
                })
            }
            Err(e) => {
                warnings.push(format!("The {} vector index is unavailable ({e}); searching vectors from memory until restart.", settings.index.backend));
                Some(Dense {
                    embedder,
                    index: Arc::new(MemoryIndex::new()),
                    sidecar: None,
                })
            }
        },
        None => None,
    };
    let reranker = match load_reranker(paths, settings, board) {
        Ok(r) => Some(r),
        Err(e) => {
            warnings.push(format!(
                "No cross-encoder ({e}); results are not re-ranked."
            ));
            None
        }
    };
    let summary = format!(
        "embedder: {}; re-ranker: {}",
        dense
            .as_ref()
            .map_or("none".to_owned(), |d| d.embedder.model_id().to_owned()),
        reranker
            .as_ref()
            .map_or("none".to_owned(), |r| r.model_id().to_owned()),
    );
    board.report(MODELS, WorkerState::Idle, Some(summary), None);
    Loaded {
        dense,
        reranker,
        warnings,
        fresh_index,
    }
}

/// The embedder and cross-encoder the settings name, for evaluations (no vector index).
pub async fn models_for_eval(
    paths: &Paths,
    settings: &Settings,
) -> (
    Option<Arc<dyn Embedder>>,
    Option<Arc<dyn Reranker>>,
    Vec<String>,
) {
    let (p, s) = (paths.clone(), settings.clone());
    let board = WorkerBoard::default();
    let res = tokio::task::spawn_blocking(move || {
        let mut warnings = Vec::new();
        let e = load_embedder(&p, &s, &board)
            .map_err(|e| warnings.push(format!("No embedding model: {e}")))
            .ok();
        let r = load_reranker(&p, &s, &board)
            .map_err(|e| warnings.push(format!("No cross-encoder: {e}")))
            .ok();
        (e, r, warnings)
    })
    .await;
    res.unwrap_or_else(|e| (None, None, vec![e.to_string()]))
}
