// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NotesTitlesReq = { 
/**
 * The project the agent works in (its notes come first, then the user's).
 */
project: string | null, 
/**
 * At most this many characters in total (1,500 by default and at most).
 */
max_chars: number | null, };
