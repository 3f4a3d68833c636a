//! Notes in search: an index of the live notes (BM25, and their embeddings when the
//! embedder is loaded), rebuilt when a note changed since it was built. Notes are few next to
//! records, so it lives in memory; embeddings are kept per content hash so an unchanged note
//! is never embedded twice. The service holds its [`NotesState`]; the notes methods are in
//! `notes_api`.
use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::api::{NoteDoc, NoteSummary, SearchHit};
use cairn_core::ports::{PointPayload, VectorIndex, VectorPoint};
use cairn_core::{NewRecord, Outcome, Record, RecordId, VectorKind};
use cairn_index::TextIndex;
use cairn_notes::Notes;

use crate::dense::Dense;
use crate::{ApiError, Result};

/// Maps a notes error to the API's.
pub(crate) fn err(e: cairn_notes::Error) -> ApiError {
    ApiError::new(e.code(), e.to_string())
}

/// The in-memory search index over the live notes.
pub(crate) struct NotesSearch {
    generation: u64,
    text: Arc<TextIndex>,
    vectors: Option<Arc<dyn VectorIndex>>,
    docs: HashMap<String, NoteSummary>,
}

impl NotesSearch {
    /// A note found by search, as the API shows it (`None` if it is not in this index).
    pub(crate) fn note_hit(&self, h: cairn_index::TextHit) -> Option<SearchHit> {
        let note = self.docs.get(&h.record_id)?;
        Some(SearchHit {
            id: note.id.clone(),
            source: "note".into(),
            title: Some(note.title.clone()),
            item_kind: None,
            item_provenance: None,
            framework: "note".into(),
            project: note.project.clone(),
            session_id: String::new(),
            timestamp: note.updated_at.clone(),
            outcome: String::new(),
            passage: h.passage,
            score: h.score,
            in_range: h.in_range,
        })
    }
}

/// The turn note reads the notes through this index.
impl cairn_turn::NotesIndex for NotesSearch {
    fn corpus(&self, project: Option<String>) -> Option<cairn_recall::Corpus> {
        (!self.docs.is_empty()).then(|| {
            cairn_recall::Corpus::held(
                self.text.clone(),
                self.vectors.clone(),
                cairn_recall::CHUNKS,
                project,
            )
        })
    }

    fn summary(&self, id: &str) -> Option<&NoteSummary> {
        self.docs.get(id)
    }
}

/// Embeddings of note chunks, by (model, content sha256).
type EmbeddingCache = HashMap<(String, String), Vec<Vec<f32>>>;

/// What the service keeps for notes.
pub(crate) struct NotesState {
    pub(crate) notes: Notes,
    generation: std::sync::atomic::AtomicU64,
    search: tokio::sync::Mutex<Option<Arc<NotesSearch>>>,
    embeddings: std::sync::Mutex<EmbeddingCache>,
}

impl std::fmt::Debug for NotesState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotesState").finish_non_exhaustive()
    }
}

