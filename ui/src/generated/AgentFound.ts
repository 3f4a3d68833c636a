// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type AgentFound = { 
/**
 * The framework (`claude-code`, `codex`, …).
 */
framework: string, 
/**
 * Its name for people.
 */
name: string, 
/**
 * Session stores (files or databases) found on this machine now.
 */
stores: number, 
/**
 * Where the first of them was found.
 */
place: string | null, 
/**
 * Conversations Cairn has captured from it.
 */
conversations: number, 
/**
 * Requests captured.
 */
requests: number, 
/**
 * The first captured request's time (RFC 3339).
 */
first_at: string | null, 
/**
 * The last captured request's time (RFC 3339).
 */
last_at: string | null, };
