//! The query path: candidates from every corpus (BM25 and each kind of vector, the query
//! embedded once), fused as one list, each record scored with its neighbours in its session
//! and with its session, dates in the query honoured, the text of each hit read from the
//! store, and the cross-encoder's order over the top 30 when it is present.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::ports::{BackendError, Embedder, Reranker, VectorFilter, VectorIndex};
use cairn_core::{Timestamp, VectorKind};
use cairn_index::{TextHit, TextIndex, TextQuery};
use cairn_store::Store;

use crate::fuse::fuse;
use crate::{Tuning, when};

/// How many fused results the cross-encoder re-ranks.
pub const RERANK_TOP: usize = 30;
/// How many characters of a passage the cross-encoder reads.
const RERANK_CHARS: usize = 1_500;
/// How many characters of a hit's passage callers get.
const PASSAGE_CHARS: usize = 240;

/// A retrieval failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The keyword index failed or refused the query.
    #[error(transparent)]
    Index(#[from] cairn_index::Error),
    /// Reading the store failed.
    #[error(transparent)]
    Store(#[from] cairn_store::Error),
    /// A model or the vector index failed.
    #[error("{0}")]
    Backend(String),
}

fn backend(e: BackendError) -> Error {
    Error::Backend(e.message)
}

/// Which signals a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// Keywords only (BM25).
    Bm25,
    /// Meaning only (embeddings).
    Dense,
    /// Both, fused.
    Hybrid,
}

impl std::str::FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bm25" => Ok(Self::Bm25),
            "dense" => Ok(Self::Dense),
            "hybrid" => Ok(Self::Hybrid),
            other => Err(format!(
                "unknown search mode {other:?}: use bm25, dense or hybrid"
            )),
        }
    }
}

/// A test on each candidate of a corpus: keep it or not.
pub type KeepFn = Arc<dyn Fn(&TextHit) -> bool + Send + Sync>;

/// One index a search reads: its BM25 index and its vectors, and, for the records, the
/// store they come from.
#[derive(Clone)]
pub struct Corpus {
    /// BM25 over this corpus.
    pub text: Arc<TextIndex>,
    /// Its vectors (none: found by keywords only).
    pub vectors: Option<Arc<dyn VectorIndex>>,
    /// `None`: the query's project, framework and session filters apply. `Some`: they do not,
    /// and this test decides instead which candidates stay (before fusion).
    pub keep: Option<KeepFn>,
    /// The store of this corpus's records: a record is scored with its session neighbours and
    /// its session, and its text comes from here. `None` for a corpus held elsewhere (notes):
    /// its hits are scored alone and their text comes from its index.
    pub store: Option<Store>,
    /// Only what happened before this time is a candidate, cut in the keyword and vector
    /// searches themselves (not after them, which would spend their pools on what cannot be
    /// shown): a turn replayed at its moment sees what the store held then.
    pub before: Option<Timestamp>,
    /// The kinds of vector its documents have, and so the only kinds searched: a record's
    /// (and a note's) are its chunks ([`CHUNKS`]); an item's its summary, cues and chunks
    /// ([`ALL_KINDS`]). Searching a kind the corpus has none of is a pass over that kind's
    /// graph for nothing: over another corpus's points, filtered out, in a shared index.
    pub kinds: &'static [VectorKind],
}

/// What a captured record or a note is embedded as: its body's chunks. Records have no summary
/// key and no cues (those are an item's).
pub const CHUNKS: &[VectorKind] = &[VectorKind::Chunk];

/// Every kind of vector: what an item is embedded as.
pub const ALL_KINDS: &[VectorKind] = &[VectorKind::Chunk, VectorKind::Summary, VectorKind::Cue];

impl Corpus {
    /// A corpus held in memory rather than in the store (the items, the notes): its hits are
    /// scored alone and their text comes from its index. A project's search sees that
    /// project's documents and those of no project, never another project's; `None` sees
    /// every project's.
    pub fn held(
        text: Arc<TextIndex>,
        vectors: Option<Arc<dyn VectorIndex>>,
        kinds: &'static [VectorKind],
        project: Option<String>,
    ) -> Self {
        let keep =
            move |h: &TextHit| project.is_none() || h.project.is_none() || h.project == project;
        Self {
            text,
            vectors,
            keep: Some(Arc::new(keep)),
            store: None,
            before: None,
            kinds,
        }
    }
}

