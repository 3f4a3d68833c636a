//! # cairn-api
//!
//! Every operation Cairn offers, in one host-agnostic place. The desktop app (Tauri), the
//! headless `cairn daemon`, the CLI, the loopback HTTP API and the MCP server (`cairn-mcp`) are all
//! callers of this crate; none of them holds logic of its own.
//!
//! - [`Service`] owns the store, runs the background workers and answers every method of
//!   [`cairn_core::for_each_method!`] through one dispatch table ([`Service::dispatch`]).
//! - [`ServiceHandle`] is a running service with its loopback HTTP server
//!   ([`http`]), its single-instance lock and its `service.json` (address and bearer token,
//!   mode 0600).
//! - [`Client`] talks to a running service over HTTP; [`Backend`] is either, so the CLI works
//!   the same whether a service runs or not.
//!
//! ```no_run
//! # async fn demo() -> Result<(), cairn_api::ApiError> {
//! use cairn_api::{Backend, Host};
//! let paths = cairn_config::Paths::from_env().expect("paths");
//! let settings = cairn_config::Settings::load(&paths, &Default::default(), std::env::vars())
//!     .expect("settings").settings;
//! let backend = Backend::connect_or_open(&paths, &settings).await?;
//! let status = backend.status().await?;
//! println!("memory on: {}", status.memory.enabled);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod backend;
mod board;
mod client;
pub mod dense;
pub mod distill_api;
mod error;
mod export_api;
mod firstrun_api;
mod handle;
pub mod http;
mod instance;
mod integrations;
pub mod items_api;
mod items_index;
pub mod llm_api;
pub mod logging;
mod memory_api;
mod migrate_api;
mod models;
mod notes_api;
mod notes_index;
mod pause;
mod profiles_api;
mod query_memo;
mod review_api;
mod service;
mod service_file;
mod skills_api;
mod tools;
mod turn_api;
mod workers;

pub use backend::{Backend, Reconnect, SharedBackend};
pub use board::WorkerBoard;
/// Caps the C allocator's arenas: each process that runs the service calls it first thing.
pub use cairn_vectors::cap_malloc_arenas;
pub use client::Client;
pub use error::{ApiError, Result};
pub use handle::{ServiceHandle, StartError};
pub use instance::{InstanceLock, LockError, StartIntent};
pub use models::models_for_eval;
pub use service::{Host, Service, ServiceOptions};
pub use service_file::ServiceFile;
