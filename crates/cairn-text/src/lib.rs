//! # cairn-text
//!
//! Text every Cairn writer shares (capture, notes, the API): the secret scrubber, the
//! chunker and project identity. It depends on no other Cairn crate, so a writer needs only
//! this crate, not the whole capture pipeline.
//!
//! - [`scrub`]: the secret scrubber ([`scrub::Scrubber`], [`scrub::scrubber`]) that runs
//!   before anything is written.
//! - [`chunk`]: splits long texts into overlapping chunks for search ([`chunk::split`]), and
//!   cuts one short for showing ([`chunk::cut`]).
//! - [`project`]: project identity from the git common dir or remote
//!   ([`project::identify`], [`project::ProjectResolver`]).
//! - [`fsx`]: files written and read outside Cairn's data folder without following links
//!   ([`fsx::write_atomic`], [`fsx::read_regular`]).
//! - [`marks`]: the marks around what Cairn injects into an agent's context, with a nonce
//!   only this install can make ([`marks::MarkKey`], [`marks::split`], [`marks::escape`]).
//! - [`hash`]: FNV-1a, the stable short hash of fingerprints and change detectors
//!   ([`hash::Fnv1a`]).
#![deny(missing_docs)]

pub mod chunk;
pub mod fsx;
pub mod hash;
pub mod marks;
pub mod project;
pub mod scrub;
