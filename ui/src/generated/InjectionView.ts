// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { InjectionEntry } from "./InjectionEntry";

export type InjectionView = { 
/**
 * The turn's id (`t_…`).
 */
turn: string, 
/**
 * When (RFC 3339).
 */
at: string, 
/**
 * The framework that asked.
 */
framework: string, 
/**
 * Its session.
 */
session_id: string | null, 
/**
 * Its project.
 */
project: string | null, 
/**
 * The user's message, scrubbed, at most 300 characters.
 */
prompt: string, 
/**
 * Whether a note was shown.
 */
shown: boolean, 
/**
 * The bar.
 */
bar: number, 
/**
 * Which judges answered.
 */
judged_by: Array<string>, 
/**
 * Why it was silent.
 */
silent_because: string | null, 
/**
 * Milliseconds the service took.
 */
latency_ms: number, 
/**
 * The best candidates (shown ones first), at most 10.
 */
entries: Array<InjectionEntry>, };
