// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteRef = { 
/**
 * User or project.
 */
scope: NoteScopeKind, 
/**
 * The project identity; required for the project scope, refused for the user scope.
 */
project: string | null, 
/**
 * The path inside the scope, `/`-separated, relative.
 */
path: string, };
