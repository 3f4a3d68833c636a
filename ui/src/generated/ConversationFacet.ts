// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ConversationFacet = { 
/**
 * Framework.
 */
framework: string, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * Conversations.
 */
count: number, };
