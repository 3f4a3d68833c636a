//! The user's own agent CLIs in non-interactive mode, with their fast model — run so that a
//! call can never act.
//!
//! What Cairn sends a model holds text other people wrote (captured conversations, tool
//! output), so a call must not be able to run a command, read a file, reach the network or
//! start anything. Each CLI therefore runs:
//! - with every tool, MCP server, extension, plugin, skill and hook turned off by its own
//!   flags and settings (each checked against the CLI's source and recorded, with the version,
//!   in `docs/security/model-providers.md`);
//! - with a configuration home of its own, `<data>/model-calls/<program>-home` (mode 0700),
//!   named by the CLI's variable for it (`CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`): the user's
//!   settings, MCP servers, extensions and hooks are never read. It holds Cairn's lock-down
//!   files and the sign-in the CLI needs, nothing else: whatever else appears that could add a
//!   capability is removed before each call;
//! - with a cleared environment: only the variables a program needs to start and reach its
//!   API ([`BASE_ENV`]), the CLI's own sign-in variables, the configuration home, and
//!   [`cairn_config::RECURSION_GUARD`] (Cairn's hooks see it and stay quiet);
//! - with every value passed as `--flag=value`, so a value can never be read as a flag, and
//!   `llm.model` checked first ([`cairn_config::model_name_problem`]).
//!
//! Codex cannot be run this way (`codex exec` always offers the model a shell and more), so it
//! is refused, with the safer providers named ([`CODEX_REFUSAL`]).
//!
//! Calls run in Cairn's own working folder (`Paths::llm_workdir`), which capture never reads;
//! the prompt goes on standard input (no argument-length limit, nothing in the process list).
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Provider, ProviderError, Reply, Request, Usage, short};

/// Why `codex-cli` is refused, naming the providers to use instead.
pub const CODEX_REFUSAL: &str = "llm.provider \"codex-cli\" is refused: Codex cannot be run \
     without tools. `codex exec` always offers the model a shell, which a headless call runs \
     without asking, and its read-only sandbox still reads every file; web search, MCP servers, \
     apps and browser tools come with it. Text captured from a conversation could then make it \
     read your credentials into a memory item. Choose \"claude-cli\" (Claude Code, run with no \
     tools), \"local\" (a GGUF model run inside Cairn) or an API key provider (\"anthropic\", or \
     \"openai\" for any OpenAI-compatible endpoint).";

/// Variables every CLI gets from Cairn's environment when they are set: what a program needs
/// to start, find its files and certificates, and go through the user's proxy. Nothing that
/// can load code (`NODE_OPTIONS`, …) or configure a CLI.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    // Windows: where the system, the user's profile and the program data are.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
];

/// Claude Code's sign-in variables (an API key, a long-lived token from `claude setup-token`,
/// Bedrock, Vertex AI, Foundry), passed on when set.
const CLAUDE_AUTH_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_FOUNDRY_RESOURCE",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLOUD_ML_REGION",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// Gemini CLI's sign-in variables (API keys, Vertex AI, Code Assist), and what it needs to
/// reach the OS keychain where it keeps a Google sign-in.
const GEMINI_AUTH_ENV: &[&str] = &[
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_FORCE_FILE_STORAGE",
    "GEMINI_FORCE_ENCRYPTED_FILE_STORAGE",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
];

/// Entries of Claude Code's configuration home that could add a capability (settings with
/// hooks or MCP servers, plugins, agents, commands, skills, memory files); removed before
/// each call. The sign-in (`.credentials.json`) and its state file (`.claude.json`) stay.
const CLAUDE_HOME_REMOVED: &[&str] = &[
    "settings.json",
    "settings.local.json",
    "CLAUDE.md",
    ".mcp.json",
    "plugins",
    "agents",
    "commands",
    "skills",
    "hooks",
    "rules",
    "output-styles",
    "workflows",
];

/// The same for Gemini CLI's `.gemini` folder (Cairn rewrites `settings.json` itself).
const GEMINI_HOME_REMOVED: &[&str] = &[
    "extensions",
    "skills",
    "agents",
    "commands",
    "policies",
    "hooks",
    "GEMINI.md",
    "AGENTS.md",
    ".env",
    "mcp-oauth-tokens.json",
    "mcp-oauth-tokens-v2.json",
];

