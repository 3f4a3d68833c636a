//! Learning from use, through the service: notes logged as the turn note logs them show
//! earlier records and an item to a Claude Code session; the session's file is captured as
//! capture reads it; the outcome pass then calls an entry `used` when the agent's answer
//! reused a rare identifier of it or the agent opened it with Cairn's `open` tool, `ignored`
//! when the finished answer did neither, and leaves a turn whose answer is not finished (or
//! never came) undecided. A used item gets one `used` event, which sleep's priority counts;
//! a person's label wins over the outcome in the ranker's inputs.
use std::path::Path;
use std::time::Duration;

use cairn_core::{
    Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, NewRecord, Outcome, RecordId,
};
use serde_json::{Value, json};

use crate::turn_note::{remember, start};

const SESSION: &str = "0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d";

fn earlier(session: &str, n: u32, days_ago: i64, request: &str, answer: &str) -> NewRecord {
    NewRecord {
        id: RecordId::derive("claude-code", session, &n.to_string()),
        framework: "claude-code".into(),
        session_id: session.into(),
        project: Some("github.com/acme/billing".into()),
        cwd: None,
        model: None,
        outcome: Outcome::Success,
        started_at: chrono::Utc::now() - chrono::Duration::days(days_ago),
        ended_at: None,
        request: request.into(),
        author: Some("user".into()),
        text: format!("{request}\n\n{answer}"),
        content: json!({"steps": [{"type": "text", "text": answer}], "complete": true}),
        source: None,
    }
}

fn pool_item() -> Item {
    Item {
        id: ItemId::new("i_pool_size"),
        kind: ItemKind::Fact,
        title: "The billing pool's size".into(),
        summary: "The billing service's connection pool is capped by POOL_MAX_CONNS in \
                  src/db/pool.rs; keep it at 12."
            .into(),
        body: String::new(),
        cues: Vec::new(),
        concepts: Vec::new(),
        importance: 3,
        certainty: Certainty::Stated,
        project: Some("github.com/acme/billing".into()),
        sources: Vec::new(),
        happened_at: None,
        said_at: Some(chrono::Utc::now() - chrono::Duration::days(30)),
        ended_at: None,
        superseded_by: None,
        archived: false,
        provenance: None,
    }
}

/// A turn logged as `turn_note` logs it: its shown entries with what the note said of each.
async fn noted(
    service: &cairn_api::Service,
    turn: &str,
    at: chrono::DateTime<chrono::Utc>,
    prompt: &str,
    shown: &[(&str, &str)],
) {
    service
        .store()
        .log_injection(&cairn_store::Injection {
            turn: turn.to_owned(),
            at,
            framework: "claude-code".into(),
            session_id: Some(SESSION.into()),
            project: Some("github.com/acme/billing".into()),
            prompt: prompt.into(),
            shown: true,
            bar: 0.4,
            judged_by: Vec::new(),
            silent_because: None,
            latency_ms: 5,
            feature_names: cairn_turn::note::FEATURES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            entries: shown
                .iter()
                .map(|(id, text)| cairn_store::InjectionCandidate {
                    id: (*id).to_owned(),
                    kind: if id.starts_with("i_") {
                        "item"
                    } else {
                        "record"
                    }
                    .into(),
                    item_kind: None,
                    title: String::new(),
                    probability: 0.6,
                    shown: true,
                    features: Vec::new(),
                    text: Some((*text).to_owned()),
                })
                .collect(),
        })
        .await
        .unwrap();
}

