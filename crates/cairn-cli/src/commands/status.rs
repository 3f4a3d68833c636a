//! `cairn status`: the memory switch, counts, workers and where the data lives.
use std::io::Write;

use cairn_api::Host;
use cairn_core::api::Status;

use super::memory::memory_text;
use super::{Ctx, Failure};
use crate::cli::StatusArgs;

/// Prints the service's status (JSON with `--json`).
pub async fn run(ctx: &Ctx, args: StatusArgs) -> Result<(), Failure> {
    let StatusArgs { json } = args;
    let backend = ctx.backend().await?;
    let status = backend.status().await;
    backend.close().await;
    let status = status?;
    if json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else {
        print_status(&status)?;
    }
    Ok(())
}

fn print_status(s: &Status) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Cairn {}", s.version)?;
    writeln!(
        out,
        "Memory:   {}{}",
        memory_text(&s.memory, false),
        s.memory
            .changed_at
            .as_deref()
            .map(|t| format!(" (since {t})"))
            .unwrap_or_default()
    )?;
    let host = match s.service.host {
        Host::Daemon => format!("cairn daemon, pid {}", s.service.pid),
        Host::Desktop => format!("desktop app, pid {}", s.service.pid),
        Host::Direct => "not running (store opened directly)".to_owned(),
    };
    writeln!(out, "Service:  {host}")?;
    if let Some(addr) = &s.service.address {
        writeln!(out, "Address:  {addr}")?;
    }
    writeln!(
        out,
        "Stored:   {} records, {} chunks, {} items, {} notes",
        s.counts.records, s.counts.chunks, s.counts.items, s.counts.notes
    )?;
    writeln!(
        out,
        "Cleared:  {}",
        s.last_clear.as_deref().unwrap_or("never")
    )?;
    writeln!(out, "Data:     {}", s.data_dir)?;
    writeln!(out, "Config:   {}", s.config_file)?;
    for w in &s.workers {
        writeln!(
            out,
            "Worker:   {} — {:?}{}",
            w.name,
            w.state,
            w.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )?;
    }
    for w in &s.warnings {
        writeln!(out, "Warning:  {w}")?;
    }
    Ok(())
}
