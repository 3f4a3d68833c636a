// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NoteEntry = { 
/**
 * Its id (`r_…`, `i_…`, or a note's path with `note:`), for `open`.
 */
id: string, 
/**
 * `record`, `item` or `note`.
 */
kind: string, 
/**
 * For an item: fact, decision, procedure, pitfall, …
 */
item_kind: string | null, 
/**
 * A title (an item's title, a request's first line, a note's title).
 */
title: string, 
/**
 * What the note says of it, at most 420 characters.
 */
text: string, 
/**
 * When it happened or was said (RFC 3339).
 */
at: string | null, 
/**
 * Its project.
 */
project: string | null, 
/**
 * Its framework (records).
 */
framework: string | null, 
/**
 * The ranker's probability that this turn needs it.
 */
probability: number, };