/// The session's Claude Code file: each turn a request and the agent's steps (text, or a tool
/// call with its result), at the given times. The last turn is still being answered (its
/// text is not the end of the turn yet).
fn write_session(home: &Path, turns: &[(chrono::DateTime<chrono::Utc>, &str, Vec<Value>)]) {
    let dir = home.join(".claude/projects/-work-billing");
    fs_err::create_dir_all(&dir).unwrap();
    let ts =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut body = String::new();
    let mut line = |v: Value| {
        body.push_str(&v.to_string());
        body.push('\n');
    };
    for (i, (at, request, steps)) in turns.iter().enumerate() {
        let base = json!({"sessionId": SESSION, "cwd": "/work/billing", "isSidechain": false, "userType": "external"});
        let with = |mut v: Value| {
            for (k, x) in base.as_object().unwrap() {
                v[k] = x.clone();
            }
            v
        };
        let user = format!("u{i}");
        line(with(
            json!({"type": "user", "uuid": user, "timestamp": ts(*at),
            "message": {"role": "user", "content": request}}),
        ));
        for (j, step) in steps.iter().enumerate() {
            let t = ts(*at + chrono::Duration::seconds(5 + j as i64));
            let msg = format!("m{i}-{j}");
            if step["type"] == "tool_use" {
                line(with(
                    json!({"type": "assistant", "uuid": format!("a{i}-{j}"), "timestamp": t,
                    "message": {"id": msg, "role": "assistant", "model": "claude-test",
                        "content": [step], "stop_reason": "tool_use"}}),
                ));
                line(with(
                    json!({"type": "user", "uuid": format!("r{i}-{j}"), "timestamp": t,
                    "message": {"role": "user", "content": [{"type": "tool_result",
                        "tool_use_id": step["id"], "content": [{"type": "text", "text": "the record, whole"}]}]}}),
                ));
            } else {
                let stop = (i + 1 < turns.len()).then_some("end_turn");
                line(with(
                    json!({"type": "assistant", "uuid": format!("a{i}-{j}"), "timestamp": t,
                    "message": {"id": msg, "role": "assistant", "model": "claude-test",
                        "content": [step], "stop_reason": stop}}),
                ));
            }
        }
    }
    fs_err::write(dir.join(format!("{SESSION}.jsonl")), body).unwrap();
}

fn entry(why: &Value, id: &str) -> Value {
    why["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no entry {id} in {why}"))
}

