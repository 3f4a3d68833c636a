//! `cairn eval`: the evaluations, each a call into `cairn-eval`.
use cairn_eval::{distill, locomo, note, real, replay};

use super::{Ctx, Failure};
use crate::cli::EvalCmd;

/// Runs the evaluation asked for; it prints its own figures.
pub async fn run(ctx: &Ctx, what: EvalCmd) -> Result<(), Failure> {
    match what {
        EvalCmd::Locomo {
            file,
            audit,
            json,
            tunings,
        } => locomo::run_locomo(
            &ctx.paths,
            &ctx.settings,
            &file,
            audit.as_deref(),
            json,
            &tunings,
        )
        .await
        .map_err(Failure::from),
        EvalCmd::Note {
            file,
            audit,
            conversations,
            candidates,
            json,
        } => note::eval(
            &ctx.paths,
            &ctx.settings,
            &file,
            audit.as_deref(),
            conversations,
            candidates.as_deref(),
            json,
        )
        .await
        .map(|_| ())
        .map_err(Failure::from),
        EvalCmd::Real {
            dir,
            split,
            json,
            note: true,
            ranker,
            rows,
            ..
        } => cairn_eval::real_note::run(
            &ctx.paths,
            &ctx.settings,
            &dir,
            &split,
            ranker.as_deref(),
            rows.as_deref(),
            json,
        )
        .await
        .map(|_| ())
        .map_err(Failure::from),
        EvalCmd::Real {
            dir,
            split,
            json,
            tunings,
            rows,
            note: false,
            ..
        } => real::run(
            &ctx.paths,
            &ctx.settings,
            &dir,
            &split,
            json,
            &tunings,
            rows.as_deref(),
        )
        .await
        .map(|_| ())
        .map_err(Failure::from),
        EvalCmd::Replay {
            since,
            until,
            project,
            limit,
            json,
            labels,
        } => {
            let backend = ctx.backend().await?;
            let req = cairn_core::api::ReplayReq {
                since,
                until,
                project,
                limit,
                rows: false,
            };
            let res = replay::run(&backend, req, json, labels.as_deref()).await;
            backend.close().await;
            res.map_err(Failure::from)
        }
        EvalCmd::Bars { file, json } => note::bars(&file, json).map(|_| ()).map_err(Failure::from),
        EvalCmd::Distill {
            file,
            audit,
            recordings,
            conversations,
            sessions,
            json,
        } => distill::run(
            &ctx.paths,
            &ctx.settings,
            &file,
            audit.as_deref(),
            recordings,
            conversations,
            sessions,
            json,
        )
        .await
        .map(|_| ())
        .map_err(Failure::from),
    }
}
