// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ReviewActionView } from "./ReviewActionView";
import type { ReviewCounts } from "./ReviewCounts";
import type { ReviewEntry } from "./ReviewEntry";

export type ReviewInbox = { 
/**
 * Entries: contradictions first, then duplicates, stale items and junk; strongest first.
 */
entries: Array<ReviewEntry>, 
/**
 * How many of each category there are (before `limit`).
 */
counts: ReviewCounts, 
/**
 * The latest actions, newest first (undo them from here).
 */
recent: Array<ReviewActionView>, 
/**
 * Projects (or folders) whose working tree is not on this machine, or too large to read
 * whole: their items are not judged stale.
 */
unchecked_projects: Array<string>, };
