// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type DistillKept = { 
/**
 * `created`, `merged`, `superseded`, `related` or `contested` (stated only by outside
 * text and at odds with what the user or the agent stated: sent to the review inbox).
 */
action: string, 
/**
 * The item (for `merged`, the known item it was merged into).
 */
id: string, 
/**
 * Its kind.
 */
kind: string, 
/**
 * Its title.
 */
title: string, 
/**
 * The item it superseded or is related to.
 */
other: string | null, 
/**
 * Similarity of the summaries (merged, related).
 */
similarity: number | null, };
