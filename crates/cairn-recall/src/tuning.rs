//! The retriever's parameters. [`Tuning::default`] is what search uses. Its values were
//! chosen on the LoCoMo dev conversations, except the recency lift, chosen on the real
//! histories' train split (`docs/retrieval-experiments.md`); never on the questions Cairn is
//! checked on (LoCoMo's test conversations, the real histories' held-out split).
use crate::fuse::Fusion;

/// How the retriever finds and scores candidates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tuning {
    /// How the keyword and dense lists are fused.
    pub fusion: Fusion,
    /// The dense side's weight in the fusion (keywords get the rest).
    pub dense_weight: f32,
    /// The `k` of reciprocal-rank fusion.
    pub rrf_k: f32,
    /// Candidates each side (keyword, and each kind of vector) brings.
    pub pool: usize,
    /// Candidates each vector search re-scores from the full vectors (at least the pool ×
    /// the index's oversampling). A speed setting, not a relevance one: the quantized index's
    /// own floor (600) keeps a search of ten results exact on a large graph, and a search of
    /// a hundred fused ones keeps its top ten with fewer (`cairn bench search --candidates`
    /// prints both speed and how much of the top ten stays; docs/figures/search.md).
    pub candidates: usize,
    /// Dense candidates less similar than this are noise, not matches.
    pub min_dense: f32,
    /// How much of the score of the records just before and after a record (in its
    /// session) it gets: a turn is scored on its small window of the conversation.
    pub neighbour_weight: f32,
    /// How much of its session's best score a record gets (the session as a unit).
    pub session_weight: f32,
    /// The best this many candidates bring their neighbours in as candidates too.
    pub expand: usize,
    /// How much a match in a record's context (author, date, framework, project) counts
    /// against a match in its own words, in BM25.
    pub context_boost: f32,
    /// A session's score is the sum of its best this many records' scores (1: its best),
    /// divided by the best session's.
    pub session_top: usize,
    /// How much a record gains when the query's dates (a month, a year, a day) contain it.
    pub date_weight: f32,
    /// The share of the record just before it, when it differs from the one after
    /// (`None`: [`Tuning::neighbour_weight`]). An answer often follows the question that
    /// names its subject.
    pub neighbour_before: Option<f32>,
    /// The share of the record just after it (`None`: [`Tuning::neighbour_weight`]).
    pub neighbour_after: Option<f32>,
    /// Leave function words ("what", "did", "the") out of the keyword query.
    pub stopwords: bool,
    /// How much a record gains when the query names its author (a speaker, a person). Off
    /// by default: no agent's session store names the person who typed a request, so capture
    /// stores every record without an author and the lift could never fire on what it stores
    /// (it only fed on evaluation loaders that set one).
    pub speaker_weight: f32,
    /// How much a record gains for being recent when asked: `recency_weight × ½^(age /
    /// recency_days)`, its age counted from the query's time. Coding work goes on from where
    /// it stopped, so what was done last is more often what a request builds on. Chosen on
    /// the real histories' train split (0.1 to 0.4 at half-lives of 2 to 7 days gave the
    /// same recall there).
    pub recency_weight: f32,
    /// The half-life of [`Tuning::recency_weight`], in days.
    pub recency_days: f32,
    /// How many of the latest records before the query's time join the candidates (of the
    /// query's project when it names one; the asking session left out), whether or not a
    /// search found them: "next", "Start Phase 3" or "what is left?" name nothing a search
    /// can match, and are about what was done last. They are scored like every candidate
    /// (their own score is 0 unless a search found them too), plus [`Tuning::recent_weight`].
    pub recent: usize,
    /// What being among the latest records adds: `recent_weight × (1 − i / recent) × 4 /
    /// (4 + n)` for the `i`-th latest (0: the last one), `n` the query's content words
    /// (function words left out). By order, not age: a day of dense work and a month of
    /// slow work both put what came last first; and a request that says little leans on it
    /// more than a long, specific one.
    pub recent_weight: f32,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            fusion: Fusion::Weighted,
            dense_weight: 0.4,
            rrf_k: 60.0,
            pool: 100,
            candidates: 300,
            min_dense: 0.2,
            neighbour_weight: 0.35,
            session_weight: 0.4,
            expand: 0,
            context_boost: 1.0,
            session_top: 1,
            date_weight: 0.2,
            neighbour_before: None,
            neighbour_after: None,
            stopwords: true,
            speaker_weight: 0.0,
            recency_weight: 0.2,
            recency_days: 7.0,
            recent: 0,
            recent_weight: 0.0,
        }
    }
}

impl Tuning {
    /// For a request asked as a query (what an agent was asked, not words typed into a
    /// search box): search's settings with the latest records among the candidates, lifted by
    /// order ([`Tuning::recent`] 10, [`Tuning::recent_weight`] 1.0, chosen on the real
    /// histories' train split: `docs/retrieval-experiments.md`, run 6). A search keeps
    /// [`Tuning::default`]: words typed to find something should find what matches them, not
    /// what came last.
    pub fn requests() -> Self {
        Self {
            recent: 10,
            recent_weight: 1.0,
            ..Self::default()
        }
    }

    /// Plain hybrid search: each record alone, fused 0.7 dense / 0.3 keyword (what search
    /// did before the retriever had neighbours, sessions and dates).
    pub fn plain() -> Self {
        Self {
            fusion: Fusion::Weighted,
            dense_weight: 0.7,
            pool: 60,
            neighbour_weight: 0.0,
            session_weight: 0.0,
            expand: 0,
            date_weight: 0.0,
            stopwords: false,
            speaker_weight: 0.0,
            recency_weight: 0.0,
            ..Self::default()
        }
    }
}
