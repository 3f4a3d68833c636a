// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { WorkerState } from "./WorkerState";

export type WorkerStatus = { 
/**
 * Its name.
 */
name: string, 
/**
 * What it is doing.
 */
state: WorkerState, 
/**
 * A sentence about its last run or its failure.
 */
detail: string | null, 
/**
 * Progress of the current run, 0 to 1, when it is known.
 */
progress: number | null, 
/**
 * When it last ran (RFC 3339).
 */
last_run: string | null, };
