//! `cairn eval locomo`: retrieval recall on a LoCoMo-format file. Each conversation becomes
//! the whole memory of one user (each dialog turn a record, dated by its session); every
//! question is asked; recall-any and recall-all of its evidence dialog ids are reported at
//! k = 1, 5, 10, per category and overall, with raw and audit-corrected evidence, for each
//! search setup, with the latency of each search (query embedding included). Category 5 (no
//! answer exists) is reported apart.
//!
//! It measures the product: each dialog turn becomes a record the way capture makes one (no
//! author, since no agent's store names a person; the session's date as its time, the
//! session as its session), the
//! store, the keyword index and the embedded Qdrant index (quantized, as shipped) are filled
//! by the service's own indexing, and every question goes through `cairn-recall`'s
//! retriever. The eval does no retrieval work of its own.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use cairn_core::ports::{Embedder, Reranker, VectorIndex};
use cairn_core::{NewRecord, Outcome, RecordId};
use cairn_index::{TextIndex, TextQuery};
use cairn_recall::{Corpus, Query, Retriever, SearchMode, Tuning};
use cairn_store::Store;

/// The k values reported.
pub const KS: [usize; 3] = [1, 5, 10];

/// One search setup: its name, signals, parameters and whether it re-ranks.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Its name in the report (`cairn` is what search uses by default).
    pub name: String,
    /// Signals.
    pub mode: SearchMode,
    /// Parameters.
    pub tuning: Tuning,
    /// Re-rank with the cross-encoder.
    pub rerank: bool,
}

/// The setups compared by default: each signal alone and plainly fused (every record on its
/// own), then the retriever as search uses it, with and without the cross-encoder.
pub fn default_setups() -> Vec<Setup> {
    let plain = |name: &str, mode| Setup {
        name: name.into(),
        mode,
        tuning: Tuning::plain(),
        rerank: false,
    };
    vec![
        plain("bm25", SearchMode::Bm25),
        plain("dense", SearchMode::Dense),
        plain("hybrid", SearchMode::Hybrid),
        Setup {
            name: "cairn".into(),
            mode: SearchMode::Hybrid,
            tuning: Tuning::default(),
            rerank: false,
        },
        Setup {
            name: "cairn+rerank".into(),
            mode: SearchMode::Hybrid,
            tuning: Tuning::default(),
            rerank: true,
        },
    ]
}

/// A setup from `--tuning '{"dense_weight": 0.4}'` (fields of [`Tuning`] over its default;
/// `"mode"` and `"rerank"` may be given too). For experiments.
pub fn parse_setup(json: &str) -> anyhow::Result<Setup> {
    let mut v: serde_json::Value = serde_json::from_str(json)
        .with_context(|| format!("--tuning {json:?} is not a JSON object"))?;
    let obj = v
        .as_object_mut()
        .with_context(|| format!("--tuning {json:?} is not a JSON object"))?;
    let mode = match obj.remove("mode") {
        Some(m) => m
            .as_str()
            .unwrap_or_default()
            .parse::<SearchMode>()
            .map_err(|e| anyhow::anyhow!(e))?,
        None => SearchMode::Hybrid,
    };
    let rerank = obj
        .remove("rerank")
        .and_then(|r| r.as_bool())
        .unwrap_or(false);
    let tuning: Tuning = serde_json::from_value(v)
        .with_context(|| format!("--tuning {json:?}: not a field of the retriever's tuning"))?;
    Ok(Setup {
        name: format!("tune {json}"),
        mode,
        tuning,
        rerank,
    })
}

/// One row of the result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// Search setup.
    pub mode: String,
    /// Results considered.
    pub k: usize,
    /// `1`…`5`, or `all` (categories 1–4).
    pub category: String,
    /// `raw` or `audited` evidence.
    pub evidence: String,
    /// Share of questions with at least one evidence turn in the top k.
    pub recall_any: f64,
    /// Share of questions with every evidence turn in the top k.
    pub recall_all: f64,
    /// Questions counted.
    pub n: usize,
    /// Median time of one search of this setup, query embedding included (ms).
    pub p50_ms: f64,
    /// 95th percentile of the same (ms).
    pub p95_ms: f64,
}

