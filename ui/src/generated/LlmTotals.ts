// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmTotals = { 
/**
 * Calls made (refused ones not counted).
 */
calls: number, 
/**
 * Calls that brought a valid answer.
 */
ok: number, 
/**
 * Calls whose answers were dropped as invalid.
 */
invalid: number, 
/**
 * Calls that failed or timed out.
 */
failed: number, 
/**
 * Calls refused because the budget was spent.
 */
refused: number, 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Answer tokens.
 */
output_tokens: number, 
/**
 * Money spent in US dollars (calls whose cost is unknown count as 0).
 */
cost_usd: number, };
