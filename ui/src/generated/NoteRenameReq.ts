// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteRef } from "./NoteRef";

export type NoteRenameReq = { 
/**
 * Which note.
 */
note: NoteRef, 
/**
 * The new path inside the same scope; must not exist.
 */
new_path: string, 
/**
 * The sha256 the note must still have.
 */
expected_sha256: string | null, };
