//! Hybrid search: BM25 and dense similarity, each normalised over its own results and fused
//! 0.7 dense / 0.3 keyword, one hit per record with its best passage; then, when a
//! cross-encoder is present, its re-ranking of the top 30.
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

/// One record found by a hybrid search.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridHit {
    /// The record, its metadata and best passage (its `score` is the final score).
    pub hit: TextHit,
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
}

/// The parts a hybrid search needs; the dense side and the reranker are optional.
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

/// Min-max normalisation of one list's scores into 0..=1 (a single result gets 1).
fn normalise(scores: &HashMap<String, f32>) -> HashMap<String, f32> {
    let (lo, hi) = scores
        .values()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    scores
        .iter()
        .map(|(k, &s)| (k.clone(), if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }))
        .collect()
}

/// Fuses normalised dense and keyword scores: `w·dense + (1−w)·keyword`, a side that did
/// not find a record counting 0. Sorted best first (ties by id, so the order is stable).
pub fn fuse(
    dense: &HashMap<String, f32>,
    keyword: &HashMap<String, f32>,
    w_dense: f32,
) -> Vec<(String, f32)> {
    let d = normalise(dense);
    let k = normalise(keyword);
    let mut ids: Vec<&String> = d.keys().chain(k.keys()).collect();
    ids.sort();
    ids.dedup();
    let mut out: Vec<(String, f32)> = ids
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

fn backend(e: BackendError) -> Error {
    Error::Query(e.message)
}

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
        let mut notes = SearchNotes::default();
        let limit = q.limit.clamp(1, 1000);
        let dense_parts = match (self.embedder, self.vectors) {
            (Some(e), Some(v)) if mode != SearchMode::Bm25 => Some((e, v)),
            _ => None,
        };
        let mode = if mode != SearchMode::Bm25 && dense_parts.is_none() {
            notes
                .degraded
                .push("No embedding model or vector index: keyword search only.".into());
            SearchMode::Bm25
        } else {
            mode
        };
        let pool = CANDIDATES.max(limit);
        // Keyword side.
        let mut meta: HashMap<String, TextHit> = HashMap::new();
        let mut keyword: HashMap<String, f32> = HashMap::new();
        if mode != SearchMode::Dense {
            let kq = TextQuery {
                limit: pool,
                ..q.clone()
            };
            for h in self.text.search(&kq)? {
                keyword.insert(h.record_id.clone(), h.score);
                meta.insert(h.record_id.clone(), h);
            }
        }
        // Dense side: in range first, then the rest (as the keyword side does).
        let mut dense: HashMap<String, f32> = HashMap::new();
        let mut best_chunk: HashMap<String, u32> = HashMap::new();
        let mut dense_in_range: HashMap<String, bool> = HashMap::new();
        if let Some((embedder, vectors)) = dense_parts {
            let qv = embedder.embed(&[q.text.as_str()]).map_err(backend)?;
            let qv = qv
                .into_iter()
                .next()
                .ok_or_else(|| Error::Query("the embedder returned nothing".into()))?;
            let base = VectorFilter {
                project: q.project.clone(),
                framework: q.framework.clone(),
                kinds: Vec::new(),
                exclude_session: q.exclude_session.clone(),
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
                        .search(kind, &qv, &filter, pool * 3, false)
                        .map_err(backend)?
                    {
                        if h.score < MIN_DENSE_SIMILARITY {
                            continue;
                        }
                        let e = dense.entry(h.owner.clone()).or_insert(f32::MIN);
                        if h.score > *e {
                            *e = h.score;
                            best_chunk.insert(h.owner.clone(), h.ord);
                        }
                        dense_in_range.entry(h.owner).or_insert(in_range);
                    }
                }
            }
        }
        let w = match mode {
            SearchMode::Bm25 => 0.0,
            SearchMode::Dense => 1.0,
            SearchMode::Hybrid => DENSE_WEIGHT,
        };
        let fused = fuse(&dense, &keyword, w);
        let mut hits: Vec<HybridHit> = Vec::new();
        for (id, score) in fused {
            let text_hit = match meta.remove(&id) {
                Some(h) => Some(h),
                None => self
                    .text
                    .record_chunk(&id, best_chunk.get(&id).copied())?
                    .map(|mut h| {
                        h.passage = h.passage.chars().take(240).collect();
                        h
                    }),
            };
            // A vector whose record left the text index (cleared meanwhile) is not shown.
            let Some(mut hit) = text_hit else { continue };
            if let Some(r) = dense_in_range.get(&id) {
                hit.in_range = hit.in_range || *r;
            }
            hit.score = score;
            hits.push(HybridHit {
                keyword: keyword.get(&id).copied(),
                dense: dense.get(&id).copied(),
                rerank: None,
                hit,
            });
        }
        // In range first, then the rest; each group by score.
        hits.sort_by(|a, b| {
            b.hit
                .in_range
                .cmp(&a.hit.in_range)
                .then(b.hit.score.total_cmp(&a.hit.score))
        });
        if rerank {
            match self.reranker {
                Some(r) => self.rerank(r, &q.text, &mut hits)?,
                None => notes
                    .degraded
                    .push("No cross-encoder: results are not re-ranked.".into()),
            }
        }
        hits.truncate(limit);
        Ok((hits, notes))
    }

    fn rerank(&self, r: &dyn Reranker, query: &str, hits: &mut [HybridHit]) -> Result<(), Error> {
        let n = hits.len().min(RERANK_TOP);
        if n == 0 {
            return Ok(());
        }
        let passages: Vec<String> = hits[..n]
            .iter()
            .map(|h| {
                // The whole chunk reads better than the snippet.
                self.text
                    .record_chunk(&h.hit.record_id, None)
                    .ok()
                    .flatten()
                    .map(|c| c.passage)
                    .unwrap_or_else(|| h.hit.passage.clone())
                    .chars()
                    .take(RERANK_CHARS)
                    .collect()
            })
            .collect();
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        let scores = r.score(query, &refs).map_err(backend)?;
        for (h, s) in hits[..n].iter_mut().zip(scores) {
            h.rerank = Some(s);
        }
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
