// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NoteCommandRes = { 
/**
 * The text for the agent (a file with line numbers, a listing, or what changed).
 */
output: string, 
/**
 * The file's sha256 after the command, when one file is concerned and still exists.
 */
sha256: string | null, };
