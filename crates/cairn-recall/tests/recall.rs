//! The retriever over a real store and keyword index (and the exact vector index): one list
//! across corpora, the re-ranker's order, neighbours, sessions, dates, authors, and hits
//! whose text comes from the store.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use std::sync::{Arc, Mutex};

use cairn_core::ports::{BackendError, Embedder, Reranker, VectorIndex, VectorPoint};
use cairn_core::{Chunk, NewRecord, Outcome, RecordId, VectorKind};
use cairn_index::{TextHit, TextIndex, TextQuery};
use cairn_recall::{Corpus, Hit, Query, Retriever, SearchMode, Tuning};
use cairn_store::Store;

/// One turn to remember.
struct Turn<'a> {
    id: &'a str,
    session: &'a str,
    /// Seconds after the first turn.
    at: i64,
    author: Option<&'a str>,
    chunks: &'a [&'a str],
}

fn turn<'a>(id: &'a str, session: &'a str, at: i64, chunks: &'a [&'a str]) -> Turn<'a> {
    Turn {
        id,
        session,
        at,
        author: None,
        chunks,
    }
}

const T0: i64 = 1_683_500_000; // 7 May 2023

fn record(t: &Turn<'_>) -> (NewRecord, Vec<Chunk>) {
    let rid = RecordId::new(t.id.to_owned());
    let text = t.chunks.join("\n");
    let chunks = if t.chunks.len() > 1 {
        let mut start = 0;
        t.chunks
            .iter()
            .enumerate()
            .map(|(ord, c)| {
                let out = Chunk {
                    record_id: rid.clone(),
                    ord: ord as u32,
                    start,
                    text: (*c).to_owned(),
                };
                start += c.len() as u32 + 1;
                out
            })
            .collect()
    } else {
        Vec::new()
    };
    (
        NewRecord {
            id: rid,
            framework: "codex".into(),
            session_id: t.session.to_owned(),
            project: Some("github.com/acme/shop".into()),
            cwd: None,
            model: None,
            outcome: Outcome::Success,
            started_at: chrono::DateTime::from_timestamp(T0 + t.at, 0).unwrap(),
            ended_at: None,
            request: t.chunks[0].to_owned(),
            author: t.author.map(str::to_owned),
            text,
            content: serde_json::json!({}),
            source: None,
        },
        chunks,
    )
}

struct Memory {
    _dir: tempfile::TempDir,
    store: Store,
    text: Arc<TextIndex>,
}

async fn remember(turns: &[Turn<'_>]) -> Memory {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    let batch: Vec<_> = turns.iter().map(record).collect();
    store.append_records(&batch).await.unwrap();
    let text = Arc::new(TextIndex::open(&dir.path().join("text")).unwrap());
    text.sync(&store).await.unwrap();
    Memory {
        _dir: dir,
        store,
        text,
    }
}

fn records(m: &Memory) -> Corpus {
    Corpus {
        text: m.text.clone(),
        vectors: None,
        keep: None,
        store: Some(m.store.clone()),
        before: None,
        kinds: cairn_recall::CHUNKS,
    }
}

fn retriever(corpora: Vec<Corpus>, reranker: Option<Arc<dyn Reranker>>) -> Retriever {
    Retriever {
        corpora,
        embedder: None,
        reranker,
        tuning: Tuning::default(),
    }
}

fn query(text: &str, mode: SearchMode, rerank: bool) -> Query {
    Query {
        text: TextQuery::new(text, 10),
        mode,
        rerank,
        now: chrono::DateTime::from_timestamp(T0 + 86_400 * 30, 0).unwrap(),
        recent_project: None,
    }
}

fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.hit.record_id.clone()).collect()
}

/// Remembers what it was asked to score; scores by position (reversed when asked).
struct Recording {
    seen: Mutex<Vec<String>>,
    reverse: bool,
}

impl Recording {
    fn new(reverse: bool) -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::new(Vec::new()),
            reverse,
        })
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

