//! # cairn-recall
//!
//! The retriever every caller uses (CLI, MCP, HTTP/UI, the eval, the turn note).
