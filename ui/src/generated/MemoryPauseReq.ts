// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type MemoryPauseReq = { 
/**
 * How long: `15m`, `1h`, `<N>m`, `<N>h` (at most 30 days), `tomorrow` (the next
 * midnight in the service's local time zone) or `until_resumed`.
 */
for: string | null, 
/**
 * Or an explicit end (RFC 3339, in the future, at most 30 days ahead).
 */
until: string | null, };
