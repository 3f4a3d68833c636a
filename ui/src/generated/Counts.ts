// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type Counts = { 
/**
 * Records in the short-term log.
 */
records: number, 
/**
 * Search chunks of those records.
 */
chunks: number, 
/**
 * Typed items (current state).
 */
items: number, 
/**
 * Notes.
 */
notes: number, };