impl NotesState {
    pub(crate) fn new(notes: Notes) -> Self {
        Self {
            notes,
            generation: std::sync::atomic::AtomicU64::new(1),
            search: tokio::sync::Mutex::new(None),
            embeddings: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Marks the search index stale (after any change).
    pub(crate) fn changed(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A note as the BM25 index sees it: a record of framework `note` whose session is the note.
fn pseudo_record(doc: &NoteDoc) -> (Record, Vec<cairn_core::Chunk>) {
    let updated = chrono::DateTime::parse_from_rfc3339(&doc.note.updated_at)
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_default();
    let id = RecordId::new(doc.note.id.clone());
    let text = format!("{}\n\n{}", doc.note.title, doc.content);
    let chunks = cairn_text::chunk::split(&text)
        .into_iter()
        .enumerate()
        .map(|(ord, (start, piece))| cairn_core::Chunk {
            record_id: id.clone(),
            ord: u32::try_from(ord).unwrap_or(u32::MAX),
            start: u32::try_from(start).unwrap_or(u32::MAX),
            text: piece.to_owned(),
        })
        .collect();
    (
        Record {
            seq: 0,
            captured_at: updated,
            record: NewRecord {
                id,
                framework: "note".into(),
                session_id: doc.note.id.clone(),
                project: doc.note.project.clone(),
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: updated,
                ended_at: None,
                request: doc.note.title.clone(),
                author: None,
                text,
                content: serde_json::json!({}),
                source: None,
            },
        },
        chunks,
    )
}

impl NotesState {
    /// The notes search index, rebuilt when a note changed since it was built.
    pub(crate) async fn search(&self, dense: Option<Dense>) -> Result<Arc<NotesSearch>> {
        let generation = self.generation.load(std::sync::atomic::Ordering::SeqCst);
        let mut slot = self.search.lock().await;
        if let Some(s) = slot.as_ref().filter(|s| s.generation == generation) {
            return Ok(s.clone());
        }
        let docs = self.notes.all().await.map_err(err)?;
        let text = TextIndex::in_memory().map_err(|e| ApiError::internal(e.to_string()))?;
        let mut vectors = None;
        let mut to_embed: Vec<(usize, Vec<String>)> = Vec::new();
        let mut points: Vec<VectorPoint> = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let (record, chunks) = pseudo_record(doc);
            text.put(&record, &chunks)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            if let Some(d) = &dense {
                let key = (d.embedder.model_id().to_owned(), doc.note.sha256.clone());
                let cached = self
                    .embeddings
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&key)
                    .cloned();
                match cached {
                    Some(vs) => points.extend(note_points(doc, vs)),
                    None => to_embed.push((i, chunks.iter().map(|c| c.text.clone()).collect())),
                }
            }
        }
        text.commit(0)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        if let Some(d) = dense {
            if !to_embed.is_empty() {
                let embedder = d.embedder.clone();
                let embedded = tokio::task::spawn_blocking(move || {
                    to_embed
                        .into_iter()
                        .map(|(i, texts)| {
                            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                            embedder.embed(&refs).map(|vs| (i, vs))
                        })
                        .collect::<std::result::Result<Vec<_>, _>>()
                })
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
                match embedded {
                    Ok(list) => {
                        let mut cache = self.embeddings.lock().unwrap_or_else(|p| p.into_inner());
                        for (i, vs) in list {
                            let doc = &docs[i];
                            cache.insert(
                                (d.embedder.model_id().to_owned(), doc.note.sha256.clone()),
                                vs.clone(),
                            );
                            points.extend(note_points(doc, vs));
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.message, "cannot embed notes; notes are found by keywords only")
                    }
                }
            }
            let index = cairn_vectors::MemoryIndex::new();
            if let Some(dim) = points.first().map(|p| p.vector.len()) {
                index
                    .ensure(dim)
                    .and_then(|()| index.upsert(&points))
                    .map_err(|e| ApiError::internal(e.message))?;
            }
            vectors = Some(Arc::new(index) as Arc<dyn VectorIndex>);
        }
        let built = Arc::new(NotesSearch {
            generation,
            text: Arc::new(text),
            vectors,
            docs: docs
                .into_iter()
                .map(|d| (d.note.id.clone(), d.note))
                .collect(),
        });
        *slot = Some(built.clone());
        Ok(built)
    }
}

/// A note's chunk vectors as points of the notes' vector index.
fn note_points(doc: &NoteDoc, vectors: Vec<Vec<f32>>) -> Vec<VectorPoint> {
    let ts = chrono::DateTime::parse_from_rfc3339(&doc.note.updated_at)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0);
    vectors
        .into_iter()
        .enumerate()
        .map(|(ord, vector)| VectorPoint {
            owner: doc.note.id.clone(),
            vector_kind: VectorKind::Chunk,
            ord: u32::try_from(ord).unwrap_or(u32::MAX),
            vector,
            payload: PointPayload {
                project: doc.note.project.clone(),
                framework: Some("note".into()),
                kind: Some("note".into()),
                session: Some(doc.note.id.clone()),
                timestamp_ms: ts,
            },
        })
        .collect()
}