async fn why(service: &cairn_api::Service, turn: &str) -> Value {
    service
        .dispatch("note_why", json!({"turn": turn}))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shown_entry_the_answer_reused_or_opened_is_used_and_one_it_ignored_is_ignored() {
    let home = tempfile::tempdir().unwrap();
    let fake_home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let store = service.store().clone();

    // The memory: the staging fact, an unrelated webhook change, the pricing page's fix, and
    // an item about the pool.
    let fact = earlier(
        "s-old",
        1,
        20,
        "why can't the billing service reach staging postgres?",
        "The staging Postgres listens on port 6543, not 5432: DATABASE_URL in .env.staging \
         points at 6543.",
    );
    let webhook = earlier(
        "s-webhook",
        1,
        15,
        "add a retry around the invoice webhook",
        "Added exponential backoff in src/webhook.rs (retry_invoice_webhook).",
    );
    let css = earlier(
        "s-css",
        1,
        10,
        "why is the css broken on the pricing page",
        "A missing closing brace in styles/pricing.css; fixed.",
    );
    let ids: Vec<String> = [&fact, &webhook, &css]
        .iter()
        .map(|r| r.id.as_str().to_owned())
        .collect();
    let (fact_id, webhook_id, css_id) = (&ids[0], &ids[1], &ids[2]);
    let batch = [fact.clone(), webhook.clone(), css.clone()].map(|r| (r, Vec::new()));
    store.append_records(&batch).await.unwrap();
    let item = pool_item();
    store
        .append_item_event(&NewItemEvent {
            kind: ItemEventKind::Created,
            item: item.clone(),
            reason: Some("distilled".into()),
        })
        .await
        .unwrap();
    service.sync_index().await.unwrap();

    // Four notes in one session, each logged a second after its request began.
    let base = chrono::Utc::now() - chrono::Duration::minutes(20);
    let minute = |m: i64| base + chrono::Duration::minutes(m);
    let second = chrono::Duration::seconds(1);
    let text_of = |r: &NewRecord| r.text.clone();
    let (fact_text, webhook_text, css_text) = (text_of(&fact), text_of(&webhook), text_of(&css));
    let item_text = format!("{}\n{}", item.title, item.summary);
    noted(
        &service,
        "t_one",
        minute(0) + second,
        "the billing worker times out against staging, what is wrong?",
        &[(fact_id, &fact_text), (webhook_id, &webhook_text)],
    )
    .await;
    noted(
        &service,
        "t_two",
        minute(2) + second,
        "how big should the pool be? and what broke the pricing page last time?",
        &[("i_pool_size", &item_text), (css_id, &css_text)],
    )
    .await;
    noted(
        &service,
        "t_three",
        minute(4) + second,
        "thanks, anything else to check?",
        &[(webhook_id, &webhook_text)],
    )
    .await;
    // A turn whose request never reached the session's file.
    noted(
        &service,
        "t_four",
        minute(30) + second,
        "deploy it",
        &[(fact_id, &fact_text)],
    )
    .await;

    // The agent's answers, as Claude Code writes them: the first reuses the fact's port and
    // variable (not the webhook's names); the second the item's variable, and it opens the
    // pricing record with Cairn's `open` tool; the third (the latest, still open) says nothing
    // of the webhook yet.
    write_session(
        fake_home.path(),
        &[
            (
                minute(0),
                "the billing worker times out against staging, what is wrong?",
                vec![
                    json!({"type": "text", "text": "Staging Postgres listens on port 6543, \
                    not 5432: point DATABASE_URL there and the worker connects."}),
                ],
            ),
            (
                minute(2),
                "how big should the pool be? and what broke the pricing page last time?",
                vec![
                    json!({"type": "tool_use", "id": "toolu_open", "name": "mcp__cairn__open",
                        "input": {"id": css_id}}),
                    json!({"type": "text", "text": "Keep POOL_MAX_CONNS at 12. The pricing page \
                        broke on a stylesheet typo before."}),
                ],
            ),
            (
                minute(4),
                "thanks, anything else to check?",
                vec![json!({"type": "text", "text": "Nothing else for now."})],
            ),
        ],
    );
    let mut opts = service.capture_options().unwrap();
    opts.env = cairn_capture::Env::fake(fake_home.path(), &[]);
    opts.settle = Duration::ZERO;
    cairn_capture::pass::run(&store, &opts, &|_| {})
        .await
        .unwrap();
    assert_eq!(
        store
            .session_records("claude-code", SESSION)
            .await
            .unwrap()
            .len(),
        3
    );
    service.sync_index().await.unwrap();

    let decided = service.decide_note_outcomes().await.unwrap();
    assert_eq!(
        decided, 4,
        "two used and one ignored in turn one and two; none yet after"
    );

    let one = why(&service, "t_one").await;
    let used = entry(&one, fact_id);
    assert_eq!(used["outcome"], json!("used"), "{one}");
    let because = used["outcome_because"].as_str().unwrap();
    assert!(
        because.contains("port:6543") && because.contains("DATABASE_URL"),
        "{because}"
    );
    assert_eq!(
        entry(&one, webhook_id)["outcome"],
        json!("ignored"),
        "{one}"
    );

    let two = why(&service, "t_two").await;
    assert_eq!(
        entry(&two, "i_pool_size")["outcome"],
        json!("used"),
        "{two}"
    );
    assert!(
        entry(&two, "i_pool_size")["outcome_because"]
            .as_str()
            .unwrap()
            .contains("POOL_MAX_CONNS")
    );
    let opened = entry(&two, css_id);
    assert_eq!(opened["outcome"], json!("used"), "{two}");
    assert!(
        opened["outcome_because"].as_str().unwrap().contains("open"),
        "{opened}"
    );
    // The latest answer is not finished, and the fourth turn's never came: not yet known.
    assert!(entry(&why(&service, "t_three").await, webhook_id)["outcome"].is_null());
    assert!(entry(&why(&service, "t_four").await, fact_id)["outcome"].is_null());

    // Once: a second pass decides nothing again, and the item was used exactly once.
    assert_eq!(service.decide_note_outcomes().await.unwrap(), 0);
    let uses: Vec<_> = store
        .item_history(&item.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event.kind == ItemEventKind::Used)
        .collect();
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].event.item, item, "the state is unchanged");
    // Sleep's priority counts the use: × (1 + ln 2), and the item is not archived.
    let slept = service.run_sleep().await.unwrap();
    assert!(slept.archived.is_empty());
    // Sleep's nightly ranker training found this home's few labelled entries too few.
    let said = slept.ranker.as_deref().unwrap();
    assert!(said.contains("too few to train"), "{said}");
    let status = service.dispatch("ranker_status", json!({})).await.unwrap();
    assert!(
        status["nightly"]
            .as_str()
            .unwrap()
            .contains("labelled entries"),
        "{status}"
    );
    let scores = store.item_scores().await.unwrap();
    let score = &scores[&item.id];
    assert_eq!(score.used, 1);
    let unused = cairn_distill::sleep::priority(ItemKind::Fact, 3, 30.0, 0);
    assert!(
        (score.priority / unused - (1.0 + 2f64.ln())).abs() < 0.01,
        "{} against {unused}",
        score.priority
    );

    // A person's label wins over the outcome: the opened pricing record marked not useful,
    // the ignored webhook record marked useful.
    service
        .dispatch(
            "note_feedback",
            json!({"turn": "t_two", "id": css_id, "label": "not_useful"}),
        )
        .await
        .unwrap();
    service
        .dispatch(
            "note_feedback",
            json!({"turn": "t_one", "id": webhook_id, "label": "useful"}),
        )
        .await
        .unwrap();
    let uses = store.note_uses(&ids).await.unwrap();
    let counts = |id: &str| {
        let u = uses[id];
        (u.shown, u.used, u.not_useful, u.ignored)
    };
    assert_eq!(
        counts(fact_id),
        (2, 1, 0, 0),
        "used once; turn four undecided"
    );
    assert_eq!(
        counts(webhook_id),
        (2, 1, 0, 0),
        "ignored but marked useful"
    );
    assert_eq!(counts(css_id), (1, 0, 1, 0), "opened but marked not useful");

    // The ranker's `uses` input is the used showings; those marked not useful or ignored
    // are counted beside it and lower the probability (`note::discounted`).
    let (_, cands) = service
        .turn_note_whole(cairn_core::api::TurnNoteReq {
            framework: "claude-code".into(),
            project: Some("github.com/acme/billing".into()),
            prompt: "which port does the staging postgres database listen on?".into(),
            dry_run: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let input = |id: &str, name: &str| -> Option<f64> {
        let at = cairn_turn::note::FEATURES
            .iter()
            .position(|f| *f == name)
            .unwrap();
        cands
            .iter()
            .find(|c| c.meta.id == id)
            .map(|c| c.features[at])
    };
    let not_used = |id: &str| {
        cands
            .iter()
            .find(|c| c.meta.id == id)
            .map(|c| c.signals.not_useful)
    };
    assert_eq!(input(fact_id, "uses"), Some(1.0));
    assert_eq!(not_used(fact_id), Some(0));
    // What the model says of each candidate, halved once for each showing not used beyond
    // the used ones: the fact (used once, nothing against it) keeps the model's word.
    let model = cairn_turn::ranker::Ranker::shipped().unwrap();
    let said = |id: &str| {
        let c = cands.iter().find(|c| c.meta.id == id).unwrap();
        let p = model.predict(std::slice::from_ref(&c.features)).unwrap()[0] as f32;
        (p, c.probability)
    };
    let (model_p, p) = said(fact_id);
    assert!((p - model_p).abs() < 1e-6, "{model_p} then {p}");
    // The pricing page's record, opened but marked not useful: among the candidates (the
    // memory holds three records), halved.
    assert_eq!(
        (input(css_id, "uses"), not_used(css_id)),
        (Some(0.0), Some(1))
    );
    let (model_p, p) = said(css_id);
    assert!(
        (p - model_p * cairn_turn::note::NOT_USED_FACTOR).abs() < 1e-6,
        "{model_p} then {p}"
    );
    handle.shutdown().await;
}

/// What the note said of each shown entry is kept when a real turn logs it: the outcome pass
/// reads what the agent read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_turn_keeps_what_its_note_said_of_each_shown_entry() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let fact = earlier(
        "s-old",
        1,
        20,
        "why can't the billing service reach staging postgres?",
        "The staging Postgres listens on port 6543, not 5432: DATABASE_URL in .env.staging \
         points at 6543.",
    );
    remember(&service, &[(fact, Vec::new())]).await;
    let note = service
        .dispatch(
            "turn_note",
            crate::turn_note::billing_ask(
                SESSION,
                "which port does the staging postgres database listen on?",
                None,
            ),
        )
        .await
        .unwrap();
    let turn = note["turn"].as_str().unwrap();
    let since = chrono::Utc::now() - chrono::Duration::hours(1);
    let pending = service.store().undecided_notes(since, 10).await.unwrap();
    let shown = note["entries"].as_array().unwrap();
    if shown.is_empty() {
        assert!(pending.is_empty(), "a silent turn has nothing to decide");
    } else {
        let (inj, entries) = pending.iter().find(|(i, _)| i.turn == turn).unwrap();
        assert_eq!(inj.session_id.as_deref(), Some(SESSION));
        for e in shown {
            let kept = entries
                .iter()
                .find(|k| k.id == e["id"].as_str().unwrap())
                .unwrap();
            assert_eq!(
                kept.text.as_deref().unwrap(),
                format!(
                    "{}\n{}",
                    e["title"].as_str().unwrap(),
                    e["text"].as_str().unwrap()
                )
            );
        }
    }
    handle.shutdown().await;
}
