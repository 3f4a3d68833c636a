// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ExploreReq = { 
/**
 * Start from this record, item or note.
 */
id: string | null, 
/**
 * Or start from this concept (a word or short phrase).
 */
concept: string | null, 
/**
 * How many steps out (1 by default, 3 at most).
 */
depth: number | null, 
/**
 * At most this many related things in total (20 by default, 100 at most).
 */
limit: number | null, };
