//! The client side of the loopback HTTP API, and `service.json`, the file through which a
//! running service tells its clients where it is and which token to present.
//!
//! Before the token leaves this process, the client checks that whatever answers at the
//! address in `service.json` is the service that wrote it: its health check must report the
//! file's instance id and prove, over a fresh random challenge, that it knows the token.
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cairn_core::ErrorCode;
use cairn_core::api::ApiErrorBody;

use crate::service_file::ServiceFile;
use crate::{ApiError, Result};

/// A client of a running service.
#[derive(Debug, Clone)]
pub struct Client {
    info: ServiceFile,
    agent: ureq::Agent,
    /// Whether the service answering at `info.url` proved to be the one that wrote `info`.
    verified: Arc<AtomicBool>,
}

/// Who answered the health check.
enum Answer {
    /// Nothing (connection refused, timed out): no service runs there.
    Nobody,
    /// The service that wrote the file.
    Ours,
    /// Something else; why it is not ours.
    Other(String),
}

/// Methods that may run for minutes.
const LONG_METHODS: [&str; 10] = [
    "capture_run",
    "replay_run",
    "index_migrate",
    "export_run",
    "import_run",
    "index_rebuild",
    "distill_now",
    "distill_rebuild",
    "sleep_now",
    "llm_download",
];

impl Client {
    /// A client for the service described by `info`. Its first call checks who answers
    /// (see [`Client::verify`]) before it sends the token.
    pub fn new(info: ServiceFile) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .timeout_connect(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        Self {
            info,
            agent,
            verified: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Finds the running service from its `service.json` and checks that it answers and is
    /// the one that wrote the file. `None` when no service runs (no file, or a stale one
    /// left by a killed process), and also when something else answers at the file's address
    /// (logged; [`Client::discover_checked`] tells that case apart).
    pub fn discover(service_file: &Path) -> Option<Self> {
        match Self::discover_checked(service_file) {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "not using service.json");
                None
            }
        }
    }

    /// As [`Client::discover`], with an error when something other than the service that
    /// wrote `service.json` answers at its address (the token is not sent to it).
    pub fn discover_checked(service_file: &Path) -> Result<Option<Self>> {
        let Ok(info) = ServiceFile::read(service_file) else {
            return Ok(None);
        };
        let client = Self::new(info);
        match client.identify() {
            Answer::Nobody => Ok(None),
            Answer::Ours => {
                client.verified.store(true, Ordering::Release);
                Ok(Some(client))
            }
            Answer::Other(why) => Err(client.impostor(&why)),
        }
    }

    /// What the service wrote about itself.
    pub fn info(&self) -> &ServiceFile {
        &self.info
    }

    /// Whether the service that wrote the file answers its health check.
    pub fn health(&self) -> bool {
        matches!(self.identify(), Answer::Ours)
    }

    /// Checks, once per client, that the service answering at the file's address is the one
    /// that wrote it; an error (and no token sent) when nothing or something else answers.
    pub fn verify(&self) -> Result<()> {
        if self.verified.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.identify() {
            Answer::Ours => {
                self.verified.store(true, Ordering::Release);
                Ok(())
            }
            Answer::Nobody => Err(ApiError::new(
                ErrorCode::Unavailable,
                format!("cannot reach Cairn at {}", self.info.url),
            )),
            Answer::Other(why) => Err(self.impostor(&why)),
        }
    }

    fn impostor(&self, why: &str) -> ApiError {
        ApiError::new(
            ErrorCode::Unavailable,
            format!(
                "the service answering at {} is not the one that wrote service.json ({why}); \
                 its token was not sent. If Cairn is not running, start it (`cairn daemon` or the desktop app); \
                 if it is, another program has taken its address",
                self.info.url
            ),
        )
    }

    /// Asks the health check, with a fresh challenge, who answers at the file's address.
    /// Sends no token.
    fn identify(&self) -> Answer {
        let Some(expected) = self.info.instance.as_deref() else {
            return match self.health_answer(None) {
                Err(_) => Answer::Nobody,
                Ok(_) => Answer::Other(
                    "service.json has no instance id, so an older Cairn wrote it; restart that Cairn".into(),
                ),
            };
        };
        let mut challenge = [0u8; 32];
        if let Err(e) = getrandom::fill(&mut challenge) {
            return Answer::Other(format!("no randomness for the challenge: {e}"));
        }
        let challenge = hex::encode(challenge);
        let health = match self.health_answer(Some(&challenge)) {
            Err(_) => return Answer::Nobody,
            Ok(Err(why)) => return Answer::Other(why),
            Ok(Ok(h)) => h,
        };
        match health.instance.as_deref() {
            None => return Answer::Other("it reports no instance id".into()),
            Some(got) if got != expected => {
                return Answer::Other(format!(
                    "it reports instance {got}, service.json names {expected}"
                ));
            }
            Some(_) => {}
        }
        let proof = crate::http::health_proof(&self.info.token, &challenge);
        if health.proof.as_deref() == Some(proof.as_str()) {
            Answer::Ours
        } else {
            Answer::Other(
                "it reports the right instance id but cannot prove it knows the token".into(),
            )
        }
    }

    /// `Err` when nothing answers; `Ok(Err(why))` when something answers that is not a
    /// Cairn health check.
    fn health_answer(
        &self,
        challenge: Option<&str>,
    ) -> std::result::Result<std::result::Result<crate::http::Health, String>, ureq::Error> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(3)))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        let mut request = agent.get(&format!("{}/api/health", self.info.url));
        if let Some(c) = challenge {
            request = request.query("challenge", c);
        }
        let mut resp = request.call()?;
        let status = resp.status();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        if !status.is_success() {
            return Ok(Err(format!("its health check answered {status}")));
        }
        Ok(serde_json::from_str(&text)
            .map_err(|e| format!("its health check is not Cairn's ({e})")))
    }

    /// Calls one method (after [`Client::verify`], so the token only goes to the service
    /// that wrote `service.json`).
    pub fn call(&self, method: &str, params: &serde_json::Value) -> Result<serde_json::Value> {
        self.verify()?;
        let url = format!("{}/api/rpc/{method}", self.info.url);
        // Work that runs for minutes (a capture of a large store, a rebuild, distillation
        // through a model) gets an hour; everything else answers within two minutes.
        let limit = if LONG_METHODS.contains(&method) {
            Duration::from_secs(3_600)
        } else {
            Duration::from_secs(120)
        };
        let mut resp = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(limit))
            .build()
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
