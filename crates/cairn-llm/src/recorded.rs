//! Recorded answers: a provider that replays, for each prompt, an answer kept in a folder (a
//! JSON file per prompt), or that records them while another provider answers. Tests of
//! distillation run end to end on committed recordings, with no network; a prompt change (a
//! new prompt version) finds no recording and fails, naming the prompt.
//!
//! A recording says where its answer came from in its `recorded` field: "written by hand
//! for the tests" ([`Recorded::written_by_hand`]), or the provider and model of the real run
//! that gave it, and when ([`Recorded::recording`]). It keeps no token counts and no cost:
//! a replayed answer reports none.
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

/// The origin of answers written by hand for the tests.
pub const WRITTEN_BY_HAND: &str = "written by hand for the tests";

#[derive(Debug, Serialize, Deserialize)]
struct Recording {
    /// Where the answer came from.
    recorded: String,
    purpose: String,
    text: String,
}

/// Replays recordings, or records them.
#[derive(Clone)]
pub struct Recorded {
    dir: PathBuf,
    inner: Option<Arc<dyn Provider>>,
    /// The origin written into new recordings; `None`: the real run's provider and model.
    origin: Option<String>,
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
            origin: None,
            name: "recorded".into(),
            model: "recorded".into(),
        }
    }

    /// Answers from `dir` when a recording exists, else asks `inner` (a real provider) and
    /// records its answer, labelled with the provider, the model that answered and the date.
    pub fn recording(dir: &Path, inner: Arc<dyn Provider>) -> Self {
        Self {
            dir: dir.to_path_buf(),
            name: inner.name().to_owned(),
            model: inner.model().to_owned(),
            inner: Some(inner),
            origin: None,
        }
    }

    /// Answers from `dir` when a recording exists, else asks `scripted` (answers a test
    /// writes itself) and records its answer labelled [`WRITTEN_BY_HAND`].
    pub fn written_by_hand(dir: &Path, scripted: Arc<dyn Provider>) -> Self {
        Self {
            origin: Some(WRITTEN_BY_HAND.to_owned()),
            ..Self::recording(dir, scripted)
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
                    "recorded: {} is not a recording (a \"recorded\" origin, the \"purpose\" \
                     and the answer's \"text\"): {e}",
                    file.display()
                ))
            })?;
            return Ok(Reply {
                text: r.text,
                model: "recorded".into(),
                usage: Usage::default(),
                cost_usd: None,
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
        let recorded = self.origin.clone().unwrap_or_else(|| {
            format!(
                "answered by {} ({}) on {}",
                inner.name(),
                reply.model,
                chrono::Utc::now().format("%Y-%m-%d")
            )
        });
        let rec = Recording {
            recorded,
            purpose: request.purpose.clone(),
            text: reply.text.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Scripted;

    impl Provider for Scripted {
        fn name(&self) -> &str {
            "written-by-hand"
        }
        fn model(&self) -> &str {
            "none"
        }
        fn complete(&self, _: &Request, _: Instant) -> Result<Reply, ProviderError> {
            Ok(Reply {
                text: "{\"ok\": true}".into(),
                model: "none".into(),
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                },
                cost_usd: Some(0.5),
            })
        }
    }

    fn request() -> Request {
        Request {
            purpose: "test".into(),
            system: "s".into(),
            prompt: "p".into(),
            schema: serde_json::json!({"type": "object"}),
            max_tokens: 10,
        }
    }

    #[test]
    fn recordings_say_where_they_came_from_and_keep_no_counts_or_cost() {
        let dir = tempfile::tempdir().unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let hand = Recorded::written_by_hand(dir.path(), Arc::new(Scripted));
        hand.complete(&request(), deadline).unwrap();
        let file = dir.path().join(format!("{}.json", prompt_key(&request())));
        let saved: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"recorded": WRITTEN_BY_HAND, "purpose": "test",
                               "text": "{\"ok\": true}"})
        );
        let replayed = Recorded::replay(dir.path())
            .complete(&request(), deadline)
            .unwrap();
        assert_eq!(
            (replayed.model.as_str(), replayed.usage, replayed.cost_usd),
            ("recorded", Usage::default(), None)
        );
        // A recording with no origin is refused, naming the file and what it lacks.
        fs_err::write(&file, r#"{"purpose": "test", "text": "{}"}"#).unwrap();
        let err = Recorded::replay(dir.path())
            .complete(&request(), deadline)
            .unwrap_err();
        assert!(
            err.message.contains("is not a recording") && err.message.contains("recorded"),
            "{}",
            err.message
        );
    }
}
