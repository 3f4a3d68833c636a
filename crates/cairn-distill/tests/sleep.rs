//! Sleep end to end over the real store and the real embedder: neighbours related from 0.80,
//! priorities, archiving, profiles (model answers replayed from committed recordings in
//! `tests/recordings`, made once from the scripted answers below with `CAIRN_RECORD=1`), the
//! budget, and Clear.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Scripted, add_points, embedder, items_index, policy, recorded};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_core::ports::Embedder;
use cairn_core::{
    Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, RelationKind, Timestamp,
    VectorKind,
};
use cairn_distill::{Distiller, Settle, SleepReport};
use cairn_llm::{Llm, Provider, Request};
use cairn_store::{ProfileKind, Store, StoredVector};
use serde_json::json;

const RELAY: &str = "github.com/acme/relay";

fn at(s: &str) -> Timestamp {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// The profile answers a model gives: one timeline line per item line of the prompt.
fn answer_for(r: &Request) -> String {
    match r.purpose.as_str() {
        "profile" => {
            let timeline: Vec<_> = r
                .prompt
                .lines()
                .filter_map(|l| l.strip_prefix("- "))
                .map(|l| {
                    let mut parts = l.splitn(3, " · ");
                    let date = parts.next().unwrap_or_default();
                    let rest = parts.nth(1).unwrap_or_default();
                    let title = rest.split(" — ").next().unwrap_or_default();
                    json!({"date": date, "text": format!("{title}.")})
                })
                .collect();
            let n = timeline.len();
            json!({"timeline": timeline, "summary": format!("A subject with {n} remembered items.")})
        }
        _ => json!({"error": "unexpected purpose"}),
    }
    .to_string()
}

fn scripted() -> Scripted {
    Scripted {
        answer: answer_for,
        model: "claude-haiku-4-5-20251001",
        output_tokens: 300,
        cost_usd: 0.002,
    }
}

fn provider() -> Arc<dyn Provider> {
    recorded("recordings", scripted())
}

fn distiller(store: &Store, provider: Arc<dyn Provider>, calls: u32) -> Distiller {
    Distiller::new(
        store.clone(),
        Llm::new(provider, store.clone(), policy(calls)),
        Some(embedder()),
        Settle::default(),
    )
}

fn item(
    id: &str,
    kind: ItemKind,
    importance: u8,
    said: Timestamp,
    project: Option<&str>,
    title: &str,
    summary: &str,
) -> Item {
    Item {
        id: ItemId::new(id),
        kind,
        title: title.into(),
        summary: summary.into(),
        body: summary.into(),
        cues: Vec::new(),
        concepts: Vec::new(),
        importance,
        certainty: Certainty::Stated,
        project: project.map(str::to_owned),
        sources: Vec::new(),
        happened_at: None,
        said_at: Some(said),
        ended_at: None,
        superseded_by: None,
        archived: false,
        provenance: None,
    }
}

async fn event(store: &Store, kind: ItemEventKind, it: &Item) {
    store
        .append_item_event(&NewItemEvent {
            kind,
            item: it.clone(),
            reason: None,
        })
        .await
        .unwrap();
}

fn model_id(e: &Arc<dyn Embedder>) -> String {
    cairn_index::unit::vectors_id(e.model_id())
}

/// Stores items (a `created` event each) with their summary vectors, as distillation does.
async fn seed(store: &Store, e: &Arc<dyn Embedder>, items: &[Item]) -> Vec<Vec<f32>> {
    let summaries: Vec<&str> = items.iter().map(|i| i.summary.as_str()).collect();
    let vectors = e.embed(&summaries).unwrap();
    for it in items {
        event(store, ItemEventKind::Created, it).await;
    }
    let batch: Vec<StoredVector> = items
        .iter()
        .zip(&vectors)
        .map(|(it, v)| StoredVector {
            owner: it.id.as_str().to_owned(),
            kind: VectorKind::Summary,
            ord: 0,
            model: model_id(e),
            vector: v.clone(),
        })
        .collect();
    store.put_vectors(&batch).await.unwrap();
    vectors
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (n(a) * n(b))
}

async fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    (dir, store)
}

