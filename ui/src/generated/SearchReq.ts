// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SearchReq = { 
/**
 * Words; quotes for phrases.
 */
query: string, 
/**
 * Only this project.
 */
project: string | null, 
/**
 * Only this framework.
 */
framework: string | null, 
/**
 * Results from this date or time on come first (RFC 3339 or YYYY-MM-DD); the rest follow.
 */
since: string | null, 
/**
 * Results up to this date or time come first; the rest follow.
 */
until: string | null, 
/**
 * At most this many (20 by default, 200 at most).
 */
limit: number | null, 
/**
 * Leave out this session (the conversation asking).
 */
exclude_session: string | null, 
/**
 * `bm25`, `dense` or `hybrid` (the default).
 */
mode: string | null, 
/**
 * Re-rank the top 30 with the cross-encoder (default: the `models.rerank` setting).
 */
rerank: boolean | null, 
/**
 * Only these kinds: `record`, `note` (items later). All when absent.
 */
kinds: Array<string> | null, };
