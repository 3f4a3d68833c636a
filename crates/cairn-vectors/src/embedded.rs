//! [`EmbeddedIndex`]: Qdrant embedded in-process through `qdrant-edge`.
//!
//! Folder layout: `<dir>/cairn-vectors` (a marker naming the format), `<dir>/lock` (held
//! while open, so two processes never share the folder) and `<dir>/shards/<kind>/` (one
//! Qdrant edge shard per kind of vector — `summary`, `chunk`, `cue` — each with its config,
//! WAL and segments), created by the first [`VectorIndex::ensure`].
//!
//! One shard per kind, not one shard with three named vectors: Qdrant keeps a slot for
//! every named vector of every point, so three kinds in one shard stored (and mapped, and
//! coded) three times the vectors there are.
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use cairn_core::VectorKind;
use cairn_core::ports::{BackendError, VectorFilter, VectorHit, VectorIndex, VectorPoint};
use qdrant_edge::external::ordered_float::OrderedFloat;
use qdrant_edge::external::serde_json::{Map, Value};
use qdrant_edge::external::uuid::Uuid;
use qdrant_edge::{
    BinaryQuantizationConfig, BinaryQuantizationEncoding, BinaryQuantizationQueryEncoding,
    Condition, CountRequest, CreateIndex, Distance, EdgeConfig, EdgeShard, EdgeVectorParams,
    FieldCondition, FieldIndexOperations, Filter, HnswIndexConfig, IntegerIndexParams, JsonPath,
    KeywordIndexParams, Match, NamedQuery, OperationError, Payload, PayloadFieldSchema,
    PayloadSchemaParams, PointId, PointInsertOperations, PointOperations, PointStructPersisted,
    QuantizationConfig, QuantizationSearchParams, QueryEnum, QueryRequest, Range, ScoredPoint,
    ScoringQuery, SearchParams, UpdateOperation, ValueVariants, VectorInternal,
    VectorStructInternal, WalOptions, WithPayloadInterface, WithVector,
};

use crate::common::{
    DEFAULT_MIN_CANDIDATES, KEY_FRAMEWORK, KEY_KIND, KEY_ORD, KEY_OWNER, KEY_PROJECT, KEY_SESSION,
    KEY_TIMESTAMP, KEY_VECTOR_KIND, KEYWORD_KEYS, bad_input, check_dim_nonzero, checked_unit,
    corrupt, kind_from_name, other, oversampling_for, panic_message, point_uuid, unavailable,
};

/// The marker file's name and its one line: bump the number when the layout changes, and
/// every older index is reported as `Corrupt` (and rebuilt from the store).
const MARKER_FILE: &str = "cairn-vectors";
const MARKER_TEXT: &str = "cairn-vectors embedded index, format 3\n";
const LOCK_FILE: &str = "lock";
const SHARD_DIR: &str = "shards";

/// The kinds of vector, one shard each, in the order of [`Shards::edges`].
const KINDS: [VectorKind; 3] = [VectorKind::Summary, VectorKind::Chunk, VectorKind::Cue];

/// Points written per WAL record.
const UPSERT_BATCH: usize = 256;

/// The beam width of an HNSW search (raised to the number of candidates when larger).
const HNSW_EF: usize = 128;

/// The open shards, one per kind of vector.
struct Shards {
    /// In the order of [`KINDS`].
    edges: [EdgeShard; 3],
    dim: usize,
}

impl Shards {
    fn edge(&self, kind: VectorKind) -> &EdgeShard {
        &self.edges[kind_slot(kind)]
    }

