// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteAccess } from "./NoteAccess";
import type { NoteMount } from "./NoteMount";
import type { NotePrecondition } from "./NotePrecondition";
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteCommandReq = { 
/**
 * `view`, `create`, `str_replace`, `insert`, `delete` or `rename`; and Cairn's
 * `versions`, `version` and `redact` over a note's kept versions.
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
 * The file or directory (`/memories` or empty for the root, with `view`).
 */
path: string, 
/**
 * `view`: first and last line (1-based; -1 = to the end). A range that is not two
 * numbers is ignored (the whole file shows), as the contract's reference does.
 */
view_range: Array<number> | null, 
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
 * `rename`: the path to move (`path` is accepted too).
 */
old_path: string | null, 
/**
 * `rename`: the new path.
 */
new_path: string | null, 
/**
 * `version`, `redact`: which version (1, 2, … as `versions` lists them).
 */
version: number | null, 
/**
 * Writes: the sha256 the file must still have; a mismatch is a `conflict`. With
 * `create`, it allows overwriting the file that has it.
 */
expected_sha256: string | null, 
/**
 * The same precondition as memory stores spell it
 * (`{"type": "content_sha256", "content_sha256": "…"}`).
 */
precondition: NotePrecondition | null, 
/**
 * More stores for this caller, each under `/memories/<name>/` (at most 7, so 8 in all).
 */
mounts: Array<NoteMount>, 
/**
 * The caller's access (the service may lower it, never raise it).
 */
access: NoteAccess | null, 
/**
 * Who is calling (`agent:<client>`), kept in the versions.
 */
author: string | null, };
