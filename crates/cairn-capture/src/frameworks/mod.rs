//! One module per framework. [`all`] is the declarative table capture walks.

pub mod jsonl;
pub mod stores;

use crate::FrameworkSpec;

/// Every supported framework, in a stable order.
pub fn all() -> Vec<FrameworkSpec> {
    let mut v = jsonl::specs();
    v.extend(stores::specs());
    v
}

/// One framework by name.
pub fn by_name(name: &str) -> Option<FrameworkSpec> {
    all().into_iter().find(|s| s.name == name)
}
