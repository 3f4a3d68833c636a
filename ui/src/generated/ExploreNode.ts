// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ExploreNode = { 
/**
 * Its id (a record, item or note id), or `concept:<term>`.
 */
id: string, 
/**
 * `record`, `item`, `note` or `concept`.
 */
kind: string, 
/**
 * A short label: the request, the note's title, or the concept.
 */
label: string, 
/**
 * Steps from the start (0 for the start itself).
 */
depth: number, 
/**
 * For records: framework, project, when.
 */
framework: string | null, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * When (RFC 3339).
 */
timestamp: string | null, };
