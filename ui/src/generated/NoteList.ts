// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteSummary } from "./NoteSummary";

export type NoteList = { 
/**
 * The notes.
 */
notes: Array<NoteSummary>, 
/**
 * Every project that has notes or captured conversations, for the scope picker.
 */
projects: Array<string>, };
