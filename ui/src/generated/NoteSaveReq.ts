// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteRef } from "./NoteRef";

export type NoteSaveReq = { 
/**
 * Which note.
 */
note: NoteRef, 
/**
 * The new Markdown.
 */
content: string, 
/**
 * The sha256 the note must still have (what the editor loaded); a mismatch is a
 * `conflict` and nothing is written.
 */
expected_sha256: string | null, 
/**
 * Refuse with `conflict` if the note already exists (creating a new note).
 */
create_only: boolean, };
