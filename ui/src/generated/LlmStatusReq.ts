// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmStatusReq = { 
/**
 * How many of the latest ledger entries to include (20 by default, at most 200; 0 for
 * none).
 */
recent: number | null, };
