//! The service: the one owner of the store, its workers, and the dispatch table.
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cairn_config::{Paths, Settings};
use cairn_core::ErrorCode;
use cairn_core::api::{
    CaptureReport, ClearReport, ClearReq, ConfigView, Conversation, ConversationFacet,
    ConversationList, ConversationReq, ConversationSummary, ConversationsReq, Empty,
    MemoryPauseReq, MemorySetReq, MemoryState, Preferences, SearchHit, SearchReq, SearchRes,
    ServiceHost, ServiceInfo, Status, TurnView,
};
use cairn_index::{TextIndex, TextQuery};
use cairn_store::Store;
use tokio::sync::watch;

use crate::{ApiError, Result, WorkerBoard};

/// Which kind of process hosts the service.
pub use cairn_core::api::ServiceHost as Host;

use crate::pause::MEMORY_KEY;
const PREFERENCES_KEY: &str = "preferences";

/// How to start a service.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// Where everything lives.
    pub paths: Paths,
    /// Validated settings.
    pub settings: Settings,
    /// The config file they came from.
    pub config_file: PathBuf,
    /// Which kind of process this is.
    pub host: ServiceHost,
    /// Serve the HTTP API (the daemon and the desktop app do; a direct CLI call does not).
    pub serve_http: bool,
    /// The built web UI to serve at `/`, when there is one.
    pub ui_dir: Option<PathBuf>,
}

/// The service. Cheap to clone; every clone is the same service.
#[derive(Debug, Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    paths: Paths,
    settings: Settings,
    /// `[llm]` as in effect now: the settings view may change it while the service runs.
    llm: std::sync::RwLock<cairn_config::LlmSettings>,
    /// `[hook]` as in effect now (Settings → Integrations may change it).
    hook: std::sync::RwLock<cairn_config::HookSettings>,
    config_file: PathBuf,
    host: ServiceHost,
    started_at: String,
    address: OnceLock<String>,
    workers: WorkerBoard,
    memory: watch::Sender<bool>,
    /// The pause in effect, if any (see [`crate::memory_api`]).
    pause: crate::pause::PauseState,
    /// Held by Clear, and by workers while they write, so a clear never interleaves.
    write_gate: tokio::sync::RwLock<()>,
    /// BM25 over the records.
    text: Arc<TextIndex>,
    /// One capture pass at a time.
    capture_lock: tokio::sync::Mutex<()>,
    /// The last capture pass.
    last_capture: std::sync::Mutex<Option<CaptureReport>>,
    /// Problems found at start (each a sentence), shown in status.
    start_warnings: Vec<String>,
    /// The embedder and vector index, once loaded (None: keyword search only).
    dense: tokio::sync::RwLock<Option<crate::dense::Dense>>,
    /// The cross-encoder, once loaded.
    reranker: tokio::sync::RwLock<RerankerSlot>,
    /// Loading the models: done once it succeeds; a failure is retried later, with backoff.
    models: tokio::sync::Mutex<ModelLoad>,
    /// Wakes the indexing worker (after a capture pass, a model load, a refill).
    index_wake: tokio::sync::Notify,
    /// Bumped by every Clear, so the indexing worker drops a run that began before it.
    clear_generation: std::sync::atomic::AtomicU64,
    /// What could not be loaded (each a sentence), shown in status.
    model_warnings: std::sync::Mutex<Vec<String>>,
    /// What the background integrity check of the store found (a sentence), shown in status.
    store_warnings: std::sync::Mutex<Vec<String>>,
    /// Titled notes and their search index.
    notes: crate::notes_index::NotesState,
    items: crate::items_index::ItemsState,
    /// The turn note's state between turns (its ranker, its judge, item times).
    turn: Arc<cairn_turn::TurnState>,
}

/// Where loading the models stands.
#[derive(Debug, Default)]
struct ModelLoad {
    /// The embedder is loaded (the cross-encoder is optional: it is not retried).
    done: bool,
    /// Failed attempts in a row.
    failures: u32,
    /// No new attempt before this.
    next_try: Option<tokio::time::Instant>,
}

/// The wait before the next attempt after `failures` failed ones: 30 s, doubling, at most
/// an hour.
fn model_backoff(failures: u32) -> Duration {
    Duration::from_secs(30u64.saturating_mul(1 << failures.saturating_sub(1).min(7)))
        .min(Duration::from_secs(3600))
}

/// The loaded cross-encoder, if any.
#[derive(Clone)]
struct RerankerSlot(Option<Arc<dyn cairn_core::ports::Reranker>>);

impl std::fmt::Debug for RerankerSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match &self.0 {
            Some(r) => r.model_id(),
            None => "no reranker",
        })
    }
}

