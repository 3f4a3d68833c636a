// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteTitle } from "./NoteTitle";

export type NoteTitles = { 
/**
 * The titles that fit.
 */
titles: Array<NoteTitle>, 
/**
 * Titles left out to stay within the budget.
 */
omitted: number, 
/**
 * The block to put into instructions (one `- title (path)` line each).
 */
text: string, };
