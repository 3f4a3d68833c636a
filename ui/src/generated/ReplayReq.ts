// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReplayReq = { 
/**
 * Only requests made on or after this date (YYYY-MM-DD or RFC 3339).
 */
since: string | null, 
/**
 * Only requests made on or before this date (YYYY-MM-DD: to its end; or RFC 3339).
 */
until: string | null, 
/**
 * Only this project's requests.
 */
project: string | null, 
/**
 * At most this many requests: the latest in range (asked oldest first).
 */
limit: number | null, 
/**
 * Answer with every request's labels too (`rows`).
 */
rows: boolean, };
