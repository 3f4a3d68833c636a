//! # cairn-review
//!
//! The review inbox: what may be wrong with what Cairn remembers, each finding with
//! one-click actions, every action logged and undoable. It reads the store, the notes and
//! the projects' working trees, and needs nothing of the service: the service's
//! `review_list`, `review_act` and `review_undo` hand it their store and notes ([`Inbox`])
//! and keep only what a host keeps (the write permit, the notes' search index told of a
//! change). The checks, the actions and their undo change together, so they live together.
//!
//! - **Duplicates**: two active items of the same project whose summaries are near-identical
//!   (cosine of their stored summary vectors ≥ [`DUPLICATE_COSINE`], or word overlap ≥
//!   [`DUPLICATE_WORDS`]) and that cite the same numbers; two notes of one scope with the
//!   same content; the same turn stored twice.
//! - **Contradictions**: items a reconcile marked contradicting, and close neighbours
//!   (cosine ≥ [`CONFLICT_COSINE`] or word overlap ≥ [`CONFLICT_WORDS`]) that cite different
//!   numbers or dates ("port 6543" against "port 5432"). An item stated only by outside text
//!   that disagrees with one the user or the agent stated never replaces it at distillation:
//!   the pair comes here, the user's or the agent's suggested to stay.
//! - **Stale**: items citing a file or a code symbol that is no longer in the project's
//!   working tree — found from the item's source requests' working folder (up to its
//!   repository root); a project whose folder is not on this machine is not judged. Only
//!   the tree is ever looked at: a cited path with `..` or outside the root, or one through
//!   a link, is neither present nor missing, just left out.
//! - **Junk**: items or notes with almost nothing in them, Cairn's own words (a turn note or
//!   its skills section read back), and items that only restate an instruction the project's
//!   instruction files (`CLAUDE.md`, `AGENTS.md`, …) already give every agent.
//!
//! Actions append to the item log (`merged`, `superseded`, `archived`; nothing is rewritten),
//! leave a stored turn out of search, or delete a note (its versions stay), and go into the
//! store's review log with the states before, so [`Inbox::undo`] puts every one back —
//! unless it changed since, which is refused rather than lost. `keep` changes nothing and
//! hides the entry until undone.
//!
//! ```no_run
//! # async fn demo(store: &cairn_store::Store, notes: &cairn_notes::Notes) -> cairn_review::Result<()> {
//! let inbox = cairn_review::Inbox { store, notes, notes_changed: &|| {} };
//! let found = inbox.list(&Default::default(), None).await?;
//! println!("{} duplicates", found.counts.duplicate);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod act;
mod entry;
mod error;
mod inbox;
mod list;
mod pairs;
mod text;
mod tree;

pub use error::{Error, Result};
pub use inbox::Inbox;
pub use pairs::{CONFLICT_COSINE, CONFLICT_WORDS, DUPLICATE_COSINE, DUPLICATE_WORDS};

#[cfg(test)]
mod crate_tests;
