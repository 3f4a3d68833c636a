//! `cairn skills`: a project's procedures and pitfalls as a section of the instruction file
//! a framework reads; shown, written with `--write`, taken out with `--remove`.
use anyhow::Context;
use cairn_api::ApiError;

use super::{Ctx, Failure};
use crate::cli::SkillsArgs;

/// Shows, writes or removes the section.
pub async fn run(ctx: &Ctx, args: SkillsArgs) -> Result<(), Failure> {
    let SkillsArgs {
        framework,
        project,
        dir,
        write,
        remove,
        json,
    } = args;
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir().context("cannot read the working directory")?,
    };
    let dir = std::path::absolute(&dir)
        .with_context(|| format!("cannot make {} absolute", dir.display()))?;
    let project = project
        .or_else(|| Some(cairn_text::project::identify(&dir)))
        .unwrap_or_default();
    let req = cairn_core::api::SkillsReq {
        project,
        framework,
        dir: dir.display().to_string(),
        remove,
    };
    let backend = ctx.backend().await?;
    let method = if write || remove {
        "skills_write"
    } else {
        "skills_preview"
    };
    let res: Result<cairn_core::api::SkillsPreview, ApiError> =
        backend.call_typed(method, &req).await;
    backend.close().await;
    let p = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&p)?);
    } else {
        print_skills(&p, &req.project);
    }
    Ok(())
}

/// `cairn skills` in text.
fn print_skills(p: &cairn_core::api::SkillsPreview, project: &str) {
    match p.action.as_deref() {
        Some("created") => println!("Wrote Cairn's section into {} (a new section).", p.file),
        Some("updated") => println!("Updated Cairn's section in {}.", p.file),
        Some("unchanged") => println!("{} already holds this section; nothing written.", p.file),
        Some("removed") => println!("Took Cairn's section out of {}.", p.file),
        Some("absent") => println!("{} holds no section of Cairn's; nothing to do.", p.file),
        Some(other) => println!("{}: {other}", p.file),
        None => {
            if p.section.is_empty() {
                println!(
                    "Project {project} has no procedure or pitfall yet; there is nothing to write into {}.",
                    p.file
                );
                return;
            }
            let state = match (&p.current, p.up_to_date) {
                (_, true) => "holds this section already",
                (Some(_), false) => "holds an older section of Cairn's (--write updates it)",
                (None, false) if p.exists => {
                    "has no section of Cairn's yet (--write adds it at the end)"
                }
                (None, false) => "does not exist yet (--write creates it)",
            };
            println!(
                "{} {} ({} procedures and pitfalls). The section:\n",
                p.file,
                state,
                p.entries.len()
            );
            print!("{}", p.section);
        }
    }
}
