// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewSubject = { 
/**
 * The item's id (`i_…`), the record's (`r_…`) or the note's (`n_…`).
 */
id: string, 
/**
 * `item`, `record` or `note`.
 */
kind: string, 
/**
 * An item's kind (fact, decision, …); a record's framework; a note's scope.
 */
subkind: string, 
/**
 * Its title (a record's request, a note's path).
 */
title: string, 
/**
 * Its summary, the start of a record's turn, or the start of a note.
 */
text: string, 
/**
 * Its project.
 */
project: string | null, 
/**
 * When it was said or last written (RFC 3339).
 */
at: string | null, 
/**
 * An item's importance (1 to 5).
 */
importance: number | null, 
/**
 * A record's session id (its framework is `subkind`): where the record opens.
 */
session: string | null, };
