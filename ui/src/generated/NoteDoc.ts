// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteSummary } from "./NoteSummary";

export type NoteDoc = { 
/**
 * Its metadata.
 */
note: NoteSummary, 
/**
 * The Markdown.
 */
content: string, };
