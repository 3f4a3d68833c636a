// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type HookTiming = { 
/**
 * Milliseconds from the hook's start within which the note must arrive
 * (`hook.deadline_ms`); a later note is dropped and the turn goes on without it.
 */
deadline_ms: number, 
/**
 * The built-in default.
 */
default_ms: number, 
/**
 * The least allowed.
 */
min_ms: number, 
/**
 * The most allowed.
 */
max_ms: number, 
/**
 * How much longer hooks wait while the LLM judge is on (`llm.judge_ms` and a margin);
 * none while it is off.
 */
judge_wait_ms: number | null, 
/**
 * The config file it is saved in.
 */
config_file: string, };
