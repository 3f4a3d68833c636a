//! `cairn export` and `cairn import`: everything remembered written to a folder in open
//! formats (Markdown notes and items, JSONL records and item events, a manifest with a sha256
//! per file) and read back into another Cairn, with a progress bar meanwhile.
use std::path::Path;

use cairn_api::{ApiError, Backend};
use cairn_core::api::{ExportReport, ExportReq, ImportCounts, ImportReport, ImportReq};
use cairn_eval::progress::call_with_progress_req;

use super::{Ctx, Failure};
use crate::cli::{ExportArgs, ImportArgs};

/// The folder as an absolute path (relative ones are taken from the working directory).
fn absolute(dir: &Path) -> std::io::Result<String> {
    Ok(std::path::absolute(dir)?.display().to_string())
}

/// `cairn export`.
pub async fn export(ctx: &Ctx, args: ExportArgs) -> Result<(), Failure> {
    let ExportArgs {
        dir,
        project,
        since,
        json,
    } = args;
    let backend = ctx.backend().await?;
    let res = export_with(&backend, &dir, project, since, json).await;
    backend.close().await;
    Ok(res?)
}

/// Runs `export_run`, printing the report (JSON with `json`).
async fn export_with(
    backend: &Backend,
    dir: &Path,
    project: Option<String>,
    since: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let req = ExportReq {
        dir: absolute(dir)?,
        project,
        since,
    };
    let report: ExportReport =
        call_with_progress_req(backend, "export_run", &req, "transfer", json).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "Exported {} records, {} item events ({} items, {} relations), {} notes ({} versions) to {}: {} files, {} bytes in {} ms.",
            report.records,
            report.item_events,
            report.items,
            report.relations,
            report.notes,
            report.note_versions,
            report.dir,
            report.files,
            report.bytes,
            report.duration_ms
        );
    }
    Ok(())
}

fn line(what: &str, c: &ImportCounts) -> String {
    format!(
        "{what}: {} added, {} already there, {} conflicting",
        c.added, c.duplicates, c.conflicts
    )
}

/// `cairn import`.
pub async fn import(ctx: &Ctx, args: ImportArgs) -> Result<(), Failure> {
    let ImportArgs { dir, json } = args;
    let backend = ctx.backend().await?;
    let res = import_with(&backend, &dir, json).await;
    backend.close().await;
    Ok(res?)
}

/// Runs `import_run`, printing the report (JSON with `json`).
async fn import_with(backend: &Backend, dir: &Path, json: bool) -> anyhow::Result<()> {
    let req = ImportReq {
        dir: absolute(dir)?,
    };
    let res: Result<ImportReport, ApiError> =
        call_with_progress_req(backend, "import_run", &req, "transfer", json).await;
    let report = res?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "Imported {} ({} files checked, {} ms):",
        report.dir, report.files, report.duration_ms
    );
    println!("  {}", line("records", &report.records));
    println!("  {}", line("item events", &report.item_events));
    println!("  {}", line("relations", &report.relations));
    println!("  {}", line("notes", &report.notes));
    if !report.conflicts.is_empty() {
        println!("Kept the stored version of:");
        for c in &report.conflicts {
            println!("  {c}");
        }
    }
    Ok(())
}
