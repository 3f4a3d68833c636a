// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { InjectionView } from "./InjectionView";
import type { NoteEvalFigures } from "./NoteEvalFigures";

export type InjectionList = { 
/**
 * Turns, newest first.
 */
injections: Array<InjectionView>, 
/**
 * Turns logged in all.
 */
turns: number, 
/**
 * Turns that showed a note.
 */
shown: number, 
/**
 * Entries marked not useful.
 */
not_useful: number, 
/**
 * Median service milliseconds over the logged turns.
 */
p50_ms: number | null, 
/**
 * 95th percentile.
 */
p95_ms: number | null, 
/**
 * The latest evaluation figures, when one was run.
 */
eval: NoteEvalFigures | null, };
