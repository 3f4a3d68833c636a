//! A GGUF model run inside Cairn (no network, no cost), held to the request's JSON schema
//! token by token ([`crate::constrain`]): its answer is always JSON of the schema's shape,
//! closed before the token budget or the deadline ends it. A schema the decoder cannot hold
//! to is refused before anything is generated. The answer starts with a prefill (the first
//! required field's name) so that even a very small model starts on the right track.
//!
//! The model's pace on this machine ([`Speed`]: prompt tokens read and answer tokens written
//! per second) is measured by a short call of its own before the first request, then by
//! every request. It sizes the deadline of each request (prompt tokens / reading pace +
//! answer budget / writing pace, with a margin) and the windows distillation sends.
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cairn_models::gguf::{GenerateRequest, GgufModel, StopReason};

use crate::constrain::{Grammar, JsonConstraint, TokenTable};
use crate::{Provider, ProviderError, Reply, Request, Speed, Usage};

/// Characters of window text per prompt token, counted low (code and logs tokenize densely).
const CHARS_PER_TOKEN: usize = 3;
/// The smallest window offered, whatever the pace.
const MIN_WINDOW_CHARS: usize = 1_000;
/// The deadline's margin over the estimate.
const MARGIN: f64 = 1.5;
/// Added to every estimate (loading, masking, the machine being busy).
const SLACK: Duration = Duration::from_secs(5);

/// The local GGUF model as a provider.
#[derive(Clone)]
pub struct Local {
    model: Arc<GgufModel>,
    id: String,
    table: Arc<TokenTable>,
    speed: Arc<Mutex<Option<Speed>>>,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local").field("model", &self.id).finish()
    }
}

impl Local {
    /// Loads the GGUF file at `path` and indexes its vocabulary for constrained decoding.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        let model =
            GgufModel::load(path).map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        let id = model.model_id().to_owned();
        let table = TokenTable::new(model.token_texts());
        Ok(Self {
            model: Arc::new(model),
            id,
            table: Arc::new(table),
            speed: Arc::new(Mutex::new(None)),
        })
    }

    /// Answers `request` held to its schema or not (`constrained`), for comparisons: the text
    /// and the answer tokens written per second (the prompt's reading left out).
    pub fn answer_pace(
        &self,
        request: &Request,
        deadline: Instant,
        constrained: bool,
    ) -> Result<(String, f64), ProviderError> {
        self.run(request, deadline, constrained)
            .map(|(reply, rate)| (reply.text, rate))
    }

    fn known_speed(&self) -> Option<Speed> {
        self.speed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn generate_request<'a>(
        &self,
        request: &'a Request,
        system: &'a str,
        prefill: &'a str,
        deadline: Option<Instant>,
    ) -> GenerateRequest<'a> {
        GenerateRequest {
            system,
            prompt: &request.prompt,
            prefill,
            max_tokens: usize::try_from(request.max_tokens).unwrap_or(usize::MAX),
            deadline,
            stop: &[],
        }
    }

    /// Prompt tokens of `request` and the answer tokens its context leaves room for.
    fn sizes(&self, request: &Request) -> Result<(usize, usize), ProviderError> {
        let system = request.instructions_with_schema();
        let prefill = prefill(&request.schema);
        let req = self.generate_request(request, &system, &prefill, None);
        let prompt = self
            .model
            .prompt_tokens(&req)
            .map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        let room = self.model.context_length().saturating_sub(prompt);
        Ok((prompt, req.max_tokens.min(room)))
    }

    /// One generation; with `constrained`, held to the schema. Returns the reply and the
    /// answer tokens written per second.
    fn run(
        &self,
        request: &Request,
        deadline: Instant,
        constrained: bool,
    ) -> Result<(Reply, f64), ProviderError> {
        let grammar = Grammar::compile(&request.schema).map_err(|e| {
            ProviderError::fatal(format!(
                "local: the answer's JSON schema cannot be held to while decoding: {e}"
            ))
        })?;
        let mut prefill = prefill(&request.schema);
        if JsonConstraint::new(&grammar, &self.table, &prefill).is_err() {
            prefill.clear();
        }
        let system = request.instructions_with_schema();
        let mut req = self.generate_request(request, &system, &prefill, Some(deadline));
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
        let g = if constrained {
            let mut constraint = JsonConstraint::new(&grammar, &self.table, &prefill)
                .map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
            self.model.generate_constrained(&req, &mut constraint)
        } else {
            self.model.generate(&req)
        }
        .map_err(|e| ProviderError::fatal(format!("local: {e}")))?;
        if matches!(g.stop, StopReason::Deadline) {
            return Err(ProviderError::timeout(format!(
                "local: {} had not finished at the deadline ({} tokens written)",
                self.id, g.output_tokens
            )));
        }
        let rate = per_second(g.output_tokens, g.answer_time);
        if constrained
            && g.prompt_tokens >= 32
            && g.output_tokens >= 2
            && let (Some(read), Some(write)) = (per_second(g.prompt_tokens, g.prompt_time), rate)
        {
            *self.speed.lock().unwrap_or_else(PoisonError::into_inner) = Some(Speed {
                model: self.id.clone(),
                prompt_tokens_per_second: read,
                answer_tokens_per_second: write,
                measured_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            });
        }
        let reply = Reply {
            text: g.text,
            model: self.id.clone(),
            usage: Usage {
                input_tokens: g.prompt_tokens,
                output_tokens: g.output_tokens,
            },
            cost_usd: Some(0.0),
        };
        Ok((reply, rate.unwrap_or(0.0)))
    }
}

