//! A local chat model from one GGUF file, run in-process on the CPU with candle.
//!
//! [`GgufModel::load`] reads a GGUF file of the `llama` family (SmolLM2, Llama) or of the
//! `qwen2` family, builds its tokenizer from the file's metadata (`tokenizer.ggml.*`: a
//! byte-level BPE, the pre-tokenizer chosen by `tokenizer.ggml.pre`), and picks the chat
//! template: Llama-3 headers when `tokenizer.chat_template` uses `<|start_header_id|>`, ChatML
//! (`<|im_start|>role\n…<|im_end|>`) otherwise. [`GgufModel::generate`] answers one
//! (system, user) exchange greedily, so the same request always gives the same text.
//!
//! ## Speed
//!
//! Every weight is dequantized to f32 while loading. candle 0.9 has no SIMD kernel for Q4_1 (nor
//! Q5_0), and its SIMD kernels for the other formats are compiled in only with
//! `target-feature=+avx2`, so a quantized matmul is 14–30× slower than the dequantized f32
//! matmul on this project's machines. The price is memory: about 4 bytes per parameter
//! (SmolLM2-135M: ~0.7 GB resident). Nothing depends on `CANDLE_DEQUANTIZE_ALL`: the loader
//! hands candle a view of the file in which every tensor is already f32.
//!
//! ## Constrained generation
//!
//! [`GgufModel::generate_constrained`] hands the choice of each token to a [`Constraint`]: it
//! sees the logits and how many tokens may still be written (the token budget and, once a few
//! tokens have been timed, the deadline), and names the next token or says the answer is
//! complete. [`GgufModel::token_texts`] gives each token's text once, for such a constraint to
//! check tokens against its grammar.
//!
//! ## Safety of the prompt
//!
//! The template's special tokens are inserted by id; the caller's texts are encoded as plain
//! text, so a `<|im_end|>` inside a memory record stays text and cannot end a turn.
use std::collections::HashMap;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use cairn_core::ports::{BackendError, BackendErrorKind};
use candle_core::quantized::{GgmlDType, gguf_file};
use candle_core::{Device, Tensor};
use candle_transformers::models::{quantized_llama, quantized_qwen2};
use tokenizers::decoders::DecoderWrapper;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

use crate::error::ModelError;

/// A chat model loaded from a GGUF file: weights (dequantized to f32), tokenizer and chat
/// template. One generation runs at a time (the weights hold the key-value cache); share it
/// behind an `Arc`.
pub struct GgufModel {
    id: String,
    path: PathBuf,
    context: usize,
    tokenizer: Tokenizer,
    template: ChatTemplate,
    bos: Option<u32>,
    eos: Vec<u32>,
    weights: Mutex<Weights>,
}

/// One request: a system turn, a user turn and the start of the answer.
#[derive(Debug, Clone, Copy)]
pub struct GenerateRequest<'a> {
    /// The system turn; `""` = no system turn.
    pub system: &'a str,
    /// The user turn.
    pub prompt: &'a str,
    /// Text the assistant turn starts with (e.g. `"{"` to get JSON). It is part of the returned
    /// text; `""` = none.
    pub prefill: &'a str,
    /// At most this many tokens are generated.
    pub max_tokens: usize,
    /// Stop ([`StopReason::Deadline`]) once this instant has passed; checked before the prompt
    /// is read and after every token.
    pub deadline: Option<Instant>,
    /// Stop strings: generation ends at the first one and the text excludes it. They are looked
    /// for in the generated text (after the prefill); empty strings are ignored.
    pub stop: &'a [&'a str],
}

/// What the model wrote. Not comparable as a whole: its timings differ from run to run.
#[derive(Debug, Clone)]
pub struct Generation {
    /// The answer: the prefill followed by the generated text, cut before a stop string.
    pub text: String,
    /// Tokens of the whole prompt (template, system, user turn and prefill).
    pub prompt_tokens: u64,
    /// Tokens the model generated (an end-of-sequence token included).
    pub output_tokens: u64,
    /// Why generation ended.
    pub stop: StopReason,
    /// Time spent reading the prompt (the first forward pass).
    pub prompt_time: Duration,
    /// Time spent writing the answer after the prompt was read.
    pub answer_time: Duration,
}