/// Project files a CLI would read from its working folder (Cairn's own; nothing should be
/// there): removed before each call.
const WORKDIR_REMOVED: &[&str] = &[
    ".claude",
    ".mcp.json",
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".gemini",
    "GEMINI.md",
    "AGENTS.md",
    ".agents",
    ".env",
];

/// The Google sign-in files Gemini CLI reads from its `.gemini` folder (linked, never
/// copied, on Unix).
const GEMINI_CREDENTIALS: &[&str] = &["oauth_creds.json", "gemini-credentials.json"];

/// Gemini CLI's policy file, relative to the working folder: deny every tool.
const GEMINI_POLICY: &str = "cairn-no-tools.toml";

const GEMINI_POLICY_TEXT: &str = "# Written by Cairn before each model call: no tool may run.\n\
     [[rule]]\n\
     toolName = \"*\"\n\
     decision = \"deny\"\n\
     priority = 999\n\
     denyMessage = \"Cairn's model calls run with no tools.\"\n";

/// Which agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliKind {
    /// Claude Code: `claude -p --output-format=json --tools= …`.
    Claude,
    /// Codex: refused (see [`CODEX_REFUSAL`]).
    Codex,
    /// Gemini CLI: `gemini --output-format=json --prompt=… `, every tool denied.
    Gemini,
}

impl CliKind {
    /// The settings name of the provider.
    pub fn provider_name(self) -> &'static str {
        match self {
            Self::Claude => "claude-cli",
            Self::Codex => "codex-cli",
            Self::Gemini => "gemini-cli",
        }
    }

    /// The program looked for on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
        }
    }

    /// The fast model used when `llm.model` is empty.
    pub fn default_model(self) -> &'static str {
        match self {
            Self::Claude => "haiku",
            Self::Codex => "",
            Self::Gemini => "flash-lite",
        }
    }

    /// Why Cairn will not call this CLI, when it will not.
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            Self::Codex => Some(CODEX_REFUSAL),
            Self::Claude | Self::Gemini => None,
        }
    }

    /// The variable naming the CLI's configuration home.
    pub fn home_variable(self) -> &'static str {
        match self {
            Self::Claude => "CLAUDE_CONFIG_DIR",
            Self::Codex => "CODEX_HOME",
            Self::Gemini => "GEMINI_CLI_HOME",
        }
    }
}

/// An agent CLI as a provider.
#[derive(Debug, Clone)]
pub struct AgentCli {
    kind: CliKind,
    program: PathBuf,
    model: String,
    workdir: PathBuf,
    parent_env: Option<Vec<(OsString, OsString)>>,
}

impl AgentCli {
    /// The CLI `kind` run from `program`, calling `model` (`""` = its fast default), in
    /// `workdir` (created when missing). The model name is checked before each call.
    pub fn new(kind: CliKind, program: PathBuf, model: &str, workdir: PathBuf) -> Self {
        let model = if model.is_empty() {
            kind.default_model().to_owned()
        } else {
            model.to_owned()
        };
        Self {
            kind,
            program,
            model,
            workdir,
            parent_env: None,
        }
    }

    /// Chooses the call's environment from `vars` instead of this process's environment (a
    /// caller that runs on behalf of another environment; tests).
    pub fn with_parent_env(mut self, vars: Vec<(OsString, OsString)>) -> Self {
        self.parent_env = Some(vars);
        self
    }

    /// The CLI's own configuration home: `<workdir>/<program>-home`.
    pub fn home(&self) -> PathBuf {
        self.workdir.join(format!("{}-home", self.kind.program()))
    }