/// Three items of the relay project (two saying the same) and the user's Makefile preference.
fn relay_items() -> Vec<Item> {
    let said = at("2026-03-02T09:00:00Z");
    vec![
        item(
            "i_port_a",
            ItemKind::Fact,
            3,
            said,
            Some(RELAY),
            "Relay port",
            "The relay service in acme/relay listens on TCP port 7420.",
        ),
        item(
            "i_port_b",
            ItemKind::Fact,
            3,
            said,
            Some(RELAY),
            "Relay port config",
            "The relay service of acme/relay listens on TCP port 7420, set in config/relay.toml.",
        ),
        item(
            "i_tabs",
            ItemKind::Preference,
            3,
            said,
            None,
            "Tabs in Makefiles",
            "The user wants recipes in Makefiles indented with tabs, never spaces.",
        ),
        item(
            "i_wal",
            ItemKind::Decision,
            3,
            said,
            Some(RELAY),
            "WAL for the queue",
            "The relay queue uses SQLite in WAL mode so readers never block the writer.",
        ),
    ]
}

/// Checks that each pair of `items` is related exactly when its similarity reaches 0.80;
/// returns how many pairs are.
async fn related_from_0_80(store: &Store, items: &[Item], vectors: &[Vec<f32>]) -> usize {
    let mut near = 0;
    let mut far = 0;
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            let sim = cosine(&vectors[i], &vectors[j]);
            let edges = store.relations_of(&items[i].id).await.unwrap();
            let related = edges.iter().any(|r| {
                r.kind == RelationKind::Related && (r.from == items[j].id || r.to == items[j].id)
            });
            assert_eq!(
                related,
                sim >= 0.80,
                "{} ~ {}: similarity {sim:.3}",
                items[i].title,
                items[j].title
            );
            if sim >= 0.80 {
                near += 1;
            } else {
                far += 1;
            }
        }
    }
    assert!(
        near >= 1 && far >= 1,
        "the test needs both ({near} near, {far} far)"
    );
    near
}

#[tokio::test]
async fn neighbours_from_0_80_are_related_and_far_ones_are_not() {
    let (_dir, store) = open().await;
    let e = embedder();
    let items = relay_items();
    let vectors = seed(&store, &e, &items).await;
    let d = distiller(&store, provider(), 0);
    let report = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!((report.active, report.with_vectors), (4, 4));

    let near = related_from_0_80(&store, &items, &vectors).await;
    assert_eq!(report.related, near);

    // Idempotent: a second night adds no edge.
    let again = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!(again.related, 0);
}

#[tokio::test]
async fn through_the_index_the_same_pairs_are_related_and_later_nights_ask_only_for_new_items() {
    let (_dir, store) = open().await;
    let e = embedder();
    let items = relay_items();
    let vectors = seed(&store, &e, &items).await;
    let index = items_index(&items, &vectors);
    let d = distiller(&store, provider(), 0).with_items_index(index.clone(), 0);
    let first = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!(
        (first.active, first.with_vectors),
        (4, 4),
        "the first night every item asks"
    );
    let near = related_from_0_80(&store, &items, &vectors).await;
    assert_eq!(first.related, near);

    // Nothing changed: nothing asks, nothing is added.
    let second = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!((second.with_vectors, second.related), (0, 0));

    // A new item saying what two others say: only it asks, and it finds them.
    let new = item(
        "i_port_c",
        ItemKind::Fact,
        3,
        at("2026-03-03T09:00:00Z"),
        Some(RELAY),
        "Relay TCP port",
        "acme/relay: the relay service listens on TCP port 7420.",
    );
    let new_vectors = seed(&store, &e, std::slice::from_ref(&new)).await;
    add_points(&index, std::slice::from_ref(&new), &new_vectors);
    let third = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!((third.active, third.with_vectors), (5, 1));
    let edges = store.relations_of(&new.id).await.unwrap();
    for old in ["i_port_a", "i_port_b"] {
        let sim = cosine(
            &new_vectors[0],
            &vectors[items.iter().position(|i| i.id.as_str() == old).unwrap()],
        );
        assert_eq!(
            edges
                .iter()
                .any(|r| r.from.as_str() == old || r.to.as_str() == old),
            sim >= 0.80,
            "{old}: similarity {sim:.3}"
        );
    }
    assert_eq!(third.related, edges.len());
    assert!(
        third.related >= 1,
        "the new item has a near neighbour: {edges:?}"
    );
}