/// A bag-of-words embedder over a tiny vocabulary: texts sharing words are similar.
struct Words;
const VOCAB: [&str; 8] = [
    "deploy", "cache", "stale", "weather", "coffee", "naming", "lunch", "hiking",
];
impl Embedder for Words {
    fn model_id(&self) -> &str {
        "words"
    }
    fn dim(&self) -> usize {
        VOCAB.len() + 1
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
        Ok(texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let mut v: Vec<f32> = VOCAB.iter().map(|w| t.matches(w).count() as f32).collect();
                v.push(0.1);
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / n).collect()
            })
            .collect())
    }
}

const FIRST: &str = "opening remarks about the weather and lunch plans";
const MATCHED: &str = "the zanzibar deploy failed because the cache key was stale";
const LAST: &str = "closing thoughts on naming and coffee";

#[tokio::test]
async fn the_reranker_reads_the_chunk_that_matched_read_from_the_store() {
    let m = remember(&[turn("r_multi", "s1", 0, &[FIRST, MATCHED, LAST])]).await;
    let r = Recording::new(false);
    let (hits, notes) = retriever(vec![records(&m)], Some(r.clone()))
        .search(&query("zanzibar", SearchMode::Bm25, true))
        .await
        .unwrap();
    assert_eq!(ids(&hits), ["r_multi"]);
    assert_eq!(hits[0].hit.chunk, 1);
    assert_eq!(hits[0].hit.framework, "codex");
    assert!(notes.reranked);
    assert_eq!(
        r.seen(),
        vec![MATCHED.to_owned()],
        "the whole matched chunk"
    );
}

#[tokio::test]
async fn a_dense_only_hit_gets_its_best_chunk_from_the_store() {
    let m = remember(&[
        turn("r_multi", "s1", 0, &[FIRST, LAST, MATCHED]),
        turn("r_other", "s2", 0, &["hiking hiking in the hills"]),
    ])
    .await;
    let index = Arc::new(cairn_vectors::MemoryIndex::new());
    index.ensure(Words.dim()).unwrap();
    let pieces = [(0u32, FIRST), (1, LAST), (2, MATCHED)];
    let vs = Words
        .embed(&pieces.iter().map(|(_, t)| *t).collect::<Vec<_>>())
        .unwrap();
    let points: Vec<VectorPoint> = pieces
        .iter()
        .zip(vs)
        .map(|((ord, _), v)| VectorPoint {
            owner: "r_multi".into(),
            vector_kind: VectorKind::Chunk,
            ord: *ord,
            vector: v,
            payload: Default::default(),
        })
        .collect();
    index.upsert(&points).unwrap();
    let r = Recording::new(false);
    let corpus = Corpus {
        vectors: Some(index as Arc<dyn VectorIndex>),
        ..records(&m)
    };
    let (hits, notes) = Retriever {
        embedder: Some(Arc::new(Words)),
        ..retriever(vec![corpus], Some(r.clone()))
    }
    .search(&query(
        "redeployment precached unstale",
        SearchMode::Hybrid,
        true,
    ))
    .await
    .unwrap();
    assert_eq!(ids(&hits), ["r_multi"]);
    assert_eq!(hits[0].hit.chunk, 2);
    assert_eq!(hits[0].hit.passage, MATCHED);
    assert!(hits[0].keyword.is_none() && hits[0].dense.is_some());
    assert!(notes.reranked);
    assert_eq!(r.seen(), vec![MATCHED.to_owned()]);
}

/// A vector index that remembers which kinds of vector it was asked to search.
struct Asked {
    inner: cairn_vectors::MemoryIndex,
    kinds: Mutex<Vec<VectorKind>>,
}

