//! Being written.
use crate::FrameworkSpec;

/// The frameworks of this family.
pub fn specs() -> Vec<FrameworkSpec> {
    Vec::new()
}
