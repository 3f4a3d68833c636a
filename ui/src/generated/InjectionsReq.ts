// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type InjectionsReq = { 
/**
 * At most this many turns, newest first (default 50, at most 500).
 */
limit: number | null, 
/**
 * Only turns that showed a note.
 */
shown_only: boolean, };