macro_rules! dispatch_table {
    ($($name:ident($req:ty) -> $res:ty, $doc:literal;)*) => {
        impl Service {
            /// Every method name, in declaration order.
            pub const METHODS: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Calls a method by name with JSON parameters: the one dispatch table that
            /// every transport (HTTP, Tauri, CLI, MCP) goes through.
            pub async fn dispatch(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value> {
                let params = if params.is_null() { serde_json::json!({}) } else { params };
                match method {
                    $(stringify!($name) => {
                        let req: $req = serde_json::from_value(params).map_err(|e| {
                            ApiError::bad_request(format!("invalid parameters for {}: {e}", stringify!($name)))
                        })?;
                        let res: $res = self.$name(req).await.map_err(|e| e.explain_disk_full(&self.inner.paths.data))?;
                        serde_json::to_value(res).map_err(|e| ApiError::internal(e.to_string()))
                    })*
                    other => Err(ApiError::new(
                        ErrorCode::NotFound,
                        format!("unknown method {other:?}; known methods: {}", Self::METHODS.join(", ")),
                    )),
                }
            }
        }
    };
}
cairn_core::for_each_method!(dispatch_table);

/// A date (`2026-08-20`, the start or, with `end`, the end of that day) or an RFC 3339 time
/// ([`cairn_core::api::parse_date`]); anything else is a bad request.
pub(crate) fn parse_date(s: &str, end: bool) -> Result<chrono::DateTime<chrono::Utc>> {
    cairn_core::api::parse_date(s, end).map_err(ApiError::bad_request)
}

/// A record found by search, as the API shows it.
fn record_hit(h: cairn_index::TextHit) -> SearchHit {
    SearchHit {
        id: h.record_id,
        source: "record".into(),
        title: None,
        item_kind: None,
        item_provenance: None,
        framework: h.framework,
        project: h.project,
        session_id: h.session_id,
        timestamp: h
            .timestamp
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        outcome: h.outcome,
        passage: h.passage,
        score: h.score,
        in_range: h.in_range,
    }
}

/// A conversation's title: its first request's first line, shortened.
fn title_of(request: &str) -> String {
    let line = request
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no request text)");
    if line.chars().count() > 120 {
        let cut: String = line.chars().take(117).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}

/// A record as the UI and agents see it: the request with its replies and tool steps.
pub(crate) fn turn_view(r: &cairn_core::Record) -> TurnView {
    let ts =
        |t: &chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    TurnView {
        id: r.record.id.to_string(),
        request: r.record.request.clone(),
        started_at: ts(&r.record.started_at),
        ended_at: r.record.ended_at.as_ref().map(ts),
        outcome: r.record.outcome.as_str().to_owned(),
        model: r.record.model.clone(),
        steps: r
            .record
            .content
            .get("steps")
            .and_then(|s| s.as_array())
            .cloned()
            .unwrap_or_default(),
        complete: r
            .record
            .content
            .get("complete")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true),
    }
}

/// A keyword index that holds documents while the store holds no record is left from a
/// Clear that was cut short (the process died between emptying the store and the index): it
/// is emptied at start, so nothing cleared stays searchable.
async fn drop_stale_text_index(store: &Store, text: &TextIndex) -> Result<()> {
    if text.num_docs() > 0 && store.counts().await?.records == 0 {
        tracing::warn!("the keyword index outlived a Clear that was cut short; emptying it");
        text.clear()
            .map_err(|e| ApiError::internal(format!("cannot empty the stale search index: {e}")))?;
    }
    Ok(())
}

