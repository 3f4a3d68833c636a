//! Recorded answers: a provider that replays, for each prompt, the answer a real model gave
//! once (a JSON file per prompt in a folder), or that records them while another provider
//! answers. Tests of distillation run end to end on committed recordings, with no network;
//! a prompt change (a new prompt version) finds no recording and fails, naming the prompt.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Provider, ProviderError, Reply, Request, Usage};

/// JSON text with every object's keys sorted, whatever order the value keeps them in (with
/// serde_json's `preserve_order` feature, which another crate of a build may switch on, maps
/// keep insertion order): the same value always gives the same text.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::Value::String(k.clone()),
                        canonical(&m[k])
                    )
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(a) => {
            format!(
                "[{}]",
                a.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

/// The name of a request's recording: the first 16 hex digits of the SHA-256 of its purpose,
/// system text, schema (keys sorted) and prompt.
pub fn prompt_key(r: &Request) -> String {
    let mut h = Sha256::new();
    for part in [
        r.purpose.as_str(),
        r.system.as_str(),
        &canonical(&r.schema),
        r.prompt.as_str(),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())[..16].to_owned()
}

#[derive(Debug, Serialize, Deserialize)]
struct Recording {
    provider: String,
    model: String,
    purpose: String,
    text: String,
    usage: Usage,
    cost_usd: Option<f64>,
}

/// Replays recordings, or records them.
#[derive(Clone)]
pub struct Recorded {
    dir: PathBuf,
    inner: Option<Arc<dyn Provider>>,
    name: String,
    model: String,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorded")
            .field("dir", &self.dir)
            .field("recording", &self.inner.is_some())
            .finish()
    }
}

impl Recorded {
    /// Replays the recordings in `dir`.
    pub fn replay(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            inner: None,
            name: "recorded".into(),
            model: "recorded".into(),
        }
    }

    /// Answers from `dir` when a recording exists, else asks `inner` and records its answer.
    pub fn recording(dir: &Path, inner: Arc<dyn Provider>) -> Self {
        Self {
            dir: dir.to_path_buf(),
            name: inner.name().to_owned(),
            model: inner.model().to_owned(),
            inner: Some(inner),
        }
    }

    fn file(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }
}

impl Provider for Recorded {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &Request, deadline: Instant) -> Result<Reply, ProviderError> {
        let key = prompt_key(request);
        let file = self.file(&key);
        if let Ok(text) = fs_err::read_to_string(&file) {
            let r: Recording = serde_json::from_str(&text).map_err(|e| {
                ProviderError::fatal(format!(
                    "recorded: {} is not a recording: {e}",
                    file.display()
                ))
            })?;
            return Ok(Reply {
                text: r.text,
                model: r.model,
                usage: r.usage,
                cost_usd: r.cost_usd,
            });
        }
        let Some(inner) = &self.inner else {
            return Err(ProviderError::fatal(format!(
                "recorded: no answer recorded for the {} prompt {key} in {} (the prompt \
                 changed? record again with a real provider)",
                request.purpose,
                self.dir.display()
            )));
        };
        let reply = inner.complete(request, deadline)?;
        let rec = Recording {
            provider: inner.name().to_owned(),
            model: reply.model.clone(),
            purpose: request.purpose.clone(),
            text: reply.text.clone(),
            usage: reply.usage,
            cost_usd: reply.cost_usd,
        };
        let write = || -> std::io::Result<()> {
            fs_err::create_dir_all(&self.dir)?;
            let body = serde_json::to_string_pretty(&rec).map_err(std::io::Error::other)?;
            fs_err::write(&file, body + "\n")
        };
        write().map_err(|e| {
            ProviderError::fatal(format!("recorded: cannot write {}: {e}", file.display()))
        })?;
        Ok(reply)
    }
}
