//! # cairn-eval
//!
//! Every evaluation and benchmark harness of Cairn, apart from the `cairn` binary's core. The
//! binary's `eval` and `bench` commands, and `ranker train`, parse their flags and call these
//! functions; each prints its own figures.
//!
//! - Evaluations measure the product through its own code (capture's readers, the store, the
//!   service's indexing, `cairn-recall`'s retriever, a real service per conversation): LoCoMo
//!   retrieval recall ([`locomo`]), the turn note and its ranker's training ([`note`], over the
//!   owned set's sessions written by `ranker_data`), real coding-agent histories ([`real`] for
//!   retrieval, [`real_note`] for the turn note and the ranker's real training examples), the
//!   replay of the user's own history through the service ([`replay`]) and distillation
//!   ([`distill`]). Vectors an evaluation computed are kept on disk by `embed_cache`.
//! - Benchmarks print figures and assert nothing ([`bench`]): capture, distillation's model
//!   calls, search at scale, the turn note and the hook, the replay's duration. Those that
//!   measure in a fresh process run the current executable (`cairn`) again with a hidden
//!   subcommand (`bench capture-phase`, `bench search-phase`) or a public one (`capture
//!   --once`, `eval replay`, `hook`).
//! - [`progress`] follows a long service call on a progress bar; the binary's own long
//!   commands use it too.
pub mod bench;
pub mod distill;
mod embed_cache;
pub mod locomo;
pub mod note;
pub mod personal;
pub mod progress;
mod ranker_data;
pub mod real;
pub mod real_note;
pub mod replay;