/// Holds generation to a grammar: before each token it sees the model's logits and picks the
/// next token among the ones its grammar allows (or ends the answer).
pub trait Constraint {
    /// The next token, or `None` when the answer is complete. `remaining` is how many tokens
    /// (this one included) may still be written before the token budget or the deadline ends
    /// generation: a constraint that must close its grammar does so within it. An error names
    /// why no token can follow.
    fn next(&mut self, logits: &[f32], remaining: usize) -> Result<Option<u32>, String>;
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model ended its turn (an end-of-sequence or end-of-turn token).
    Eos,
    /// A stop string appeared.
    Stop,
    /// `max_tokens` tokens were generated.
    MaxTokens,
    /// The deadline passed.
    Deadline,
    /// The constraint said the answer is complete.
    Complete,
}

/// The architectures this loader runs.
enum Weights {
    Llama(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
}

impl Weights {
    fn forward(&mut self, input: &Tensor, index_pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Self::Llama(model) => model.forward(input, index_pos),
            Self::Qwen2(model) => model.forward(input, index_pos),
        }
    }
}

/// How turns are written, with the ids of the template's special tokens.
#[derive(Debug, Clone, Copy)]
enum ChatTemplate {
    /// `<|im_start|>role\ncontent<|im_end|>\n`.
    ChatMl { start: u32, end: u32 },
    /// `<|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>`.
    Llama3 {
        start_header: u32,
        end_header: u32,
        eot: u32,
    },
}

impl GgufModel {
    /// Loads a GGUF file: `general.architecture` `llama` (SmolLM2, Llama) or `qwen2`, a
    /// byte-level BPE tokenizer (`tokenizer.ggml.model = "gpt2"`) in the metadata. Every weight
    /// is dequantized to f32 (see the module docs). Errors name the file and the problem: missing
    /// file, not a GGUF, unsupported architecture or tokenizer, damaged tensors.
    pub fn load(path: &Path) -> Result<Self, BackendError> {
        Ok(Self::load_inner(path)?)
    }

    fn load_inner(path: &Path) -> Result<Self, ModelError> {
        if !path.is_file() {
            return Err(ModelError::MissingFile {
                path: path.to_path_buf(),
            });
        }
        let mut file = BufReader::new(fs_err::File::open(path)?);
        let mut magic = [0u8; 4];
        let is_gguf = file.read_exact(&mut magic).is_ok() && &magic == b"GGUF";
        if !is_gguf {
            return Err(ModelError::load(
                path,
                "not a GGUF file (it does not start with the bytes \"GGUF\")",
            ));
        }
        file.seek(SeekFrom::Start(0))?;
        let content = gguf_file::Content::read(&mut file)
            .map_err(|e| ModelError::load(path, format!("unreadable GGUF header: {e}")))?;
        let metadata = Metadata {
            path,
            content: &content,
        };
        let arch = metadata.string("general.architecture")?.to_owned();
        let arch_context = match arch.as_str() {
            "llama" => metadata
                .u32("llama.context_length")
                .map_or(quantized_llama::MAX_SEQ_LEN, |n| {
                    (n as usize).min(quantized_llama::MAX_SEQ_LEN)
                }),
            "qwen2" => metadata.u32("qwen2.context_length")? as usize,
            other => {
                return Err(ModelError::load(
                    path,
                    format!(
                        "unsupported architecture {other:?} (general.architecture); this loader \
                         runs llama and qwen2"
                    ),
                ));
            }
        };
        let vocab = Vocabulary::read(&metadata)?;
        let template = vocab.template(&metadata)?;
        let bos = match template {
            // The Llama-3 template writes `<|begin_of_text|>` itself.
            ChatTemplate::Llama3 { .. } => vocab
                .id("<|begin_of_text|>")
                .or(metadata.u32("tokenizer.ggml.bos_token_id").ok()),
            ChatTemplate::ChatMl { .. } => {
                let add_bos = metadata
                    .content
                    .metadata
                    .get("tokenizer.ggml.add_bos_token")
                    .and_then(|v| v.to_bool().ok())
                    .unwrap_or(false);
                if add_bos {
                    metadata.u32("tokenizer.ggml.bos_token_id").ok()
                } else {
                    None
                }
            }
        };
        let mut eos: Vec<u32> = metadata
            .u32("tokenizer.ggml.eos_token_id")
            .ok()
            .into_iter()
            .collect();
        eos.extend(match template {
            ChatTemplate::ChatMl { end, .. } => vec![end],
            ChatTemplate::Llama3 { eot, .. } => vec![eot],
        });
        eos.extend(
            ["<|endoftext|>", "<|end_of_text|>"]
                .iter()
                .filter_map(|t| vocab.id(t)),
        );
        eos.sort_unstable();
        eos.dedup();
        let tokenizer = vocab.tokenizer(&metadata)?;

        let device = Device::Cpu;
        let (f32_content, mut reader) = dequantized_view(content, file, path)?;
        let weights = match arch.as_str() {
            "qwen2" => quantized_qwen2::ModelWeights::from_gguf(f32_content, &mut reader, &device)
                .map(Weights::Qwen2),
            _ => quantized_llama::ModelWeights::from_gguf(f32_content, &mut reader, &device)
                .map(Weights::Llama),
        }
        .map_err(|e| ModelError::load(path, format!("cannot build the {arch} model: {e}")))?;
        if let Some(err) = reader.failure.take() {
            return Err(err);
        }

        let id = path
            .file_stem()
            .map_or_else(|| "gguf".to_owned(), |s| s.to_string_lossy().into_owned());
        tracing::debug!(model = %id, arch = %arch, context = arch_context, "GGUF model loaded");
        Ok(Self {
            id,
            path: path.to_path_buf(),
            context: arch_context,
            tokenizer,
            template,
            bos,
            eos,
            weights: Mutex::new(weights),
        })
    }

