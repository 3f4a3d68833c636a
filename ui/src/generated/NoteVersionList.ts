// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteVersion } from "./NoteVersion";

export type NoteVersionList = { 
/**
 * The note's id.
 */
id: string, 
/**
 * The versions.
 */
versions: Array<NoteVersion>, };
