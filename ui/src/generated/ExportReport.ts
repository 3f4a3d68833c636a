// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ExportReport = { 
/**
 * The folder written (absolute).
 */
dir: string, 
/**
 * Record revisions written.
 */
records: number, 
/**
 * Item events written.
 */
item_events: number, 
/**
 * Items written (one Markdown file each).
 */
items: number, 
/**
 * Relations between the exported items.
 */
relations: number, 
/**
 * Notes written (live ones as Markdown files; deleted ones in the versions only).
 */
notes: number, 
/**
 * Note versions written.
 */
note_versions: number, 
/**
 * Files written, the manifest included.
 */
files: number, 
/**
 * Bytes written.
 */
bytes: number, 
/**
 * How long it took.
 */
duration_ms: number, };