    /// Closes every shard (each flushes on drop), one at a time: a shard whose flush
    /// panics must not take the others down with it (a second panic while unwinding
    /// aborts the process). Returns the first failure.
    fn close(self) -> Result<(), BackendError> {
        let mut first = Ok(());
        for edge in self.edges {
            if let Err(e) = guarded("close", move || drop(edge))
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}

fn kind_slot(kind: VectorKind) -> usize {
    match kind {
        VectorKind::Summary => 0,
        VectorKind::Chunk => 1,
        VectorKind::Cue => 2,
    }
}

/// Qdrant embedded in-process (`qdrant-edge`), stored in one folder.
///
/// One point per [`VectorPoint`], in the shard of its kind (`summary`, `chunk` or `cue`,
/// cosine). Full vectors live on disk (memory-mapped); their 1-bit codes are kept in
/// RAM. A non-exact search scores the codes against the query kept at 8 bits, then re-scores
/// the best candidates (see [`crate::DEFAULT_MIN_CANDIDATES`]) from the full vectors. New
/// points land in an appendable segment, searched by scanning the codes;
/// [`EmbeddedIndex::optimize`] folds them into indexed segments (HNSW over the codes) and
/// drops deleted points.
///
/// Every call is blocking: run it off the async runtime.
///
/// Durability: writes are durable after [`VectorIndex::flush`] (and on drop). A crash loses
/// what was written since the last flush (qdrant-edge 0.7.2 logs writes in a WAL but does not
/// replay it at load), so mark vectors as indexed only once a flush has returned, or compare
/// [`VectorIndex::count`] with the store after [`EmbeddedIndex::open`]. Damage is reported as
/// `Corrupt`, at open or by any later call: the caller then rebuilds with
/// [`EmbeddedIndex::create`].
pub struct EmbeddedIndex {
    dir: PathBuf,
    shard: RwLock<Option<Shards>>,
    /// The fewest candidates a quantized search re-scores.
    min_candidates: AtomicUsize,
    /// Past this many bytes of a shard's WAL, a flush prunes it (see [`WAL_COMPACT_BYTES`]).
    wal_limit: AtomicU64,
    /// The folder, absolute and without links, as the kernel names the files it maps.
    real_dir: PathBuf,
    /// Held (locked) for the index's lifetime.
    _lock: fs_err::File,
}

impl std::fmt::Debug for EmbeddedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedIndex")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl EmbeddedIndex {
    /// Opens the index stored in `dir`.
    ///
    /// A missing folder, a folder that is not an index of this format, or damaged Qdrant data
    /// (loading fails, or the count or one query per kind fails right after) is an error of
    /// kind `Corrupt`: the caller then calls [`EmbeddedIndex::create`] and re-upserts every
    /// vector from the store. A folder held by another process is `Unavailable`.
    pub fn open(dir: &Path) -> Result<Self, BackendError> {
        if !dir.is_dir() {
            return Err(corrupt(format!(
                "there is no vector index at {}",
                dir.display()
            )));
        }
        let marker = dir.join(MARKER_FILE);
        match fs_err::read_to_string(&marker) {
            Ok(text) if text == MARKER_TEXT => {}
            Ok(_) => {
                return Err(corrupt(format!(
                    "the vector index at {} has another format; rebuild it",
                    dir.display()
                )));
            }
            Err(e) => {
                return Err(corrupt(format!(
                    "{} is not a vector index (its marker cannot be read: {e})",
                    dir.display()
                )));
            }
        }
        let lock = lock_dir(dir)?;
        let shard_dir = dir.join(SHARD_DIR);
        let shard = if shard_dir.exists() {
            Some(load_shards(&shard_dir)?)
        } else {
            None
        };
        let dim = shard.as_ref().map(|s| s.dim);
        tracing::debug!(dir = %dir.display(), ?dim, "opened the embedded vector index");
        let index = Self {
            dir: dir.to_path_buf(),
            shard: RwLock::new(shard),
            min_candidates: AtomicUsize::new(DEFAULT_MIN_CANDIDATES),
            wal_limit: AtomicU64::new(WAL_COMPACT_BYTES),
            real_dir: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
            _lock: lock,
        };
        // Opening read the WAL and the graphs through their mappings; none of it is needed
        // in memory until a search maps what it reads.
        index.release_mapped_pages();
        Ok(index)
    }

    /// Makes an empty index in `dir`, replacing any index (damaged or not) already there.
    ///
    /// `dir` may be missing, empty, or hold an index; a folder holding anything else is
    /// refused (`BadInput`) rather than wiped. The collection is created by the first
    /// [`VectorIndex::ensure`].
    pub fn create(dir: &Path) -> Result<Self, BackendError> {
        let cannot_read = |e: std::io::Error| other(format!("cannot read {}: {e}", dir.display()));
        if dir.exists() {
            let empty = fs_err::read_dir(dir).map_err(cannot_read)?.next().is_none();
            let ours = dir.join(MARKER_FILE).exists() || dir.join(LOCK_FILE).exists();
            if !empty && !ours {
                return Err(bad_input(format!(
                    "{} is not empty and is not a vector index; refusing to replace it",
                    dir.display()
                )));
            }
        }
        fs_err::create_dir_all(dir)
            .map_err(|e| other(format!("cannot create the vector index: {e}")))?;
        // Lock first, so a folder in use by another process is left alone.
        let lock = lock_dir(dir)?;
        for entry in fs_err::read_dir(dir).map_err(cannot_read)? {
            let entry = entry.map_err(cannot_read)?;
            if entry.file_name() != LOCK_FILE {
                remove_path(&entry.path())?;
            }
        }
        fs_err::write(dir.join(MARKER_FILE), MARKER_TEXT)
            .map_err(|e| other(format!("cannot write the vector index marker: {e}")))?;
        tracing::info!(dir = %dir.display(), "created an empty embedded vector index");
        Ok(Self {
            dir: dir.to_path_buf(),
            shard: RwLock::new(None),
            min_candidates: AtomicUsize::new(DEFAULT_MIN_CANDIDATES),
            wal_limit: AtomicU64::new(WAL_COMPACT_BYTES),
            real_dir: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
            _lock: lock,
        })
    }

    /// The folder the index is stored in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The dimension of the collection, once [`VectorIndex::ensure`] has created it.
    pub fn dim(&self) -> Result<Option<usize>, BackendError> {
        Ok(self.read()?.as_ref().map(|s| s.dim))
    }

    /// Sets the fewest candidates a quantized search re-scores (default
    /// [`DEFAULT_MIN_CANDIDATES`]): more finds more of the exact top results, at the cost of
    /// re-scoring more full vectors. For tuning and measurement.
    pub fn set_min_candidates(&self, n: usize) {
        self.min_candidates.store(n, Ordering::Relaxed);
    }

    /// Drops this process's mappings of the index's file pages that searches read (full
    /// vectors, graph, payloads, WAL: they stay in the kernel's page cache; see
    /// [`crate::release`]) and returns the bytes of mapping released. Every search does it
    /// when it is done: a re-score maps tens of MiB of full vectors (the kernel maps the
    /// cached pages around each one read), and mapping what the next search needs again from
    /// the page cache costs about a millisecond.
    pub fn release_mapped_pages(&self) -> u64 {
        crate::release::release_mapped_pages(&self.real_dir.join(SHARD_DIR))
    }

    /// Sets how many bytes of WAL a shard may hold before a flush prunes it (default
    /// [`WAL_COMPACT_BYTES`]). For tests and tuning.
    pub fn set_wal_limit(&self, bytes: u64) {
        self.wal_limit.store(bytes, Ordering::Relaxed);
    }

    /// Folds the appendable segment into indexed segments (an HNSW graph over the 1-bit
    /// codes), merges small segments and drops deleted points. Blocking and CPU-heavy (about
    /// a minute for 150,000 vectors of 384 dimensions on two cores): run it when idle, after
    /// a rebuild or a large import. It holds only a shared lock, so searches and upserts are
    /// not blocked by this crate (Qdrant's optimizer works behind proxy segments); `flush`,
    /// `clear` and `ensure` wait for it. Returns whether anything changed.
    pub fn optimize(&self) -> Result<bool, BackendError> {
        let guard = self.read()?;
        let Some(shard) = guard.as_ref() else {
            return Ok(false);
        };
        let mut changed = false;
        for edge in &shard.edges {
            changed |=
                guarded("optimize", || edge.optimize())?.map_err(|e| map_error("optimize", e))?;
            // A graph build reads every vector of its kind through the mappings (the old
            // segments' and the new one's): given back before the next kind's build, so the
            // peak is one kind's, not the sum of three.
            self.release_mapped_pages();
        }
        drop(guard);
        Ok(changed)
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, Option<Shards>>, BackendError> {
        self.shard
            .read()
            .map_err(|_| other("the embedded vector index was poisoned by a panic"))
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, Option<Shards>>, BackendError> {
        self.shard
            .write()
            .map_err(|_| other("the embedded vector index was poisoned by a panic"))
    }

    fn update(edge: &EdgeShard, operation: UpdateOperation) -> Result<(), BackendError> {
        guarded("update", || edge.update(operation))?.map_err(|e| map_error("update", e))
    }
}

impl Drop for EmbeddedIndex {
    fn drop(&mut self) {
        // `EdgeShard` flushes on drop and panics if that fails: keep such a panic inside.
        let shard = match self.shard.get_mut() {
            Ok(shard) => shard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(shard) = shard
            && let Err(e) = shard.close()
        {
            tracing::warn!(dir = %self.dir.display(), "closing the vector index failed: {e}");
        }
    }
}

/// Runs `f`, turning a panic inside Qdrant into a `Corrupt` error.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, BackendError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        corrupt(format!(
            "the embedded vector index failed during {what} ({}); rebuild it",
            panic_message(payload.as_ref())
        ))
    })
}

