// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteTitle = { 
/**
 * User or project.
 */
scope: NoteScopeKind, 
/**
 * The path inside the scope.
 */
path: string, 
/**
 * The title.
 */
title: string, };