    /// The arguments of one call (the prompt goes on standard input). Empty for a refused
    /// CLI, which is never run.
    pub fn args(&self) -> Vec<String> {
        let model = format!("--model={}", self.model);
        // Relative to the working folder, so no character of the data folder's path (a comma
        // splits Gemini CLI's lists) reaches the command line.
        let policy = format!("{}-home/{GEMINI_POLICY}", self.kind.program());
        let list: Vec<String> = match self.kind {
            CliKind::Claude => vec![
                "-p".into(),
                "--output-format=json".into(),
                "--no-session-persistence".into(),
                // Customisations off: CLAUDE.md, skills, plugins, hooks, MCP servers, agents.
                "--safe-mode".into(),
                // MCP servers only from --mcp-config, which is never given.
                "--strict-mcp-config".into(),
                "--disable-slash-commands".into(),
                // Whatever is not allowed beforehand is denied; nothing is allowed.
                "--permission-mode=dontAsk".into(),
                // No built-in tool.
                "--tools=".into(),
                model,
            ],
            CliKind::Codex => Vec::new(),
            CliKind::Gemini => vec![
                "--output-format=json".into(),
                // Cairn's working folder is its own (a headless call in a folder not trusted
                // stops); the project files a CLI reads there are removed before each call.
                "--skip-trust".into(),
                "--approval-mode=default".into(),
                "--extensions=none".into(),
                // Deny every tool, at the user tier and at the admin tier.
                format!("--policy={policy}"),
                format!("--admin-policy={policy}"),
                model,
                "--prompt=Answer the request above as it says.".into(),
            ],
        };
        list
    }

    fn parent_env(&self) -> Vec<(OsString, OsString)> {
        match &self.parent_env {
            Some(v) => v.clone(),
            None => std::env::vars_os().collect(),
        }
    }

