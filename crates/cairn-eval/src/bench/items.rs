//! `cairn bench items`: the memory items at scale, through the service's own code. A
//! synthetic home holds `--records` records (as `bench note` grows them: indexed, the
//! vectors synthetic) and `--items` active items, each with its summary, two cues and two
//! body chunks embedded (synthetic vectors, kept in the store as distillation keeps them).
//! A real service over it (the embedding model loaded, the embedded vector index) then:
//!
//! - indexes the items the first time a search reads them: the keyword side from the item
//!   log and each item's stored vectors into the vector index beside the records' (no model
//!   call);
//! - answers searches of records only, items only, and both, and turn notes (dry runs);
//! - takes one item changed (a new event) into both sides at the next search;
//! - restarts, and answers its first item search from the indexes kept on disk;
//! - sleeps: relates each item to its nearest neighbours, re-scores, archives; then, after
//!   one item changed, sleeps again (that item alone asks the index for its neighbours);
//! - distils windows of six requests, each answered with five items (the answers are this
//!   benchmark's own, written in the shape a model returns, not a model's output): the rules,
//!   reconcile against the 20,000 known items through the items' index, the new items'
//!   vectors embedded (real model) and stored.
//!
//! Beside it, in the same run, the way items were searched before they shared the index: an
//! exact in-memory index (keywords and vectors) of every item, built again whenever the item
//! log changed; sleep relating every pair; and windows distilled by a distiller without the
//! index, which loads and compares every known item for each window. The queries are random words of the synthetic vocabulary; their embedding is
//! real, so latencies include it.
use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context;
use cairn_api::Service;
use cairn_config::{Paths, Settings};
use cairn_core::api::{SearchReq, TurnNoteReq};
use cairn_core::ports::{PointPayload, VectorIndex, VectorPoint};
use cairn_core::{
    Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, NewRecord, Outcome, Record,
    RecordId, VectorKind,
};
use cairn_index::TextIndex;
use cairn_store::{Store, StoredVector};
use cairn_vectors::synthetic::Gen;
use serde::Serialize;

use super::note::{DIM, PROJECTS, backend, build, embedded, options, project_dirs, vectors_id};
use super::{Lcg, StageTimes, measure, ms, pct, rss_mib, status_mib, synthetic_record};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Args {
    /// Records in the synthetic store (at least 1).
    pub records: usize,
    /// Active items.
    pub items: usize,
    /// Searches (and turn notes) per measurement.
    pub queries: usize,
    /// Print one JSON object instead of the table.
    pub json: bool,
}

/// The figures (`docs/figures/items.md` explains each).
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    records: u64,
    items: u64,
    /// Writing the items and their vectors to the store.
    items_write_s: f64,
    /// The first item search after the items were written: the whole item log indexed.
    first_index_s: f64,
    /// Items search right after the first indexing, before the maintenance pass folds the
    /// items' points into the graph.
    search_items_fresh_p50_ms: f64,
    search_items_fresh_p95_ms: f64,
    search_items_fresh_stages_p50_ms: BTreeMap<String, f64>,
    /// The maintenance pass: the vector index optimized.
    optimize_s: f64,
    /// Search p50 / p95 by what is searched, after the maintenance pass.
    search_records_p50_ms: f64,
    search_records_p95_ms: f64,
    search_items_p50_ms: f64,
    search_items_p95_ms: f64,
    search_all_p50_ms: f64,
    search_all_p95_ms: f64,
    /// Where each search's time went: the p50 of each stage (`cairn_recall::Stages`).
    search_records_stages_p50_ms: BTreeMap<String, f64>,
    search_items_stages_p50_ms: BTreeMap<String, f64>,
    search_all_stages_p50_ms: BTreeMap<String, f64>,
    /// The turn note (dry run), which reads records and items.
    note_p50_ms: f64,
    note_p95_ms: f64,
    /// The first item search after one item changed: that item put again on both sides.
    change_ms: f64,
    /// The first item search after a restart (nothing rebuilt).
    restart_first_search_ms: f64,
    rss_after_restart_mib: f64,
    /// The most RSS of the process.
    rss_peak_mib: f64,
    /// The service alone over the same home, in a fresh process.
    service_rss: ServiceRss,
    /// Sleep: its stages (relate; re-score and archive; profiles) and what it did.
    sleep_s: f64,
    sleep_stages_ms: [u64; 3],
    sleep_related: u64,
    /// The second night's relate, after one item changed.
    sleep_second_relate_ms: u64,
    sleep_second_asked: u64,
    /// Before: sleep's relate comparing every pair of items, every night (no index).
    brute_relate_ms: u64,
    /// Before: an exact in-memory index of every item built again after a change.
    rebuild_in_memory_ms: f64,
    /// Windows distilled on each side (0: too few records, the figures below are null).
    distil_windows: u64,
    /// Distilling one window as the service does (reconcile through the items' index).
    distil_p50_ms: f64,
    distil_p95_ms: f64,
    /// Before: distilling one window with every known item loaded and compared.
    distil_all_p50_ms: f64,
    distil_all_p95_ms: f64,
}

