//! `cairn search`: everything remembered searched by its words.
use std::io::Write;

use cairn_api::ApiError;
use cairn_core::api::{SearchHit, SearchReq, SearchRes};

use super::{Ctx, Failure};
use crate::cli::SearchArgs;

/// Searches and prints the hits (one JSON array with `--json`), and the search's notes on
/// standard error.
pub async fn run(ctx: &Ctx, args: SearchArgs) -> Result<(), Failure> {
    let SearchArgs {
        words,
        project,
        framework,
        since,
        until,
        limit,
        mode,
        rerank,
        no_rerank,
        json,
    } = args;
    let backend = ctx.backend().await?;
    let req = SearchReq {
        query: words.join(" "),
        project,
        framework,
        since,
        until,
        limit: Some(limit),
        exclude_session: None,
        kinds: None,
        mode: Some(mode),
        rerank: if rerank {
            Some(true)
        } else if no_rerank {
            Some(false)
        } else {
            None
        },
    };
    let res: Result<SearchRes, ApiError> = backend.call_typed("search", &req).await;
    backend.close().await;
    let res = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&res.hits)?);
    } else {
        print_hits(&res.hits)?;
    }
    for note in &res.notes {
        eprintln!("note: {note}");
    }
    Ok(())
}

fn print_hits(hits: &[SearchHit]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if hits.is_empty() {
        writeln!(out, "No matches.")?;
    }
    for h in hits {
        let what = match (&h.item_kind, &h.title) {
            (Some(kind), Some(title)) => format!("{kind} · {title}"),
            (None, Some(title)) => format!("note · {title}"),
            _ => format!("{} · {}", h.framework, h.outcome),
        };
        writeln!(
            out,
            "{} · {} · {}{}",
            h.timestamp,
            what,
            h.project.as_deref().unwrap_or("(no project)"),
            if h.in_range {
                ""
            } else {
                " · outside the date range"
            }
        )?;
        for line in h.passage.lines() {
            writeln!(out, "    {line}")?;
        }
        writeln!(out, "    {}\n", h.id)?;
    }
    Ok(())
}
