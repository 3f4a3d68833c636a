// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteVersion } from "./NoteVersion";

export type NoteVersionDoc = { 
/**
 * The version.
 */
version: NoteVersion, 
/**
 * Its Markdown; absent once redacted.
 */
content: string | null, };
