//! `cairn ranker`: `train` trains the turn note's ranker on a labelled file (and the marks
//! in this machine's injection log), through `cairn-eval`'s harness (`cairn_eval::note`):
//! each question asked of a real service holding its conversation, as `cairn eval note`
//! asks it; `train --from-store` trains a personal model on this machine's own turn notes
//! (`cairn_eval::personal`). `status` and `reset` ask the service which model is in use and
//! go back to the shipped one.
use cairn_api::ApiError;
use cairn_core::api::{Empty, RankerFigures, RankerStatus};

use super::{Ctx, Failure};
use crate::cli::RankerCmd;

/// Trains, writes the model and its figures, and prints them; or the status, or the reset.
pub async fn run(ctx: &Ctx, what: RankerCmd) -> Result<(), Failure> {
    match what {
        RankerCmd::Train {
            from_store: true,
            out,
            json,
            ..
        } => cairn_eval::personal::train_from_store(&ctx.paths, out, json)
            .await
            .map(|_| ())
            .map_err(Failure::from),
        RankerCmd::Train {
            file,
            out,
            labels,
            real,
            real_weight,
            examples,
            json,
            ..
        } => {
            let file = file.ok_or_else(|| {
                Failure::from(anyhow::anyhow!("give a labelled file or --from-store"))
            })?;
            let sources = cairn_eval::note::Sources {
                file: &file,
                labels,
                real: real.as_deref(),
                real_weight,
                examples: examples.as_deref(),
            };
            cairn_eval::note::train(&ctx.paths, &ctx.settings, &sources, out, json)
                .await
                .map(|_| ())
                .map_err(Failure::from)
        }
        RankerCmd::Status { json } => call(ctx, "ranker_status", json).await,
        RankerCmd::Reset => call(ctx, "ranker_reset", false).await,
    }
}

async fn call(ctx: &Ctx, method: &str, json: bool) -> Result<(), Failure> {
    let backend = ctx.backend().await?;
    let res: Result<RankerStatus, ApiError> = backend.call_typed(method, &Empty {}).await;
    backend.close().await;
    let status = res?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&status)
                .map_err(|e| Failure::from(anyhow::Error::from(e)))?
        );
    } else {
        print(&status);
    }
    Ok(())
}

fn line(name: &str, f: &RankerFigures) -> String {
    let pct = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{:.0}%", v * 100.0));
    format!(
        "{name}: bar {:.2}, AUC {}, precision {}, hit rate {}, silence {}{}",
        f.bar,
        f.auc.map_or_else(|| "—".to_owned(), |a| format!("{a:.3}")),
        pct(f.precision),
        pct(f.hit_rate),
        pct(f.silence),
        f.requests
            .map(|r| format!(" ({r} requests)"))
            .unwrap_or_default()
    )
}

fn print(s: &RankerStatus) {
    match s.model.as_str() {
        "personal" => println!(
            "The turn note uses a personal model ({}), trained {} from {}.",
            s.path,
            s.trained_at.as_deref().unwrap_or("at an unknown time"),
            match s.source.as_deref() {
                Some("store") => "this machine's turn notes",
                _ => "a labelled file",
            }
        ),
        _ => println!("The turn note uses the shipped model."),
    }
    println!("Bar: {:.2}", s.bar);
    if let Some(f) = &s.figures {
        println!("  {}", line("this model", f));
    }
    if let Some(f) = &s.shipped {
        println!("  {}", line("shipped on the same turns", f));
    }
    if let Some(p) = &s.problem {
        println!("{p}");
    }
    println!("{}", s.nightly);
    if s.model == "personal" {
        println!(
            "`cairn ranker reset` goes back to the shipped model (and turns the nightly training off)."
        );
    }
}