    /// The environment of one call: [`BASE_ENV`] and the CLI's sign-in variables taken from
    /// the parent environment, then the configuration home and the recursion guard.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let auth: &[&str] = match self.kind {
            CliKind::Claude => CLAUDE_AUTH_ENV,
            CliKind::Gemini => GEMINI_AUTH_ENV,
            CliKind::Codex => &[],
        };
        let mut env: Vec<(OsString, OsString)> = self
            .parent_env()
            .into_iter()
            .filter(|(k, _)| {
                BASE_ENV
                    .iter()
                    .chain(auth)
                    .any(|allowed| same_var(k, allowed))
            })
            .collect();
        let home = self.home().into_os_string();
        let mut set = |k: &str, v: OsString| {
            env.retain(|(name, _)| !same_var(name, k));
            env.push((k.into(), v));
        };
        set(cairn_config::RECURSION_GUARD, "1".into());
        set("NO_COLOR", "1".into());
        match self.kind {
            CliKind::Claude => {
                set("CLAUDE_CONFIG_DIR", home);
                set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into());
                set("ENABLE_CLAUDEAI_MCP_SERVERS", "false".into());
            }
            CliKind::Gemini => {
                let settings = self.gemini_dir().join("settings.json").into_os_string();
                set("GEMINI_CLI_HOME", home);
                set("GEMINI_CLI_SYSTEM_SETTINGS_PATH", settings.clone());
                set("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", settings);
            }
            CliKind::Codex => {}
        }
        env
    }

    fn gemini_dir(&self) -> PathBuf {
        self.home().join(".gemini")
    }

    /// The user's own Gemini CLI folder (`$GEMINI_CLI_HOME/.gemini` or `~/.gemini`), where the
    /// sign-in is read from; never Cairn's.
    fn user_gemini_dir(&self) -> Option<PathBuf> {
        let env = self.parent_env();
        let get = |name: &str| {
            env.iter()
                .find(|(k, v)| same_var(k, name) && !v.is_empty())
                .map(|(_, v)| PathBuf::from(v))
        };
        let base = get("GEMINI_CLI_HOME")
            .or_else(|| get("HOME"))
            .or_else(|| get("USERPROFILE"))?;
        let dir = base.join(".gemini");
        (dir != self.gemini_dir()).then_some(dir)
    }

    /// Makes the configuration home ready: created with mode 0700, anything that could add a
    /// capability removed, Cairn's lock-down files written, the sign-in linked.
    fn prepare(&self) -> Result<(), ProviderError> {
        let name = self.kind.provider_name();
        let fail = |what: &str, path: &Path, e: std::io::Error| {
            ProviderError::fatal(format!(
                "{name}: cannot prepare {what} {}: {e}",
                path.display()
            ))
        };
        fs_err::create_dir_all(&self.workdir)
            .map_err(|e| fail("its working folder", &self.workdir, e))?;
        let home = self.home();
        private_dir(&home).map_err(|e| fail("its configuration folder", &home, e))?;
        remove_all(&self.workdir, WORKDIR_REMOVED)
            .map_err(|e| fail("its working folder", &self.workdir, e))?;
        match self.kind {
            CliKind::Claude => remove_all(&home, CLAUDE_HOME_REMOVED)
                .map_err(|e| fail("its configuration folder", &home, e))?,
            CliKind::Gemini => {
                let dir = self.gemini_dir();
                private_dir(&dir).map_err(|e| fail("its configuration folder", &dir, e))?;
                remove_all(&dir, GEMINI_HOME_REMOVED)
                    .and_then(|()| remove_all(&home, &[".agents", ".env"]))
                    .map_err(|e| fail("its configuration folder", &dir, e))?;
                let user = self.user_gemini_dir();
                let auth_type = user.as_deref().and_then(gemini_auth_type);
                write_atomic(
                    &dir.join("settings.json"),
                    &gemini_settings(auth_type.as_deref()),
                )
                .map_err(|e| fail("its settings", &dir, e))?;
                write_atomic(&home.join(GEMINI_POLICY), GEMINI_POLICY_TEXT)
                    .map_err(|e| fail("its policy", &home, e))?;
                for file in GEMINI_CREDENTIALS {
                    let source = user.as_ref().map(|u| u.join(file));
                    link_credential(source.as_deref(), &dir.join(file))
                        .map_err(|e| fail("its sign-in", &dir, e))?;
                }
            }
            CliKind::Codex => {}
        }
        Ok(())
    }

    fn run(&self, input: &str, deadline: Instant) -> Result<(String, String, i32), ProviderError> {
        let name = self.kind.provider_name();
        self.prepare()?;
        let mut child = Command::new(&self.program)
            .args(self.args())
            .current_dir(&self.workdir)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                ProviderError::fatal(format!(
                    "{name}: cannot run {}: {e}",
                    self.program.display()
                ))
            })?;
        let mut stdin = child.stdin.take();
        let input = input.to_owned();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                // A CLI that exits early closes its end; that shows in its exit status.
                drop(s.write_all(input.as_bytes()));
            }
        });
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(o) = out.as_mut() {
                drop(o.read_to_string(&mut s));
            }
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(e) = err.as_mut() {
                drop(e.read_to_string(&mut s));
            }
            s
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    drop(child.kill());
                    drop(child.wait());
                    return Err(ProviderError::timeout(format!(
                        "{name}: no answer before the deadline; the call was stopped"
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    return Err(ProviderError::transient(format!(
                        "{name}: lost the process: {e}"
                    )));
                }
            }
        };
        drop(writer.join());
        let stdout = reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        Ok((stdout, stderr, status.code().unwrap_or(-1)))
    }

    /// What to do when the CLI says it is not signed in.
    fn sign_in_hint(&self) -> String {
        let home = self.home();
        match self.kind {
            CliKind::Claude => format!(
                " (Cairn runs Claude Code with a configuration folder of its own, {home}, so \
                 your usual sign-in is not shared with it: sign in there once with \
                 `CLAUDE_CONFIG_DIR=\"{home}\" claude auth login`, or set ANTHROPIC_API_KEY or \
                 CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) where Cairn runs)",
                home = home.display()
            ),
            CliKind::Gemini => format!(
                " (Cairn runs Gemini CLI with a configuration folder of its own, {}; it takes \
                 your sign-in from {} (security.auth.selectedType and the saved Google \
                 sign-in) or from GEMINI_API_KEY, GOOGLE_API_KEY or the Vertex AI variables \
                 where Cairn runs)",
                home.display(),
                self.user_gemini_dir()
                    .map_or_else(|| "~/.gemini".to_owned(), |d| d.display().to_string())
            ),
            CliKind::Codex => String::new(),
        }
    }
}