#[tokio::test]
async fn priority_follows_importance_recency_and_use() {
    let (_dir, store) = open().await;
    let e = embedder();
    let now = chrono::Utc::now();
    let recent = now - chrono::Duration::days(10);
    let long_ago = now - chrono::Duration::days(400);
    let items = vec![
        item(
            "i_a",
            ItemKind::Fact,
            4,
            recent,
            None,
            "a",
            "The build uses cargo nextest.",
        ),
        item(
            "i_b",
            ItemKind::Fact,
            2,
            recent,
            None,
            "b",
            "The office printer is on floor two.",
        ),
        item(
            "i_c",
            ItemKind::Fact,
            4,
            long_ago,
            None,
            "c",
            "The old CI ran on Jenkins.",
        ),
        item(
            "i_d",
            ItemKind::Fact,
            2,
            recent,
            None,
            "d",
            "Deploys go out on Thursdays.",
        ),
        item(
            "i_e",
            ItemKind::Preference,
            3,
            long_ago,
            None,
            "e",
            "The user likes short commits.",
        ),
        item(
            "i_f",
            ItemKind::Observation,
            3,
            long_ago,
            None,
            "f",
            "The demo went well.",
        ),
    ];
    seed(&store, &e, &items).await;
    for _ in 0..3 {
        event(&store, ItemEventKind::Used, &items[3]).await;
    }
    let report = distiller(&store, provider(), 0).sleep(now).await.unwrap();
    assert_eq!(report.rescored, 6);
    let s = store.item_scores().await.unwrap();
    let p = |id: &str| s[&ItemId::new(id)].priority;
    assert!(p("i_a") > p("i_b"), "importance");
    assert!(p("i_a") > p("i_c"), "recency");
    assert!(p("i_d") > p("i_b"), "use");
    assert_eq!(s[&ItemId::new("i_d")].used, 3);
    assert!(
        p("i_e") > p("i_f"),
        "a preference fades slower than an observation"
    );
    assert!(
        report.archived.is_empty(),
        "nothing was stored 180 days ago"
    );
}

#[tokio::test]
async fn an_old_unused_low_item_is_archived_and_the_log_keeps_it() {
    let (_dir, store) = open().await;
    let e = embedder();
    let stored = chrono::Utc::now();
    let said = stored - chrono::Duration::days(10);
    let low = item(
        "i_low",
        ItemKind::Episode,
        2,
        said,
        None,
        "Asked about lunch",
        "The user asked where to get lunch near the office.",
    );
    let high = item(
        "i_high",
        ItemKind::Architecture,
        5,
        said,
        None,
        "Relay layers",
        "The relay has three layers: ingest, queue and delivery.",
    );
    seed(&store, &e, &[low.clone(), high.clone()]).await;
    let d = distiller(&store, provider(), 0);

    // A month on: low, but not stored long enough.
    let report = d.sleep(stored + chrono::Duration::days(30)).await.unwrap();
    assert!(report.archived.is_empty());

    // 200 days on: low and unused for 180 days.
    let report = d.sleep(stored + chrono::Duration::days(200)).await.unwrap();
    assert_eq!(report.archived, vec![low.id.clone()], "{report:?}");
    let active: Vec<ItemId> = store
        .items(false)
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(active, vec![high.id.clone()]);
    let all = store.items(true).await.unwrap();
    assert!(all.iter().any(|i| i.id == low.id && i.archived));
    let history = store.item_history(&low.id).await.unwrap();
    let kinds: Vec<ItemEventKind> = history.iter().map(|h| h.event.kind).collect();
    assert_eq!(kinds, vec![ItemEventKind::Created, ItemEventKind::Archived]);
    assert_eq!(
        history[0].event.item.summary, low.summary,
        "the log keeps every state"
    );

    // Restored: back in the active set, the log grows.
    let back = d.restore(&low.id).await.unwrap().unwrap();
    assert!(!back.archived);
    assert_eq!(store.items(false).await.unwrap().len(), 2);
    let kinds: Vec<ItemEventKind> = store
        .item_history(&low.id)
        .await
        .unwrap()
        .iter()
        .map(|h| h.event.kind)
        .collect();
    assert_eq!(kinds.last(), Some(&ItemEventKind::Restored));
    assert!(d.restore(&ItemId::new("i_none")).await.unwrap().is_none());
}

