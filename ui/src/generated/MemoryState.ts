// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type MemoryState = { 
/**
 * On by default. Off stops capture and the search service.
 */
enabled: boolean, 
/**
 * When it was last switched (RFC 3339), if ever.
 */
changed_at: string | null, };
