//! The secret scrubber (being written).