/// The models the dense setups need, when they are available.
pub struct Models {
    /// Query and turn embeddings.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Cross-encoder.
    pub reranker: Option<Arc<dyn Reranker>>,
    /// The embedder's cache (see `embed_cache`), when there is an embedder.
    pub cache: Option<Arc<crate::embed_cache::CachedEmbedder>>,
}

impl Models {
    /// Says on standard error how many texts the cache answered and how many were embedded.
    pub fn say_cache(&self) {
        if let Some(c) = &self.cache {
            let (found, embedded) = c.counts();
            eprintln!(
                "embeddings: {found} texts read from the cache ({}), {embedded} embedded",
                c.path().display()
            );
        }
    }
}

fn category_name(c: &str) -> &'static str {
    match c {
        "1" => "multi-hop",
        "2" => "temporal",
        "3" => "open-domain",
        "4" => "single-hop",
        "5" => "adversarial",
        _ => "all (1-4)",
    }
}

/// Evidence ids as written (`D1:3`, sometimes `D8:6; D9:17` in one string).
pub(crate) fn evidence_ids(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in v.as_array().into_iter().flatten() {
        if let Some(s) = e.as_str() {
            for part in s
                .split([';', ',', ' '])
                .map(str::trim)
                .filter(|p| p.starts_with('D'))
            {
                out.push(part.to_owned());
            }
        }
    }
    out
}

/// The audit's corrected evidence per (conversation, question index), when an audit file is
/// given: a JSON list of `{sample_id, qa_index, correct_evidence}`.
pub(crate) fn audit_corrections(
    audit: Option<&Path>,
) -> anyhow::Result<HashMap<(String, usize), Vec<String>>> {
    let mut corrections = HashMap::new();
    if let Some(a) = audit {
        let v: serde_json::Value = serde_json::from_str(
            &fs_err::read_to_string(a).with_context(|| format!("cannot read {}", a.display()))?,
        )
        .with_context(|| format!("{} is not JSON", a.display()))?;
        for c in v.as_array().into_iter().flatten() {
            if let (Some(id), Some(i)) = (c["sample_id"].as_str(), c["qa_index"].as_u64()) {
                corrections.insert(
                    (id.to_owned(), i as usize),
                    evidence_ids(&c["correct_evidence"]),
                );
            }
        }
    }
    Ok(corrections)
}

/// `1:56 pm on 8 May, 2023` → a UTC time.
pub(crate) fn session_time(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let s = s.trim().to_uppercase();
    chrono::NaiveDateTime::parse_from_str(&s, "%I:%M %p ON %d %B, %Y")
        .ok()
        .map(|t| t.and_utc())
}

#[derive(Default)]
struct Tally {
    any: usize,
    all: usize,
    n: usize,
}

pub(crate) fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One conversation as Cairn holds it: the store, the keyword index and the vectors, filled
/// by the service's own indexing, in a folder of its own.
struct Memory {
    store: Store,
    text: Arc<TextIndex>,
    vectors: Option<Arc<dyn VectorIndex>>,
    /// Record id → dialog id.
    dia_of: HashMap<String, String>,
    /// The time of asking: the day after the last session.
    now: chrono::DateTime<chrono::Utc>,
    /// Last, so it is removed after the indexes in it are closed (fields drop in order).
    _dir: tempfile::TempDir,
}

/// Records of a LoCoMo conversation, each record's dialog id, and its last session's time.
pub(crate) type LocomoRecords = (
    Vec<(NewRecord, Vec<cairn_core::Chunk>)>,
    HashMap<String, String>,
    chrono::DateTime<chrono::Utc>,
);

