// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NoteEvalFigures = { 
/**
 * When it ran (RFC 3339).
 */
at: string, 
/**
 * The file it ran on.
 */
file: string, 
/**
 * Share of questions that got a note.
 */
note_rate: number, 
/**
 * Share of questions whose note holds an evidence turn (or an item citing one).
 */
hit_rate: number, 
/**
 * Share of shown entries that are evidence.
 */
precision: number, 
/**
 * Share of foreign questions answered with no note.
 */
foreign_silence: number, 
/**
 * Questions asked.
 */
n: number, 
/**
 * Median milliseconds per note.
 */
p50_ms: number, 
/**
 * 95th percentile.
 */
p95_ms: number, };
