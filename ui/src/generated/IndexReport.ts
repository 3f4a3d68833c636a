// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IndexReport = { 
/**
 * Records put back in the keyword index.
 */
records: number, 
/**
 * Vectors put back in the vector index (from the store; no model call).
 */
vectors: number, 
/**
 * How long it took, in milliseconds.
 */
duration_ms: number, };
