//! `cairn llm`: the model provider distillation calls. `test` sends one tiny request and
//! prints what came back and how long it took; `usage` shows today's calls and cost against
//! the daily budget and the latest calls from the ledger; `set-key` and `forget-key` keep an
//! API key in the OS keyring (read from standard input, never from an argument, never
//! logged). `download` prints the local model Cairn offers (size, memory, speed, licence) and
//! downloads it, checked against its pinned sha256: running it is the choice, it asks nothing.
//! Test, usage and download go through the running service when there is one, else the store
//! is opened directly, like every other command.
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use cairn_api::llm_api::keyring_problem;
use cairn_api::{ApiError, Backend};
use cairn_config::{Paths, Settings};
use cairn_core::api::{
    Empty, LlmDownloadReq, LlmDownloadRes, LlmOffer, LlmStatus, LlmStatusReq, LlmTestReq,
    LlmTestRes, WorkerState,
};
use cairn_llm::ApiKind;

use super::{Ctx, Failure};
use crate::cli::LlmCmd;

/// How many ledger entries `cairn llm usage` lists.
const RECENT: u32 = 20;

/// Runs `llm test`, `usage`, `download`, `set-key` or `forget-key`.
pub async fn run(ctx: &Ctx, what: LlmCmd) -> Result<(), Failure> {
    match what {
        LlmCmd::Test { json } => test(&ctx.paths, &ctx.settings, ctx.file.clone(), json)
            .await
            .map_err(Failure::from),
        LlmCmd::Usage { json } => usage(&ctx.paths, &ctx.settings, ctx.file.clone(), json)
            .await
            .map_err(Failure::from),
        LlmCmd::Download { use_it, json } => {
            download(&ctx.paths, &ctx.settings, ctx.file.clone(), use_it, json)
                .await
                .map_err(Failure::from)
        }
        LlmCmd::SetKey { api } => set_key(api.name()).map_err(Failure::from),
        LlmCmd::ForgetKey { api } => forget_key(api.name()).map_err(Failure::from),
    }
}

/// `cairn llm test`: exits non-zero when no valid answer came back.
pub async fn test(
    paths: &Paths,
    settings: &Settings,
    config_file: PathBuf,
    json: bool,
) -> anyhow::Result<()> {
    // The provider this command's settings name (file, environment, --set) is the one tested,
    // also when a service started earlier with other settings runs.
    let s = &settings.llm;
    let req = if s.provider.is_empty() {
        LlmTestReq::default()
    } else {
        LlmTestReq {
            provider: Some(s.provider.clone()),
            model: Some(s.model.clone()),
            base_url: Some(s.base_url.clone()),
            model_path: Some(s.model_path.clone()),
        }
    };
    if !json && std::io::stderr().is_terminal() {
        eprintln!("Asking the model provider one tiny question…");
    }
    let backend = Backend::connect_or_open_with(paths, settings, config_file).await?;
    let res: Result<LlmTestRes, ApiError> = backend.call_typed("llm_test", &req).await;
    backend.close().await;
    let r = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(out, "Provider: {}", r.provider)?;
        writeln!(
            out,
            "Model:    {}",
            if r.model.is_empty() {
                "(the provider's default)"
            } else {
                &r.model
            }
        )?;
        if let Some(answer) = &r.answer {
            writeln!(out, "Answer:   {answer}")?;
        }
        if r.ok || r.attempts > 0 {
            writeln!(
                out,
                "Tokens:   {} in, {} out",
                r.input_tokens, r.output_tokens
            )?;
            writeln!(out, "Cost:     {}", cost(r.cost_usd))?;
        }
        let time = if r.duration_ms < 1000 {
            format!("{} ms", r.duration_ms)
        } else {
            format!("{:.1} s", r.duration_ms as f64 / 1000.0)
        };
        writeln!(
            out,
            "Time:     {time}{}",
            if r.attempts > 1 {
                format!(" ({} attempts)", r.attempts)
            } else {
                String::new()
            }
        )?;
    }
    match (r.ok, r.error) {
        (true, _) => Ok(()),
        (false, Some(e)) => bail!("the test call failed: {e}"),
        (false, None) => bail!("the test call brought no answer"),
    }
}

