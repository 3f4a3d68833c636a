// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteRef } from "./NoteRef";

export type NoteDeleteReq = { 
/**
 * Which note.
 */
note: NoteRef, 
/**
 * The sha256 the note must still have.
 */
expected_sha256: string | null, };
