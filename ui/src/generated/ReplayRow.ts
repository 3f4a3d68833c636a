// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReplayRow = { 
/**
 * The request's record id.
 */
id: string, 
/**
 * The request's text.
 */
request: string, 
/**
 * When it was made (RFC 3339): the time it is asked at.
 */
at: string, 
/**
 * Its session.
 */
session: string, 
/**
 * Its framework.
 */
framework: string, 
/**
 * What it needed: earlier-session record ids, then ids of items sourced from them.
 */
needed: Array<string>, 
/**
 * The identifiers its answer reused from those records.
 */
reused: Array<string>, 
/**
 * What the turn note showed (ids).
 */
shown: Array<string>, 
/**
 * What plain search's top 3 held (ids).
 */
baseline: Array<string>, };