fn per_second(tokens: u64, time: Duration) -> Option<f64> {
    let secs = time.as_secs_f64();
    (tokens > 0 && secs > 0.0).then(|| tokens as f64 / secs)
}

/// The start of the answer, written for the model: `[` for an array; for an object, its
/// first required field's name (and the opening quote of a text value).
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

/// The short call that measures the pace: a prompt of a few hundred tokens and a short
/// answer held to a schema.
fn calibration_request() -> Request {
    let paragraph = "The relay service listens on port 7421. Its queue keeps SQLite in WAL mode \
                     with a busy timeout of five seconds, and the deploy script restarts it \
                     after every configuration change. ";
    Request {
        purpose: "measure".into(),
        system: "You summarise notes.".into(),
        prompt: format!("{}\nSummarise the notes above.", paragraph.repeat(8)),
        schema: serde_json::json!({
            "type": "object",
            "required": ["summary"],
            "properties": {"summary": {"type": "string", "maxLength": 400}}
        }),
        max_tokens: 24,
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
        self.run(request, deadline, true).map(|(reply, _)| reply)
    }

    fn measures_speed(&self) -> bool {
        true
    }

    fn speed(&self) -> Option<Speed> {
        self.known_speed()
    }

    fn set_speed(&self, speed: Speed) {
        if speed.model == self.id {
            *self.speed.lock().unwrap_or_else(PoisonError::into_inner) = Some(speed);
        }
    }

    fn measure_speed(&self) -> Result<Option<Speed>, ProviderError> {
        let deadline = Instant::now() + Duration::from_secs(300);
        self.run(&calibration_request(), deadline, true)?;
        Ok(self.known_speed())
    }

    fn attempt_timeout(&self, request: &Request) -> Option<Duration> {
        let speed = self.known_speed()?;
        let (prompt, answer) = self.sizes(request).ok()?;
        let secs = prompt as f64 / speed.prompt_tokens_per_second.max(1e-3)
            + answer as f64 / speed.answer_tokens_per_second.max(1e-3);
        Some(Duration::from_secs_f64(secs * MARGIN) + SLACK)
    }

    fn window_chars(&self, template: &Request, limit: Duration) -> Option<usize> {
        let speed = self.known_speed()?;
        let (overhead, answer) = self.sizes(template).ok()?;
        let context = self.model.context_length();
        // The answer keeps at most a third of the context and of the time.
        let time = (limit.saturating_sub(SLACK)).as_secs_f64() / MARGIN;
        let answer = answer
            .min(context / 3)
            .min((time / 3.0 * speed.answer_tokens_per_second) as usize);
        let by_context = context.saturating_sub(overhead + answer);
        let reading = time - answer as f64 / speed.answer_tokens_per_second.max(1e-3);
        let by_time = (reading * speed.prompt_tokens_per_second) as usize;
        let tokens = by_context.min(by_time.saturating_sub(overhead));
        Some((tokens * CHARS_PER_TOKEN).max(MIN_WINDOW_CHARS))
    }
}
