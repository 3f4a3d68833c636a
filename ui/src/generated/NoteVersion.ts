// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NoteVersion = { 
/**
 * 1, 2, … in the order of the changes.
 */
version: number, 
/**
 * What the change was: `create`, `edit`, `rename`, `delete` or `restore`.
 */
action: string, 
/**
 * The path the note had after this change.
 */
path: string, 
/**
 * The content's sha256 after this change.
 */
sha256: string, 
/**
 * Who made it (`user`, `agent:<client>`).
 */
author: string, 
/**
 * When (RFC 3339).
 */
at: string, 
/**
 * Size in bytes (0 once redacted).
 */
bytes: number, 
/**
 * When its content was redacted, if it was.
 */
redacted_at: string | null, 
/**
 * Who redacted it.
 */
redacted_by: string | null, };
