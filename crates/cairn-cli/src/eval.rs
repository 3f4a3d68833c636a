//! `cairn eval locomo`: retrieval recall on a LoCoMo-format file. Each conversation becomes
//! the whole memory of one user (each dialog turn a record, dated by its session); every
//! question is asked; recall-any and recall-all of its evidence dialog ids are reported at
//! k = 1, 5, 10, per category and overall, with raw and audit-corrected evidence, for each
//! search mode. Category 5 (no answer exists) is reported apart.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, bail};
use cairn_core::ports::{Embedder, PointPayload, Reranker, VectorIndex, VectorPoint};
use cairn_core::{NewRecord, Outcome, RecordId, VectorKind};
use cairn_index::{Hybrid, SearchMode, TextIndex, TextQuery};
use cairn_store::Store;

/// The k values reported.
pub const KS: [usize; 3] = [1, 5, 10];

/// The search setups compared: (name, mode, rerank).
const SETUPS: [(&str, SearchMode, bool); 4] = [
    ("bm25", SearchMode::Bm25, false),
    ("dense", SearchMode::Dense, false),
    ("hybrid", SearchMode::Hybrid, false),
    ("hybrid+rerank", SearchMode::Hybrid, true),
];

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
}

/// The models the dense setups need, when they are available.
pub struct Models<'a> {
    /// Query and turn embeddings.
    pub embedder: Option<&'a dyn Embedder>,
    /// Cross-encoder.
    pub reranker: Option<&'a dyn Reranker>,
    /// A fresh, empty vector index per conversation.
    pub new_index: &'a dyn Fn() -> anyhow::Result<Box<dyn VectorIndex>>,
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
fn evidence_ids(v: &serde_json::Value) -> Vec<String> {
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

/// `1:56 pm on 8 May, 2023` → a UTC time.
fn session_time(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
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

/// Runs the evaluation and prints it (a table, or JSON rows).
pub async fn locomo(
    file: &Path,
    audit: Option<&Path>,
    json: bool,
    models: &Models<'_>,
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
    let mut corrections: HashMap<(String, usize), Vec<String>> = HashMap::new();
    if let Some(a) = audit {
        let v: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(a)?)
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
    let setups: Vec<(&str, SearchMode, bool)> = SETUPS
        .iter()
        .copied()
        .filter(|(name, mode, rerank)| {
            let ok = (*mode == SearchMode::Bm25 || models.embedder.is_some())
                && (!*rerank || models.reranker.is_some());
            if !ok {
                eprintln!("skipping {name}: its model is not available");
            }
            ok
        })
        .collect();
    // (setup, k, category, evidence kind) → tally
    let mut tallies: BTreeMap<(String, usize, String, String), Tally> = BTreeMap::new();
    let bar = indicatif::ProgressBar::new(
        convs
            .iter()
            .map(|c| c["qa"].as_array().map_or(0, Vec::len) as u64)
            .sum(),
    );
    for conv in convs {
        let sample = conv["sample_id"]
            .as_str()
            .unwrap_or("conversation")
            .to_owned();
        let c = &conv["conversation"];
        let tmp = tempfile::tempdir()?;
        let store = Store::open(&tmp.path().join("cairn.db")).await?;
        let mut dia_of: HashMap<String, String> = HashMap::new();
        let mut batch = Vec::new();
        for n in 1.. {
            let Some(turns) = c[format!("session_{n}")].as_array() else {
                break;
            };
            let when = c[format!("session_{n}_date_time")]
                .as_str()
                .and_then(session_time)
                .unwrap_or_default();
            for (i, t) in turns.iter().enumerate() {
                let Some(dia) = t["dia_id"].as_str() else {
                    continue;
                };
                let mut text = format!(
                    "{}: {}",
                    t["speaker"].as_str().unwrap_or("?"),
                    t["text"].as_str().unwrap_or("")
                );
                if let Some(cap) = t["blip_caption"].as_str() {
                    text.push_str(&format!(" [shares a photo: {cap}]"));
                }
                let id = RecordId::derive("locomo", &sample, dia);
                dia_of.insert(id.to_string(), dia.to_owned());
                batch.push((
                    NewRecord {
                        id,
                        framework: "locomo".into(),
                        session_id: format!("{sample}:session_{n}"),
                        project: Some(sample.clone()),
                        cwd: None,
                        model: None,
                        outcome: Outcome::Success,
                        started_at: when + chrono::Duration::seconds(i as i64),
                        ended_at: None,
                        request: text.clone(),
                        text,
                        content: serde_json::json!({}),
                        source: None,
                    },
                    Vec::new(),
                ));
            }
        }
        store.append_records(&batch).await?;
        let text = TextIndex::in_memory()?;
        text.sync(&store).await?;
        let vectors = if let Some(e) = models.embedder {
            let index = (models.new_index)()?;
            index
                .ensure(e.dim())
                .map_err(|e| anyhow::anyhow!(e.message))?;
            for group in batch.chunks(32) {
                let texts: Vec<&str> = group.iter().map(|(r, _)| r.text.as_str()).collect();
                let vs = e.embed(&texts).map_err(|e| anyhow::anyhow!(e.message))?;
                let points: Vec<VectorPoint> = group
                    .iter()
                    .zip(vs)
                    .map(|((r, _), v)| VectorPoint {
                        owner: r.id.to_string(),
                        vector_kind: VectorKind::Chunk,
                        ord: 0,
                        vector: v,
                        payload: PointPayload {
                            project: r.project.clone(),
                            framework: Some(r.framework.clone()),
                            kind: Some("record".into()),
                            session: Some(r.session_id.clone()),
                            timestamp_ms: r.started_at.timestamp_millis(),
                        },
                    })
                    .collect();
                index
                    .upsert(&points)
                    .map_err(|e| anyhow::anyhow!(e.message))?;
            }
            Some(index)
        } else {
            None
        };
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
            for (name, mode, rerank) in &setups {
                let hybrid = Hybrid {
                    text: &text,
                    vectors: vectors.as_deref(),
                    embedder: models.embedder,
                    reranker: models.reranker,
                };
                let (hits, _) = hybrid.search(&TextQuery::new(question, 10), *mode, *rerank)?;
                let ranked: Vec<&str> = hits
                    .iter()
                    .filter_map(|h| dia_of.get(&h.hit.record_id).map(String::as_str))
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
                                .entry(((*name).to_owned(), k, cat, kind.to_owned()))
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
    let rows: Vec<Row> = tallies
        .into_iter()
        .map(|((mode, k, category, evidence), t)| Row {
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
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_table(&rows);
    }
    Ok(rows)
}

fn print_table(rows: &[Row]) {
    println!("LoCoMo retrieval recall (any / all evidence turns in the top k)\n");
    for evidence in ["raw", "audited"] {
        println!("{evidence} evidence:");
        println!(
            "{:<15} {:<20} {:>15} {:>15} {:>15} {:>6}",
            "mode", "category", "k=1", "k=5", "k=10", "n"
        );
        let mut keys: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r.evidence == evidence)
            .map(|r| (r.mode.as_str(), r.category.as_str()))
            .collect();
        keys.sort_by_key(|(m, c)| {
            (
                SETUPS.iter().position(|s| s.0 == *m),
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
            let n = rows
                .iter()
                .find(|r| r.evidence == evidence && r.mode == mode && r.category == cat)
                .map_or(0, |r| r.n);
            println!(
                "{:<15} {:<20} {:>15} {:>15} {:>15} {:>6}",
                mode,
                if cat == "all" {
                    category_name(cat).to_owned()
                } else {
                    format!("{cat} {}", category_name(cat))
                },
                cell(1),
                cell(5),
                cell(10),
                n
            );
        }
        println!();
    }
}

/// `cairn eval locomo`: loads the models the settings name (the same ones search uses) and
/// runs [`locomo`] with a fresh in-memory vector index per conversation.
pub async fn run_locomo(
    paths: &cairn_config::Paths,
    settings: &cairn_config::Settings,
    file: &Path,
    audit: Option<&Path>,
    json: bool,
) -> anyhow::Result<()> {
    let (embedder, reranker, warnings) = cairn_api::models_for_eval(paths, settings).await;
    for w in &warnings {
        eprintln!("note: {w}");
    }
    let new_index =
        || -> anyhow::Result<Box<dyn VectorIndex>> { Ok(cairn_api::memory_vector_index()) };
    let models = Models {
        embedder: embedder.as_deref(),
        reranker: reranker.as_deref(),
        new_index: &new_index,
    };
    locomo(file, audit, json, &models).await.map(|_| ())
}
