// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmKeyState = { 
/**
 * `anthropic` or `openai`.
 */
api: string, 
/**
 * True when a key is stored.
 */
stored: boolean, };
