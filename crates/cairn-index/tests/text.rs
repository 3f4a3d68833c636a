//! The BM25 index against a real store and real index files.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
use cairn_core::{Chunk, NewRecord, Outcome, RecordId};
use cairn_index::{TextIndex, TextQuery};
use cairn_store::Store;

fn record(
    i: usize,
    framework: &str,
    project: &str,
    days_ago: i64,
    text: &str,
) -> (NewRecord, Vec<Chunk>) {
    let id = RecordId::derive(framework, "s1", &i.to_string());
    let rec = NewRecord {
        id: id.clone(),
        framework: framework.into(),
        session_id: format!("s{}", i % 3),
        project: Some(project.into()),
        cwd: None,
        model: None,
        outcome: Outcome::Success,
        started_at: chrono::Utc::now() - chrono::Duration::days(days_ago),
        ended_at: None,
        request: text.into(),
        author: None,
        text: text.into(),
        content: serde_json::json!({}),
        source: None,
    };
    (
        rec,
        vec![Chunk {
            record_id: id,
            ord: 0,
            start: 0,
            text: text.into(),
        }],
    )
}

async fn fixture(dir: &std::path::Path) -> (Store, TextIndex) {
    let store = Store::open(&dir.join("cairn.db")).await.unwrap();
    store
        .append_records(&[
            record(
                1,
                "codex",
                "github.com/acme/api",
                1,
                "the postgres migration failed with a lock timeout",
            ),
            record(
                2,
                "claude-code",
                "github.com/acme/web",
                40,
                "migrate the web app to vite",
            ),
            record(
                3,
                "claude-code",
                "github.com/acme/api",
                2,
                "Lock timeout again: raise statement_timeout",
            ),
            record(
                4,
                "codex",
                "github.com/acme/api",
                90,
                "unrelated: rename the button",
            ),
        ])
        .await
        .unwrap();
    let index = TextIndex::open(&dir.join("index/text")).unwrap();
    assert_eq!(index.sync(&store).await.unwrap(), 4);
    (store, index)
}

#[tokio::test]
async fn finds_records_by_raw_text_with_passages_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let (store, index) = fixture(dir.path()).await;
    let hits = index.search(&TextQuery::new("lock timeout", 10)).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(
        hits.iter()
            .all(|h| h.passage.to_lowercase().contains("timeout"))
    );
    let mut q = TextQuery::new("lock timeout", 10);
    q.framework = Some("codex".into());
    let hits = index.search(&q).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].framework, "codex");
    assert_eq!(hits[0].project.as_deref(), Some("github.com/acme/api"));
    let mut q = TextQuery::new("migrate OR migration", 10);
    q.project = Some("github.com/acme/web".into());
    assert_eq!(index.search(&q).unwrap().len(), 1);
    // Case and accents fold.
    assert_eq!(index.search(&TextQuery::new("LÖCK", 10)).unwrap().len(), 2);
    // A second sync adds nothing; a new record is found at once after the next one.
    assert_eq!(index.sync(&store).await.unwrap(), 0);
    store
        .append_records(&[record(5, "gemini-cli", "x", 0, "zebra quartz")])
        .await
        .unwrap();
    assert_eq!(index.sync(&store).await.unwrap(), 1);
    assert_eq!(index.search(&TextQuery::new("zebra", 5)).unwrap().len(), 1);
    // Bad syntax is read leniently, an empty query is refused.
    assert!(
        index
            .search(&TextQuery::new("\"unbalanced (lock", 5))
            .is_ok()
    );
    assert!(index.search(&TextQuery::new("   ", 5)).is_err());
}

#[tokio::test]
async fn a_date_range_puts_records_inside_it_first_and_the_rest_follow() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = fixture(dir.path()).await;
    let mut q = TextQuery::new("migration OR migrate OR timeout", 10);
    q.since = Some(chrono::Utc::now() - chrono::Duration::days(50));
    q.until = Some(chrono::Utc::now() - chrono::Duration::days(30));
    let hits = index.search(&q).unwrap();
    assert_eq!(hits.len(), 3);
    assert!(hits[0].passage.contains("vite"), "{hits:?}");
    assert!(hits[0].in_range);
    assert!(!hits[1].in_range && !hits[2].in_range);
}

