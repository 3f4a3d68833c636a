//! The inbox over its handles: the store and the notes it reviews.
use cairn_notes::Notes;
use cairn_store::Store;

/// The review inbox of one store and its notes. Listing reads only; acting and undoing write
/// (the caller keeps other writers out while they run).
pub struct Inbox<'a> {
    /// Items, relations, stored turns, and the review log.
    pub store: &'a Store,
    /// The notes: duplicates and junk among them; archiving one deletes it, undo restores it.
    pub notes: &'a Notes,
    /// Called after notes were deleted or restored, so whatever indexes them catches up.
    pub notes_changed: &'a (dyn Fn() + Send + Sync),
}

impl std::fmt::Debug for Inbox<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox").finish_non_exhaustive()
    }
}
