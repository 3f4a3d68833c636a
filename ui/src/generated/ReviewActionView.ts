// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewActionView = { 
/**
 * Its id (`rv_…`), for `review_undo`.
 */
id: string, 
/**
 * When (RFC 3339).
 */
at: string, 
/**
 * The entry's key.
 */
entry: string, 
/**
 * The entry's category.
 */
category: string, 
/**
 * `merge`, `supersede`, `archive` or `keep`.
 */
action: string, 
/**
 * What it did, in a sentence.
 */
summary: string, 
/**
 * The items and notes it changed.
 */
changed: Array<string>, 
/**
 * When it was undone (RFC 3339).
 */
undone_at: string | null, };