fn profile_items() -> Vec<Item> {
    vec![
        item(
            "i_port",
            ItemKind::Fact,
            3,
            at("2026-03-02T09:00:00Z"),
            Some(RELAY),
            "Relay listens on port 7420",
            "The relay service in acme/relay listens on TCP port 7420 (config/relay.toml).",
        ),
        item(
            "i_wal",
            ItemKind::Decision,
            4,
            at("2026-03-02T09:10:00Z"),
            Some(RELAY),
            "SQLite in WAL mode for the relay queue",
            "The relay queue uses SQLite in WAL mode so readers never block the writer.",
        ),
        item(
            "i_editor",
            ItemKind::Preference,
            3,
            at("2026-02-11T15:00:00Z"),
            None,
            "Helix as the editor",
            "The user edits code in Helix and wants paths given relative to the repository.",
        ),
    ]
}

async fn profile_calls(store: &Store) -> usize {
    store
        .llm_calls(100)
        .await
        .unwrap()
        .iter()
        .filter(|c| c.purpose == "profile")
        .count()
}

#[tokio::test]
async fn profiles_are_written_once_and_rewritten_only_when_their_items_change() {
    let (_dir, store) = open().await;
    let e = embedder();
    let items = profile_items();
    seed(&store, &e, &items).await;
    let d = distiller(&store, provider(), 50);
    let now = chrono::Utc::now();

    let first = d.sleep(now).await.unwrap();
    assert_eq!(first.calls, 2, "{first:?}");
    let mut written = first.profiles.clone();
    written.sort();
    assert_eq!(
        written,
        vec!["machine".to_owned(), format!("project:{RELAY}")]
    );
    assert_eq!(profile_calls(&store).await, 2);
    let relay = store
        .profile(ProfileKind::Project, RELAY)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(relay.item_count, 2);
    let dates: Vec<&str> = relay.timeline.iter().map(|t| t.date.as_str()).collect();
    assert_eq!(dates, vec!["2026-03-02", "2026-03-02"], "{relay:?}");
    assert!(relay.timeline[0].text.contains("7420"), "{relay:?}");
    let machine = store
        .profile(ProfileKind::Machine, "machine")
        .await
        .unwrap()
        .unwrap();
    assert!(machine.timeline[0].text.contains("Helix"));

    // Nothing changed (a use is not a change): no model call the second night.
    event(&store, ItemEventKind::Used, &items[0]).await;
    let second = d.sleep(now).await.unwrap();
    assert_eq!(
        (second.calls, second.profiles_unchanged),
        (0, 2),
        "{second:?}"
    );
    assert!(second.profiles.is_empty());
    assert_eq!(profile_calls(&store).await, 2, "the ledger has no new call");

    // An item of the project changes: only the project's profile is rewritten.
    let mut moved = items[0].clone();
    moved.title = "Relay listens on port 7421".into();
    moved.summary =
        "The relay service in acme/relay listens on TCP port 7421 since April (config/relay.toml)."
            .into();
    event(&store, ItemEventKind::Updated, &moved).await;
    let third = d.sleep(now).await.unwrap();
    assert_eq!(
        third.profiles,
        vec![format!("project:{RELAY}")],
        "{third:?}"
    );
    assert_eq!((third.calls, third.profiles_unchanged), (1, 1));
    let relay = store
        .profile(ProfileKind::Project, RELAY)
        .await
        .unwrap()
        .unwrap();
    assert!(
        relay.timeline.iter().any(|t| t.text.contains("7421")),
        "{relay:?}"
    );

    // Clear removes scores and profiles with the logs.
    assert!(!store.item_scores().await.unwrap().is_empty());
    store.clear(false).await.unwrap();
    assert!(store.item_scores().await.unwrap().is_empty());
    assert!(store.profiles().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_spent_budget_stops_the_profiles_for_the_night() {
    let (_dir, store) = open().await;
    let e = embedder();
    seed(&store, &e, &profile_items()).await;
    let d = distiller(&store, provider(), 1);
    let report = d.sleep(chrono::Utc::now()).await.unwrap();
    assert_eq!(report.calls, 1, "{report:?}");
    assert_eq!((report.profiles.len(), report.profiles_left), (1, 1));
    assert!(
        report
            .stopped
            .as_deref()
            .unwrap_or_default()
            .contains("budget"),
        "{report:?}"
    );
    assert_eq!(store.profiles().await.unwrap().len(), 1);
    assert_eq!(report.rescored, 3, "the rest of the night ran");
}

/// The figures: sleep over 2,000 items (synthetic vectors in 20 clusters, 20 projects and
/// the machine), first night and second night. Run with `--ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement: cargo test -p cairn-distill --test sleep -- --ignored --nocapture"]
async fn figures_for_two_thousand_items() {
    let (_dir, store) = open().await;
    let e = embedder();
    let model = model_id(&e);
    let dim = e.dim();
    let n = 2_000usize;
    let now = chrono::Utc::now();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
    };
    let centres: Vec<Vec<f32>> = (0..20).map(|_| (0..dim).map(|_| rnd()).collect()).collect();
    let t = Instant::now();
    let mut batch = Vec::with_capacity(n);
    for k in 0..n {
        let project = if k % 21 == 20 {
            None
        } else {
            Some(format!("github.com/acme/p{}", k % 21))
        };
        let said = now - chrono::Duration::days(i64::try_from(k % 400).unwrap());
        let it = item(
            &format!("i_{k:05}"),
            [
                ItemKind::Fact,
                ItemKind::Decision,
                ItemKind::Episode,
                ItemKind::Preference,
            ][k % 4],
            u8::try_from(1 + k % 5).unwrap(),
            said,
            project.as_deref(),
            &format!("Item {k}"),
            &format!("Synthetic item number {k}."),
        );
        event(&store, ItemEventKind::Created, &it).await;
        let c = &centres[k % 20];
        batch.push(StoredVector {
            owner: it.id.as_str().to_owned(),
            kind: VectorKind::Summary,
            ord: 0,
            model: model.clone(),
            vector: c.iter().map(|x| x + 0.25 * rnd()).collect(),
        });
    }
    store.put_vectors(&batch).await.unwrap();
    eprintln!("seeded {n} items in {:?}", t.elapsed());
    let d = distiller(&store, Arc::new(scripted()), 1_000);
    let show = |night: &str, r: &SleepReport, took: Duration| {
        eprintln!(
            "{night}: {took:?} (relate {} ms, score+archive {} ms, profiles {} ms): {} active, \
             {} related, {} re-scored, {} archived, {} profiles written, {} unchanged, {} calls",
            r.took_ms[0],
            r.took_ms[1],
            r.took_ms[2],
            r.active,
            r.related,
            r.rescored,
            r.archived.len(),
            r.profiles.len(),
            r.profiles_unchanged,
            r.calls
        );
    };
    let t = Instant::now();
    let first = d.sleep(now).await.unwrap();
    show("first night", &first, t.elapsed());
    assert_eq!(first.rescored, n);
    assert_eq!(first.profiles.len(), 21);
    let t = Instant::now();
    let second = d.sleep(now).await.unwrap();
    show("second night", &second, t.elapsed());
    assert_eq!((second.related, second.calls), (0, 0));
}
