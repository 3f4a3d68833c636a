//! `cairn items`: memory items, newest first.
use std::io::Write;

use cairn_api::ApiError;

use super::{Ctx, Failure};
use crate::cli::ItemsArgs;

/// Lists the items (a JSON array with `--json`).
pub async fn run(ctx: &Ctx, args: ItemsArgs) -> Result<(), Failure> {
    let ItemsArgs {
        project,
        conversation,
        all,
        json,
    } = args;
    let (framework, session_id) = match conversation.as_deref() {
        Some(c) => match c.split_once(':') {
            Some((f, s)) if !f.is_empty() && !s.is_empty() => {
                (Some(f.to_owned()), Some(s.to_owned()))
            }
            _ => {
                return Err(Failure {
                    code: 2,
                    error: anyhow::anyhow!(
                        "--conversation takes FRAMEWORK:SESSION_ID (for example claude-code:5b0c2a4e-…), got {c:?}"
                    ),
                });
            }
        },
        None => (None, None),
    };
    let backend = ctx.backend().await?;
    let req = cairn_core::api::ItemsReq {
        framework,
        session_id,
        project,
        all,
        limit: None,
    };
    let res: Result<cairn_core::api::ItemList, ApiError> =
        backend.call_typed("items_list", &req).await;
    backend.close().await;
    let list = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list.items)?);
    } else {
        let mut out = std::io::stdout().lock();
        if list.items.is_empty() {
            writeln!(out, "No items.")?;
        }
        for i in &list.items {
            writeln!(
                out,
                "{} · {} · {}{}\n    {}\n    {}\n",
                i.said_at.as_deref().unwrap_or("-"),
                i.kind,
                i.title,
                if i.superseded_by.is_some() {
                    " · superseded"
                } else if i.archived {
                    " · archived"
                } else {
                    ""
                },
                i.summary,
                i.id
            )?;
        }
    }
    Ok(())
}