fn cost(usd: Option<f64>) -> String {
    match usd {
        Some(c) => format!("${c:.4}"),
        None => "unknown".to_owned(),
    }
}

/// `cairn llm usage`.
pub async fn usage(
    paths: &Paths,
    settings: &Settings,
    config_file: PathBuf,
    json: bool,
) -> anyhow::Result<()> {
    let backend = Backend::connect_or_open_with(paths, settings, config_file).await?;
    let req = LlmStatusReq {
        recent: Some(RECENT),
    };
    let res: Result<LlmStatus, ApiError> = backend.call_typed("llm_status", &req).await;
    backend.close().await;
    let s = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    if s.provider.is_empty() {
        writeln!(
            out,
            "Provider: none set (llm.provider: one of {})",
            s.providers.join(", ")
        )?;
    } else {
        writeln!(
            out,
            "Provider: {} (model: {})",
            s.provider,
            if s.model.is_empty() {
                "the provider's default"
            } else {
                &s.model
            }
        )?;
    }
    if let Some(stored) = s.key_stored {
        writeln!(
            out,
            "API key:  {}",
            if stored {
                "in the OS keyring"
            } else {
                "not in the OS keyring (cairn llm set-key, or the provider's environment variable)"
            }
        )?;
    }
    if let Some(speed) = &s.local_speed {
        writeln!(out, "Pace:     {speed}")?;
    }
    let t = &s.today;
    writeln!(
        out,
        "Today:    {} of {} calls, ${:.4} of ${:.2}{}",
        t.calls,
        s.budget.calls,
        t.cost_usd,
        s.budget.usd,
        if s.over_budget {
            " — the budget is spent; distillation resumes tomorrow"
        } else {
            ""
        }
    )?;
    writeln!(
        out,
        "          {} ok, {} invalid, {} failed, {} refused; {} tokens in, {} out",
        t.ok, t.invalid, t.failed, t.refused, t.input_tokens, t.output_tokens
    )?;
    if s.recent.is_empty() {
        writeln!(out, "No model calls yet.")?;
        return Ok(());
    }
    writeln!(out, "Latest calls:")?;
    for c in &s.recent {
        writeln!(
            out,
            "  {}  {:<11} {:<12} {:<24} {:<11} {:>6} in {:>5} out  {:>9}  {:>6} ms{}",
            c.at,
            c.provider,
            c.purpose,
            c.model,
            c.outcome,
            c.input_tokens,
            c.output_tokens,
            cost(c.cost_usd),
            c.duration_ms,
            c.error
                .as_deref()
                .map(|e| format!("  {e}"))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}

/// The API a key is for.
pub fn api_kind(api: &str) -> anyhow::Result<ApiKind> {
    match api {
        "anthropic" => Ok(ApiKind::Anthropic),
        "openai" => Ok(ApiKind::OpenAi),
        other => bail!("{other:?} takes no API key; keys are for anthropic or openai"),
    }
}

/// Reads the key: typed without echo at a terminal, else the whole of standard input.
pub(crate) fn read_key(api: &str) -> anyhow::Result<String> {
    let key = if std::io::stdin().is_terminal() {
        let term = console::Term::stderr();
        term.write_str(&format!("Paste the {api} API key (it is not shown): "))
            .context("cannot write the prompt")?;
        term.read_secure_line()
            .context("cannot read the key from the terminal")?
    } else {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the key from standard input")?;
        text
    };
    let key = key.trim().to_owned();
    if key.is_empty() {
        bail!(
            "no key was given: type or paste it when asked, or pipe it in \
             (for example `cairn llm set-key {api} < key.txt`)"
        );
    }
    if key.chars().any(char::is_whitespace) {
        bail!("the {api} key must be one line without spaces; nothing was stored");
    }
    Ok(key)
}

/// `cairn llm set-key`.
pub fn set_key(api: &str) -> anyhow::Result<()> {
    let kind = api_kind(api)?;
    let key = read_key(api)?;
    cairn_config::secrets::store_secret(cairn_llm::api_key_user(kind), &key)
        .map_err(|e| anyhow::anyhow!(keyring_problem(kind, &e)))?;
    println!("Stored the {api} API key in the OS keyring.");
    Ok(())
}

/// `cairn llm forget-key`.
pub fn forget_key(api: &str) -> anyhow::Result<()> {
    let kind = api_kind(api)?;
    let removed = cairn_config::secrets::delete_secret(cairn_llm::api_key_user(kind))
        .map_err(|e| anyhow::anyhow!(keyring_problem(kind, &e)))?;
    if removed {
        println!("Removed the {api} API key from the OS keyring.");
    } else {
        println!("No {api} API key was stored in the OS keyring.");
    }
    Ok(())
}

/// Bytes as people read them (`1.1 GB`).
fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Prints the offer: what it is and what it costs.
fn print_offer(out: &mut impl Write, o: &LlmOffer) -> std::io::Result<()> {
    writeln!(out, "Model:    {} ({})", o.name, o.licence)?;
    writeln!(out, "From:     {}", o.url)?;
    writeln!(out, "sha256:   {}", o.sha256)?;
    writeln!(
        out,
        "Size:     {} ({} bytes)",
        gigabytes(o.size_bytes),
        o.size_bytes
    )?;
    writeln!(
        out,
        "Memory:   {} ({})",
        gigabytes(o.memory_bytes),
        o.memory_note
    )?;
    writeln!(out, "Speed:    {}", o.speed_note)?;
    writeln!(out, "File:     {}", o.path)?;
    Ok(())
}

/// `cairn llm download`: prints the offered local model, then downloads it (running this
/// command is the choice to download; it asks nothing), checked against its pinned sha256.
/// With `use_it`, the model then becomes the provider (`llm.provider = "local"`).
pub async fn download(
    paths: &Paths,
    settings: &Settings,
    config_file: PathBuf,
    use_it: bool,
    json: bool,
) -> anyhow::Result<()> {
    let backend = Backend::connect_or_open_with(paths, settings, config_file).await?;
    let res = download_with(&backend, use_it, json).await;
    backend.close().await;
    res
}

async fn download_with(backend: &Backend, use_it: bool, json: bool) -> anyhow::Result<()> {
    let offer: LlmOffer = backend.call_typed("llm_offer", &Empty {}).await?;
    let talk = !json && std::io::stderr().is_terminal();
    if !json {
        let mut out = std::io::stdout().lock();
        print_offer(&mut out, &offer)?;
        if offer.downloaded {
            writeln!(out, "Already downloaded and checked.")?;
        } else {
            writeln!(
                out,
                "Downloading {} and checking its sha256…",
                gigabytes(offer.size_bytes)
            )?;
        }
    }
    let req = LlmDownloadReq { use_it };
    let call = backend.call_typed::<_, LlmDownloadRes>("llm_download", &req);
    tokio::pin!(call);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
    let res = loop {
        tokio::select! {
            res = &mut call => break res?,
            _ = tick.tick(), if talk && !offer.downloaded => {
                if let Ok(status) = backend.status().await
                    && let Some(w) = status.workers.iter().find(|w| w.name == "models")
                    && let Some(detail) = &w.detail
                    && w.state == WorkerState::Running
                {
                    eprint!("\r{detail}   ");
                }
            }
        }
    };
    if talk && !offer.downloaded {
        eprintln!();
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&res)?);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    if res.fetched_bytes > 0 {
        writeln!(
            out,
            "Downloaded {} in {:.0} s; sha256 checked.",
            gigabytes(res.fetched_bytes),
            res.duration_ms as f64 / 1000.0
        )?;
    }
    if res.offer.in_use {
        writeln!(
            out,
            "In use: llm.provider = \"local\", llm.model_path = {:?}.",
            res.offer.path
        )?;
    } else {
        writeln!(
            out,
            "Not in use yet: run `cairn llm download --use`, or choose it under Settings → \
             Model providers."
        )?;
    }
    Ok(())
}
