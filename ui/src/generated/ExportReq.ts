// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ExportReq = { 
/**
 * The folder to write (created; an existing one must be empty).
 */
dir: string, 
/**
 * Only this project's records, items and notes.
 */
project: string | null, 
/**
 * Only what happened on or after this date (`2026-08-20`) or time (RFC 3339).
 */
since: string | null, };
