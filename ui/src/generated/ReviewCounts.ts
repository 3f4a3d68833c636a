// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewCounts = { 
/**
 * Likely duplicates.
 */
duplicate: number, 
/**
 * Contradictions.
 */
contradiction: number, 
/**
 * Stale items.
 */
stale: number, 
/**
 * Junk.
 */
junk: number, };
