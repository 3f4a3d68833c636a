//! `cairn ranker train`: the turn note's ranker trained on a labelled file (and the marks
//! in this machine's injection log), through `cairn-eval`'s harness (`cairn_eval::note`):
//! each question asked of a real service holding its conversation, as `cairn eval note`
//! asks it.
use super::{Ctx, Failure};
use crate::cli::RankerCmd;

/// Trains, writes the model and its figures, and prints them.
pub async fn run(ctx: &Ctx, what: RankerCmd) -> Result<(), Failure> {
    match what {
        RankerCmd::Train {
            file,
            out,
            labels,
            json,
        } => cairn_eval::note::train(&ctx.paths, &ctx.settings, &file, out, labels, json)
            .await
            .map(|_| ())
            .map_err(Failure::from),
    }
}