    /// A short id: the file's stem, e.g. `SmolLM2-135M-Instruct.Q4_1`.
    pub fn model_id(&self) -> &str {
        &self.id
    }

    /// The longest sequence (prompt plus answer) in tokens: the file's context length, capped at
    /// what candle's implementation supports (4096 for llama).
    pub fn context_length(&self) -> usize {
        self.context
    }

    /// Token ids of a plain text (no special tokens, no template).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, BackendError> {
        self.encode_plain(text).map_err(Into::into)
    }

    /// The text of token ids.
    pub fn decode(&self, ids: &[u32]) -> Result<String, BackendError> {
        self.tokenizer
            .decode(ids, false)
            .map_err(|e| self.inference_error(format!("cannot decode tokens: {e}")))
    }

    /// How many tokens a request's prompt takes (template, turns and prefill).
    pub fn prompt_tokens(&self, req: &GenerateRequest<'_>) -> Result<usize, BackendError> {
        Ok(self.prompt_ids(req)?.len())
    }

    /// Greedy (temperature 0) generation; deterministic. Errors when the prompt does not fit in
    /// the context with `max_tokens` to spare.
    pub fn generate(&self, req: &GenerateRequest<'_>) -> Result<Generation, BackendError> {
        self.run(req, None)
    }

    /// Generation where `constraint` picks every token (see [`Constraint`]); it ends when the
    /// constraint says the answer is complete ([`StopReason::Complete`]), or at the budget,
    /// the deadline or a stop string as [`GgufModel::generate`] does. End-of-sequence tokens
    /// end it only if the constraint picks one.
    pub fn generate_constrained(
        &self,
        req: &GenerateRequest<'_>,
        constraint: &mut dyn Constraint,
    ) -> Result<Generation, BackendError> {
        self.run(req, Some(constraint))
    }

    /// The text of every token, by id: `None` for the end-of-sequence and chat-template tokens
    /// and for tokens that are not whole UTF-8 text on their own (a part of a character).
    pub fn token_texts(&self) -> Vec<Option<String>> {
        let size = self.tokenizer.get_vocab_size(true);
        let special: Vec<u32> = match self.template {
            ChatTemplate::ChatMl { start, end } => vec![start, end],
            ChatTemplate::Llama3 {
                start_header,
                end_header,
                eot,
            } => vec![start_header, end_header, eot],
        };
        (0..size)
            .map(|id| {
                let id = u32::try_from(id).ok()?;
                if self.eos.contains(&id) || special.contains(&id) || self.bos == Some(id) {
                    return None;
                }
                let text = self.tokenizer.decode(&[id], false).ok()?;
                (!text.is_empty() && !text.contains('\u{fffd}')).then_some(text)
            })
            .collect()
    }

    fn run(
        &self,
        req: &GenerateRequest<'_>,
        mut constraint: Option<&mut dyn Constraint>,
    ) -> Result<Generation, BackendError> {
        let prompt = self.prompt_ids(req)?;
        let prompt_tokens = prompt.len() as u64;
        if prompt.len().saturating_add(req.max_tokens) > self.context {
            return Err(BackendError::new(
                BackendErrorKind::BadInput,
                format!(
                    "the prompt of {} tokens plus max_tokens {} exceeds the context of {} tokens \
                     of the model {}",
                    prompt.len(),
                    req.max_tokens,
                    self.context,
                    self.path.display()
                ),
            ));
        }
        let began = Instant::now();
        let mut prompt_time = Duration::ZERO;
        let finish = |generated: &[u32],
                      stop: StopReason,
                      prompt_time: Duration|
         -> Result<Generation, BackendError> {
            let mut text = self.decode(generated)?;
            if stop == StopReason::Stop
                && let Some(at) = first_stop(&text, req.stop)
            {
                text.truncate(at);
            }
            Ok(Generation {
                text: format!("{}{text}", req.prefill),
                prompt_tokens,
                output_tokens: generated.len() as u64,
                stop,
                prompt_time,
                answer_time: began.elapsed().saturating_sub(prompt_time),
            })
        };
        let past = |deadline: Option<Instant>| deadline.is_some_and(|d| Instant::now() >= d);
        if past(req.deadline) {
            return finish(&[], StopReason::Deadline, prompt_time);
        }
        if req.max_tokens == 0 {
            return finish(&[], StopReason::MaxTokens, prompt_time);
        }

        let mut weights = self.weights.lock().unwrap_or_else(PoisonError::into_inner);
        let mut generated: Vec<u32> = Vec::new();
        let mut logits = self.forward(&mut weights, &prompt, 0)?;
        prompt_time = began.elapsed();
        loop {
            let next = match constraint.as_deref_mut() {
                Some(c) => {
                    let remaining = remaining_tokens(
                        req.max_tokens - generated.len(),
                        req.deadline,
                        generated.len(),
                        began.elapsed().saturating_sub(prompt_time),
                    );
                    match c.next(&logits, remaining) {
                        Ok(Some(next)) => next,
                        Ok(None) => return finish(&generated, StopReason::Complete, prompt_time),
                        Err(e) => return Err(self.inference_error(e)),
                    }
                }
                None => argmax(&logits).map_err(|e| self.inference_error(e))?,
            };
            generated.push(next);
            if self.eos.contains(&next) {
                generated.pop();
                let mut done = finish(&generated, StopReason::Eos, prompt_time)?;
                done.output_tokens += 1;
                return Ok(done);
            }
            if !req.stop.is_empty() {
                let text = self.decode(&generated)?;
                if first_stop(&text, req.stop).is_some() {
                    return finish(&generated, StopReason::Stop, prompt_time);
                }
            }
            if generated.len() >= req.max_tokens {
                return finish(&generated, StopReason::MaxTokens, prompt_time);
            }
            if past(req.deadline) {
                return finish(&generated, StopReason::Deadline, prompt_time);
            }
            logits = self.forward(&mut weights, &[next], prompt.len() + generated.len() - 1)?;
        }
    }

    /// Runs the model on `ids` starting at position `index_pos` (0 resets the cache) and returns
    /// the logits of the last position.
    fn forward(
        &self,
        weights: &mut Weights,
        ids: &[u32],
        index_pos: usize,
    ) -> Result<Vec<f32>, BackendError> {
        let mut run = || -> candle_core::Result<Vec<f32>> {
            let input = Tensor::new(ids, &Device::Cpu)?.unsqueeze(0)?;
            let logits = weights.forward(&input, index_pos)?;
            logits
                .squeeze(0)?
                .to_dtype(candle_core::DType::F32)?
                .to_vec1::<f32>()
        };
        run().map_err(|e| self.inference_error(e))
    }

    fn inference_error(&self, err: impl std::fmt::Display) -> BackendError {
        ModelError::inference(format!("{} ({})", err, self.path.display())).into()
    }

    fn encode_plain(&self, text: &str) -> Result<Vec<u32>, ModelError> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| ModelError::inference(format!("cannot tokenize a text: {e}")))
    }

    /// The prompt's token ids: the template's special tokens by id, the texts encoded plainly.
    fn prompt_ids(&self, req: &GenerateRequest<'_>) -> Result<Vec<u32>, ModelError> {
        let mut ids: Vec<u32> = self.bos.into_iter().collect();
        match self.template {
            ChatTemplate::ChatMl { start, end } => {
                let newline = self.encode_plain("\n")?;
                let mut turn = |role: &str, content: &str| -> Result<(), ModelError> {
                    ids.push(start);
                    ids.extend(self.encode_plain(&format!("{role}\n{content}"))?);
                    ids.push(end);
                    ids.extend(&newline);
                    Ok(())
                };
                if !req.system.is_empty() {
                    turn("system", req.system)?;
                }
                turn("user", req.prompt)?;
                ids.push(start);
                ids.extend(self.encode_plain(&format!("assistant\n{}", req.prefill))?);
            }
            ChatTemplate::Llama3 {
                start_header,
                end_header,
                eot,
            } => {
                let header = |ids: &mut Vec<u32>, role: &str| -> Result<(), ModelError> {
                    ids.push(start_header);
                    ids.extend(self.encode_plain(role)?);
                    ids.push(end_header);
                    Ok(())
                };
                if !req.system.is_empty() {
                    header(&mut ids, "system")?;
                    ids.extend(self.encode_plain(&format!("\n\n{}", req.system.trim()))?);
                    ids.push(eot);
                }
                header(&mut ids, "user")?;
                ids.extend(self.encode_plain(&format!("\n\n{}", req.prompt.trim()))?);
                ids.push(eot);
                header(&mut ids, "assistant")?;
                ids.extend(self.encode_plain(&format!("\n\n{}", req.prefill))?);
            }
        }
        Ok(ids)
    }
}

