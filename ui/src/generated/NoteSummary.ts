// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteScopeKind } from "./NoteScopeKind";

export type NoteSummary = { 
/**
 * The note's id (`n_…`); stable across renames.
 */
id: string, 
/**
 * User or project.
 */
scope: NoteScopeKind, 
/**
 * The project identity for project notes.
 */
project: string | null, 
/**
 * The path inside the scope.
 */
path: string, 
/**
 * The first Markdown heading, else the first line, else the file name.
 */
title: string, 
/**
 * The content's sha256 (hex): pass it back as `expected_sha256` to write safely.
 */
sha256: string, 
/**
 * Size in bytes.
 */
bytes: number, 
/**
 * Last change (RFC 3339).
 */
updated_at: string, 
/**
 * Number of versions kept.
 */
versions: number, };
