// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteAccess } from "./NoteAccess";
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteMount = { 
/**
 * The directory it appears as under `/memories` (one path component).
 */
name: string, 
/**
 * User or project notes.
 */
scope: NoteScopeKind, 
/**
 * The project, for the project scope.
 */
project: string | null, 
/**
 * What the caller may do there (read-only by default).
 */
access: NoteAccess, };