impl std::fmt::Debug for GgufModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufModel")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("context", &self.context)
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

/// The byte offset of the earliest stop string in `text`.
fn first_stop(text: &str, stops: &[&str]) -> Option<usize> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s))
        .min()
}

/// How many tokens may still be written: what the budget leaves, and, once a few tokens have
/// been timed, what the time to the deadline allows at the pace so far (one token spare).
fn remaining_tokens(
    budget_left: usize,
    deadline: Option<Instant>,
    written: usize,
    writing: Duration,
) -> usize {
    let Some(deadline) = deadline else {
        return budget_left;
    };
    if written < 3 {
        return budget_left;
    }
    let per_token = writing.as_secs_f64() / written as f64;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    let by_time = (left / per_token.max(1e-6)).floor() as usize;
    budget_left.min(by_time.saturating_sub(1).max(1))
}

/// The index of the largest logit (the first one on ties).
fn argmax(logits: &[f32]) -> Result<u32, String> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &v) in logits.iter().enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    let (i, _) = best.ok_or("the model returned no logits")?;
    u32::try_from(i).map_err(|e| e.to_string())
}

/// Typed access to the GGUF metadata, with errors naming the file and the key.
struct Metadata<'a> {
    path: &'a Path,
    content: &'a gguf_file::Content,
}

