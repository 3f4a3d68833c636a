// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ConversationsReq = { 
/**
 * Only this framework.
 */
framework: string | null, 
/**
 * Only this project.
 */
project: string | null, 
/**
 * At most this many (50 by default).
 */
limit: number | null, 
/**
 * Skip this many.
 */
offset: number | null, };
