// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type DistillRebuildReq = { 
/**
 * Only requests made from this date on (YYYY-MM-DD or RFC 3339); all when absent.
 */
since: string | null, };
