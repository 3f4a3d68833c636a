// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmSettingsReq = { 
/**
 * `llm.provider`: `""` (none) or one of [`LlmStatus::providers`].
 */
provider: string, 
/**
 * `llm.model` (`""` = the provider's fast default).
 */
model: string, 
/**
 * `llm.base_url` (`""` = the provider's public API).
 */
base_url: string, 
/**
 * `llm.model_path` (the GGUF file of `local`).
 */
model_path: string, 
/**
 * `llm.daily_calls`.
 */
daily_calls: number, 
/**
 * `llm.daily_usd`.
 */
daily_usd: number, 
/**
 * `llm.judge` (left out: as it is now).
 */
judge: boolean | null, 
/**
 * `llm.judge_ms` (left out: as it is now).
 */
judge_ms: number | null, };
