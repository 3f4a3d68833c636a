// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteEntry } from "./NoteEntry";

export type TurnNote = { 
/**
 * The turn's id in the injection log (`t_…`; empty on a dry run).
 */
turn: string, 
/**
 * The text to inject (wrapped in `<cairn-memory>` marks), or none.
 */
note: string | null, 
/**
 * The entries shown.
 */
entries: Array<NoteEntry>, 
/**
 * The bar an entry had to reach (0.3 with a judge, 0.4 without, 0.7 for unknown names).
 */
bar: number, 
/**
 * Which judges answered in time (`cross-encoder`, `llm`).
 */
judged_by: Array<string>, 
/**
 * Why there is no note, when there is none (memory off, nothing above the bar, …).
 */
silent_because: string | null, 
/**
 * How long the service took, in milliseconds.
 */
latency_ms: number, };
