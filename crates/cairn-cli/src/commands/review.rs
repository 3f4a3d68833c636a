//! `cairn review`: the review inbox in a terminal — likely duplicates, contradictions, stale
//! items and junk — and its actions (`act`, `undo`), each logged and undoable.
use cairn_api::{ApiError, Backend};
use cairn_core::api::{
    ReviewActReq, ReviewActionView, ReviewEntry, ReviewInbox, ReviewReq, ReviewUndoReq,
};

use super::{Ctx, Failure};
use crate::cli::{ReviewArgs, ReviewCommand};

fn print_entry(n: usize, e: &ReviewEntry) {
    println!("{n:>3}. [{}] {}", e.category, e.key);
    println!("     {}", e.reason);
    for (k, s) in e.subjects.iter().enumerate() {
        let mark = if k == 0 && e.subjects.len() > 1 {
            " (suggested to keep)"
        } else {
            ""
        };
        println!(
            "     - {} {} {:?}{}{}",
            s.id,
            s.subkind,
            s.title,
            s.project
                .as_deref()
                .map(|p| format!(", {p}"))
                .unwrap_or_default(),
            mark
        );
    }
    println!("     actions: {}", e.actions.join(", "));
}

fn print_action(a: &ReviewActionView) {
    match &a.undone_at {
        Some(at) => println!(
            "Undid {} ({} of {}) at {at}: {}",
            a.id, a.action, a.entry, a.summary
        ),
        None => println!(
            "{} ({}): {} Undo with `cairn review undo {}`.",
            a.id, a.action, a.summary, a.id
        ),
    }
}

/// Runs `cairn review …`.
pub async fn run(ctx: &Ctx, args: ReviewArgs) -> Result<(), Failure> {
    let ReviewArgs {
        command,
        project,
        category,
        json,
    } = args;
    let backend = ctx.backend().await?;
    let res = run_with(&backend, command, project, category, json).await;
    backend.close().await;
    Ok(res?)
}

/// Shows the inbox, or acts on an entry, or undoes an action.
async fn run_with(
    backend: &Backend,
    command: Option<ReviewCommand>,
    project: Option<String>,
    category: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    match command {
        None => {
            let req = ReviewReq {
                project,
                category,
                limit: Some(1_000),
            };
            let inbox: ReviewInbox = backend.call_typed("review_list", &req).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&inbox)?);
                return Ok(());
            }
            let c = &inbox.counts;
            println!(
                "Review inbox: {} contradictions, {} likely duplicates, {} stale, {} junk.",
                c.contradiction, c.duplicate, c.stale, c.junk
            );
            for (n, e) in inbox.entries.iter().enumerate() {
                print_entry(n + 1, e);
            }
            if !inbox.unchecked_projects.is_empty() {
                println!(
                    "Not checked for stale items (their folders are not on this machine): {}",
                    inbox.unchecked_projects.join(", ")
                );
            }
            if inbox.entries.is_empty() {
                println!("Nothing to review.");
            } else {
                println!(
                    "Act with `cairn review act KEY merge|supersede|archive|keep [--keep ID]`."
                );
            }
        }
        Some(ReviewCommand::Act {
            entry,
            action,
            keep,
        }) => {
            let req = ReviewActReq {
                entry,
                action,
                keep,
            };
            let res: Result<ReviewActionView, ApiError> =
                backend.call_typed("review_act", &req).await;
            let a = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&a)?);
            } else {
                print_action(&a);
            }
        }
        Some(ReviewCommand::Undo { action }) => {
            let a: ReviewActionView = backend
                .call_typed("review_undo", &ReviewUndoReq { action })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&a)?);
            } else {
                print_action(&a);
            }
        }
    }
    Ok(())
}