/// The folders whose conversations are Cairn's own model calls, never captured: the agent
/// CLIs' working folder, as written and with its links resolved (a CLI records the path it
/// sees, which may be either).
fn internal_dirs(paths: &Paths) -> Vec<PathBuf> {
    let dir = paths.llm_workdir();
    let mut dirs = vec![dir.clone()];
    if let Ok(real) = fs_err::canonicalize(&dir)
        && real != dir
    {
        dirs.push(real);
    }
    dirs
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Service {
    /// Opens the store and reads the persisted state. The caller must hold the instance lock.
    pub async fn load(opts: &ServiceOptions) -> Result<Self> {
        opts.paths.create_all().map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                format!("cannot create Cairn's folders: {e}"),
            )
        })?;
        // The marks' key, loaded before capture can run, so the notes this install wrote
        // earlier are recognised when their conversations are read.
        if let Err(e) = cairn_text::marks::key_at(&opts.paths.mark_key()) {
            tracing::warn!(error = %e, "cannot read or make the mark key; turn notes are off until it is fixed");
        }
        let store = Store::open(&opts.paths.database()).await?;
        let enabled = store
            .setting::<bool>(MEMORY_KEY)
            .await?
            .map(|(v, _)| v)
            .unwrap_or(true);
        let (memory, _) = watch::channel(enabled);
        let pause = crate::pause::PauseState::new(if enabled {
            None
        } else {
            crate::pause::load_pause(&store).await
        });
        let mut start_warnings = Vec::new();
        let text = match TextIndex::open(&opts.paths.index_dir().join("text")) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "cannot open the search index; searching from memory until restart");
                start_warnings.push(format!(
                    "The search index could not be opened ({e}); search runs from memory until Cairn restarts."
                ));
                TextIndex::in_memory().map_err(|e| ApiError::internal(e.to_string()))?
            }
        };
        drop_stale_text_index(&store, &text).await?;
        let items_text = match TextIndex::open(&opts.paths.index_dir().join("items")) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "cannot open the items' search index; searching items from memory until restart");
                start_warnings.push(format!(
                    "The items' search index could not be opened ({e}); items are searched from memory until Cairn restarts."
                ));
                TextIndex::in_memory().map_err(|e| ApiError::internal(e.to_string()))?
            }
        };
        let notes = cairn_notes::Notes::open(opts.paths.notes_dir(), store.clone())
            .await
            .map_err(crate::notes_index::err)?;
        Ok(Self {
            inner: Arc::new(Inner {
                notes: crate::notes_index::NotesState::new(notes),
                items: crate::items_index::ItemsState::new(items_text),
                turn: Arc::default(),
                store,
                paths: opts.paths.clone(),
                settings: opts.settings.clone(),
                llm: std::sync::RwLock::new(opts.settings.llm.clone()),
                hook: std::sync::RwLock::new(opts.settings.hook.clone()),
                config_file: opts.config_file.clone(),
                host: opts.host,
                started_at: now(),
                address: OnceLock::new(),
                workers: WorkerBoard::default(),
                memory,
                pause,
                write_gate: tokio::sync::RwLock::new(()),
                text: Arc::new(text),
                capture_lock: tokio::sync::Mutex::new(()),
                last_capture: std::sync::Mutex::new(None),
                start_warnings,
                dense: tokio::sync::RwLock::new(None),
                reranker: tokio::sync::RwLock::new(RerankerSlot(None)),
                models: tokio::sync::Mutex::new(ModelLoad::default()),
                index_wake: tokio::sync::Notify::new(),
                clear_generation: std::sync::atomic::AtomicU64::new(0),
                model_warnings: std::sync::Mutex::new(Vec::new()),
                store_warnings: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }

    /// Brings the keyword index up to date with the store (the write side does this after
    /// every capture, so a search never has to). Tantivy's work runs on the blocking pool.
    pub async fn sync_index(&self) -> Result<u64> {
        let _permit = self.write_permit().await;
        self.sync_text().await
    }

    /// [`Service::sync_index`] for a caller that holds the write permit already.
    async fn sync_text(&self) -> Result<u64> {
        let text = self.inner.text.clone();
        let mut after = text.indexed_seq();
        let mut n = 0;
        loop {
            let page = self.inner.store.records_page(after, 500).await?;
            let Some(last) = page.last().map(|(r, _)| r.seq) else {
                break;
            };
            n += page.len() as u64;
            let text = text.clone();
            tokio::task::spawn_blocking(move || -> std::result::Result<(), cairn_index::Error> {
                for (rec, chunks) in &page {
                    text.put(rec, chunks)?;
                }
                text.commit(last)
            })
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .map_err(|e| ApiError::internal(format!("indexing failed: {e}")))?;
            after = last;
        }
        Ok(n)
    }

    /// Loads the embedder, the vector index and the cross-encoder (downloading the defaults
    /// on first use when settings allow), unless they are loaded already or the last failed
    /// attempt is too recent (30 s, doubling, at most an hour). What cannot be had is said in
    /// status and search degrades: no re-ranking, then keywords only. The service's indexing
    /// worker calls this right after start, so no search waits for it.
    pub async fn ensure_models(&self) {
        let mut load = self.inner.models.lock().await;
        if load.done
            || load
                .next_try
                .is_some_and(|t| tokio::time::Instant::now() < t)
        {
            return;
        }
        let loaded =
            crate::models::load(&self.inner.paths, &self.inner.settings, &self.inner.workers).await;
        // A lost or damaged vector index, or one that lost writes in a crash (it holds
        // fewer vectors than the store), is refilled from the vectors the store keeps: no
        // model call. The indexing worker does it, batch by batch.
        let mut refill_needed = loaded.fresh_index;
        if !refill_needed && let Some(d) = &loaded.dense {
            let kept = self
                .inner
                .store
                .count_vectors(&d.vectors_id())
                .await
                .unwrap_or(0);
            // The records' points against the records' vectors; the items' points are
            // checked against the item log by their own sync, but items' points with no item
            // left in the store are what a Clear cut short leaves too.
            let (records, items) = (d.records(), d.items());
            let held = tokio::task::spawn_blocking(move || {
                Some((records.count().ok()?, items.count().ok()?))
            })
            .await
            .ok()
            .flatten();
            let no_items = self.inner.store.counts().await.is_ok_and(|c| c.items == 0);
            // More points than the store keeps: a Clear was cut short (the process died
            // between emptying the store and the index); what it removed must go.
            refill_needed = held.is_some_and(|(r, i)| r != kept || (i > 0 && no_items));
        }
        if refill_needed && let Some(d) = &loaded.dense {
            tracing::info!(
                "the vector index does not match the store; refilling it from the stored vectors"
            );
            // Emptied, but with its collection, so a search meanwhile finds nothing rather
            // than failing; the indexing worker refills it batch by batch (a one-shot CLI
            // call, which has no worker, refills it now).
            let refill = async {
                d.clear(&self.inner.store).await?;
                let (index, dim) = (d.index.clone(), d.embedder.dim());
                tokio::task::spawn_blocking(move || index.ensure(dim))
                    .await
                    .map_err(|e| ApiError::internal(e.to_string()))?
                    .map_err(|e| ApiError::new(ErrorCode::Unavailable, e.message))?;
                if self.inner.host == ServiceHost::Direct {
                    d.sync(&self.inner.store, &self.inner.workers).await?;
                }
                Ok::<(), ApiError>(())
            };
            if let Err(e) = refill.await {
                tracing::warn!(error = %e, "cannot refill the vector index");
            }
        }
        if loaded.dense.is_some() {
            load.done = true;
            load.failures = 0;
            load.next_try = None;
        } else {
            load.failures += 1;
            let wait = model_backoff(load.failures);
            load.next_try = Some(tokio::time::Instant::now() + wait);
            tracing::warn!(
                attempt = load.failures,
                retry_in_s = wait.as_secs(),
                "models not loaded; trying again later"
            );
        }
        *self.inner.dense.write().await = loaded.dense;
        *self.inner.reranker.write().await = RerankerSlot(loaded.reranker);
        *self
            .inner
            .model_warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = loaded.warnings;
        self.inner.index_wake.notify_one();
    }

    /// Says in status what the store's integrity check found.
    pub(crate) fn store_damaged(&self, warning: String) {
        self.inner
            .store_warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(warning);
    }

    /// When the next model load attempt is due, if loading failed.
    pub(crate) async fn models_retry_at(&self) -> Option<tokio::time::Instant> {
        let load = self.inner.models.lock().await;
        if load.done { None } else { load.next_try }
    }

    /// Wakes the indexing worker.
    pub(crate) fn wake_indexing(&self) {
        self.inner.index_wake.notify_one();
    }

    /// Waits until the indexing worker is woken.
    pub(crate) async fn indexing_woken(&self) {
        self.inner.index_wake.notified().await;
    }

    /// Embeds what the dense index does not have yet, one batch at a time, each under the
    /// store's write permit, so Clear, a note save or a capture pass waits for one batch at
    /// most. Stops between batches when `stop` turns true, memory is switched off, or a
    /// Clear happened. Returns how many records it embedded.
    pub(crate) async fn embed_pending(&self, stop: &watch::Receiver<bool>) -> Result<u64> {
        use std::sync::atomic::Ordering;
        let Some(dense) = self.dense_parts().await else {
            return Ok(0);
        };
        let store = &self.inner.store;
        let board = &self.inner.workers;
        let generation = self.inner.clear_generation.load(Ordering::SeqCst);
        let halted = || {
            *stop.borrow()
                || !self.memory_enabled()
                || self.inner.clear_generation.load(Ordering::SeqCst) != generation
        };
        let mut run = {
            let _permit = self.write_permit().await;
            if halted() {
                return Ok(0);
            }
            dense.begin_sync(store).await?
        };
        loop {
            if halted() {
                break;
            }
            let _permit = self.write_permit().await;
            if halted() || !dense.sync_step(store, &mut run, board).await? {
                break;
            }
        }
        if self.inner.clear_generation.load(Ordering::SeqCst) == generation {
            let _permit = self.write_permit().await;
            dense.finish_sync(store, &run, board).await?;
        }
        Ok(run.done())
    }

    /// Brings the items' points in the vector index up to date with the item log (the
    /// indexing worker, after the records). Returns how many changed items it went over.
    pub(crate) async fn sync_item_vectors(&self) -> Result<u64> {
        let Some(d) = self.dense_parts().await else {
            return Ok(0);
        };
        self.inner
            .items
            .sync_vectors(&self.inner.store, &d, Some(&self.inner.workers))
            .await
    }

    /// Embeds what the dense index does not have yet.
    pub async fn sync_dense(&self) -> Result<u64> {
        self.ensure_models().await;
        let dense = self.inner.dense.read().await.clone();
        let Some(dense) = dense else { return Ok(0) };
        let _permit = self.write_permit().await;
        dense.sync(&self.inner.store, &self.inner.workers).await
    }

    /// Evaluations: embeds with `embedder` from now on, the same model as the one loaded
    /// behind a cache of the vectors it gave before (so a corpus measured again is not
    /// embedded again). Refused when the models are not loaded or `embedder` is another model.
    pub async fn embed_with(&self, embedder: Arc<dyn cairn_core::ports::Embedder>) -> Result<()> {
        self.ensure_models().await;
        let mut slot = self.inner.dense.write().await;
        let Some(dense) = slot.as_mut() else {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                "no embedding model is loaded",
            ));
        };
        if dense.embedder.model_id() != embedder.model_id()
            || dense.embedder.dim() != embedder.dim()
        {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "the embedder given is {} and the one loaded {}",
                    embedder.model_id(),
                    dense.embedder.model_id()
                ),
            ));
        }
        dense.embedder = embedder;
        Ok(())
    }

    /// Rebuilds both indexes from the logs alone (no model call). `progress(done, total)`.
    pub async fn rebuild_index(
        &self,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
    ) -> Result<(u64, u64)> {
        self.ensure_models().await;
        let _permit = self.write_permit().await;
        let text = self.inner.text.clone();
        tokio::task::spawn_blocking(move || text.clear())
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let records = self.sync_text().await?;
        // The items' keyword side is made again from the item log by the next search; their
        // points come back with the records' below.
        {
            let mut items = self.inner.items.hold().await;
            self.inner.items.clear(&mut items).await?;
        }
        let dense = self.inner.dense.read().await.clone();
        let vectors = match dense {
            Some(d) => d.rebuild(&self.inner.store, progress).await?,
            None => 0,
        };
        Ok((records, vectors))
    }

    /// Runs one capture pass now (unless memory is off), then indexes what it stored.
    /// `progress` is reported on the worker board as well.
    pub async fn capture_pass(&self) -> Result<CaptureReport> {
        if !self.memory_enabled() {
            return Err(ApiError::new(
                ErrorCode::MemoryOff,
                "memory is off: capture is stopped",
            ));
        }
        let _one = self.inner.capture_lock.lock().await;
        let board = self.inner.workers.clone();
        board.report(
            crate::board::CAPTURE,
            cairn_core::api::WorkerState::Running,
            Some("reading session stores".into()),
            Some(0.0),
        );
        let mut opts = self.capture_options()?;
        let report = {
            let _permit = self.write_permit().await;
            // Read under the permit: a Clear that ran while this pass waited for it must be
            // known to the pass, or the pass would read every file again from the start
            // (Clear wipes the cursors) and bring back what the Clear removed.
            opts.forget = self.inner.store.forgetting().await?;
            let b = board.clone();
            cairn_capture::pass::run(
                &self.inner.store,
                &opts,
                &move |p: cairn_capture::pass::Progress| {
                    let frac = if p.total == 0 {
                        1.0
                    } else {
                        p.done as f32 / p.total as f32
                    };
                    b.report(
                        crate::board::CAPTURE,
                        cairn_core::api::WorkerState::Running,
                        Some(format!("reading {} ({}/{})", p.framework, p.done, p.total)),
                        Some(frac),
                    );
                },
            )
            .await
        };
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                board.report(
                    crate::board::CAPTURE,
                    cairn_core::api::WorkerState::Failed,
                    Some(format!("capture failed: {e}")),
                    None,
                );
                return Err(e.into());
            }
        };
        self.sync_index().await?;
        // What the answers just captured did with the notes shown to their turns (after
        // the keyword index holds them: it counts how rare an identifier is).
        match self.decide_note_outcomes().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(outcomes = n, "decided what became of turn notes' entries"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot decide what became of turn notes' entries")
            }
        }
        if self.inner.host == ServiceHost::Direct {
            // A one-shot CLI call has no workers: it embeds what it captured itself.
            if let Err(e) = self.sync_dense().await {
                tracing::warn!(error = %e, "embedding new records failed; they are searchable by keyword");
            }
        } else {
            self.wake_indexing();
        }
        let added: u64 = report.frameworks.iter().map(|f| f.added + f.revised).sum();
        board.report(
            crate::board::CAPTURE,
            cairn_core::api::WorkerState::Idle,
            Some(format!(
                "{added} new records from {} frameworks in {} ms",
                report.frameworks.len(),
                report.duration_ms
            )),
            None,
        );
        for w in &report.warnings {
            tracing::warn!(warning = %w, "capture skipped something");
        }
        *self
            .inner
            .last_capture
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(report.clone());
        Ok(report)
    }

    /// What capture reads, from the settings and this process's environment.
    pub fn capture_options(&self) -> Result<cairn_capture::pass::PassOptions> {
        let env = cairn_capture::Env::from_process().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Unavailable,
                "no home directory: capture cannot find agents' session stores",
            )
        })?;
        let s = &self.inner.settings.capture;
        let aider_folders = s.aider.folders_under(&env.home);
        let specstory_folders = s.specstory.folders_under(&env.home);
        let trusted_history_folders = s.trusted_folders_under(&env.home);
        Ok(cairn_capture::pass::PassOptions {
            env,
            only: Vec::new(),
            disabled: s.disabled.clone(),
            settle: Duration::from_secs(s.settle_seconds),
            internal_dirs: internal_dirs(&self.inner.paths),
            forget: Default::default(),
            aider_folders,
            specstory_folders,
            trusted_history_folders,
            batch: Default::default(),
        })
    }

    /// The items' search index.
    pub(crate) fn items_state(&self) -> &crate::items_index::ItemsState {
        &self.inner.items
    }

    /// The turn note's state between turns.
    pub(crate) fn turn_state(&self) -> Arc<cairn_turn::TurnState> {
        self.inner.turn.clone()
    }

    /// Whether this is a one-shot CLI call (no workers: it loads the models itself).
    pub(crate) fn is_direct(&self) -> bool {
        self.inner.host == ServiceHost::Direct
    }

    /// The notes and their search index.
    pub(crate) fn notes_state(&self) -> &crate::notes_index::NotesState {
        &self.inner.notes
    }

    /// The BM25 index over the records.
    pub(crate) fn text_index(&self) -> Arc<TextIndex> {
        self.inner.text.clone()
    }

    /// The embedder and vector index, when loaded.
    pub(crate) async fn dense_parts(&self) -> Option<crate::dense::Dense> {
        self.inner.dense.read().await.clone()
    }

    /// Folds the vectors written since the last time into the vector index's graph (the
    /// maintenance worker does it every ten minutes; searches go on meanwhile). `false` when
    /// there was nothing to fold, or no vector index is loaded.
    pub async fn optimize_vectors(&self) -> std::result::Result<bool, String> {
        match self.dense_parts().await {
            Some(d) => tokio::task::spawn_blocking(move || d.index.optimize())
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.message)),
            None => Ok(false),
        }
    }

    /// The cross-encoder, when loaded.
    pub(crate) async fn reranker(&self) -> Option<Arc<dyn cairn_core::ports::Reranker>> {
        self.inner.reranker.read().await.0.clone()
    }

    /// One search over one or more corpora (the records, the notes) ranked as one list by
    /// the retriever, with the loaded embedder and cross-encoder. Each hit's `corpus` is its
    /// corpus's position in `corpora`. `at` is when the question is asked (dates in it such
    /// as "yesterday" are read against it); `None`: now.
    pub(crate) async fn retrieve(
        &self,
        corpora: Vec<cairn_recall::Corpus>,
        q: TextQuery,
        mode: cairn_recall::SearchMode,
        rerank: bool,
        tuning: cairn_recall::Tuning,
        at: Option<cairn_core::Timestamp>,
    ) -> Result<(Vec<cairn_recall::Hit>, cairn_recall::SearchNotes)> {
        let retriever = cairn_recall::Retriever {
            corpora,
            embedder: self.dense_parts().await.map(|d| d.embedder),
            reranker: self.reranker().await,
            tuning,
        };
        let query = cairn_recall::Query {
            text: q,
            mode,
            rerank,
            now: at.unwrap_or_else(chrono::Utc::now),
            recent_project: None,
        };
        retriever.search(&query).await.map_err(|e| match e {
            cairn_recall::Error::Store(e) => ApiError::from(e),
            other => ApiError::bad_request(other.to_string()),
        })
    }

    /// The store (for workers and tests).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Where everything lives.
    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    /// The settings in effect.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// `[llm]` as in effect now (the settings view may have changed it since start).
    pub fn llm_settings(&self) -> cairn_config::LlmSettings {
        self.inner
            .llm
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Tells agents' hooks (through `service.json`) how long to wait for a turn note now
    /// that the hook deadline changed or the LLM judge was switched on or off. Only this
    /// process's own file is rewritten; a CLI that opened the store directly has none.
    pub(crate) fn publish_hook_wait(&self) {
        let path = self.paths().service_file();
        let Ok(mut file) = crate::service_file::ServiceFile::read(&path) else {
            return;
        };
        if file.pid != std::process::id() {
            return;
        }
        let wait = hook_wait_ms(&self.llm_settings());
        let deadline = Some(self.hook_settings().deadline_ms);
        if file.hook_wait_ms != wait || file.hook_deadline_ms != deadline {
            file.hook_wait_ms = wait;
            file.hook_deadline_ms = deadline;
            if let Err(e) = file.write(&path) {
                tracing::warn!(error = %e, path = %path.display(), "cannot update the service file for the hooks' wait");
            }
        }
    }

    /// `[hook]` as in effect now.
    pub fn hook_settings(&self) -> cairn_config::HookSettings {
        self.inner
            .hook
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Puts new `[hook]` settings in effect (already validated and saved) and tells the
    /// hooks.
    pub(crate) fn set_hook_settings(&self, hook: cairn_config::HookSettings) {
        *self
            .inner
            .hook
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hook;
        self.publish_hook_wait();
    }

    /// Puts new `[llm]` settings in effect (already validated and saved).
    pub(crate) fn set_llm_settings(&self, llm: cairn_config::LlmSettings) {
        *self
            .inner
            .llm
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = llm;
    }

    /// The config file the settings came from (the settings view saves `[llm]` there).
    pub fn config_file(&self) -> &std::path::Path {
        &self.inner.config_file
    }

    /// When the service started (RFC 3339).
    pub(crate) fn started_at(&self) -> &str {
        &self.inner.started_at
    }

    /// Sets the address the HTTP API is served at, once; false when it was set already.
    pub(crate) fn set_address(&self, url: String) -> bool {
        self.inner.address.set(url).is_ok()
    }

    /// The worker board.
    pub fn workers(&self) -> &WorkerBoard {
        &self.inner.workers
    }

    /// The memory switch's sender and the pause in effect (for [`crate::memory_api`]).
    pub(crate) fn memory_switch(&self) -> (&watch::Sender<bool>, &crate::pause::PauseState) {
        (&self.inner.memory, &self.inner.pause)
    }

    /// Follows the memory switch (workers pause while it is off).
    pub fn memory_watch(&self) -> watch::Receiver<bool> {
        self.inner.memory.subscribe()
    }

    /// Taken (shared) by a worker for the span of a write, so Clear waits for it and no write
    /// lands half before and half after a clear.
    pub async fn write_permit(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.inner.write_gate.read().await
    }

    #[tracing::instrument(skip_all, err)]
    async fn status(&self, _: Empty) -> Result<Status> {
        let store = &self.inner.store;
        let counts = store.counts().await?;
        let memory = self.memory_state().await?;
        let last_clear = store
            .last_journal("clear")
            .await?
            .map(|e| e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let mut warnings = self.inner.start_warnings.clone();
        warnings.extend(
            self.inner
                .store_warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned(),
        );
        warnings.extend(
            self.inner
                .model_warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned(),
        );
        if let Some(c) = self
            .inner
            .last_capture
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            // Turns skipped on purpose (forgotten, while memory was off, Cairn's own model
            // calls) are not a problem to report.
            let on_purpose = [
                cairn_core::Forgotten::Cleared.reason(),
                cairn_core::Forgotten::MemoryOff.reason(),
                "Cairn's own model calls",
            ];
            let skipped: u64 = c
                .frameworks
                .iter()
                .flat_map(|f| f.skipped.iter())
                .filter(|s| !on_purpose.contains(&s.reason.as_str()))
                .map(|s| s.count)
                .sum();
            if skipped > 0 {
                warnings.push(format!(
                    "The last capture pass skipped {skipped} unreadable files, lines or rows (see Activity and the log); everything else was captured."
                ));
            }
        }
        if !memory.enabled {
            // The most important thing to know comes first.
            let what = match (memory.paused, &memory.paused_until) {
                (true, Some(until)) => format!("Memory is paused until {until}"),
                (true, None) => "Memory is paused until resumed".to_owned(),
                (false, _) => "Memory is off".to_owned(),
            };
            warnings.insert(
                0,
                format!("{what}: Cairn captures nothing and its search service is stopped."),
            );
        }
        Ok(Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            memory,
            data_dir: self.inner.paths.data.display().to_string(),
            config_file: self.inner.config_file.display().to_string(),
            counts,
            last_clear,
            service: ServiceInfo {
                pid: std::process::id(),
                started_at: self.inner.started_at.clone(),
                address: self.inner.address.get().cloned(),
                host: self.inner.host,
            },
            workers: self.inner.workers.snapshot(),
            warnings,
            capture: self
                .inner
                .last_capture
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        })
    }

    #[tracing::instrument(skip_all, err)]
    async fn search(&self, req: SearchReq) -> Result<SearchRes> {
        Ok(self.search_staged(req).await?.0)
    }

    /// A search, with where its time went stage by stage (`cairn bench items` reports them).
    pub async fn search_staged(&self, req: SearchReq) -> Result<(SearchRes, cairn_recall::Stages)> {
        if !self.memory_enabled() {
            return Err(ApiError::new(
                ErrorCode::MemoryOff,
                "memory is off: search is stopped",
            ));
        }
        if req.query.trim().is_empty() {
            return Err(ApiError::bad_request("the query is empty"));
        }
        if req.query.len() > 4096 {
            return Err(ApiError::bad_request(format!(
                "the query is {} bytes; at most 4096",
                req.query.len()
            )));
        }
        // A search never writes and never waits for the indexes or the models: the write
        // side keeps the keyword index current, and the indexing worker loads the models
        // right after start (until then, search says so and uses keywords). A one-shot CLI
        // call has no worker, so it loads them itself.
        if self.inner.host == ServiceHost::Direct {
            self.ensure_models().await;
        }
        let mode: cairn_recall::SearchMode = req
            .mode
            .as_deref()
            .unwrap_or("hybrid")
            .parse()
            .map_err(ApiError::bad_request)?;
        let rerank = req.rerank.unwrap_or(self.inner.settings.models.rerank);
        let q = TextQuery {
            text: req.query.clone(),
            project: req.project.clone(),
            framework: req.framework.clone(),
            since: req
                .since
                .as_deref()
                .map(|d| parse_date(d, false))
                .transpose()?,
            until: req
                .until
                .as_deref()
                .map(|d| parse_date(d, true))
                .transpose()?,
            exclude_session: req.exclude_session.clone(),
            before: None,
            bare: false,
            limit: req.limit.unwrap_or(20).clamp(1, 200) as usize,
            context_boost: None,
        };
        let kinds: Vec<String> = match &req.kinds {
            Some(k) if !k.is_empty() => k.iter().map(|k| k.trim().to_lowercase()).collect(),
            _ => vec!["record".into(), "item".into(), "note".into()],
        };
        if let Some(bad) = kinds
            .iter()
            .find(|k| !matches!(k.as_str(), "record" | "note" | "item"))
        {
            return Err(ApiError::bad_request(format!(
                "unknown kind {bad:?}: use record, note or item"
            )));
        }
        // Records, items and notes are candidates of one list: fused together, re-ranked
        // once, and that order is the answer.
        let mut corpora = Vec::new();
        let mut records_at = None;
        if kinds.iter().any(|k| k == "record") {
            records_at = Some(corpora.len());
            corpora.push(cairn_recall::Corpus {
                text: self.inner.text.clone(),
                vectors: self.dense_parts().await.map(|d| d.records()),
                keep: None,
                store: Some(self.inner.store.clone()),
                before: None,
                kinds: cairn_recall::CHUNKS,
            });
        }
        // Items are what was learned: searched with records unless a framework is asked
        // (an item belongs to none).
        let mut items_at = None;
        if kinds.iter().any(|k| k == "item")
            && req.framework.is_none()
            && let Some((index, corpus)) = self.items_corpus(q.project.clone()).await?
        {
            items_at = Some((corpora.len(), index));
            corpora.push(corpus);
        }
        // Notes are the user's own words: searched with records unless a framework is asked.
        let mut notes_at = None;
        if kinds.iter().any(|k| k == "note")
            && req.framework.is_none()
            && let Some((index, corpus)) = self.notes_corpus(q.project.clone()).await?
        {
            notes_at = Some((corpora.len(), index));
            corpora.push(corpus);
        }
        let (hits, searched) = if corpora.is_empty() {
            (Vec::new(), cairn_recall::SearchNotes::default())
        } else {
            self.retrieve(
                corpora,
                q,
                mode,
                rerank,
                cairn_recall::Tuning::default(),
                None,
            )
            .await?
        };
        let degraded = searched.degraded;
        let reranked = searched.reranked;
        // Records a review archived as duplicates stay in the log, out of search.
        let hidden = if records_at.is_some() {
            self.inner.store.hidden_records().await?
        } else {
            Default::default()
        };
        let out: Vec<SearchHit> = hits
            .into_iter()
            .filter_map(|h| match (&notes_at, &items_at) {
                (Some((at, index)), _) if *at == h.corpus => index.note_hit(h.hit),
                (_, Some((at, index))) if *at == h.corpus => index.item_hit(h.hit),
                _ if records_at == Some(h.corpus) => {
                    (!hidden.contains(&h.hit.record_id)).then(|| record_hit(h.hit))
                }
                _ => None,
            })
            .collect();
        let used = if degraded.iter().any(|n| n.contains("keyword search only")) {
            "bm25"
        } else {
            req.mode.as_deref().unwrap_or("hybrid")
        };
        Ok((
            SearchRes {
                mode: used.to_owned(),
                reranked,
                notes: degraded,
                hits: out,
            },
            searched.stages,
        ))
    }

    #[tracing::instrument(skip_all, err)]
    async fn index_rebuild(&self, _: Empty) -> Result<cairn_core::api::IndexReport> {
        let started = std::time::Instant::now();
        let board = self.inner.workers.clone();
        board.report(
            crate::board::INDEXING,
            cairn_core::api::WorkerState::Running,
            Some("rebuilding the indexes from the logs".into()),
            Some(0.0),
        );
        let b = board.clone();
        let result = self
            .rebuild_index(&move |done, total| {
                b.report(
                    crate::board::INDEXING,
                    cairn_core::api::WorkerState::Running,
                    Some(format!("rebuilding the vector index ({done}/{total})")),
                    Some(if total == 0 {
                        1.0
                    } else {
                        done as f32 / total as f32
                    }),
                );
            })
            .await;
        let (records, vectors) = match result {
            Ok(r) => r,
            Err(e) => {
                board.report(
                    crate::board::INDEXING,
                    cairn_core::api::WorkerState::Failed,
                    Some(format!("rebuild failed: {e}")),
                    None,
                );
                return Err(e);
            }
        };
        board.report(
            crate::board::INDEXING,
            cairn_core::api::WorkerState::Idle,
            Some(format!("rebuilt: {records} records, {vectors} vectors")),
            None,
        );
        Ok(cairn_core::api::IndexReport {
            records,
            vectors,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    #[tracing::instrument(skip_all, err)]
    async fn capture_run(&self, _: Empty) -> Result<CaptureReport> {
        self.capture_pass().await
    }

    #[tracing::instrument(skip_all, err)]
    async fn conversations(&self, req: ConversationsReq) -> Result<ConversationList> {
        let filter = cairn_store::SessionFilter {
            framework: req.framework,
            project: req.project,
            limit: req.limit.unwrap_or(50).clamp(1, 500),
            offset: req.offset.unwrap_or(0),
        };
        let sessions = self.inner.store.sessions(&filter).await?;
        let facets = self.inner.store.facets().await?;
        let ts = |t: &chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        };
        Ok(ConversationList {
            conversations: sessions
                .into_iter()
                .map(|s| ConversationSummary {
                    title: title_of(s.first_request.as_deref().unwrap_or("")),
                    first_at: ts(&s.first_at),
                    last_at: ts(&s.last_at),
                    framework: s.framework,
                    session_id: s.session_id,
                    project: s.project,
                    cwd: s.cwd,
                    turns: s.turns,
                    errors: s.errors,
                })
                .collect(),
            facets: facets
                .into_iter()
                .map(|(framework, project, count)| ConversationFacet {
                    framework,
                    project,
                    count,
                })
                .collect(),
        })
    }

    #[tracing::instrument(skip_all, err)]
    async fn conversation(&self, req: ConversationReq) -> Result<Conversation> {
        let records = self
            .inner
            .store
            .session_records(&req.framework, &req.session_id)
            .await?;
        let Some(first) = records.first() else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no conversation {} from {}", req.session_id, req.framework),
            ));
        };
        Ok(Conversation {
            framework: req.framework.clone(),
            session_id: req.session_id.clone(),
            project: first.record.project.clone(),
            cwd: first.record.cwd.clone(),
            turns: records.iter().map(turn_view).collect(),
        })
    }

    #[tracing::instrument(skip_all, err)]
    async fn memory_get(&self, _: Empty) -> Result<MemoryState> {
        self.memory_state().await
    }

    #[tracing::instrument(skip(self), err)]
    async fn memory_set(&self, req: MemorySetReq) -> Result<MemoryState> {
        self.set_memory(req).await
    }

    // A pause that cannot be read is the caller's mistake, answered, not logged as an error.
    #[tracing::instrument(skip(self))]
    async fn memory_pause(&self, req: MemoryPauseReq) -> Result<MemoryState> {
        self.pause_memory(req).await
    }

    #[tracing::instrument(skip(self), err)]
    async fn clear(&self, req: ClearReq) -> Result<ClearReport> {
        let _gate = self.inner.write_gate.write().await;
        // No items' sync writes from before the store is emptied until the index is.
        let mut items = self.inner.items.hold().await;
        // Note files go first: a notes read in between would otherwise take the files left
        // behind for notes edited outside Cairn and add them back.
        if req.notes {
            self.inner
                .notes
                .notes
                .wipe_files()
                .await
                .map_err(|e| ApiError::internal(format!("cannot delete the note files: {e}")))?;
            self.inner.notes.changed();
        }
        self.inner
            .clear_generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let removed = self.inner.store.clear(req.notes).await?;
        // Everything derived from what was remembered goes too: the keyword index, the
        // vector index (its folder, when it is not open), the last capture report, and the
        // log files (an error message may quote a note or a path).
        let text = self.inner.text.clone();
        tokio::task::spawn_blocking(move || text.clear())
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
            .map_err(|e| {
                ApiError::internal(format!("cleared the logs, but not the search index: {e}"))
            })?;
        self.inner.items.clear(&mut items).await.map_err(|e| {
            ApiError::internal(format!(
                "cleared the logs, but not the items' search index: {e}"
            ))
        })?;
        let dense = self.inner.dense.read().await.clone();
        if let Some(d) = dense {
            d.clear(&self.inner.store).await?;
        } else {
            // The embedded index is emptied in place, under its lock: the models may be
            // loading, and removing the folder under an index being opened would leave that
            // index writing into deleted files. If the loader holds it, the loader's check
            // (the index holds more points than the store keeps) empties it instead.
            let vectors = self.inner.paths.index_dir().join("vectors");
            if vectors.exists() {
                let emptied = tokio::task::spawn_blocking(move || {
                    cairn_vectors::EmbeddedIndex::create(&vectors).map(drop)
                })
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
                match emptied {
                    Ok(()) => {}
                    Err(e) if e.kind == cairn_core::ports::BackendErrorKind::Unavailable => {
                        tracing::info!("the vector index is being opened; the loader empties it");
                    }
                    Err(e) => {
                        return Err(ApiError::internal(format!(
                            "cleared the logs, but not the vector index: {}",
                            e.message
                        )));
                    }
                }
            }
            let sidecar = self.inner.paths.index_dir().join("qdrant");
            if sidecar.exists() {
                fs_err::remove_dir_all(&sidecar).map_err(|e| {
                    ApiError::internal(format!("cleared the logs, but not the vector index: {e}"))
                })?;
            }
            crate::dense::forget_progress(&self.inner.store).await?;
        }
        *self
            .inner
            .last_capture
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
        crate::logging::clear_logs(&self.inner.paths.logs);

        let cleared_at = self
            .inner
            .store
            .last_journal("clear")
            .await?
            .map(|e| e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_else(now);
        tracing::info!(
            records = removed.records,
            items = removed.items,
            notes = req.notes,
            "memory cleared"
        );
        Ok(ClearReport {
            cleared_at,
            removed,
            notes_kept: !req.notes,
        })
    }

    #[tracing::instrument(skip_all, err)]
    async fn preferences_get(&self, _: Empty) -> Result<Preferences> {
        Ok(self
            .inner
            .store
            .setting::<Preferences>(PREFERENCES_KEY)
            .await?
            .map(|(p, _)| p)
            .unwrap_or_default())
    }

    #[tracing::instrument(skip(self), err)]
    async fn preferences_set(&self, req: Preferences) -> Result<Preferences> {
        self.inner.store.set_setting(PREFERENCES_KEY, &req).await?;
        Ok(req)
    }

    #[tracing::instrument(skip_all, err)]
    async fn config_show(&self, _: Empty) -> Result<ConfigView> {
        Ok(ConfigView {
            path: self.inner.config_file.display().to_string(),
            effective: cairn_config::Settings {
                llm: self.llm_settings(),
                hook: self.hook_settings(),
                ..self.inner.settings.clone()
            }
            .to_toml(),
        })
    }

    /// Typed calls for Rust callers (the CLI); they go through the same methods.
    pub async fn call_status(&self) -> Result<Status> {
        self.status(Empty {}).await
    }
}

/// The hooks' extra wait for a turn note: the LLM judge's time when it is on and a provider
/// is set, plus a margin for the ranker and the answer; none otherwise.
pub(crate) fn hook_wait_ms(llm: &cairn_config::LlmSettings) -> Option<u32> {
    (llm.judge && !llm.provider.is_empty())
        .then(|| u32::try_from(llm.judge_ms + 100).unwrap_or(u32::MAX))
}
