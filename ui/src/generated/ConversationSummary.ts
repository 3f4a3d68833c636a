// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ConversationSummary = { 
/**
 * Framework.
 */
framework: string, 
/**
 * Session id.
 */
session_id: string, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * Working directory.
 */
cwd: string | null, 
/**
 * First request (RFC 3339).
 */
first_at: string, 
/**
 * Last activity (RFC 3339).
 */
last_at: string, 
/**
 * Requests.
 */
turns: number, 
/**
 * Requests that ended in an error.
 */
errors: number, 
/**
 * The first request, shortened.
 */
title: string, };
