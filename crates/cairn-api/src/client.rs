//! The client side of the loopback HTTP API, and `service.json`, the file through which a
//! running service tells its clients where it is and which token to present.
use std::path::Path;
use std::time::Duration;

use cairn_core::ErrorCode;
use cairn_core::api::{ApiErrorBody, ServiceHost};
use serde::{Deserialize, Serialize};

use crate::{ApiError, Result};

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

/// A client of a running service.
#[derive(Debug, Clone)]
pub struct Client {
    info: ServiceFile,
    agent: ureq::Agent,
}

impl Client {
    /// A client for the service described by `info`.
    pub fn new(info: ServiceFile) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .timeout_connect(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .build()
            .into();
        Self { info, agent }
    }

    /// Finds the running service from its `service.json` and checks that it answers.
    /// `None` when no service runs (no file, or a stale one left by a killed process).
    pub fn discover(service_file: &Path) -> Option<Self> {
        let info = ServiceFile::read(service_file).ok()?;
        let client = Self::new(info);
        client.health().then_some(client)
    }

    /// What the service wrote about itself.
    pub fn info(&self) -> &ServiceFile {
        &self.info
    }

    /// Whether the service answers its health check.
    pub fn health(&self) -> bool {
        let short = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(3)))
            .http_status_as_error(false)
            .build();
        let agent: ureq::Agent = short.into();
        agent
            .get(&format!("{}/api/health", self.info.url))
            .call()
            .is_ok_and(|r| r.status().is_success())
    }

    /// Calls one method.
    pub fn call(&self, method: &str, params: &serde_json::Value) -> Result<serde_json::Value> {
        let url = format!("{}/api/rpc/{method}", self.info.url);
        let mut resp = self
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {}", self.info.token))
            .send_json(params)
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::Unavailable,
                    format!("cannot reach Cairn at {}: {e}", self.info.url),
                )
            })?;
        let status = resp.status();
        let text = resp.body_mut().read_to_string().map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                format!("bad answer from {url}: {e}"),
            )
        })?;
        if status.is_success() {
            serde_json::from_str(&text)
                .map_err(|e| ApiError::internal(format!("bad answer from {url}: {e}")))
        } else {
            match serde_json::from_str::<ApiErrorBody>(&text) {
                Ok(body) => Err(body.into()),
                Err(_) => Err(ApiError::internal(format!(
                    "{url} answered {status}: {text}"
                ))),
            }
        }
    }
}