fn map_error(what: &str, e: OperationError) -> BackendError {
    match e {
        OperationError::WrongVectorDimension { .. } | OperationError::ValidationError { .. } => {
            bad_input(format!("vector index {what}: {e}"))
        }
        OperationError::InconsistentStorage { .. } => corrupt(format!("vector index {what}: {e}")),
        OperationError::OutOfMemory { .. } => unavailable(format!("vector index {what}: {e}")),
        _ => other(format!("vector index {what}: {e}")),
    }
}

fn lock_dir(dir: &Path) -> Result<fs_err::File, BackendError> {
    let path = dir.join(LOCK_FILE);
    let file = fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| other(format!("cannot open the vector index lock: {e}")))?;
    match file.file().try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(unavailable(format!(
            "the vector index at {} is in use by another process",
            dir.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(other(format!("cannot lock {}: {e}", path.display())))
        }
    }
}

fn remove_path(path: &Path) -> Result<(), BackendError> {
    let result = if path.is_dir() {
        fs_err::remove_dir_all(path)
    } else {
        fs_err::remove_file(path)
    };
    result.map_err(|e| other(format!("cannot remove the old vector index: {e}")))
}

/// Past this much WAL, a flush closes the shard and opens it again, which prunes the WAL:
/// qdrant-edge never truncates it while open, and keeps what it wrote mapped in memory.
pub const WAL_COMPACT_BYTES: u64 = 64 << 20;

