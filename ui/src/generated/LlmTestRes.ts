// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmTestRes = { 
/**
 * The provider tested.
 */
provider: string, 
/**
 * The model that answered (or the configured one, when none did).
 */
model: string, 
/**
 * True when a valid answer came back.
 */
ok: boolean, 
/**
 * The answer (a JSON value matching the test's schema), when one came back.
 */
answer: unknown, 
/**
 * Why the test failed, naming the provider and the problem.
 */
error: string | null, 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Answer tokens.
 */
output_tokens: number, 
/**
 * Money spent in US dollars, when the provider says or its price is known.
 */
cost_usd: number | null, 
/**
 * How long it took, in milliseconds (setting the provider up included).
 */
duration_ms: number, 
/**
 * Requests sent (retries included).
 */
attempts: number, };
