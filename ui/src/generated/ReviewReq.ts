// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewReq = { 
/**
 * Only this project's entries.
 */
project: string | null, 
/**
 * Only this category: `duplicate`, `contradiction`, `stale` or `junk`.
 */
category: string | null, 
/**
 * At most this many entries (200 by default, 1,000 at most).
 */
limit: number | null, };
