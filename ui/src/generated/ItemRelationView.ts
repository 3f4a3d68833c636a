// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ItemRelationView = { 
/**
 * From this item.
 */
from: string, 
/**
 * To this item.
 */
to: string, 
/**
 * related, supersedes or contradicts.
 */
kind: string, 
/**
 * Similarity or confidence, 0 to 1.
 */
weight: number, 
/**
 * The other item's title, when it still exists.
 */
other_title: string | null, };