/// Whether the variable `name` is `wanted` (names are case-insensitive on Windows).
fn same_var(name: &OsStr, wanted: &str) -> bool {
    if cfg!(windows) {
        name.to_str()
            .is_some_and(|n| n.eq_ignore_ascii_case(wanted))
    } else {
        name == wanted
    }
}

/// Creates `dir` (and its parents) and makes it private to the user.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Removes `names` from `dir` (files, links or folders), when present.
fn remove_all(dir: &Path, names: &[&str]) -> std::io::Result<()> {
    for name in names {
        let path = dir.join(name);
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            fs_err::remove_dir_all(&path)?;
        } else {
            fs_err::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Writes `text` to `path` through a temporary file and a rename, so a call running at the
/// same time never reads half a file.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    fs_err::write(&tmp, text)?;
    fs_err::rename(&tmp, path)
}

/// Links `target` (the user's sign-in file) at `link`; removes `link` when the user has no
/// such file. On Unix a symbolic link, so a refreshed sign-in stays the user's one; elsewhere
/// a copy.
fn link_credential(source: Option<&Path>, link: &Path) -> std::io::Result<()> {
    if fs_err::symlink_metadata(link).is_ok() {
        fs_err::remove_file(link)?;
    }
    let Some(source) = source.filter(|s| s.is_file()) else {
        return Ok(());
    };
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(source, link)
    }
    #[cfg(not(unix))]
    {
        fs_err::copy(source, link).map(drop)
    }
}

