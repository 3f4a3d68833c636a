// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { SearchHit } from "./SearchHit";

export type SearchRes = { 
/**
 * The hits.
 */
hits: Array<SearchHit>, 
/**
 * The mode actually used (`hybrid` falls back to `bm25` without an embedding model).
 */
mode: string, 
/**
 * Whether the cross-encoder re-ranked the top results.
 */
reranked: boolean, 
/**
 * Sentences about what was not available.
 */
notes: Array<string>, };
