// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteRef } from "./NoteRef";

export type NoteVersionReq = { 
/**
 * Which note.
 */
note: NoteRef, 
/**
 * Which version.
 */
version: number, 
/**
 * For `note_restore`: the sha256 the note must still have.
 */
expected_sha256: string | null, };