/// One LoCoMo conversation's turns as records, the way capture makes them (no author, as
/// capture stores none; the session's date as the time), with each record's dialog id, and the time
/// of its last session. Only the first `sessions` sessions when given.
pub(crate) fn locomo_records(
    sample: &str,
    c: &serde_json::Value,
    sessions: Option<usize>,
) -> LocomoRecords {
    let mut dia_of: HashMap<String, String> = HashMap::new();
    let mut batch = Vec::new();
    let mut last = chrono::DateTime::<chrono::Utc>::default();
    for n in 1..=sessions.unwrap_or(usize::MAX) {
        let Some(turns) = c[format!("session_{n}")].as_array() else {
            break;
        };
        let when = c[format!("session_{n}_date_time")]
            .as_str()
            .and_then(session_time)
            .unwrap_or_default();
        last = last.max(when);
        for (i, t) in turns.iter().enumerate() {
            let Some(dia) = t["dia_id"].as_str() else {
                continue;
            };
            // The turn's words; a shared photo is described by its caption (never by the
            // image-search query, which leaks answers).
            let mut text = t["text"].as_str().unwrap_or("").to_owned();
            if let Some(cap) = t["blip_caption"].as_str() {
                text.push_str(&format!(" [shares a photo: {cap}]"));
            }
            let id = RecordId::derive("locomo", sample, dia);
            dia_of.insert(id.to_string(), dia.to_owned());
            batch.push((
                NewRecord {
                    id,
                    framework: "locomo".into(),
                    session_id: format!("{sample}:session_{n}"),
                    project: Some(sample.to_owned()),
                    cwd: None,
                    model: None,
                    outcome: Outcome::Success,
                    started_at: when + chrono::Duration::seconds(i as i64),
                    ended_at: None,
                    request: text.clone(),
                    author: None,
                    text,
                    content: serde_json::json!({}),
                    source: None,
                },
                Vec::new(),
            ));
        }
    }
    (batch, dia_of, last)
}

/// Turns one LoCoMo conversation into records the way capture makes them and indexes them
/// the way the service does.
async fn remember(sample: &str, c: &serde_json::Value, models: &Models) -> anyhow::Result<Memory> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("cairn.db")).await?;
    let (batch, dia_of, last) = locomo_records(sample, c, None);
    store.append_records(&batch).await?;
    let (text, vectors) = index_store(&store, dir.path(), models).await?;
    Ok(Memory {
        _dir: dir,
        store,
        text,
        vectors,
        dia_of,
        now: last + chrono::Duration::days(1),
    })
}

/// Indexes a store the way the service does, in folders under `dir`: the keyword index, and
/// with an embedder the embedded vector index with its HNSW graph built (what the
/// maintenance worker does when idle).
pub(crate) async fn index_store(
    store: &Store,
    dir: &Path,
    models: &Models,
) -> anyhow::Result<(Arc<TextIndex>, Option<Arc<dyn VectorIndex>>)> {
    let text = Arc::new(TextIndex::open(&dir.join("text"))?);
    text.sync(store).await?;
    let vectors = match &models.embedder {
        Some(e) => {
            let index = Arc::new(
                cairn_vectors::EmbeddedIndex::create(&dir.join("vectors"))
                    .map_err(|e| anyhow::anyhow!(e.message))?,
            );
            let dense = cairn_api::dense::Dense {
                embedder: e.clone(),
                index: index.clone(),
                sidecar: None,
            };
            dense
                .sync(store, &cairn_api::WorkerBoard::default())
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let i = index.clone();
            tokio::task::spawn_blocking(move || i.optimize())
                .await?
                .map_err(|e| anyhow::anyhow!(e.message))?;
            Some(index as Arc<dyn VectorIndex>)
        }
        None => None,
    };
    Ok((text, vectors))
}

