//! `cairn distill`: settled conversations distilled now (`--now`), the whole log distilled
//! again (`--rebuild`), or the nightly tidy-up now (`--sleep`).
use std::io::Write;

use cairn_api::ApiError;
use cairn_eval::progress::{call_with_progress, call_with_progress_req};

use super::{Ctx, Failure};
use crate::cli::DistillArgs;

/// Runs what the flags ask, with the worker's progress on a bar, and prints its report.
pub async fn run(ctx: &Ctx, args: DistillArgs) -> Result<(), Failure> {
    match args {
        DistillArgs {
            rebuild: true,
            since,
            json,
            ..
        } => {
            let backend = ctx.backend().await?;
            let req = cairn_core::api::DistillRebuildReq { since };
            let res: Result<cairn_core::api::DistillRebuildReport, ApiError> =
                call_with_progress_req(&backend, "distill_rebuild", &req, "distillation", json)
                    .await;
            backend.close().await;
            let report = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_distill(&report.run)?;
                let mut out = std::io::stdout().lock();
                for (label, list) in [
                    ("added", &report.added),
                    ("changed", &report.changed),
                    ("dropped", &report.dropped),
                ] {
                    for x in list {
                        writeln!(out, "{label:<8} {:<12} {} ({})", x.kind, x.title, x.id)?;
                    }
                }
                writeln!(
                    out,
                    "Rebuilt: {} added, {} changed, {} dropped (archived), {} unchanged.",
                    report.added.len(),
                    report.changed.len(),
                    report.dropped.len(),
                    report.unchanged
                )?;
            }
            Ok(())
        }
        DistillArgs {
            sleep: true, json, ..
        } => {
            let backend = ctx.backend().await?;
            let res: Result<cairn_core::api::SleepReport, ApiError> =
                call_with_progress(&backend, "sleep_now", "distillation", json).await;
            backend.close().await;
            let r = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                let mut out = std::io::stdout().lock();
                for id in &r.archived {
                    writeln!(out, "archived {id}")?;
                }
                for s in &r.profiles {
                    writeln!(out, "profile  {s}")?;
                }
                writeln!(
                    out,
                    "Slept in {:.1} s: {} active item(s), {} related, {} re-scored, {} archived, \
                     {} profile(s) rewritten ({} unchanged, {} left), {} model call(s).",
                    r.took_ms as f64 / 1000.0,
                    r.active,
                    r.related,
                    r.rescored,
                    r.archived.len(),
                    r.profiles.len(),
                    r.profiles_unchanged,
                    r.profiles_left,
                    r.calls
                )?;
                if let Some(why) = &r.stopped {
                    writeln!(out, "Profiles stopped: {why}")?;
                }
                if let Some(ranker) = &r.ranker {
                    writeln!(out, "Turn note: {ranker}.")?;
                }
            }
            Ok(())
        }
        DistillArgs { json, .. } => {
            let backend = ctx.backend().await?;
            let res: Result<cairn_core::api::DistillReport, ApiError> =
                call_with_progress(&backend, "distill_now", "distillation", json).await;
            backend.close().await;
            let report = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_distill(&report)?;
            }
            Ok(())
        }
    }
}

fn print_distill(r: &cairn_core::api::DistillReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if r.windows == 0 && r.stopped.is_none() {
        writeln!(out, "No settled conversation waits for distillation.")?;
    }
    for w in &r.details {
        writeln!(
            out,
            "{}: {} request(s), {} item(s) proposed",
            w.window, w.requests, w.proposed
        )?;
        for k in &w.kept {
            let extra = match (&k.other, k.similarity) {
                (Some(o), Some(s)) => format!(" ({o}, similarity {s:.2})"),
                (Some(o), None) => format!(" ({o})"),
                (None, Some(s)) => format!(" (similarity {s:.2})"),
                (None, None) => String::new(),
            };
            writeln!(out, "  {:<10} {:<12} {}{extra}", k.action, k.kind, k.title)?;
        }
        for d in &w.dropped {
            writeln!(
                out,
                "  dropped    {:<12} {} — {}",
                d.kind, d.title, d.reason
            )?;
        }
        if let Some(why) = &w.invalid {
            writeln!(out, "  no usable answer: {why}")?;
        }
    }
    writeln!(
        out,
        "{} window(s): {} item(s) kept ({} new, {} merged, {} superseding, {} related), {} dropped; \
         {} model call(s), {} + {} tokens, ${:.4}",
        r.windows,
        r.items_kept,
        r.created,
        r.merged,
        r.superseded,
        r.related,
        r.items_dropped,
        r.calls,
        r.input_tokens,
        r.output_tokens,
        r.cost_usd
    )?;
    if let Some(why) = &r.stopped {
        writeln!(
            out,
            "Stopped early ({} window(s) left for later): {why}",
            r.left
        )?;
    }
    Ok(())
}
