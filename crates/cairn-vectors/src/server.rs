//! [`ServerIndex`]: a Qdrant server over gRPC (`qdrant-client`), and [`Sidecar`]: a `qdrant`
//! binary the app runs on loopback.
use std::collections::HashMap;
use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn_core::VectorKind;
use cairn_core::ports::{BackendError, VectorFilter, VectorHit, VectorIndex, VectorPoint};
use qdrant_client::qdrant::value::Kind;
use qdrant_client::qdrant::vectors_config::Config as VectorsConfigKind;
use qdrant_client::qdrant::{
    BinaryQuantizationBuilder, BinaryQuantizationEncoding, BinaryQuantizationQueryEncoding,
    Condition, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    DeletePointsBuilder, Distance, FieldType, Filter, KeywordIndexParamsBuilder, PointStruct,
    QuantizationSearchParamsBuilder, Query, QueryPointsBuilder, Range, ScoredPoint,
    SearchParamsBuilder, UpsertPointsBuilder, Value, VectorParamsBuilder, VectorsConfigBuilder,
};
use qdrant_client::{Qdrant, QdrantError};

use crate::common::{
    DEFAULT_MIN_CANDIDATES, KEY_FRAMEWORK, KEY_KIND, KEY_ORD, KEY_OWNER, KEY_PROJECT, KEY_SESSION,
    KEY_TIMESTAMP, KEY_VECTOR_KIND, KEYWORD_KEYS, VECTOR_NAMES, bad_input, check_dim_nonzero,
    checked_unit, corrupt, kind_from_name, other, oversampling_for, point_id, unavailable,
};

/// Points sent per upsert request.
const UPSERT_BATCH: usize = 256;
/// The beam width of an HNSW search (raised to the number of candidates when larger).
const HNSW_EF: u64 = 128;
/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a sidecar may take to become ready.
const SIDECAR_READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A Qdrant server reached over gRPC: a remote URL or cluster ([`ServerIndex::connect`]) or a
/// local [`Sidecar`] ([`ServerIndex::connect_sidecar`]).
///
/// Same layout as [`crate::EmbeddedIndex`]: one collection with named vectors `summary`,
/// `chunk` and `cue` (cosine, full vectors on disk), 1-bit quantized codes in RAM, re-scoring
/// of every quantized search, the same payload, payload indexes and filters. Writes wait for
/// the server to apply them, so [`VectorIndex::flush`] has nothing left to do.
///
/// Blocking: it owns a small tokio runtime and waits on it. Call it off the async runtime
/// (from a blocking thread, it runs each request on a short-lived thread of its own).
pub struct ServerIndex {
    /// Taken when the index is dropped (see its `Drop`).
    runtime: Option<tokio::runtime::Runtime>,
    client: Qdrant,
    collection: String,
    backend: &'static str,
    /// The collection's dimension, once known.
    dim: Mutex<Option<usize>>,
    /// The fewest candidates a quantized search re-scores.
    min_candidates: AtomicUsize,
    /// Shards and copies of each shard, when it creates the collection.
    layout: (u32, u32),
}

impl Drop for ServerIndex {
    /// Dropping a runtime waits for its threads, which tokio refuses inside an async context
    /// (a service method dropping its last handle to the index, as the migration does): the
    /// client's runtime is let go without waiting.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Debug for ServerIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerIndex")
            .field("backend", &self.backend)
            .field("collection", &self.collection)
            .finish_non_exhaustive()
    }
}

impl ServerIndex {
    /// Connects to the Qdrant server at `url` (its gRPC endpoint, e.g.
    /// `https://xyz.cloud.qdrant.io:6334`) and uses `collection`. Checks the connection: an
    /// unreachable server or a refused key is an error of kind `Unavailable`.
    pub fn connect(
        url: &str,
        api_key: Option<String>,
        collection: &str,
    ) -> Result<Self, BackendError> {
        Self::connect_as("remote", url, api_key, collection)
    }