#[tokio::test]
async fn reopening_keeps_the_position_and_a_corrupt_index_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (store, index) = fixture(dir.path()).await;
    let seq = index.indexed_seq();
    assert!(seq > 0);
    drop(index);
    let index = TextIndex::open(&dir.path().join("index/text")).unwrap();
    assert_eq!(index.indexed_seq(), seq);
    assert_eq!(index.sync(&store).await.unwrap(), 0);
    drop(index);
    fs_err::write(dir.path().join("index/text/meta.json"), b"{ not json").unwrap();
    let index = TextIndex::open(&dir.path().join("index/text")).unwrap();
    assert_eq!(index.indexed_seq(), 0, "started afresh");
    assert_eq!(
        index.sync(&store).await.unwrap(),
        4,
        "refilled from the log"
    );
    assert_eq!(index.search(&TextQuery::new("vite", 5)).unwrap().len(), 1);
}

#[tokio::test]
async fn clear_leaves_no_indexed_text_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = fixture(dir.path()).await;
    // Stored text is compressed, so look for the files that hold it: every segment file.
    let segment_files = || {
        let mut names: Vec<String> = fs_err::read_dir(dir.path().join("index/text"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && n != "meta.json")
            .collect();
        names.sort();
        names
    };
    assert!(
        segment_files().iter().any(|n| n.ends_with(".store")),
        "{:?}",
        segment_files()
    );
    index.clear().unwrap();
    assert_eq!(segment_files(), Vec::<String>::new());
    assert_eq!(index.num_docs(), 0);
    assert_eq!(index.indexed_seq(), 0);
    assert!(
        index
            .search(&TextQuery::new("timeout", 5))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_unit_carries_its_author_and_date_and_words_are_stemmed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    let at = |s: i64| chrono::DateTime::from_timestamp(1_683_500_000 + s, 0).unwrap();
    let turn = |i: usize, author: &str, secs: i64, text: &str| {
        let (mut r, _) = record(i, "locomo", "conv-1", 0, text);
        r.session_id = "session-1".into();
        r.author = Some(author.into());
        r.started_at = at(secs);
        (r, Vec::new())
    };
    store
        .append_records(&[
            turn(1, "Caroline", 0, "How did the walrus festival go?"),
            turn(2, "Melanie", 1, "Wonderful, we stayed until sunrise."),
            turn(
                3,
                "Melanie",
                86_400 * 40,
                "I am painting a lake these days.",
            ),
        ])
        .await
        .unwrap();
    let index = TextIndex::open(&dir.path().join("text")).unwrap();
    index.sync(&store).await.unwrap();
    let ids = |q: TextQuery| -> Vec<String> {
        index
            .search(&q)
            .unwrap()
            .into_iter()
            .map(|h| h.record_id)
            .collect()
    };
    let id = |i: usize| RecordId::derive("locomo", "s1", &i.to_string()).to_string();
    // The author is found by name, the date by its month; a zero boost leaves the context
    // out.
    assert_eq!(ids(TextQuery::new("Caroline", 5)), [id(1)]);
    assert_eq!(ids(TextQuery::new("June", 5)), [id(3)]);
    let no_context = TextQuery {
        context_boost: Some(0.0),
        ..TextQuery::new("Caroline", 5)
    };
    assert!(ids(no_context).is_empty());
    // "paintings" finds "painting" (stemming).
    assert_eq!(ids(TextQuery::new("paintings", 5)), [id(3)]);
}

#[tokio::test]
async fn a_word_is_known_when_a_unit_in_reach_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = fixture(dir.path()).await;
    // Stemmed and folded like search; context (framework) counts.
    assert!(index.holds_word("Migrations", None, None).unwrap());
    assert!(index.holds_word("VITE", None, None).unwrap());
    assert!(index.holds_word("codex", None, None).unwrap());
    assert!(!index.holds_word("kestrel", None, None).unwrap());
    assert!(!index.holds_word("", None, None).unwrap());
    // A word of several tokens is held when every token is.
    assert!(index.holds_word("statement_timeout", None, None).unwrap());
    assert!(index.holds_word("vite/postgres", None, None).unwrap());
    assert!(!index.holds_word("vite/kestrel", None, None).unwrap());
    // Only what was said by then: "vite" was said 40 days ago.
    let before = chrono::Utc::now() - chrono::Duration::days(50);
    assert!(!index.holds_word("vite", Some(before), None).unwrap());
    assert!(
        index
            .holds_word("vite", Some(chrono::Utc::now()), None)
            .unwrap()
    );
    // Not the asking conversation's own words (record 2 is session s2).
    assert!(!index.holds_word("vite", None, Some("s2")).unwrap());
    assert!(index.holds_word("postgres", None, Some("s2")).unwrap());
    // Forgotten words are not known.
    index.clear().unwrap();
    assert!(!index.holds_word("postgres", None, None).unwrap());
}

