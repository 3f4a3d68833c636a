//! The cross-encoder reranker: BERT over a (query, passage) pair, then the pooler and the
//! classifier head that `BertForSequenceClassification` checkpoints carry.
use std::path::Path;

use cairn_core::ports::{BackendError, Reranker};
use candle_core::{IndexOp, Module};
use candle_nn::Linear;
use candle_transformers::models::bert::BertModel;
use tokenizers::{EncodeInput, Tokenizer};

use crate::bert::{Inputs, ModelParts, guard_load, guard_run};
use crate::error::{ModelError, Result};
use crate::files::CONFIG_FILE;

/// Options for [`CrossEncoder::load_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossEncoderOptions {
    /// The model's name in its id; `None` takes the folder's name.
    pub name: Option<String>,
    /// A (query, passage) pair is cut to this many tokens (special tokens included; the longer
    /// of the two is cut first), or to the model's maximum position if that is smaller.
    pub max_tokens: usize,
    /// How many pairs go through the model at once.
    pub batch_size: usize,
}

impl Default for CrossEncoderOptions {
    fn default() -> Self {
        Self {
            name: None,
            max_tokens: 512,
            batch_size: 16,
        }
    }
}

/// The logistic function: turns a [`CrossEncoder`] logit into a relevance probability in
/// `(0, 1)` (what sentence-transformers reports for a one-label cross-encoder).
pub fn sigmoid(logit: f32) -> f32 {
    1.0 / (1.0 + (-logit).exp())
}

/// A cross-encoder for any one-label BERT `ForSequenceClassification` folder
/// (`model.safetensors` with `bert.*`, `bert.pooler.dense.*` and `classifier.*`,
/// `tokenizer.json`, `config.json`), such as `cross-encoder/ms-marco-MiniLM-L6-v2`, on the CPU.
///
/// [`Reranker::score`] returns the raw **logit** per passage (higher is more relevant; for
/// ms-marco models roughly −11 to +11). Use [`sigmoid`] when a probability is needed; the order
/// is the same. Pairs are batched, padded to the longest of their batch, with token type ids 0
/// for the query and 1 for the passage.
pub struct CrossEncoder {
    bert: BertModel,
    pooler: Linear,
    classifier: Linear,
    tokenizer: Tokenizer,
    max_tokens: usize,
    batch_size: usize,
    model_id: String,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("model_id", &self.model_id)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the model in `dir` with default options.
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_with(dir, &CrossEncoderOptions::default())
    }

    /// Loads the model in `dir`. Never panics: a missing or damaged file, or a checkpoint
    /// without its pooler or classifier, is an error of kind `Unavailable` (through
    /// `BackendError::from`) that names the file.
    pub fn load_with(dir: &Path, options: &CrossEncoderOptions) -> Result<Self> {
        guard_load(dir, || {
            let parts = ModelParts::read(dir, options.name.as_deref())?;
            let labels = label_count(&parts.raw_config);
            if labels != 1 {
                return Err(ModelError::load(
                    dir.join(CONFIG_FILE),
                    format!("a reranker needs one output label, this model has {labels}"),
                ));
            }
            let max_tokens = options
                .max_tokens
                .min(parts.config.max_position_embeddings)
                .max(4);
            let tokenizer = parts.tokenizer(max_tokens)?;
            let weights = parts.weights_path();
            let bert = BertModel::load(parts.vb.clone(), &parts.config)
                .map_err(|err| ModelError::load(&weights, err))?;
            let hidden = parts.config.hidden_size;
            // The pooler sits under the same prefix as the encoder (`bert.` in HF checkpoints).
            let pooler_prefix = if parts.vb.contains_tensor("bert.pooler.dense.weight") {
                "bert.pooler.dense"
            } else {
                "pooler.dense"
            };
            let pooler = candle_nn::linear(hidden, hidden, parts.vb.pp(pooler_prefix))
                .map_err(|err| ModelError::load(&weights, format!("pooler: {err}")))?;
            let classifier = candle_nn::linear(hidden, 1, parts.vb.pp("classifier"))
                .map_err(|err| ModelError::load(&weights, format!("classifier: {err}")))?;
            Ok(Self {
                bert,
                pooler,
                classifier,
                tokenizer,
                max_tokens,
                batch_size: options.batch_size.max(1),
                model_id: parts.model_id,
            })
        })
    }

    /// The token window a pair is cut to.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Scores passages against a query (see [`Reranker::score`]), with this crate's error type:
    /// one logit per passage, in order.
    pub fn score_pairs(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        guard_run(|| {
            let mut out = vec![0.0; passages.len()];
            let mut order: Vec<usize> = (0..passages.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(passages[i].len()));
            for chunk in order.chunks(self.batch_size) {
                let batch: Vec<EncodeInput<'_>> =
                    chunk.iter().map(|&i| (query, passages[i]).into()).collect();
                let logits = self.logits(batch)?;
                for (&i, logit) in chunk.iter().zip(logits) {
                    out[i] = logit;
                }
            }
            Ok(out)
        })
    }

    fn logits(&self, pairs: Vec<EncodeInput<'_>>) -> Result<Vec<f32>> {
        let encodings = self
            .tokenizer
            .encode_batch(pairs, true)
            .map_err(ModelError::inference)?;
        let inputs = Inputs::new(&encodings)?;
        let run = || -> candle_core::Result<Vec<f32>> {
            let hidden = self
                .bert
                .forward(&inputs.ids, &inputs.type_ids, Some(&inputs.mask))?;
            let cls = hidden.i((.., 0))?;
            let pooled = self.pooler.forward(&cls)?.tanh()?;
            self.classifier
                .forward(&pooled)?
                .squeeze(1)?
                .to_vec1::<f32>()
        };
        run().map_err(ModelError::inference)
    }
}

impl Reranker for CrossEncoder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn score(&self, query: &str, passages: &[&str]) -> std::result::Result<Vec<f32>, BackendError> {
        Ok(self.score_pairs(query, passages)?)
    }
}

/// The number of output labels: `num_labels`, else the size of `id2label`, else 1.
fn label_count(config: &serde_json::Value) -> usize {
    config
        .get("num_labels")
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .or_else(|| {
            config
                .get("id2label")
                .and_then(serde_json::Value::as_object)
                .map(|m| m.len())
        })
        .unwrap_or(1)
}