    /// Connects to a running [`Sidecar`] with its key and uses `collection`.
    pub fn connect_sidecar(sidecar: &Sidecar, collection: &str) -> Result<Self, BackendError> {
        Self::connect_as(
            "sidecar",
            &sidecar.grpc_url(),
            Some(sidecar.api_key().to_string()),
            collection,
        )
    }

    fn connect_as(
        backend: &'static str,
        url: &str,
        api_key: Option<String>,
        collection: &str,
    ) -> Result<Self, BackendError> {
        if collection.is_empty() {
            return Err(bad_input("the Qdrant collection name is empty"));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cairn-qdrant")
            .enable_all()
            .build()
            .map_err(|e| other(format!("cannot start the Qdrant client runtime: {e}")))?;
        let client = Qdrant::from_url(url)
            .api_key(api_key)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .skip_compatibility_check()
            .check_connection()
            .build()
            .map_err(|e| map_error(&format!("connect to Qdrant at {url}"), e))?;
        tracing::info!(backend, url, collection, "connected to Qdrant");
        Ok(Self {
            runtime: Some(runtime),
            client,
            collection: collection.to_string(),
            backend,
            dim: Mutex::new(None),
            min_candidates: AtomicUsize::new(DEFAULT_MIN_CANDIDATES),
            layout: (1, 1),
        })
    }

    /// The collection's layout when this index creates it: `shards` shards, each kept in
    /// `replication` copies (writes wait for one copy). An existing collection keeps its own.
    pub fn with_layout(mut self, shards: u32, replication: u32) -> Self {
        self.layout = (shards.max(1), replication.max(1));
        self
    }

    /// Sets the fewest candidates a quantized search re-scores (default
    /// [`DEFAULT_MIN_CANDIDATES`]). For tuning and measurement.
    pub fn set_min_candidates(&self, n: usize) {
        self.min_candidates.store(n, Ordering::Relaxed);
    }

    /// The collection it uses.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// Deletes the collection (for tests and for leaving a remote cluster clean); the next
    /// [`VectorIndex::ensure`] creates it again.
    pub fn delete_collection(&self) -> Result<(), BackendError> {
        self.set_dim(None)?;
        self.block(async {
            self.client
                .delete_collection(self.collection.as_str())
                .await
                .map_err(|e| map_error("delete the collection", e))
        })?;
        Ok(())
    }

    /// Waits until the server has indexed everything written (the collection's status
    /// green: its optimizer built the graph of new points), at most `limit`. Returns how
    /// long it waited. A server builds its graph on its own after writes; a measurement
    /// that searches right after a bulk load waits for it first.
    pub fn wait_indexed(&self, limit: Duration) -> Result<Duration, BackendError> {
        let started = Instant::now();
        loop {
            let info = self.block(async {
                self.client
                    .collection_info(self.collection.as_str())
                    .await
                    .map_err(|e| map_error("read the collection's status", e))
            })?;
            let status = info.result.map(|r| r.status).unwrap_or_default();
            if status == qdrant_client::qdrant::CollectionStatus::Green as i32 {
                return Ok(started.elapsed());
            }
            if status == qdrant_client::qdrant::CollectionStatus::Red as i32 {
                return Err(other(format!(
                    "the collection {} is red on the server: its optimizer failed",
                    self.collection
                )));
            }
            if started.elapsed() > limit {
                return Err(other(format!(
                    "the server did not finish indexing the collection {} in {} s",
                    self.collection,
                    limit.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Runs a future to completion on the client's runtime.
    fn block<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            // Inside some runtime's context (a blocking-pool thread, or, wrongly, a task):
            // `block_on` may refuse there, so wait on a thread of our own.
            std::thread::scope(
                |s| match s.spawn(|| self.runtime().block_on(future)).join() {
                    Ok(output) => output,
                    Err(panic) => std::panic::resume_unwind(panic),
                },
            )
        } else {
            self.runtime().block_on(future)
        }
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the client runtime is there until the index is dropped")
    }

    fn cached_dim(&self) -> Result<Option<usize>, BackendError> {
        Ok(*self
            .dim
            .lock()
            .map_err(|_| other("the Qdrant index state was poisoned"))?)
    }

    fn set_dim(&self, dim: Option<usize>) -> Result<(), BackendError> {
        *self
            .dim
            .lock()
            .map_err(|_| other("the Qdrant index state was poisoned"))? = dim;
        Ok(())
    }

    /// The collection's dimension: cached, or read from the server (`None`: no collection).
    fn dim(&self) -> Result<Option<usize>, BackendError> {
        if let Some(dim) = self.cached_dim()? {
            return Ok(Some(dim));
        }
        let dim = self.block(async { self.server_dim().await })?;
        if dim.is_some() {
            self.set_dim(dim)?;
        }
        Ok(dim)
    }

    async fn server_dim(&self) -> Result<Option<usize>, BackendError> {
        let exists = self
            .client
            .collection_exists(self.collection.as_str())
            .await
            .map_err(|e| map_error("check the collection", e))?;
        if !exists {
            return Ok(None);
        }
        let info = self
            .client
            .collection_info(self.collection.as_str())
            .await
            .map_err(|e| map_error("read the collection", e))?;
        let config = info
            .result
            .and_then(|r| r.config)
            .and_then(|c| c.params)
            .and_then(|p| p.vectors_config)
            .and_then(|v| v.config);
        let Some(VectorsConfigKind::ParamsMap(map)) = config else {
            return Err(corrupt(format!(
                "the Qdrant collection `{}` has no named vectors; rebuild it",
                self.collection
            )));
        };
        let mut dim = None;
        for name in VECTOR_NAMES {
            let Some(params) = map.map.get(name) else {
                return Err(corrupt(format!(
                    "the Qdrant collection `{}` has no `{name}` vectors; rebuild it",
                    self.collection
                )));
            };
            let size =
                usize::try_from(params.size).map_err(|_| corrupt("a vector size does not fit"))?;
            if dim.is_some_and(|d| d != size) {
                return Err(corrupt(format!(
                    "the Qdrant collection `{}` has named vectors of different sizes; rebuild it",
                    self.collection
                )));
            }
            dim = Some(size);
        }
        Ok(dim)
    }

    async fn create_collection(&self, dim: usize) -> Result<(), BackendError> {
        let mut vectors = VectorsConfigBuilder::default();
        for name in VECTOR_NAMES {
            vectors.add_named_vector_params(
                name,
                VectorParamsBuilder::new(dim as u64, Distance::Cosine).on_disk(true),
            );
        }
        let created = self
            .client
            .create_collection(
                CreateCollectionBuilder::new(self.collection.as_str())
                    .shard_number(self.layout.0)
                    .replication_factor(self.layout.1)
                    .write_consistency_factor(1)
                    .vectors_config(vectors)
                    .on_disk_payload(true)
                    .quantization_config(
                        BinaryQuantizationBuilder::new(true)
                            .encoding(BinaryQuantizationEncoding::OneBit)
                            .query_encoding(BinaryQuantizationQueryEncoding::scalar8bits()),
                    ),
            )
            .await;
        if let Err(e) = created {
            // Someone else may have created it meanwhile; `ensure` checks it again.
            if self.server_dim().await?.is_none() {
                return Err(map_error("create the collection", e));
            }
        }
        let mut fields: Vec<(&str, FieldType)> = KEYWORD_KEYS
            .iter()
            .map(|k| (*k, FieldType::Keyword))
            .collect();
        fields.push((KEY_TIMESTAMP, FieldType::Integer));
        for (field, kind) in fields {
            self.client
                .create_field_index(
                    CreateFieldIndexCollectionBuilder::new(self.collection.as_str(), field, kind)
                        .wait(true),
                )
                .await
                .map_err(|e| map_error("index a payload field", e))?;
        }
        // A tenant key, as in the embedded index: each kind's points are kept together.
        self.client
            .create_field_index(
                CreateFieldIndexCollectionBuilder::new(
                    self.collection.as_str(),
                    KEY_VECTOR_KIND,
                    FieldType::Keyword,
                )
                .field_index_params(KeywordIndexParamsBuilder::default().is_tenant(true))
                .wait(true),
            )
            .await
            .map_err(|e| map_error("index a payload field", e))?;
        Ok(())
    }
}

fn map_error(what: &str, e: QdrantError) -> BackendError {
    use tonic::Code;
    match &e {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => {
            let message = format!("Qdrant could not {what}: {}", status.message());
            match status.code() {
                Code::Unavailable
                | Code::DeadlineExceeded
                | Code::Unauthenticated
                | Code::PermissionDenied
                | Code::ResourceExhausted => unavailable(message),
                Code::InvalidArgument => bad_input(message),
                Code::DataLoss => corrupt(message),
                _ => other(message),
            }
        }
        QdrantError::Io(_) | QdrantError::InvalidUri(_) => {
            unavailable(format!("Qdrant could not {what}: {e}"))
        }
        _ => other(format!("Qdrant could not {what}: {e}")),
    }
}

fn server_filter(filter: &VectorFilter) -> Option<Filter> {
    let mut must = Vec::new();
    let mut must_not = Vec::new();
    if let Some(project) = &filter.project {
        must.push(Condition::matches(KEY_PROJECT, project.clone()));
    }
    if let Some(framework) = &filter.framework {
        must.push(Condition::matches(KEY_FRAMEWORK, framework.clone()));
    }
    if !filter.kinds.is_empty() {
        must.push(Condition::matches(KEY_KIND, filter.kinds.clone()));
    }
    if filter.since_ms.is_some() || filter.until_ms.is_some() {
        let range = Range {
            gte: filter.since_ms.map(|v| v as f64),
            lte: filter.until_ms.map(|v| v as f64),
            ..Default::default()
        };
        must.push(Condition::range(KEY_TIMESTAMP, range));
    }
    if let Some(session) = &filter.exclude_session {
        must_not.push(Condition::matches(KEY_SESSION, session.clone()));
    }
    if must.is_empty() && must_not.is_empty() {
        return None;
    }
    Some(Filter {
        must,
        must_not,
        ..Default::default()
    })
}

fn server_point(point: &VectorPoint, vector: Vec<f32>) -> PointStruct {
    let mut payload: HashMap<&str, Value> = HashMap::new();
    payload.insert(KEY_OWNER, point.owner.clone().into());
    payload.insert(KEY_VECTOR_KIND, point.vector_kind.as_str().into());
    payload.insert(KEY_ORD, i64::from(point.ord).into());
    let p = &point.payload;
    for (key, value) in [
        (KEY_PROJECT, &p.project),
        (KEY_FRAMEWORK, &p.framework),
        (KEY_KIND, &p.kind),
        (KEY_SESSION, &p.session),
    ] {
        if let Some(value) = value {
            payload.insert(key, value.clone().into());
        }
    }
    payload.insert(KEY_TIMESTAMP, p.timestamp_ms.into());
    let vectors = HashMap::from([(point.vector_kind.as_str().to_string(), vector)]);
    PointStruct::new(
        point_id(&point.owner, point.vector_kind, point.ord),
        vectors,
        payload,
    )
}

fn hit_of(point: &ScoredPoint) -> Result<VectorHit, BackendError> {
    let bad = || corrupt("a point in the Qdrant collection has no owner, kind or ord; rebuild it");
    let text = |key: &str| match point.payload.get(key).and_then(|v| v.kind.as_ref()) {
        Some(Kind::StringValue(s)) => Some(s.clone()),
        _ => None,
    };
    let owner = text(KEY_OWNER).ok_or_else(bad)?;
    let kind = text(KEY_VECTOR_KIND)
        .as_deref()
        .and_then(kind_from_name)
        .ok_or_else(bad)?;
    let ord = match point.payload.get(KEY_ORD).and_then(|v| v.kind.as_ref()) {
        Some(Kind::IntegerValue(n)) => u32::try_from(*n).map_err(|_| bad())?,
        Some(Kind::DoubleValue(n))
            if n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX) =>
        {
            *n as u32
        }
        _ => return Err(bad()),
    };
    Ok(VectorHit {
        owner,
        vector_kind: kind,
        ord,
        score: point.score,
    })
}

fn no_collection() -> BackendError {
    bad_input("the vector index has no collection yet; call ensure(dim) first")
}

impl ServerIndex {
    /// One search, re-scoring at least `min_candidates` candidates unless `exact`.
    fn search_at(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        exact: bool,
        min_candidates: usize,
    ) -> Result<Vec<VectorHit>, BackendError> {
        let dim = self.dim()?.ok_or_else(no_collection)?;

        let query = checked_unit(vector, dim, "the query vector")?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let (oversampling, candidates) = oversampling_for(limit, min_candidates);
        let mut quantization = QuantizationSearchParamsBuilder::default()
            .ignore(exact)
            .rescore(!exact);
        if !exact {
            quantization = quantization.oversampling(oversampling);
        }
        let params = SearchParamsBuilder::default()
            .exact(exact)
            .hnsw_ef(HNSW_EF.max(candidates as u64))
            .quantization(quantization);
        let mut request = QueryPointsBuilder::new(self.collection.as_str())
            .query(Query::new_nearest(query))
            .using(kind.as_str())
            .limit(limit as u64)
            .params(params)
            .with_payload(true);
        if let Some(filter) = server_filter(filter) {
            request = request.filter(filter);
        }
        let response = self.block(async {
            self.client
                .query(request)
                .await
                .map_err(|e| map_error("search", e))
        })?;
        response.result.iter().map(hit_of).collect()
    }
}

impl VectorIndex for ServerIndex {
    fn backend(&self) -> &str {
        self.backend
    }

    fn ensure(&self, dim: usize) -> Result<(), BackendError> {
        check_dim_nonzero(dim)?;
        let existing = self.block(async {
            match self.server_dim().await? {
                Some(existing) => Ok(Some(existing)),
                None => {
                    self.create_collection(dim).await?;
                    self.server_dim().await
                }
            }
        })?;
        match existing {
            Some(existing) if existing != dim => Err(bad_input(format!(
                "the Qdrant collection `{}` holds vectors of {existing} dimensions, not {dim}; \
                 rebuild it",
                self.collection
            ))),
            Some(_) => self.set_dim(Some(dim)),
            None => Err(other(format!(
                "the Qdrant collection `{}` was not created",
                self.collection
            ))),
        }
    }

    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError> {
        let dim = self.dim()?.ok_or_else(no_collection)?;
        let mut prepared = Vec::with_capacity(points.len());
        for point in points {
            let vector = checked_unit(
                &point.vector,
                dim,
                &format!(
                    "the vector of {} ({}, {})",
                    point.owner,
                    point.vector_kind.as_str(),
                    point.ord
                ),
            )?;
            prepared.push(server_point(point, vector));
        }
        self.block(async {
            for batch in prepared.chunks(UPSERT_BATCH) {
                self.client
                    .upsert_points(
                        UpsertPointsBuilder::new(self.collection.as_str(), batch.to_vec())
                            .wait(true),
                    )
                    .await
                    .map_err(|e| map_error("store vectors", e))?;
            }
            Ok(())
        })
    }

    fn delete_owner(&self, owner: &str) -> Result<(), BackendError> {
        if self.dim()?.is_none() {
            return Ok(());
        }
        let filter = Filter::must([Condition::matches(KEY_OWNER, owner.to_string())]);
        self.block(async {
            self.client
                .delete_points(
                    DeletePointsBuilder::new(self.collection.as_str())
                        .points(filter)
                        .wait(true),
                )
                .await
                .map_err(|e| map_error("delete vectors", e))
        })?;
        Ok(())
    }

    fn search(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        exact: bool,
    ) -> Result<Vec<VectorHit>, BackendError> {
        let floor = self.min_candidates.load(Ordering::Relaxed);
        self.search_at(kind, vector, filter, limit, exact, floor)
    }

    fn search_rescoring(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &VectorFilter,
        limit: usize,
        candidates: usize,
    ) -> Result<Vec<VectorHit>, BackendError> {
        self.search_at(kind, vector, filter, limit, false, candidates)
    }

    fn count(&self) -> Result<u64, BackendError> {
        if self.dim()?.is_none() {
            return Ok(0);
        }
        let response = self.block(async {
            self.client
                .count(CountPointsBuilder::new(self.collection.as_str()).exact(true))
                .await
                .map_err(|e| map_error("count vectors", e))
        })?;
        Ok(response.result.map(|r| r.count).unwrap_or(0))
    }

    fn count_where(&self, filter: &VectorFilter) -> Result<u64, BackendError> {
        if self.dim()?.is_none() {
            return Ok(0);
        }
        let mut request = CountPointsBuilder::new(self.collection.as_str()).exact(true);
        if let Some(f) = server_filter(filter) {
            request = request.filter(f);
        }
        let response = self.block(async {
            self.client
                .count(request)
                .await
                .map_err(|e| map_error("count vectors", e))
        })?;
        Ok(response.result.map(|r| r.count).unwrap_or(0))
    }

    fn clear(&self) -> Result<(), BackendError> {
        let Some(dim) = self.dim()? else {
            return Ok(());
        };
        self.set_dim(None)?;
        self.block(async {
            self.client
                .delete_collection(self.collection.as_str())
                .await
                .map_err(|e| map_error("delete the collection", e))?;
            self.create_collection(dim).await
        })?;
        self.set_dim(Some(dim))
    }

    fn flush(&self) -> Result<(), BackendError> {
        // Every write waited for the server to apply it (and log it in its WAL).
        Ok(())
    }
}

/// A `qdrant` server the app runs as a child process, on loopback, on free ports, with an
/// API key made fresh for each run. Stopped (killed and reaped) on drop.
///
/// Its output goes to `<storage_dir>/qdrant.log`. Keep the key in the OS keyring with
/// [`crate::store_key`]`(`[`crate::SIDECAR_KEY_USER`]`, ..)` when one is available.
#[derive(Debug)]
pub struct Sidecar {
    child: Child,
    api_key: String,
    http_port: u16,
    grpc_port: u16,
    storage_dir: PathBuf,
}

impl Sidecar {
    /// Starts `qdrant_bin` with its storage in `storage_dir` (created if missing) and waits
    /// until it answers (up to a minute). A binary that cannot start, exits, or never
    /// answers is an error of kind `Unavailable`.
    pub fn start(qdrant_bin: &Path, storage_dir: &Path) -> Result<Sidecar, BackendError> {
        fs_err::create_dir_all(storage_dir)
            .map_err(|e| other(format!("cannot create the Qdrant storage folder: {e}")))?;
        let mut last_error = None;
        // A port picked as free may be taken before qdrant binds it: try a few times.
        for _ in 0..3 {
            match Self::start_once(qdrant_bin, storage_dir) {
                Ok(sidecar) => return Ok(sidecar),
                Err(e) => {
                    tracing::warn!("the Qdrant sidecar did not start: {e}");
                    last_error = Some(e);
                }
            }
        }
        Err(last_error.unwrap_or_else(|| unavailable("the Qdrant sidecar did not start")))
    }

    fn start_once(qdrant_bin: &Path, storage_dir: &Path) -> Result<Sidecar, BackendError> {
        let api_key = fresh_key()?;
        let http_port = free_port()?;
        let grpc_port = free_port()?;
        let log_path = storage_dir.join("qdrant.log");
        let log = fs_err::File::create(&log_path)
            .map_err(|e| other(format!("cannot create the Qdrant log: {e}")))?
            .into_parts()
            .0;
        let log_err = log
            .try_clone()
            .map_err(|e| other(format!("cannot share the Qdrant log: {e}")))?;
        let storage = storage_dir.join("storage");
        let child = Command::new(qdrant_bin)
            .current_dir(storage_dir)
            .env("QDRANT__SERVICE__HOST", "127.0.0.1")
            .env("QDRANT__SERVICE__API_KEY", &api_key)
            .env("QDRANT__SERVICE__HTTP_PORT", http_port.to_string())
            .env("QDRANT__SERVICE__GRPC_PORT", grpc_port.to_string())
            .env("QDRANT__STORAGE__STORAGE_PATH", &storage)
            .env(
                "QDRANT__STORAGE__SNAPSHOTS_PATH",
                storage_dir.join("snapshots"),
            )
            .env("QDRANT__TELEMETRY_DISABLED", "true")
            .env("QDRANT__CLUSTER__ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            .spawn()
            .map_err(|e| unavailable(format!("cannot start {}: {e}", qdrant_bin.display())))?;
        let mut sidecar = Sidecar {
            child,
            api_key,
            http_port,
            grpc_port,
            storage_dir: storage_dir.to_path_buf(),
        };
        sidecar.wait_ready()?;
        let storage = storage.display();
        tracing::info!(grpc_port, http_port, %storage, "the Qdrant sidecar is ready");
        Ok(sidecar)
    }

    fn wait_ready(&mut self) -> Result<(), BackendError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| other(format!("cannot start a runtime: {e}")))?;
        let client = Qdrant::from_url(&self.grpc_url())
            .api_key(self.api_key.clone())
            .connect_timeout(Duration::from_secs(1))
            .timeout(Duration::from_secs(2))
            .skip_compatibility_check()
            .build()
            .map_err(|e| map_error("connect to the sidecar", e))?;
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(unavailable(format!(
                    "the Qdrant sidecar exited ({status}); see {}",
                    self.storage_dir.join("qdrant.log").display()
                )));
            }
            if runtime.block_on(client.health_check()).is_ok() {
                return Ok(());
            }
            if started.elapsed() > SIDECAR_READY_TIMEOUT {
                return Err(unavailable(format!(
                    "the Qdrant sidecar did not answer within {}s; see {}",
                    SIDECAR_READY_TIMEOUT.as_secs(),
                    self.storage_dir.join("qdrant.log").display()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Its gRPC endpoint (`http://127.0.0.1:<port>`), for [`ServerIndex::connect`].
    pub fn grpc_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    /// Its REST endpoint (`http://127.0.0.1:<port>`).
    pub fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    /// The API key made for this run.
    pub fn api_key(&self) -> &str {
        &self.api_key
    }

    /// The child process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server now (dropping it does the same).
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            if let Err(e) = self.child.kill() {
                tracing::warn!("cannot stop the Qdrant sidecar: {e}");
            }
            if let Err(e) = self.child.wait() {
                tracing::warn!("cannot reap the Qdrant sidecar: {e}");
            }
        }
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.kill();
    }
}

fn fresh_key() -> Result<String, BackendError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| other(format!("no randomness for an API key: {e}")))?;
    Ok(hex::encode(bytes))
}

fn free_port() -> Result<u16, BackendError> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| unavailable(format!("no free loopback port: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| unavailable(format!("no free loopback port: {e}")))?
        .port();
    Ok(port)
}