/// A name's holders are records, counted in order of its words, and the count stops past
/// the cap: how rare an identifier is, cheaply.
#[tokio::test]
async fn records_holding_a_phrase_are_counted_up_to_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    let mut batch = Vec::new();
    for i in 0..6 {
        batch.push(record(
            i,
            "codex",
            "p",
            1,
            &format!("turn {i}: the pool lives in src/db/pool.rs and logs to stderr"),
        ));
    }
    batch.push(record(
        6,
        "codex",
        "p",
        1,
        "staging Postgres listens on port 6543; see DATABASE_URL",
    ));
    // The same words in another order are not the phrase.
    batch.push(record(7, "codex", "p", 1, "rs pool db src, url database"));
    // A long record: one record however many of its chunks hold the name.
    let long = format!("{} DATABASE_URL again", "filler words here ".repeat(400));
    let (rec, _) = record(8, "codex", "p", 1, &long);
    let chunks = vec![
        Chunk {
            record_id: rec.id.clone(),
            ord: 0,
            start: 0,
            text: "DATABASE_URL first".into(),
        },
        Chunk {
            record_id: rec.id.clone(),
            ord: 1,
            start: 100,
            text: "DATABASE_URL again".into(),
        },
    ];
    batch.push((rec, chunks));
    store.append_records(&batch).await.unwrap();
    let index = TextIndex::in_memory().unwrap();
    index.sync(&store).await.unwrap();
    assert_eq!(index.records_holding("src/db/pool.rs", 100).unwrap(), 6);
    assert_eq!(
        index.records_holding("src/db/pool.rs", 3).unwrap(),
        4,
        "stops past the cap"
    );
    assert_eq!(index.records_holding("DATABASE_URL", 100).unwrap(), 2);
    assert_eq!(index.records_holding("6543", 100).unwrap(), 1);
    assert_eq!(
        index.records_holding("listens on port 6543", 100).unwrap(),
        1
    );
    assert_eq!(index.records_holding("kestrel", 100).unwrap(), 0);
    assert_eq!(index.records_holding("--", 100).unwrap(), 0, "no word");
}

/// `before` is a hard cut (unlike `since` and `until`): nothing from that time on is found,
/// however well it matches.
#[tokio::test]
async fn before_cuts_what_happened_later_out_of_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = fixture(dir.path()).await;
    let all = index.search(&TextQuery::new("lock timeout", 10)).unwrap();
    assert_eq!(all.len(), 2);
    let cut = chrono::Utc::now() - chrono::Duration::hours(36);
    let hits = index
        .search(&TextQuery {
            before: Some(cut),
            ..TextQuery::new("lock timeout", 10)
        })
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].timestamp < cut);
    assert!(hits[0].passage.contains("statement_timeout"), "{hits:?}");
}

/// A bare search finds the same hits without passages, and `passages` makes the passage the
/// search would have given from the chunk's text.
#[tokio::test]
async fn a_bare_search_leaves_passages_to_the_caller_and_they_match() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, index) = fixture(dir.path()).await;
    let q = TextQuery::new("lock timeout migration", 10);
    let full = index.search(&q).unwrap();
    let bare_q = TextQuery {
        bare: true,
        ..q.clone()
    };
    let bare = index.search(&bare_q).unwrap();
    assert_eq!(full.len(), bare.len());
    let passages = index.passages(&bare_q).unwrap();
    let texts = [
        "the postgres migration failed with a lock timeout",
        "Lock timeout again: raise statement_timeout",
        "migrate the web app to vite",
    ];
    for (f, b) in full.iter().zip(&bare) {
        assert_eq!(f.record_id, b.record_id);
        assert!(b.passage.is_empty());
        let text = texts
            .iter()
            .find(|t| f.passage.contains(&t[..10]))
            .expect("a fixture text");
        assert_eq!(passages.of(text), f.passage);
    }
}