impl Metadata<'_> {
    fn value(&self, key: &str) -> Result<&gguf_file::Value, ModelError> {
        self.content
            .metadata
            .get(key)
            .ok_or_else(|| ModelError::load(self.path, format!("no {key} in the GGUF metadata")))
    }

    fn string(&self, key: &str) -> Result<&str, ModelError> {
        self.value(key)?
            .to_string()
            .map(String::as_str)
            .map_err(|e| ModelError::load(self.path, format!("metadata {key}: {e}")))
    }

    fn u32(&self, key: &str) -> Result<u32, ModelError> {
        let value = self.value(key)?;
        value
            .to_u32()
            .or_else(|_| value.to_i32().map(|v| v as u32))
            .or_else(|_| value.to_u64().map(|v| v as u32))
            .map_err(|e| ModelError::load(self.path, format!("metadata {key}: {e}")))
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ModelError> {
        self.value(key)?
            .to_vec()
            .map_err(|e| ModelError::load(self.path, format!("metadata {key}: {e}")))?
            .iter()
            .map(|v| {
                v.to_string()
                    .cloned()
                    .map_err(|e| ModelError::load(self.path, format!("metadata {key}: {e}")))
            })
            .collect()
    }
}

/// The tokens of the GGUF vocabulary.
struct Vocabulary {
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
}

/// The split regex of GPT-4-style tokenizers (Llama 3), from their `tokenizer.json`.
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The split regex of Qwen2's tokenizer (digits one by one), from its `tokenizer.json`.
const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