impl VectorIndex for Asked {
    fn backend(&self) -> &str {
        self.inner.backend()
    }
    fn ensure(&self, dim: usize) -> Result<(), BackendError> {
        self.inner.ensure(dim)
    }
    fn upsert(&self, points: &[VectorPoint]) -> Result<(), BackendError> {
        self.inner.upsert(points)
    }
    fn delete_owner(&self, owner: &str) -> Result<(), BackendError> {
        self.inner.delete_owner(owner)
    }
    fn search(
        &self,
        kind: VectorKind,
        vector: &[f32],
        filter: &cairn_core::ports::VectorFilter,
        limit: usize,
        exact: bool,
    ) -> Result<Vec<cairn_core::ports::VectorHit>, BackendError> {
        self.kinds.lock().unwrap().push(kind);
        self.inner.search(kind, vector, filter, limit, exact)
    }
    fn count(&self) -> Result<u64, BackendError> {
        self.inner.count()
    }
    fn count_where(&self, filter: &cairn_core::ports::VectorFilter) -> Result<u64, BackendError> {
        self.inner.count_where(filter)
    }
    fn clear(&self) -> Result<(), BackendError> {
        self.inner.clear()
    }
    fn flush(&self) -> Result<(), BackendError> {
        self.inner.flush()
    }
}

#[tokio::test]
async fn each_corpus_searches_only_the_kinds_of_vector_its_documents_have() {
    // Records are embedded as chunks only; an item as its summary, cues and chunks. A record
    // search that also walked the summary and cue graphs would pay for two searches that can
    // find none of its documents.
    let m = remember(&[turn("r_1", "s1", 0, &["deploy the cache before lunch"])]).await;
    let point = |owner: &str, kind, text: &str| VectorPoint {
        owner: owner.into(),
        vector_kind: kind,
        ord: 0,
        vector: Words.embed(&[text]).unwrap().remove(0),
        payload: Default::default(),
    };
    let record_vectors = Arc::new(Asked {
        inner: cairn_vectors::MemoryIndex::new(),
        kinds: Mutex::new(Vec::new()),
    });
    record_vectors.ensure(Words.dim()).unwrap();
    record_vectors
        .upsert(&[point("r_1", VectorKind::Chunk, "deploy cache")])
        .unwrap();
    let item_vectors = Arc::new(Asked {
        inner: cairn_vectors::MemoryIndex::new(),
        kinds: Mutex::new(Vec::new()),
    });
    item_vectors.ensure(Words.dim()).unwrap();
    item_vectors
        .upsert(&[point("i_1", VectorKind::Cue, "stale cache deploy")])
        .unwrap();
    // The items' own keyword index (held documents: no store of their own in the search).
    let items = remember(&[turn("i_1", "items", 0, &["when a cache goes stale"])]).await;
    let corpora = vec![
        Corpus {
            vectors: Some(record_vectors.clone() as Arc<dyn VectorIndex>),
            ..records(&m)
        },
        Corpus::held(
            items.text.clone(),
            Some(item_vectors.clone() as Arc<dyn VectorIndex>),
            cairn_recall::ALL_KINDS,
            None,
        ),
    ];
    let (hits, _) = Retriever {
        embedder: Some(Arc::new(Words)),
        ..retriever(corpora, None)
    }
    .search(&query("stale cache deploy", SearchMode::Dense, false))
    .await
    .unwrap();
    assert_eq!(*record_vectors.kinds.lock().unwrap(), [VectorKind::Chunk]);
    let mut asked = item_vectors.kinds.lock().unwrap().clone();
    asked.sort_by_key(|k| k.as_str());
    assert_eq!(
        asked,
        [VectorKind::Chunk, VectorKind::Cue, VectorKind::Summary]
    );
    // The item is found by its cue, the record by its chunk.
    let mut found: Vec<(usize, String)> = hits
        .iter()
        .map(|h| (h.corpus, h.hit.record_id.clone()))
        .collect();
    found.sort();
    assert_eq!(found, [(0, "r_1".to_owned()), (1, "i_1".to_owned())]);
}

