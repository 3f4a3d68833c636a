// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmBudget = { 
/**
 * Calls per day (`llm.daily_calls`).
 */
calls: number, 
/**
 * US dollars per day (`llm.daily_usd`).
 */
usd: number, };
