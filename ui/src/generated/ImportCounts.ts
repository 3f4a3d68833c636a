// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ImportCounts = { 
/**
 * New: stored.
 */
added: number, 
/**
 * Stored already as they are: skipped.
 */
duplicates: number, 
/**
 * Stored already with other content: the stored one kept.
 */
conflicts: number, };
