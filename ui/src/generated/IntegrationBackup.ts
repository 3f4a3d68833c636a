// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IntegrationBackup = { 
/**
 * Where the copy is.
 */
path: string, 
/**
 * The name of the file it copies.
 */
file_name: string, 
/**
 * When it was made (RFC 3339, UTC).
 */
created_at: string, 
/**
 * Its size in bytes.
 */
size: number, };