#[tokio::test]
async fn corpora_are_ranked_as_one_list_and_the_reranker_decides_it() {
    let m = remember(&[
        turn("r_1", "s1", 0, &["kestrel kestrel kestrel migration"]),
        turn("r_2", "s2", 0, &["kestrel migration notes from monday"]),
        turn(
            "r_3",
            "s3",
            0,
            &["a long unrelated discussion that mentions kestrel once among many other words"],
        ),
    ])
    .await;
    let note_docs = remember(&[
        turn("n_1", "notes", 0, &["kestrel kestrel runbook"]),
        turn(
            "n_2",
            "notes",
            1,
            &["the kestrel of other matters and other words entirely"],
        ),
    ])
    .await;
    let corpora = vec![
        records(&m),
        Corpus {
            text: note_docs.text.clone(),
            vectors: None,
            keep: Some(Arc::new(|_: &TextHit| true)),
            store: None,
            before: None,
            kinds: cairn_recall::CHUNKS,
        },
    ];
    let q = query("kestrel", SearchMode::Bm25, true);
    let (fused, notes) = retriever(corpora.clone(), None).search(&q).await.unwrap();
    assert!(!notes.reranked);
    assert!(notes.degraded.iter().any(|d| d.contains("not re-ranked")));
    assert_eq!(fused.len(), 5);
    for h in &fused {
        assert_eq!(
            h.corpus,
            usize::from(h.hit.record_id.starts_with("n_")),
            "{}",
            h.hit.record_id
        );
    }
    let kinds: String = fused
        .iter()
        .map(|h| if h.corpus == 0 { 'r' } else { 'n' })
        .collect();
    assert!(kinds.contains("rn") || kinds.contains("nr"), "{kinds}");
    let reverse = Recording::new(true);
    let (reranked, notes) = retriever(corpora.clone(), Some(reverse.clone()))
        .search(&q)
        .await
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
    let (unranked, notes) = retriever(corpora, Some(reverse))
        .search(&query("kestrel", SearchMode::Bm25, false))
        .await
        .unwrap();
    assert!(!notes.reranked);
    assert_eq!(ids(&unranked), ids(&fused));
}

#[tokio::test]
async fn a_keep_test_drops_candidates_and_a_failing_reranker_keeps_the_fused_order() {
    let m = remember(&[
        turn("r_1", "s1", 0, &["osprey nest"]),
        turn("r_2", "s2", 0, &["osprey osprey flight"]),
    ])
    .await;
    let keep_first = Corpus {
        keep: Some(Arc::new(|h: &TextHit| h.record_id == "r_1")),
        ..records(&m)
    };
    let (hits, _) = retriever(vec![keep_first], None)
        .search(&query("osprey", SearchMode::Bm25, false))
        .await
        .unwrap();
    assert_eq!(ids(&hits), ["r_1"]);

    struct Failing;
    impl Reranker for Failing {
        fn model_id(&self) -> &str {
            "failing"
        }
        fn score(&self, _q: &str, _p: &[&str]) -> Result<Vec<f32>, BackendError> {
            Err(BackendError::new(
                cairn_core::ports::BackendErrorKind::Unavailable,
                "the model file is gone",
            ))
        }
    }
    let (plain, _) = retriever(vec![records(&m)], None)
        .search(&query("osprey", SearchMode::Bm25, false))
        .await
        .unwrap();
    let (hits, notes) = retriever(vec![records(&m)], Some(Arc::new(Failing)))
        .search(&query("osprey", SearchMode::Bm25, true))
        .await
        .unwrap();
    assert!(!notes.reranked);
    assert!(
        notes
            .degraded
            .iter()
            .any(|d| d.contains("the model file is gone")),
        "{notes:?}"
    );
    assert_eq!(ids(&hits), ids(&plain));
}

