//! `cairn index`: the search indexes rebuilt from the logs, the vector index copied to a
//! Qdrant server, the server's key kept in the OS keyring.
use cairn_eval::progress::{call_with_progress, call_with_progress_req};

use super::{Ctx, Failure, llm};
use crate::cli::IndexCmd;

/// Runs `index rebuild`, `index migrate` or `index set-key`.
pub async fn run(ctx: &Ctx, what: IndexCmd) -> Result<(), Failure> {
    match what {
        IndexCmd::Rebuild { json } => {
            let backend = ctx.backend().await?;
            let res = call_with_progress::<cairn_core::api::IndexReport>(
                &backend,
                "index_rebuild",
                "indexing",
                json,
            )
            .await;
            backend.close().await;
            let r = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "Rebuilt {} records and {} vectors from the logs in {} ms.",
                    r.records, r.vectors, r.duration_ms
                );
            }
            Ok(())
        }
        IndexCmd::Migrate { to, url, json } => {
            let backend = ctx.backend().await?;
            let req = cairn_core::api::IndexMigrateReq { to, url };
            let res = call_with_progress_req::<_, cairn_core::api::IndexMigrateReport>(
                &backend,
                "index_migrate",
                &req,
                "indexing",
                json,
            )
            .await;
            backend.close().await;
            let r = res?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "Copied {} vectors to {} ({} points in its collection) in {} ms. {} now names it (index.backend = \"remote\"): restart Cairn to search it.",
                    r.points, r.url, r.collection_points, r.duration_ms, r.config_file
                );
            }
            Ok(())
        }
        IndexCmd::SetKey => {
            let key = llm::read_key("Qdrant")?;
            cairn_vectors::store_key(cairn_vectors::REMOTE_KEY_USER, &key).map_err(|e| {
                anyhow::anyhow!("cannot store the key in the OS keyring: {}", e.message)
            })?;
            println!("Stored the remote Qdrant API key in the OS keyring.");
            Ok(())
        }
    }
}