/// One record (or note) found.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The record, its metadata and best passage (its `score` is the final score).
    pub hit: TextHit,
    /// Which corpus it came from: its position in [`Retriever::corpora`].
    pub corpus: usize,
    /// Normalised BM25 score, when keywords matched.
    pub keyword: Option<f32>,
    /// Cosine similarity of the best vector, when the dense side found it.
    pub dense: Option<f32>,
    /// The cross-encoder's score, when it re-ranked this hit.
    pub rerank: Option<f32>,
}

/// What a search could use, and what it fell back to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchNotes {
    /// Sentences about what was not available (no embedder, no reranker…).
    pub degraded: Vec<String>,
    /// Whether the cross-encoder's scores decided the order of the top results.
    pub reranked: bool,
    /// Where the search's time went.
    pub stages: Stages,
}

/// Where one search's time went, in milliseconds, stage by stage. The query's embedding runs
/// on a thread of its own beside the keyword searches, so `embed` and `keyword` overlap;
/// every other stage follows the one before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Stages {
    /// Embedding the query (on its own thread).
    pub embed: f64,
    /// The keyword searches of every corpus.
    pub keyword: f64,
    /// The nearest chunk vectors, of every corpus.
    pub vector_chunk: f64,
    /// The nearest summary vectors.
    pub vector_summary: f64,
    /// The nearest cue vectors.
    pub vector_cue: f64,
    /// Testing dense-only candidates of a corpus with its own test (their metadata read).
    pub filter: f64,
    /// Where each record candidate sits in its session (`session_places`), and the metadata
    /// of dense-only hits of corpora without a store.
    pub places: f64,
    /// The fusion, the best candidates' neighbours (their places and stored vectors) and the
    /// scores with neighbours, sessions and dates.
    pub neighbours: f64,
    /// Reading the hits' records and chunks from the store.
    pub store: f64,
    /// Making the kept hits' passages.
    pub text: f64,
    /// The cross-encoder, when it ran.
    pub rerank: f64,
}

fn since_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// A question to the retriever.
#[derive(Debug, Clone)]
pub struct Query {
    /// The words, and the filters (project, framework, date range, session left out).
    pub text: TextQuery,
    /// Which signals.
    pub mode: SearchMode,
    /// Re-rank the top 30 with the cross-encoder when one is present.
    pub rerank: bool,
    /// What "yesterday" or "in May" mean: the time of asking.
    pub now: Timestamp,
    /// Whose latest records join the candidates ([`Tuning::recent`]): this project's, the
    /// one a request is asked in (`None`: the text query's project, else every project's).
    pub recent_project: Option<String>,
}

/// The retriever: cheap to build (shared parts), one per search or kept.
#[derive(Clone)]
pub struct Retriever {
    /// What is searched, ranked as one list.
    pub corpora: Vec<Corpus>,
    /// The embedder for the query (one embedding per search).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The cross-encoder.
    pub reranker: Option<Arc<dyn Reranker>>,
    /// Its parameters.
    pub tuning: Tuning,
}

/// A candidate's key: (corpus, record id).
type Key = (usize, String);

/// What the first stage found, before scoring.
#[derive(Default)]
struct Found {
    keyword: HashMap<Key, f32>,
    dense: HashMap<Key, f32>,
    best_chunk: HashMap<Key, u32>,
    meta: HashMap<Key, TextHit>,
    dense_in_range: HashMap<Key, bool>,
    /// The query's embedding, when the dense side ran.
    qv: Option<Vec<f32>>,
    /// The first stage's times.
    stages: Stages,
    /// Each corpus's keyword query (a corpus with a store searched it bare: its hits'
    /// passages are made from the store's text for the hits kept).
    queries: Vec<TextQuery>,
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Backend(format!("a search task failed: {e}")))
}