/// The sign-in method the user chose for Gemini CLI (`security.auth.selectedType` in their
/// settings), when it is a plain name.
fn gemini_auth_type(user_dir: &Path) -> Option<String> {
    let text = fs_err::read_to_string(user_dir.join("settings.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let t = v["security"]["auth"]["selectedType"]
        .as_str()
        .or_else(|| v["selectedAuthType"].as_str())?;
    let plain = !t.is_empty()
        && t.len() <= 40
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then(|| t.to_owned())
}

/// Gemini CLI's settings for Cairn's calls: no built-in tool (`tools.core` is an allow-list,
/// empty), no MCP server, skills, hooks, agents or checkpoints, no usage statistics; the
/// user's sign-in method when known.
fn gemini_settings(auth_type: Option<&str>) -> String {
    let mut s = json!({
        "tools": {"core": []},
        "mcpServers": {},
        "skills": {"enabled": false},
        "hooksConfig": {"enabled": false},
        "experimental": {"enableAgents": false},
        "general": {"checkpointing": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
    });
    if let Some(t) = auth_type {
        s["security"] = json!({"auth": {"selectedType": t}});
    }
    format!("{s:#}\n")
}

fn passing(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    [
        "rate limit",
        "rate_limit",
        "overloaded",
        "429",
        "529",
        "503",
        "timeout",
        "timed out",
        "temporarily",
        "network",
        "econnreset",
        "quota",
    ]
    .iter()
    .any(|w| t.contains(w))
}

fn failure(name: &str, what: &str) -> ProviderError {
    let msg = format!("{name}: {}", short(what));
    if passing(what) {
        ProviderError::transient(msg)
    } else {
        ProviderError::fatal(msg)
    }
}

fn not_signed_in(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    ["not logged in", "/login", "invalid api key", "auth method"]
        .iter()
        .any(|w| t.contains(w))
}

/// The oldest versions whose flags Cairn relies on (see `docs/security/model-providers.md`).
fn too_old_hint(kind: CliKind, text: &str) -> &'static str {
    let t = text.to_ascii_lowercase();
    if !(t.contains("unknown option") || t.contains("unknown argument")) {
        return "";
    }
    match kind {
        CliKind::Claude => {
            " (Cairn needs Claude Code 2.1.197 or later, whose flags keep a call from acting: \
             update it with `claude update`)"
        }
        CliKind::Gemini => {
            " (Cairn needs a Gemini CLI whose flags keep a call from acting, 0.56 or later: \
             update it)"
        }
        CliKind::Codex => "",
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The first JSON object in `text` (Gemini CLI prints its error object on standard error).
fn json_in(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    serde_json::from_str(text[start..].trim()).ok()
}

impl Provider for AgentCli {
    fn name(&self) -> &str {
        self.kind.provider_name()
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request, deadline: Instant) -> Result<Reply, ProviderError> {
        let name = self.kind.provider_name();
        if let Some(why) = self.kind.refusal() {
            return Err(ProviderError::fatal(why));
        }
        if let Some(why) = cairn_config::model_name_problem(&self.model) {
            return Err(ProviderError::fatal(format!(
                "{name}: llm.model {:?} is refused: {why}",
                self.model
            )));
        }
        let input = format!(
            "{}\n\n{}",
            request.instructions_with_schema(),
            request.prompt
        );
        let (stdout, stderr, code) = self.run(&input, deadline)?;
        match self.kind {
            CliKind::Claude => {
                let v: Value = serde_json::from_str(stdout.trim()).map_err(|_| {
                    let err = failure(
                        name,
                        &format!("exit {code}, no JSON result: {stderr}{stdout}"),
                    );
                    ProviderError {
                        message: format!("{}{}", err.message, too_old_hint(self.kind, &stderr)),
                        ..err
                    }
                })?;
                if v["is_error"].as_bool() == Some(true) || code != 0 {
                    let why = v["result"]
                        .as_str()
                        .unwrap_or(v["subtype"].as_str().unwrap_or("error"));
                    let hint = if not_signed_in(why) {
                        self.sign_in_hint()
                    } else {
                        String::new()
                    };
                    let err = failure(name, &format!("exit {code}: {why}"));
                    return Err(ProviderError {
                        message: format!("{}{hint}", err.message),
                        ..err
                    });
                }
                let usage = &v["usage"];
                Ok(Reply {
                    text: v["result"].as_str().unwrap_or_default().to_owned(),
                    model: v["modelUsage"]
                        .as_object()
                        .and_then(|m| m.keys().next().cloned())
                        .unwrap_or_else(|| self.model.clone()),
                    usage: Usage {
                        input_tokens: u(&usage["input_tokens"])
                            + u(&usage["cache_read_input_tokens"])
                            + u(&usage["cache_creation_input_tokens"]),
                        output_tokens: u(&usage["output_tokens"]),
                    },
                    cost_usd: v["total_cost_usd"].as_f64(),
                })
            }
            CliKind::Gemini => {
                let v = serde_json::from_str::<Value>(stdout.trim())
                    .ok()
                    .or_else(|| json_in(&stderr))
                    .ok_or_else(|| {
                        let err = failure(
                            name,
                            &format!("exit {code}, no JSON result: {stderr}{stdout}"),
                        );
                        ProviderError {
                            message: format!("{}{}", err.message, too_old_hint(self.kind, &stderr)),
                            ..err
                        }
                    })?;
                if !v["error"].is_null() || code != 0 {
                    let why = v["error"]["message"].as_str().unwrap_or("error").to_owned();
                    let hint = if not_signed_in(&why) {
                        self.sign_in_hint()
                    } else {
                        String::new()
                    };
                    let err = failure(name, &format!("exit {code}: {why}"));
                    return Err(ProviderError {
                        message: format!("{}{hint}", err.message),
                        ..err
                    });
                }
                let mut usage = Usage::default();
                let mut model = self.model.clone();
                if let Some(models) = v["stats"]["models"].as_object() {
                    for (m, st) in models {
                        let main = st["roles"].get("main").is_some() || st["roles"].is_null();
                        if main {
                            model = m.clone();
                        }
                        usage.input_tokens += u(&st["tokens"]["prompt"]);
                        usage.output_tokens += u(&st["tokens"]["candidates"]);
                    }
                }
                Ok(Reply {
                    text: v["response"].as_str().unwrap_or_default().to_owned(),
                    model,
                    usage,
                    cost_usd: None,
                })
            }
            CliKind::Codex => Err(ProviderError::fatal(CODEX_REFUSAL)),
        }
    }
}
