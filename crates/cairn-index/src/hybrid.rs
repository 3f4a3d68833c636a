//! Hybrid search: BM25 and dense similarity, each normalised over its own results and fused
//! 0.7 dense / 0.3 keyword, one hit per record with its best passage; then, when a
//! cross-encoder is present, its re-ranking of the top 30 by the chunk each passage comes
//! from. Several corpora (the records and the notes) are searched as one list: fused
//! together and re-ranked once, and the cross-encoder's order is the order returned.
use std::collections::HashMap;

use cairn_core::VectorKind;
use cairn_core::ports::{BackendError, Embedder, Reranker, VectorFilter, VectorIndex};

use crate::{Error, TextHit, TextIndex, TextQuery};

/// The weight of dense similarity in the fused score (keyword gets the rest).
pub const DENSE_WEIGHT: f32 = 0.7;
/// How many candidates each side contributes before fusion.
pub const CANDIDATES: usize = 60;
/// How many fused results the cross-encoder re-ranks.
pub const RERANK_TOP: usize = 30;
/// Dense candidates less similar than this are noise, not matches (every record has a
/// nearest neighbour); they are dropped before fusion.
pub const MIN_DENSE_SIMILARITY: f32 = 0.2;
/// How many characters of a passage the cross-encoder reads.
const RERANK_CHARS: usize = 1_500;

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

/// One record (or note) found by a hybrid search.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridHit {
    /// The record, its metadata and best passage (its `score` is the fused score).
    pub hit: TextHit,
    /// Which corpus it came from: its position in the list given to [`Search::run`] (0 for
    /// [`Hybrid::search`]).
    pub corpus: usize,
    /// Normalised BM25 score, when keywords matched.
    pub keyword: Option<f32>,
    /// Cosine similarity of the best chunk, when the dense side found it.
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
}

/// The parts a hybrid search over one corpus needs; the dense side and the reranker are
/// optional.
pub struct Hybrid<'a> {
    /// BM25.
    pub text: &'a TextIndex,
    /// The vector index.
    pub vectors: Option<&'a dyn VectorIndex>,
    /// The embedder for the query.
    pub embedder: Option<&'a dyn Embedder>,
    /// The cross-encoder.
    pub reranker: Option<&'a dyn Reranker>,
}

/// A test on each candidate of a corpus: keep it or not.
pub type Keep<'a> = &'a (dyn Fn(&TextHit) -> bool + Sync);

/// One index a search reads (the records, or the notes): its BM25 index and its vectors.
pub struct Corpus<'a> {
    /// BM25 over this corpus.
    pub text: &'a TextIndex,
    /// Its vectors (none: this corpus is found by keywords only).
    pub vectors: Option<&'a dyn VectorIndex>,
    /// `None`: the query's project, framework and session filters apply. `Some`: they do not,
    /// and this test decides instead which candidates stay (before fusion).
    pub keep: Option<Keep<'a>>,
}

/// One search over one or more corpora, ranked as one list: every corpus's candidates are
/// fused together, the top [`RERANK_TOP`] re-ranked once by the passage that matched, and
/// that order is the answer.
pub struct Search<'a> {
    /// What is searched.
    pub corpora: &'a [Corpus<'a>],
    /// The embedder for the query.
    pub embedder: Option<&'a dyn Embedder>,
    /// The cross-encoder.
    pub reranker: Option<&'a dyn Reranker>,
}

/// Min-max normalisation of one list's scores into 0..=1 (a single result gets 1).
fn normalise<K: Clone + Eq + std::hash::Hash>(scores: &HashMap<K, f32>) -> HashMap<K, f32> {
    let (lo, hi) = scores
        .values()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    scores
        .iter()
        .map(|(k, &s)| (k.clone(), if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }))
        .collect()
}