/// Windows distilled on each side.
const DISTIL_WINDOWS: usize = 8;

/// Answers every request to distil a window with five items made of the window's own words,
/// in the shape a model's answer has: this benchmark's own answers, not a model's output.
struct WrittenAnswers;

impl cairn_llm::Provider for WrittenAnswers {
    fn name(&self) -> &str {
        "bench"
    }

    fn model(&self) -> &str {
        "answers written by the benchmark"
    }

    fn complete(
        &self,
        request: &cairn_llm::Request,
        _deadline: Instant,
    ) -> Result<cairn_llm::Reply, cairn_llm::ProviderError> {
        // The window's words, in order; each item takes its own run of them.
        let words: Vec<&str> = request
            .prompt
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() > 3)
            .collect();
        let kinds = ["fact", "decision", "procedure", "pitfall", "architecture"];
        let items: Vec<serde_json::Value> = (0..5)
            .map(|k| {
                let at = |n: usize| words.get((k * 37 + n) % words.len().max(1)).copied();
                let run = |from: usize, len: usize| -> String {
                    (from..from + len)
                        .filter_map(at)
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                serde_json::json!({
                    "kind": kinds[k],
                    "title": run(0, 5),
                    "summary": run(0, 14),
                    "body": run(0, 60),
                    "cues": [run(3, 6), run(9, 6), run(15, 6), run(21, 6)],
                    "concepts": [run(1, 1), run(4, 1), run(7, 1)],
                    "importance": 3,
                    "certainty": "stated",
                    "sources": [k % 6 + 1],
                    "stated_by": "user",
                })
            })
            .collect();
        Ok(cairn_llm::Reply {
            text: serde_json::json!({ "items": items }).to_string(),
            model: self.model().to_owned(),
            usage: cairn_llm::Usage::default(),
            cost_usd: None,
        })
    }
}

/// Up to `n` windows of six requests of the synthetic home: its sessions in order, each cut
/// into runs of six (a session of the home holds about a hundred records' span).
async fn windows(
    store: &Store,
    projects: &[(String, String)],
    records: usize,
    n: usize,
) -> anyhow::Result<Vec<cairn_distill::Window>> {
    let mut out = Vec::with_capacity(n);
    // Record i is in project i % PROJECTS and its session i / 100 (`synthetic_record`).
    'sessions: for k in 0..=records / 100 {
        for (_, project) in projects.iter().take(PROJECTS) {
            let session = format!("{project}-{k}");
            let held = store.session_records("bench", &session).await?;
            for run in held.chunks_exact(6) {
                if out.len() == n {
                    break 'sessions;
                }
                out.push(cairn_distill::Window {
                    framework: "bench".into(),
                    session_id: session.clone(),
                    records: run.to_vec(),
                });
            }
        }
    }
    Ok(out)
}