/// The size of a shard's WAL files.
fn wal_bytes(shard_dir: &Path) -> u64 {
    fs_err::read_dir(shard_dir.join("wal"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Closes the shards at `heavy` (flushed already), prunes their WAL and opens them again.
fn reopen(
    shards_dir: &Path,
    edges: [EdgeShard; 3],
    heavy: &[usize],
    dim: usize,
) -> Result<Shards, BackendError> {
    let mut out = Vec::with_capacity(KINDS.len());
    for (i, edge) in edges.into_iter().enumerate() {
        if !heavy.contains(&i) {
            out.push(edge);
            continue;
        }
        let dir = shards_dir.join(KINDS[i].as_str());
        guarded("close", move || drop(edge))?;
        prune_wal(&dir)?;
        let edge = guarded("open", || EdgeShard::load(&dir, None))?.map_err(|e| {
            corrupt(format!(
                "the vector index at {} cannot be loaded ({e}); rebuild it",
                dir.display()
            ))
        })?;
        tracing::debug!(dir = %dir.display(), "pruned the vector index's WAL");
        out.push(edge);
    }
    let edges: [EdgeShard; 3] = out
        .try_into()
        .map_err(|_| corrupt("the vector index lost a shard; rebuild it"))?;
    Ok(Shards { edges, dim })
}

/// The WAL segment size: qdrant-edge's default is 32 MiB.
const WAL_SEGMENT_BYTES: usize = 8 << 20;

/// qdrant-edge 0.7.2 logs every write in a WAL that it neither replays at load nor truncates:
/// it grows with every write and its closed segments are read into memory at open. Before
/// loading, drop every closed segment but the newest, which carries the operation numbering
/// forward (as Qdrant's own truncation keeps it), so point versions keep increasing.
fn prune_wal(shard_dir: &Path) -> Result<(), BackendError> {
    let wal = shard_dir.join("wal");
    let Ok(entries) = fs_err::read_dir(&wal) else {
        return Ok(());
    };
    let mut closed: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let start = name.to_str()?.strip_prefix("closed-")?.parse().ok()?;
            Some((start, entry.path()))
        })
        .collect();
    closed.sort();
    closed.pop();
    for (_, path) in closed {
        fs_err::remove_file(&path)
            .map_err(|e| other(format!("cannot drop an old WAL segment: {e}")))?;
    }
    Ok(())
}

/// Opens the three shards under `shards_dir`; a missing one, or one whose vectors are not
/// what this format writes, is damage.
fn load_shards(shards_dir: &Path) -> Result<Shards, BackendError> {
    let mut edges = Vec::with_capacity(KINDS.len());
    let mut dim = None;
    for kind in KINDS {
        let name = kind.as_str();
        let shard_dir = shards_dir.join(name);
        if !shard_dir.is_dir() {
            return Err(corrupt(format!(
                "the vector index has no `{name}` shard; rebuild it"
            )));
        }
        prune_wal(&shard_dir)?;
        let edge = guarded("open", || EdgeShard::load(&shard_dir, None))?.map_err(|e| {
            corrupt(format!(
                "the vector index at {} cannot be loaded ({e}); rebuild it",
                shard_dir.display()
            ))
        })?;
        let size = {
            let config = edge.config();
            let Some(params) = config.vectors.get(name) else {
                return Err(corrupt(format!(
                    "the vector index's `{name}` shard has no `{name}` vectors; rebuild it"
                )));
            };
            if config.vectors.len() != 1 || params.distance != Distance::Cosine {
                return Err(corrupt(format!(
                    "the vector index's `{name}` shard is not of this format; rebuild it"
                )));
            }
            params.size
        };
        if dim.is_some_and(|d| d != size) {
            return Err(corrupt(
                "the vector index's shards disagree on the dimension; rebuild it",
            ));
        }
        dim = Some(size);
        edges.push(edge);
    }
    let dim = dim.ok_or_else(|| corrupt("the vector index has no vectors; rebuild it"))?;
    let edges: [EdgeShard; 3] = edges
        .try_into()
        .map_err(|_| corrupt("the vector index has too few shards; rebuild it"))?;
    let shards = Shards { edges, dim };
    smoke_check(&shards).map_err(|e| {
        corrupt(format!(
            "the vector index at {} is damaged ({e}); rebuild it",
            shards_dir.display()
        ))
    })?;
    Ok(shards)
}

/// One shard's config: one named vector (the kind's), cosine, full vectors on disk and
/// 1-bit codes in RAM.
fn edge_config(dim: usize, name: &str) -> EdgeConfig {
    let binary = QuantizationConfig::from(BinaryQuantizationConfig {
        always_ram: Some(true),
        encoding: Some(BinaryQuantizationEncoding::OneBit),
        // The query stays at 8 bits (asymmetric scoring): same RAM, far better candidates.
        query_encoding: Some(BinaryQuantizationQueryEncoding::Scalar8Bits),
    });
    let params = EdgeVectorParams::builder(dim, Distance::Cosine)
        .on_disk(true)
        .build();
    let wal = WalOptions {
        segment_capacity: WAL_SEGMENT_BYTES,
        ..WalOptions::default()
    };
    let builder = EdgeConfig::builder()
        .wal_options(wal)
        .on_disk_payload(true)
        .hnsw_config(HnswIndexConfig {
            // The graph is memory-mapped, not read into RAM at open.
            on_disk: Some(true),
            ..HnswIndexConfig::default()
        })
        .quantization_config(binary);
    builder.vector(name, params).build()
}

/// Makes the three empty shards under `shards_dir`, with their payload indexes.
fn create_shards(shards_dir: &Path, dim: usize) -> Result<Shards, BackendError> {
    let mut edges = Vec::with_capacity(KINDS.len());
    for kind in KINDS {
        edges.push(create_edge(
            &shards_dir.join(kind.as_str()),
            dim,
            kind.as_str(),
        )?);
    }
    let edges: [EdgeShard; 3] = edges
        .try_into()
        .map_err(|_| other("cannot create the vector index's shards"))?;
    Ok(Shards { edges, dim })
}

fn create_edge(shard_dir: &Path, dim: usize, name: &str) -> Result<EdgeShard, BackendError> {
    fs_err::create_dir_all(shard_dir)
        .map_err(|e| other(format!("cannot create the vector index: {e}")))?;
    let edge = guarded("create", || {
        EdgeShard::new(shard_dir, edge_config(dim, name))
    })?
    .map_err(|e| other(format!("cannot create the vector index: {e}")))?;
    for (key, schema) in payload_indexes() {
        EmbeddedIndex::update(
            &edge,
            UpdateOperation::FieldIndexOperation(FieldIndexOperations::CreateIndex(CreateIndex {
                field_name: json_path(key)?,
                field_schema: Some(schema),
            })),
        )?;
    }
    guarded("flush", || edge.flush())?;
    Ok(edge)
}

/// The payload indexes of a shard. All are kept on disk (memory-mapped), so opening a shard
/// maps them instead of rebuilding them in RAM from the payloads. Only `project` gets extra
/// HNSW links for its values (a project filter is the one a search uses to narrow the set);
/// links for owners, sessions, kinds and times would multiply the graph build for no search.
fn payload_indexes() -> Vec<(&'static str, PayloadFieldSchema)> {
    let mut out: Vec<(&str, PayloadFieldSchema)> = KEYWORD_KEYS
        .iter()
        .map(|key| {
            let params = KeywordIndexParams {
                r#type: Default::default(),
                is_tenant: None,
                on_disk: Some(true),
                enable_hnsw: Some(*key == KEY_PROJECT),
            };
            (
                *key,
                PayloadFieldSchema::FieldParams(PayloadSchemaParams::Keyword(params)),
            )
        })
        .collect();
    let time = IntegerIndexParams {
        r#type: Default::default(),
        lookup: Some(false),
        range: Some(true),
        is_principal: None,
        on_disk: Some(true),
        enable_hnsw: Some(false),
    };
    out.push((
        KEY_TIMESTAMP,
        PayloadFieldSchema::FieldParams(PayloadSchemaParams::Integer(time)),
    ));
    out
}

fn json_path(key: &str) -> Result<JsonPath, BackendError> {
    key.parse()
        .map_err(|_| other(format!("`{key}` is not a payload path")))
}

fn match_keyword(key: &str, value: &str) -> Result<Condition, BackendError> {
    Ok(Condition::Field(FieldCondition::new_match(
        json_path(key)?,
        Match::new_value(ValueVariants::String(value.to_string())),
    )))
}

/// The Qdrant filter for a [`VectorFilter`]; `None` when it lets everything through.
pub(crate) fn edge_filter(filter: &VectorFilter) -> Result<Option<Filter>, BackendError> {
    let mut must = Vec::new();
    let mut must_not = Vec::new();
    if let Some(project) = &filter.project {
        must.push(match_keyword(KEY_PROJECT, project)?);
    }
    if let Some(framework) = &filter.framework {
        must.push(match_keyword(KEY_FRAMEWORK, framework)?);
    }
    if !filter.kinds.is_empty() {
        let any = filter.kinds.iter().cloned().collect();
        must.push(Condition::Field(FieldCondition::new_match(
            json_path(KEY_KIND)?,
            Match::new_any(qdrant_edge::AnyVariants::Strings(any)),
        )));
    }
    if filter.since_ms.is_some() || filter.until_ms.is_some() {
        let range = Range {
            lt: None,
            gt: None,
            gte: filter.since_ms.map(|v| OrderedFloat(v as f64)),
            lte: filter.until_ms.map(|v| OrderedFloat(v as f64)),
        };
        must.push(Condition::Field(FieldCondition::new_range(
            json_path(KEY_TIMESTAMP)?,
            range,
        )));
    }
    if let Some(session) = &filter.exclude_session {
        must_not.push(match_keyword(KEY_SESSION, session)?);
    }
    if must.is_empty() && must_not.is_empty() {
        return Ok(None);
    }
    let mut out = Filter::new();
    out.must = (!must.is_empty()).then_some(must);
    out.must_not = (!must_not.is_empty()).then_some(must_not);
    Ok(Some(out))
}

fn payload_of(point: &VectorPoint) -> Payload {
    let mut map = Map::new();
    map.insert(KEY_OWNER.into(), Value::from(point.owner.clone()));
    map.insert(
        KEY_VECTOR_KIND.into(),
        Value::from(point.vector_kind.as_str()),
    );
    map.insert(KEY_ORD.into(), Value::from(point.ord));
    let p = &point.payload;
    for (key, value) in [
        (KEY_PROJECT, &p.project),
        (KEY_FRAMEWORK, &p.framework),
        (KEY_KIND, &p.kind),
        (KEY_SESSION, &p.session),
    ] {
        if let Some(value) = value {
            map.insert(key.into(), Value::from(value.clone()));
        }
    }
    map.insert(KEY_TIMESTAMP.into(), Value::from(p.timestamp_ms));
    Payload(map)
}

fn hit_of(point: &ScoredPoint) -> Result<VectorHit, BackendError> {
    let bad = || corrupt("a point in the vector index has no owner, kind or ord; rebuild it");
    let payload = point.payload.as_ref().ok_or_else(bad)?;
    let owner = payload
        .0
        .get(KEY_OWNER)
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    let kind = payload
        .0
        .get(KEY_VECTOR_KIND)
        .and_then(Value::as_str)
        .and_then(kind_from_name)
        .ok_or_else(bad)?;
    let ord = payload
        .0
        .get(KEY_ORD)
        .and_then(Value::as_u64)
        .and_then(|o| u32::try_from(o).ok())
        .ok_or_else(bad)?;
    Ok(VectorHit {
        owner: owner.to_string(),
        vector_kind: kind,
        ord,
        score: point.score,
    })
}

/// One nearest-neighbour query against a shard (`query` already unit length).
fn search_shard(
    shard: &Shards,
    kind: VectorKind,
    query: Vec<f32>,
    filter: Option<Filter>,
    limit: usize,
    exact: bool,
    min_candidates: usize,
) -> Result<Vec<VectorHit>, BackendError> {
    let (oversampling, candidates) = oversampling_for(limit, min_candidates);
    let params = SearchParams {
        hnsw_ef: Some(HNSW_EF.max(candidates)),
        exact,
        quantization: Some(QuantizationSearchParams {
            ignore: exact,
            rescore: Some(!exact),
            oversampling: (!exact).then_some(oversampling),
        }),
        indexed_only: false,
        acorn: None,
    };
    let request = QueryRequest {
        prefetches: Vec::new(),
        query: Some(ScoringQuery::Vector(QueryEnum::Nearest(NamedQuery::new(
            VectorInternal::Dense(query),
            kind.as_str(),
        )))),
        filter,
        score_threshold: None,
        limit,
        offset: 0,
        params: Some(params),
        with_vector: WithVector::Bool(false),
        with_payload: WithPayloadInterface::Fields(vec![
            json_path(KEY_OWNER)?,
            json_path(KEY_VECTOR_KIND)?,
            json_path(KEY_ORD)?,
        ]),
    };
    let points = guarded("search", || shard.edge(kind).query(request))?
        .map_err(|e| map_error("search", e))?;
    points.iter().map(hit_of).collect()
}

/// Reads the count and runs one quantized query per kind, so damage that loading did not
/// notice is reported at open.
fn smoke_check(shard: &Shards) -> Result<(), BackendError> {
    count_points(shard, None)?;
    let mut probe = vec![0.0; shard.dim];
    probe[0] = 1.0;
    for kind in KINDS {
        search_shard(shard, kind, probe.clone(), None, 1, false, 1)?;
    }
    Ok(())
}

/// The points of every shard.
fn count_points(shard: &Shards, filter: Option<&Filter>) -> Result<u64, BackendError> {
    let mut total = 0;
    for edge in &shard.edges {
        let n = guarded("count", || {
            edge.count(CountRequest {
                filter: filter.cloned(),
                exact: true,
            })
        })?
        .map_err(|e| map_error("count", e))?;
        total += n as u64;
    }
    Ok(total)
}

fn no_collection() -> BackendError {
    bad_input("the vector index has no collection yet; call ensure(dim) first")
}

impl EmbeddedIndex {
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
        let guard = self.read()?;
        let shard = guard.as_ref().ok_or_else(no_collection)?;
        let query = checked_unit(vector, shard.dim, "the query vector")?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let hits = search_shard(
            shard,
            kind,
            query,
            edge_filter(filter)?,
            limit,
            exact,
            min_candidates,
        );
        drop(guard);
        // What the search mapped in goes back once searches pass the budget.
        crate::release::release_when_over_budget(&self.real_dir.join(SHARD_DIR));
        hits
    }
}

