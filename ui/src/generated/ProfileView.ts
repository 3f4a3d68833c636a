// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ProfileTimelineEntry } from "./ProfileTimelineEntry";

export type ProfileView = { 
/**
 * The project identity, or the machine's name.
 */
subject: string, 
/**
 * `project` or `machine`.
 */
kind: string, 
/**
 * A few sentences.
 */
summary: string, 
/**
 * Oldest first.
 */
timeline: Array<ProfileTimelineEntry>, 
/**
 * How many items it was written from.
 */
item_count: number, 
/**
 * When it was written (RFC 3339).
 */
updated_at: string, };
