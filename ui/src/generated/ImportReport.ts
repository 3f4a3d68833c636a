// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ImportCounts } from "./ImportCounts";

export type ImportReport = { 
/**
 * The folder read (absolute).
 */
dir: string, 
/**
 * Record revisions.
 */
records: ImportCounts, 
/**
 * Item events.
 */
item_events: ImportCounts, 
/**
 * Relations between items.
 */
relations: ImportCounts, 
/**
 * Notes (with their versions).
 */
notes: ImportCounts, 
/**
 * What conflicted, by kind and id (at most 100).
 */
conflicts: Array<string>, 
/**
 * Files checked and read.
 */
files: number, 
/**
 * How long it took.
 */
duration_ms: number, };
