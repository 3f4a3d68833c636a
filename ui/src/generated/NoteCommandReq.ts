// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteAccess } from "./NoteAccess";
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteCommandReq = { 
/**
 * `view`, `create`, `str_replace`, `insert`, `delete` or `rename`.
 */
command: string, 
/**
 * User or project scope.
 */
scope: NoteScopeKind | null, 
/**
 * The project, for the project scope.
 */
project: string | null, 
/**
 * The file or directory (empty or `/` for the scope's root, with `view`).
 */
path: string, 
/**
 * `view`: first and last line (1-based; -1 = to the end).
 */
view_range: [number, number] | null, 
/**
 * `create`: the whole content.
 */
file_text: string | null, 
/**
 * `str_replace`: the text to find (exactly one match).
 */
old_str: string | null, 
/**
 * `str_replace`: its replacement.
 */
new_str: string | null, 
/**
 * `insert`: the line after which to insert (0 = at the top).
 */
insert_line: number | null, 
/**
 * `insert`: the text.
 */
insert_text: string | null, 
/**
 * `rename`: the new path.
 */
new_path: string | null, 
/**
 * Writes: the sha256 the file must still have; a mismatch is a `conflict`.
 */
expected_sha256: string | null, 
/**
 * The caller's access (the service may lower it, never raise it).
 */
access: NoteAccess | null, 
/**
 * Who is calling (`agent:<client>`), kept in the versions.
 */
author: string | null, };
