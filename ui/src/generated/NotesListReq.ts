// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteScopeKind } from "./NoteScopeKind";

export type NotesListReq = { 
/**
 * Only this scope (both when absent).
 */
scope: NoteScopeKind | null, 
/**
 * Only this project's notes (with the user's when `scope` is absent).
 */
project: string | null, };