/// Distils each window with `d`: the milliseconds each took, and the items kept.
async fn distil_all(
    d: &cairn_distill::Distiller,
    windows: &[cairn_distill::Window],
) -> anyhow::Result<(Vec<f64>, usize)> {
    let mut took = Vec::with_capacity(windows.len());
    let mut kept = 0;
    for w in windows {
        let t = Instant::now();
        let report = d.distil(w).await?;
        took.push(ms(t.elapsed()));
        anyhow::ensure!(
            report.invalid.is_none(),
            "the benchmark's answer was not read: {:?}",
            report.invalid
        );
        kept += report.kept.len();
    }
    took.sort_by(f64::total_cmp);
    Ok((took, kept))
}

/// An item of the synthetic home: words of the synthetic vocabulary, said on some day of the
/// last year, in one of the projects.
fn synthetic_item(rng: &mut Lcg, i: usize, projects: &[(String, String)]) -> Item {
    let kinds = [
        ItemKind::Fact,
        ItemKind::Decision,
        ItemKind::Procedure,
        ItemKind::Pitfall,
        ItemKind::Architecture,
        ItemKind::Preference,
        ItemKind::Observation,
    ];
    let kind = kinds[i % kinds.len()];
    let title = {
        let n = 3 + rng.next(4);
        rng.words(n)
    };
    let summary = {
        let n = 12 + rng.next(12);
        rng.words(n)
    };
    let body = {
        let n = 40 + rng.next(80);
        rng.words(n)
    };
    Item {
        id: ItemId::new(format!("it_bench_{i:06}")),
        kind,
        title,
        summary,
        body,
        cues: vec![rng.words(5), rng.words(6)],
        concepts: vec![rng.words(1), rng.words(1)],
        importance: u8::try_from(1 + rng.next(5)).unwrap_or(3),
        certainty: Certainty::Stated,
        project: (!i.is_multiple_of(5)).then(|| projects[i % PROJECTS].1.clone()),
        sources: Vec::new(),
        happened_at: None,
        said_at: Some(
            chrono::Utc::now() - chrono::Duration::minutes(i64::try_from(i * 23).unwrap_or(0)),
        ),
        ended_at: None,
        superseded_by: None,
        archived: false,
        provenance: None,
    }
}

/// The vectors distillation keeps for an item (summary, two cues, two body chunks).
fn item_vectors(item: &Item, model: &str, vecs: &mut Gen) -> Vec<StoredVector> {
    [
        (VectorKind::Summary, 0),
        (VectorKind::Cue, 0),
        (VectorKind::Cue, 1),
        (VectorKind::Chunk, 0),
        (VectorKind::Chunk, 1),
    ]
    .into_iter()
    .map(|(kind, ord)| StoredVector {
        owner: item.id.as_str().to_owned(),
        kind,
        ord,
        model: model.to_owned(),
        vector: vecs.vector(DIM),
    })
    .collect()
}

/// Writes `n` items and their vectors to the store at `paths`.
async fn write_items(
    paths: &Paths,
    model: &str,
    n: usize,
    projects: &[(String, String)],
    quiet: bool,
) -> anyhow::Result<()> {
    let store = Store::open(&paths.database()).await?;
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(n as u64)
    };
    let mut rng = Lcg(11);
    let mut vecs = Gen::low_rank(3, DIM);
    let mut batch = Vec::new();
    for i in 0..n {
        let item = synthetic_item(&mut rng, i, projects);
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: item.clone(),
                reason: Some("bench".into()),
            })
            .await?;
        batch.extend(item_vectors(&item, model, &mut vecs));
        if batch.len() >= 2_000 {
            store.put_vectors(&batch).await?;
            batch.clear();
        }
        bar.inc(1);
    }
    store.put_vectors(&batch).await?;
    bar.finish_and_clear();
    store.close().await?;
    Ok(())
}

