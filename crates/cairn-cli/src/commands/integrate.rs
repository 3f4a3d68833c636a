//! `cairn integrate`: Cairn's MCP server and hooks registered with an agent framework,
//! removed, or listed.
use cairn_api::ApiError;

use super::{Ctx, Failure};
use crate::cli::IntegrateArgs;

/// Registers, removes or lists, and prints what changed.
pub async fn run(ctx: &Ctx, args: IntegrateArgs) -> Result<(), Failure> {
    let IntegrateArgs {
        framework,
        remove,
        list,
        json,
    } = args;
    let backend = ctx.backend().await?;
    let out = if list {
        let res: Result<cairn_core::api::IntegrationList, ApiError> = backend
            .call_typed("integrations_list", &cairn_core::api::Empty {})
            .await;
        res.map(|r| {
            if json {
                serde_json::to_string_pretty(&r).unwrap_or_default()
            } else {
                format_integrations(&r)
            }
        })
    } else {
        let req = cairn_core::api::IntegrationSetReq {
            framework: framework.unwrap_or_default(),
            installed: !remove,
        };
        let res: Result<cairn_core::api::IntegrationChange, ApiError> =
            backend.call_typed("integration_set", &req).await;
        res.map(|c| {
            if json {
                serde_json::to_string_pretty(&c).unwrap_or_default()
            } else {
                format_change(&c)
            }
        })
    };
    backend.close().await;
    println!("{}", out?);
    Ok(())
}

fn format_integrations(list: &cairn_core::api::IntegrationList) -> String {
    let mut out = format!(
        "{:<12} {:<58} {:<14} {}\n",
        "FRAMEWORK", "MCP CONFIG", "HOOKS", "MCP"
    );
    let mut footnotes = Vec::new();
    for i in &list.integrations {
        let state = match (i.installed, i.current, i.detected) {
            (true, true, _) => "installed",
            (true, false, _) => "installed (another cairn binary: run `cairn integrate` again)",
            (false, _, true) => "not installed",
            (false, _, false) => "not installed (framework not found)",
        };
        let hooks = match i.hooks.as_deref() {
            None => "-",
            Some("not_installed") => "not installed",
            Some(other) => other,
        };
        out.push_str(&format!(
            "{:<12} {:<58} {:<14} {}\n",
            i.framework, i.path, hooks, state
        ));
        if let Some(path) = &i.hooks_path {
            footnotes.push(format!("{} hooks: {path}", i.framework));
        }
        if let Some(note) = &i.hooks_note {
            footnotes.push(format!("{}: {note}", i.framework));
        }
        if i.installed
            && let Some(manual) = &i.manual
        {
            footnotes.push(format!("{} (by hand): {manual}", i.framework));
        }
    }
    if !footnotes.is_empty() {
        out.push('\n');
        out.push_str(&footnotes.join("\n"));
    }
    out.trim_end().to_owned()
}

fn format_change(c: &cairn_core::api::IntegrationChange) -> String {
    let what = match c.action.as_str() {
        "installed" => "Registered Cairn's MCP server in",
        "updated" => "Updated Cairn's MCP registration in",
        "already_installed" => "Already registered in",
        "removed" => "Removed Cairn's MCP registration from",
        _ => "Cairn was not registered in",
    };
    let mut out = format!("{what} {} ({}).", c.path, c.framework);
    if let Some(b) = &c.backup {
        out.push_str(&format!("\nBackup of the previous file: {b}"));
    }
    if let (Some(action), Some(path)) = (&c.hooks, &c.hooks_path) {
        let what = match action.as_str() {
            "installed" => "Installed Cairn's hooks in",
            "updated" => "Updated Cairn's hooks in",
            "already_installed" => "Cairn's hooks already in",
            "removed" => "Removed Cairn's hooks from",
            _ => "No Cairn hooks in",
        };
        out.push_str(&format!("\n{what} {path}."));
        if let Some(b) = c
            .hooks_backup
            .as_ref()
            .filter(|b| c.backup.as_ref() != Some(*b))
        {
            out.push_str(&format!("\nBackup of the previous hook file: {b}"));
        }
    }
    for n in &c.notes {
        out.push_str(&format!("\nNote: {n}"));
    }
    if let Some(manual) = c.manual.as_ref().filter(|_| c.action != "removed") {
        out.push_str(&format!("\nTo do by hand: {manual}"));
    }
    out
}
