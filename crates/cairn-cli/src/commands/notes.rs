//! `cairn notes titles`: the note titles an agent's instructions get.
use cairn_api::ApiError;

use super::{Ctx, Failure, current_project};
use crate::cli::NotesCmd;

/// Prints the titles (JSON with `--json`).
pub async fn run(ctx: &Ctx, what: NotesCmd) -> Result<(), Failure> {
    let NotesCmd::Titles { project, json } = what;
    let backend = ctx.backend().await?;
    let req = cairn_core::api::NotesTitlesReq {
        project: project.or_else(current_project),
        max_chars: None,
    };
    let res: Result<cairn_core::api::NoteTitles, ApiError> =
        backend.call_typed("notes_titles", &req).await;
    backend.close().await;
    let res = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&res)?);
    } else if !res.text.is_empty() {
        println!("{}", res.text);
    }
    Ok(())
}