async fn search(service: &Service, query: &str, kinds: &[&str]) -> anyhow::Result<f64> {
    Ok(staged(service, query, kinds).await?.0)
}

/// One search through the service: how long it took, and its stages.
async fn staged(
    service: &Service,
    query: &str,
    kinds: &[&str],
) -> anyhow::Result<(f64, cairn_recall::Stages)> {
    let t = Instant::now();
    let (_, stages) = service
        .search_staged(SearchReq {
            query: query.to_owned(),
            kinds: Some(kinds.iter().map(|&k| k.to_owned()).collect()),
            rerank: Some(false),
            ..SearchReq::default()
        })
        .await
        .map_err(|e| anyhow::anyhow!("search failed: {e}"))?;
    Ok((ms(t.elapsed()), stages))
}

/// p50 and p95 of searches of `kinds` over random words, and the p50 of each stage.
async fn searches(
    service: &Service,
    kinds: &[&str],
    n: usize,
) -> anyhow::Result<(f64, f64, BTreeMap<String, f64>)> {
    let mut rng = Lcg(1234);
    let mut took = Vec::with_capacity(n);
    let mut stages = StageTimes::default();
    for _ in 0..n {
        let words = {
            let n = 2 + rng.next(5);
            rng.words(n)
        };
        let (ms, s) = staged(service, &words, kinds).await?;
        took.push(ms);
        stages.add(&s)?;
    }
    took.sort_by(f64::total_cmp);
    Ok((pct(&took, 0.5), pct(&took, 0.95), stages.p50()))
}

/// The way items were searched before they shared the index: every active item into a fresh
/// in-memory keyword index and an exact in-memory vector index, from the store.
async fn rebuild_in_memory(store: &Store, model: &str) -> anyhow::Result<f64> {
    let t = Instant::now();
    let items = store.items(false).await?;
    let text = TextIndex::in_memory()?;
    for i in &items {
        let id = RecordId::new(i.id.as_str());
        let body = format!("{}\n{}\n\n{}", i.title, i.summary, i.body);
        let rec = Record {
            seq: 0,
            captured_at: i.said_at.unwrap_or_default(),
            record: NewRecord {
                id,
                framework: "item".into(),
                session_id: i.id.as_str().to_owned(),
                project: i.project.clone(),
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: i.said_at.unwrap_or_default(),
                ended_at: None,
                request: i.title.clone(),
                author: None,
                text: body,
                content: serde_json::json!({}),
                source: None,
            },
        };
        text.put(&rec, &[])?;
    }
    text.commit(0)?;
    let owners: Vec<String> = items.iter().map(|i| i.id.as_str().to_owned()).collect();
    let points: Vec<VectorPoint> = store
        .vectors_of_many(&owners, model)
        .await?
        .into_iter()
        .map(|v| VectorPoint {
            payload: PointPayload {
                project: None,
                framework: Some("item".into()),
                kind: Some("item".into()),
                session: Some(v.owner.clone()),
                timestamp_ms: 0,
            },
            owner: v.owner,
            vector_kind: v.kind,
            ord: v.ord,
            vector: v.vector,
        })
        .collect();
    let index = cairn_vectors::MemoryIndex::new();
    index.ensure(DIM).map_err(backend)?;
    index.upsert(&points).map_err(backend)?;
    Ok(ms(t.elapsed()))
}

/// A distiller over `store` as distillation ran before the items' index: every known item
/// read and compared. It calls `provider` with no budget.
fn without_index(
    store: &Store,
    provider: std::sync::Arc<dyn cairn_llm::Provider>,
    embedder: std::sync::Arc<dyn cairn_core::ports::Embedder>,
) -> cairn_distill::Distiller {
    let policy = cairn_llm::Policy {
        timeout: std::time::Duration::from_secs(60),
        retries: 0,
        backoff: std::time::Duration::from_millis(1),
        budget: cairn_llm::Budget {
            calls: u32::MAX,
            usd: f64::MAX,
        },
    };
    cairn_distill::Distiller::new(
        store.clone(),
        cairn_llm::Llm::new(provider, store.clone(), policy),
        Some(embedder),
        cairn_distill::Settle::default(),
    )
}

