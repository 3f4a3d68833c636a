//! `cairn capture --once`: one capture pass over every agent's session stores now.
use std::io::Write;

use cairn_api::{ApiError, Backend};
use cairn_core::api::CaptureReport;
use cairn_eval::progress::call_with_progress;

use super::{Ctx, Failure};
use crate::cli::CaptureArgs;

/// Runs one pass with its progress on a bar and prints what each framework gave.
pub async fn run(ctx: &Ctx, args: CaptureArgs) -> Result<(), Failure> {
    let CaptureArgs { once: _, json } = args;
    let backend = ctx.backend().await?;
    let res = capture_with_progress(&backend, json).await;
    backend.close().await;
    let report = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_capture(&report)?;
    }
    Ok(())
}

async fn capture_with_progress(backend: &Backend, quiet: bool) -> Result<CaptureReport, ApiError> {
    call_with_progress(backend, "capture_run", "capture", quiet).await
}

fn print_capture(r: &CaptureReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if r.frameworks.is_empty() {
        writeln!(out, "No agent session stores found.")?;
    }
    for f in &r.frameworks {
        let skipped: Vec<String> = f
            .skipped
            .iter()
            .map(|s| format!("{} {}", s.count, s.reason))
            .collect();
        writeln!(
            out,
            "{:<14} {:>5} sessions read  {:>6} records added  {:>5} revised{}",
            f.framework,
            f.sessions,
            f.added,
            f.revised,
            if skipped.is_empty() {
                String::new()
            } else {
                format!("  skipped: {}", skipped.join(", "))
            }
        )?;
    }
    if r.secrets_redacted > 0 {
        writeln!(
            out,
            "{} secrets redacted before storage.",
            r.secrets_redacted
        )?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(out, "Done in {} ms.", r.duration_ms)
}
