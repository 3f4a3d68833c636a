// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type HookTimingReq = { 
/**
 * Milliseconds (50 to 1,500).
 */
deadline_ms: number, };
