// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { SearchHit } from "./SearchHit";

export type SearchRes = { 
/**
 * The hits.
 */
hits: Array<SearchHit>, };