impl VectorIndex for EmbeddedIndex {
    fn backend(&self) -> &str {
        "embedded"
    }

    fn ensure(&self, dim: usize) -> Result<(), BackendError> {
        check_dim_nonzero(dim)?;
        let mut guard = self.write()?;
        if let Some(shard) = guard.as_ref() {
            if shard.dim != dim {
                return Err(bad_input(format!(
                    "the vector index holds vectors of {} dimensions, not {dim}; rebuild it",
                    shard.dim
                )));
            }
            return Ok(());
        }
        let shard_dir = self.dir.join(SHARD_DIR);
        if shard_dir.exists() {
            remove_path(&shard_dir)?;
        }
        *guard = Some(create_shards(&shard_dir, dim)?);
        tracing::info!(dir = %self.dir.display(), dim, "created the vector collection");
        Ok(())
    }

    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError> {
        let guard = self.read()?;
        let shard = guard.as_ref().ok_or_else(no_collection)?;
        // Check everything first, so a bad point leaves the index untouched.
        let mut prepared: [Vec<PointStructPersisted>; 3] = Default::default();
        for point in points {
            let vector = checked_unit(
                &point.vector,
                shard.dim,
                &format!(
                    "the vector of {} ({}, {})",
                    point.owner,
                    point.vector_kind.as_str(),
                    point.ord
                ),
            )?;
            let id = PointId::Uuid(Uuid::from_bytes(point_uuid(
                &point.owner,
                point.vector_kind,
                point.ord,
            )));
            let vectors = HashMap::from([(
                point.vector_kind.as_str().to_string(),
                VectorInternal::Dense(vector),
            )]);
            prepared[kind_slot(point.vector_kind)].push(PointStructPersisted {
                id,
                vector: VectorStructInternal::Named(vectors).into(),
                payload: Some(payload_of(point)),
            });
        }
        for (edge, mut points) in shard.edges.iter().zip(prepared) {
            while !points.is_empty() {
                let rest = points.split_off(points.len().min(UPSERT_BATCH));
                let batch = std::mem::replace(&mut points, rest);
                Self::update(
                    edge,
                    UpdateOperation::PointOperation(PointOperations::UpsertPoints(
                        PointInsertOperations::PointsList(batch),
                    )),
                )?;
            }
        }
        drop(guard);
        // Writing mapped in pages of the WAL and of the appendable segment.
        self.release_mapped_pages();
        Ok(())
    }

