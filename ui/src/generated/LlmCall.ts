// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmCall = { 
/**
 * When it started (RFC 3339).
 */
at: string, 
/**
 * The provider (`claude-cli`, `anthropic`, `local`, …).
 */
provider: string, 
/**
 * The model, as the provider named it.
 */
model: string, 
/**
 * What it was for (`consolidate`, `reconcile`, `profile`, `test`, …).
 */
purpose: string, 
/**
 * `ok`, `invalid`, `failed`, `timeout` or `over_budget`.
 */
outcome: string, 
/**
 * Requests sent (retries included).
 */
attempts: number, 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Answer tokens.
 */
output_tokens: number, 
/**
 * Money spent in US dollars, when known.
 */
cost_usd: number | null, 
/**
 * Wall time in milliseconds.
 */
duration_ms: number, 
/**
 * Why it failed, in one short line.
 */
error: string | null, };
