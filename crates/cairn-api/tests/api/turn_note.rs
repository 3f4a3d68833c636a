//! The turn note through the service: the asking conversation's own records never come
//! back; at most three entries, each above the bar and cut to 420 characters, framed as
//! earlier records with their ids; every turn logged (never a dry run) with why; "not
//! useful" stored as a label and fed back as a ranker input; memory off or an empty
//! message is silent and logs nothing; a replayed turn sees nothing remembered after it;
//! Clear empties the log.
use std::path::Path;

use cairn_api::{Host, ServiceHandle, ServiceOptions};
use cairn_config::{Paths, Settings};
use cairn_core::{NewRecord, Outcome, RecordId};
use serde_json::{Value, json};

pub(crate) fn models() -> String {
    std::env::var("CAIRN_TEST_MODELS")
        .expect("CAIRN_TEST_MODELS must name the all-MiniLM-L6-v2 folder (`npm test` installs it)")
}

/// A service on a temporary home with the test embedder, no capture, no HTTP server, as a
/// one-shot CLI call runs it.
pub(crate) async fn start(home: &Path) -> ServiceHandle {
    start_as(home, Host::Direct).await
}

/// [`start`], hosted as `host` runs it (a daemon's has its workers).
pub(crate) async fn start_as(home: &Path, host: Host) -> ServiceHandle {
    let paths = Paths::under(home);
    let env = [
        ("CAIRN__MODELS__DOWNLOAD", "false"),
        ("CAIRN__MODELS__EMBEDDER", models().as_str()),
        ("CAIRN__CAPTURE__ENABLED", "false"),
        ("CAIRN__SERVICE__PORT", "0"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let loaded = Settings::load(&paths, &Default::default(), env.into_iter()).unwrap();
    ServiceHandle::start(ServiceOptions {
        paths,
        settings: loaded.settings,
        config_file: loaded.file,
        host,
        serve_http: false,
        ui_dir: None,
    })
    .await
    .unwrap()
}

/// Stores `records` and indexes them (keyword and vectors) as capture's pass would, not left
/// to the race with the indexing worker.
pub(crate) async fn remember(
    service: &cairn_api::Service,
    records: &[(NewRecord, Vec<cairn_core::Chunk>)],
) {
    service.store().append_records(records).await.unwrap();
    service.sync_index().await.unwrap();
    service.sync_dense().await.unwrap();
}

fn record(session: &str, n: u32, day: u32, request: &str, answer: &str) -> NewRecord {
    let at = chrono::DateTime::parse_from_rfc3339(&format!("2026-03-{day:02}T10:00:00Z"))
        .unwrap()
        .with_timezone(&chrono::Utc)
        + chrono::Duration::minutes(i64::from(n));
    NewRecord {
        id: RecordId::derive("claude-code", session, &n.to_string()),
        framework: "claude-code".into(),
        session_id: session.into(),
        project: Some("github.com/acme/billing".into()),
        cwd: None,
        model: None,
        outcome: Outcome::Success,
        started_at: at,
        ended_at: None,
        request: request.into(),
        author: Some("user".into()),
        text: format!("{request}\n\n{answer}"),
        content: json!({}),
        source: None,
    }
}

const FACT: &str = "The staging Postgres listens on port 6543, not 5432: the legacy cluster \
                    keeps 5432, so DATABASE_URL in .env.staging points at 6543.";

async fn seed(service: &cairn_api::Service) -> (String, String, String) {
    let earlier = record(
        "s-earlier",
        1,
        3,
        "why can't the billing service reach staging postgres?",
        FACT,
    );
    let filler = [
        (
            "add a retry around the invoice webhook",
            "Added exponential backoff to the webhook sender in src/webhook.rs.",
        ),
        (
            "rename the Customer struct to Account",
            "Renamed Customer to Account across 14 files; tests pass.",
        ),
        (
            "bump serde to 1.0.210",
            "Bumped serde; cargo update changed the lockfile only.",
        ),
        (
            "why is the css broken on the pricing page",
            "A missing closing brace in pricing.css; fixed.",
        ),
    ];
    let mut batch = vec![(earlier.clone(), Vec::new())];
    for (i, (q, a)) in filler.iter().enumerate() {
        batch.push((record("s-filler", i as u32, 4, q, a), Vec::new()));
    }
    // The asking conversation holds the same fact: it must never come back to itself.
    let own = record(
        "s-now",
        1,
        20,
        "the staging postgres port is 6543 right?",
        FACT,
    );
    // Remembered after the replayed turn's time.
    let later = record(
        "s-later",
        1,
        25,
        "move staging postgres to port 7000",
        "Moved: staging Postgres now listens on 7000.",
    );
    batch.push((own.clone(), Vec::new()));
    batch.push((later.clone(), Vec::new()));
    remember(service, &batch).await;
    (
        earlier.id.as_str().to_owned(),
        own.id.as_str().to_owned(),
        later.id.as_str().to_owned(),
    )
}

/// A turn-note request as the hook sends it for the seeded billing project, from `session`;
/// `at` replays it at that moment.
pub(crate) fn billing_ask(session: &str, prompt: &str, at: Option<&str>) -> Value {
    let mut ask = json!({
        "framework": "claude-code",
        "project": "github.com/acme/billing",
        "session_id": session,
        "prompt": prompt,
    });
    if let Some(at) = at {
        ask["at"] = json!(at);
    }
    ask
}

/// The bar the shipped ranker model was trained with.
fn model_bar() -> f64 {
    f64::from(cairn_turn::ranker::Ranker::shipped().unwrap().bar())
}

fn ids(entries: &Value) -> Vec<String> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_note_is_logged_explained_and_labelled_and_never_returns_its_own_conversation() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let (earlier, own, later) = seed(&service).await;

    let ask = billing_ask(
        "s-now",
        "which port does the staging postgres database listen on?",
        None,
    );
    let note = service.dispatch("turn_note", ask.clone()).await.unwrap();
    let turn = note["turn"].as_str().unwrap().to_owned();
    assert!(turn.starts_with("t_"), "{note}");
    let bar = note["bar"].as_f64().unwrap();
    assert!(
        (bar - model_bar()).abs() < 1e-6,
        "the shipped model's own bar, not {bar}"
    );

    // Why: the candidates, best first, the fact the best of them; the asking conversation's
    // own record is not among them.
    let why = service
        .dispatch("note_why", json!({"turn": turn}))
        .await
        .unwrap();
    let cands = ids(&why["entries"]);
    assert!(
        !cands.contains(&own),
        "the asking conversation's own record came back: {why}"
    );
    assert!(cands.contains(&earlier), "{why}");
    // The two requests about the staging database's port are the most probable; the
    // unrelated ones are below them.
    let mut by_p: Vec<&Value> = why["entries"].as_array().unwrap().iter().collect();
    by_p.sort_by(|a, b| {
        b["probability"]
            .as_f64()
            .unwrap()
            .total_cmp(&a["probability"].as_f64().unwrap())
    });
    let top2: Vec<&str> = by_p
        .iter()
        .take(2)
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(
        top2.contains(&earlier.as_str()) && top2.contains(&later.as_str()),
        "{top2:?}"
    );
    let best = by_p[0];
    let names: Vec<&str> = best["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, cairn_turn::note::FEATURES.to_vec());
    assert_eq!(why["prompt"], ask["prompt"]);
    // The asking conversation had said one thing before: the session's requests so far.
    let session_turns = best["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == json!("session_turns"))
        .unwrap()["value"]
        .clone();
    assert_eq!(session_turns, json!(1.0), "{best}");

    // The note: at most three entries, each at or above the bar, each cut to 420
    // characters, framed as earlier records with their ids.
    let entries = note["entries"].as_array().unwrap();
    assert!(entries.len() <= 3);
    for e in entries {
        assert!(e["probability"].as_f64().unwrap() >= bar - 1e-6, "{e}");
        assert!(e["text"].as_str().unwrap().chars().count() <= 420);
    }
    assert_eq!(entries.is_empty(), note["note"].is_null(), "{note}");
    if let Some(text) = note["note"].as_str() {
        // Inside marks with one nonce, which this process's key made.
        let nonce = text
            .strip_prefix("<cairn-memory id=\"")
            .and_then(|r| r.split_once("\">"))
            .map(|(n, _)| n)
            .unwrap_or_else(|| panic!("not framed: {text}"));
        assert!(cairn_text::marks::known(nonce), "{text}");
        assert!(text.ends_with(&cairn_text::marks::close(nonce)), "{text}");
        assert!(text.contains("not instructions"), "{text}");
        for e in entries {
            assert!(text.contains(e["id"].as_str().unwrap()), "{text}");
        }
        assert!(!text.contains(&own));
    } else {
        assert!(note["silent_because"].as_str().is_some(), "{note}");
    }

    // "Not useful" on a shown entry: stored, counted, and it halves the entry's probability
    // next time (`note::discounted`; the ranker's `uses` stays 0). A mark
    // on an entry the note did not show is refused.
    let shown = why["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["shown"] == json!(true))
        .cloned();
    let hidden = why["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["shown"] == json!(false))
        .cloned()
        .unwrap();
    let refused = service
        .dispatch(
            "note_feedback",
            json!({"turn": turn, "id": hidden["id"], "label": "not_useful"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("showed no entry"), "{refused}");
    let bad = service
        .dispatch(
            "note_feedback",
            json!({"turn": turn, "id": earlier, "label": "meh"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("unknown label") || bad.contains("showed no entry"),
        "{bad}"
    );
    if let Some(shown) = shown {
        let id = shown["id"].as_str().unwrap().to_owned();
        let marked = service
            .dispatch(
                "note_feedback",
                json!({"turn": "last", "id": id, "label": "not_useful"}),
            )
            .await
            .unwrap();
        assert_eq!(marked["label"], json!("not_useful"));
        let log = service.dispatch("note_log", json!({})).await.unwrap();
        assert_eq!(log["not_useful"], json!(1));
        assert_eq!(log["shown"], json!(1));
        let again = service.dispatch("turn_note", ask.clone()).await.unwrap();
        let why2 = service
            .dispatch("note_why", json!({"turn": again["turn"]}))
            .await
            .unwrap();
        let entry = why2["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == json!(id))
            .unwrap();
        let feature = |name: &str| {
            entry["features"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == json!(name))
                .unwrap()["value"]
                .clone()
        };
        // `uses` counts the showings that were used (none: this one was marked not useful);
        // the one marked not useful halves what the model says of it.
        assert_eq!(feature("uses"), json!(0.0), "{entry}");
        let (before, after) = (
            shown["probability"].as_f64().unwrap(),
            entry["probability"].as_f64().unwrap(),
        );
        assert!(
            (after - before * f64::from(cairn_turn::note::NOT_USED_FACTOR)).abs() < 1e-4,
            "{before} then {after}"
        );
        // Undo.
        let undone = service
            .dispatch(
                "note_feedback",
                json!({"turn": turn, "id": id, "label": null}),
            )
            .await
            .unwrap();
        assert!(undone["label"].is_null());
    }

    // With no session named the input is missing; replayed before the conversation's first
    // request, the request opens the conversation.
    let session_turns = |session: Option<&str>, at: Option<&str>| {
        let service = service.clone();
        let (session, at) = (session.map(str::to_owned), at.map(str::to_owned));
        async move {
            let (_, cands) = service
                .turn_note_whole(cairn_core::api::TurnNoteReq {
                    framework: "claude-code".into(),
                    project: Some("github.com/acme/billing".into()),
                    session_id: session,
                    prompt: "which port does the staging postgres database listen on?".into(),
                    dry_run: true,
                    at,
                    ..Default::default()
                })
                .await
                .unwrap();
            let at = cairn_turn::note::FEATURES
                .iter()
                .position(|f| *f == "session_turns")
                .unwrap();
            cands[0].features[at]
        }
    };
    assert!(session_turns(None, None).await.is_nan());
    assert_eq!(
        session_turns(Some("s-now"), Some("2026-03-20T09:00:00Z")).await,
        0.0
    );
    assert_eq!(session_turns(Some("s-now"), None).await, 1.0);

    // A dry run logs nothing; a replayed turn sees nothing remembered after it.
    let before = service.dispatch("note_log", json!({})).await.unwrap()["turns"].clone();
    let (_, cands) = service
        .turn_note_whole(cairn_core::api::TurnNoteReq {
            framework: "claude-code".into(),
            prompt: "what port is staging postgres on now?".into(),
            dry_run: true,
            at: Some("2026-03-21T00:00:00Z".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        cands.iter().all(|c| c.meta.id != later),
        "a record from after the turn came back"
    );
    assert!(cands.iter().any(|c| c.meta.id == earlier));
    let after = service.dispatch("note_log", json!({})).await.unwrap()["turns"].clone();
    assert_eq!(before, after, "a dry run was logged");

    // A prompt naming someone or something the memory never saw needs a stronger match:
    // the bar rises to BAR_UNKNOWN_NAMES. Names it knows ("Postgres", "DATABASE_URL") leave
    // the bar as it was; the ranker gets the share of words and of names known.
    let asked = |prompt: &'static str| {
        let service = service.clone();
        async move {
            service
                .turn_note_whole(cairn_core::api::TurnNoteReq {
                    framework: "claude-code".into(),
                    project: Some("github.com/acme/billing".into()),
                    session_id: Some("s-now".into()),
                    prompt: prompt.into(),
                    dry_run: true,
                    ..Default::default()
                })
                .await
                .unwrap()
        }
    };
    let input = |cands: &[cairn_turn::Candidate], name: &str| -> f64 {
        let at = cairn_turn::note::FEATURES
            .iter()
            .position(|f| *f == name)
            .unwrap();
        cands[0].features[at]
    };
    let (note, cands) =
        asked("which port does Kestrel's staging postgres database listen on?").await;
    // The bar is raised to the unknown-names bar (or stays the model's, if that is higher).
    let raised = cairn_turn::note::BAR_UNKNOWN_NAMES.max(model_bar() as f32);
    assert!((note.bar - raised).abs() < 1e-6, "{}", note.bar);
    assert_eq!(input(&cands, "names_known"), 0.0);
    let unknown_words = input(&cands, "query_known");
    for prompt in [
        "which port does the staging Postgres database listen on?",
        "which port does DATABASE_URL in .env.staging name?",
    ] {
        let (note, cands) = asked(prompt).await;
        assert!(
            (f64::from(note.bar) - model_bar()).abs() < 1e-6,
            "{prompt}: {}",
            note.bar
        );
        assert_eq!(input(&cands, "names_known"), 1.0, "{prompt}");
    }
    let (_, cands) = asked("which port does the staging postgres database listen on?").await;
    assert!(input(&cands, "names_known").is_nan(), "nothing named");
    assert!(
        input(&cands, "query_known") > unknown_words,
        "{} <= {unknown_words}",
        input(&cands, "query_known")
    );

    // Memory off, or an empty message: silent, nothing logged.
    service
        .dispatch("memory_set", json!({"enabled": false}))
        .await
        .unwrap();
    let off = service.dispatch("turn_note", ask.clone()).await.unwrap();
    assert!(off["note"].is_null());
    assert_eq!(off["silent_because"], json!("memory is off"));
    service
        .dispatch("memory_set", json!({"enabled": true}))
        .await
        .unwrap();
    let empty = service
        .dispatch("turn_note", json!({"framework": "codex", "prompt": "  "}))
        .await
        .unwrap();
    assert!(empty["note"].is_null());
    assert_eq!(
        service.dispatch("note_log", json!({})).await.unwrap()["turns"],
        after
    );
    let unknown = service
        .dispatch("note_why", json!({"turn": "t_nope"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("t_nope"), "{unknown}");

    // Clear empties the log (the prompts are the user's words).
    service.dispatch("clear", json!({})).await.unwrap();
    let log = service.dispatch("note_log", json!({})).await.unwrap();
    assert_eq!(log["turns"], json!(0));
    assert!(log["injections"].as_array().unwrap().is_empty());
    handle.shutdown().await;
}

use crate::fake_judge::fake_judge;

async fn use_judge(service: &cairn_api::Service, base: &str, on: bool, ms: u64) {
    service
        .dispatch(
            "llm_settings_set",
            json!({"provider": "openai", "model": "qwen2.5:3b", "base_url": base,
                   "model_path": "", "daily_calls": 200, "daily_usd": 1.0,
                   "judge": on, "judge_ms": ms}),
        )
        .await
        .unwrap();
}

/// A logged turn's entry: its probability and its named inputs (none: not logged).
async fn logged(service: &cairn_api::Service, turn: &Value, id: &str) -> Option<(f64, Vec<Value>)> {
    let why = service
        .dispatch("note_why", json!({"turn": turn}))
        .await
        .unwrap();
    let e = why["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)?
        .clone();
    Some((
        e["probability"].as_f64().unwrap(),
        e["features"].as_array().unwrap().clone(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llm_judge_joins_only_when_on_and_a_late_answer_is_dropped() {
    use std::sync::atomic::Ordering;
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let (earlier, _own, later) = seed(&service).await;
    let ask = billing_ask(
        "s-now",
        "which port does the staging postgres database listen on?",
        Some("2026-03-21T09:00:00Z"),
    );

    // Off (the default): no call, the model's bar.
    let (base, calls) = fake_judge(std::time::Duration::ZERO);
    use_judge(&service, &base, false, 2_000).await;
    let off = service.dispatch("turn_note", ask.clone()).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the judge is off: {off}");
    assert!(!off["judged_by"].to_string().contains("llm"), "{off}");
    assert!(
        (off["bar"].as_f64().unwrap() - model_bar()).abs() < 1e-6,
        "{off}"
    );

    // On: one call; its answers are combined with the ranker's probabilities (the judge is
    // not a ranker input: the ranker never saw one in training), so the judged fact is shown
    // and the judged-unneeded are not.
    use_judge(&service, &base, true, 5_000).await;
    let note = service.dispatch("turn_note", ask.clone()).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "{note}");
    assert_eq!(note["judged_by"], json!(["llm"]), "{note}");
    // The judge does not move the bar: the model was never trained with one.
    assert!(
        (note["bar"].as_f64().unwrap() - model_bar()).abs() < 1e-6,
        "{note}"
    );
    assert_eq!(ids(&note["entries"]), vec![earlier.clone()], "{note}");
    let (p_on, features) = logged(&service, &note["turn"], &earlier).await.unwrap();
    let (p_off, _) = logged(&service, &off["turn"], &earlier).await.unwrap();
    assert!(p_on > p_off, "the judge's 0.93 lifts {p_off} to {p_on}");
    assert!(
        !features.iter().any(|f| f["name"] == "llm_judge"),
        "{features:?}"
    );
    // The replayed turn's time: the later move is not a candidate at all.
    assert!(logged(&service, &note["turn"], &later).await.is_none());
    // The call is in the ledger with its purpose.
    let status = service.dispatch("llm_status", json!({})).await.unwrap();
    assert!(
        status["recent"].to_string().contains("\"judge\""),
        "{status}"
    );
    assert_eq!(status["judge"], true);

    // A judge slower than its deadline: the turn does not wait for it, and the note goes
    // out as the ranker alone decides, with the model's bar.
    let (slow, slow_calls) = fake_judge(std::time::Duration::from_secs(20));
    use_judge(&service, &slow, true, 300).await;
    let started = std::time::Instant::now();
    let note = service.dispatch("turn_note", ask.clone()).await.unwrap();
    let took = started.elapsed();
    assert_eq!(slow_calls.load(Ordering::SeqCst), 1);
    assert!(!note["judged_by"].to_string().contains("llm"), "{note}");
    assert!(
        (note["bar"].as_f64().unwrap() - model_bar()).abs() < 1e-6,
        "{note}"
    );
    assert!(
        took < std::time::Duration::from_secs(10),
        "the turn waited for the late judge: {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judge_never_sees_a_secret_of_the_live_prompt() {
    use std::sync::atomic::Ordering;
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    seed(&service).await;
    // Built from parts so no whole token sits in the source.
    let token = format!("ghp_{}", "k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio");
    let password = "Qz8vLm2Rt5Wx";
    let (base, calls, prompts) = crate::fake_judge::recording_judge(std::time::Duration::ZERO);
    use_judge(&service, &base, true, 5_000).await;
    let prompt = format!(
        "which port does the staging postgres database listen on? I have \
         DATABASE_URL=postgres://app:{password}@db:6543/billing and GITHUB_TOKEN={token}"
    );
    let ask = billing_ask("s-now", &prompt, Some("2026-03-21T09:00:00Z"));
    let note = service.dispatch("turn_note", ask).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "{note}");
    let sent = prompts.lock().unwrap().join("\n");
    // The message itself did reach the judge, with its secrets redacted.
    assert!(
        sent.contains("staging postgres database listen on"),
        "{sent}"
    );
    assert!(sent.contains("[REDACTED:github-token]"), "{sent}");
    assert!(
        sent.contains("[REDACTED:connection-string-password]"),
        "{sent}"
    );
    assert!(
        !sent.contains(&token[4..]) && !sent.contains(password),
        "{sent}"
    );
    handle.shutdown().await;
}

/// A named input of a `note_why` entry.
fn feature(entry: &Value, name: &str) -> Option<f64> {
    entry["features"]
        .as_array()?
        .iter()
        .find(|f| f["name"] == name)?["value"]
        .as_f64()
}

/// A request that names nothing ("next"): the project's latest records before the turn are
/// among the note's candidates though no search finds them, the newer scored higher;
/// the asking conversation's own records, another project's newer record and what was
/// remembered after a replayed turn are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_names_nothing_has_the_projects_latest_records_among_its_candidates() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let (earlier, own, later) = seed(&service).await;
    // Another project's record, newer than every record of billing before the turn.
    let mut other = record(
        "s-other",
        1,
        10,
        "tidy the readme install section",
        "Tidied the README.",
    );
    other.project = Some("github.com/acme/website".into());
    remember(&service, &[(other.clone(), Vec::new())]).await;

    let note = service
        .dispatch(
            "turn_note",
            billing_ask("s-now", "next", Some("2026-03-21T00:00:00Z")),
        )
        .await
        .unwrap();
    let why = service
        .dispatch("note_why", json!({"turn": note["turn"]}))
        .await
        .unwrap();
    let cands = ids(&why["entries"]);
    // Billing's five records before the turn, its asking session left out: the earlier fact
    // and the four filler requests (the newest the last filler, day 4).
    let newest = RecordId::derive("claude-code", "s-filler", "3");
    let billing: Vec<String> = (0..4)
        .map(|n| {
            RecordId::derive("claude-code", "s-filler", &n.to_string())
                .as_str()
                .to_owned()
        })
        .chain([earlier])
        .collect();
    for id in &billing {
        assert!(cands.contains(id), "{id} is not a candidate: {why}");
    }
    for id in [&own, &later, &other.id.as_str().to_owned()] {
        assert!(!cands.contains(id), "{id} is a candidate: {why}");
    }
    let fused = |id: &str| {
        why["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .and_then(|e| feature(e, "fused"))
            .unwrap_or(0.0)
    };
    // The filler requests share no word with the question (the earlier fact is found by
    // the asking conversation's previous request, which joins a short prompt): lifted by
    // order, the newest most.
    for pair in billing[..4].windows(2).rev() {
        let (older, newer) = (&pair[0], &pair[1]);
        assert!(
            fused(newer) > fused(older) && fused(older) > 0.0,
            "{newer} ({}) is not scored above {older} ({}): {why}",
            fused(newer),
            fused(older)
        );
    }
    assert_eq!(billing[3], newest.as_str());
}
