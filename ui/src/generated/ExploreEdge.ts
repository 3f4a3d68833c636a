// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ExploreEdge = { 
/**
 * From this id.
 */
from: string, 
/**
 * To this id.
 */
to: string, 
/**
 * `same_session`, `same_project`, `mentions` (a record, item or note and a concept it
 * is about), `source` (an item and a request it came from), or an item relation:
 * `related`, `supersedes`, `contradicts`.
 */
relation: string, };