    fn delete_owner(&self, owner: &str) -> Result<(), BackendError> {
        let guard = self.read()?;
        let Some(shard) = guard.as_ref() else {
            return Ok(());
        };
        let filter = Filter::new_must(match_keyword(KEY_OWNER, owner)?);
        for edge in &shard.edges {
            Self::update(
                edge,
                UpdateOperation::PointOperation(PointOperations::DeletePointsByFilter(
                    filter.clone(),
                )),
            )?;
        }
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
        let guard = self.read()?;
        let Some(shard) = guard.as_ref() else {
            return Ok(0);
        };
        count_points(shard, None)
    }

    fn count_where(&self, filter: &VectorFilter) -> Result<u64, BackendError> {
        let filter = edge_filter(filter)?;
        let guard = self.read()?;
        let Some(shard) = guard.as_ref() else {
            return Ok(0);
        };
        count_points(shard, filter.as_ref())
    }

    fn clear(&self) -> Result<(), BackendError> {
        let mut guard = self.write()?;
        let Some(old) = guard.take() else {
            return Ok(());
        };
        let dim = old.dim;
        old.close()?;
        let shard_dir = self.dir.join(SHARD_DIR);
        remove_path(&shard_dir)?;
        *guard = Some(create_shards(&shard_dir, dim)?);
        Ok(())
    }

