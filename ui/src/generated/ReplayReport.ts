// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ReplayFigures } from "./ReplayFigures";
import type { ReplayRow } from "./ReplayRow";

export type ReplayReport = { 
/**
 * When it ran (RFC 3339).
 */
ran_at: string, 
/**
 * The range asked for, as given.
 */
since: string | null, 
/**
 * The range's end, as given.
 */
until: string | null, 
/**
 * The project asked for.
 */
project: string | null, 
/**
 * Plain search of the request (top 3), under the same time constraints.
 */
baseline: ReplayFigures, 
/**
 * Requests that needed an earlier session.
 */
needed: number, 
/**
 * The most records an identifier may be found in and still count as rare.
 */
rare_max: number, 
/**
 * Records read to build the identifier index.
 */
records: number, 
/**
 * How long the replay took, in milliseconds.
 */
duration_ms: number, 
/**
 * Every request with its labels, when asked for (`rows`); never kept.
 */
rows?: Array<ReplayRow>, 
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
