//! What a turn reads, as the host holds it: the store, the retriever's pieces (the records'
//! keyword and vector indexes, the items' and notes' indexes, the embedder and the
//! cross-encoder when loaded), the settings in effect, and the note's own state between
//! turns. The host gathers a [`Memory`] for each call; nothing here reaches back into it.
use std::collections::HashMap;
use std::sync::Arc;

use cairn_config::{LlmSettings, Paths};
use cairn_core::api::NoteSummary;
use cairn_core::ports::{Embedder, Reranker, VectorIndex};
use cairn_core::{Item, Timestamp};
use cairn_index::{TextIndex, TextQuery};
use cairn_recall::{Corpus, Hit, Query, Retriever, SearchMode, Tuning};
use cairn_store::Store;

use crate::Result;
use crate::ranker::Ranker;

/// The host's index of the active items, as the turn note reads it.
pub trait ItemsIndex: Send + Sync {
    /// Every project's items as a corpus of a search (none when there are none): an item of
    /// another project is told by the ranker's `same_project` input, not left out.
    fn corpus(&self) -> Option<Corpus>;
    /// An active item of the index.
    fn item(&self, id: &str) -> Option<&Item>;
}

/// The host's index of the live notes, as the turn note reads it.
pub trait NotesIndex: Send + Sync {
    /// The notes as a corpus of a search (none when there are none): a project's search sees
    /// that project's notes and the user's, never another project's.
    fn corpus(&self, project: Option<String>) -> Option<Corpus>;
    /// A note of the index.
    fn summary(&self, id: &str) -> Option<&NoteSummary>;
}

/// The start of each item's life by [`crate::recall_at`]'s rule, for the item log's state it
/// was read at.
pub(crate) type ItemTimes = ((i64, i64), Arc<HashMap<String, Timestamp>>);

/// What the turn note keeps between turns; the host owns one for its life.
#[derive(Default)]
pub struct TurnState {
    /// The ranker, loaded once (and again when the user's model file changes).
    pub(crate) ranker: tokio::sync::Mutex<Option<(Option<std::time::SystemTime>, Arc<Ranker>)>>,
    /// The LLM judge's model, for the `[llm]` settings it was made from.
    pub(crate) judge: tokio::sync::Mutex<Option<(LlmSettings, Arc<cairn_llm::Llm>)>>,
    /// When each item became known, for turns asked at a given time ([`crate::recall_at`]).
    pub(crate) item_times: tokio::sync::Mutex<Option<ItemTimes>>,
}

impl std::fmt::Debug for TurnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnState").finish_non_exhaustive()
    }
}

/// What a turn reads: explicit handles, gathered by the host for one call (cheap to clone;
/// the replay's concurrent turns share one).
#[derive(Clone)]
pub struct Memory {
    /// The store: records, items, notes' metadata, the injection log.
    pub store: Store,
    /// Where everything lives (the personal ranker, the marks' key, the replay's figures).
    pub paths: Paths,
    /// `[llm]` as in effect now (the judge).
    pub llm: LlmSettings,
    /// Whether memory is on: off, every note is silent.
    pub memory_on: bool,
    /// BM25 over the records.
    pub text: Arc<TextIndex>,
    /// The records' vector index, when loaded.
    pub vectors: Option<Arc<dyn VectorIndex>>,
    /// The embedder, when loaded.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The cross-encoder, when loaded.
    pub reranker: Option<Arc<dyn Reranker>>,
    /// The active items' index.
    pub items: Option<Arc<dyn ItemsIndex>>,
    /// The live notes' index.
    pub notes: Option<Arc<dyn NotesIndex>>,
    /// The note's state between turns.
    pub state: Arc<TurnState>,
}

impl Memory {
    /// One hybrid search over `corpora` ranked as one list, re-ranked by the cross-encoder
    /// when it is loaded; `at` is when the question is asked (dates in it such as
    /// "yesterday" are read against it), `None`: now.
    pub(crate) async fn retrieve(
        &self,
        corpora: Vec<Corpus>,
        text: TextQuery,
        at: Option<Timestamp>,
        asked: Asked,
    ) -> Result<Vec<Hit>> {
        let now = at.unwrap_or_else(chrono::Utc::now);
        let rerank = self.reranker.is_some();
        let (embedder, reranker) = (self.embedder.clone(), self.reranker.clone());
        let (tuning, recent_project) = match asked {
            Asked::Request { project } => (Tuning::requests(), project),
            Asked::Search => (Tuning::default(), None),
        };
        let (hits, _) = Retriever {
            corpora,
            embedder,
            reranker,
            tuning,
        }
        .search(&Query {
            text,
            mode: SearchMode::Hybrid,
            rerank,
            now,
            recent_project,
        })
        .await?;
        Ok(hits)
    }
}

/// How a retrieval is asked.
pub(crate) enum Asked {
    /// A turn's request as it was written, in `project`: asked with the retriever's
    /// settings for requests (the latest records of the project among the candidates), which
    /// the ranker's inputs (fused score, gap to the best) were learned from.
    Request { project: Option<String> },
    /// A search's words: the retriever's settings for search.
    Search,
}
