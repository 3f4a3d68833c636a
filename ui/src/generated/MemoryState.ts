// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type MemoryState = { 
/**
 * On by default. Off stops capture and the search service.
 */
enabled: boolean, 
/**
 * When it was last switched (RFC 3339), if ever.
 */
changed_at: string | null, 
/**
 * Memory is paused (`enabled` is false): it comes back on by itself at `paused_until`,
 * or when resumed (`memory_set` on) when `paused_until` is null.
 */
paused: boolean, 
/**
 * When a pause ends by itself (RFC 3339, UTC); null when not paused or paused until
 * resumed.
 */
paused_until: string | null, };
