//! `cairn bench`: the benchmarks, each a call into `cairn-eval` (`cairn_eval::bench`).
use cairn_eval::bench;

use super::{Ctx, Failure};
use crate::cli::BenchCmd;

/// Runs the benchmark asked for (or the measuring half of one, in its fresh process); it
/// prints its own figures.
pub async fn run(ctx: &Ctx, what: BenchCmd) -> Result<(), Failure> {
    match what {
        BenchCmd::Capture {
            size_mib: Some(size_mib),
            json,
            ..
        } => bench::capture_file(size_mib, json)
            .await
            .map_err(Failure::from),
        BenchCmd::Capture {
            requests,
            search_records,
            size_mib: None,
            ..
        } => bench::capture(requests, search_records)
            .await
            .map_err(Failure::from),
        BenchCmd::Distill { requests } => {
            bench::distill::run(requests).await.map_err(Failure::from)
        }
        BenchCmd::CapturePhase { home, db } => bench::capture_phase(&home, &db)
            .await
            .map_err(Failure::from),
        BenchCmd::Search {
            steps,
            points_per_record,
            queries,
            dir,
            embedder,
            json,
            candidates,
            remote,
        } => bench::search::run(bench::search::Args {
            steps,
            points_per_record,
            queries,
            dir,
            embedder,
            json,
            candidates,
            remote,
        })
        .await
        .map_err(Failure::from),
        BenchCmd::ItemsPhase { home, queries } => {
            bench::items::phase(&ctx.settings, &home, queries)
                .await
                .map_err(Failure::from)
        }
        BenchCmd::SearchPhase {
            dir,
            queries,
            embedder,
            candidates,
            remote,
        } => bench::search::phase(&dir, queries, &embedder, &candidates, remote.as_deref())
            .await
            .map_err(Failure::from),
        BenchCmd::Note {
            records,
            queries,
            load,
            deadline,
            runs,
            json,
        } => bench::note::run(
            &ctx.settings,
            bench::note::Args {
                records,
                queries,
                load,
                deadline_ms: deadline.unwrap_or(ctx.settings.hook.deadline_ms),
                runs,
                json,
            },
        )
        .await
        .map_err(Failure::from),
        BenchCmd::Items {
            records,
            items,
            queries,
            json,
        } => bench::items::run(
            &ctx.settings,
            bench::items::Args {
                records,
                items,
                queries,
                json,
            },
        )
        .await
        .map_err(Failure::from),
        BenchCmd::Embed {
            texts,
            per_call,
            batch_size,
            parallel,
            embedder,
            json,
        } => bench::embed::run(&bench::embed::Args {
            texts,
            per_call,
            batch_size,
            parallel,
            embedder,
            json,
        })
        .map_err(Failure::from),
        BenchCmd::Replay {
            requests,
            home,
            json,
        } => bench::replay::run(requests, json, home.as_deref()).map_err(Failure::from),
    }
}
