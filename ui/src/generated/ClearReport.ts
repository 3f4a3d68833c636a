// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { Counts } from "./Counts";

export type ClearReport = { 
/**
 * When (RFC 3339).
 */
cleared_at: string, 
/**
 * How much was removed.
 */
removed: Counts, 
/**
 * Whether notes were kept.
 */
notes_kept: boolean, };