#[tokio::test]
async fn a_turn_is_found_through_its_neighbour_and_scored_with_its_session() {
    // The answer shares no word with the question; the turn before it does.
    let m = remember(&[
        turn(
            "a1",
            "trip",
            0,
            &["how was the walrus festival last weekend"],
        ),
        turn(
            "a2",
            "trip",
            1,
            &["wonderful, I finally saw the northern lights"],
        ),
        turn(
            "b1",
            "other",
            0,
            &["bought groceries and cleaned the garage"],
        ),
        turn("b2", "other", 1, &["nothing else happened this week"]),
    ])
    .await;
    let q = query("walrus festival", SearchMode::Bm25, false);
    let (alone, _) = Retriever {
        tuning: Tuning::plain(),
        ..retriever(vec![records(&m)], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert_eq!(ids(&alone), ["a1"], "keywords alone find only the question");
    // By default a record is scored with the neighbours search found too, and none is
    // brought in; asked to, the best candidates bring their neighbours.
    let (hits, _) = retriever(vec![records(&m)], None).search(&q).await.unwrap();
    assert_eq!(ids(&hits), ["a1"]);
    let (hits, _) = Retriever {
        tuning: Tuning {
            expand: 30,
            ..Tuning::default()
        },
        ..retriever(vec![records(&m)], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert_eq!(ids(&hits), ["a1", "a2"], "its neighbour comes with it");
    assert!(hits[1].keyword.is_none());
    assert_eq!(
        hits[1].hit.passage,
        "wonderful, I finally saw the northern lights"
    );
    assert_eq!(hits[1].hit.session_id, "trip");
}

#[tokio::test]
async fn the_author_and_a_date_in_the_query_lift_the_right_turns() {
    let m = remember(&[
        Turn {
            author: Some("Caroline"),
            ..turn("c1", "s1", 0, &["I went to a pottery class"])
        },
        Turn {
            author: Some("Melanie"),
            ..turn("m1", "s2", 0, &["I went to a pottery class too"])
        },
        // Two months later.
        Turn {
            author: Some("Melanie"),
            ..turn("m2", "s3", 86_400 * 60, &["another pottery class"])
        },
    ])
    .await;
    let (hits, _) = retriever(vec![records(&m)], None)
        .search(&query(
            "What did Caroline do at the pottery class?",
            SearchMode::Bm25,
            false,
        ))
        .await
        .unwrap();
    assert_eq!(hits[0].hit.record_id, "c1", "{:?}", ids(&hits));
    let (hits, _) = retriever(vec![records(&m)], None)
        .search(&query(
            "pottery class in July 2023",
            SearchMode::Bm25,
            false,
        ))
        .await
        .unwrap();
    assert_eq!(hits[0].hit.record_id, "m2", "{:?}", ids(&hits));
}

#[tokio::test]
async fn the_speaker_a_query_names_and_its_content_words_can_be_weighted() {
    let m = remember(&[
        Turn {
            author: Some("Caroline"),
            ..turn("c1", "s1", 0, &["my sister loves the blue lake"])
        },
        Turn {
            author: Some("Melanie"),
            ..turn(
                "m1",
                "s2",
                0,
                &["what did you do at the lake, what did you do there"],
            )
        },
    ])
    .await;
    let q = query(
        "What did Caroline see at the lake?",
        SearchMode::Bm25,
        false,
    );
    // Function words favour the turn that repeats them.
    let (hits, _) = Retriever {
        tuning: Tuning {
            context_boost: 0.0,
            ..Tuning::plain()
        },
        ..retriever(vec![records(&m)], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert_eq!(hits[0].hit.record_id, "m1", "{:?}", ids(&hits));
    // Without them, and with the named speaker lifted, Caroline's turn leads.
    for tuning in [
        Tuning {
            context_boost: 0.0,
            stopwords: true,
            ..Tuning::plain()
        },
        Tuning {
            context_boost: 0.0,
            speaker_weight: 1.5,
            ..Tuning::plain()
        },
    ] {
        let (hits, _) = Retriever {
            tuning: tuning.clone(),
            ..retriever(vec![records(&m)], None)
        }
        .search(&q)
        .await
        .unwrap();
        assert_eq!(hits[0].hit.record_id, "c1", "{tuning:?}: {:?}", ids(&hits));
    }
}

#[tokio::test]
async fn a_record_gone_from_the_store_is_never_a_hit() {
    let m = remember(&[
        turn("r_1", "s1", 0, &["pelican pelican"]),
        turn("r_2", "s2", 0, &["pelican"]),
    ])
    .await;
    // The keyword index still has both; the store forgets them (Clear).
    m.store.clear(false).await.unwrap();
    let (hits, _) = retriever(vec![records(&m)], None)
        .search(&query("pelican", SearchMode::Bm25, false))
        .await
        .unwrap();
    assert!(hits.is_empty(), "{:?}", ids(&hits));
}

#[tokio::test]
async fn a_record_is_lifted_by_its_neighbours_and_its_session() {
    // Two equal turns; only one sits next to a turn that also matches the question.
    let m = remember(&[
        turn("a_kayak", "lake", 0, &["we rented a kayak"]),
        turn("a_other", "lake", 1, &["then we had groceries delivered"]),
        turn("b_trip", "river", 0, &["planning the weekend trip"]),
        turn("b_kayak", "river", 1, &["we rented a kayak"]),
    ])
    .await;
    let q = query("kayak trip", SearchMode::Bm25, false);
    let (plain, _) = Retriever {
        tuning: Tuning::plain(),
        ..retriever(vec![records(&m)], None)
    }
    .search(&q)
    .await
    .unwrap();
    let pos = |hits: &[Hit], id: &str| hits.iter().position(|h| h.hit.record_id == id);
    assert!(
        pos(&plain, "a_kayak") < pos(&plain, "b_kayak"),
        "alone, the two turns tie: {:?}",
        ids(&plain)
    );
    let (hits, _) = retriever(vec![records(&m)], None).search(&q).await.unwrap();
    assert!(
        pos(&hits, "b_kayak") < pos(&hits, "a_kayak"),
        "in its conversation, the turn next to the trip comes first: {:?}",
        ids(&hits)
    );
}

/// A corpus's `before` cuts later records out of the searches themselves: with a pool of two
/// and three later records matching better, the one earlier record is still found, where a
/// keep test alone (applied after the search) loses it. Passages of kept hits still show
/// the query's words.
#[tokio::test]
async fn before_cuts_later_records_in_the_search_so_they_do_not_fill_its_pool() {
    let m = remember(&[
        turn("r_early", "s1", 0, &["kestrel port 7311 in the config"]),
        turn("r_late1", "s2", 100, &["kestrel kestrel port"]),
        turn("r_late2", "s3", 200, &["kestrel kestrel port"]),
        turn("r_late3", "s4", 300, &["kestrel kestrel port"]),
    ])
    .await;
    let cut = chrono::DateTime::from_timestamp(T0 + 50, 0).unwrap();
    let small = Tuning {
        pool: 2,
        ..Tuning::default()
    };
    let mut q = query("kestrel port", SearchMode::Bm25, false);
    q.text.limit = 2;
    let keep_only = Corpus {
        keep: Some(Arc::new(move |h: &TextHit| h.timestamp < cut)),
        ..records(&m)
    };
    let (hits, _) = Retriever {
        tuning: small.clone(),
        ..retriever(vec![keep_only], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert!(hits.is_empty(), "{:?}", ids(&hits));
    let cut_in_search = Corpus {
        keep: Some(Arc::new(move |h: &TextHit| h.timestamp < cut)),
        before: Some(cut),
        ..records(&m)
    };
    let (hits, _) = Retriever {
        tuning: small,
        ..retriever(vec![cut_in_search], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert_eq!(ids(&hits), ["r_early"]);
    assert!(
        hits[0].hit.passage.contains("kestrel port 7311"),
        "{hits:?}"
    );
}

#[tokio::test]
async fn of_two_equal_matches_the_more_recent_leads_by_default() {
    // The same words two months apart; the request comes a day after the later one.
    let m = remember(&[
        turn("a_old", "s1", 0, &["the flaky upload test times out on CI"]),
        turn(
            "b_new",
            "s2",
            86_400 * 60,
            &["the flaky upload test times out on CI"],
        ),
    ])
    .await;
    let q = Query {
        now: chrono::DateTime::from_timestamp(T0 + 86_400 * 61, 0).unwrap(),
        ..query("flaky upload test", SearchMode::Bm25, false)
    };
    let (hits, _) = retriever(vec![records(&m)], None).search(&q).await.unwrap();
    assert_eq!(ids(&hits), ["b_new", "a_old"]);
    assert!(hits[0].hit.score > hits[1].hit.score, "{:?}", ids(&hits));
    // Without the lift they tie, and the order is the ids'.
    let (hits, _) = Retriever {
        tuning: Tuning {
            recency_weight: 0.0,
            ..Tuning::default()
        },
        ..retriever(vec![records(&m)], None)
    }
    .search(&q)
    .await
    .unwrap();
    assert_eq!(ids(&hits), ["a_old", "b_new"]);
}

#[tokio::test]
async fn the_latest_records_join_the_candidates_of_a_request_that_names_nothing() {
    // "next", asked in session s4 on day 30: no search matches it; what it is about is what
    // was done last in the other sessions.
    let day = 86_400;
    let m = remember(&[
        turn("a_first", "s1", 0, &["set up the orders table"]),
        turn("b_middle", "s2", day * 29, &["migrated orders to postgres"]),
        turn("c_last", "s3", day * 29 + 60, &["phase one done, CI green"]),
        turn("d_own", "s4", day * 29 + 600, &["started phase two"]),
        turn("e_after", "s5", day * 30 + 100, &["phase two merged"]),
    ])
    .await;
    let now = chrono::DateTime::from_timestamp(T0 + day * 30, 0).unwrap();
    let mut q = Query {
        now,
        ..query("next", SearchMode::Bm25, false)
    };
    q.text.exclude_session = Some("s4".into());
    let with = |recent: usize, recent_weight: f32| Tuning {
        recent,
        recent_weight,
        ..Tuning::default()
    };
    let search = |tuning: Tuning, corpus: Corpus, q: Query| async move {
        Retriever {
            tuning,
            ..retriever(vec![corpus], None)
        }
        .search(&q)
        .await
        .unwrap()
        .0
    };
    let hits = search(with(0, 0.0), records(&m), q.clone()).await;
    assert!(hits.is_empty(), "{:?}", ids(&hits));
    // The two latest before the query's time, the asking session left out.
    let hits = search(with(2, 0.0), records(&m), q.clone()).await;
    assert_eq!(ids(&hits), ["c_last", "b_middle"]);
    // A corpus with its own test (the asking session, the time) holds them to it.
    let tested = Corpus {
        keep: Some(Arc::new(move |h: &TextHit| {
            h.session_id != "s4" && h.timestamp < now
        })),
        before: Some(now),
        ..records(&m)
    };
    let mut unfiltered = q.clone();
    unfiltered.text.exclude_session = None;
    let hits = search(with(2, 0.0), tested, unfiltered).await;
    assert_eq!(ids(&hits), ["c_last", "b_middle"]);
    // Being among them lifts by order, the last one most, and more for a request that says
    // little than for a long, specific one.
    let plain = search(with(2, 0.0), records(&m), q.clone()).await;
    let lifted = search(with(2, 0.5), records(&m), q.clone()).await;
    assert_eq!(ids(&lifted), ["c_last", "b_middle"]);
    let gain = |i: usize| lifted[i].hit.score - plain[i].hit.score;
    // "next": one content word, 0.5 × 4/5 for the last, half that for the one before.
    assert!((gain(0) - 0.4).abs() < 1e-4, "{}", gain(0));
    assert!((gain(1) - 0.2).abs() < 1e-4, "{}", gain(1));
    let mut long = q.clone();
    long.text.text = "please carry on with the rollout plan for the billing service and \
                      its dashboards next"
        .into();
    let long_plain = search(with(2, 0.0), records(&m), long.clone()).await;
    let long_lifted = search(with(2, 0.5), records(&m), long).await;
    let long_gain = long_lifted[0].hit.score - long_plain[0].hit.score;
    assert!(long_gain > 0.0 && long_gain < 0.2, "{long_gain}");
}
