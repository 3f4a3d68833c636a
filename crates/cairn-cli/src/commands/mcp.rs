//! `cairn mcp`: Cairn's tools served to an agent over MCP (stdio), a client of the running
//! service.
use super::{Ctx, Failure, current_project, memory_tool};
use crate::cli::McpArgs;

/// Serves until the agent closes standard input.
pub async fn run(ctx: &Ctx, args: McpArgs) -> Result<(), Failure> {
    let McpArgs {
        read_only,
        project,
        mounts,
    } = args;
    let project = project.or_else(current_project);
    let mounts = mounts
        .iter()
        .map(|m| memory_tool::parse_mount(m))
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(|e| Failure { code: 2, error: e })?;
    cairn_mcp::serve_stdio(cairn_mcp::Options {
        service_file: ctx.paths.service_file(),
        project,
        access: if read_only {
            cairn_core::api::NoteAccess::ReadOnly
        } else {
            cairn_core::api::NoteAccess::ReadWrite
        },
        mounts,
    })
    .await
    .map_err(|e| Failure::from(anyhow::anyhow!(e)))
}
