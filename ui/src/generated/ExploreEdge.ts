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
 * `same_session`, `same_project`, `mentions` (a record or note and a concept it is
 * about) or `related` (an item relation).
 */
relation: string, };