/// Sleep's relate as it was before the index, over the same store: a distiller without the
/// items' index compares every pair of summary vectors (the edges exist already, so it adds
/// none; the work is the same). Returns its relate time.
async fn brute_relate(paths: &Paths, settings: &Settings) -> anyhow::Result<u64> {
    let embedder = cairn_api::models_for_eval(paths, settings)
        .await
        .0
        .context("the settings name no embedding model the benchmark can load")?;
    let store = Store::open(&paths.database()).await?;
    let d = without_index(
        &store,
        std::sync::Arc::new(cairn_llm::Unavailable::new(
            "no model in this benchmark (the brute-force night writes no profile)",
        )),
        embedder,
    );
    let report = d.sleep(chrono::Utc::now()).await?;
    store.close().await?;
    Ok(report.took_ms[0])
}

/// `n` turn notes (dry runs) over random prompts in the home's projects: their latencies,
/// sorted.
async fn turn_notes(
    service: &Service,
    projects: &[(String, String)],
    n: usize,
) -> anyhow::Result<Vec<f64>> {
    let mut notes = Vec::with_capacity(n);
    let mut rng = Lcg(99);
    for i in 0..n {
        let prompt = {
            let n = 6 + rng.next(10);
            rng.words(n)
        };
        let note = service
            .turn_note_whole(TurnNoteReq {
                framework: "claude-code".into(),
                project: Some(projects[i % projects.len()].1.clone()),
                session_id: Some(format!("bench-items-{i}")),
                turn_id: None,
                prompt,
                context: Vec::new(),
                dry_run: true,
                at: None,
            })
            .await
            .map_err(|e| anyhow::anyhow!("the turn note failed: {e}"))?
            .0;
        notes.push(f64::from(note.latency_ms));
    }
    notes.sort_by(f64::total_cmp);
    Ok(notes)
}

/// The service alone, in a fresh process (`cairn bench items-phase`): its RSS once loaded over
/// the benchmark's home, then after its first searches (models loaded, both indexes read) and
/// `queries` searches of everything and turn notes, and its peak.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct ServiceRss {
    /// Once loaded, before any search.
    pub rss_idle_mib: f64,
    /// After the searches and turn notes.
    pub rss_after_mib: f64,
    /// The most RSS of the process.
    pub rss_peak_mib: f64,
}

