//! `service.json`: the file through which a running service tells its clients where it is,
//! which token to present and how long agents' hooks wait for it (mode 0600, written
//! atomically). The service writes it; the client, the single-instance lock and the hooks
//! read it.
use std::path::Path;

use cairn_core::api::ServiceHost;
use serde::{Deserialize, Serialize};

/// What a running service writes to `service.json` in the runtime dir (mode 0600).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceFile {
    /// The service's process id.
    pub pid: u32,
    /// Daemon or desktop.
    pub host: ServiceHost,
    /// Cairn's version.
    pub version: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Base URL of the HTTP API, e.g. `http://127.0.0.1:7420`.
    pub url: String,
    /// The bearer token, fresh for each run.
    pub token: String,
    /// This run's random id, which `GET /api/health` reports too. A file without one (written
    /// by a Cairn before 0.1 had it) cannot be checked, so clients treat it as a mismatch and
    /// never send its token: restarting that service writes a new file. (A boxed `str`
    /// keeps this struct, and the errors that carry it, small.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<Box<str>>,
    /// How much longer than their own deadline agents' hooks should wait for a turn note, in
    /// milliseconds: set while the LLM judge is on (`llm.judge`), which may take that long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_wait_ms: Option<u32>,
    /// How long agents' hooks wait for a turn note, in milliseconds from their start: the
    /// user's `hook.deadline_ms`. A file without it (an older service) leaves the hooks'
    /// built-in deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_deadline_ms: Option<u32>,
}

impl ServiceFile {
    /// Reads a service file.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        let text = fs_err::read_to_string(path)?;
        serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })
    }

    /// Writes it atomically, readable by the owner only.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        let mut opts = fs_err::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use fs_err::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        {
            let mut f = opts.open(&tmp)?;
            std::io::Write::write_all(&mut f, &body)?;
            f.sync_all()?;
        }
        fs_err::rename(&tmp, path)
    }

    /// The UI's address with the token in its fragment (never sent to the server by the
    /// browser, read by the page).
    pub fn ui_url(&self) -> String {
        format!("{}/#token={}", self.url, self.token)
    }
}
