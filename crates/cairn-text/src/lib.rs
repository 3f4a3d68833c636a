//! # cairn-text
//!
//! Text every Cairn writer shares (capture, notes, the API): the secret scrubber, the
//! chunker and project identity.
