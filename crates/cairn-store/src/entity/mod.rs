//! sea-orm entities. They never leave this crate: [`crate::Store`] maps them to the domain
//! types of `cairn-core`.

pub mod capture_cursors;
pub mod chunks;
pub mod item_events;
pub mod journal;
pub mod note_versions;
pub mod notes;
pub mod records;
pub mod settings;
pub mod vectors;
