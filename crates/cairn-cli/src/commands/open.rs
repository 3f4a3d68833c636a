//! `cairn open`: a record, an item or a note whole.
use std::io::Write;

use cairn_api::ApiError;

use super::{Ctx, Failure};
use crate::cli::OpenArgs;

/// Opens the id and prints it (JSON with `--json`).
pub async fn run(ctx: &Ctx, args: OpenArgs) -> Result<(), Failure> {
    let OpenArgs { id, json } = args;
    let backend = ctx.backend().await?;
    let res: Result<cairn_core::api::OpenRes, ApiError> = backend
        .call_typed("open", &cairn_core::api::OpenReq { id })
        .await;
    backend.close().await;
    let opened = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&opened)?);
    } else {
        print_opened(&opened)?;
    }
    Ok(())
}

fn print_opened(o: &cairn_core::api::OpenRes) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if let Some(it) = &o.item {
        let i = &it.item;
        writeln!(
            out,
            "{} · {} (importance {}, {})",
            i.kind, i.title, i.importance, i.certainty
        )?;
        writeln!(out, "{}\n", i.summary)?;
        writeln!(out, "{}\n", i.body)?;
        if !i.cues.is_empty() {
            writeln!(out, "Cues: {}", i.cues.join(" · "))?;
        }
        if !i.concepts.is_empty() {
            writeln!(out, "Concepts: {}", i.concepts.join(", "))?;
        }
        if let Some(by) = &i.superseded_by {
            writeln!(out, "Superseded by {by}")?;
        }
        writeln!(out, "\nHistory:")?;
        for e in &it.history {
            writeln!(
                out,
                "  {} {} {}",
                e.at,
                e.kind,
                e.reason.as_deref().unwrap_or("")
            )?;
        }
        if !it.relations.is_empty() {
            writeln!(out, "\nRelations:")?;
            for r in &it.relations {
                let other = if r.from == i.id { &r.to } else { &r.from };
                writeln!(
                    out,
                    "  {} {} {} ({:.2})",
                    r.kind,
                    other,
                    r.other_title.as_deref().unwrap_or(""),
                    r.weight
                )?;
            }
        }
        writeln!(out, "\nSources:")?;
        for s in &it.sources {
            writeln!(
                out,
                "  {} · {} · {}\n    {}",
                s.turn.started_at, s.framework, s.session_id, s.turn.request
            )?;
        }
        return Ok(());
    }
    if let Some(r) = &o.record {
        writeln!(
            out,
            "{} · {} · request {} of {}\n",
            r.framework, r.session_id, r.position, r.session_turns
        )?;
        writeln!(out, "{}", r.turn.request)?;
        return Ok(());
    }
    if let Some(n) = &o.note {
        writeln!(out, "{}\n\n{}", n.note.title, n.content)?;
    }
    Ok(())
}