/// Runs the evaluation over `setups` and prints it (a table, or JSON rows).
pub async fn locomo(
    file: &Path,
    audit: Option<&Path>,
    json: bool,
    models: &Models,
    setups: Vec<Setup>,
) -> anyhow::Result<Vec<Row>> {
    let data: serde_json::Value = serde_json::from_str(
        &fs_err::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not JSON", file.display()))?;
    let Some(convs) = data.as_array() else {
        bail!(
            "{} is not a LoCoMo file: expected a list of conversations",
            file.display()
        )
    };
    let corrections = audit_corrections(audit)?;
    let setups = runnable(setups, models);
    let order: Vec<String> = setups.iter().map(|s| s.name.clone()).collect();
    // (setup, k, category, evidence kind) → tally
    let mut tallies: BTreeMap<(String, usize, String, String), Tally> = BTreeMap::new();
    let mut times: HashMap<String, Vec<f64>> = HashMap::new();
    let bar = crate::progress::bar(
        convs
            .iter()
            .map(|c| c["qa"].as_array().map_or(0, Vec::len) as u64)
            .sum(),
        "questions",
    );
    for conv in convs {
        let sample = conv["sample_id"]
            .as_str()
            .unwrap_or("conversation")
            .to_owned();
        bar.set_message(format!("({sample}: indexing)"));
        let memory = remember(&sample, &conv["conversation"], models).await?;
        bar.set_message(format!("({sample})"));
        for (qi, qa) in conv["qa"].as_array().into_iter().flatten().enumerate() {
            bar.inc(1);
            let Some(question) = qa["question"].as_str() else {
                continue;
            };
            let category = qa["category"]
                .as_u64()
                .map(|c| c.to_string())
                .unwrap_or_default();
            let raw = evidence_ids(&qa["evidence"]);
            let audited = corrections
                .get(&(sample.clone(), qi))
                .cloned()
                .unwrap_or_else(|| raw.clone());
            if raw.is_empty() && audited.is_empty() {
                continue;
            }
            for setup in &setups {
                let retriever = Retriever {
                    corpora: vec![Corpus {
                        text: memory.text.clone(),
                        vectors: memory.vectors.clone(),
                        keep: None,
                        store: Some(memory.store.clone()),
                        before: None,
                        kinds: cairn_recall::CHUNKS,
                    }],
                    embedder: models.embedder.clone(),
                    reranker: models.reranker.clone(),
                    tuning: setup.tuning.clone(),
                };
                let started = Instant::now();
                let (hits, _) = retriever
                    .search(&Query {
                        text: TextQuery::new(question, 10),
                        mode: setup.mode,
                        rerank: setup.rerank,
                        now: memory.now,
                        recent_project: None,
                    })
                    .await?;
                times
                    .entry(setup.name.clone())
                    .or_default()
                    .push(started.elapsed().as_secs_f64() * 1000.0);
                let ranked: Vec<&str> = hits
                    .iter()
                    .filter_map(|h| memory.dia_of.get(&h.hit.record_id).map(String::as_str))
                    .collect();
                for k in KS {
                    let top: HashSet<&str> = ranked.iter().take(k).copied().collect();
                    for (kind, ev) in [("raw", &raw), ("audited", &audited)] {
                        if ev.is_empty() {
                            continue;
                        }
                        let any = ev.iter().any(|e| top.contains(e.as_str()));
                        let all = ev.iter().all(|e| top.contains(e.as_str()));
                        let mut cats = vec![category.clone()];
                        if category != "5" {
                            cats.push("all".into());
                        }
                        for cat in cats {
                            let t = tallies
                                .entry((setup.name.clone(), k, cat, kind.to_owned()))
                                .or_default();
                            t.n += 1;
                            t.any += usize::from(any);
                            t.all += usize::from(all);
                        }
                    }
                }
            }
        }
    }
    bar.finish_and_clear();
    let latency: HashMap<String, (f64, f64)> = times
        .into_iter()
        .map(|(name, mut v)| {
            v.sort_by(f64::total_cmp);
            (name, (pct(&v, 0.5), pct(&v, 0.95)))
        })
        .collect();
    let rows: Vec<Row> = tallies
        .into_iter()
        .map(|((mode, k, category, evidence), t)| {
            let (p50_ms, p95_ms) = latency.get(&mode).copied().unwrap_or_default();
            Row {
                mode,
                k,
                category,
                evidence,
                recall_any: if t.n == 0 {
                    0.0
                } else {
                    t.any as f64 / t.n as f64
                },
                recall_all: if t.n == 0 {
                    0.0
                } else {
                    t.all as f64 / t.n as f64
                },
                n: t.n,
                p50_ms,
                p95_ms,
            }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_table(&rows, &order);
    }
    Ok(rows)
}

fn print_table(rows: &[Row], order: &[String]) {
    println!("LoCoMo retrieval recall (any / all evidence turns in the top k)\n");
    for evidence in ["raw", "audited"] {
        println!("{evidence} evidence:");
        println!(
            "{:<15} {:<20} {:>15} {:>15} {:>15} {:>6} {:>17}",
            "mode", "category", "k=1", "k=5", "k=10", "n", "p50 / p95 ms"
        );
        let mut keys: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r.evidence == evidence)
            .map(|r| (r.mode.as_str(), r.category.as_str()))
            .collect();
        keys.sort_by_key(|(m, c)| {
            (
                order.iter().position(|s| s == m),
                if *c == "all" {
                    "0".to_owned()
                } else {
                    (*c).to_owned()
                },
            )
        });
        keys.dedup();
        for (mode, cat) in keys {
            let cell = |k: usize| {
                rows.iter()
                    .find(|r| {
                        r.evidence == evidence && r.mode == mode && r.category == cat && r.k == k
                    })
                    .map(|r| format!("{:.3} / {:.3}", r.recall_any, r.recall_all))
                    .unwrap_or_default()
            };
            let row = rows
                .iter()
                .find(|r| r.evidence == evidence && r.mode == mode && r.category == cat);
            let n = row.map_or(0, |r| r.n);
            let latency = row.map_or(String::new(), |r| {
                format!("{:.1} / {:.1}", r.p50_ms, r.p95_ms)
            });
            println!(
                "{:<15} {:<20} {:>15} {:>15} {:>15} {:>6} {:>17}",
                mode,
                if cat == "all" {
                    category_name(cat).to_owned()
                } else {
                    format!("{cat} {}", category_name(cat))
                },
                cell(1),
                cell(5),
                cell(10),
                n,
                latency
            );
        }
        println!();
    }
}

/// `cairn eval locomo`: loads the models the settings name (the same ones search uses) and
/// runs [`locomo`] over the default setups, or over the `--tuning` experiments given.
pub async fn run_locomo(
    paths: &cairn_config::Paths,
    settings: &cairn_config::Settings,
    file: &Path,
    audit: Option<&Path>,
    json: bool,
    tunings: &[String],
) -> anyhow::Result<()> {
    let setups = setups_from(tunings, default_setups)?;
    let models = eval_models(paths, settings).await;
    locomo(file, audit, json, &models, setups).await?;
    models.say_cache();
    Ok(())
}

/// The setups of `--tuning` flags, or `default` when there are none.
pub(crate) fn setups_from(
    tunings: &[String],
    default: fn() -> Vec<Setup>,
) -> anyhow::Result<Vec<Setup>> {
    if tunings.is_empty() {
        return Ok(default());
    }
    tunings.iter().map(|t| parse_setup(t)).collect()
}

/// The models the settings name, with a note on standard error for each one missing.
pub(crate) async fn eval_models(
    paths: &cairn_config::Paths,
    settings: &cairn_config::Settings,
) -> Models {
    let (embedder, reranker, warnings) = cairn_api::models_for_eval(paths, settings).await;
    for w in &warnings {
        eprintln!("note: {w}");
    }
    // Vectors are kept between runs (see `embed_cache`): a second run over the same corpus
    // does not embed it again.
    let cache = embedder.map(|e| {
        Arc::new(crate::embed_cache::CachedEmbedder::open(
            e,
            &paths.data.join("eval-embeddings"),
        ))
    });
    Models {
        embedder: cache.clone().map(|c| c as Arc<dyn Embedder>),
        reranker,
        cache,
    }
}

/// The setups whose models are available (each one left out is said on standard error).
pub(crate) fn runnable(setups: Vec<Setup>, models: &Models) -> Vec<Setup> {
    setups
        .into_iter()
        .filter(|s| {
            let ok = (s.mode == SearchMode::Bm25 || models.embedder.is_some())
                && (!s.rerank || models.reranker.is_some());
            if !ok {
                eprintln!("skipping {}: its model is not available", s.name);
            }
            ok
        })
        .collect()
}
