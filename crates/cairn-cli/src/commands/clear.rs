//! `cairn clear`: everything remembered wiped (notes too with `--notes`), after a
//! confirmation typed at a terminal unless `--yes`.
use std::io::{BufRead, IsTerminal, Write};

use cairn_api::ApiError;
use cairn_core::api::{ClearReport, ClearReq};

use super::{Ctx, Failure};
use crate::cli::ClearArgs;

/// Asks, then clears and says what went.
pub async fn run(ctx: &Ctx, args: ClearArgs) -> Result<(), Failure> {
    let ClearArgs { yes, notes } = args;
    if !yes && !confirm_clear(notes)? {
        println!("Nothing was cleared.");
        return Ok(());
    }
    let backend = ctx.backend().await?;
    let res: Result<ClearReport, ApiError> = backend.call_typed("clear", &ClearReq { notes }).await;
    backend.close().await;
    let r = res?;
    println!(
        "Cleared {} records, {} chunks, {} items{}.",
        r.removed.records,
        r.removed.chunks,
        r.removed.items,
        if r.notes_kept {
            " (notes kept)".to_owned()
        } else {
            format!(" and {} notes", r.removed.notes)
        }
    );
    Ok(())
}

fn confirm_clear(notes: bool) -> Result<bool, Failure> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Failure {
            code: 2,
            error: anyhow::anyhow!("clear needs confirmation: run it in a terminal, or pass --yes"),
        });
    }
    let what = if notes {
        "everything Cairn remembers, notes included"
    } else {
        "everything Cairn remembers (notes are kept)"
    };
    print!("This wipes {what}. It cannot be undone. Type 'clear' to confirm: ");
    std::io::stdout().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(line.trim() == "clear")
}
