// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReplayFigures = { 
/**
 * Requests asked.
 */
requests: number, 
/**
 * Share of requests that needed an earlier session (by the label rule).
 */
need: number | null, 
/**
 * Of the requests that needed one, the share whose entries hold a needed record or an
 * item sourced from one.
 */
hit_rate: number | null, 
/**
 * Share of shown entries that are needed.
 */
precision: number | null, 
/**
 * Of the requests that needed nothing, the share given nothing.
 */
silence_no_need: number | null, 
/**
 * Share of requests given at least one entry.
 */
note_rate: number | null, 
/**
 * Median milliseconds per answer.
 */
p50_ms: number | null, 
/**
 * 95th percentile.
 */
p95_ms: number | null, };
