//! `cairn memory on|off|pause`: the memory switch.
use cairn_api::ApiError;
use cairn_core::api::{MemoryPauseReq, MemorySetReq, MemoryState};

use super::{Ctx, Failure};
use crate::cli::MemoryCmd;

/// Switches memory on or off, or pauses it, and says what it is now.
pub async fn run(ctx: &Ctx, cmd: MemoryCmd) -> Result<(), Failure> {
    let backend = ctx.backend().await?;
    let res: Result<MemoryState, ApiError> = match cmd {
        MemoryCmd::On | MemoryCmd::Off => {
            let req = MemorySetReq {
                enabled: matches!(cmd, MemoryCmd::On),
            };
            backend.call_typed("memory_set", &req).await
        }
        MemoryCmd::Pause { duration, until } => {
            let req = MemoryPauseReq { duration, until };
            backend.call_typed("memory_pause", &req).await
        }
    };
    backend.close().await;
    let res = res?;
    println!("Memory is {}.", memory_text(&res, true));
    Ok(())
}

/// The memory state in words: on, off, or paused and until when (in local time). `long`
/// adds what it means.
pub(super) fn memory_text(m: &MemoryState, long: bool) -> String {
    let what = if m.enabled {
        "on".to_owned()
    } else if m.paused {
        match m.paused_until.as_deref() {
            Some(until) => format!("paused until {}", local_time(until)),
            None => "paused until resumed (cairn memory on)".to_owned(),
        }
    } else {
        "off".to_owned()
    };
    if long && !m.enabled {
        format!("{what}: Cairn captures nothing and its search service is stopped")
    } else {
        what
    }
}

/// An RFC 3339 time in the local time zone, with its offset (as given when unreadable).
fn local_time(t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| {
            d.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S %:z")
                .to_string()
        })
        .unwrap_or_else(|_| t.to_owned())
}
