//! cairn-api end to end: a real service on loopback (store, HTTP server, workers), driven
//! over raw TCP and through the real client.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

mod fake_judge;
mod llm_settings;
mod profiles;
mod review;
mod trust;
mod turn_note;