    fn optimize(&self) -> Result<bool, BackendError> {
        EmbeddedIndex::optimize(self)
    }

    fn flush(&self) -> Result<(), BackendError> {
        // The write lock keeps updates out: `EdgeShard::flush` panics if one holds the WAL.
        let mut guard = self.write()?;
        let Some(shard) = guard.as_ref() else {
            return Ok(());
        };
        for edge in &shard.edges {
            guarded("flush", || edge.flush())?;
        }
        let shards_dir = self.dir.join(SHARD_DIR);
        let limit = self.wal_limit.load(Ordering::Relaxed);
        let heavy: Vec<usize> = KINDS
            .iter()
            .enumerate()
            .filter(|(_, k)| wal_bytes(&shards_dir.join(k.as_str())) > limit)
            .map(|(i, _)| i)
            .collect();
        if heavy.is_empty() {
            return Ok(());
        }
        let Some(Shards { edges, dim }) = guard.take() else {
            return Ok(());
        };
        match reopen(&shards_dir, edges, &heavy, dim) {
            Ok(shards) => {
                *guard = Some(shards);
                Ok(())
            }
            Err(e) => {
                // Whatever happened, the flushed shards are on disk: open them afresh.
                *guard = load_shards(&shards_dir).ok();
                Err(e)
            }
        }
    }
}
