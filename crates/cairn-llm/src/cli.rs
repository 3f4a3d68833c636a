//! The user's own agent CLIs in non-interactive mode, with their fast model.
//!
//! Each call runs in Cairn's own working folder (`Paths::llm_workdir`) with
//! [`cairn_config::RECURSION_GUARD`] set: Cairn's hooks see the variable and stay quiet, and
//! capture never reads a conversation held in that folder. Where the CLI has a flag that
//! keeps the call from being saved as a session, it is used too. The prompt goes on standard
//! input (no argument-length limit, nothing in the process list).
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{Provider, ProviderError, Reply, Request, Usage, short};

/// Which agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliKind {
    /// Claude Code: `claude -p … --output-format json`.
    Claude,
    /// Codex: `codex exec --json …`.
    Codex,
    /// Gemini CLI: `gemini -p … -o json`.
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

    /// The fast model used when `llm.model` is empty (`""` for Codex: its own default at
    /// low reasoning effort, since which models an account may use varies).
    pub fn default_model(self) -> &'static str {
        match self {
            Self::Claude => "haiku",
            Self::Codex => "",
            Self::Gemini => "flash-lite",
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
}

impl AgentCli {
    /// The CLI `kind` run from `program`, calling `model` (`""` = its fast default), in
    /// `workdir` (created when missing).
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
        }
    }

    /// The arguments of one call (the prompt goes on standard input).
    pub fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |s: &str| a.push(s.to_owned());
        match self.kind {
            CliKind::Claude => {
                for s in [
                    "-p",
                    "--output-format",
                    "json",
                    "--no-session-persistence",
                    "--strict-mcp-config",
                    "--tools",
                    "",
                ] {
                    push(s);
                }
                push("--model");
                push(&self.model);
            }
            CliKind::Codex => {
                for s in [
                    "exec",
                    "--json",
                    "--ephemeral",
                    "--skip-git-repo-check",
                    "--sandbox",
                    "read-only",
                    "-c",
                    "model_reasoning_effort=\"low\"",
                ] {
                    push(s);
                }
                if !self.model.is_empty() {
                    push("-m");
                    push(&self.model);
                }
                push("-");
            }
            CliKind::Gemini => {
                for s in ["-o", "json", "-m"] {
                    push(s);
                }
                push(&self.model);
                push("-p");
                push("Answer the request above as it says.");
            }
        }
        a
    }

    fn run(&self, input: &str, deadline: Instant) -> Result<(String, String, i32), ProviderError> {
        let name = self.kind.provider_name();
        fs_err::create_dir_all(&self.workdir).map_err(|e| {
            ProviderError::fatal(format!("{name}: cannot create its working folder: {e}"))
        })?;
        let mut child = Command::new(&self.program)
            .args(self.args())
            .current_dir(&self.workdir)
            .env(cairn_config::RECURSION_GUARD, "1")
            .env("NO_COLOR", "1")
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

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
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
        let input = format!(
            "{}\n\n{}",
            request.instructions_with_schema(),
            request.prompt
        );
        let (stdout, stderr, code) = self.run(&input, deadline)?;
        let model_or_default = if self.model.is_empty() {
            "default".to_owned()
        } else {
            self.model.clone()
        };
        match self.kind {
            CliKind::Claude => {
                let v: Value = serde_json::from_str(stdout.trim()).map_err(|_| {
                    failure(
                        name,
                        &format!("exit {code}, no JSON result: {stderr}{stdout}"),
                    )
                })?;
                if v["is_error"].as_bool() == Some(true) || code != 0 {
                    let why = v["result"]
                        .as_str()
                        .unwrap_or(v["subtype"].as_str().unwrap_or("error"));
                    return Err(failure(name, &format!("exit {code}: {why}")));
                }
                let usage = &v["usage"];
                Ok(Reply {
                    text: v["result"].as_str().unwrap_or_default().to_owned(),
                    model: v["modelUsage"]
                        .as_object()
                        .and_then(|m| m.keys().next().cloned())
                        .unwrap_or(model_or_default),
                    usage: Usage {
                        input_tokens: u(&usage["input_tokens"])
                            + u(&usage["cache_read_input_tokens"])
                            + u(&usage["cache_creation_input_tokens"]),
                        output_tokens: u(&usage["output_tokens"]),
                    },
                    cost_usd: v["total_cost_usd"].as_f64(),
                })
            }
            CliKind::Codex => {
                let mut text = String::new();
                let mut usage = Usage::default();
                let mut error: Option<String> = None;
                for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
                    let Ok(ev) = serde_json::from_str::<Value>(line) else {
                        continue;
                    };
                    match ev["type"].as_str() {
                        Some("item.completed") if ev["item"]["type"] == "agent_message" => {
                            text = ev["item"]["text"].as_str().unwrap_or_default().to_owned();
                        }
                        Some("turn.completed") => {
                            let us = &ev["usage"];
                            usage = Usage {
                                input_tokens: u(&us["input_tokens"]),
                                output_tokens: u(&us["output_tokens"]),
                            };
                        }
                        Some("turn.failed") => {
                            error = Some(
                                ev["error"]["message"]
                                    .as_str()
                                    .unwrap_or("turn failed")
                                    .to_owned(),
                            );
                        }
                        Some("error") => {
                            error = Some(ev["message"].as_str().unwrap_or("error").to_owned());
                        }
                        _ => {}
                    }
                }
                if let Some(e) = error {
                    return Err(failure(name, &e));
                }
                if code != 0 || text.is_empty() {
                    return Err(failure(name, &format!("exit {code}, no answer: {stderr}")));
                }
                Ok(Reply {
                    text,
                    model: model_or_default,
                    usage,
                    cost_usd: None,
                })
            }
            CliKind::Gemini => {
                let v: Value = serde_json::from_str(stdout.trim()).map_err(|_| {
                    failure(
                        name,
                        &format!("exit {code}, no JSON result: {stderr}{stdout}"),
                    )
                })?;
                if !v["error"].is_null() || code != 0 {
                    let why = v["error"]["message"].as_str().unwrap_or("error").to_owned();
                    return Err(failure(name, &format!("exit {code}: {why} {stderr}")));
                }
                let mut usage = Usage::default();
                let mut model = model_or_default;
                if let Some(models) = v["stats"]["models"].as_object() {
                    for (m, st) in models {
                        model = m.clone();
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
        }
    }
}
