// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { LlmBudget } from "./LlmBudget";
import type { LlmCall } from "./LlmCall";
import type { LlmTotals } from "./LlmTotals";

export type LlmStatus = { 
/**
 * `llm.provider`: `""` when none is set (records stay searchable, items wait).
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
 * Every provider `llm.provider` accepts.
 */
providers: Array<string>, 
/**
 * For `anthropic` and `openai`: whether the OS keyring holds its key (`None` for the
 * other providers, or when there is no keyring to ask).
 */
key_stored: boolean | null, 
/**
 * The daily budget.
 */
budget: LlmBudget, 
/**
 * What today's calls (since local midnight) used.
 */
today: LlmTotals, 
/**
 * True when today's budget is spent: distillation waits for tomorrow.
 */
over_budget: boolean, 
/**
 * The latest calls, newest first.
 */
recent: Array<LlmCall>, 
/**
 * `llm.judge`: the model also judges each turn note's best candidates.
 */
judge: boolean, 
/**
 * `llm.judge_ms`: how long the judge may take before its answer is dropped.
 */
judge_ms: number, 
/**
 * For `local`: the model's pace on this machine as last measured (one line; it sizes
 * each call's deadline and distillation's windows), `None` before its first call.
 */
local_speed: string | null, };
