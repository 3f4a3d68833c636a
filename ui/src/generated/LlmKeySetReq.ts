// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmKeySetReq = { 
/**
 * `anthropic` or `openai`.
 */
api: string, 
/**
 * The key; `None` (or empty) removes the stored one. Never logged, never written to
 * the config file.
 */
key: string | null, };
