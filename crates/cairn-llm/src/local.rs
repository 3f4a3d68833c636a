//! A GGUF model run inside Cairn (no network, no cost). The answer is started with `{` or
//! `[` as the schema asks, so even a small model writes JSON from its first token.
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cairn_models::gguf::{GenerateRequest, GgufModel, StopReason};

use crate::{Provider, ProviderError, Reply, Request, Usage};

/// The local GGUF model as a provider.
#[derive(Clone)]
pub struct Local {
    model: Arc<GgufModel>,
    id: String,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local").field("model", &self.id).finish()
    }
}

impl Local {
    /// Loads the GGUF file at `path`.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        let model =
            GgufModel::load(path).map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        let id = model.model_id().to_owned();
        Ok(Self {
            model: Arc::new(model),
            id,
        })
    }
}

/// The start of the answer, written for the model: `[` for an array; for an object, its
/// first required field's name (and the opening quote of a text value), so that even a very
/// small model starts on the right track.
fn prefill(schema: &serde_json::Value) -> String {
    if schema["type"] == "array" {
        return "[".into();
    }
    let Some(first) = schema["required"].get(0).and_then(|k| k.as_str()) else {
        return "{".into();
    };
    let key = serde_json::Value::String(first.to_owned());
    match schema["properties"][first]["type"].as_str() {
        Some("string") => format!("{{{key}: \""),
        Some("array") => format!("{{{key}: ["),
        Some("object") => format!("{{{key}: {{"),
        _ => format!("{{{key}: "),
    }
}

impl Provider for Local {
    fn name(&self) -> &str {
        "local"
    }

    fn model(&self) -> &str {
        &self.id
    }

    fn complete(&self, request: &Request, deadline: Instant) -> Result<Reply, ProviderError> {
        let prefill = prefill(&request.schema);
        let system = request.instructions_with_schema();
        let mut req = GenerateRequest {
            system: &system,
            prompt: &request.prompt,
            prefill: &prefill,
            max_tokens: usize::try_from(request.max_tokens).unwrap_or(usize::MAX),
            deadline: Some(deadline),
            stop: &[],
        };
        // A small model's context is short: the answer gets what the prompt leaves.
        let prompt_tokens = self
            .model
            .prompt_tokens(&req)
            .map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        let room = self.model.context_length().saturating_sub(prompt_tokens);
        if room < 16 {
            return Err(ProviderError::fatal(format!(
                "local: the prompt ({prompt_tokens} tokens) leaves no room for an answer in \
                 the {} tokens of {}'s context",
                self.model.context_length(),
                self.id
            )));
        }
        req.max_tokens = req.max_tokens.min(room);
        let g = self
            .model
            .generate(&req)
            .map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        if matches!(g.stop, StopReason::Deadline) {
            return Err(ProviderError::timeout(format!(
                "local: {} had not finished at the deadline ({} tokens written)",
                self.id, g.output_tokens
            )));
        }
        Ok(Reply {
            text: g.text,
            model: self.id.clone(),
            usage: Usage {
                input_tokens: g.prompt_tokens,
                output_tokens: g.output_tokens,
            },
            cost_usd: Some(0.0),
        })
    }
}
