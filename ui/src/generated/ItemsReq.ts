// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ItemsReq = { 
/**
 * Only items whose sources are in this conversation (framework and session id).
 */
framework: string | null, 
/**
 * The conversation's session id (with `framework`).
 */
session_id: string | null, 
/**
 * Only this project's items.
 */
project: string | null, 
/**
 * Include archived and superseded items.
 */
all: boolean, 
/**
 * At most this many (200 by default, 2,000 at most), newest first.
 */
limit: number | null, };