impl Vocabulary {
    fn read(metadata: &Metadata<'_>) -> Result<Self, ModelError> {
        let kind = metadata.string("tokenizer.ggml.model")?;
        if kind != "gpt2" {
            return Err(ModelError::load(
                metadata.path,
                format!(
                    "unsupported tokenizer {kind:?} (tokenizer.ggml.model); this loader reads \
                     byte-level BPE tokenizers (\"gpt2\")"
                ),
            ));
        }
        let tokens = metadata.strings("tokenizer.ggml.tokens")?;
        let mut ids = HashMap::with_capacity(tokens.len());
        for (id, token) in tokens.iter().enumerate() {
            let id = u32::try_from(id)
                .map_err(|_| ModelError::load(metadata.path, "the vocabulary is too large"))?;
            ids.entry(token.clone()).or_insert(id);
        }
        Ok(Self { tokens, ids })
    }

    fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// Llama-3 headers when the file's template uses them, ChatML otherwise.
    fn template(&self, metadata: &Metadata<'_>) -> Result<ChatTemplate, ModelError> {
        let declared = metadata.string("tokenizer.chat_template").unwrap_or("");
        let llama3 = (
            self.id("<|start_header_id|>"),
            self.id("<|end_header_id|>"),
            self.id("<|eot_id|>"),
        );
        if declared.contains("<|start_header_id|>")
            && let (Some(start_header), Some(end_header), Some(eot)) = llama3
        {
            return Ok(ChatTemplate::Llama3 {
                start_header,
                end_header,
                eot,
            });
        }
        match (self.id("<|im_start|>"), self.id("<|im_end|>")) {
            (Some(start), Some(end)) => Ok(ChatTemplate::ChatMl { start, end }),
            _ => Err(ModelError::load(
                metadata.path,
                "no chat template this loader knows: the vocabulary has neither ChatML \
                 (<|im_start|>, <|im_end|>) nor Llama-3 (<|start_header_id|>) tokens",
            )),
        }
    }

    /// A byte-level BPE tokenizer from `tokenizer.ggml.tokens` and `.merges`, with the
    /// pre-tokenizer `tokenizer.ggml.pre` names.
    fn tokenizer(self, metadata: &Metadata<'_>) -> Result<Tokenizer, ModelError> {
        let path = metadata.path;
        let merges = metadata
            .strings("tokenizer.ggml.merges")?
            .into_iter()
            .map(|merge| {
                merge
                    .split_once(' ')
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .ok_or_else(|| {
                        ModelError::load(
                            path,
                            format!("malformed merge {merge:?} in the vocabulary"),
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let vocab: Vocab = self
            .tokens
            .into_iter()
            .enumerate()
            .map(|(id, token)| (token, id as u32))
            .collect();
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .map_err(|e| ModelError::load(path, format!("cannot build the tokenizer: {e}")))?;
        let pre = metadata.string("tokenizer.ggml.pre").unwrap_or("default");
        let split = |pattern: &str| -> Result<PreTokenizerWrapper, ModelError> {
            let split = Split::new(
                SplitPattern::Regex(pattern.to_owned()),
                SplitDelimiterBehavior::Isolated,
                false,
            )
            .map_err(|e| ModelError::load(path, format!("bad split regex: {e}")))?;
            Ok(PreTokenizerWrapper::Sequence(Sequence::new(vec![
                PreTokenizerWrapper::Split(split),
                PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)),
            ])))
        };
        let pre_tokenizer = match pre {
            // SmolLM / StarCoder: digits one by one, then GPT-2's byte-level split.
            "smollm" | "starcoder" | "refact" => {
                PreTokenizerWrapper::Sequence(Sequence::new(vec![
                    PreTokenizerWrapper::Digits(Digits::new(true)),
                    PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true)),
                ]))
            }
            "llama-bpe" | "llama3" | "smaug-bpe" => split(LLAMA3_SPLIT)?,
            "qwen2" => split(QWEN2_SPLIT)?,
            "gpt2" | "default" => PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true)),
            other => {
                tracing::warn!(
                    file = %path.display(),
                    pre = other,
                    "unknown tokenizer.ggml.pre; splitting words as GPT-2 does"
                );
                PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true))
            }
        };
        let mut tokenizer = Tokenizer::new(bpe);
        tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
        tokenizer.with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevelDecoder::default())));
        Ok(tokenizer)
    }
}

