// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ImportReq = { 
/**
 * The folder.
 */
dir: string, };