/// [`fuse`] over any key.
fn fuse_by<K: Clone + Eq + Ord + std::hash::Hash>(
    dense: &HashMap<K, f32>,
    keyword: &HashMap<K, f32>,
    w_dense: f32,
) -> Vec<(K, f32)> {
    let d = normalise(dense);
    let k = normalise(keyword);
    let mut ids: Vec<&K> = d.keys().chain(k.keys()).collect();
    ids.sort();
    ids.dedup();
    let mut out: Vec<(K, f32)> = ids
        .into_iter()
        .map(|id| {
            let s = w_dense * d.get(id).copied().unwrap_or(0.0)
                + (1.0 - w_dense) * k.get(id).copied().unwrap_or(0.0);
            (id.clone(), s)
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Fuses normalised dense and keyword scores: `w·dense + (1−w)·keyword`, a side that did
/// not find a record counting 0. Sorted best first (ties by id, so the order is stable).
pub fn fuse(
    dense: &HashMap<String, f32>,
    keyword: &HashMap<String, f32>,
    w_dense: f32,
) -> Vec<(String, f32)> {
    fuse_by(dense, keyword, w_dense)
}

fn backend(e: BackendError) -> Error {
    Error::Query(e.message)
}

/// A candidate's key: (corpus, record id).
type Key = (usize, String);

impl Hybrid<'_> {
    /// Searches with `mode`; re-ranks the top 30 when `rerank` is asked and a cross-encoder
    /// is present. Without an embedder or vector index, dense and hybrid fall back to BM25
    /// (said in the notes).
    pub fn search(
        &self,
        q: &TextQuery,
        mode: SearchMode,
        rerank: bool,
    ) -> Result<(Vec<HybridHit>, SearchNotes), Error> {
        let corpora = [Corpus {
            text: self.text,
            vectors: self.vectors,
            keep: None,
        }];
        Search {
            corpora: &corpora,
            embedder: self.embedder,
            reranker: self.reranker,
        }
        .run(q, mode, rerank)
    }
}

impl Search<'_> {
    /// Searches every corpus for `q` with `mode` and ranks the candidates as one list: dense
    /// similarities are normalised over all of them (one embedder, one scale), BM25 scores
    /// within their own corpus (each index has its own statistics), then fused; hits in the
    /// date range come first. When `rerank` is asked and a cross-encoder is present, it
    /// scores the top [`RERANK_TOP`] by the whole chunk their passage comes from, and its
    /// order is the order returned. Without an embedder or vectors, dense and hybrid fall
    /// back to BM25 (said in the notes).
    pub fn run(
        &self,
        q: &TextQuery,
        mode: SearchMode,
        rerank: bool,
    ) -> Result<(Vec<HybridHit>, SearchNotes), Error> {
        let mut notes = SearchNotes::default();
        let limit = q.limit.clamp(1, 1000);
        let has_vectors = self.corpora.iter().any(|c| c.vectors.is_some());
        let embedder = self
            .embedder
            .filter(|_| has_vectors && mode != SearchMode::Bm25);
        let mode = if mode != SearchMode::Bm25 && embedder.is_none() {
            notes
                .degraded
                .push("No embedding model or vector index: keyword search only.".into());
            SearchMode::Bm25
        } else {
            mode
        };
        let pool = CANDIDATES.max(limit);
        let qv = match embedder {
            Some(e) => Some(
                e.embed(&[q.text.as_str()])
                    .map_err(backend)?
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::Query("the embedder returned nothing".into()))?,
            ),
            None => None,
        };
        let mut meta: HashMap<Key, TextHit> = HashMap::new();
        let mut keyword: HashMap<Key, f32> = HashMap::new();
        let mut dense: HashMap<Key, f32> = HashMap::new();
        let mut best_chunk: HashMap<Key, u32> = HashMap::new();
        let mut dense_in_range: HashMap<Key, bool> = HashMap::new();
        for (ci, corpus) in self.corpora.iter().enumerate() {
            let cq = if corpus.keep.is_some() {
                TextQuery {
                    project: None,
                    framework: None,
                    exclude_session: None,
                    limit: pool,
                    ..q.clone()
                }
            } else {
                TextQuery {
                    limit: pool,
                    ..q.clone()
                }
            };
            let kept = |h: &TextHit| corpus.keep.is_none_or(|k| k(h));
            // Keyword side, normalised within this corpus.
            if mode != SearchMode::Dense {
                let mut raw: HashMap<Key, f32> = HashMap::new();
                for h in corpus.text.search(&cq)? {
                    if !kept(&h) {
                        continue;
                    }
                    let key = (ci, h.record_id.clone());
                    raw.insert(key.clone(), h.score);
                    meta.insert(key, h);
                }
                keyword.extend(normalise(&raw));
            }
            // Dense side: in range first, then the rest (as the keyword side does).
            if let (Some(qv), Some(vectors)) = (&qv, corpus.vectors) {
                let base = VectorFilter {
                    project: cq.project.clone(),
                    framework: cq.framework.clone(),
                    kinds: Vec::new(),
                    exclude_session: cq.exclude_session.clone(),
                    since_ms: None,
                    until_ms: None,
                };
                let has_range = q.since.is_some() || q.until.is_some();
                let mut passes = Vec::new();
                if has_range {
                    passes.push((
                        VectorFilter {
                            since_ms: q.since.map(|t| t.timestamp_millis()),
                            until_ms: q.until.map(|t| t.timestamp_millis()),
                            ..base.clone()
                        },
                        true,
                    ));
                }
                passes.push((base, !has_range));
                for (filter, in_range) in passes {
                    for kind in [VectorKind::Chunk, VectorKind::Summary, VectorKind::Cue] {
                        for h in vectors
                            .search(kind, qv, &filter, pool * 3, false)
                            .map_err(backend)?
                        {
                            if h.score < MIN_DENSE_SIMILARITY {
                                continue;
                            }
                            let key = (ci, h.owner);
                            let e = dense.entry(key.clone()).or_insert(f32::MIN);
                            if h.score > *e {
                                *e = h.score;
                                // Only a chunk vector's `ord` names a chunk.
                                if kind == VectorKind::Chunk {
                                    best_chunk.insert(key.clone(), h.ord);
                                }
                            }
                            dense_in_range.entry(key).or_insert(in_range);
                        }
                    }
                }
            }
        }
        // What the dense side alone found: its best chunk is the passage. A vector whose
        // record left the text index (cleared meanwhile), or that the corpus does not keep,
        // is dropped before fusion.
        let dense_only: Vec<Key> = dense
            .keys()
            .filter(|k| !meta.contains_key(*k))
            .cloned()
            .collect();
        for key in dense_only {
            let corpus = &self.corpora[key.0];
            let found = corpus
                .text
                .record_chunk(&key.1, best_chunk.get(&key).copied())?
                .filter(|h| corpus.keep.is_none_or(|k| k(h)));
            match found {
                Some(mut h) => {
                    h.passage = h.passage.chars().take(240).collect();
                    meta.insert(key, h);
                }
                None => {
                    dense.remove(&key);
                }
            }
        }
        let w = match mode {
            SearchMode::Bm25 => 0.0,
            SearchMode::Dense => 1.0,
            SearchMode::Hybrid => DENSE_WEIGHT,
        };
        let mut hits: Vec<HybridHit> = Vec::new();
        for (key, score) in fuse_by(&dense, &keyword, w) {
            let Some(mut hit) = meta.remove(&key) else {
                continue;
            };
            if let Some(r) = dense_in_range.get(&key) {
                hit.in_range = hit.in_range || *r;
            }
            hit.score = score;
            hits.push(HybridHit {
                corpus: key.0,
                keyword: keyword.get(&key).copied(),
                dense: dense.get(&key).copied(),
                rerank: None,
                hit,
            });
        }
        // In range first, then the rest; each group by score (fusion's order breaks ties).
        hits.sort_by(|a, b| {
            b.hit
                .in_range
                .cmp(&a.hit.in_range)
                .then(b.hit.score.total_cmp(&a.hit.score))
        });
        if rerank {
            match self.reranker {
                Some(r) if !hits.is_empty() => match self.rerank(r, &q.text, &mut hits) {
                    Ok(()) => notes.reranked = true,
                    Err(e) => notes.degraded.push(format!(
                        "Re-ranking failed ({e}): results are not re-ranked."
                    )),
                },
                Some(_) => {}
                None => notes
                    .degraded
                    .push("No cross-encoder: results are not re-ranked.".into()),
            }
        }
        hits.truncate(limit);
        Ok((hits, notes))
    }

    /// What the cross-encoder reads for a hit: the whole chunk its passage comes from.
    fn passage_of(&self, h: &HybridHit) -> String {
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

    /// Orders the top [`RERANK_TOP`] hits by the cross-encoder's scores; what went wrong
    /// otherwise (the hits are then left as they were).
    fn rerank(&self, r: &dyn Reranker, query: &str, hits: &mut [HybridHit]) -> Result<(), String> {
        let n = hits.len().min(RERANK_TOP);
        let passages: Vec<String> = hits[..n].iter().map(|h| self.passage_of(h)).collect();
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        let scores = r.score(query, &refs).map_err(|e| e.message)?;
        if scores.len() != n {
            return Err(format!(
                "the cross-encoder returned {} scores for {n} passages",
                scores.len()
            ));
        }
        for (h, s) in hits[..n].iter_mut().zip(scores) {
            h.rerank = Some(s);
        }
        // In range first still; within each group the cross-encoder decides.
        hits[..n].sort_by(|a, b| {
            b.hit.in_range.cmp(&a.hit.in_range).then(
                b.rerank
                    .unwrap_or(f32::MIN)
                    .total_cmp(&a.rerank.unwrap_or(f32::MIN)),
            )
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::ports::{VectorHit, VectorPoint};
    use cairn_core::{Chunk, NewRecord, Outcome, Record, RecordId};
    use std::sync::Mutex;

    /// A record of `chunks` (its text is their concatenation) put into `index`.
    fn put(index: &TextIndex, id: &str, chunks: &[&str]) {
        let rid = RecordId::new(id.to_owned());
        let text = chunks.join("\n");
        let ts = chrono::DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default();
        let record = Record {
            seq: 0,
            captured_at: ts,
            record: NewRecord {
                id: rid.clone(),
                framework: "codex".into(),
                session_id: format!("s-{id}"),
                project: None,
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: ts,
                ended_at: None,
                request: chunks[0].to_owned(),
                text,
                content: serde_json::json!({}),
                source: None,
            },
        };
        let mut start = 0;
        let chunks: Vec<Chunk> = chunks
            .iter()
            .enumerate()
            .map(|(ord, t)| {
                let c = Chunk {
                    record_id: rid.clone(),
                    ord: ord as u32,
                    start,
                    text: (*t).to_owned(),
                };
                start += t.len() as u32 + 1;
                c
            })
            .collect();
        index.put(&record, &chunks).unwrap();
    }

    /// Remembers what it was asked to score; scores by `order` (the position by default).
    struct Recording {
        seen: Mutex<Vec<String>>,
        reverse: bool,
    }

    impl Recording {
        fn new(reverse: bool) -> Self {
            Self {
                seen: Mutex::new(Vec::new()),
                reverse,
            }
        }
        fn seen(&self) -> Vec<String> {
            self.seen.lock().unwrap().clone()
        }
    }

    impl Reranker for Recording {
        fn model_id(&self) -> &str {
            "recording"
        }
        fn score(&self, _query: &str, passages: &[&str]) -> Result<Vec<f32>, BackendError> {
            self.seen
                .lock()
                .unwrap()
                .extend(passages.iter().map(|p| (*p).to_owned()));
            Ok((0..passages.len())
                .map(|i| if self.reverse { i as f32 } else { -(i as f32) })
                .collect())
        }
    }

    /// An embedder of one dimension, and a vector index that answers fixed hits.
    struct OneDim;
    impl Embedder for OneDim {
        fn model_id(&self) -> &str {
            "one-dim"
        }
        fn dim(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
            Ok(texts.iter().map(|_| vec![1.0]).collect())
        }
    }
    struct Fixed(Vec<VectorHit>);
    impl VectorIndex for Fixed {
        fn backend(&self) -> &str {
            "fixed"
        }
        fn ensure(&self, _dim: usize) -> Result<(), BackendError> {
            Ok(())
        }
        fn upsert(&self, _points: &[VectorPoint]) -> Result<(), BackendError> {
            Ok(())
        }
        fn delete_owner(&self, _owner: &str) -> Result<(), BackendError> {
            Ok(())
        }
        fn search(
            &self,
            kind: VectorKind,
            _vector: &[f32],
            _filter: &VectorFilter,
            _limit: usize,
            _exact: bool,
        ) -> Result<Vec<VectorHit>, BackendError> {
            Ok(self
                .0
                .iter()
                .filter(|h| h.vector_kind == kind)
                .cloned()
                .collect())
        }
        fn count(&self) -> Result<u64, BackendError> {
            Ok(self.0.len() as u64)
        }
        fn clear(&self) -> Result<(), BackendError> {
            Ok(())
        }
        fn flush(&self) -> Result<(), BackendError> {
            Ok(())
        }
    }

    const FIRST: &str = "opening remarks about the weather and lunch plans";
    const MATCHED: &str = "the zanzibar deploy failed because the cache key was stale";
    const LAST: &str = "closing thoughts on naming and coffee";

    #[test]
    fn the_reranker_reads_the_chunk_that_matched_not_the_first() {
        let text = TextIndex::in_memory().unwrap();
        put(&text, "r_multi", &[FIRST, MATCHED, LAST]);
        text.commit(1).unwrap();
        let r = Recording::new(false);
        let (hits, notes) = Hybrid {
            text: &text,
            vectors: None,
            embedder: None,
            reranker: Some(&r),
        }
        .search(&TextQuery::new("zanzibar", 5), SearchMode::Bm25, true)
        .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].hit.chunk, 1);
        assert!(notes.reranked);
        assert_eq!(
            r.seen(),
            vec![MATCHED.to_owned()],
            "the whole matched chunk"
        );
    }

    #[test]
    fn a_dense_only_hit_is_reranked_by_its_best_chunk() {
        let text = TextIndex::in_memory().unwrap();
        put(&text, "r_multi", &[FIRST, LAST, MATCHED]);
        text.commit(1).unwrap();
        let hit = |ord: u32, score: f32| VectorHit {
            owner: "r_multi".into(),
            vector_kind: VectorKind::Chunk,
            ord,
            score,
        };
        let vectors = Fixed(vec![hit(0, 0.3), hit(2, 0.9), hit(1, 0.4)]);
        let r = Recording::new(false);
        let (hits, notes) = Hybrid {
            text: &text,
            vectors: Some(&vectors),
            embedder: Some(&OneDim),
            reranker: Some(&r),
        }
        .search(
            &TextQuery::new("words found nowhere", 5),
            SearchMode::Hybrid,
            true,
        )
        .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].hit.chunk, 2);
        assert_eq!(hits[0].hit.passage, MATCHED);
        assert!(notes.reranked);
        assert_eq!(r.seen(), vec![MATCHED.to_owned()]);
    }

    #[test]
    fn corpora_are_ranked_as_one_list_and_the_reranker_decides_it() {
        let records = TextIndex::in_memory().unwrap();
        put(&records, "r_1", &["kestrel kestrel kestrel migration"]);
        put(&records, "r_2", &["kestrel migration notes from monday"]);
        put(
            &records,
            "r_3",
            &["a long unrelated discussion that mentions kestrel once among many other words"],
        );
        records.commit(1).unwrap();
        let notes_index = TextIndex::in_memory().unwrap();
        put(&notes_index, "n_1", &["kestrel kestrel runbook"]);
        put(
            &notes_index,
            "n_2",
            &["the kestrel of other matters and other words entirely"],
        );
        notes_index.commit(1).unwrap();
        let keep_all = |_: &TextHit| true;
        let corpora = [
            Corpus {
                text: &records,
                vectors: None,
                keep: None,
            },
            Corpus {
                text: &notes_index,
                vectors: None,
                keep: Some(&keep_all),
            },
        ];
        let q = TextQuery::new("kestrel", 10);
        let ids = |hits: &[HybridHit]| -> Vec<String> {
            hits.iter().map(|h| h.hit.record_id.clone()).collect()
        };
        let plain = Search {
            corpora: &corpora,
            embedder: None,
            reranker: None,
        };
        let (fused, notes) = plain.run(&q, SearchMode::Bm25, true).unwrap();
        assert!(!notes.reranked);
        assert!(notes.degraded.iter().any(|d| d.contains("not re-ranked")));
        assert_eq!(fused.len(), 5);
        for h in &fused {
            let from_notes = h.hit.record_id.starts_with("n_");
            assert_eq!(h.corpus, usize::from(from_notes), "{}", h.hit.record_id);
        }
        // One list: the best of each corpus leads, the weakest of each close it.
        let kinds: String = fused
            .iter()
            .map(|h| if h.corpus == 0 { 'r' } else { 'n' })
            .collect();
        assert!(kinds.contains("rn") || kinds.contains("nr"), "{kinds}");
        let reverse = Recording::new(true);
        let (reranked, notes) = Search {
            corpora: &corpora,
            embedder: None,
            reranker: Some(&reverse),
        }
        .run(&q, SearchMode::Bm25, true)
        .unwrap();
        assert!(notes.reranked);
        let mut want = ids(&fused);
        want.reverse();
        assert_eq!(
            ids(&reranked),
            want,
            "the cross-encoder's order is the answer"
        );
        assert_eq!(reverse.seen().len(), 5, "re-ranked once, over both corpora");
        // Asked not to re-rank: the fused order, and not reported as re-ranked.
        let (unranked, notes) = Search {
            corpora: &corpora,
            embedder: None,
            reranker: Some(&reverse),
        }
        .run(&q, SearchMode::Bm25, false)
        .unwrap();
        assert!(!notes.reranked);
        assert_eq!(ids(&unranked), ids(&fused));
    }

    #[test]
    fn a_corpus_keep_test_drops_candidates_before_ranking() {
        let notes_index = TextIndex::in_memory().unwrap();
        put(&notes_index, "n_1", &["kestrel runbook"]);
        put(&notes_index, "n_2", &["kestrel kestrel other"]);
        notes_index.commit(1).unwrap();
        let only_n1 = |h: &TextHit| h.record_id == "n_1";
        let corpora = [Corpus {
            text: &notes_index,
            vectors: None,
            keep: Some(&only_n1),
        }];
        let r = Recording::new(true);
        let (hits, _) = Search {
            corpora: &corpora,
            embedder: None,
            reranker: Some(&r),
        }
        .run(&TextQuery::new("kestrel", 10), SearchMode::Bm25, true)
        .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].hit.record_id, "n_1");
        assert_eq!(r.seen().len(), 1);
    }

    #[test]
    fn a_failing_reranker_leaves_the_fused_order_and_says_so() {
        struct Broken;
        impl Reranker for Broken {
            fn model_id(&self) -> &str {
                "broken"
            }
            fn score(&self, _q: &str, _p: &[&str]) -> Result<Vec<f32>, BackendError> {
                Ok(vec![1.0])
            }
        }
        let text = TextIndex::in_memory().unwrap();
        put(&text, "r_1", &["kestrel kestrel"]);
        put(&text, "r_2", &["kestrel and more words here"]);
        text.commit(1).unwrap();
        let (hits, notes) = Hybrid {
            text: &text,
            vectors: None,
            embedder: None,
            reranker: Some(&Broken),
        }
        .search(&TextQuery::new("kestrel", 5), SearchMode::Bm25, true)
        .unwrap();
        assert!(!notes.reranked);
        assert!(
            notes
                .degraded
                .iter()
                .any(|d| d.contains("1 scores for 2 passages")),
            "{notes:?}"
        );
        assert_eq!(hits[0].hit.record_id, "r_1");
        assert!(hits.iter().all(|h| h.rerank.is_none()));
    }

    fn map(v: &[(&str, f32)]) -> HashMap<String, f32> {
        v.iter().map(|(k, s)| ((*k).to_owned(), *s)).collect()
    }

    #[test]
    fn fusion_weights_dense_and_keyword_after_normalising_each() {
        let dense = map(&[("a", 0.9), ("b", 0.5), ("c", 0.1)]);
        let kw = map(&[("c", 30.0), ("d", 10.0)]);
        let f = fuse(&dense, &kw, 0.7);
        let get = |id: &str| {
            f.iter()
                .find(|(k, _)| k == id)
                .map(|(_, s)| *s)
                .unwrap_or(-1.0)
        };
        assert!((get("a") - 0.7).abs() < 1e-6);
        assert!((get("b") - 0.35).abs() < 1e-6);
        assert!((get("c") - 0.3).abs() < 1e-6, "top keyword, bottom dense");
        assert!((get("d") - 0.0).abs() < 1e-6);
        assert_eq!(f[0].0, "a");
        // Pure modes.
        assert_eq!(fuse(&dense, &kw, 0.0)[0].0, "c");
        assert_eq!(fuse(&dense, &kw, 1.0)[0].0, "a");
        // A single result normalises to 1.
        assert_eq!(
            fuse(&map(&[("x", 0.2)]), &HashMap::new(), 1.0),
            vec![("x".to_owned(), 1.0)]
        );
    }
}