/// The file's header rewritten so that every tensor is f32, and a reader that serves those f32
/// bytes, dequantizing one tensor at a time from the file. candle turns f32 tensors into plain
/// f32 matmuls (no quantized kernel), whatever `CANDLE_DEQUANTIZE_ALL` says.
fn dequantized_view<R: Read + Seek>(
    content: gguf_file::Content,
    file: R,
    path: &Path,
) -> Result<(gguf_file::Content, DequantizingReader<R>), ModelError> {
    let mut names: Vec<String> = content.tensor_infos.keys().cloned().collect();
    names.sort_by_key(|name| content.tensor_infos[name].offset);
    let mut infos = HashMap::with_capacity(names.len());
    let mut spans = Vec::with_capacity(names.len());
    let mut offset = 0u64;
    for name in names {
        let info = &content.tensor_infos[&name];
        let bytes = info.shape.elem_count() as u64 * 4;
        infos.insert(
            name.clone(),
            gguf_file::TensorInfo {
                ggml_dtype: GgmlDType::F32,
                shape: info.shape.clone(),
                offset,
            },
        );
        spans.push(Span {
            start: offset,
            len: bytes,
            name,
        });
        offset += bytes;
    }
    let view = gguf_file::Content {
        magic: content.magic,
        metadata: content.metadata.clone(),
        tensor_infos: infos,
        tensor_data_offset: 0,
    };
    let reader = DequantizingReader {
        source: content,
        file,
        path: path.to_path_buf(),
        spans,
        pos: 0,
        current: None,
        failure: None,
    };
    Ok((view, reader))
}

/// One tensor's place in the f32 view.
struct Span {
    start: u64,
    len: u64,
    name: String,
}

/// Reads the f32 view of [`dequantized_view`]; keeps only the tensor being read in memory.
struct DequantizingReader<R> {
    source: gguf_file::Content,
    file: R,
    path: PathBuf,
    spans: Vec<Span>,
    pos: u64,
    /// The index in `spans` and the f32 bytes of the tensor read last.
    current: Option<(usize, Vec<u8>)>,
    /// The first dequantization failure, with its file (candle only sees an I/O error).
    failure: Option<ModelError>,
}

impl<R: Read + Seek> DequantizingReader<R> {
    fn load_span(&mut self, index: usize) -> std::io::Result<()> {
        if self.current.as_ref().is_some_and(|(i, _)| *i == index) {
            return Ok(());
        }
        self.current = None;
        let name = &self.spans[index].name;
        let values = self
            .source
            .tensor(&mut self.file, name, &Device::Cpu)
            .and_then(|q| q.dequantize(&Device::Cpu))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_dtype(candle_core::DType::F32))
            .and_then(|t| t.to_vec1::<f32>());
        let values = match values {
            Ok(values) => values,
            Err(e) => {
                let err = ModelError::load(&self.path, format!("cannot read tensor {name}: {e}"));
                let message = err.to_string();
                self.failure.get_or_insert(err);
                return Err(std::io::Error::other(message));
            }
        };
        let mut bytes = Vec::with_capacity(values.len() * 4);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        self.current = Some((index, bytes));
        Ok(())
    }
}

impl<R: Read + Seek> Read for DequantizingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let found = self.spans.partition_point(|s| s.start + s.len <= self.pos);
        let Some(span) = self.spans.get(found) else {
            return Ok(0);
        };
        if self.pos < span.start {
            return Err(std::io::Error::other(
                "read between tensors of the f32 view",
            ));
        }
        let within = (self.pos - span.start) as usize;
        self.load_span(found)?;
        let Some((_, bytes)) = &self.current else {
            return Ok(0);
        };
        let n = buf.len().min(bytes.len() - within);
        buf[..n].copy_from_slice(&bytes[within..within + n]);
        self.pos += n as u64;
        if self.pos >= span_end(&self.spans[found]) {
            // candle reads each tensor once: free it as soon as it has been read.
            self.current = None;
        }
        Ok(n)
    }
}

fn span_end(span: &Span) -> u64 {
    span.start + span.len
}

impl<R: Read + Seek> Seek for DequantizingReader<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let total = self.spans.last().map_or(0, span_end);
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => total.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| std::io::Error::other("seek before the start"))?;
        Ok(self.pos)
    }
}