impl Retriever {
    /// The latest records of each corpus with a store before the query's time (of the
    /// query's project when it names one, the asking session left out), newest first, at most
    /// [`Tuning::recent`] of them; a corpus with its own test holds them to it (more are read
    /// for it). Empty lists when the tuning asks for none.
    async fn latest(&self, q: &Query) -> Result<Vec<Vec<String>>, Error> {
        let t = &self.tuning;
        let mut out = Vec::with_capacity(self.corpora.len());
        for corpus in &self.corpora {
            let Some(store) = corpus.store.as_ref().filter(|_| t.recent > 0) else {
                out.push(Vec::new());
                continue;
            };
            let cut = match (q.text.before, corpus.before) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).unwrap_or(q.now),
            };
            let rows = if corpus.keep.is_some() {
                t.recent * 4 + 200
            } else {
                t.recent
            };
            let newest = store
                .latest_records(
                    q.recent_project.as_deref().or(q.text.project.as_deref()),
                    cut,
                    q.text.exclude_session.as_deref(),
                    u32::try_from(rows).unwrap_or(u32::MAX),
                )
                .await?;
            let ids = match corpus.keep.clone() {
                None => newest.into_iter().take(t.recent).collect(),
                Some(keep) => {
                    let (text, recent) = (corpus.text.clone(), t.recent);
                    blocking(move || -> Result<Vec<String>, Error> {
                        let mut kept = Vec::with_capacity(recent);
                        for id in newest {
                            if kept.len() >= recent {
                                break;
                            }
                            if text.record_chunk(&id, None)?.is_some_and(|h| keep(&h)) {
                                kept.push(id);
                            }
                        }
                        Ok(kept)
                    })
                    .await??
                }
            };
            out.push(ids);
        }
        Ok(out)
    }

    /// Searches every corpus and ranks what it finds as one list (see the module docs).
    /// Without an embedder or vectors, dense and hybrid fall back to BM25 (said in the
    /// notes); a failing cross-encoder leaves the fused order (said too).
    pub async fn search(&self, q: &Query) -> Result<(Vec<Hit>, SearchNotes), Error> {
        let mut notes = SearchNotes::default();
        let limit = q.text.limit.clamp(1, 1000);
        let has_vectors = self.corpora.iter().any(|c| c.vectors.is_some());
        let use_dense = q.mode != SearchMode::Bm25 && has_vectors && self.embedder.is_some();
        let mode = if q.mode != SearchMode::Bm25 && !use_dense {
            notes
                .degraded
                .push("No embedding model or vector index: keyword search only.".into());
            SearchMode::Bm25
        } else {
            q.mode
        };
        let this = self.clone();
        let tq = q.text.clone();
        let t = &self.tuning;
        // What was done last is read beside the search: it does not depend on what the
        // search finds.
        let (found, newest) =
            tokio::join!(blocking(move || this.candidates(&tq, mode)), self.latest(q));
        let (mut found, newest) = (found??, newest?);
        let mut stages = found.stages;
        let clock = Instant::now();
        // Where each record candidate, and each of the latest records, sits in its session
        // (one read per corpus); a record gone from the store (cleared meanwhile) is dropped
        // here.
        let mut places: HashMap<Key, cairn_store::SessionPlace> = HashMap::new();
        for (ci, corpus) in self.corpora.iter().enumerate() {
            let Some(store) = &corpus.store else { continue };
            let ids: Vec<String> = found
                .keyword
                .keys()
                .chain(found.dense.keys())
                .filter(|k| k.0 == ci)
                .map(|k| k.1.clone())
                .chain(newest.get(ci).into_iter().flatten().cloned())
                .collect::<HashSet<_>>()
                .into_iter()
                .collect();
            if ids.is_empty() {
                continue;
            }
            for (id, p) in store.session_places(&ids).await? {
                places.insert((ci, id), p);
            }
            let gone = |k: &Key| k.0 == ci && !places.contains_key(k);
            found.keyword.retain(|k, _| !gone(k));
            found.dense.retain(|k, _| !gone(k));
        }
        // What was done last joins the candidates (read beside the search above), by order.
        let mut latest: HashMap<Key, usize> = HashMap::new();
        for (ci, ids) in newest.into_iter().enumerate() {
            for (i, id) in ids.into_iter().enumerate() {
                let key = (ci, id);
                // A record gone from the store meanwhile has no place and is no candidate.
                if places.contains_key(&key) {
                    latest.insert(key, i);
                }
            }
        }
        // Corpora without a store: a dense-only hit's metadata from its own index.
        let dense_only: Vec<Key> = found
            .dense
            .keys()
            .filter(|k| self.corpora[k.0].store.is_none() && !found.meta.contains_key(*k))
            .cloned()
            .collect();
        for key in dense_only {
            let corpus = &self.corpora[key.0];
            let got = corpus
                .text
                .record_chunk(&key.1, found.best_chunk.get(&key).copied())?
                .filter(|h| corpus.keep.as_ref().is_none_or(|k| k(h)));
            match got {
                Some(mut h) => {
                    h.passage = h.passage.chars().take(PASSAGE_CHARS).collect();
                    found.meta.insert(key, h);
                }
                None => {
                    found.dense.remove(&key);
                }
            }
        }
        stages.places = since_ms(clock);
        let clock = Instant::now();
        let w = match mode {
            SearchMode::Bm25 => 0.0,
            SearchMode::Dense => 1.0,
            SearchMode::Hybrid => t.dense_weight,
        };
        let mut base: HashMap<Key, f32> = fuse(&found.dense, &found.keyword, w, t.fusion, t.rrf_k)
            .into_iter()
            .collect();
        // The best candidates bring their neighbours: a turn that answers may share no word
        // with the question while the turn before it does. Each of them, and each neighbour,
        // gets its own similarity to the query from its stored vectors when the dense side
        // did not return it, so a window is scored on all of its turns.
        if t.neighbour_weight > 0.0 && t.expand > 0 {
            let mut order: Vec<(&Key, &f32)> = base.iter().collect();
            order.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
            let top: Vec<Key> = order
                .into_iter()
                .take(t.expand)
                .map(|(k, _)| k.clone())
                .collect();
            let mut extra: HashMap<usize, HashSet<String>> = HashMap::new();
            let mut window: HashSet<Key> = HashSet::new();
            for key in &top {
                if let Some(p) = places.get(key) {
                    window.insert(key.clone());
                    for n in [&p.prev, &p.next].into_iter().flatten() {
                        let nk = (key.0, n.clone());
                        if !places.contains_key(&nk) {
                            extra.entry(key.0).or_default().insert(n.clone());
                        }
                        window.insert(nk);
                    }
                }
            }
            for (ci, ids) in extra {
                if let Some(store) = &self.corpora[ci].store {
                    let ids: Vec<String> = ids.into_iter().collect();
                    for (id, p) in store.session_places(&ids).await? {
                        places.insert((ci, id), p);
                    }
                }
            }
            if let (Some(qv), Some(e)) = (&found.qv, &self.embedder)
                && mode != SearchMode::Bm25
            {
                let model = cairn_index::unit::vectors_id(e.model_id());
                let mut missing: HashMap<usize, Vec<String>> = HashMap::new();
                for k in &window {
                    if !found.dense.contains_key(k) && places.contains_key(k) {
                        missing.entry(k.0).or_default().push(k.1.clone());
                    }
                }
                for (ci, ids) in missing {
                    let Some(store) = &self.corpora[ci].store else {
                        continue;
                    };
                    for v in store.vectors_of_many(&ids, &model).await? {
                        if v.vector.len() != qv.len() {
                            continue;
                        }
                        let sim: f32 = v.vector.iter().zip(qv).map(|(a, b)| a * b).sum();
                        if sim < t.min_dense {
                            continue;
                        }
                        let key = (ci, v.owner);
                        let e = found.dense.entry(key.clone()).or_insert(f32::MIN);
                        if sim > *e {
                            *e = sim;
                            if v.kind == VectorKind::Chunk {
                                found.best_chunk.insert(key, v.ord);
                            }
                        }
                    }
                }
                base = fuse(&found.dense, &found.keyword, w, t.fusion, t.rrf_k)
                    .into_iter()
                    .collect();
            }
        }
        // Scores: the record's own, plus its neighbours', plus its session's best, plus a
        // date the query names.
        let spans = if t.date_weight > 0.0 {
            when::spans(&q.text.text, q.now)
        } else {
            Vec::new()
        };
        let mut per_session: HashMap<(usize, &str, &str), Vec<f32>> = HashMap::new();
        for (key, s) in &base {
            if let Some(p) = places.get(key) {
                per_session
                    .entry((key.0, p.framework.as_str(), p.session_id.as_str()))
                    .or_default()
                    .push(*s);
            }
        }
        let mut session_best: HashMap<(usize, &str, &str), f32> = per_session
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_by(|a, b| b.total_cmp(a));
                (k, v.iter().take(t.session_top.max(1)).sum::<f32>())
            })
            .collect();
        let top_session = session_best.values().copied().fold(0.0f32, f32::max);
        if top_session > 0.0 {
            for v in session_best.values_mut() {
                *v /= top_session;
            }
        }
        let mut keys: HashSet<&Key> = base.keys().collect();
        keys.extend(places.keys());
        // The query's words, for a speaker it names.
        let query_words: HashSet<String> = q
            .text
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let named = |author: &Option<String>| {
            author
                .as_deref()
                .and_then(|a| a.split_whitespace().next())
                .is_some_and(|first| query_words.contains(&first.to_lowercase()))
        };
        let in_range = |ts: Timestamp| {
            q.text.since.is_none_or(|s| ts >= s) && q.text.until.is_none_or(|u| ts <= u)
        };
        // Among the latest records: by order, more for a query that says little.
        let vague = 4.0 / (4.0 + crate::stop::content_words(&q.text.text) as f32);
        let latest_lift = |key: &Key| -> f32 {
            match latest.get(key) {
                Some(&i) if t.recent > 0 => {
                    t.recent_weight * (1.0 - i as f32 / t.recent as f32) * vague
                }
                _ => 0.0,
            }
        };
        let mut scored: Vec<(Key, f32, bool)> = Vec::with_capacity(keys.len());
        for key in keys {
            let own = base.get(key).copied().unwrap_or(0.0);
            let (score, ranged) = match places.get(key) {
                Some(p) => {
                    let near = |n: &Option<String>| {
                        n.as_ref()
                            .and_then(|n| base.get(&(key.0, n.clone())))
                            .copied()
                            .unwrap_or(0.0)
                    };
                    let session = session_best
                        .get(&(key.0, p.framework.as_str(), p.session_id.as_str()))
                        .copied()
                        .unwrap_or(0.0);
                    let dated = spans
                        .iter()
                        .any(|(a, b)| p.started_at >= *a && p.started_at <= *b);
                    let recent = if t.recency_weight > 0.0 && t.recency_days > 0.0 {
                        let age = (q.now - p.started_at).num_seconds().max(0) as f32 / 86_400.0;
                        t.recency_weight * 0.5f32.powf(age / t.recency_days)
                    } else {
                        0.0
                    };
                    (
                        own + t.neighbour_before.unwrap_or(t.neighbour_weight) * near(&p.prev)
                            + t.neighbour_after.unwrap_or(t.neighbour_weight) * near(&p.next)
                            + t.session_weight * session
                            + if dated { t.date_weight } else { 0.0 }
                            + recent
                            + latest_lift(key)
                            + if t.speaker_weight > 0.0 && named(&p.author) {
                                t.speaker_weight
                            } else {
                                0.0
                            },
                        in_range(p.started_at),
                    )
                }
                None => {
                    let ranged = found.meta.get(key).is_some_and(|h| h.in_range)
                        || found.dense_in_range.get(key).copied().unwrap_or(false);
                    (own, ranged)
                }
            };
            if score > 0.0 || base.contains_key(key) {
                scored.push((key.clone(), score, ranged));
            }
        }
        // In range first, then the rest; each group by score (then key: a stable order).
        scored.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then(b.1.total_cmp(&a.1))
                .then_with(|| a.0.cmp(&b.0))
        });
        let want = if q.rerank {
            limit.max(RERANK_TOP)
        } else {
            limit
        };
        stages.neighbours = since_ms(clock);
        let clock = Instant::now();
        // The text of each hit: from the store for records, from its index otherwise.
        let mut hits: Vec<Hit> = Vec::new();
        let mut chunk_text: HashMap<Key, String> = HashMap::new();
        let mut passages: HashMap<usize, cairn_index::Passages> = HashMap::new();
        let mut by_corpus: HashMap<usize, Vec<String>> = HashMap::new();
        for (key, _, _) in scored.iter().take(want * 2) {
            if self.corpora[key.0].store.is_some() {
                by_corpus.entry(key.0).or_default().push(key.1.clone());
            }
        }
        let mut stored: HashMap<Key, (cairn_core::Record, Vec<cairn_core::Chunk>)> = HashMap::new();
        for (ci, ids) in by_corpus {
            if let Some(store) = &self.corpora[ci].store {
                for (id, r) in store.records_with_chunks(&ids).await? {
                    stored.insert((ci, id), r);
                }
            }
        }
        stages.store = since_ms(clock);
        for (key, score, ranged) in scored {
            if hits.len() >= want {
                break;
            }
            let chunk_ord = found.best_chunk.get(&key).copied();
            let mut hit = if self.corpora[key.0].store.is_some() {
                let Some((rec, chunks)) = stored.get(&key) else {
                    continue;
                };
                let r = &rec.record;
                let chunk = found
                    .meta
                    .get(&key)
                    .map(|m| m.chunk)
                    .or(chunk_ord)
                    .unwrap_or(0);
                let whole = chunks
                    .iter()
                    .find(|c| c.ord == chunk)
                    .map_or(r.text.as_str(), |c| c.text.as_str());
                chunk_text.insert(key.clone(), whole.chars().take(RERANK_CHARS).collect());
                // A keyword hit's passage is the window of its words, made now for the hits
                // kept (the search itself made none).
                let clock = Instant::now();
                let passage = match found.meta.get(&key) {
                    Some(m) if !m.passage.is_empty() => m.passage.clone(),
                    Some(_) => {
                        if !passages.contains_key(&key.0)
                            && let Some(q) = found.queries.get(key.0)
                        {
                            passages.insert(key.0, self.corpora[key.0].text.passages(q)?);
                        }
                        passages.get(&key.0).map_or_else(
                            || whole.chars().take(PASSAGE_CHARS).collect(),
                            |p| p.of(whole),
                        )
                    }
                    None => whole.chars().take(PASSAGE_CHARS).collect(),
                };
                stages.text += since_ms(clock);
                TextHit {
                    record_id: key.1.clone(),
                    score,
                    passage,
                    chunk,
                    framework: r.framework.clone(),
                    project: r.project.clone(),
                    session_id: r.session_id.clone(),
                    timestamp: r.started_at,
                    outcome: r.outcome.as_str().to_owned(),
                    in_range: ranged,
                }
            } else {
                let Some(h) = found.meta.get(&key) else {
                    continue;
                };
                TextHit {
                    score,
                    in_range: ranged,
                    ..h.clone()
                }
            };
            hit.score = score;
            hits.push(Hit {
                corpus: key.0,
                keyword: found.keyword.get(&key).copied(),
                dense: found.dense.get(&key).copied(),
                rerank: None,
                hit,
            });
        }
        if q.rerank {
            match &self.reranker {
                Some(r) if !hits.is_empty() => {
                    let passages: Vec<String> = hits
                        .iter()
                        .take(RERANK_TOP)
                        .map(|h| {
                            chunk_text
                                .get(&(h.corpus, h.hit.record_id.clone()))
                                .cloned()
                                .unwrap_or_else(|| self.passage_of(h))
                        })
                        .collect();
                    let r = r.clone();
                    let query = q.text.text.clone();
                    let clock = Instant::now();
                    let scores =
                        blocking(move || rerank_scores(r.as_ref(), &query, &passages)).await?;
                    stages.rerank = since_ms(clock);
                    match scores {
                        Ok(scores) => {
                            apply_rerank(&mut hits, &scores);
                            notes.reranked = true;
                        }
                        Err(e) => notes.degraded.push(format!(
                            "Re-ranking failed ({e}): results are not re-ranked."
                        )),
                    }
                }
                Some(_) => {}
                None => notes
                    .degraded
                    .push("No cross-encoder: results are not re-ranked.".into()),
            }
        }
        hits.truncate(limit);
        notes.stages = stages;
        Ok((hits, notes))
    }

    /// The first stage, on the blocking pool: the query embedded once, BM25 per corpus
    /// (normalised within it: each index has its own statistics), and each kind of vector.
    /// The embedding runs on a thread of its own beside the keyword searches, which do not
    /// need it; the vector searches wait for it.
    fn candidates(&self, q: &TextQuery, mode: SearchMode) -> Result<Found, Error> {
        let t = &self.tuning;
        let pool = t.pool.max(q.limit);
        // Each corpus's own query: a corpus with its own test searches unfiltered.
        let queries: Vec<TextQuery> = self
            .corpora
            .iter()
            .map(|corpus| {
                let before = match (q.before, corpus.before) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let bare = corpus.store.is_some();
                let cq = if corpus.keep.is_some() {
                    TextQuery {
                        project: None,
                        framework: None,
                        exclude_session: None,
                        before,
                        bare,
                        limit: pool,
                        context_boost: Some(t.context_boost),
                        ..q.clone()
                    }
                } else {
                    TextQuery {
                        before,
                        bare,
                        limit: pool,
                        context_boost: Some(t.context_boost),
                        ..q.clone()
                    }
                };
                if t.stopwords {
                    TextQuery {
                        text: crate::stop::keyword_text(&cq.text),
                        ..cq
                    }
                } else {
                    cq
                }
            })
            .collect();
        let mut found = Found::default();
        let qv = std::thread::scope(|scope| -> Result<Option<Vec<f32>>, Error> {
            let embedding = match (&self.embedder, mode) {
                (Some(e), SearchMode::Dense | SearchMode::Hybrid) => {
                    let text = q.text.as_str();
                    Some(scope.spawn(move || {
                        let clock = Instant::now();
                        (e.embed(&[text]), since_ms(clock))
                    }))
                }
                _ => None,
            };
            let clock = Instant::now();
            if mode != SearchMode::Dense {
                for (ci, (corpus, cq)) in self.corpora.iter().zip(&queries).enumerate() {
                    let kept = |h: &TextHit| corpus.keep.as_ref().is_none_or(|k| k(h));
                    let mut raw: HashMap<Key, f32> = HashMap::new();
                    for h in corpus.text.search(cq)? {
                        if !kept(&h) {
                            continue;
                        }
                        let key = (ci, h.record_id.clone());
                        raw.insert(key.clone(), h.score);
                        found.meta.insert(key, h);
                    }
                    found
                        .keyword
                        .extend(if t.fusion == crate::Fusion::WeightedMax {
                            crate::fuse::normalise_max(&raw)
                        } else {
                            crate::fuse::normalise(&raw)
                        });
                    // The keyword index reads its files through memory maps; what searches
                    // mapped in goes back to the page cache once it passes the budget.
                    if let Some(dir) = corpus.text.dir() {
                        cairn_vectors::release_files_when_over_budget(dir);
                    }
                }
            }
            found.stages.keyword = since_ms(clock);
            match embedding {
                None => Ok(None),
                Some(handle) => {
                    let (vectors, took) = handle
                        .join()
                        .map_err(|_| Error::Backend("the query embedding panicked".into()))?;
                    found.stages.embed = took;
                    vectors
                        .map_err(backend)?
                        .into_iter()
                        .next()
                        .map(Some)
                        .ok_or_else(|| Error::Backend("the embedder returned nothing".into()))
                }
            }
        })?;
        found.qv = qv.clone();
        found.queries = queries.clone();
        for (ci, (corpus, cq)) in self.corpora.iter().zip(&queries).enumerate() {
            let (Some(qv), Some(vectors)) = (&qv, &corpus.vectors) else {
                continue;
            };
            // The hard cut is inclusive in the vector filter: the last millisecond before it.
            let cut = cq.before.map(|t| t.timestamp_millis() - 1);
            let base = VectorFilter {
                project: cq.project.clone(),
                framework: cq.framework.clone(),
                kinds: Vec::new(),
                exclude_session: cq.exclude_session.clone(),
                since_ms: None,
                until_ms: cut,
            };
            let has_range = q.since.is_some() || q.until.is_some();
            let mut passes = Vec::new();
            if has_range {
                let until = match (q.until.map(|t| t.timestamp_millis()), cut) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                passes.push((
                    VectorFilter {
                        since_ms: q.since.map(|t| t.timestamp_millis()),
                        until_ms: until,
                        ..base.clone()
                    },
                    true,
                ));
            }
            passes.push((base, !has_range));
            for (filter, in_range) in passes {
                // One kind after the other. Side by side on threads of their own they were
                // not steadily faster on two cores and held three searches' mapped pages at
                // once: a peak of 402–456 MiB against 292–295 under `cairn bench search`'s
                // load, over the 300 MiB bar (docs/figures/search.md). Two corpora's searches
                // (a turn note's records and items) on two threads gained nothing either: they
                // slowed each other to the time of the two one after the other
                // (docs/figures/items.md). Only the kinds this corpus's documents have.
                for &kind in corpus.kinds {
                    let clock = Instant::now();
                    let kind_hits = vectors
                        .search_rescoring(kind, qv, &filter, pool, t.candidates)
                        .map_err(backend)?;
                    let took = since_ms(clock);
                    match kind {
                        VectorKind::Chunk => found.stages.vector_chunk += took,
                        VectorKind::Summary => found.stages.vector_summary += took,
                        _ => found.stages.vector_cue += took,
                    }
                    for h in kind_hits {
                        if h.score < t.min_dense {
                            continue;
                        }
                        let key = (ci, h.owner);
                        let e = found.dense.entry(key.clone()).or_insert(f32::MIN);
                        if h.score > *e {
                            *e = h.score;
                            if kind == VectorKind::Chunk {
                                found.best_chunk.insert(key.clone(), h.ord);
                            }
                        }
                        found.dense_in_range.entry(key).or_insert(in_range);
                    }
                }
            }
        }
        // A corpus with its own test: dense candidates it does not keep go before fusion.
        // The test needs their metadata, so it is read now (the chunk that matched), and
        // for a corpus without a store kept as the hit's (not read a second time).
        let clock = Instant::now();
        let held: Vec<Key> = found
            .dense
            .keys()
            .filter(|k| self.corpora[k.0].keep.is_some() && !found.meta.contains_key(*k))
            .cloned()
            .collect();
        for k in held {
            let c = &self.corpora[k.0];
            let kept = c
                .text
                .record_chunk(&k.1, found.best_chunk.get(&k).copied())
                .ok()
                .flatten()
                .filter(|h| c.keep.as_ref().is_none_or(|keep| keep(h)));
            match kept {
                // A corpus without a store: this is the hit's metadata (a store's corpus
                // reads its records from the store).
                Some(mut h) if c.store.is_none() => {
                    h.passage = h.passage.chars().take(PASSAGE_CHARS).collect();
                    found.meta.insert(k, h);
                }
                Some(_) => {}
                None => {
                    found.dense.remove(&k);
                }
            }
        }
        found.stages.filter = since_ms(clock);
        Ok(found)
    }

    /// What the cross-encoder reads for a hit of a corpus without a store: the whole chunk
    /// its passage comes from, from that corpus's index.
    fn passage_of(&self, h: &Hit) -> String {
        self.corpora
            .get(h.corpus)
            .and_then(|c| {
                c.text
                    .record_chunk(&h.hit.record_id, Some(h.hit.chunk))
                    .ok()
            })
            .flatten()
            .map(|c| c.passage)
            .unwrap_or_else(|| h.hit.passage.clone())
            .chars()
            .take(RERANK_CHARS)
            .collect()
    }
}

fn rerank_scores(r: &dyn Reranker, query: &str, passages: &[String]) -> Result<Vec<f32>, String> {
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let scores = r.score(query, &refs).map_err(|e| e.message)?;
    if scores.len() != passages.len() {
        return Err(format!(
            "the cross-encoder returned {} scores for {} passages",
            scores.len(),
            passages.len()
        ));
    }
    Ok(scores)
}

/// Orders the first `scores.len()` hits by the cross-encoder (in range first still).
fn apply_rerank(hits: &mut [Hit], scores: &[f32]) {
    let n = scores.len().min(hits.len());
    for (h, s) in hits[..n].iter_mut().zip(scores) {
        h.rerank = Some(*s);
    }
    hits[..n].sort_by(|a, b| {
        b.hit.in_range.cmp(&a.hit.in_range).then(
            b.rerank
                .unwrap_or(f32::MIN)
                .total_cmp(&a.rerank.unwrap_or(f32::MIN)),
        )
    });
}