/// The measuring half of `cairn bench items`, run in a fresh process over its home: prints
/// [`ServiceRss`] as JSON.
pub async fn phase(
    settings: &Settings,
    home: &std::path::Path,
    queries: usize,
) -> anyhow::Result<()> {
    let settings = embedded(settings);
    let paths = Paths::under(home);
    let service = Service::load(&options(&paths, &settings))
        .await
        .map_err(|e| anyhow::anyhow!("cannot start a service over the benchmark's home: {e}"))?;
    let rss_idle_mib = rss_mib();
    let projects = project_dirs();
    searches(&service, &["record", "item", "note"], queries).await?;
    turn_notes(&service, &projects, queries).await?;
    let figures = ServiceRss {
        rss_idle_mib,
        rss_after_mib: rss_mib(),
        rss_peak_mib: status_mib("VmHWM:"),
    };
    drop(service);
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

/// Runs the benchmark and prints the figures.
pub async fn run(settings: &Settings, args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.records > 0, "--records must be at least 1");
    anyhow::ensure!(args.items > 0, "--items must be at least 1");
    anyhow::ensure!(args.queries > 0, "--queries must be at least 1");
    let settings = embedded(settings);
    let quiet = args.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let temp = tempfile::tempdir().context("cannot make a temporary home")?;
    let paths = Paths::under(&temp.path().join("home"));
    paths
        .create_all()
        .context("cannot create the temporary home's folders")?;
    let projects = project_dirs();
    let mut rng = Lcg(7);
    let first = synthetic_record(&mut rng, 0, &projects[0].1);
    let model = vectors_id(&paths, &settings, first).await?;
    say(&format!(
        "building a synthetic store of {} records…",
        args.records
    ));
    build(
        &paths,
        &settings,
        &model,
        &mut rng,
        args.records,
        &projects,
        quiet,
    )
    .await?;
    say(&format!("writing {} items and their vectors…", args.items));
    let t = Instant::now();
    write_items(&paths, &model, args.items, &projects, quiet).await?;
    let items_write_s = t.elapsed().as_secs_f64();

    let service = Service::load(&options(&paths, &settings))
        .await
        .map_err(|e| anyhow::anyhow!("cannot start a service over the synthetic store: {e}"))?;
    // The models load on the first search; records only, so the items are not read yet.
    search(&service, "warm up", &["record"]).await?;
    say("indexing the items (the first item search)…");
    let first_index_s = search(&service, "warm up", &["item"]).await? / 1000.0;
    // Right after the first indexing the items' points sit in segments of their own with no
    // graph; the maintenance worker folds them in within ten minutes.
    say("searching the items before the maintenance pass…");
    let (search_items_fresh_p50_ms, search_items_fresh_p95_ms, search_items_fresh_stages_p50_ms) =
        searches(&service, &["item"], args.queries).await?;
    say("the maintenance pass (the vector index optimized)…");
    let t = Instant::now();
    service
        .optimize_vectors()
        .await
        .map_err(|e| anyhow::anyhow!("cannot optimize the vector index: {e}"))?;
    let optimize_s = t.elapsed().as_secs_f64();
    say("searching…");
    let (search_records_p50_ms, search_records_p95_ms, search_records_stages_p50_ms) =
        searches(&service, &["record"], args.queries).await?;
    let (search_items_p50_ms, search_items_p95_ms, search_items_stages_p50_ms) =
        searches(&service, &["item"], args.queries).await?;
    let (search_all_p50_ms, search_all_p95_ms, search_all_stages_p50_ms) =
        searches(&service, &["record", "item", "note"], args.queries).await?;
    let notes = turn_notes(&service, &projects, args.queries).await?;

    // One item changed: put again on both sides by the next item search.
    let mut changed = service
        .store()
        .item(&ItemId::new(format!("it_bench_{:06}", args.items / 2)))
        .await?
        .context("the bench's items are in the store")?;
    changed.summary.push_str(" (changed)");
    service
        .store()
        .append_item_event(&NewItemEvent {
            kind: ItemEventKind::Updated,
            item: changed,
            reason: Some("bench".into()),
        })
        .await?;
    let change_ms = search(&service, "changed", &["item"]).await?;
    let rebuild_in_memory_ms = rebuild_in_memory(service.store(), &model).await?;

    say("sleeping (relate, re-score, archive)…");
    let t = Instant::now();
    let slept = service
        .run_sleep()
        .await
        .map_err(|e| anyhow::anyhow!("sleep failed: {e}"))?;
    let sleep_s = t.elapsed().as_secs_f64();
    // A second night after one more item changed: only it asks the index.
    let mut again = service
        .store()
        .item(&ItemId::new(format!("it_bench_{:06}", args.items / 3)))
        .await?
        .context("the bench's items are in the store")?;
    again.summary.push_str(" (changed again)");
    service
        .store()
        .append_item_event(&NewItemEvent {
            kind: ItemEventKind::Updated,
            item: again,
            reason: Some("bench".into()),
        })
        .await?;
    let second = service
        .run_sleep()
        .await
        .map_err(|e| anyhow::anyhow!("sleep failed: {e}"))?;
    // In a block: a distiller holds the vector index open, which the restart below reopens.
    let (distil_index, distil_every) = {
        let all = windows(service.store(), &projects, args.records, 2 * DISTIL_WINDOWS).await?;
        let half = all.len() / 2;
        if half == 0 {
            say("not distilling windows: the home holds no two sessions of six requests");
            (Vec::new(), Vec::new())
        } else {
            say("distilling windows, through the items' index and comparing every item…");
            let through_index = service
                .distiller_calling(std::sync::Arc::new(WrittenAnswers))
                .await;
            let (distil_index, kept_index) = distil_all(&through_index, &all[..half]).await?;
            let embedder = cairn_api::models_for_eval(&paths, &settings)
                .await
                .0
                .context("the settings name no embedding model the benchmark can load")?;
            let every_item = without_index(
                service.store(),
                std::sync::Arc::new(WrittenAnswers),
                embedder,
            );
            let (distil_every, kept_every) = distil_all(&every_item, &all[half..2 * half]).await?;
            anyhow::ensure!(
                kept_index > 0 && kept_every > 0,
                "the distilled windows kept no item ({kept_index} and {kept_every}): nothing was reconciled"
            );
            (distil_index, distil_every)
        }
    };
    drop(service);
    say("relating every pair, as sleep did before the index…");
    let brute_relate_ms = brute_relate(&paths, &settings).await?;

    say("restarting…");
    let service = Service::load(&options(&paths, &settings))
        .await
        .map_err(|e| anyhow::anyhow!("cannot start the service again: {e}"))?;
    search(&service, "warm up", &["record"]).await?;
    let restart_first_search_ms = search(&service, "after a restart", &["item"]).await?;
    let rss_after_restart_mib = rss_mib();
    let counts = service.store().counts().await?;
    let rss_peak_mib = status_mib("VmHWM:");
    drop(service);
    say("the service alone, in a fresh process…");
    let service_rss: ServiceRss = measure(
        std::process::Command::new(std::env::current_exe()?)
            .args(["bench", "items-phase", "--queries"])
            .arg(args.queries.to_string())
            .arg("--home")
            .arg(temp.path().join("home")),
    )?;
    let figures = Figures {
        records: counts.records,
        items: args.items as u64,
        items_write_s,
        first_index_s,
        search_records_p50_ms,
        search_records_p95_ms,
        search_items_p50_ms,
        search_items_p95_ms,
        search_all_p50_ms,
        search_all_p95_ms,
        search_items_fresh_p50_ms,
        search_items_fresh_p95_ms,
        search_items_fresh_stages_p50_ms,
        optimize_s,
        search_records_stages_p50_ms,
        search_items_stages_p50_ms,
        search_all_stages_p50_ms,
        note_p50_ms: pct(&notes, 0.5),
        note_p95_ms: pct(&notes, 0.95),
        change_ms,
        restart_first_search_ms,
        rss_after_restart_mib,
        rss_peak_mib,
        service_rss,
        sleep_s,
        sleep_stages_ms: slept.took_ms,
        sleep_related: slept.related as u64,
        sleep_second_relate_ms: second.took_ms[0],
        sleep_second_asked: second.with_vectors as u64,
        brute_relate_ms,
        rebuild_in_memory_ms,
        distil_windows: distil_index.len() as u64,
        distil_p50_ms: pct(&distil_index, 0.5),
        distil_p95_ms: pct(&distil_index, 0.95),
        distil_all_p50_ms: pct(&distil_every, 0.5),
        distil_all_p95_ms: pct(&distil_every, 0.95),
    };
    if args.json {
        println!("{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    let f = &figures;
    let rows: BTreeMap<&str, String> = BTreeMap::from([
        (
            "1 store",
            format!(
                "{} records, {} items (written in {:.1} s)",
                f.records, f.items, f.items_write_s
            ),
        ),
        (
            "2 first index",
            format!("{:.1} s (the whole item log, both sides)", f.first_index_s),
        ),
        (
            "2b search, items, before the maintenance pass",
            format!(
                "{:.1} / {:.1} ms ({})",
                f.search_items_fresh_p50_ms,
                f.search_items_fresh_p95_ms,
                stage_line(&f.search_items_fresh_stages_p50_ms)
            ),
        ),
        (
            "2c maintenance pass",
            format!("{:.1} s (the vector index optimized)", f.optimize_s),
        ),
        (
            "3 search, records",
            format!(
                "{:.1} / {:.1} ms",
                f.search_records_p50_ms, f.search_records_p95_ms
            ),
        ),
        (
            "4 search, items",
            format!(
                "{:.1} / {:.1} ms",
                f.search_items_p50_ms, f.search_items_p95_ms
            ),
        ),
        (
            "5 search, both",
            format!("{:.1} / {:.1} ms", f.search_all_p50_ms, f.search_all_p95_ms),
        ),
        (
            "6 turn note",
            format!("{:.1} / {:.1} ms", f.note_p50_ms, f.note_p95_ms),
        ),
        (
            "7 one item changed",
            format!(
                "{:.1} ms (before: {:.0} ms to build the in-memory index again)",
                f.change_ms, f.rebuild_in_memory_ms
            ),
        ),
        (
            "8 after a restart",
            format!(
                "first item search {:.1} ms, RSS {:.0} MiB (peak {:.0} MiB)",
                f.restart_first_search_ms, f.rss_after_restart_mib, f.rss_peak_mib
            ),
        ),
        (
            "8b the service alone",
            format!(
                "in a fresh process over the same home: RSS {:.0} MiB loaded, {:.0} MiB after \
                 {} searches and {} turn notes (peak {:.0} MiB)",
                f.service_rss.rss_idle_mib,
                f.service_rss.rss_after_mib,
                args.queries,
                args.queries,
                f.service_rss.rss_peak_mib
            ),
        ),
        (
            "9 sleep",
            format!(
                "first night {:.1} s: relate {} ms (every pair compared: more than a quarter \
                 of the items ask; {} related), re-score and archive {} ms, profiles {} ms; a \
                 night after one item changed: relate {} ms through the index ({} asked; before, \
                 every night compared every pair: {} ms)",
                f.sleep_s,
                f.sleep_stages_ms[0],
                f.sleep_related,
                f.sleep_stages_ms[1],
                f.sleep_stages_ms[2],
                f.sleep_second_relate_ms,
                f.sleep_second_asked,
                f.brute_relate_ms
            ),
        ),
        (
            "a distil a window",
            if f.distil_windows == 0 {
                "not measured: the home holds no two sessions of six requests".to_owned()
            } else {
                format!(
                    "{:.0} / {:.0} ms per window of six requests, five items proposed ({} \
                     windows; before, every known item loaded and compared: {:.0} / {:.0} ms)",
                    f.distil_p50_ms,
                    f.distil_p95_ms,
                    f.distil_windows,
                    f.distil_all_p50_ms,
                    f.distil_all_p95_ms
                )
            },
        ),
        (
            "b search stages, p50",
            format!(
                "records: {}; items: {}; both: {}",
                stage_line(&f.search_records_stages_p50_ms),
                stage_line(&f.search_items_stages_p50_ms),
                stage_line(&f.search_all_stages_p50_ms)
            ),
        ),
    ]);
    println!("cairn bench items (synthetic home; real query embedding; p50 / p95)");
    println!("| | |");
    println!("|---|---|");
    for (k, v) in rows {
        println!(
            "| {} | {v} |",
            k.split_once(' ').map_or(k, |(_, name)| name)
        );
    }
    Ok(())
}

/// A search's stages that took any time, as "stage 1.2 ms, …".
fn stage_line(stages: &BTreeMap<String, f64>) -> String {
    stages
        .iter()
        .filter(|(_, ms)| **ms >= 0.05)
        .map(|(stage, ms)| format!("{stage} {ms:.1} ms"))
        .collect::<Vec<_>>()
        .join(", ")
}
