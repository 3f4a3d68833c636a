//! Frameworks whose stores are SQLite databases updated in place or whole JSON files rewritten
//! on every change: OpenCode (and Kilo), Cursor's SQLite stores, Crush, Goose, Cline, Roo Code,
//! Amp, Continue and SpecStory's Markdown histories. One module per framework; [`specs`] lists their table entries.
//!
//! Not covered here: Zed's agent threads (`threads.db`, whose `data` column is
//! zstd-compressed JSON — it needs a zstd decoder), Goose's pre-1.10 per-session JSONL files
//! (imported into `sessions.db` by Goose itself on first run), and the Cline SDK's
//! `sessions.db` index (the per-session `*.messages.json` files hold the conversation).

mod amp;
mod cline;
mod common;
mod continue_dev;
mod crush;
mod cursor;
mod goose;
mod opencode;
mod roo;
pub mod specstory;

use crate::FrameworkSpec;

/// The frameworks of this family, in a stable order: `opencode` (SQLite, legacy JSON),
/// `kilo` (SQLite), `cursor` (agent `store.db`, IDE `state.vscdb`), `crush`, `goose`, `cline`,
/// `roo-code`, `kilo` (legacy extension tasks), `amp`, `continue`, `specstory` (Markdown
/// files inside each project; no roots: see [`specstory::find_histories`]).
pub fn specs() -> Vec<FrameworkSpec> {
    let mut v = opencode::specs();
    v.extend(cursor::specs());
    v.extend(crush::specs());
    v.extend(goose::specs());
    v.extend(cline::specs());
    v.extend(roo::specs());
    v.extend(amp::specs());
    v.extend(continue_dev::specs());
    v.extend(specstory::specs());
    v
}
